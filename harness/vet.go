package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
)

// vet watches a bench that may yet be refused after it started serving the
// board (boot.Vetted: a real bench's segment heard quiet minutes ago,
// checked again while the board powers on). A refusal ends the run at once:
// the returned context is the run's from here on, and end stops the watch.
func (r *run) vet(ctx context.Context) (vctx context.Context, end func()) {
	v, ok := r.o.Bench.(boot.Vetted)
	if !ok || r.o.Board.Profile.Boot == boards.BootQEMUDirect { // a board the bench does not serve
		return ctx, func() {}
	}
	r.mu.Lock()
	r.vetted = true
	r.mu.Unlock()
	vctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			err := v.Refused(vctx)
			if vctx.Err() != nil {
				return
			}
			if err != nil {
				r.mu.Lock()
				r.refused = err
				r.mu.Unlock()
				r.say("network", "refused: %v; switching the board off", err)
				cancel()
				return
			}
			// Served on: a server heard later still ends the run.
			select {
			case <-vctx.Done():
				return
			case <-time.After(vetEvery):
			}
		}
	}()
	return vctx, func() { cancel(); <-done }
}

// vetEvery is how often a bench that let a run go on is asked again.
const vetEvery = 500 * time.Millisecond

// refusal is why the bench must not have served this run: the verdict a
// vetted bench reached mid-run, or, for a run that ended before it, the
// verdict waited for now, so that nothing is stored from a segment
// bootbench may not serve. A run interrupted before the verdict came is
// not stored either: nobody knows whether it may be.
func (r *run) refusal(ctx context.Context) error {
	r.mu.Lock()
	vetted, refused := r.vetted, r.refused
	r.mu.Unlock()
	if refused != nil || !vetted {
		return refused
	}
	err := r.o.Bench.(boot.Vetted).Refused(ctx)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w before the check for another DHCP server on the bench segment ended: nothing of it is stored", ErrInterrupted)
	}
	return err
}

// ErrRefusedMidRun marks a refusal that came after the board was switched
// on: it ran, and is off again, but nothing of it may be kept.
var ErrRefusedMidRun = errors.New("the board was switched on before this verdict, and is off again")

func refusedMidRun(refused error) error {
	return fail(FailSetup, fmt.Errorf("%w (%w)", refused, ErrRefusedMidRun))
}
