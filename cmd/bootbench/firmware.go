package main

import (
	"context"
	"io"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/internal/route"
)

// openFirmware readies a board under its own firmware (image: none): its
// power and console, and the bench's route networks to measure through
// it. No bench NIC is opened: nothing is netbooted, so no DHCP, TFTP or
// HTTP is served.
func openFirmware(ctx context.Context, b boards.Board, inv *boards.Inventory, routes *route.Plan, progress io.Writer) (*rig, error) {
	op := power.Terminal(os.Stdin, os.Stderr)
	drv, err := power.New(b.Name, b.Power, op)
	if err != nil {
		return nil, usageErr("board %s: %v", b.Name, err)
	}
	target, err := wiredTarget(ctx, b, drv, progress)
	if err != nil {
		return nil, err
	}
	r := &rig{
		Rig: harness.Rig{
			Target:   target,
			Operator: op,
			Progress: progress,
		},
		board: b,
		close: func() {},
	}
	if routes == nil {
		return r, nil
	}
	note := func(msg string) { setupNote(progress, "network", "%s", msg) }
	rn, err := openRouteNet(ctx, b, inv, *routes, note)
	if err != nil {
		return nil, err
	}
	r.router, r.close = rn, func() { closeRouteNet(rn, note) }
	return r, nil
}
