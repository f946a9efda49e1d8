package rig

import (
	"context"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
)

// openFirmware readies a board under its own firmware (image: none): its
// power and console, and the bench's route networks to measure through
// it. No bench NIC is opened: nothing is netbooted, so no DHCP, TFTP or
// HTTP is served.
func openFirmware(ctx context.Context, b boards.Board, inv *boards.Inventory, o Options) (*Rig, error) {
	op := power.Terminal(os.Stdin, os.Stderr)
	drv, err := power.New(b.Name, b.Power, op)
	if err != nil {
		return nil, setupErr("board %s: %v", b.Name, err)
	}
	progress := o.Progress
	target, err := wiredTarget(ctx, o.Cache, b, drv, progress)
	if err != nil {
		return nil, err
	}
	r := &Rig{
		Rig: harness.Rig{
			Target:   target,
			Operator: op,
			Progress: progress,
		},
		Board: b,
		close: func() {},
	}
	if o.Routes == nil {
		return r, nil
	}
	note := func(msg string) { SetupNote(progress, "network", "%s", msg) }
	rn, err := openRouteNet(ctx, o.Cache, b, inv, *o.Routes, note)
	if err != nil {
		return nil, err
	}
	r.Router, r.close = rn, func() { closeRouteNet(rn, note) }
	return r, nil
}
