package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/results"
)

func cmdRun(ctx context.Context, args []string) error {
	fs := newFlags("run", "run [--board NAME] [--inventory FILE] [--clock MHZ[,MHZ...]] [--reps N] [flags]\n\n"+
		"Netboots the board with bootbench's own DHCP, TFTP and HTTP, runs the benchmark with\n"+
		"nothing else running on it, reads the result off the serial console and stores it.\n"+
		"With several clocks and repetitions the settings are interleaved (A B A B ...)\n"+
		"so that drift does not look like a difference.\n\n"+
		"A board on a real bench comes from the inventory (bench.yaml: the bench NIC, and each\n"+
		"board's profile, MAC, address, serial console and power switch); the virtual qemu-*\n"+
		"boards need none. On a bench segment that has its own DHCP server, --proxy answers\n"+
		"only the boot and lets that server hand out the addresses.")
	board := fs.String("board", boards.Default, "board: one from the inventory, or a virtual qemu-* board (see 'bootbench boards list')")
	inventory := fs.String("inventory", "", "bench inventory (default $BOOTBENCH_INVENTORY, else $XDG_CONFIG_HOME/bootbench/bench.yaml when it exists)")
	proxy := fs.Bool("proxy", false, "serve as proxyDHCP: the bench segment's own DHCP server hands out addresses, bootbench only the boot")
	clocks := fs.String("clock", "", "clock settings in MHz, comma separated (default: the board's default)")
	reps := fs.Int("reps", 1, "repetitions of each clock setting")
	bench := fs.String("bench", "speed", "benchmark: speed (built in, pure Go) or openssl (the host's openssl speed, for a board of the host's arch)")
	seconds := fs.Float64("seconds", 0.3, "seconds per algorithm and block size")
	algs := fs.String("algs", "", "algorithms, comma separated (default: the suite's default set)")
	kernel := fs.String("kernel", "", "kernel image (default: the inventory's, else the board's Debian kernel, fetched into the cache)")
	transport := fs.String("transport", "http", "how iPXE loads kernel and image from bootbench: http or tftp")
	appendArgs := fs.String("append", "", "extra kernel command line parameters")
	bootTimeout := fs.Duration("boot-timeout", 0, "time allowed from power-on to the board's hello (default: the profile's)")
	runTimeout := fs.Duration("run-timeout", 0, "time allowed from hello to the result (default: the profile's)")
	retries := fs.Int("retries", 1, "boot again this many times when the board never reported or its frames went corrupt (every attempt is stored)")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("run: unexpected argument %q", fs.Arg(0))
	}
	switch {
	case *retries < 0:
		return usageErr("run: --retries must be 0 or more")
	case *reps < 1:
		return usageErr("run: --reps must be at least 1")
	case *transport != "http" && *transport != "tftp":
		return usageErr("run: --transport must be http or tftp")
	case *bench != "speed" && *bench != "openssl":
		return usageErr("run: unknown benchmark %q (speed or openssl)", *bench)
	}
	b, inv, err := loadBoard(*board, *inventory)
	if err != nil {
		return err
	}
	settings, err := clockSettings(b.Profile, *clocks)
	if err != nil {
		return err
	}
	src, _ := initramfs.FindSource() // none: images come from the prebuilt set
	k := *kernel
	if k == "" {
		k = b.Kernel // the inventory's, if it names one
	}
	if err := checkBoard(ctx, b.Profile, *bench, k, src); err != nil {
		return err // before power-on: a model bootbench cannot run, or an image too big for its RAM
	}
	store, dbPath, err := openStore(*db)
	if err != nil {
		return err
	}
	defer store.Close()

	rig, err := openRig(ctx, b, inv, *proxy, os.Stderr)
	if err != nil {
		return err
	}
	defer rig.close()
	base := harness.Options{
		Board: rig.board, Target: rig.target, Bench: rig.bench, Operator: rig.operator,
		Benchmark: *bench, Seconds: time.Duration(*seconds * float64(time.Second)), Algs: splitList(*algs),
		Kernel: *kernel, Kernels: debianKernel(src), Source: src, CacheDir: cacheDir(),
		Append: *appendArgs, Transport: *transport, BootTimeout: *bootTimeout, RunTimeout: *runTimeout,
		Retries: *retries, Store: store, Progress: os.Stderr,
	}
	return runSettings(ctx, base, settings, *reps, dbPath)
}

// clockSettings reads --clock against what the board model offers.
func clockSettings(p boards.Profile, flag string) ([]boards.MHz, error) {
	if flag == "" {
		return []boards.MHz{p.DefaultClock}, nil
	}
	var settings []boards.MHz
	for _, c := range splitList(flag) {
		mhz, err := boards.ParseMHz(c)
		if err != nil {
			return nil, usageErr("run: --clock: %v", err)
		}
		if err := p.CheckClock(mhz); err != nil {
			return nil, usageErr("run: %v", err)
		}
		settings = append(settings, mhz)
	}
	return settings, nil
}

// runSettings runs every clock setting reps times, interleaved, and prints
// each result as it is stored.
func runSettings(ctx context.Context, base harness.Options, settings []boards.MHz, reps int, dbPath string) error {
	var failed []string
	total := reps * len(settings)
	for rep := 1; rep <= reps; rep++ {
		for _, mhz := range settings {
			o := base
			o.Clock, o.Rep = mhz, rep
			rec, err := harness.Run(ctx, o)
			if errors.Is(err, harness.ErrInterrupted) {
				return &exitError{code: 130, err: fmt.Errorf("interrupted; everything the run started is stopped (store: %s)", dbPath)}
			}
			if rec == nil {
				return err
			}
			if err != nil && total == 1 {
				return fmt.Errorf("run %s failed: %w", rec.ID, err)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "bootbench: run %s failed: %v\n", rec.ID, err)
				failed = append(failed, string(rec.ID))
				continue
			}
			printRun(rec, rep)
		}
	}
	fmt.Printf("\nstored in %s\n", dbPath)
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d runs failed (see 'bootbench results show %s')", len(failed), total, failed[0])
	}
	return nil
}

func printRun(rec *results.Run, rep int) {
	clock := "default clock"
	if rec.ClockMHz > 0 {
		clock = fmt.Sprintf("%d MHz", rec.ClockMHz)
	}
	fmt.Printf("\n%s  %s  %s  rep %d  %s %s\n", rec.ID, rec.Board, clock, rep, rec.Tool, rec.ToolVersion)
	results.WriteMetrics(os.Stdout, rec)
}
