package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/benchnic"
	"github.com/bootbench/bootbench/internal/kernels"
	"github.com/bootbench/bootbench/internal/route"
	"github.com/bootbench/bootbench/internal/routenet"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/serialctl"
	"github.com/bootbench/bootbench/vbench"
)

// rig is what a command sets up to run one board: the harness's rig
// (target, bench, builders, store) and the board as the rig has it (a
// virtual board gets the virtual bench's address). close undoes the setup:
// the virtual bench's namespace, a bench address that was added.
type rig struct {
	harness.Rig
	board  boards.Board
	router route.Router // the route benchmark's networks, when asked for
	close  func()
}

// loadBoard finds the board by name in the inventory (flag, else the
// default places) or among the virtual boards.
func loadBoard(ctx context.Context, name, inventoryFlag string) (boards.Board, *boards.Inventory, error) {
	var inv *boards.Inventory
	if path := boards.InventoryPath(inventoryFlag); path != "" {
		var err error
		if inv, err = boards.LoadInventory(ctx, path); err != nil {
			return boards.Board{}, nil, inventoryErr(err)
		}
	}
	b, err := boards.Resolve(name, inv)
	if err != nil {
		return boards.Board{}, nil, usageErr("%v", err)
	}
	return b, inv, nil
}

// inventoryErr is how a command ends when its inventory did not load: bad
// input (exit 2), or Ctrl-C while it loaded (130).
func inventoryErr(err error) error {
	if errors.Is(err, context.Canceled) {
		return &exitError{code: 130, err: fmt.Errorf("interrupted: %w", err)}
	}
	return usageErr("%v", err)
}

// openRig readies board b to be run: a virtual board gets the virtual bench,
// a board from the inventory the inventory's bench NIC, console and power.
// routes asks for the route benchmark's networks. run, ci and serve (per
// board, with no bench: serve's is shared) all set up here.
// probe is the rival-DHCP probe the command already started for a board
// from the inventory (nil: openRig starts it).
func openRig(ctx context.Context, b boards.Board, inv *boards.Inventory, proxy bool, routes *route.Plan, probe *dhcpProbe, progress io.Writer) (*rig, error) {
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if b.Virtual() {
		if err := checkProxy(b, proxy); err != nil {
			return nil, err
		}
		return openVirtual(ctx, b, routes, progress)
	}
	if b.OwnFirmware {
		return openFirmware(ctx, b, inv, routes, progress)
	}
	return openWired(ctx, b, inv, proxy, routes, probe, progress)
}

func openVirtual(ctx context.Context, b boards.Board, routes *route.Plan, progress io.Writer) (*rig, error) {
	p, cache := b.Profile, cacheDir()
	for _, ns := range vbench.Sweep(cache) {
		setupNote(progress, "network", "removed namespace %s left by a bootbench that was killed", ns)
	}
	for _, s := range routenet.Sweep(cache) {
		setupNote(progress, "network", "%s, left by a bootbench that was killed", s)
	}
	m := vbench.Machine{
		Binary: p.Virtual.QEMU, Args: p.Virtual.Args, NIC: p.Virtual.NIC, PortNIC: p.Virtual.PortNIC, MAC: b.MAC,
		Memory: p.RAMMB, SeaBIOSSerial: p.Virtual.SeaBIOSSerial, UBootEnv: p.Virtual.UBootEnv,
		Pflash: p.Virtual.Pflash,
	}
	r := &rig{Rig: harness.Rig{Progress: progress}, board: b, close: func() {}}
	if p.Boot == boards.BootQEMUDirect {
		r.Target = vbench.NewBoard(nil, m, cache)
		return r, nil
	}
	n, err := vbench.NewNet(ctx, cache)
	if err != nil {
		return nil, err
	}
	setupNote(progress, "network", "virtual bench: namespace %s, tap %s on %s", n.Name, n.Tap, n.Addr())
	r.board.Address = vbench.BoardAddr
	r.close = func() { n.Close() }
	if routes != nil {
		rn, err := vbench.NewRouteNet(ctx, cache, *routes)
		if err != nil {
			n.Close()
			return nil, err
		}
		setupNote(progress, "network", "route networks: namespace %s (client), namespace %s (server)", rn.Client, rn.Server)
		m.Ports = rn.BoardPorts()
		m.IdleInRealTime = true
		r.router = rn
		r.close = func() { rn.Close(); n.Close() }
	}
	vb := vbench.NewBoard(n, m, cache)
	vb.ROM, vb.Name, vb.Serial = p.Virtual.ROM, b.Name, p.Virtual.Serial
	vb.KernelReadsCmdline = !p.Virtual.AddCmdlineArea
	r.Target = vb
	r.Bench = &boot.NetBench{Net: n}
	return r, nil
}

func openWired(ctx context.Context, b boards.Board, inv *boards.Inventory, proxy bool, routes *route.Plan, probe *dhcpProbe, progress io.Writer) (*rig, error) {
	op := power.Terminal(os.Stdin, os.Stderr)
	drv, err := power.New(b.Name, b.Power, op)
	if err != nil {
		return nil, usageErr("board %s: %v", b.Name, err)
	}
	// What a killed run left on this board first: it may still be on.
	target, err := wiredTarget(ctx, b, drv, progress)
	if err != nil {
		return nil, err
	}
	note := func(msg string) { setupNote(progress, "network", "%s", msg) }
	var rn *routenet.Net
	if routes != nil {
		if rn, err = openRouteNet(ctx, b, inv, *routes, note); err != nil {
			return nil, err
		}
	}
	bench, closeBench, err := openBench(ctx, inv, proxy, probe, note)
	if err != nil {
		closeRouteNet(rn, note)
		return nil, err
	}
	if rn != nil {
		closeNIC := closeBench
		closeBench = func() { closeRouteNet(rn, note); closeNIC() }
	}
	return &rig{
		Rig: harness.Rig{
			Target:   target,
			Bench:    bench,
			Operator: op,
			Progress: progress,
		},
		board:  b,
		router: routerOf(rn),
		close:  closeBench,
	}, nil
}

// wiredTarget is board b on a real bench, its power switched by drv:
// first what a bootbench killed while it ran b left is put right, and
// said: the board switched off, the console's lock removed.
func wiredTarget(ctx context.Context, b boards.Board, drv power.Driver, progress io.Writer) (*harness.Wired, error) {
	w := &harness.Wired{Driver: drv, Port: b.Console, Baud: b.Baud,
		PowerRecord: filepath.Join(cacheDir(), "power-"+url.PathEscape(b.Name))}
	if lock := serialctl.SweepLock(b.Console, ""); lock != "" {
		setupNote(progress, "console", "removed %s, left by a bootbench that was killed", lock)
	}
	said, err := w.SweepLeftOn(ctx)
	if err != nil {
		return nil, fmt.Errorf("board %s: %w", b.Name, err)
	}
	if said != "" {
		setupNote(progress, "power", "%s %s", b.Name, said)
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
func openRouteNet(ctx context.Context, b boards.Board, inv *boards.Inventory, plan route.Plan, note func(string)) (*routenet.Net, error) {
	for _, s := range routenet.Sweep(cacheDir()) {
		note(s + ", left by a bootbench that was killed")
	}
	spec, err := routeSpec(b, inv, plan)
	if err != nil {
		return nil, err
	}
	rn, err := routenet.New(ctx, cacheDir(), spec, note)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("board %s: route networks: %w", b.Name, err)}
	}
	note("route networks: " + rn.String())
	return rn, nil
}

// routeSpec is what the inventory says of board b's route networks.
func routeSpec(b boards.Board, inv *boards.Inventory, plan route.Plan) (routenet.Spec, error) {
	r := inv.Bench.Route
	switch {
	case r == nil:
		return routenet.Spec{}, usageErr("board %s: the route benchmark needs the bench's route networks in %s (bench: route: {client: IFACE, server: IFACE}, the host NICs cabled to the board's two routed ports)", b.Name, inv.Path)
	case len(b.RoutePorts) != 2 && !b.OwnFirmware:
		return routenet.Spec{}, usageErr("board %s: the route benchmark needs the board's two routed ports in %s (route_ports: [MAC or name, MAC or name], client side first)", b.Name, inv.Path)
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

// openBench readies the inventory's bench NIC, refusing a segment with its
// own DHCP server unless serving as proxyDHCP. note tells what it changed.
// The probe for that server runs once per command, while the command gets
// its first run ready (probe, when the command started it already; else
// from here on); the bench's first Serve waits for its verdict, so no
// board is switched on before (unless the segment was heard quiet minutes
// ago: then a refusal ends the run, see probedBench), and then a watch
// reports any server that starts offering on the segment later.
func openBench(ctx context.Context, inv *boards.Inventory, proxy bool, probe *dhcpProbe, note func(string)) (boot.Bench, func(), error) {
	cache := cacheDir()
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
		return nil, nil, &exitError{code: 2, err: err}
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
		probe = startProbe(ctx, inv.Bench.Interface, false, note)
	}
	pb := &probedBench{NetBench: nb, probe: probe}
	pb.watch(note)
	return pb, func() { probe.stop(); pb.stopWatch(); closeNIC() }, nil
}

// builders make what a plan boots, in the cache: Debian's kernels, their
// modules, images from src (or the prebuilt set when src is "").
func builders(src string) plan.Builders {
	return plan.Builders{
		Kernels: func(ctx context.Context, k boards.DebianKernel) (string, error) {
			if k.Build != "" {
				say := func(step string) { setupNote(os.Stderr, "kernel", "%s", step) }
				return kernels.Built(ctx, cacheDir(), kernels.Variant(k.Build), say)
			}
			return kernels.Debian(ctx, cacheDir(), src, k.DebianArch, k.Flavour)
		},
		Modules: func(ctx context.Context, kernel string, names []string) ([]string, error) {
			return kernels.Modules(ctx, cacheDir(), kernel, benchinitModulesDir, names)
		},
		// A build from source takes half a minute or more: say so while
		// it runs (a cache hit says nothing).
		BuildImage: func(ctx context.Context, spec initramfs.Spec, cache string) (*initramfs.Image, error) {
			spec.Progress = func(step string) { setupNote(os.Stderr, "image", "%s", step) }
			return imagesBuilt.build(ctx, spec, cache)
		},
		CacheDir: cacheDir(),
		RaspberryPi: func(ctx context.Context, kernel string, rp plan.RaspberryPi) (map[string]string, error) {
			return raspberryPiFiles(ctx, src, kernel, rp)
		},
	}
}

// builtImages are the images one command has built or found, by spec.
// Finding even a cached image asks the go command about the source tree
// and hashes it (seconds on a busy host), and a command takes the same
// image for its fit check and for every run of its plan: it looks once.
type builtImages struct {
	mu   sync.Mutex
	done map[string]initramfs.Image
}

var imagesBuilt = &builtImages{done: map[string]initramfs.Image{}}

func (bi *builtImages) build(ctx context.Context, spec initramfs.Spec, cache string) (*initramfs.Image, error) {
	key := strings.Join(append([]string{cache, spec.Arch, spec.GOARM, spec.GOMIPS, spec.Source, spec.Bench, spec.BenchCmd, spec.Sysroot, spec.Prebuilt}, spec.Add...), "\x00")
	bi.mu.Lock()
	defer bi.mu.Unlock()
	if img, ok := bi.done[key]; ok {
		if st, err := os.Stat(img.Path); err == nil && st.Size() == img.Size {
			img.Cached, img.Took = true, 0
			return &img, nil
		}
	}
	img, err := initramfs.Build(ctx, spec, cache)
	if err != nil {
		return nil, err
	}
	bi.done[key] = *img
	return img, nil
}

// benchinitModulesDir is where benchinit loads the image's kernel modules
// from (its RouteModulesDir).
const benchinitModulesDir = "lib/modules/bootbench"

// setupNote is a progress line about the bench rather than one run.
func setupNote(w io.Writer, stage, format string, args ...any) {
	fmt.Fprintf(w, "[   setup] %-8s %s\n", stage, fmt.Sprintf(format, args...))
}

// checkProxy refuses --proxy for a virtual board, whose network has no
// other DHCP server to leave the addresses to.
func checkProxy(b boards.Board, proxy bool) error {
	if proxy && b.Virtual() {
		return usageErr("--proxy is for a real bench that has a DHCP server of its own; virtual board %s has its own network", b.Name)
	}
	return nil
}
