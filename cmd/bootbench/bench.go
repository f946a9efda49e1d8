package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/benchnic"
	"github.com/bootbench/bootbench/internal/kernels"
	"github.com/bootbench/bootbench/internal/route"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/vbench"
)

// rivalProbe is how long bootbench listens for another DHCP server on a
// bench segment before it serves as the segment's DHCP server. dnsmasq
// answers a new client's first DISCOVER only after 3 s (it pings the
// address first), so 2 s would miss the commonest rival.
const rivalProbe = 4 * time.Second

// errRival is a bench segment that has a DHCP server of its own.
var errRival = errors.New("another DHCP server answers on the bench segment")

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
func openRig(ctx context.Context, b boards.Board, inv *boards.Inventory, proxy bool, routes *route.Plan, progress io.Writer) (*rig, error) {
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if b.Virtual() {
		if err := checkProxy(b, proxy); err != nil {
			return nil, err
		}
		return openVirtual(ctx, b, routes, progress)
	}
	return openWired(ctx, b, inv, proxy, progress)
}

func openVirtual(ctx context.Context, b boards.Board, routes *route.Plan, progress io.Writer) (*rig, error) {
	p, cache := b.Profile, cacheDir()
	for _, ns := range vbench.Sweep(cache) {
		setupNote(progress, "network", "removed namespace %s left by a bootbench that was killed", ns)
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
		r.router = rn
		r.close = func() { rn.Close(); n.Close() }
	}
	vb := vbench.NewBoard(n, m, cache)
	vb.ROM, vb.Name = p.Virtual.ROM, b.Name
	vb.KernelReadsCmdline = !p.Virtual.AddCmdlineArea
	r.Target = vb
	r.Bench = &boot.NetBench{Net: n}
	return r, nil
}

func openWired(ctx context.Context, b boards.Board, inv *boards.Inventory, proxy bool, progress io.Writer) (*rig, error) {
	op := power.Terminal(os.Stdin, os.Stderr)
	drv, err := power.New(b.Name, b.Power, op)
	if err != nil {
		return nil, usageErr("board %s: %v", b.Name, err)
	}
	bench, closeBench, err := openBench(ctx, inv, proxy, func(msg string) { setupNote(progress, "network", "%s", msg) })
	if err != nil {
		return nil, err
	}
	return &rig{
		Rig: harness.Rig{
			Target:   &harness.Wired{Driver: drv, Port: b.Console, Baud: b.Baud},
			Bench:    bench,
			Operator: op,
			Progress: progress,
		},
		board: b,
		close: closeBench,
	}, nil
}

// openBench readies the inventory's bench NIC, refusing a segment with its
// own DHCP server unless serving as proxyDHCP. note tells what it changed.
func openBench(ctx context.Context, inv *boards.Inventory, proxy bool, note func(string)) (*boot.NetBench, func(), error) {
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
	if !proxy {
		if err := probeRival(ctx, nic.Interface(), note); err != nil {
			closeNIC()
			return nil, nil, err
		}
	}
	return &boot.NetBench{Net: nic, Proxy: proxy}, closeNIC, nil
}

// probeRival refuses to be a second DHCP server on a segment that has one.
func probeRival(ctx context.Context, iface string, note func(string)) error {
	note(fmt.Sprintf("listening %s on %s for another DHCP server", rivalProbe, iface))
	rival, err := netboot.ProbeDHCP(ctx, iface, rivalProbe)
	if err != nil {
		return err
	}
	if rival != nil {
		return &exitError{code: 2, err: fmt.Errorf("%w: %s on %s; two DHCP servers would give the boards different answers. Run with --proxy: bootbench then answers only the boot (proxyDHCP) and that server hands out the addresses", errRival, rival, iface)}
	}
	return nil
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
			return initramfs.Build(ctx, spec, cache)
		},
		CacheDir: cacheDir(),
	}
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
