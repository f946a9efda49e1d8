package export

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// htmlEnergy is a board's power section: what its meter drew during each
// metered run, and per test the median mean watts, joules and metric per
// joule at each clock setting.
type htmlEnergy struct {
	Summary string
	Chart   *htmlLineChart
	Clocks  []string
	Rows    []htmlEnergyRow
}

type htmlEnergyRow struct {
	Test, Unit string
	Cells      []htmlEnergyCell
}

type htmlEnergyCell struct {
	Watts, Joules, PerJoule string
}

// htmlPowerRuns is how many runs the power chart draws, the latest: more
// lines would hide each other.
const htmlPowerRuns = 6

// htmlEnergyFor is runs' power section; nil when none had a meter.
func htmlEnergyFor(runs []*results.Run) *htmlEnergy {
	var metered []*results.Run
	meters := map[string]bool{}
	for _, r := range runs {
		if r.Energy != nil {
			metered = append(metered, r)
			meters[r.Energy.Meter] = true
		}
	}
	if len(metered) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(meters))
	e := &htmlEnergy{Summary: fmt.Sprintf("%d of %s had a power meter (%s). Idle is the board before its first test: from power-on through boot. Figures are medians over the metered ok runs.",
		len(metered), htmlPlural(len(runs), "run"), strings.Join(names, "; "))}
	e.Chart = htmlPowerChart(metered[max(0, len(metered)-htmlPowerRuns):])
	e.Clocks, e.Rows = htmlEnergyRows(metered)
	return e
}

// htmlEnergyRows is the table: idle, then every test, a cell per clock
// setting with metered ok runs.
func htmlEnergyRows(metered []*results.Run) (clocks []string, rows []htmlEnergyRow) {
	byClock := map[boards.MHz][]*results.Run{}
	var settings []boards.MHz
	tests := map[string]string{} // test → per-joule unit
	for _, r := range metered {
		if r.Status != results.StatusOK {
			continue
		}
		if _, ok := byClock[r.ClockMHz]; !ok {
			settings = append(settings, r.ClockMHz)
		}
		byClock[r.ClockMHz] = append(byClock[r.ClockMHz], r)
		for _, s := range r.Energy.Spans {
			if s.Name != results.SpanIdle && tests[s.Name] == "" {
				tests[s.Name] = s.Unit
			}
		}
	}
	slices.Sort(settings)
	names := make([]string, 0, len(tests))
	for t := range tests {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool { return results.MetricLess(names[i], names[j]) })
	names = append([]string{results.SpanIdle}, names...)
	for _, c := range settings {
		clocks = append(clocks, fmt.Sprintf("%s (n=%d)", c.Label(), len(byClock[c])))
	}
	for _, name := range names {
		row := htmlEnergyRow{Test: name, Unit: tests[name]}
		for _, c := range settings {
			row.Cells = append(row.Cells, htmlEnergyCellFor(name, byClock[c]))
		}
		rows = append(rows, row)
	}
	return clocks, rows
}

func htmlEnergyCellFor(test string, runs []*results.Run) htmlEnergyCell {
	var w, j, pj []float64
	for _, r := range runs {
		if s, ok := r.Energy.Span(test); ok {
			w, j, pj = append(w, s.MeanWatts), append(j, s.Joules), append(pj, s.PerJoule)
		}
	}
	if len(w) == 0 {
		return htmlEnergyCell{Watts: "-", Joules: "-", PerJoule: "-"}
	}
	cell := htmlEnergyCell{
		Watts:  strconv.FormatFloat(exportMedian(w), 'f', 2, 64),
		Joules: strconv.FormatFloat(exportMedian(j), 'f', 1, 64),
	}
	if test == results.SpanIdle {
		cell.PerJoule = ""
	} else {
		cell.PerJoule = htmlCompact(exportMedian(pj))
	}
	return cell
}

// htmlPowerChart draws each run's samples, watts over seconds since the
// run started; a dot's tooltip is the sample.
func htmlPowerChart(runs []*results.Run) *htmlLineChart {
	topW, topS := 0.0, 0.0
	for _, r := range runs {
		for _, s := range r.Energy.Samples {
			topW, topS = math.Max(topW, s.Watts), math.Max(topS, s.At.Seconds())
		}
	}
	if topS == 0 {
		return nil // no samples loaded, or a single one at the start
	}
	topW, stepW := htmlNiceScale(topW)
	topS, stepS := htmlNiceScale(topS)
	c := &htmlLineChart{
		Title: "power while running", Caption: "watts, about one sample a second, over seconds since the run started; shaded: the tests",
		Left: htmlLineLeft, Right: htmlLineLeft + 2*htmlLinePlotW, Top: htmlLineTop, Bottom: htmlLineTop + htmlLinePlotH,
	}
	c.Width, c.Height = c.Right+16, c.Bottom+htmlLineBottom
	x := func(s float64) htmlCoord { return c.Left + htmlCoord(s/topS*2*htmlLinePlotW) }
	y := func(w float64) htmlCoord { return c.Bottom - htmlCoord(w/topW*htmlLinePlotH) }
	for v := 0.0; v <= topW*(1+1e-9); v += stepW {
		c.Ticks = append(c.Ticks, htmlTick{Y: y(v), Label: htmlCompact(v) + " W"})
	}
	for v := 0.0; v <= topS*(1+1e-9); v += stepS {
		c.XTicks = append(c.XTicks, htmlXTick{X: x(v), Label: htmlCompact(v) + " s"})
	}
	for i, r := range runs {
		hs := htmlSeries{Name: htmlPowerSeriesName(r), Stroke: htmlColor(i)}
		var pts []string
		for _, s := range r.Energy.Samples {
			d := htmlDot{X: x(s.At.Seconds()), Y: y(s.Watts), Tip: fmt.Sprintf("%s: %.2f W at %.1f s", r.ID, s.Watts, s.At.Seconds())}
			hs.Dots = append(hs.Dots, d)
			pts = append(pts, d.X.String()+","+d.Y.String())
		}
		hs.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, hs)
		if from, to, ok := htmlTestsSpan(r.Energy); ok {
			c.Bands = append(c.Bands, htmlBand{X: x(from), W: x(to) - x(from), H: c.Bottom - c.Top, Fill: hs.Stroke,
				Tip: fmt.Sprintf("%s: the tests, %.1f–%.1f s", r.ID, from, to)})
		}
	}
	return c
}

// htmlPowerSeriesName names a run's line: its clock, repetition and id,
// and its status when not ok (a throttled or failed run is drawn, but
// left out of the table's medians).
func htmlPowerSeriesName(r *results.Run) string {
	if r.Status != results.StatusOK {
		return fmt.Sprintf("%s #%d (%s, %s)", r.ClockMHz.Label(), r.Rep, r.ID, r.Status)
	}
	return fmt.Sprintf("%s #%d (%s)", r.ClockMHz.Label(), r.Rep, r.ID)
}

// htmlTestsSpan is when a run's tests ran, first start to last end, in
// seconds since the run started.
func htmlTestsSpan(e *results.Energy) (from, to float64, ok bool) {
	for _, s := range e.Spans {
		if s.Name == results.SpanIdle {
			continue
		}
		if !ok || s.From.Seconds() < from {
			from = s.From.Seconds()
		}
		to, ok = math.Max(to, s.To.Seconds()), true
	}
	return from, to, ok
}
