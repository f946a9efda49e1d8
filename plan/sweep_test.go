package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// runsOf lists a sweep's runs as clock/rep, and the rounds enough was
// asked about.
func runsOf(s Sweep, enoughAt int) (runs string, asked []int) {
	var got []string
	for j := range s.Runs(func(rounds int) bool {
		asked = append(asked, rounds)
		return enoughAt > 0 && rounds >= enoughAt
	}) {
		got = append(got, fmt.Sprintf("%d/%d", j.Clock, j.Rep))
	}
	return strings.Join(got, " "), asked
}

func TestSweepRuns(t *testing.T) {
	auto := func(max int) boards.Reps { return boards.Reps{Auto: true, Target: 0.02, Max: max} }
	tests := []struct {
		name     string
		clocks   []boards.MHz
		reps     boards.Reps
		enoughAt int // the round from which enough says yes; 0 never
		want     string
		asked    []int
	}{
		{"one setting, a count", nil, boards.Reps{Count: 3}, 0, "0/1 0/2 0/3", nil},
		{"settings interleaved", []boards.MHz{1000, 500}, boards.Reps{Count: 2}, 0, "1000/1 500/1 1000/2 500/2", nil},
		{"a count never asks, even when enough would stop it", []boards.MHz{680, 800}, boards.Reps{Count: 2}, 1, "680/1 800/1 680/2 800/2", nil},
		{"auto asks after each round and stops when enough", []boards.MHz{1000, 500}, auto(20), 3,
			"1000/1 500/1 1000/2 500/2 1000/3 500/3", []int{1, 2, 3}},
		{"auto ends at its maximum, asking after every round but the last", []boards.MHz{1000, 500}, auto(4), 0,
			"1000/1 500/1 1000/2 500/2 1000/3 500/3 1000/4 500/4", []int{1, 2, 3}},
		{"auto of one setting", []boards.MHz{800}, auto(6), 2, "800/1 800/2", []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, asked := runsOf(Sweep{Job: Job{Benchmark: "speed"}, Clocks: tt.clocks, Reps: tt.reps}, tt.enoughAt)
			if got != tt.want || !slices.Equal(asked, tt.asked) {
				t.Errorf("runs %s, asked after rounds %v; want %s, %v", got, asked, tt.want, tt.asked)
			}
		})
	}
}

// TestSweepAt: a served board's nth boot is the sweep's nth run, past the
// rounds asked for too, and carries the job.
func TestSweepAt(t *testing.T) {
	s := Sweep{Job: Job{Benchmark: "openssl", Algs: []string{"md5"}}, Clocks: []boards.MHz{680, 800}, Reps: boards.Reps{Count: 1}}
	for n, want := range []string{"680/1", "800/1", "680/2", "800/2", "680/3"} {
		j := s.At(n)
		if got := fmt.Sprintf("%d/%d", j.Clock, j.Rep); got != want || j.Benchmark != "openssl" || j.Algs[0] != "md5" {
			t.Errorf("At(%d) = %s %s %v, want %s of openssl md5", n, got, j.Benchmark, j.Algs, want)
		}
	}
	if j := (Sweep{Job: Job{Clock: 400}}).At(4); j.Clock != 400 || j.Rep != 5 {
		t.Errorf("no settings: At(4) = %d/%d, want the job's clock 400, rep 5", j.Clock, j.Rep)
	}
}

// TestSweepStopsWhenTheCallerDoes: a caller that stops mid-round (an
// interruption) gets no further run and is not asked about the round.
func TestSweepStopsWhenTheCallerDoes(t *testing.T) {
	s := Sweep{Clocks: []boards.MHz{1000, 500}, Reps: boards.Reps{Auto: true, Target: 0.02, Max: 20}}
	n, asked := 0, 0
	for range s.Runs(func(int) bool { asked++; return false }) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 || asked != 1 {
		t.Errorf("%d runs, asked %d times; want 3 runs, asked once (after round 1)", n, asked)
	}
}
