package main

import (
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
)

// servedRun is a stored run of a served board pc1 at clock, its one
// figure scaled by f.
func servedRun(clock boards.MHz, f float64) *results.Run {
	return &results.Run{Board: "pc1", ClockMHz: clock, Status: results.StatusOK, Bench: "speed",
		Metrics: []results.Metric{{Name: "md5@1024", Unit: "B/s", Value: 88e6 * float64(clock) / 1000 * f}}}
}

// TestServedRepsAuto: a served board whose inventory job says reps: auto
// is followed as run follows its sweep: once a round brings every
// interval within the target, serve says so once; a board that never gets
// there is said to have reached max_reps, naming how far off it is. A
// board with a count of reps is never spoken of.
func TestServedRepsAuto(t *testing.T) {
	auto := boards.Reps{Auto: true, Target: 0.01, Max: 6}
	served := func(reps boards.Reps) harness.Served {
		return harness.Served{Board: boards.Board{Name: "pc1"}, Job: boards.Job{Bench: "speed", Clocks: []boards.MHz{1000, 500}, Reps: reps}}
	}
	tests := []struct {
		name    string
		reps    boards.Reps
		scatter []float64
		said    map[int]string // run (from 1) → what is said after it
	}{
		{"steady: said after the 4th round, once", auto, []float64{1, 1.0002, 0.9998, 1.0001},
			map[int]string{8: "pc1: reps auto: every interval within ±1 % after 4 runs of each setting (widest ±"}},
		{"noisy: said at max_reps", auto, []float64{1.05, 0.95, 1.02, 0.97, 1.04, 0.96},
			map[int]string{12: "pc1: reps auto: at its most, 6 runs of each setting (max_reps 6), 1 of 1 intervals wider than ±1 % (widest ±"}},
		{"a count: nothing said", boards.Reps{Count: 3}, []float64{1.05, 0.95}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newServedAutos(plan.Job{}, []harness.Served{served(tt.reps)})
			for n := 1; n <= 16; n++ {
				clock := []boards.MHz{1000, 500}[(n-1)%2]
				got := a.served(servedRun(clock, tt.scatter[(n-1)/2%len(tt.scatter)]))
				if want := tt.said[n]; (want == "") != (got == "") || !strings.HasPrefix(got, want) {
					t.Errorf("after run %d said %q, want %q", n, got, want)
				}
			}
		})
	}
	if a := newServedAutos(plan.Job{}, nil); a.served(servedRun(1000, 1)) != "" || a.served(nil) != "" {
		t.Error("a board nobody follows was spoken of")
	}
}
