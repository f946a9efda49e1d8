// Package gate decides whether a board's new runs regressed against a
// baseline, the way a CI job on attached hardware needs it decided: per
// metric, slower than the baseline by more than the allowed fraction, with
// 95 % confidence: the interval of the ratio (the one results compare
// prints, from 4 runs a side) lies wholly beyond the allowed fraction. An
// interval that straddles it is undecided: neither a pass nor a failure,
// reported apart, so a gate does not fail on noise nor pass on it
// silently. With fewer than 4 runs a side the fraction alone decides and
// the report says so. It writes the verdict as JUnit XML (one testsuite
// per board, one testcase per metric) and as a Markdown summary for a job
// page, each saying at how many runs every metric was decided.
//
//	rep, err := gate.Judge(baseline, candidate, gate.Options{MaxRegression: 0.03})
//	rep.WriteJUnit(f)
//	if rep.Regressed() { os.Exit(1) }
package gate

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/compare"
)

// Alpha is the significance a regression needs, as benchstat's.
const Alpha = 0.05

// Options say what counts as a regression.
type Options struct {
	// MaxRegression is how much slower than the baseline a metric may be,
	// as a fraction (0.03 = 3 %).
	MaxRegression float64
	// Metrics are globs (path.Match) selecting the metrics judged; none
	// means every metric both sides measured.
	Metrics []string
	// BaselineName says where the baseline came from, for the reports.
	BaselineName string
}

// Verdict is one metric's judgement.
type Verdict struct {
	compare.MetricCompare
	Regressed bool
	// Undecided is a ratio whose interval straddles the allowed fraction:
	// more runs would tell. It does not fail the job.
	Undecided bool
	// DecidedAt is how many new runs decided the verdict: the fewest
	// from which every judgement, with each run added, came out as this
	// one. 0 for an undecided metric, and for a verdict without an
	// interval (fewer than 4 runs a side).
	DecidedAt int
	// Why says what decided: "49.8 % slower, more than 3 % (95 %
	// interval 0.4990–0.5030, p=0.0286)", or why not.
	Why string
}

// Report is the judgement of one board's runs.
type Report struct {
	Board     string
	Options   Options
	Baseline  Side
	Candidate Side
	Verdicts  []Verdict
	// Failed are candidate runs that gave no result: a CI job must fail
	// on them as on a regression.
	Failed []results.Run
	// NoStatistics is set when either side has fewer than 4 runs: the
	// verdicts then rest on the fraction alone, without a p-value.
	NoStatistics bool
}

// Side describes one side's runs.
type Side struct {
	Runs     int
	ClockMHz boards.MHz
	Bench    string
	Tool     string // tool and version
}

// ErrNoBaseline is a baseline without runs to compare with.
var ErrNoBaseline = errors.New("the baseline has no ok runs")

// Judge compares candidate runs with baseline runs of one board. Only ok
// runs are compared; failed candidates are kept in the report. Both sides
// must be one benchmark and tool version: comparing the built-in suite
// with openssl would judge nothing.
func Judge(baseline, candidate []results.Run, o Options) (*Report, error) {
	base, cand, failed := okRuns(baseline), okRuns(candidate), notOK(candidate)
	if len(base) == 0 {
		return nil, ErrNoBaseline
	}
	rep := &Report{Options: o, Failed: failed, Baseline: sideOf(base), Board: base[0].Board}
	if err := oneBench(base, "baseline"); err != nil {
		return nil, err
	}
	if len(cand) == 0 {
		if len(failed) > 0 {
			// No result, but the setting the runs were asked for
			// still is theirs: the report names it, not a default.
			f := failed[0]
			rep.Board, rep.Candidate = f.Board, Side{ClockMHz: f.ClockMHz, Bench: f.Bench}
		}
		return rep, nil
	}
	rep.Candidate = sideOf(cand)
	rep.Board = cand[0].Board
	if err := oneBench(cand, "candidate"); err != nil {
		return nil, err
	}
	if rep.Baseline.Bench != rep.Candidate.Bench || rep.Baseline.Tool != rep.Candidate.Tool {
		return nil, fmt.Errorf("the baseline ran %s (%s) and these runs %s (%s): compare like with like", rep.Baseline.Bench, rep.Baseline.Tool, rep.Candidate.Bench, rep.Candidate.Tool)
	}
	ms, err := compare.Runs(base, cand)
	if err != nil {
		return nil, err
	}
	if ms, err = selectMetrics(ms, o.Metrics); err != nil {
		return nil, err
	}
	rep.NoStatistics = len(base) < compare.MinStatRuns || len(cand) < compare.MinStatRuns
	for _, m := range ms {
		rep.Verdicts = append(rep.Verdicts, judge(m, o.MaxRegression))
	}
	if err := rep.decidedAt(base, cand); err != nil {
		return nil, err
	}
	return rep, nil
}

// judge decides one metric. Ratio is candidate / baseline for metrics
// where more is better, which every bootbench metric is. With an interval
// it decides: regressed when the interval lies wholly below 1 −
// maxRegression, within when wholly at or above it, else undecided.
// Without one (fewer than 4 runs a side) the ratio alone decides.
func judge(m compare.MetricCompare, maxRegression float64) Verdict {
	v := Verdict{MetricCompare: m}
	ratio, ok := m.Ratio.Float()
	if !ok {
		v.Why = "no ratio (the baseline is 0)"
		return v
	}
	bound := 1 - maxRegression
	lo, haveLo := m.CILow.Float()
	hi, haveHi := m.CIHigh.Float()
	p, haveP := m.PValue.Float()
	interval := fmt.Sprintf("95 %% interval %.4f–%.4f", lo, hi)
	switch {
	case haveLo && haveHi && hi < bound:
		v.Regressed = true
		v.Why = fmt.Sprintf("%s, more than %s (%s, p=%.3g)", change(ratio), pct(maxRegression), interval, p)
	case haveLo && haveHi && lo >= bound:
		v.Why = fmt.Sprintf("within %s (%s; %s)", pct(maxRegression), change(ratio), interval)
	case haveLo && haveHi:
		v.Undecided = true
		v.Why = fmt.Sprintf("undecided: %s, and the %s straddles %s slower (%.4f)", change(ratio), interval, pct(maxRegression), bound)
	case 1-ratio <= maxRegression:
		v.Why = fmt.Sprintf("within %s (%s)", pct(maxRegression), change(ratio))
	case !haveP:
		v.Regressed = true
		v.Why = fmt.Sprintf("%s, more than %s (no p-value: %d vs %d runs, statistics need %d a side)", change(ratio), pct(maxRegression), m.NBaseline, m.NCandidate, compare.MinStatRuns)
	case p < Alpha:
		// Runs enough for a p-value, and still no interval: ratios of
		// figures of 0 or less have none. The p-value decides.
		v.Regressed = true
		v.Why = fmt.Sprintf("%s, more than %s (p=%.3g)", change(ratio), pct(maxRegression), p)
	default:
		v.Why = fmt.Sprintf("%s but not significant (p=%.3g)", change(ratio), p)
	}
	return v
}

// decided reports whether v was decided by its interval.
func (v Verdict) decided() bool {
	_, ok := v.CILow.Float()
	return ok && !v.Undecided
}

// decidedAt finds, for each metric its interval decided, how many of the
// new runs decided it: judging the runs as they came, one more at a time,
// the fewest from which every judgement came out as the last. It is what
// a job page needs to tell a metric that settled at once from one that
// only just did.
func (r *Report) decidedAt(base, cand []results.Run) error {
	open := map[string]bool{}
	for i, v := range r.Verdicts {
		if v.decided() {
			r.Verdicts[i].DecidedAt = len(cand)
			open[v.Name] = true
		}
	}
	for n := len(cand) - 1; n >= compare.MinStatRuns && len(open) > 0; n-- {
		ms, err := compare.Runs(base, cand[:n])
		if err != nil {
			return err
		}
		still := map[string]bool{}
		for _, m := range ms {
			i := slices.IndexFunc(r.Verdicts, func(v Verdict) bool { return v.Name == m.Name })
			if i < 0 || !open[m.Name] {
				continue
			}
			if then := judge(m, r.Options.MaxRegression); then.decided() && then.Regressed == r.Verdicts[i].Regressed {
				r.Verdicts[i].DecidedAt = n
				still[m.Name] = true
			}
		}
		open = still
	}
	for i, v := range r.Verdicts {
		if v.DecidedAt > 0 {
			r.Verdicts[i].Why += fmt.Sprintf(", decided at %s", runsText(v.DecidedAt))
		}
	}
	return nil
}

// Undecided are the verdicts whose interval straddles the allowed
// fraction.
func (r *Report) Undecided() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Undecided {
			out = append(out, v)
		}
	}
	return out
}

// Settled reports whether more runs would change nothing worth a boot:
// a run failed (the job fails whatever the metrics say), or every metric
// is decided, or undecided with an interval already within target (a
// ratio that close to the allowed fraction takes many more runs to fall
// on one side). ci --reps auto runs until it is.
func (r *Report) Settled(target float64) bool {
	if len(r.Failed) > 0 {
		return true
	}
	if r.NoStatistics || r.Candidate.Runs == 0 {
		return false
	}
	for _, v := range r.Undecided() {
		if hw, ok := v.HalfWidth.Float(); !ok || hw > target {
			return false
		}
	}
	return true
}

func runsText(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// Regressed reports whether the CI job should fail: a metric regressed or
// a run failed.
func (r *Report) Regressed() bool {
	return len(r.Failed) > 0 || len(r.Regressions()) > 0 || r.Candidate.Runs == 0
}

// Regressions are the verdicts that failed.
func (r *Report) Regressions() []Verdict {
	var out []Verdict
	for _, v := range r.Verdicts {
		if v.Regressed {
			out = append(out, v)
		}
	}
	return out
}

func selectMetrics(ms []compare.MetricCompare, globs []string) ([]compare.MetricCompare, error) {
	if len(globs) == 0 {
		return ms, nil
	}
	var out []compare.MetricCompare
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("--metrics %q: %w", g, err)
		}
		n := 0
		for _, m := range ms {
			if ok, _ := path.Match(g, m.Name); ok {
				n++
				if !slices.ContainsFunc(out, func(x compare.MetricCompare) bool { return x.Name == m.Name }) {
					out = append(out, m)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("--metrics %q matches no metric both sides measured (%s)", g, names(ms))
		}
	}
	slices.SortFunc(out, func(a, b compare.MetricCompare) int {
		if results.MetricLess(a.Name, b.Name) {
			return -1
		}
		return 1
	})
	return out, nil
}

func names(ms []compare.MetricCompare) string {
	var n []string
	for _, m := range ms {
		n = append(n, m.Name)
	}
	if len(n) > 6 {
		n = append(n[:6], "…")
	}
	return strings.Join(n, ", ")
}

func okRuns(runs []results.Run) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Status == results.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

func notOK(runs []results.Run) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Status != results.StatusOK {
			out = append(out, r)
		}
	}
	return out
}

func sideOf(runs []results.Run) Side {
	r := runs[0]
	return Side{Runs: len(runs), ClockMHz: r.ClockMHz, Bench: r.Bench, Tool: strings.TrimSpace(r.Tool + " " + r.ToolVersion)}
}

// oneBench refuses a side that pools boards, clocks or benchmarks.
func oneBench(runs []results.Run, what string) error {
	first := runs[0]
	for _, r := range runs[1:] {
		switch {
		case r.Board != first.Board:
			return fmt.Errorf("the %s holds boards %s and %s: name one (board=NAME)", what, first.Board, r.Board)
		case r.ClockMHz != first.ClockMHz:
			return fmt.Errorf("the %s holds clocks %s: name one (clock=MHZ)", what, boards.Clocks{first.ClockMHz, r.ClockMHz}.Joined(" and "))
		case r.Bench != first.Bench || r.Tool != first.Tool || r.ToolVersion != first.ToolVersion:
			return fmt.Errorf("the %s holds %s (%s %s) and %s (%s %s) runs: name one (bench=NAME)", what, first.Bench, first.Tool, first.ToolVersion, r.Bench, r.Tool, r.ToolVersion)
		}
	}
	return nil
}

func pct(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f*100), "0"), ".") + " %"
}

func change(ratio float64) string {
	if ratio < 1 {
		return fmt.Sprintf("%.1f %% slower", (1-ratio)*100)
	}
	return fmt.Sprintf("%.1f %% faster", (ratio-1)*100)
}
