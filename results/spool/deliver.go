package spool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// Store is what a spool is delivered to: the results store it waits for.
type Store interface {
	results.Saver
	// Run reads a stored run, to tell the spooled run it already holds
	// from another one under the same id.
	Run(ctx context.Context, id results.RunID) (*results.Run, error)
}

// Report says what Deliver did.
type Report struct {
	Delivered []results.RunID // stored now, in this order
	// Present are runs the store held already (stored after all, or
	// delivered meanwhile by another command): removed from the spool,
	// not stored twice.
	Present []results.RunID
	// Kept are spooled runs left where they are, each with why: a file
	// this bootbench cannot read, a run the store refuses, another run
	// under the same id.
	Kept []Problem
}

// Problem is a spooled run Deliver left in the spool, and why.
type Problem struct {
	Path string
	Why  string
}

// Deliver stores every run waiting in the spool in to, oldest first, each
// in its own transaction (to's SaveRun), and removes each file once to
// holds its run. It stops at the first run to cannot take for want of a
// place (the store still away): that and the runs after stay for the next
// delivery, and the error says why. delivered, if set, hears of each run
// stored, as it is.
func (s *Spool) Deliver(ctx context.Context, to Store, delivered func(results.RunID)) (*Report, error) {
	waiting, err := s.Waiting()
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, w := range waiting {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := s.deliverOne(ctx, to, w, rep); err != nil {
			return rep, err
		}
		if delivered != nil && slices.Contains(rep.Delivered, w.Run) {
			delivered(w.Run)
		}
	}
	return rep, nil
}

func (s *Spool) deliverOne(ctx context.Context, to Store, w Waiting, rep *Report) error {
	r, _, err := Read(w.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // delivered meanwhile by another command
	case err != nil:
		rep.Kept = append(rep.Kept, Problem{Path: w.Path, Why: err.Error()})
		return nil
	case r.ID != w.Run:
		rep.Kept = append(rep.Kept, Problem{Path: w.Path, Why: fmt.Sprintf("holds run %s, not the run its name says", r.ID)})
		return nil
	}
	err = to.SaveRun(ctx, r)
	switch {
	case err == nil:
		rep.Delivered = append(rep.Delivered, r.ID)
	case errors.Is(err, store.ErrExists):
		there, rerr := to.Run(ctx, r.ID)
		if rerr != nil {
			return fmt.Errorf("run %s: read it back from %s: %w", r.ID, s.Store, rerr)
		}
		if !sameRun(r, there) {
			rep.Kept = append(rep.Kept, Problem{Path: w.Path, Why: fmt.Sprintf("%s holds a different run under id %s", s.Store, r.ID)})
			return nil
		}
		rep.Present = append(rep.Present, r.ID)
	case store.Refused(err):
		rep.Kept = append(rep.Kept, Problem{Path: w.Path, Why: Cause(err, r.ID)})
		return nil
	default:
		return fmt.Errorf("run %s: %s", r.ID, Cause(err, r.ID))
	}
	if err := os.Remove(w.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("run %s is in %s; remove %s by hand: %w", r.ID, s.Store, w.Path, err)
	}
	return syncDir(s.Dir)
}

// sameRun says whether the store's run is the spooled one: the same
// board, start, setting, outcome and figures. Run ids are made so that two
// runs never share one (results.NewRunID); this checks rather than trust
// it, so a spooled run is never dropped for another's.
func sameRun(a, b *results.Run) bool {
	if a.Board != b.Board || !a.Started.Equal(b.Started) || a.ClockMHz != b.ClockMHz || a.Rep != b.Rep ||
		a.Status != b.Status || a.Bench != b.Bench || len(a.Metrics) != len(b.Metrics) {
		return false
	}
	am, bm := slices.Clone(a.Metrics), slices.Clone(b.Metrics)
	results.SortMetrics(am)
	results.SortMetrics(bm)
	return slices.Equal(am, bm)
}
