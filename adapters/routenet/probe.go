package routenet

import (
	"context"

	"github.com/bootbench/bootbench/adapters/route"
)

// Probe tries the path through the board once (a route.Prober), for a
// board whose readiness no frame reports: one under its own firmware.
func (n *Net) Probe(ctx context.Context) error {
	client, server := n.sides(false)
	return route.Probe(ctx, client, server)
}
