package plan

import (
	"iter"

	"github.com/bootbench/bootbench/boards"
)

// Sweep is the runs one job makes of its settings: every clock in turn,
// round after round (A B A B ...), so that drift over the session (a
// board warming up, a host growing busy) falls on every setting alike and
// does not look like a difference between them. run, ci and serve all
// take their runs from one.
//
//	s := plan.Sweep{Job: job, Clocks: []boards.MHz{680, 800}, Reps: boards.Reps{Count: 5}}
//	for j := range s.Runs(nil) { harness.Run(ctx, j, rig) }
type Sweep struct {
	// Job is what every run measures; Clock and Rep are each run's.
	Job Job
	// Clocks are the settings, in the order they run within a round;
	// none is the job's own clock.
	Clocks []boards.MHz
	// Reps is how many rounds: a count, or auto up to its maximum, as
	// long as enough (see Runs) says the figures need more.
	Reps boards.Reps
}

// Width is how many runs a round has: one per setting.
func (s Sweep) Width() int { return max(len(s.Clocks), 1) }

// At is the sweep's nth run, counted from 0: the job at the setting and
// repetition (from 1) of that place in the interleaving. It goes on past
// the rounds Reps asks for, for a board served for as long as it boots.
func (s Sweep) At(n int) Job {
	j := s.Job
	if len(s.Clocks) > 0 {
		j.Clock = s.Clocks[n%len(s.Clocks)]
	}
	j.Rep = n/s.Width() + 1
	return j
}

// Rounds is how many rounds Reps asks for at most: the count, or auto's
// maximum.
func (s Sweep) Rounds() int {
	if s.Reps.Auto {
		return s.Reps.Max
	}
	return s.Reps.Count
}

// Runs yields the sweep's runs in order. With Reps auto, after each full
// round it asks enough whether the runs so far pin the figures down, and
// ends when they do or at the maximum; a count runs all its rounds and
// never asks. The caller runs each job before asking for the next, so
// enough sees every run of the rounds it is asked about.
func (s Sweep) Runs(enough func(rounds int) bool) iter.Seq[Job] {
	return func(yield func(Job) bool) {
		w := s.Width()
		for n := 0; n < s.Rounds()*w; n++ {
			if round := n / w; n%w == 0 && round > 0 && s.Reps.Auto && enough != nil && enough(round) {
				return
			}
			if !yield(s.At(n)) {
				return
			}
		}
	}
}
