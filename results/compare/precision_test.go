package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// noisyRuns makes n ok runs of board b at clock: md5 scales with the
// clock, scattered by spread (a fraction, normal on the log scale), and
// sha256 with the clock too, scattered by quiet.
func noisyRuns(rng *rand.Rand, clock boards.MHz, n int, spread, quiet float64) []results.Run {
	var out []results.Run
	for range n {
		f := float64(clock) / 1000
		out = append(out, results.Run{Board: "b", ClockMHz: clock, Status: results.StatusOK, Bench: "speed",
			Metrics: []results.Metric{
				{Name: "md5@1024", Unit: "B/s", Value: 88e6 * f * math.Exp(rng.NormFloat64()*spread)},
				{Name: "sha256@1024", Unit: "B/s", Value: 11.6e6 * f * math.Exp(rng.NormFloat64()*quiet)},
			}})
	}
	return out
}

// sweepRuns are the runs of a sweep of clocks, n rounds of them.
func sweepRuns(seed uint64, clocks []boards.MHz, n int, spread, quiet float64) []results.Run {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []results.Run
	for range n {
		for _, c := range clocks {
			out = append(out, noisyRuns(rng, c, 1, spread, quiet)...)
		}
	}
	return out
}

// clocksOf are the clocks runs were asked at, failed ones' too: the
// settings of the sweep that made them.
func clocksOf(runs []results.Run) boards.Clocks {
	var cs boards.Clocks
	for _, r := range runs {
		if !slices.Contains(cs, r.ClockMHz) {
			cs = append(cs, r.ClockMHz)
		}
	}
	return cs
}

// TestConverge is the stopping rule of run --reps auto: the intervals it
// judges by, when they are within the target, and which are not.
func TestConverge(t *testing.T) {
	two := []boards.MHz{1000, 500}
	failed := results.Run{Board: "b", ClockMHz: 500, Status: results.StatusFailed}
	hot := sweepRuns(9, []boards.MHz{500}, 1, 0.3, 0.3)[0]
	hot.Status = results.StatusThrottled
	tests := []struct {
		name    string
		runs    []results.Run
		target  float64
		done    bool
		wide    []string // metric (of) not within, in order
		judged  int
		missing string
	}{
		{"steady clocks: within 1 % at 4 a side", sweepRuns(1, two, 4, 0.0005, 0.0005), 0.01, true, nil, 2, ""},
		{"3 a side: no interval yet", sweepRuns(1, two, 3, 0.0005, 0.0005), 0.01, false,
			[]string{"md5@1024 (1000 vs 500 MHz)", "sha256@1024 (1000 vs 500 MHz)"}, 2, ""},
		{"a noisy metric is named, a steady one is not", sweepRuns(2, two, 6, 0.05, 0.0005), 0.01, false,
			[]string{"md5@1024 (1000 vs 500 MHz)"}, 2, ""},
		{"a loose target takes the noise", sweepRuns(2, two, 12, 0.02, 0.0005), 0.5, true, nil, 2, ""},
		{"three clocks: each against the lowest", sweepRuns(3, []boards.MHz{1000, 500, 250}, 4, 0.0005, 0.0005), 0.01, true, nil, 4, ""},
		{"failed and throttled runs do not count", append(sweepRuns(4, two, 4, 0.0005, 0.0005)[1:], failed, hot), 0.01, false,
			[]string{"md5@1024 (1000 vs 500 MHz)", "sha256@1024 (1000 vs 500 MHz)"}, 2, ""},
		{"one setting: its medians, from 6 runs", sweepRuns(5, []boards.MHz{800}, 6, 0.0005, 0.0005), 0.01, true, nil, 2, ""},
		{"one setting of 5 runs: no interval yet", sweepRuns(5, []boards.MHz{800}, 5, 0.0005, 0.0005), 0.01, false,
			[]string{"md5@1024 (at 800 MHz)", "sha256@1024 (at 800 MHz)"}, 2, ""},
		{"no run gave a result", []results.Run{failed}, 0.01, false, nil, 0, "no run gave a result"},
		{"one clock's runs all failed: no medians of the other", append(sweepRuns(6, []boards.MHz{1000}, 6, 0.0005, 0.0005), failed), 0.01, false,
			nil, 0, "no run at 500 MHz gave a result yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Converge("b", clocksOf(tt.runs), tt.runs, tt.target)
			if err != nil {
				t.Fatal(err)
			}
			var wide []string
			for _, j := range c.Wide() {
				wide = append(wide, j.Metric+" ("+j.Of+")")
			}
			if c.Done() != tt.done || !slices.Equal(wide, tt.wide) || len(c.Judged) != tt.judged || c.Missing != tt.missing {
				t.Errorf("done %v, wide %q, %d judged, missing %q; want %v, %q, %d, %q\n%+v", c.Done(), wide, len(c.Judged), c.Missing, tt.done, tt.wide, tt.judged, tt.missing, c.Judged)
			}
			for _, j := range c.Judged {
				if j.Within(c.Target) != (j.MoreRuns == 0) {
					t.Errorf("%s: within %v but %d more runs estimated", j.Metric, j.Within(c.Target), j.MoreRuns)
				}
			}
		})
	}
}

// TestConvergeIsWhatCompareSays: the intervals the stopping rule judges by
// are the ones results compare prints for the same runs.
func TestConvergeIsWhatCompareSays(t *testing.T) {
	runs := sweepRuns(7, []boards.MHz{1000, 500}, 5, 0.01, 0.002)
	c, err := Converge("b", clocksOf(runs), runs, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := compareClocks(Options{By: ByClock, Board: "b", TargetCI: 0.01}, runs)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range cmp.Comparisons[0].Metrics {
		r, lo, hi := float64(*m.Ratio), float64(*m.CILow), float64(*m.CIHigh)
		if want := float64(*roundSig(math.Max(hi/r-1, 1-lo/r), 3)); c.Judged[i].HalfWidth != want || c.Judged[i].Metric != m.Name {
			t.Errorf("%s: judged ±%v, compare prints %v–%v about %v (±%v)", m.Name, c.Judged[i].HalfWidth, lo, hi, r, want)
		}
	}
}

// TestAutoMinimumsAreCompare's: the fewest rounds reps auto asks for
// (boards.MinAutoRounds) are where compare's intervals begin.
func TestAutoMinimumsAreCompares(t *testing.T) {
	for _, clocks := range [][]boards.MHz{{1000, 500}, {800}} {
		min := boards.MinAutoRounds(len(clocks))
		for _, n := range []int{min - 1, min} {
			c, err := Converge("b", clocks, sweepRuns(1, clocks, n, 0.0005, 0.0005), 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if got := !math.IsInf(c.Judged[0].HalfWidth, 1); got != (n == min) {
				t.Errorf("%d clock(s), %d rounds: interval %v, want one from %d rounds", len(clocks), n, got, min)
			}
		}
	}
}

// TestMoreRunsEstimate: the estimate of how many more runs a side bring
// an interval within a target is near what it takes: over many sweeps of
// a board of known spread, the intervals at the count estimated from a
// first look at 8 runs a side (its median over sweeps) are within the
// target about as often as not, and at half that count rarely. For a
// ratio of two clocks, and for one clock's median.
func TestMoreRunsEstimate(t *testing.T) {
	for _, tt := range []struct {
		clocks         []boards.MHz
		spread, target float64
	}{
		{[]boards.MHz{1000, 500}, 0.01, 0.01},
		{[]boards.MHz{1000, 500}, 0.02, 0.01},
		{[]boards.MHz{1000, 500}, 0.05, 0.02},
		{[]boards.MHz{800}, 0.02, 0.01},
	} {
		const sweeps = 40
		var est []int
		for seed := range uint64(sweeps) {
			c, err := Converge("b", tt.clocks, sweepRuns(seed, tt.clocks, 8, tt.spread, 0.0001), tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if m := c.Judged[0].MoreRuns; m > 0 {
				est = append(est, 8+m)
			}
		}
		if len(est) < sweeps/2 {
			t.Fatalf("%v spread ±%v: only %d of %d sweeps wanted more runs", tt.clocks, tt.spread, len(est), sweeps)
		}
		slices.Sort(est)
		n := est[len(est)/2]
		within := func(n int) (frac float64) {
			for seed := range uint64(sweeps) {
				c, _ := Converge("b", tt.clocks, sweepRuns(1000+seed, tt.clocks, n, tt.spread, 0.0001), tt.target)
				if c.Judged[0].Within(tt.target) {
					frac += 1.0 / sweeps
				}
			}
			return frac
		}
		at, half := within(n), within(max(4, n/2))
		t.Logf("%v spread ±%v, target ±%v: estimate %d runs a side; within at it %.0f %% of sweeps, at %d %.0f %%", tt.clocks, tt.spread, tt.target, n, at*100, max(4, n/2), half*100)
		if at < 0.35 || at > 0.9 || half > 0.2 {
			t.Errorf("%v spread ±%v, target ±%v: estimate %d a side; within at it %.0f %% of sweeps, at half %.0f %%", tt.clocks, tt.spread, tt.target, n, at*100, half*100)
		}
	}
}

// TestPrecisionLine: each comparison says how its intervals stand against
// the target, and how many more runs a side would do.
func TestPrecisionLine(t *testing.T) {
	three := func(n int) *int { return &n }
	for _, tt := range []struct {
		p    Precision
		want string
	}{
		{Precision{Target: 0.01, Metrics: 12, Widest: &Widest{"md5@16", 0.0000499}, MoreRuns: three(0)}, "every interval within ±1 % (widest ±0.0050 %: md5@16)"},
		{Precision{Target: 0.02, Metrics: 4, Widest: &Widest{"md5@1024", 0.0031}, MoreRuns: three(0)}, "every interval within ±2 % (widest ±0.31 %: md5@1024)"},
		{Precision{Target: 0.01, Metrics: 4, Wide: 2, Widest: &Widest{"sha256@1024", 0.041}, MoreRuns: three(3)},
			"2 of 4 intervals wider than ±1 % (widest ±4.10 %: sha256@1024); about 3 more runs a side would bring every one within ±1 %, from the spread seen"},
		{Precision{Target: 0.02, Metrics: 1, Wide: 1, MoreRuns: three(1)},
			"no intervals yet (they need 4 runs a side); about 1 more run a side would bring every one within ±2 %, from the spread seen"},
		{Precision{Target: 0.02, Metrics: 1, Wide: 1},
			"no intervals yet (they need 4 runs a side); how many more runs would bring them within ±2 % needs a side of 2 runs or more to estimate from"},
		{Precision{Target: 0.001, Metrics: 1, Wide: 1, Widest: &Widest{"md5@16", 0.2}, MoreRuns: three(maxMoreRuns + 1)}, "more than 1000 more runs a side"},
	} {
		if got := tt.p.line(); !strings.Contains(got, tt.want) {
			t.Errorf("line %q, want %q", got, tt.want)
		}
	}
}
