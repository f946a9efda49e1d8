package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/internal/route"
	"github.com/bootbench/bootbench/internal/routenet"
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
	r := &rig{
		Rig: harness.Rig{
			Target:   &harness.Wired{Driver: drv, Port: b.Console, Baud: b.Baud},
			Operator: op,
			Progress: progress,
		},
		board: b,
		close: func() {},
	}
	if routes == nil {
		return r, nil
	}
	rn, closeRoutes, err := openBenchRoutes(ctx, b, inv, *routes, progress)
	if err != nil {
		return nil, err
	}
	r.router, r.close = rn, closeRoutes
	return r, nil
}

// openBenchRoutes readies the bench's two route networks for board b,
// as the inventory's bench.route describes them: each host interface
// moved into a namespace of its own for the run, and put back after.
func openBenchRoutes(ctx context.Context, b boards.Board, inv *boards.Inventory, plan route.Plan, progress io.Writer) (route.Router, func(), error) {
	rb := inv.Bench.Route
	if rb == nil {
		return nil, nil, usageErr("board %s: the route benchmark on a real bench needs its two route networks: bench.route in %s, the host interfaces cabled to the board's client-side and server-side ports (route: {client: lan0, server: wan0})", b.Name, inv.Path)
	}
	cache := cacheDir()
	note := func(msg string) { setupNote(progress, "network", "%s", msg) }
	for _, s := range routenet.Sweep(cache) {
		note(s + ", left by a bootbench that was killed")
	}
	n, err := routenet.New(ctx, cache, routenet.Spec{
		Client: routenet.Side{Link: routenet.Link{Host: rb.Client}, Board: b.RouteAddrs[0]},
		Server: routenet.Side{Link: routenet.Link{Host: rb.Server}, Board: b.RouteAddrs[1]},
		Plan:   plan,
	}, note)
	if err != nil {
		return nil, nil, &exitError{code: 2, err: err}
	}
	note("route networks: " + n.String())
	return n, func() {
		if err := n.Close(); err != nil {
			note(fmt.Sprintf("%v (see 'ip netns list')", err))
			return
		}
		note(fmt.Sprintf("put %s and %s back as they were", rb.Client, rb.Server))
	}, nil
}
