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
	fs := newFlags("run", "run [--board NAME] [--clock MHZ[,MHZ...]] [--reps N] [flags]\n\n"+
		"Netboots the board with bootbench's own DHCP and TFTP, runs the benchmark with\n"+
		"nothing else running on it, reads the result off the serial console and stores it.\n"+
		"With several clocks and repetitions the settings are interleaved (A B A B ...)\n"+
		"so that drift does not look like a difference.")
	board := fs.String("board", boards.Default, "board profile (see 'bootbench boards list')")
	clocks := fs.String("clock", "", "clock settings in MHz, comma separated (default: the board's default)")
	reps := fs.Int("reps", 1, "repetitions of each clock setting")
	bench := fs.String("bench", "speed", "benchmark: speed (built in, pure Go) or openssl (the host's openssl speed, for a board of the host's arch)")
	seconds := fs.Float64("seconds", 0.3, "seconds per algorithm and block size")
	algs := fs.String("algs", "", "algorithms, comma separated (default: the suite's default set)")
	kernel := fs.String("kernel", "", "kernel image (default: the board's Debian kernel, fetched into the cache)")
	transport := fs.String("transport", "http", "how iPXE loads kernel and image from bootbench: http or tftp")
	appendArgs := fs.String("append", "", "extra kernel command line parameters")
	bootTimeout := fs.Duration("boot-timeout", 0, "time allowed from power-on to the board's hello (default: the profile's)")
	runTimeout := fs.Duration("run-timeout", 0, "time allowed from hello to the result (default: the profile's)")
	retries := fs.Int("retries", 1, "boot again this many times when the board never reports (every attempt is stored)")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("run: unexpected argument %q", fs.Arg(0))
	}
	if *retries < 0 {
		return usageErr("run: --retries must be 0 or more")
	}
	p, err := boards.Get(*board)
	if err != nil {
		return usageErr("%v", err)
	}
	if *reps < 1 {
		return usageErr("run: --reps must be at least 1")
	}
	if *transport != "http" && *transport != "tftp" {
		return usageErr("run: --transport must be http or tftp")
	}
	if *bench != "speed" && *bench != "openssl" {
		return usageErr("run: unknown benchmark %q (speed or openssl)", *bench)
	}
	settings := []boards.MHz{p.DefaultClock}
	if *clocks != "" {
		settings = nil
		for _, c := range splitList(*clocks) {
			mhz, err := boards.ParseMHz(c)
			if err != nil {
				return usageErr("run: --clock: %v", err)
			}
			if err := p.CheckClock(mhz); err != nil {
				return usageErr("run: %v", err)
			}
			settings = append(settings, mhz)
		}
	}
	src, _ := initramfs.FindSource() // none: images come from the prebuilt set
	if err := checkBoard(ctx, p, *bench, *kernel, src); err != nil {
		return err // before power-on: a model bootbench cannot run, or an image too big for its RAM
	}
	store, dbPath, err := openStore(*db)
	if err != nil {
		return err
	}
	defer store.Close()

	var failed []string
	for rep := 1; rep <= *reps; rep++ {
		for _, mhz := range settings {
			opts := harness.Options{
				Board: p, ClockMHz: mhz, Bench: *bench, Seconds: time.Duration(*seconds * float64(time.Second)),
				Algs: splitList(*algs), Rep: rep, Kernel: *kernel, Source: src, CacheDir: cacheDir(),
				Append: *appendArgs, Transport: *transport, BootTimeout: *bootTimeout, RunTimeout: *runTimeout,
				Store: store, Progress: os.Stderr,
			}
			rec, err := harness.Run(ctx, opts)
			// A board that never reported has measured nothing: booting it
			// again costs no result and rides out a boot that hung. Every
			// attempt is stored.
			for try := 1; try <= *retries && err != nil && rec != nil && rec.Hello == nil && !errors.Is(err, harness.ErrInterrupted); try++ {
				fmt.Fprintf(os.Stderr, "bootbench: run %s failed before the board reported (%v); booting again (%d of %d)\n", rec.ID, err, try, *retries)
				rec, err = harness.Run(ctx, opts)
			}
			if errors.Is(err, harness.ErrInterrupted) {
				return &exitError{code: 130, err: fmt.Errorf("interrupted; everything the run started is stopped (store: %s)", dbPath)}
			}
			if rec == nil {
				return err
			}
			if err != nil && *reps*len(settings) == 1 {
				return fmt.Errorf("run %s failed: %w", rec.ID, err)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "bootbench: run %s failed: %v\n", rec.ID, err)
				failed = append(failed, string(rec.ID))
				continue
			}
			clock := "default clock"
			if rec.ClockMHz > 0 {
				clock = fmt.Sprintf("%d MHz", rec.ClockMHz)
			}
			fmt.Printf("\n%s  %s  %s  rep %d  %s %s\n", rec.ID, rec.Board, clock, rep, rec.Tool, rec.ToolVersion)
			if err := results.WriteMetrics(os.Stdout, rec); err != nil {
				return err
			}
		}
	}
	fmt.Printf("\nstored in %s\n", dbPath)
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d runs failed (see 'bootbench results show %s')", len(failed), *reps*len(settings), failed[0])
	}
	return nil
}
