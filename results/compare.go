package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// What a comparison compares: one board's clock settings, or boards.
const (
	ByClock = "clock"
	ByBoard = "board"
)

// Statistics settings, as benchstat uses them.
const (
	// minStatRuns is the fewest runs a side for an interval and a p-value:
	// below 4 a side the Mann-Whitney U test cannot reach p < 0.05 however
	// different the runs are.
	minStatRuns = 4
	confidence  = 0.95
)

// Scaling efficiencies outside [sublinearBelow, superlinearAbove] are
// flagged: a metric that gains much less than the clock is bound by
// something else (memory, bus), and one that gains much more points at a
// different build or setup rather than the clock (an "overclock" that also
// changed the compiler).
const (
	sublinearBelow   = 0.8
	superlinearAbove = 1.25
)

// ErrNothingToCompare is returned (wrapped) by Compare when the store does
// not hold two settings to compare.
var ErrNothingToCompare = errors.New("nothing to compare")

// CompareOptions says what to compare.
type CompareOptions struct {
	By string // ByClock or ByBoard

	// Board is, by clock, the board whose clock settings are compared;
	// by board, the baseline board.
	Board string
	// Boards are, by board, the boards to compare, after Board if that is
	// set. The first board named is the baseline and the others are
	// candidates in the order named; with only one board named, every
	// other board with runs is a candidate, alphabetically.
	Boards []string
	// ClockMHz, by board, takes only runs at this clock setting. Without
	// it each board must have runs at a single setting, so a board is never
	// compared on a mix of clocks.
	ClockMHz int
}

// Setting is one side of a comparison. Board is empty when comparing one
// board's clocks (the board is Comparison.Board).
type Setting struct {
	Board    string `json:"board,omitempty"`
	ClockMHz int    `json:"clock_mhz"`
}

// Comparison is the `results compare` report: a baseline and candidates.
type Comparison struct {
	Board       string      `json:"board"` // by board: the baseline's
	By          string      `json:"by"`
	Baseline    Setting     `json:"baseline"`
	Comparisons []Candidate `json:"comparisons"`

	baselineRuns int
}

// Candidate is one setting measured against the baseline.
type Candidate struct {
	Candidate Setting `json:"candidate"`
	// ClockRatio is candidate clock / baseline clock; null by board or
	// when a clock is unknown (0).
	ClockRatio *number         `json:"clock_ratio"`
	Metrics    []MetricCompare `json:"metrics"`

	runs int
}

// MetricCompare is one metric's comparison. Baseline and Candidate are the
// medians of the runs' values.
type MetricCompare struct {
	Name       string `json:"name"`
	Unit       string `json:"unit"`
	Baseline   number `json:"baseline"`
	Candidate  number `json:"candidate"`
	NBaseline  int    `json:"n_baseline"`
	NCandidate int    `json:"n_candidate"`
	// Ratio is candidate / baseline (all current units are
	// higher-is-better); null when the baseline is 0.
	Ratio *number `json:"ratio"`
	// ScalingEfficiency is Ratio / ClockRatio: 1.0 is a metric that
	// scales exactly with the clock. Null when there is no clock ratio.
	ScalingEfficiency *number `json:"scaling_efficiency"`
	// CILow and CIHigh bound the ratio with 95 % confidence, PValue is the
	// Mann-Whitney U test's; all null with fewer than 4 runs a side.
	CILow  *number `json:"ci_low"`
	CIHigh *number `json:"ci_high"`
	PValue *number `json:"p_value"`
	// Verdict starts with "faster", "slower", "~" (no significant
	// difference) or "n<4" (too few runs for statistics), possibly
	// followed by ": " and why.
	Verdict string `json:"verdict"`
	// Scaling is "sublinear" or "superlinear" when ScalingEfficiency is
	// below 0.8 or above 1.25, else omitted.
	Scaling string `json:"scaling,omitempty"`
}

// Compare compares stored runs as o says. Only runs with status ok count.
func (s *Store) Compare(ctx context.Context, o CompareOptions) (*Comparison, error) {
	switch o.By {
	case ByClock:
		if o.Board == "" {
			return nil, errors.New("results: compare by clock: no board named")
		}
		runs, err := s.Runs(ctx, Filter{Board: o.Board, Status: StatusOK})
		if err != nil {
			return nil, err
		}
		return compareClocks(o.Board, runs)
	case ByBoard:
		runs, err := s.Runs(ctx, Filter{ClockMHz: o.ClockMHz, Status: StatusOK})
		if err != nil {
			return nil, err
		}
		return compareBoards(o, runs)
	}
	return nil, fmt.Errorf("results: compare by %q: want %q or %q", o.By, ByClock, ByBoard)
}

// compareClocks compares board's clock settings: the lowest known clock is
// the baseline; an unknown clock (0) sorts last, as it has no clock ratio.
func compareClocks(board string, runs []Run) (*Comparison, error) {
	groups := map[int][]Run{}
	for _, r := range runs {
		if r.Status == StatusOK && r.Board == board {
			groups[r.ClockMHz] = append(groups[r.ClockMHz], r)
		}
	}
	clocks := make([]int, 0, len(groups))
	for c := range groups {
		clocks = append(clocks, c)
	}
	sort.Slice(clocks, func(i, j int) bool {
		a, b := clocks[i], clocks[j]
		if (a == 0) != (b == 0) {
			return b == 0
		}
		return a < b
	})
	if len(clocks) < 2 {
		return nil, fmt.Errorf("results: compare %s by clock: %w: ok runs at %s", board, ErrNothingToCompare, settingsText(clocks))
	}
	c := &Comparison{Board: board, By: ByClock, Baseline: Setting{ClockMHz: clocks[0]}, baselineRuns: len(groups[clocks[0]])}
	for _, clk := range clocks[1:] {
		var cr *number
		if clocks[0] != 0 && clk != 0 {
			cr = round4(float64(clk) / float64(clocks[0]))
		}
		cand, err := compareSides(groups[clocks[0]], groups[clk], float64(clk)/float64(clocks[0]), cr != nil)
		if err != nil {
			return nil, fmt.Errorf("results: compare %s at %d MHz with %d MHz: %w", board, clk, clocks[0], err)
		}
		cand.Candidate, cand.ClockRatio = Setting{ClockMHz: clk}, cr
		c.Comparisons = append(c.Comparisons, *cand)
	}
	return c, nil
}

func settingsText(clocks []int) string {
	if len(clocks) == 0 {
		return "no setting"
	}
	var s []string
	for _, c := range clocks {
		s = append(s, clockText(c))
	}
	return "only " + strings.Join(s, ", ")
}

func clockText(mhz int) string {
	if mhz == 0 {
		return "the default clock"
	}
	return strconv.Itoa(mhz) + " MHz"
}

// compareBoards compares boards; see CompareOptions for which.
func compareBoards(o CompareOptions, runs []Run) (*Comparison, error) {
	var named []string
	for _, b := range append([]string{o.Board}, o.Boards...) {
		if b != "" && !slices.Contains(named, b) {
			named = append(named, b)
		}
	}
	if len(named) == 0 {
		return nil, errors.New("results: compare by board: no board named")
	}
	groups := map[string][]Run{}
	for _, r := range runs {
		if r.Status == StatusOK && (o.ClockMHz == 0 || r.ClockMHz == o.ClockMHz) {
			groups[r.Board] = append(groups[r.Board], r)
		}
	}
	boards := named
	if len(named) == 1 {
		var others []string
		for b := range groups {
			if b != named[0] {
				others = append(others, b)
			}
		}
		sort.Strings(others)
		boards = append(boards, others...)
	}
	at := "at any clock"
	if o.ClockMHz != 0 {
		at = "at " + clockText(o.ClockMHz)
	}
	if len(boards) < 2 {
		return nil, fmt.Errorf("results: compare %s by board: %w: no other board has ok runs %s", named[0], ErrNothingToCompare, at)
	}
	settings := make([]Setting, len(boards))
	for i, b := range boards {
		g := groups[b]
		if len(g) == 0 {
			return nil, fmt.Errorf("results: compare by board: %w: %s has no ok runs %s", ErrNothingToCompare, b, at)
		}
		var clocks []int
		for _, r := range g {
			if !slices.Contains(clocks, r.ClockMHz) {
				clocks = append(clocks, r.ClockMHz)
			}
		}
		if len(clocks) > 1 {
			slices.Sort(clocks)
			var s []string
			for _, c := range clocks {
				s = append(s, strconv.Itoa(c))
			}
			return nil, fmt.Errorf("results: compare by board: %s has runs at %s MHz; pick one clock setting", b, strings.Join(s, ", "))
		}
		settings[i] = Setting{Board: b, ClockMHz: clocks[0]}
	}
	c := &Comparison{Board: boards[0], By: ByBoard, Baseline: settings[0], baselineRuns: len(groups[boards[0]])}
	for i, b := range boards[1:] {
		cand, err := compareSides(groups[boards[0]], groups[b], 0, false)
		if err != nil {
			return nil, fmt.Errorf("results: compare %s with %s: %w", b, boards[0], err)
		}
		cand.Candidate = settings[i+1]
		c.Comparisons = append(c.Comparisons, *cand)
	}
	return c, nil
}

// compareSides compares every metric both sides measured.
func compareSides(base, cand []Run, clockRatio float64, haveClock bool) (*Candidate, error) {
	bv, bu, err := metricValues(base)
	if err != nil {
		return nil, err
	}
	cv, cu, err := metricValues(cand)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range bv {
		if _, ok := cv[name]; ok {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return MetricLess(names[i], names[j]) })
	out := &Candidate{Metrics: []MetricCompare{}, runs: len(cand)}
	for _, name := range names {
		if bu[name] != cu[name] {
			return nil, fmt.Errorf("metric %s is in %s on one side and %s on the other", name, bu[name], cu[name])
		}
		out.Metrics = append(out.Metrics, compareMetric(name, bu[name], bv[name], cv[name], clockRatio, haveClock))
	}
	return out, nil
}

// metricValues collects each metric's values over runs.
func metricValues(runs []Run) (map[string][]float64, map[string]string, error) {
	vals, units := map[string][]float64{}, map[string]string{}
	for _, r := range runs {
		for _, m := range r.Metrics {
			if u, ok := units[m.Name]; ok && u != m.Unit {
				return nil, nil, fmt.Errorf("metric %s is in %s in one run and %s in run %s", m.Name, u, m.Unit, r.ID)
			}
			units[m.Name] = m.Unit
			vals[m.Name] = append(vals[m.Name], m.Value)
		}
	}
	return vals, units, nil
}

func compareMetric(name, unit string, base, cand []float64, clockRatio float64, haveClock bool) MetricCompare {
	thr := &benchmath.DefaultThresholds // α = 0.05, as benchstat
	bs := benchmath.NewSample(slices.Clone(base), thr)
	cs := benchmath.NewSample(slices.Clone(cand), thr)
	bm := benchmath.AssumeNothing.Summary(bs, confidence).Center
	cm := benchmath.AssumeNothing.Summary(cs, confidence).Center
	mc := MetricCompare{
		Name: name, Unit: unit,
		Baseline: number(bm), Candidate: number(cm),
		NBaseline: len(base), NCandidate: len(cand),
	}
	var ratio float64
	if bm != 0 {
		ratio = cm / bm
		mc.Ratio = round4(ratio)
		if haveClock {
			eff := ratio / clockRatio
			mc.ScalingEfficiency = round4(eff)
			switch {
			case eff < sublinearBelow:
				mc.Scaling = "sublinear"
			case eff > superlinearAbove:
				mc.Scaling = "superlinear"
			}
		}
	}
	if len(base) < minStatRuns || len(cand) < minStatRuns {
		mc.Verdict = fmt.Sprintf("n<%d: %d vs %d runs, no statistics (they need %d a side)", minStatRuns, len(base), len(cand), minStatRuns)
		return mc
	}
	cmp := benchmath.AssumeNothing.Compare(bs, cs)
	mc.PValue = roundSig(cmp.P, 4)
	if lo, hi, ok := ratioInterval(bs.Values, cs.Values, cmp.Alpha); ok {
		mc.CILow, mc.CIHigh = round4(lo), round4(hi)
	}
	switch {
	case cmp.P > cmp.Alpha || cm == bm:
		mc.Verdict = "~"
	case cm > bm:
		mc.Verdict = "faster"
	default:
		mc.Verdict = "slower"
	}
	return mc
}

// ratioInterval returns the distribution-free confidence interval, at level
// 1-alpha or better, of the ratio candidate/baseline under the model that
// the candidate's values are the baseline's scaled by that ratio: the
// interval that inverts the Mann-Whitney U test (Moses; on the log scale,
// Hodges-Lehmann's), bounded by order statistics of the pairwise ratios
// c_j/b_i. It is used rather than combining the two sides' median intervals
// from benchmath because it is the interval of the ratio itself, exists
// from 4 runs a side where a 95 % median interval needs 6, and agrees with
// the U test's verdict. The critical value comes from the exact U
// distribution (go-moremath, which benchmath's U test is built on).
func ratioInterval(base, cand []float64, alpha float64) (lo, hi float64, ok bool) {
	n1, n2 := len(base), len(cand)
	ratios := make([]float64, 0, n1*n2)
	for _, b := range base {
		if b <= 0 {
			return 0, 0, false // ratios of non-positive figures mean nothing
		}
		for _, c := range cand {
			ratios = append(ratios, c/b)
		}
	}
	sort.Float64s(ratios)
	// k is the largest count with P(U < k) <= alpha/2: the interval drops
	// the k-1 smallest and k-1 largest pairwise ratios.
	d := stats.UDist{N1: n1, N2: n2}
	k := 0
	for k < len(ratios)/2 && d.CDF(float64(k)) <= alpha/2 {
		k++
	}
	if k == 0 {
		return 0, 0, false // too few runs for this level
	}
	return ratios[k-1], ratios[len(ratios)-k], true
}

func round4(v float64) *number {
	n := number(math.Round(v*1e4) / 1e4)
	return &n
}

// roundSig rounds to sig significant digits: p-values span orders of
// magnitude, and four decimals would turn 0.00016 into 0.0002.
func roundSig(v float64, sig int) *number {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	n := number(f)
	return &n
}

// WriteCompareJSON writes c in the `results compare --format json` shape,
// indented by two spaces.
func WriteCompareJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}

// WriteCompareText writes c for people: per candidate, a line saying what
// is compared with what, then a table of metrics.
func WriteCompareText(w io.Writer, c *Comparison) error {
	for i, cand := range c.Comparisons {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		var head string
		if c.By == ByClock {
			head = fmt.Sprintf("%s: %s (baseline, %s) vs %s (%s), clock ratio %s",
				c.Board, clockText(c.Baseline.ClockMHz), runsText(c.baselineRuns),
				clockText(cand.Candidate.ClockMHz), runsText(cand.runs), optText(cand.ClockRatio, 4))
		} else {
			head = fmt.Sprintf("%s at %s (baseline, %s) vs %s at %s (%s)",
				c.Baseline.Board, clockText(c.Baseline.ClockMHz), runsText(c.baselineRuns),
				cand.Candidate.Board, clockText(cand.Candidate.ClockMHz), runsText(cand.runs))
		}
		if _, err := fmt.Fprintln(w, head); err != nil {
			return err
		}
		if len(cand.Metrics) == 0 {
			if _, err := fmt.Fprintln(w, "no metric measured on both sides"); err != nil {
				return err
			}
			continue
		}
		if err := writeCompareTable(w, cand.Metrics, c.By == ByClock); err != nil {
			return err
		}
	}
	return nil
}

func writeCompareTable(w io.Writer, ms []MetricCompare, byClock bool) error {
	cols := []string{"METRIC", "UNIT", "BASELINE", "CANDIDATE", "N", "RATIO"}
	if byClock {
		cols = append(cols, "EFFICIENCY")
	}
	cols = append(cols, "95% INTERVAL", "P", "VERDICT")
	rows := [][]string{cols}
	for _, m := range ms {
		interval := "-"
		if m.CILow != nil && m.CIHigh != nil {
			interval = fmt.Sprintf("%.4f–%.4f", float64(*m.CILow), float64(*m.CIHigh))
		}
		row := []string{m.Name, m.Unit, formatValue(float64(m.Baseline)), formatValue(float64(m.Candidate)),
			fmt.Sprintf("%d+%d", m.NBaseline, m.NCandidate), optText(m.Ratio, 4)}
		if byClock {
			eff := optText(m.ScalingEfficiency, 4)
			if m.Scaling != "" {
				eff += " " + m.Scaling
			}
			row = append(row, eff)
		}
		p := "-"
		if m.PValue != nil {
			p = strconv.FormatFloat(float64(*m.PValue), 'g', 3, 64)
		}
		row = append(row, interval, p, m.Verdict)
		rows = append(rows, row)
	}
	// Numbers are right-aligned so digits line up; tabwriter's AlignRight
	// would right-align the names too, so pad by hand.
	numeric := map[int]bool{2: true, 3: true, 5: true}
	width := make([]int, len(cols))
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

func runsText(n int) string {
	if n == 1 {
		return "1 run"
	}
	return strconv.Itoa(n) + " runs"
}

func optText(n *number, decimals int) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatFloat(float64(*n), 'f', decimals, 64)
}
