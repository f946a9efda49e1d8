package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// How precise a comparison is: each interval's half-width, relative to its
// figure (the larger side, as benchstat's "± x %"), against a target, and
// how many more runs a side would bring it there. The estimate is from the
// spread the runs show: the interval's bounds are order statistics of the
// pairwise ratios (ratioInterval), each of which scatters about the true
// ratio with √2 times the runs' own spread, so the bounds of n1 and n2
// runs lie near that scatter's quantiles at the U test's critical rank
// (ratioWidth); the interval seen scales that to these runs. It is an
// estimate, and says so; `run --reps auto` judges by the intervals
// themselves.

// maxMoreRuns bounds the estimate: beyond it the answer is "more than".
const maxMoreRuns = 1000

// offCentre is how far, typically, a ratio of medians sits from the middle
// of its interval, per unit of spread and of √(1/n1+1/n2) (ratioWidth).
const offCentre = 0.37

// Precision is how close a comparison's intervals are to a target.
type Precision struct {
	Target float64 `json:"target"`
	// Wide is how many metrics have an interval wider than Target, or
	// none yet; Metrics how many are judged (those with positive figures,
	// whose ratios have intervals at all).
	Wide    int `json:"wide"`
	Metrics int `json:"metrics"`
	// Widest is the widest interval; null when no metric has one yet.
	Widest *Widest `json:"widest"`
	// MoreRuns is how many more runs a side would bring every interval
	// within Target (0: they are), estimated from the spread seen; null
	// when a side has a single run, whose spread cannot be seen.
	MoreRuns *int `json:"more_runs_a_side"`
}

// Widest names the widest interval of a comparison.
type Widest struct {
	Metric    string `json:"metric"`
	HalfWidth number `json:"half_width"`
}

// halfWidth is an interval's half-width relative to its center, the
// larger side: benchstat's "± x %".
func halfWidth(center, lo, hi float64) float64 {
	return math.Max(hi/center-1, 1-lo/center)
}

// logSpread is the runs' spread on the log scale (for small spreads, the
// relative one): the standard deviation of each side's log values about
// that side's mean, pooled over the sides. ok is false when no side has
// two values, or a value is 0 or less.
func logSpread(sides ...[]float64) (sigma float64, ok bool) {
	var ss float64
	df := 0
	for _, vs := range sides {
		if len(vs) < 2 {
			continue
		}
		logs := make([]float64, len(vs))
		mean := 0.0
		for i, v := range vs {
			if v <= 0 {
				return 0, false
			}
			logs[i] = math.Log(v)
			mean += logs[i] / float64(len(vs))
		}
		for _, l := range logs {
			ss += (l - mean) * (l - mean)
		}
		df += len(vs) - 1
	}
	if df == 0 {
		return 0, false
	}
	return math.Sqrt(ss / float64(df)), true
}

// ratioWidth is the log half-width of the ratio's interval with n1 and n2
// runs, per unit of the runs' log spread, as Precision measures it: from
// the ratio of medians to the interval's farther bound. The bounds are
// the k-th smallest and largest of the n1·n2 pairwise ratios, which lie
// near the quantiles k/(n1·n2+1) of the pairwise log ratios' normal
// scatter (sd √2); and the ratio of medians sits off the bounds' middle
// (it scatters more than the Hodges-Lehmann estimate they are centred on),
// by a typical 0.37·√(1/n1+1/n2) as simulated sweeps of 4 to 80 runs a
// side measure it (TestMoreRunsEstimate holds the whole to them). +Inf
// where there is no interval.
func ratioWidth(n1, n2 int) float64 {
	k := uCritical(n1, n2, 1-confidence)
	if k == 0 {
		return math.Inf(1)
	}
	half := math.Sqrt2 * -stats.StdNormal.InvCDF(float64(k)/float64(n1*n2+1))
	return half + offCentre*math.Sqrt(1/float64(n1)+1/float64(n2))
}

// medianWidth is ratioWidth for one setting's median of n runs: its
// interval's bounds are the j-th smallest and largest runs, j the largest
// with P(Binomial(n, ½) < j) ≤ α/2 (as benchmath finds them), and the
// median sits off their middle by some √(1/(3n)).
func medianWidth(n int) float64 {
	j, below := 0, 0.0
	lg, _ := math.Lgamma(float64(n + 1))
	for ; j < n/2; j++ {
		// P(X = j) = C(n, j) / 2^n, through logarithms for large n.
		lj, _ := math.Lgamma(float64(j + 1))
		lr, _ := math.Lgamma(float64(n - j + 1))
		pj := math.Exp(lg - lj - lr - float64(n)*math.Ln2)
		if below+pj > (1-confidence)/2 {
			break
		}
		below += pj
	}
	if j == 0 {
		return math.Inf(1)
	}
	return -stats.StdNormal.InvCDF(float64(j)/float64(n+1)) + math.Sqrt(1/(3*float64(n)))
}

// moreRuns estimates how many more runs a side bring an interval of
// half-width hw (+Inf for none yet) within target; width(m) is the log
// half-width with m more runs per unit of spread (ratioWidth,
// medianWidth), and sigma the runs' spread (logSpread). ok is false when
// the spread is unseen (no side of 2 runs). It is 0 when the interval is
// within already, and maxMoreRuns+1 for more than maxMoreRuns.
func moreRuns(hw, target, sigma float64, sigmaOK bool, width func(m int) float64) (int, bool) {
	switch {
	case hw <= target:
		return 0, true
	case !sigmaOK:
		return 0, false
	}
	// m = 0 is the interval as it is, wider than the target whatever the
	// model says of it.
	return sort.Search(maxMoreRuns+1, func(m int) bool { return m > 0 && math.Expm1(sigma*width(m)) <= target }), true
}

// precisionOf sets a metric's half-width and more runs from its sides'
// values.
func (mc *MetricCompare) precisionOf(base, cand []float64, target float64) {
	hw := math.Inf(1)
	if r, ok := mc.Ratio.Float(); ok && mc.CILow != nil && mc.CIHigh != nil && r > 0 {
		mc.HalfWidth = roundSig(halfWidth(r, float64(*mc.CILow), float64(*mc.CIHigh)), 3)
		hw = float64(*mc.HalfWidth) // as it is printed, so it is judged
	}
	mc.sigma, mc.sigmaOK = logSpread(base, cand)
	n1, n2 := len(base), len(cand)
	if m, ok := moreRuns(hw, target, mc.sigma, mc.sigmaOK, func(m int) float64 { return ratioWidth(n1+m, n2+m) }); ok {
		mc.MoreRuns = &m
	}
}

// judged reports whether a metric's ratio can have an interval at all:
// ratios of figures of 0 or less mean nothing.
func (mc MetricCompare) judged() bool {
	return mc.Baseline > 0 && mc.Candidate > 0 && (mc.NBaseline < minStatRuns || mc.NCandidate < minStatRuns || mc.CILow != nil)
}

// precision sums up a comparison's metrics against target.
func precision(ms []MetricCompare, target float64) Precision {
	p := Precision{Target: target}
	most, known := 0, true
	for _, m := range ms {
		if !m.judged() {
			continue
		}
		p.Metrics++
		if m.HalfWidth == nil || float64(*m.HalfWidth) > target {
			p.Wide++
		}
		if m.HalfWidth != nil && (p.Widest == nil || *m.HalfWidth > p.Widest.HalfWidth) {
			p.Widest = &Widest{Metric: m.Name, HalfWidth: *m.HalfWidth}
		}
		if m.MoreRuns == nil {
			known = false
		} else {
			most = max(most, *m.MoreRuns)
		}
	}
	if known && p.Metrics > 0 {
		p.MoreRuns = &most
	}
	return p
}

// line says the precision in one line, under a comparison's table.
func (p Precision) line() string {
	target := "±" + boards.Percent(p.Target)
	if p.Metrics == 0 {
		return ""
	}
	if p.Wide == 0 {
		return fmt.Sprintf("every interval within %s (widest ±%s: %s)", target, HalfWidthText(float64(p.Widest.HalfWidth)), p.Widest.Metric)
	}
	var s string
	if p.Widest == nil {
		s = fmt.Sprintf("no intervals yet (they need %d runs a side)", minStatRuns)
	} else {
		s = fmt.Sprintf("%d of %d intervals wider than %s (widest ±%s: %s)", p.Wide, p.Metrics, target, HalfWidthText(float64(p.Widest.HalfWidth)), p.Widest.Metric)
	}
	if p.MoreRuns == nil {
		return s + "; how many more runs would bring them within " + target + " needs a side of 2 runs or more to estimate from"
	}
	return fmt.Sprintf("%s; %s a side would bring every one within %s, from the spread seen", s, moreText(*p.MoreRuns), target)
}

// moreText says an estimate of more runs: "about 3 more runs".
func moreText(m int) string {
	switch {
	case m > maxMoreRuns:
		return fmt.Sprintf("more than %d more runs", maxMoreRuns)
	case m == 1:
		return "about 1 more run"
	}
	return fmt.Sprintf("about %d more runs", m)
}

// HalfWidthText is an interval's half-width, a fraction, as a percentage
// to two decimals, so a width a hair over its target never reads as equal
// to it ("1.04 %"), and to two significant digits below 0.1 %, so a tight
// one does not read as none ("0.0050 %").
func HalfWidthText(f float64) string {
	pct := f * 100
	decimals := 2
	if pct > 0 && pct < 0.1 {
		decimals = int(-math.Floor(math.Log10(pct))) + 1
	}
	return strconv.FormatFloat(pct, 'f', decimals, 64) + " %"
}

// Convergence is where the runs of one sweep stand against a target
// interval: every figure they are judged on, with its interval's
// half-width. With several clock settings those are each metric's ratios
// of every clock to the lowest, as `results compare --by clock` prints
// them; with one, each metric's median there. run --reps auto goes on
// until Done.
type Convergence struct {
	Target float64
	Judged []Judged
	// Missing says why nothing could be judged yet ("" when something is).
	Missing string
}

// Judged is one figure a sweep is judged on.
type Judged struct {
	Metric string
	// Of is what the figure is: "500 vs 1000 MHz" (a ratio) or "at
	// 1000 MHz" (a median).
	Of string
	// Runs is how many runs the figure rests on, on its side with fewest.
	Runs int
	// HalfWidth is its interval's, relative; +Inf while it has none.
	HalfWidth float64
	// Spread is the runs' own (log) spread, as a standard deviation;
	// NaN when it cannot be seen.
	Spread float64
	// MoreRuns estimates how many more runs a side would bring it
	// within the target (0: it is); -1 when the spread cannot be seen.
	MoreRuns int
}

// Within reports whether the figure's interval is within target.
func (j Judged) Within(target float64) bool { return j.HalfWidth <= target }

// Done reports whether every judged figure's interval is within the
// target.
func (c Convergence) Done() bool { return len(c.Judged) > 0 && len(c.Wide()) == 0 }

// Wide are the figures whose interval is wider than the target, or that
// have none yet.
func (c Convergence) Wide() []Judged {
	var out []Judged
	for _, j := range c.Judged {
		if !j.Within(c.Target) {
			out = append(out, j)
		}
	}
	return out
}

// Widest is the judged figure with the widest interval.
func (c Convergence) Widest() (Judged, bool) {
	if len(c.Judged) == 0 {
		return Judged{}, false
	}
	w := c.Judged[0]
	for _, j := range c.Judged[1:] {
		if j.HalfWidth > w.HalfWidth {
			w = j
		}
	}
	return w, true
}

// Converge judges the runs of one board's sweep of settings (its clocks,
// none for the board's default) against target: only ok runs count, as in
// results compare. The runs are one benchmark's, as a sweep's are.
func Converge(board string, settings boards.Clocks, runs []results.Run, target float64) (Convergence, error) {
	c := Convergence{Target: target}
	ok := okOnly(runs)
	byClock := map[boards.MHz][]results.Run{}
	for _, r := range ok {
		byClock[r.ClockMHz] = append(byClock[r.ClockMHz], r)
	}
	clocks := sortedClocks(byClock)
	if len(settings) < 2 {
		if len(clocks) != 1 {
			c.Missing = "no run gave a result"
			return c, nil
		}
		return c, c.medians(clocks[0], byClock[clocks[0]])
	}
	var none boards.Clocks
	for _, mhz := range settings {
		if len(byClock[mhz]) == 0 {
			none = append(none, mhz)
		}
	}
	if len(none) > 0 {
		c.Missing = "no run at " + none.Joined(" or ") + " gave a result yet"
		return c, nil
	}
	cmp, err := compareClocks(Options{By: ByClock, Board: board, TargetCI: target}, ok)
	if err != nil {
		return c, err
	}
	for _, cand := range cmp.Comparisons {
		of := boards.Clocks{cand.Candidate.ClockMHz, cand.Baseline.ClockMHz}.Joined(" vs ")
		for _, m := range cand.Metrics {
			if !m.judged() {
				continue
			}
			j := Judged{Metric: m.Name, Of: of, Runs: min(m.NBaseline, m.NCandidate), HalfWidth: math.Inf(1), Spread: math.NaN(), MoreRuns: -1}
			if m.HalfWidth != nil {
				j.HalfWidth = float64(*m.HalfWidth)
			}
			if m.MoreRuns != nil {
				j.MoreRuns = *m.MoreRuns
			}
			if m.sigmaOK {
				j.Spread = m.sigma
			}
			c.Judged = append(c.Judged, j)
		}
	}
	return c, nil
}

// medians judges one setting's runs: each metric's median interval.
func (c *Convergence) medians(clock boards.MHz, runs []results.Run) error {
	vals, _, err := (*runValues)(nil).metricValues(runs)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(vals))
	for name := range vals {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return results.MetricLess(names[i], names[j]) })
	for _, name := range names {
		vs := vals[name]
		if slices.ContainsFunc(vs, func(v float64) bool { return v <= 0 }) {
			continue // no relative interval of a figure of 0 or less
		}
		j := Judged{Metric: name, Of: "at " + clock.Phrase(), Runs: len(vs), HalfWidth: math.Inf(1), Spread: math.NaN(), MoreRuns: -1}
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(vs), &benchmath.DefaultThresholds), confidence)
		if !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && s.Center > 0 {
			j.HalfWidth = float64(*roundSig(halfWidth(s.Center, s.Lo, s.Hi), 3))
		}
		sigma, ok := logSpread(vs)
		if ok {
			j.Spread = sigma
		}
		if m, known := moreRuns(j.HalfWidth, c.Target, sigma, ok, func(m int) float64 { return medianWidth(len(vs) + m) }); known {
			j.MoreRuns = m
		}
		c.Judged = append(c.Judged, j)
	}
	if len(c.Judged) == 0 {
		c.Missing = "no metric with a figure above 0"
	}
	return nil
}
