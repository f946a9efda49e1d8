package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
)

// prepareHelp is what 'bootbench boards prepare --help' adds to its usage line.
const prepareHelp = `Fetches and builds, into the cache, what each board boots: its kernel
(Debian's, or bootbench's own, built once from Debian's Linux source: some
minutes) and its image with the benchmark (openssl cross-built from Debian's
source for big-endian MIPS). Nothing is powered on and nothing is stored. A
run finds them there and starts at power-on; a second prepare is a lookup.
Boards are prepared one after another, in the order named; each build takes
every core. Exit 0 when every board is ready, 1 when one is not (each said),
2 for bad input.

  bootbench boards prepare qemu-x86_64
  bootbench boards prepare --bench openssl qemu-rb450g qemu-wrt54g`

// cmdPrepare is 'bootbench boards prepare'.
func cmdPrepare(ctx context.Context, args []string) error {
	fs := newCommand("boards prepare", "boards prepare [--bench NAME] [--inventory FILE] BOARD...", prepareHelp)
	bench := fs.String("bench", benchmark.Speed, "benchmark the images carry: "+benchmark.Help())
	inventory := fs.String("inventory", "", "inventory file for boards of a bench (default: the default places)")
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("boards prepare: name one board or more (see 'bootbench boards list')")
	}
	if _, err := benchmark.Lookup(*bench); err != nil {
		return usageErr("boards prepare: --bench: %v", err)
	}
	var jobs []plan.Job
	src, _ := initramfs.FindSource() // none: images come from the prebuilt set
	for _, name := range fs.Args() {
		b, inv, err := loadBoard(ctx, name, *inventory)
		if err != nil {
			return err
		}
		if err := b.Profile.UnsupportedFor(b, *bench); err != nil {
			return usageErr("boards prepare: %v", err)
		}
		if *bench == benchmark.Route {
			if err := routeRefusal(b, inv); err != nil {
				return usageErr("boards prepare: %v", err)
			}
		}
		jobs = append(jobs, plan.Job{Board: b, Benchmark: *bench, Source: src})
	}
	failed := 0
	for _, job := range jobs {
		err := prepareBoard(ctx, job)
		var exit *exitError
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			return &exitError{code: 130, err: errors.New("boards prepare: interrupted")}
		case errors.As(err, &exit) && exit.code == 2:
			return err // bad input: the next board's would be too
		default:
			fmt.Fprintf(os.Stderr, "bootbench: %v\n", err)
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("boards prepare: %d of %d boards not ready", failed, len(jobs))}
	}
	return nil
}

// prepareBoard builds job's plan as a run would, and says what the board
// will boot.
func prepareBoard(ctx context.Context, job plan.Job) error {
	if job.Board.OwnFirmware {
		fmt.Printf("%s: runs under its own firmware; nothing to build\n", job.Board.Name)
		return nil
	}
	start := time.Now()
	built, err := buildPlan(ctx, "boards prepare", job)
	if err != nil {
		return err
	}
	kernel := "no kernel of bootbench's (the board's loader has its own)"
	if built.Kernel != "" {
		kernel = "kernel " + filepath.Base(built.Kernel)
	}
	fmt.Printf("%s: ready in %s: %s, %s image %.1f MiB\n", job.Board.Name, time.Since(start).Round(100*time.Millisecond),
		kernel, job.Benchmark, float64(built.PayloadSize)/(1<<20))
	return nil
}
