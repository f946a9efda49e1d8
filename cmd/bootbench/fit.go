package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/kernels"
	"github.com/bootbench/bootbench/plan"
)

// checkBoard refuses, before anything is built or powered on, a board model
// bootbench cannot run (its profile says why and what works instead), and
// a run whose image cannot boot in the board's RAM. It makes the job's
// plan as the run will (the run then finds kernel and image in the cache)
// and asks the plan's Fit, whose error gives the numbers. A board with no
// kernel to be had is checked without one.
func checkBoard(ctx context.Context, job plan.Job) error {
	p := job.Board.Profile
	if err := p.UnsupportedFor(job.Board, job.Benchmark); err != nil {
		return usageErr("run: %v", err)
	}
	if p.RAMMB <= 0 {
		return nil
	}
	built, err := buildPlan(ctx, "run", job)
	if err != nil {
		return err
	}
	if err := built.Fit(p.RAMMB); err != nil {
		return usageErr("run: board %s, bench %s: %v", p.Name, built.Plan.Params.Bench, err)
	}
	return nil
}

// buildPlan makes job's plan as the run will: its kernel (none where the
// board has none) and its image, wrapped as the board's loader takes it.
// cmd begins its errors.
func buildPlan(ctx context.Context, cmd string, job plan.Job) (*plan.Built, error) {
	p, bs := job.Board.Profile, builders(job.Source)
	built, err := bs.Build(ctx, job)
	var missing *kernels.MissingTools
	if errors.Is(err, plan.ErrNoKernel) {
		built, err = bs.Make(ctx, plan.New(job), "")
	}
	switch {
	case errors.Is(err, initramfs.ErrBadSpec):
		return nil, usageErr("%s: board %s, bench %s: %v", cmd, p.Name, job.Benchmark, err)
	case errors.Is(err, os.ErrNotExist) && job.Kernel != "":
		return nil, usageErr("%s: --kernel: %v", cmd, err)
	case errors.As(err, &missing):
		// Like a missing image: setup that would fail every run alike.
		return nil, usageErr("%s: board %s: %v", cmd, p.Name, missing)
	case errors.Is(err, initramfs.ErrNoImage):
		// A setup failure before power-on, as README says: exit 2.
		return nil, usageErr("%s: image for %s: %w", cmd, p.Name, err)
	case err != nil:
		return nil, fmt.Errorf("%s: image for %s: %w", cmd, p.Name, err)
	}
	return built, nil
}
