package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/bootbench/bootbench/results"
)

// PushReport says what Push did with each run it was given.
type PushReport struct {
	Pushed  []results.RunID // copied, in the order stored
	Present int             // already in the target: the same run, under the same id
	// SameInput are runs not copied because the target holds the same
	// imported output under another run (imported on another bench too).
	SameInput []PushSkip
	// Conflicts are runs not copied because the target holds a different
	// run under the same id. Run ids are made so that this does not happen
	// (NewRunID); Push checks rather than trust it, so a run is never
	// taken for one already there and silently left behind.
	Conflicts []PushSkip
}

// PushSkip is a run Push did not copy, and the target's run in the way.
type PushSkip struct {
	ID, Other results.RunID
}

// pushBatch is how many runs Push looks up in the target at once.
const pushBatch = 500

// Push copies the runs of from that f selects into to, each with all that
// is stored about it (stages, metrics, hello, transcript, raw output,
// where it came from), each in its own transaction. It is idempotent: a
// run already in the target is skipped, so a bench that was offline can
// push again whenever it can reach the shared store, and two pushes of
// the same runs at once store each run once. pushed, if set, is called
// once a run is committed to the target.
func Push(ctx context.Context, from, to *Store, f results.Filter, pushed func(*results.Run)) (*PushReport, error) {
	f.WithTranscript = false // listed without; each run is read whole when copied
	runs, err := from.Runs(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("results: push: read %s: %w", from.path, err)
	}
	rep := &PushReport{}
	for len(runs) > 0 {
		batch := runs[:min(len(runs), pushBatch)]
		runs = runs[len(batch):]
		if err := pushBatchOf(ctx, from, to, batch, rep, pushed); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func pushBatchOf(ctx context.Context, from, to *Store, batch []results.Run, rep *PushReport, pushed func(*results.Run)) error {
	ids := make([]results.RunID, len(batch))
	for i, r := range batch {
		ids[i] = r.ID
	}
	there, err := to.Runs(ctx, results.Filter{IDs: ids})
	if err != nil {
		return fmt.Errorf("results: push: read %s: %w", to.path, err)
	}
	byID := make(map[results.RunID]*results.Run, len(there))
	for i := range there {
		byID[there[i].ID] = &there[i]
	}
	for i := range batch {
		r := &batch[i]
		if t, ok := byID[r.ID]; ok {
			rep.present(r, t)
			continue
		}
		if err := pushOne(ctx, from, to, r, rep, pushed); err != nil {
			return err
		}
	}
	return nil
}

func pushOne(ctx context.Context, from, to *Store, listed *results.Run, rep *PushReport, pushed func(*results.Run)) error {
	r, err := from.Run(ctx, listed.ID)
	if err != nil {
		return fmt.Errorf("results: push: read %s: %w", from.path, err)
	}
	err = to.SaveRun(ctx, r)
	switch {
	case err == nil:
		rep.Pushed = append(rep.Pushed, r.ID)
		if pushed != nil {
			pushed(r)
		}
	case errors.Is(err, ErrExists):
		// Another push stored it since the batch was looked up.
		t, err := to.Runs(ctx, results.Filter{IDs: []results.RunID{r.ID}})
		if err != nil || len(t) != 1 {
			return fmt.Errorf("results: push: read run %s back from %s: %v", r.ID, to.path, err)
		}
		rep.present(listed, &t[0])
	case errors.Is(err, ErrDuplicateInput):
		other, err := to.RunByInputSHA256(ctx, r.InputSHA256)
		if err != nil {
			return fmt.Errorf("results: push: %w", err)
		}
		rep.SameInput = append(rep.SameInput, PushSkip{r.ID, other})
	default:
		return fmt.Errorf("results: push run %s to %s: %w", r.ID, to.path, err)
	}
	return nil
}

// present files a run the target already holds under its id: the same
// run, or a conflict.
func (rep *PushReport) present(r, there *results.Run) {
	if sameRun(r, there) {
		rep.Present++
		return
	}
	rep.Conflicts = append(rep.Conflicts, PushSkip{r.ID, there.ID})
}

// sameRun says whether two listings (without transcripts) are of one
// run: everything a listing holds is equal.
func sameRun(a, b *results.Run) bool {
	return reflect.DeepEqual(normalRun(a), normalRun(b))
}

func normalRun(r *results.Run) results.Run {
	n := *storable(r)
	n.Started, n.Finished = r.Started.UTC(), r.Finished.UTC()
	n.Transcript, n.RawOutput = nil, nil
	if n.Energy != nil {
		e := *n.Energy
		e.Samples = nil // loaded with the transcript, as the transcript is
		n.Energy = &e
	}
	if len(n.Stages) == 0 {
		n.Stages = nil
	}
	if len(n.Metrics) == 0 {
		n.Metrics = nil
	}
	return n
}
