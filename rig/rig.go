// Package rig readies a board to run: a virtual board gets the virtual
// bench (its namespace, tap and QEMU), a board from the inventory the
// bench's NIC, console and power, and either the route benchmark's
// networks when asked for; a bench segment is probed for another DHCP
// server before any board on it is switched on. What it readies is the
// harness's rig; the command adds the builders and the store. run, ci
// and serve set up here, and so can tests and other tools.
package rig

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/adapters/benchnic"
	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/adapters/routenet"
	"github.com/bootbench/bootbench/adapters/vbench"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/serialctl"
)

// Rig is what a command sets up to run one board: the harness's rig
// (target, bench; the command adds builders and store) and the board as
// the rig has it (a virtual board gets the virtual bench's address).
// Close undoes the setup: the virtual bench's namespace, a bench address
// that was added.
type Rig struct {
	harness.Rig
	Board  boards.Board
	Router route.Router // the route benchmark's networks, when asked for
	close  func()
}

// Close undoes what Open set up.
func (r *Rig) Close() { r.close() }

// Options are what a command asks of the rig beyond the board.
type Options struct {
	Cache string // the bootbench cache: namespaces' and addresses' records, the probe's memory
	// Proxy serves only the boot (proxyDHCP), leaving the addresses to
	// the segment's own DHCP server.
	Proxy bool
	// Routes asks for the route benchmark's networks; nil for none.
	Routes *route.Plan
	// Probe is the rival-DHCP probe the command already started for a
	// board from the inventory (nil: Open starts it).
	Probe    *Probe
	Progress io.Writer
}

// SetupError is a setup no run would get past, for the user to fix: a
// board's power or route networks the inventory gets wrong, a bench NIC
// this host cannot serve from, another DHCP server on the segment, --proxy
// for a virtual board. A command ends on it with exit status 2.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

func setupErr(format string, args ...any) error {
	return &SetupError{fmt.Errorf(format, args...)}
}

// Open readies board b to be run: a virtual board gets the virtual bench,
// a board from the inventory the inventory's bench NIC, console and power.
// o.Routes asks for the route benchmark's networks. run, ci and serve (per
// board, with no bench: serve's is shared) all set up here.
func Open(ctx context.Context, b boards.Board, inv *boards.Inventory, o Options) (*Rig, error) {
	if err := os.MkdirAll(o.Cache, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if b.Virtual() {
		if err := CheckProxy(b, o.Proxy); err != nil {
			return nil, err
		}
		return openVirtual(ctx, b, o)
	}
	if b.OwnFirmware {
		return openFirmware(ctx, b, inv, o)
	}
	return openWired(ctx, b, inv, o)
}

func openVirtual(ctx context.Context, b boards.Board, o Options) (*Rig, error) {
	p, cache, routes, progress := b.Profile, o.Cache, o.Routes, o.Progress
	for _, ns := range vbench.Sweep(cache) {
		SetupNote(progress, "network", "removed namespace %s left by a bootbench that was killed", ns)
	}
	for _, s := range routenet.Sweep(cache) {
		SetupNote(progress, "network", "%s, left by a bootbench that was killed", s)
	}
	m := vbench.Machine{
		Binary: p.Virtual.QEMU, Args: p.Virtual.Args, NIC: p.Virtual.NIC, PortNIC: p.Virtual.PortNIC, MAC: b.MAC,
		Memory: p.RAMMB, SeaBIOSSerial: p.Virtual.SeaBIOSSerial, UBootEnv: p.Virtual.UBootEnv,
		Pflash: p.Virtual.Pflash,
	}
	r := &Rig{Rig: harness.Rig{Progress: progress}, Board: b, close: func() {}}
	if p.Boot == boards.BootQEMUDirect {
		r.Target = vbench.NewBoard(nil, m, cache)
		return r, nil
	}
	n, err := vbench.NewNet(ctx, cache)
	if err != nil {
		return nil, err
	}
	SetupNote(progress, "network", "virtual bench: namespace %s, tap %s on %s", n.Name, n.Tap, n.Addr())
	r.Board.Address = vbench.BoardAddr
	r.close = func() { n.Close() }
	if routes != nil {
		rn, err := vbench.NewRouteNet(ctx, cache, *routes)
		if err != nil {
			n.Close()
			return nil, err
		}
		SetupNote(progress, "network", "route networks: namespace %s (client), namespace %s (server)", rn.Client, rn.Server)
		m.Ports = rn.BoardPorts()
		m.IdleInRealTime = true
		r.Router = rn
		r.close = func() { rn.Close(); n.Close() }
	}
	vb := vbench.NewBoard(n, m, cache)
	vb.ROM, vb.Name, vb.Serial = p.Virtual.ROM, b.Name, p.Virtual.Serial
	vb.KernelReadsCmdline = !p.Virtual.AddCmdlineArea
	vb.Flash, vb.FirmwareClock = filepath.Join(cache, "flash", b.Name), p.ClockMethod.SetInFirmware()
	r.Target = vb
	r.Bench = &boot.NetBench{Net: n}
	return r, nil
}

func openWired(ctx context.Context, b boards.Board, inv *boards.Inventory, o Options) (*Rig, error) {
	op := power.Terminal(os.Stdin, os.Stderr)
	drv, err := power.New(b.Name, b.Power, op)
	if err != nil {
		return nil, setupErr("board %s: %v", b.Name, err)
	}
	progress := o.Progress
	// What a killed run left on this board first: it may still be on.
	target, err := wiredTarget(ctx, o.Cache, b, drv, progress)
	if err != nil {
		return nil, err
	}
	note := func(msg string) { SetupNote(progress, "network", "%s", msg) }
	var rn *routenet.Net
	if o.Routes != nil {
		if rn, err = openRouteNet(ctx, o.Cache, b, inv, *o.Routes, note); err != nil {
			return nil, err
		}
	}
	bench, closeBench, err := OpenBench(ctx, o.Cache, inv, o.Proxy, o.Probe, note)
	if err != nil {
		closeRouteNet(rn, note)
		return nil, err
	}
	if rn != nil {
		closeNIC := closeBench
		closeBench = func() { closeRouteNet(rn, note); closeNIC() }
	}
	return &Rig{
		Rig: harness.Rig{
			Target:   target,
			Bench:    bench,
			Operator: op,
			Progress: progress,
		},
		Board:  b,
		Router: routerOf(rn),
		close:  closeBench,
	}, nil
}

// wiredTarget is board b on a real bench, its power switched by drv:
// first what a bootbench killed while it ran b left is put right, and
// said: the board switched off, the console's lock removed.
func wiredTarget(ctx context.Context, cache string, b boards.Board, drv power.Driver, progress io.Writer) (*harness.Wired, error) {
	w := &harness.Wired{Driver: drv, Port: b.Console, Baud: b.Baud,
		PowerRecord: filepath.Join(cache, "power-"+url.PathEscape(b.Name))}
	if lock := serialctl.SweepLock(b.Console, ""); lock != "" {
		SetupNote(progress, "console", "removed %s, left by a bootbench that was killed", lock)
	}
	said, err := w.SweepLeftOn(ctx)
	if err != nil {
		return nil, fmt.Errorf("board %s: %w", b.Name, err)
	}
	if said != "" {
		SetupNote(progress, "power", "%s %s", b.Name, said)
	}
	return w, nil
}

// routerOf is rn as the route driver's Router: nil, not a nil *Net, when
// the run routes nothing.
func routerOf(rn *routenet.Net) route.Router {
	if rn == nil {
		return nil
	}
	return rn
}

// openRouteNet isolates the bench's two route interfaces, each in a
// namespace of its own for the run (the host must not route between them
// itself), after putting back what a killed run left.
func openRouteNet(ctx context.Context, cache string, b boards.Board, inv *boards.Inventory, plan route.Plan, note func(string)) (*routenet.Net, error) {
	for _, s := range routenet.Sweep(cache) {
		note(s + ", left by a bootbench that was killed")
	}
	spec, err := RouteSpec(b, inv, plan)
	if err != nil {
		return nil, err
	}
	rn, err := routenet.New(ctx, cache, spec, note)
	if err != nil {
		return nil, &SetupError{fmt.Errorf("board %s: route networks: %w", b.Name, err)}
	}
	note("route networks: " + rn.String())
	return rn, nil
}

// RouteSpec is what the inventory says of board b's route networks.
func RouteSpec(b boards.Board, inv *boards.Inventory, plan route.Plan) (routenet.Spec, error) {
	r := inv.Bench.Route
	switch {
	case r == nil:
		return routenet.Spec{}, setupErr("board %s: the route benchmark needs the bench's route networks in %s (bench: route: {client: IFACE, server: IFACE}, the host NICs cabled to the board's two routed ports)", b.Name, inv.Path)
	case len(b.RoutePorts) != 2 && !b.OwnFirmware:
		return routenet.Spec{}, setupErr("board %s: the route benchmark needs the board's two routed ports in %s (route_ports: [MAC or name, MAC or name], client side first)", b.Name, inv.Path)
	}
	client, server := routenet.Link{Host: r.Client}, routenet.Link{Host: r.Server}
	if r.Trunk != "" {
		client, server = routenet.Link{Trunk: r.Trunk, VLAN: r.ClientVLAN}, routenet.Link{Trunk: r.Trunk, VLAN: r.ServerVLAN}
	}
	spec := routenet.Spec{
		Client: routenet.Side{Link: client, Board: b.RouteAddrs[0]},
		Server: routenet.Side{Link: server, Board: b.RouteAddrs[1]},
		Plan:   plan,
	}
	if len(b.RoutePorts) == 2 { // a board under its own firmware needs none: nothing of ours names them to it
		spec.Client.Port, spec.Server.Port = b.RoutePorts[0], b.RoutePorts[1]
	}
	if len(r.Direct) == 2 {
		spec.Direct = [2]routenet.Link{{Host: r.Direct[0]}, {Host: r.Direct[1]}}
	}
	return spec, nil
}

// closeRouteNet puts the route interfaces back and says so.
func closeRouteNet(rn *routenet.Net, note func(string)) {
	if rn == nil {
		return
	}
	if err := rn.Close(); err != nil {
		note(fmt.Sprintf("route networks: %v (the next run puts back what is left)", err))
		return
	}
	note("route networks: put back as they were")
}

// OpenBench readies the inventory's bench NIC, refusing a segment with its
// own DHCP server unless serving as proxyDHCP. note tells what it changed.
// The probe for that server runs once per command, while the command gets
// its first run ready (probe, when the command started it already; else
// from here on); the bench's first Serve waits for its verdict, so no
// board is switched on before (unless the segment was heard quiet minutes
// ago: then a refusal ends the run, see probedBench), and then a watch
// reports any server that starts offering on the segment later.
func OpenBench(ctx context.Context, cache string, inv *boards.Inventory, proxy bool, probe *Probe, note func(string)) (boot.Bench, func(), error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cache: %w", err)
	}
	for _, s := range benchnic.Sweep(cache) {
		note("removed bench address " + s + " left by a bootbench that was killed")
	}
	nic, err := benchnic.Open(ctx, inv.Bench.Interface, inv.Bench.Address, cache)
	if err != nil {
		// The inventory names a NIC this host cannot serve from: a
		// setup problem no run would get past.
		return nil, nil, &SetupError{err}
	}
	if nic.Added() {
		note(fmt.Sprintf("added %s to %s; it is removed afterwards", nic.Addr(), nic.Interface()))
	}
	closeNIC := func() {
		if !nic.Added() {
			return
		}
		if err := nic.Close(); err != nil {
			note(fmt.Sprintf("%v (remove it by hand: ip addr del %s dev %s)", err, nic.Addr(), nic.Interface()))
			return
		}
		note(fmt.Sprintf("removed %s from %s", nic.Addr(), nic.Interface()))
	}
	nb := &boot.NetBench{Net: nic, Proxy: proxy}
	if proxy {
		return nb, closeNIC, nil
	}
	if probe == nil {
		probe = StartProbe(ctx, cache, inv.Bench.Interface, false, note)
	}
	pb := &probedBench{NetBench: nb, probe: probe}
	pb.watch(note)
	return pb, func() { probe.stop(); pb.stopWatch(); closeNIC() }, nil
}

// SetupNote is a progress line about the bench rather than one run.
func SetupNote(w io.Writer, stage, format string, args ...any) {
	fmt.Fprintf(w, "[   setup] %-8s %s\n", stage, fmt.Sprintf(format, args...))
}

// CheckProxy refuses --proxy for a virtual board, whose network has no
// other DHCP server to leave the addresses to.
func CheckProxy(b boards.Board, proxy bool) error {
	if proxy && b.Virtual() {
		return setupErr("--proxy is for a real bench that has a DHCP server of its own; virtual board %s has its own network", b.Name)
	}
	return nil
}
