// Package compare compares stored runs: one board's clock settings, or
// settings of several boards, each benchmark (and version) with itself,
// with a ratio, its confidence interval and a verdict per metric, and how
// many more runs a side would bring the intervals within a target. It
// writes comparisons as text for people and JSON for scripts; Converge
// judges a sweep's runs by the same intervals (run --reps auto).
//
//	c, err := compare.Stored(ctx, store, compare.Options{By: compare.ByClock, Board: "rb450g"})
//	compare.WriteText(os.Stdout, c)
package compare

import (
	"cmp"
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

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
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

// ErrPickClock is returned (wrapped) by Compare when a board named without
// a clock has runs at several: which to compare must be said.
var ErrPickClock = errors.New("pick one clock setting")

// Options says what to compare.
type Options struct {
	By string // ByClock or ByBoard

	// Board is, by clock, the board whose clock settings are compared;
	// by board, the baseline board.
	Board string
	// Boards are, by board, the settings to compare, after Board if that
	// is set: a board, or a board at a clock ("rb450g@680"). The first
	// named is the baseline (unless Baseline says) and the others are
	// candidates in the order named; with only one named, every other
	// board with runs is a candidate, alphabetically.
	Boards []Pick
	// ClockMHz, by board, takes only runs at this clock setting for boards
	// named without one. Without it such a board must have runs at a
	// single setting, so a board is never compared on a mix of clocks.
	ClockMHz boards.MHz
	// Baseline, if set, is the baseline: by clock, the clock setting
	// (its Board empty or the compared board); by board, a setting, which
	// is compared with every other named.
	Baseline *Pick
	// IncludeThrottled pools throttled runs with the ok ones; without
	// it they are left out, and the comparison says how many.
	IncludeThrottled bool
	// TargetCI is the interval each comparison says how many more runs
	// a side would bring its metrics within, as a fraction of the ratio
	// (its half-width); 0 is DefaultTargetCI.
	TargetCI float64

	// values are the metrics of runs read from a store (see Stored),
	// which the runs themselves no longer hold; nil when they do.
	values *runValues
}

// DefaultTargetCI is the target interval a comparison measures itself
// against when none is given: run --reps auto's default.
const DefaultTargetCI = boards.DefaultTargetCI

func (o Options) target() float64 {
	if o.TargetCI > 0 {
		return o.TargetCI
	}
	return DefaultTargetCI
}

// Pick names one setting to compare: a board, at a clock if HasClock.
type Pick struct {
	Board    string
	ClockMHz boards.MHz
	HasClock bool
}

// ParsePick reads a setting as the command line gives it: "rb450g",
// "rb450g@680", or, where the board is known, "@680" or "680".
func ParsePick(s string) (Pick, error) {
	board, clock, hasClock := strings.Cut(strings.TrimSpace(s), "@")
	if _, err := boards.ParseMHz(board); err == nil && !hasClock {
		board, clock, hasClock = "", board, true
	}
	p := Pick{Board: board, HasClock: hasClock}
	if hasClock {
		mhz, err := boards.ParseMHz(clock)
		if err != nil {
			return Pick{}, fmt.Errorf("setting %q: the clock after @ is MHz, e.g. rb450g@680", s)
		}
		p.ClockMHz = mhz
	}
	if p.Board == "" && !p.HasClock {
		return Pick{}, fmt.Errorf("setting %q names no board or clock: say BOARD or BOARD@MHZ", s)
	}
	return p, nil
}

func (p Pick) String() string {
	if p.HasClock {
		return fmt.Sprintf("%s@%d", p.Board, p.ClockMHz)
	}
	return p.Board
}

// Setting is one side of a comparison: a board at a clock, and the runs of
// one benchmark there, pooled. Board is empty when comparing one board's
// clocks (the board is Comparison.Board).
type Setting struct {
	Board    string     `json:"board,omitempty"`
	ClockMHz boards.MHz `json:"clock_mhz"`
	// Bench, Tool and ToolVersion are what the pooled runs ran: runs of
	// different benchmarks or versions are never pooled.
	Bench       string `json:"bench"`
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	// Route are the route runs' settings, which they all share.
	Route *results.RouteSettings `json:"route,omitempty"`
	// Runs is how many ok runs were pooled; Images the images they booted
	// and Imported how many were imported output, so a pool of several
	// images, or of imports and runs, shows.
	Runs     int          `json:"runs"`
	Images   []ImageCount `json:"images,omitempty"`
	Imported int          `json:"imported,omitempty"`
	// Throttled is how many of the runs were throttled (pooled only
	// when asked).
	Throttled int `json:"throttled,omitempty"`
	// Metered is how many of the runs had a power meter, and IdleWatts
	// the median of their power before the benchmark; both omitted when
	// none had.
	Metered   int     `json:"metered,omitempty"`
	IdleWatts *number `json:"idle_watts,omitempty"`

	throttled []results.Run // the throttled runs pooled
}

// ImageCount is how many pooled runs booted one image.
type ImageCount struct {
	Digest string `json:"digest"`
	Runs   int    `json:"runs"`
}

// Comparison is the `results compare` report: candidates, each measured
// against its baseline. Runs of different benchmarks or tool versions are
// compared separately, so one board's clocks may give several baselines.
type Comparison struct {
	Board string `json:"board"` // by board: the baseline's
	By    string `json:"by"`
	// Baseline is the first comparison's baseline; each comparison names
	// its own.
	Baseline    Setting     `json:"baseline"`
	Comparisons []Candidate `json:"comparisons"`
	// Skipped says what the store holds that was not compared, and why.
	Skipped []string `json:"skipped,omitempty"`
	// Throttled says how many throttled runs were left out, or pooled.
	Throttled Throttled `json:"throttled"`
}

// Candidate is one setting measured against a baseline.
type Candidate struct {
	Baseline  Setting `json:"baseline"`
	Candidate Setting `json:"candidate"`
	// ClockRatio is candidate clock / baseline clock; null by board or
	// when a clock is unknown (0).
	ClockRatio *number         `json:"clock_ratio"`
	Metrics    []MetricCompare `json:"metrics"`
	// Summary is the comparison in one line, its headline.
	Summary *Summary `json:"summary"`
	// Precision is how its intervals stand against the target interval,
	// and how many more runs a side would bring them within it.
	Precision Precision `json:"precision"`
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
	// Energy is the metric's power where runs had a meter; omitted when
	// none on either side had.
	Energy *EnergyCompare `json:"energy,omitempty"`
	// HalfWidth is the interval's half-width relative to the ratio, its
	// larger side (benchstat's "± x %"); null without an interval.
	HalfWidth *number `json:"ci_half_width"`
	// MoreRuns is how many more runs a side would bring the interval
	// within the comparison's target (0: it is), estimated from the
	// spread seen; null when no side has 2 runs to see it in.
	MoreRuns *int `json:"more_runs"`

	sigma   float64 // the runs' log spread (logSpread), when sigmaOK
	sigmaOK bool
}

// Stored compares the runs in s as o says. Only runs with status ok
// count, and throttled ones when o says so.
func Stored(ctx context.Context, s *store.Store, o Options) (*Comparison, error) {
	var f results.Filter
	switch o.By {
	case ByClock:
		if o.Board == "" {
			return nil, errors.New("results: compare by clock: no board named")
		}
		f.Board = o.Board
	case ByBoard:
		// Two or more boards named: theirs are the only runs compared,
		// so theirs are the only runs read. One named is compared with
		// every other board, whose runs it needs.
		if picks, err := namedPicks(o); err == nil && len(picks) > 1 {
			for _, p := range picks {
				f.Boards = append(f.Boards, p.Board)
			}
		}
	default:
		return nil, fmt.Errorf("results: compare by %q: want %q or %q", o.By, ByClock, ByBoard)
	}
	// Two reads, one a status: a failed or damaged run is never read.
	// Each run's metrics are kept as values alone as it is read: a
	// comparison of thousands of runs holds little more than their
	// figures.
	var read runChunks
	o.values = newRunValues()
	for _, status := range []string{results.StatusOK, results.StatusThrottled} {
		f.Status = status
		err := s.EachMeasured(ctx, f, func(r *results.Run) error {
			o.values.take(r)
			read.add(r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("results: list runs: %w", err)
		}
	}
	runs := slices.Concat(read...)
	// In the store's order, as one read would give them.
	slices.SortStableFunc(runs, func(a, b results.Run) int {
		return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ID, b.ID))
	})
	return compareMeasured(o, runs)
}

// runChunks holds runs as they are read, in chunks made once each: a
// comparison reads thousands of runs of some 450 bytes, which one slice
// grown a run at a time would copy a score of times.
type runChunks [][]results.Run

const runsAChunk = 512

func (c *runChunks) add(r *results.Run) {
	if n := len(*c); n == 0 || len((*c)[n-1]) == runsAChunk {
		*c = append(*c, make([]results.Run, 0, runsAChunk))
	}
	last := &(*c)[len(*c)-1]
	*last = append(*last, *r)
}

// compareRuns compares runs, all of them measured, as o says.
func compareRuns(o Options, runs []results.Run) (*Comparison, error) {
	if o.By == ByClock {
		return compareClocks(o, runs)
	}
	return compareBoards(o, runs)
}

// benchKey is what runs must share to be pooled: the benchmark and what
// printed it, at its version, and a route run's settings (window,
// streams, UDP rate, test length: runs of other settings measure other
// things).
type benchKey struct{ bench, tool, version, route string }

func keyOf(r *results.Run) benchKey {
	return benchKey{r.Bench, r.Tool, r.ToolVersion, r.Route.String()}
}

func (k benchKey) String() string {
	name := k.tool
	if name == "" {
		name = k.bench
	}
	s := strings.TrimSpace(name + " " + k.version)
	switch {
	case s == "":
		return "unnamed output"
	case k.bench != "" && k.bench != name:
		s += " (bench " + k.bench + ")"
	}
	if k.route != "" {
		s += " [" + k.route + "]"
	}
	return s
}

// byBench splits runs by benchKey; the keys come sorted by name.
func byBench(runs []results.Run) ([]benchKey, map[benchKey][]results.Run) {
	keys, groups := grouped(runs, keyOf)
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys, groups
}

// grouped splits runs by key, each group in runs' order, and gives the
// keys in the order first met. Each group's slice is made once, at its
// size (see runChunks).
func grouped[K comparable](runs []results.Run, key func(*results.Run) K) ([]K, map[K][]results.Run) {
	var order []K
	keys := make([]K, len(runs))
	sizes := map[K]int{}
	for i := range runs {
		k := key(&runs[i])
		if _, ok := sizes[k]; !ok {
			order = append(order, k)
		}
		keys[i] = k
		sizes[k]++
	}
	groups := make(map[K][]results.Run, len(sizes))
	for k, n := range sizes {
		groups[k] = make([]results.Run, 0, n)
	}
	for i, k := range keys {
		groups[k] = append(groups[k], runs[i])
	}
	return order, groups
}

// pool describes runs pooled as one side.
func pool(board string, clock boards.MHz, runs []results.Run) Setting {
	k := keyOf(&runs[0])
	st := Setting{Board: board, ClockMHz: clock, Bench: k.bench, Tool: k.tool, ToolVersion: k.version, Route: runs[0].Route, Runs: len(runs)}
	st.IdleWatts, st.Metered = idleWatts(runs)
	for _, r := range runs {
		if strings.HasPrefix(r.Source, results.SourceImportPrefix) {
			st.Imported++
		}
		if r.Status == results.StatusThrottled {
			st.Throttled++
			st.throttled = append(st.throttled, r)
		}
		if r.ImageDigest == "" {
			continue
		}
		i := slices.IndexFunc(st.Images, func(ic ImageCount) bool { return ic.Digest == r.ImageDigest })
		if i < 0 {
			st.Images = append(st.Images, ImageCount{Digest: r.ImageDigest})
			i = len(st.Images) - 1
		}
		st.Images[i].Runs++
	}
	return st
}

// compareClocks compares one board's clock settings, each benchmark
// separately: the lowest known clock (or o.Baseline's) is the baseline;
// an unknown clock (0) sorts last, as it has no clock ratio.
func compareClocks(o Options, runs []results.Run) (*Comparison, error) {
	board := o.Board
	if b := o.Baseline; b != nil && (!b.HasClock || (b.Board != "" && b.Board != board)) {
		return nil, fmt.Errorf("results: compare %s by clock: baseline %s: name one of its clock settings, e.g. %s@680", board, b, board)
	}
	c := &Comparison{Board: board, By: ByClock}
	keys, groups := byBench(runs)
	for _, k := range keys {
		_, byClock := grouped(groups[k], func(r *results.Run) boards.MHz { return r.ClockMHz })
		clocks := sortedClocks(byClock)
		base := clocks[0]
		if o.Baseline != nil {
			base = o.Baseline.ClockMHz
			if _, ok := byClock[base]; !ok {
				c.Skipped = append(c.Skipped, fmt.Sprintf("%s: no runs at the baseline %s (only %s)", k, base.Phrase(), clocks.Phrases()))
				continue
			}
		}
		if len(clocks) < 2 {
			c.Skipped = append(c.Skipped, fmt.Sprintf("%s: only at %s", k, base.Phrase()))
			continue
		}
		for _, clk := range clocks {
			if clk == base {
				continue
			}
			var cr *number
			if base != 0 && clk != 0 {
				cr = round4(float64(clk) / float64(base))
			}
			cand, err := compareSides(o.values, byClock[base], byClock[clk], float64(clk)/float64(base), cr != nil, o.target())
			if err != nil {
				return nil, fmt.Errorf("results: compare %s at %s with %s: %w", board, clk.Figure(), base.Figure(), err)
			}
			cand.Baseline, cand.Candidate, cand.ClockRatio = pool("", base, byClock[base]), pool("", clk, byClock[clk]), cr
			cand.Summary = summarize(board, ByClock, cand)
			cand.Precision = precision(cand.Metrics, o.target())
			c.Comparisons = append(c.Comparisons, *cand)
		}
	}
	if len(c.Comparisons) == 0 {
		return nil, fmt.Errorf("results: compare %s by clock: %w: %s", board, ErrNothingToCompare, heldText(c.Skipped, "no ok runs"))
	}
	c.Baseline = c.Comparisons[0].Baseline
	return c, nil
}

func sortedClocks(byClock map[boards.MHz][]results.Run) boards.Clocks {
	clocks := make(boards.Clocks, 0, len(byClock))
	for c := range byClock {
		clocks = append(clocks, c)
	}
	sort.Slice(clocks, func(i, j int) bool {
		a, b := clocks[i], clocks[j]
		if (a == 0) != (b == 0) {
			return b == 0
		}
		return a < b
	})
	return clocks
}

// heldText says what the store holds when nothing could be compared.
func heldText(skipped []string, none string) string {
	if len(skipped) == 0 {
		return none
	}
	return strings.Join(skipped, "; ")
}

// side is one named setting of a by-board comparison, with its runs.
type side struct {
	pick  Pick // with the clock settled
	runs  []results.Run
	keys  []benchKey
	bench map[benchKey][]results.Run
}

// compareBoards compares settings of boards; see Options for which.
func compareBoards(o Options, runs []results.Run) (*Comparison, error) {
	picks, err := namedPicks(o)
	if err != nil {
		return nil, err
	}
	byBoard := map[string][]results.Run{}
	for _, r := range runs {
		byBoard[r.Board] = append(byBoard[r.Board], r)
	}
	named := len(picks)
	if named == 1 {
		picks = append(picks, otherBoards(picks[0].Board, o.ClockMHz, byBoard)...)
	}
	at := "at any clock"
	if o.ClockMHz != 0 {
		at = "at " + o.ClockMHz.Phrase()
	}
	if len(picks) < 2 {
		return nil, fmt.Errorf("results: compare %s by board: %w: no other board has ok runs %s", picks[0].Board, ErrNothingToCompare, at)
	}
	var sides []side
	var unnamed []string // boards not named that could not be a candidate
	for i, p := range picks {
		sd, err := settle(p, o.ClockMHz, byBoard[p.Board])
		if err != nil && i >= named && errors.Is(err, ErrNothingToCompare) {
			// A board nobody named is only a candidate where it can be.
			unnamed = append(unnamed, fmt.Sprintf("%s has no ok runs %s", p.Board, at))
			continue
		}
		if err != nil {
			return nil, err
		}
		if i > 0 && sd.pick == sides[0].pick {
			// Named twice (--board rb450 is rb450@300 when that is its
			// only clock): a setting compared with itself says nothing.
			continue
		}
		sides = append(sides, sd)
	}
	if len(sides) < 2 {
		missing := "no other board has ok runs " + at
		if named > 1 {
			missing = "it is named twice"
		}
		if len(unnamed) > 0 {
			missing += " (" + strings.Join(unnamed, "; ") + ")"
		}
		return nil, fmt.Errorf("results: compare by board: %w: only one setting, %s (%s), and %s; name a second setting to compare it with, as BOARD@MHZ",
			ErrNothingToCompare, sides[0].pick, runsText(len(sides[0].runs)), missing)
	}
	c := &Comparison{Board: sides[0].pick.Board, By: ByBoard}
	c.Skipped = append(c.Skipped, unnamed...)
	base := sides[0]
	for _, cand := range sides[1:] {
		pairs, skipped := pairBenches(base, cand)
		c.Skipped = append(c.Skipped, skipped...)
		for _, pr := range pairs {
			bRuns, cRuns := base.bench[pr[0]], cand.bench[pr[1]]
			mc, err := compareSides(o.values, bRuns, cRuns, 0, false, o.target())
			if err != nil {
				return nil, fmt.Errorf("results: compare %s with %s: %w", cand.pick, base.pick, err)
			}
			mc.Baseline = pool(base.pick.Board, base.pick.ClockMHz, bRuns)
			mc.Candidate = pool(cand.pick.Board, cand.pick.ClockMHz, cRuns)
			mc.Summary = summarize("", ByBoard, mc)
			mc.Precision = precision(mc.Metrics, o.target())
			c.Comparisons = append(c.Comparisons, *mc)
		}
	}
	if len(c.Comparisons) == 0 {
		return nil, fmt.Errorf("results: compare by board: %w: %s", ErrNothingToCompare, heldText(c.Skipped, "no benchmark in common"))
	}
	c.Baseline = c.Comparisons[0].Baseline
	return c, nil
}

// namedPicks lists the settings named, baseline first, each once.
func namedPicks(o Options) ([]Pick, error) {
	var picks []Pick
	add := func(p Pick) {
		if p.Board != "" && !slices.Contains(picks, p) {
			picks = append(picks, p)
		}
	}
	if b := o.Baseline; b != nil {
		if b.Board == "" {
			return nil, fmt.Errorf("results: compare by board: baseline %s names no board: say BOARD@MHZ", b)
		}
		add(*b)
	}
	add(Pick{Board: o.Board})
	for _, p := range o.Boards {
		add(p)
	}
	if o.Baseline != nil && o.Board != "" && o.Board != o.Baseline.Board {
		return nil, fmt.Errorf("results: compare by board: --board %s and baseline %s name two baselines", o.Board, o.Baseline)
	}
	if len(picks) == 0 {
		return nil, errors.New("results: compare by board: no board named")
	}
	return picks, nil
}

// otherBoards are the candidates when one setting is named: every other
// board with runs, alphabetically, at each of its clock settings (at
// clock alone when that is given), so a board is never compared on a mix
// of clocks and no board nobody named needs its clock said.
func otherBoards(board string, clock boards.MHz, byBoard map[string][]results.Run) []Pick {
	var others []string
	for b := range byBoard {
		if b != board {
			others = append(others, b)
		}
	}
	sort.Strings(others)
	var picks []Pick
	for _, b := range others {
		if clock != 0 {
			picks = append(picks, Pick{Board: b})
			continue
		}
		clocks := map[boards.MHz][]results.Run{}
		for _, r := range byBoard[b] {
			clocks[r.ClockMHz] = append(clocks[r.ClockMHz], r)
		}
		for _, c := range sortedClocks(clocks) {
			picks = append(picks, Pick{Board: b, ClockMHz: c, HasClock: true})
		}
	}
	return picks
}

// settle picks a board's runs at the named clock, else clock, else the
// one clock it has runs at.
func settle(p Pick, clock boards.MHz, runs []results.Run) (side, error) {
	want, pinned := p.ClockMHz, p.HasClock
	if !pinned && clock != 0 {
		want, pinned = clock, true
	}
	var at []results.Run
	clocks := map[boards.MHz][]results.Run{}
	for _, r := range runs {
		clocks[r.ClockMHz] = append(clocks[r.ClockMHz], r)
	}
	switch {
	case pinned:
		at = clocks[want]
	case len(clocks) == 1:
		for c, rs := range clocks {
			want, at = c, rs
		}
	case len(clocks) > 1:
		cs := sortedClocks(clocks)
		return side{}, fmt.Errorf("results: compare by board: %s has runs at %s; %w, e.g. %s@%d", p.Board, cs.Joined(", "), ErrPickClock, p.Board, cs[0])
	}
	if len(at) == 0 {
		where := "at any clock"
		if pinned {
			where = "at " + want.Phrase()
		}
		return side{}, fmt.Errorf("results: compare by board: %w: %s has no ok runs %s", ErrNothingToCompare, p.Board, where)
	}
	sd := side{pick: Pick{Board: p.Board, ClockMHz: want, HasClock: true}, runs: at}
	sd.keys, sd.bench = byBench(at)
	return sd, nil
}

// pairBenches pairs the benchmarks two sides ran: the same benchmark and
// version where they share any; else, when each side ran one only, those
// two (a comparison across tools, which the settings' names show); the
// rest is skipped, with why.
func pairBenches(base, cand side) (pairs [][2]benchKey, skipped []string) {
	for _, k := range base.keys {
		if _, ok := cand.bench[k]; ok {
			pairs = append(pairs, [2]benchKey{k, k})
		}
	}
	// Across tools, but never across route settings: those measure
	// another thing, whatever printed them.
	if len(pairs) == 0 && len(base.keys) == 1 && len(cand.keys) == 1 && base.keys[0].route == cand.keys[0].route {
		return [][2]benchKey{{base.keys[0], cand.keys[0]}}, nil
	}
	for _, k := range base.keys {
		if _, ok := cand.bench[k]; !ok {
			skipped = append(skipped, fmt.Sprintf("%s only on %s", k, base.pick))
		}
	}
	for _, k := range cand.keys {
		if _, ok := base.bench[k]; !ok {
			skipped = append(skipped, fmt.Sprintf("%s only on %s", k, cand.pick))
		}
	}
	return pairs, skipped
}

// compareSides compares every metric both sides measured.
func compareSides(values *runValues, base, cand []results.Run, clockRatio float64, haveClock bool, target float64) (*Candidate, error) {
	bv, bu, err := values.metricValues(base)
	if err != nil {
		return nil, err
	}
	cv, cu, err := values.metricValues(cand)
	if err != nil {
		return nil, err
	}
	var names []string
	for name := range bv {
		if _, ok := cv[name]; ok {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return results.MetricLess(names[i], names[j]) })
	out := &Candidate{Metrics: []MetricCompare{}}
	for _, name := range names {
		if bu[name] != cu[name] {
			return nil, fmt.Errorf("metric %s is in %s on one side and %s on the other", name, bu[name], cu[name])
		}
		mc := compareMetric(name, bu[name], bv[name], cv[name], clockRatio, haveClock)
		mc.precisionOf(bv[name], cv[name], target)
		mc.Energy = compareEnergy(name, base, cand)
		out.Metrics = append(out.Metrics, mc)
	}
	return out, nil
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
// the U test's verdict. The critical value comes from the U distribution
// as go-moremath's U test, which benchmath's is, computes it: exact up to
// stats.MannWhitneyExactLimit runs a side, its normal approximation above.
//
// A shared store holds thousands of runs a setting: the order statistics
// are found without forming the n1·n2 ratios (selectRatio), so a compare
// over 5000 runs a side takes milliseconds a metric, not hours.
func ratioInterval(base, cand []float64, alpha float64) (lo, hi float64, ok bool) {
	for _, b := range base {
		if b <= 0 {
			return 0, 0, false // ratios of non-positive figures mean nothing
		}
	}
	n1, n2 := len(base), len(cand)
	// The interval drops the k-1 smallest and k-1 largest pairwise ratios.
	k := uCritical(n1, n2, alpha)
	if k == 0 {
		return 0, 0, false // too few runs for this level
	}
	b, c := slices.Clone(base), slices.Clone(cand)
	slices.Sort(b)
	slices.Sort(c)
	return selectRatio(b, c, k), selectRatio(b, c, n1*n2-k+1), true
}

// uCritical is 1 + the largest u with P(U ≤ u) ≤ alpha/2 for the U
// statistic of samples of n1 and n2, at most n1·n2/2; 0 when there is
// none.
func uCritical(n1, n2 int, alpha float64) int {
	limit := n1 * n2 / 2
	if n1 <= stats.MannWhitneyExactLimit && n2 <= stats.MannWhitneyExactLimit {
		d := stats.UDist{N1: n1, N2: n2}
		// The CDF rises with u: search rather than walk, as each
		// evaluation costs more the further out it is.
		return sort.Search(limit, func(u int) bool { return d.CDF(float64(u)) > alpha/2 })
	}
	return normalCritical(n1, n2, alpha)
}

// normalCritical is uCritical from the U distribution's normal
// approximation.
func normalCritical(n1, n2 int, alpha float64) int {
	mu := float64(n1) * float64(n2) / 2
	sigma := math.Sqrt(float64(n1) * float64(n2) * float64(n1+n2+1) / 12)
	// With the continuity correction, P(U ≤ u) ≈ Φ((u + ½ − μ)/σ).
	u := math.Floor(stats.NormalDist{Mu: mu, Sigma: sigma}.InvCDF(alpha/2) - 0.5)
	return min(max(int(u)+1, 0), n1*n2/2)
}

// selectRatio returns the k-th smallest (from 1) of the ratios c_j/b_i,
// given b (all positive) and c sorted ascending. It searches the ordered
// float64s for the least x with at least k ratios ≤ x, which is that
// ratio itself; counting them takes one pass over b and c.
func selectRatio(b, c []float64, k int) float64 {
	lo, hi := orderedKey(c[0]/b[len(b)-1]), orderedKey(c[len(c)-1]/b[0])
	for lo < hi {
		mid := lo + (hi-lo)/2
		if countRatiosAtMost(b, c, fromOrderedKey(mid)) >= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if r := fromOrderedKey(lo); r != 0 {
		return r
	}
	return 0 // not -0, which orders before it
}

// countRatiosAtMost counts the pairs with c_j/b_i ≤ x. For a larger b_i
// every ratio is smaller (division by a positive number is monotone, in
// floating point too), so the count of c_j over b_i only grows with i.
func countRatiosAtMost(b, c []float64, x float64) int {
	n, j := 0, 0
	for _, bi := range b {
		for j < len(c) && c[j]/bi <= x {
			j++
		}
		n += j
	}
	return n
}

// orderedKey maps float64s to integers in the same order (negative
// numbers included), so a binary search over keys visits every float.
func orderedKey(x float64) uint64 {
	u := math.Float64bits(x)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

func fromOrderedKey(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
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

// WriteJSON writes c in the `results compare --format json` shape,
// indented by two spaces.
func WriteJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}

// WriteText writes c for people: per candidate, its headline, a line
// saying what is compared with what, a line saying what was pooled on each side, then
// a table of metrics; last, what was not compared.
func WriteText(w io.Writer, c *Comparison) error {
	for i, cand := range c.Comparisons {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		b, k := cand.Baseline, cand.Candidate
		var head string
		if c.By == ByClock {
			head = fmt.Sprintf("%s: %s (baseline, %s) vs %s (%s), clock ratio %s",
				c.Board, b.ClockMHz.Phrase(), runsText(b.Runs),
				k.ClockMHz.Phrase(), runsText(k.Runs), optText(cand.ClockRatio, 4))
		} else {
			head = fmt.Sprintf("%s at %s (baseline, %s) vs %s at %s (%s)",
				b.Board, b.ClockMHz.Phrase(), runsText(b.Runs),
				k.Board, k.ClockMHz.Phrase(), runsText(k.Runs))
		}
		if cand.Summary != nil {
			if _, err := fmt.Fprintln(w, cand.Summary.Headline); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n%s\n", head, pooledText(b, k)); err != nil {
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
		if line := cand.Precision.line(); line != "" {
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
		if err := writeEnergyTable(w, cand); err != nil {
			return err
		}
	}
	if line := c.Throttled.line(); line != "" {
		if _, err := fmt.Fprintf(w, "\n%s\n", line); err != nil {
			return err
		}
	}
	if len(c.Skipped) > 0 {
		if _, err := fmt.Fprintf(w, "\nnot compared: %s\n", strings.Join(c.Skipped, "; ")); err != nil {
			return err
		}
	}
	return nil
}

// pooledText says what each side pooled: which benchmark, and where
// the runs came from.
func pooledText(b, k Setting) string {
	bench := benchKey{b.Bench, b.Tool, b.ToolVersion, b.Route.String()}.String()
	if kb := (benchKey{k.Bench, k.Tool, k.ToolVersion, k.Route.String()}); kb != (benchKey{b.Bench, b.Tool, b.ToolVersion, b.Route.String()}) {
		bench += " vs " + kb.String()
	}
	return fmt.Sprintf("  %s; baseline %s; candidate %s", bench, originText(b), originText(k))
}

// originText says where a side's runs came from: the images booted,
// imported output, or neither recorded.
func originText(st Setting) string {
	var parts []string
	counted := st.Imported
	for _, ic := range st.Images {
		parts = append(parts, fmt.Sprintf("image %s ×%d", shortDigest(ic.Digest), ic.Runs))
		counted += ic.Runs
	}
	if st.Imported > 0 {
		parts = append(parts, fmt.Sprintf("imported ×%d", st.Imported))
	}
	if n := st.Runs - counted; n > 0 {
		parts = append(parts, fmt.Sprintf("image not recorded ×%d", n))
	}
	throttled := ""
	if st.Throttled > 0 {
		throttled = fmt.Sprintf(" (%d throttled)", st.Throttled)
	}
	if len(parts) == 1 {
		// One origin: the count is the side's run count, said already.
		p, _, _ := strings.Cut(parts[0], " ×")
		return p + throttled
	}
	return "pooled from " + strings.Join(parts, ", ") + throttled
}

// shortDigest is enough of an image digest to tell images apart.
func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

func writeCompareTable(w io.Writer, ms []MetricCompare, byClock bool) error {
	cols := []string{"METRIC", "UNIT", "BASELINE", "CANDIDATE", "N", "RATIO"}
	if byClock {
		cols = append(cols, "EFFICIENCY")
	}
	cols = append(cols, "95% INTERVAL", "P", "VERDICT")
	rows := [][]string{cols}
	// A verdict's why that every row would repeat ("n<4: 1 vs 1 runs, no
	// statistics") is said once, under the table.
	var notes []string
	for _, m := range ms {
		interval := "-"
		if m.CILow != nil && m.CIHigh != nil {
			interval = fmt.Sprintf("%.4f–%.4f", float64(*m.CILow), float64(*m.CIHigh))
		}
		row := []string{m.Name, m.Unit, results.FormatValue(float64(m.Baseline)), results.FormatValue(float64(m.Candidate)),
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
		verdict := m.Verdict
		if short, why, ok := strings.Cut(verdict, ": "); ok && strings.HasPrefix(short, "n<") {
			verdict = short
			if !slices.Contains(notes, verdict+": "+why) {
				notes = append(notes, verdict+": "+why)
			}
		}
		row = append(row, interval, p, verdict)
		rows = append(rows, row)
	}
	if err := writeAligned(w, rows, map[int]bool{2: true, 3: true, 5: true}); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
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

// Runs compares every metric that both pools of runs measured, base
// being the baseline: medians, ratio and, from 4 runs a side, the
// Mann-Whitney p-value and the ratio's interval. The caller pools like with
// like (one board, clock and benchmark a side).
func Runs(base, cand []results.Run) ([]MetricCompare, error) {
	c, err := compareSides(nil, base, cand, 0, false, DefaultTargetCI)
	if err != nil {
		return nil, err
	}
	return c.Metrics, nil
}

// MinStatRuns is how many runs a side a comparison needs for statistics.
const MinStatRuns = minStatRuns

// number marshals a float64 as a plain decimal, as export's JSON does:
// encoding/json would switch to exponent form for large or tiny values.
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("non-finite metric value %v", f)
	}
	return []byte(strconv.FormatFloat(f, 'f', -1, 64)), nil
}

// Float is a rounded figure of a comparison as a float64; ok is false for null.
func (n *number) Float() (v float64, ok bool) {
	if n == nil {
		return 0, false
	}
	return float64(*n), true
}
