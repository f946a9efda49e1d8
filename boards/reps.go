package boards

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Reps is how many times a job runs each of its settings: a count
// (--reps 5, reps: 5), or auto (--reps auto, reps: auto): round after
// round until every figure the runs are judged on is known to within
// Target, or Max rounds have run.
type Reps struct {
	Count int  // a count's rounds; 0 with Auto
	Auto  bool // as many rounds as the figures need
	// Target is, with Auto, how close each 95 % interval must come: its
	// half-width as a fraction of its figure (0.02: ± 2 %).
	Target float64
	// Max is, with Auto, the most rounds.
	Max int
}

// Auto's defaults: an interval of ± 2 % tells a clock step of a few
// percent from noise, and 20 rounds is where benchstat's advice (10 or
// more) is met twice over while a board's afternoon is not all spent.
const (
	DefaultTargetCI = 0.02
	DefaultMaxReps  = 20
)

// AutoReps is auto with its defaults.
func AutoReps() Reps { return Reps{Auto: true, Target: DefaultTargetCI, Max: DefaultMaxReps} }

// ParseReps reads a repetition count as a user gives it: a whole number
// from 1, or "auto" (with the defaults' target and maximum).
func ParseReps(s string) (Reps, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "auto") {
		return AutoReps(), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return Reps{}, fmt.Errorf("%q is neither a count nor auto", s)
	}
	if n < 1 {
		return Reps{}, fmt.Errorf("%d: a count is at least 1 (or say auto)", n)
	}
	return Reps{Count: n}, nil
}

// String is the reps as given: "5", "auto".
func (r Reps) String() string {
	if r.Auto {
		return "auto"
	}
	return strconv.Itoa(r.Count)
}

// Check refuses an auto whose target or maximum cannot work: a target
// that is no fraction, or fewer rounds than an interval needs (minRounds:
// 4 for a ratio of two settings, 6 for one setting's median).
func (r Reps) Check(minRounds int) error {
	switch {
	case !r.Auto:
		return nil
	case !(r.Target > 0 && r.Target < 1):
		return fmt.Errorf("target interval %s: give a percentage more than 0 and under 100, like 2%%", Percent(r.Target))
	case r.Max < minRounds:
		return fmt.Errorf("at most %d runs a setting: a 95 %% interval needs %d", r.Max, minRounds)
	}
	return nil
}

// MinAutoRounds is the fewest rounds after which a job of that many clock
// settings has its intervals: the ratio between two settings has one from
// 4 runs a side (the Mann-Whitney U test's, below which no difference is
// significant), one setting's median from 6 (its order statistics). They
// are results compare's, which a test of its own holds them to.
func MinAutoRounds(clocks int) int {
	if clocks > 1 {
		return 4
	}
	return 6
}

// ParsePercent reads a percentage as a user gives it, "2%", "2 %" or
// "2", as a fraction (0.02). It refuses what is no number, negative or
// infinite; the caller bounds it further.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a percentage (like 2%%)", s)
	}
	return v / 100, nil
}

// Percent is a fraction as a percentage, as few decimals as it needs:
// "2 %", "0.5 %", "12.25 %".
func Percent(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(f*100, 'f', 2, 64), "0"), ".") + " %"
}
