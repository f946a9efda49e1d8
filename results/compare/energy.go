package compare

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bootbench/bootbench/results"
)

// EnergyCompare is one metric's power on both sides, where the runs had a
// meter: the medians, over the side's metered runs, of the test's mean
// watts and of its metric per joule. A side without a metered run has
// nulls.
type EnergyCompare struct {
	// Unit is the per-joule figures': "B/J" for a throughput, "op/J"
	// for operations.
	Unit              string  `json:"unit"`
	BaselineWatts     *number `json:"baseline_watts"`
	CandidateWatts    *number `json:"candidate_watts"`
	BaselinePerJoule  *number `json:"baseline_per_joule"`
	CandidatePerJoule *number `json:"candidate_per_joule"`
	NBaseline         int     `json:"n_baseline"`
	NCandidate        int     `json:"n_candidate"`
	// Ratio is candidate per joule / baseline per joule: above 1 the
	// candidate does more with a joule. Null unless both sides have one.
	Ratio *number `json:"ratio"`
}

// idleWatts is the median idle power of runs' metered runs, and how many
// had one.
func idleWatts(runs []results.Run) (*number, int) {
	var w []float64
	for _, r := range runs {
		if s, ok := r.Energy.Idle(); ok {
			w = append(w, s.MeanWatts)
		}
	}
	return optRound(optMedian(w), 4), len(w)
}

// compareEnergy is metric's EnergyCompare, nil when neither side's runs
// had a meter during its test.
func compareEnergy(metric string, base, cand []results.Run) *EnergyCompare {
	bw, bj, unit := spanFigures(metric, base)
	cw, cj, cunit := spanFigures(metric, cand)
	if len(bw) == 0 && len(cw) == 0 {
		return nil
	}
	e := &EnergyCompare{
		Unit:          unit,
		BaselineWatts: optRound(optMedian(bw), 4), CandidateWatts: optRound(optMedian(cw), 4),
		BaselinePerJoule: optRound(optMedian(bj), 6), CandidatePerJoule: optRound(optMedian(cj), 6),
		NBaseline: len(bw), NCandidate: len(cw),
	}
	if e.Unit == "" {
		e.Unit = cunit
	}
	if b, c := e.BaselinePerJoule, e.CandidatePerJoule; b != nil && c != nil && *b > 0 {
		e.Ratio = round4(float64(*c) / float64(*b))
	}
	return e
}

// spanFigures collects metric's test's mean watts and per-joule figures
// over runs.
func spanFigures(metric string, runs []results.Run) (watts, perJoule []float64, unit string) {
	for _, r := range runs {
		s, ok := r.Energy.Span(metric)
		if !ok {
			continue
		}
		watts, perJoule = append(watts, s.MeanWatts), append(perJoule, s.PerJoule)
		if s.Unit != "" {
			unit = s.Unit
		}
	}
	return watts, perJoule, unit
}

// optRound rounds n to sig significant digits: a meter's watts and what
// is derived from them hold no more.
func optRound(n *number, sig int) *number {
	if n == nil {
		return nil
	}
	return roundSig(float64(*n), sig)
}

// optMedian is median(v), or null for no values.
func optMedian(v []float64) *number {
	if len(v) == 0 {
		return nil
	}
	n := number(median(v))
	return &n
}

// writeEnergyTable writes, under a comparison's metrics, the power of
// those measured with a meter on either side: idle first, then per test
// its mean watts and its metric per joule.
func writeEnergyTable(w io.Writer, cand Candidate) error {
	var ms []MetricCompare
	for _, m := range cand.Metrics {
		if m.Energy != nil {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	b, k := cand.Baseline, cand.Candidate
	if _, err := fmt.Fprintf(w, "power before the benchmark: baseline %s; candidate %s\n", idleText(b), idleText(k)); err != nil {
		return err
	}
	rows := [][]string{{"METRIC", "BASELINE W", "CANDIDATE W", "BASELINE PER J", "CANDIDATE PER J", "UNIT", "N", "RATIO"}}
	for _, m := range ms {
		e := m.Energy
		rows = append(rows, []string{m.Name, optText(e.BaselineWatts, 2), optText(e.CandidateWatts, 2),
			optValue(e.BaselinePerJoule), optValue(e.CandidatePerJoule), e.Unit,
			fmt.Sprintf("%d+%d", e.NBaseline, e.NCandidate), optText(e.Ratio, 4)})
	}
	return writeAligned(w, rows, map[int]bool{1: true, 2: true, 3: true, 4: true})
}

// idleText is a side's idle power and how many of its runs had a meter.
func idleText(st Setting) string {
	if st.Metered == 0 || st.IdleWatts == nil {
		return "no meter"
	}
	return fmt.Sprintf("idle %s W (%d of %s metered)", strconv.FormatFloat(float64(*st.IdleWatts), 'f', 2, 64), st.Metered, runsText(st.Runs))
}

func optValue(n *number) string {
	if n == nil {
		return "-"
	}
	return results.FormatValue(float64(*n))
}

// writeAligned writes rows as a table, the numeric columns right-aligned
// by hand so digits line up (tabwriter's AlignRight would right-align the
// names too).
func writeAligned(w io.Writer, rows [][]string, numeric map[int]bool) error {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		for i, cell := range row {
			if numeric[i] {
				cell = strings.Repeat(" ", width[i]-len([]rune(cell))) + cell
			}
			sep := "\t"
			if i == len(row)-1 {
				sep = "\n"
			}
			fmt.Fprint(tw, cell+sep)
		}
	}
	return tw.Flush()
}
