package export

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// htmlHeadline are the metrics charted: one hash, one cipher and one
// public-key figure cover the ways boards differ (memory bandwidth, ALU,
// multiplier), and md5 is the figure every old wiki row has. Metrics a
// board never reported are left out of its charts.
var htmlHeadline = []string{"aes-128-cbc@1024", "sha256@1024", "md5@1024", "rsa2048-sign"}

// htmlPalette is Tableau 10: distinguishable, and legible for the common
// forms of colour blindness.
var htmlPalette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Figure is one of a run's headline figures, printed as the report's
// charts label them.
type Figure struct {
	Metric string `json:"metric"` // "sha256@1024"
	Value  string `json:"value"`  // "38.5M bytes/s"
}

// Headline is the run's headline figures: those of the report's charts
// it has, in their order; none when it has none of them.
func Headline(r *results.Run) []Figure {
	var out []Figure
	for _, name := range htmlHeadline {
		for _, m := range r.Metrics {
			if m.Name == name {
				out = append(out, Figure{Metric: m.Name, Value: htmlCompact(m.Value) + " " + unitLabel(m.Unit)})
				break
			}
		}
	}
	return out
}

func htmlColor(i int) string { return htmlPalette[i%len(htmlPalette)] }

// WriteHTML writes a report of runs as one self-contained HTML file: no
// scripts, no fonts, no images or styles from elsewhere, so it opens the
// same offline, attached to a mail or archived with a CI job. Charts are
// inline SVG drawn here; tooltips are SVG <title>s, which browsers show
// without script.
//
// Per board: a bar chart per headline metric comparing clock settings
// (median over the ok runs, whiskers from minimum to maximum), a table of
// medians of every metric per clock with the ratio to the lowest clock,
// the list of runs (every attempt, failed ones with their reason), and the
// boot-stage timings of each run as stacked bars. Before the boards, when
// there are several, the same headline metrics compare boards.
//
// Everything from the store goes through html/template, so a board name
// or failure reason cannot inject markup.
func WriteHTML(w io.Writer, runs []results.Run) error {
	return htmlTmpl.Execute(w, buildHTMLReport(runs))
}

// htmlCoord is an SVG coordinate. It prints with at most one decimal and
// never in exponent form, which keeps the markup small and stable.
type htmlCoord float64

func (c htmlCoord) String() string {
	return strconv.FormatFloat(math.Round(float64(c)*10)/10, 'f', -1, 64)
}

type htmlReport struct {
	Summary     string
	Boards      []*htmlBoard
	BoardCharts []htmlChart
}

type htmlBoard struct {
	Name, Anchor string
	Summary      string
	ClockCharts  []htmlChart
	RouteCharts  []htmlLineChart
	Clocks       []string
	Medians      []htmlMedianRow
	MediansOpen  bool
	Runs         []htmlRunRow
	Stages       *htmlStageChart
	Energy       *htmlEnergy
}

type htmlMedianRow struct {
	Metric, Unit string
	Cells        []htmlMedianCell
}

type htmlMedianCell struct {
	Value, Ratio, Tip string
}

type htmlRunRow struct {
	ID, Clock      string
	Rep            int
	Status         string
	Started        string
	Tool           string
	Metrics        int
	Boot, Reason   string
	StatusCSSClass string
}

type htmlChart struct {
	Title, Caption string
	Width, Height  htmlCoord
	Left, Right    htmlCoord
	Top, Bottom    htmlCoord
	Ticks          []htmlTick
	Bars           []htmlBar
}

type htmlTick struct {
	Y     htmlCoord
	Label string
}

type htmlBar struct {
	X, Y, W, H       htmlCoord
	Fill             string
	LabelX           htmlCoord
	Label1, Label2   string
	Value            string
	ValueY           htmlCoord
	Err              bool
	ErrX, ErrX1      htmlCoord
	ErrX2            htmlCoord
	ErrTop, ErrBelow htmlCoord
	Tip              string
}

type htmlStageChart struct {
	Width, Height htmlCoord
	Left, Right   htmlCoord
	Top, Bottom   htmlCoord
	Ticks         []htmlXTick
	Rows          []htmlStageRow
	Legend        []htmlLegend
}

type htmlXTick struct {
	X     htmlCoord
	Label string
}

type htmlStageRow struct {
	Y, TextY       htmlCoord
	Label, Tip     string
	Segs           []htmlSeg
	TotalX         htmlCoord
	Total          string
	BarH           htmlCoord
	StatusIsNotOK  bool
	StatusCSSClass string
}

type htmlSeg struct {
	X, W htmlCoord
	Fill string
	Tip  string
}

type htmlLegend struct {
	Name results.StageName
	Fill string
}

// htmlStat summarises one metric over the ok runs of one setting.
type htmlStat struct {
	Median, Min, Max float64
	N                int
	Unit             string
}

func htmlStats(runs []*results.Run) map[string]htmlStat {
	vals := map[string][]float64{}
	units := map[string]string{}
	for _, r := range runs {
		for _, m := range r.Metrics {
			vals[m.Name] = append(vals[m.Name], m.Value)
			units[m.Name] = m.Unit
		}
	}
	out := make(map[string]htmlStat, len(vals))
	for name, vs := range vals {
		st := htmlStat{Median: exportMedian(vs), Min: vs[0], Max: vs[0], N: len(vs), Unit: units[name]}
		for _, v := range vs {
			st.Min = math.Min(st.Min, v)
			st.Max = math.Max(st.Max, v)
		}
		out[name] = st
	}
	return out
}

// htmlSetting is one board × clock with its ok runs' statistics.
type htmlSetting struct {
	board string
	clock boards.MHz
	n     int
	stats map[string]htmlStat
}

func buildHTMLReport(runs []results.Run) *htmlReport {
	byBoard := map[string][]*results.Run{}
	var boards []string
	var first, last time.Time
	ok := 0
	for i := range runs {
		r := &runs[i]
		if _, seen := byBoard[r.Board]; !seen {
			boards = append(boards, r.Board)
		}
		byBoard[r.Board] = append(byBoard[r.Board], r)
		if r.Status == results.StatusOK {
			ok++
		}
		if !r.Started.IsZero() {
			if first.IsZero() || r.Started.Before(first) {
				first = r.Started
			}
			if r.Started.After(last) {
				last = r.Started
			}
		}
	}
	sort.Slice(boards, func(i, j int) bool { return results.NaturalCompare(boards[i], boards[j]) < 0 })

	rep := &htmlReport{}
	switch {
	case len(runs) == 0:
		rep.Summary = "No runs match."
	default:
		rep.Summary = fmt.Sprintf("%s (%d ok) on %s", htmlPlural(len(runs), "run"), ok, htmlPlural(len(boards), "board"))
		if !first.IsZero() {
			rep.Summary += fmt.Sprintf(", %s to %s UTC", first.UTC().Format("2006-01-02 15:04"), last.UTC().Format("2006-01-02 15:04"))
		}
		rep.Summary += "."
	}

	stageColors := htmlStageColors(runs)
	var settings []htmlSetting
	for _, name := range boards {
		b, ss := buildHTMLBoard(name, byBoard[name], stageColors)
		rep.Boards = append(rep.Boards, b)
		settings = append(settings, ss...)
	}
	if len(boards) > 1 {
		boardIndex := map[string]int{}
		for i, b := range boards {
			boardIndex[b] = i
		}
		for _, metric := range htmlHeadline {
			var bars []htmlBarData
			for _, s := range settings {
				st, ok := s.stats[metric]
				if !ok {
					continue
				}
				bars = append(bars, htmlBarData{
					label1: s.board, label2: s.clock.Label(),
					fill: htmlColor(boardIndex[s.board]), stat: st,
				})
			}
			if len(bars) > 0 {
				rep.BoardCharts = append(rep.BoardCharts, htmlBarChart(metric, bars))
			}
		}
	}
	return rep
}

func buildHTMLBoard(name string, runs []*results.Run, stageColors map[results.StageName]string) (*htmlBoard, []htmlSetting) {
	b := &htmlBoard{Name: name, Anchor: "board-" + htmlAnchor(name)}
	settings, okRuns := htmlSettings(name, runs)
	b.Summary = fmt.Sprintf("%s, %d ok", htmlPlural(len(runs), "run"), okRuns)
	if len(settings) > 0 {
		var clocks boards.Clocks
		for _, s := range settings {
			clocks = append(clocks, s.clock)
		}
		b.Summary += "; clock settings with results: " + clocks.Labels()
	}
	b.Summary += "."

	b.ClockCharts = htmlClockCharts(settings)
	// Route charts, per clock setting when there are several.
	for _, s := range settings {
		title := ""
		if len(settings) > 1 {
			title = " at " + s.clock.Label()
		}
		b.RouteCharts = append(b.RouteCharts, htmlRouteCharts(s, title)...)
	}
	for _, s := range settings {
		b.Clocks = append(b.Clocks, fmt.Sprintf("%s (n=%d)", s.clock.Label(), s.n))
	}
	b.Medians = htmlMedians(settings)
	// A full openssl run has about a hundred metrics; folded away they
	// would push the runs and stage charts off screen.
	b.MediansOpen = len(b.Medians) <= 24
	for _, r := range runs {
		b.Runs = append(b.Runs, htmlRunRowFor(r))
	}
	b.Stages = htmlStageChartFor(runs, stageColors)
	b.Energy = htmlEnergyFor(runs)
	return b, settings
}

// htmlSettings groups a board's ok runs by clock setting, lowest first,
// and counts them.
func htmlSettings(board string, runs []*results.Run) (settings []htmlSetting, okRuns int) {
	byClock := map[boards.MHz][]*results.Run{}
	var clocks []boards.MHz
	for _, r := range runs {
		if r.Status != results.StatusOK {
			continue
		}
		okRuns++
		if _, seen := byClock[r.ClockMHz]; !seen {
			clocks = append(clocks, r.ClockMHz)
		}
		byClock[r.ClockMHz] = append(byClock[r.ClockMHz], r)
	}
	slices.Sort(clocks)
	for _, c := range clocks {
		settings = append(settings, htmlSetting{board: board, clock: c, n: len(byClock[c]), stats: htmlStats(byClock[c])})
	}
	return settings, okRuns
}

// htmlClockCharts compare a board's clock settings, a chart per headline
// metric.
func htmlClockCharts(settings []htmlSetting) []htmlChart {
	var charts []htmlChart
	for _, metric := range htmlHeadline {
		var bars []htmlBarData
		for i, s := range settings {
			if st, ok := s.stats[metric]; ok {
				bars = append(bars, htmlBarData{label1: s.clock.Label(), fill: htmlColor(i), stat: st})
			}
		}
		if len(bars) > 0 {
			charts = append(charts, htmlBarChart(metric, bars))
		}
	}
	return charts
}

// htmlMedians is the medians table: every metric any ok run reported, a
// column per clock setting.
func htmlMedians(settings []htmlSetting) []htmlMedianRow {
	seen := map[string]string{}
	var metrics []string
	for _, s := range settings {
		for m, st := range s.stats {
			if _, ok := seen[m]; !ok {
				seen[m] = st.Unit
				metrics = append(metrics, m)
			}
		}
	}
	sort.Slice(metrics, func(i, j int) bool { return results.MetricLess(metrics[i], metrics[j]) })
	var rows []htmlMedianRow
	for _, m := range metrics {
		row := htmlMedianRow{Metric: m, Unit: seen[m]}
		base, haveBase := 0.0, false
		for i, s := range settings {
			st, ok := s.stats[m]
			if !ok {
				row.Cells = append(row.Cells, htmlMedianCell{Value: "-"})
				continue
			}
			cell := htmlMedianCell{Value: htmlMedianText(st), Tip: htmlStatTip(st)}
			if !haveBase {
				base, haveBase = st.Median, true
			} else if i > 0 && base != 0 {
				// Ratio to the lowest clock that has the metric,
				// the baseline `results compare` uses too.
				cell.Ratio = "×" + strconv.FormatFloat(st.Median/base, 'f', 2, 64)
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// htmlRunRowFor is one run's row in a board's table of runs.
func htmlRunRowFor(r *results.Run) htmlRunRow {
	row := htmlRunRow{
		ID: string(r.ID), Clock: r.ClockMHz.Label(), Rep: r.Rep, Status: r.Status,
		Started: "-", Tool: dash(strings.TrimSpace(r.Tool + " " + r.ToolVersion)),
		Metrics: len(r.Metrics), Boot: "-", Reason: r.Why(),
		StatusCSSClass: "st-" + htmlAnchor(r.Status),
	}
	if !r.Started.IsZero() {
		row.Started = r.Started.UTC().Format("2006-01-02 15:04:05")
	}
	if total := htmlStageTotal(r); total > 0 {
		row.Boot = htmlSeconds(total.Seconds())
	}
	return row
}

// htmlBarData is one bar before layout.
type htmlBarData struct {
	label1, label2 string
	fill           string
	stat           htmlStat
}

// Bar chart geometry, in SVG user units (CSS pixels at 100 %).
const (
	htmlBarSlot    = 64
	htmlBarLeft    = 56
	htmlBarTop     = 26
	htmlBarPlotH   = 150
	htmlBarLabelsH = 36
)

// htmlBarChart lays out a bar chart of medians with min–max whiskers. The
// value axis starts at zero: bar length is what readers compare, and a
// truncated axis would exaggerate small differences.
func htmlBarChart(metric string, bars []htmlBarData) htmlChart {
	unit := bars[0].stat.Unit
	top := 0.0
	for _, b := range bars {
		top = math.Max(top, math.Max(b.stat.Max, b.stat.Median))
	}
	top, step := htmlNiceScale(top)
	c := htmlChart{
		Title:  metric,
		Left:   htmlBarLeft,
		Top:    htmlBarTop,
		Bottom: htmlBarTop + htmlBarPlotH,
	}
	// Slots widen for long labels (board names) so neighbours' labels
	// do not run into each other; htmlShort caps the width.
	slot := htmlBarSlot
	for _, b := range bars {
		for _, l := range []string{b.label1, b.label2} {
			slot = max(slot, len([]rune(htmlShort(l)))*7+8)
		}
	}
	c.Right = c.Left + htmlCoord(len(bars)*slot) + 8
	c.Width = c.Right + 8
	c.Height = c.Bottom + htmlBarLabelsH
	c.Caption = unitLabel(unit) + ", median"
	if htmlAnyWhiskers(bars) {
		c.Caption += "; whiskers: min–max"
	}
	y := func(v float64) htmlCoord { return c.Bottom - htmlCoord(v/top*htmlBarPlotH) }
	for v := 0.0; v <= top*(1+1e-9); v += step {
		c.Ticks = append(c.Ticks, htmlTick{Y: y(v), Label: htmlCompact(v)})
	}
	const bw = htmlBarSlot * 0.6
	for i, b := range bars {
		x0 := c.Left + 4 + htmlCoord(i*slot)
		mid := x0 + htmlCoord(slot)/2
		hb := htmlBar{
			X: mid - bw/2, W: bw, Y: y(b.stat.Median), Fill: b.fill,
			LabelX: mid, Label1: htmlShort(b.label1), Label2: htmlShort(b.label2),
			Value: htmlCompact(b.stat.Median),
			Tip:   strings.TrimSpace(b.label1+" "+b.label2) + ": " + htmlStatTip(b.stat),
		}
		hb.H = c.Bottom - hb.Y
		hb.ValueY = hb.Y - 4
		if b.stat.N > 1 && b.stat.Max > b.stat.Min {
			hb.Err = true
			hb.ErrX, hb.ErrX1, hb.ErrX2 = mid, mid-6, mid+6
			hb.ErrTop, hb.ErrBelow = y(b.stat.Max), y(b.stat.Min)
			hb.ValueY = min(hb.ValueY, hb.ErrTop-4)
		}
		c.Bars = append(c.Bars, hb)
	}
	return c
}

func htmlAnyWhiskers(bars []htmlBarData) bool {
	for _, b := range bars {
		if b.stat.N > 1 && b.stat.Max > b.stat.Min {
			return true
		}
	}
	return false
}

func unitLabel(unit string) string {
	switch unit {
	case "B/s":
		return "bytes/s"
	case "ops/s", "op/s":
		return "operations/s"
	case "":
		return "value"
	}
	return unit
}

// htmlMedianText prints a median as the tools print their figures; byte
// and bit rates in whole units, since a median of two may end in .5 and
// fractions of a byte per second are noise.
func htmlMedianText(st htmlStat) string {
	if humanRate(1e6, st.Unit) != "" {
		return results.FormatValue(math.Round(st.Median))
	}
	return results.FormatValue(st.Median)
}

func htmlStatTip(st htmlStat) string {
	s := fmt.Sprintf("median %s %s", results.FormatValue(st.Median), st.Unit)
	if h := humanRate(st.Median, st.Unit); h != "" {
		s += " " + h
	}
	if st.N > 1 {
		s += fmt.Sprintf(", min %s, max %s", results.FormatValue(st.Min), results.FormatValue(st.Max))
	}
	return s + fmt.Sprintf(", n=%d", st.N)
}

// htmlStageColors gives every stage name one colour for the whole report,
// in order of first appearance, so "kernel" is the same colour in every
// board's chart.
func htmlStageColors(runs []results.Run) map[results.StageName]string {
	colors := map[results.StageName]string{}
	for _, r := range runs {
		for _, st := range r.Stages {
			if _, ok := colors[st.Name]; !ok {
				colors[st.Name] = htmlColor(len(colors))
			}
		}
	}
	return colors
}

func htmlStageTotal(r *results.Run) time.Duration {
	var d time.Duration
	for _, st := range r.Stages {
		d += st.Duration
	}
	return d
}

// Stage chart geometry.
const (
	htmlStageLeft   = 190
	htmlStagePlotW  = 560
	htmlStageTotalW = 64
	htmlStageRowH   = 22
	htmlStageBarH   = 14
	htmlStageAxisH  = 26
)

// htmlStageChartFor draws each run's boot stages as one horizontal stacked
// bar, failed runs included: where a failed boot spent its time is often
// the clue to why it failed. Nil when no run has stage timings.
func htmlStageChartFor(runs []*results.Run, colors map[results.StageName]string) *htmlStageChart {
	var with []*results.Run
	maxTotal := 0.0
	for _, r := range runs {
		if len(r.Stages) > 0 {
			with = append(with, r)
			maxTotal = math.Max(maxTotal, htmlStageTotal(r).Seconds())
		}
	}
	if len(with) == 0 {
		return nil
	}
	top, step := htmlNiceScale(maxTotal)
	c := &htmlStageChart{Left: htmlStageLeft, Top: 6}
	c.Right = c.Left + htmlStagePlotW
	c.Width = c.Right + htmlStageTotalW
	c.Bottom = c.Top + htmlCoord(len(with)*htmlStageRowH)
	c.Height = c.Bottom + htmlStageAxisH
	x := func(s float64) htmlCoord { return c.Left + htmlCoord(s/top*htmlStagePlotW) }
	for v := 0.0; v <= top*(1+1e-9); v += step {
		c.Ticks = append(c.Ticks, htmlXTick{X: x(v), Label: htmlCompact(v) + " s"})
	}
	inLegend := map[results.StageName]bool{}
	for i, r := range with {
		y := c.Top + htmlCoord(i*htmlStageRowH) + (htmlStageRowH-htmlStageBarH)/2
		row := htmlStageRow{
			Y: y, TextY: y + htmlStageBarH - 3, BarH: htmlStageBarH,
			Label:          fmt.Sprintf("%s #%d", r.ClockMHz.Label(), r.Rep),
			Tip:            string(r.ID) + " (" + r.Status + ")",
			StatusIsNotOK:  r.Status != results.StatusOK,
			StatusCSSClass: "st-" + htmlAnchor(r.Status),
		}
		if row.StatusIsNotOK {
			row.Label += " " + r.Status
		}
		at := 0.0
		for _, st := range r.Stages {
			d := st.Duration.Seconds()
			row.Segs = append(row.Segs, htmlSeg{
				X: x(at), W: x(at+d) - x(at), Fill: colors[st.Name],
				Tip: fmt.Sprintf("%s: %s", st.Name, htmlSeconds(d)),
			})
			at += d
			if !inLegend[st.Name] {
				inLegend[st.Name] = true
				c.Legend = append(c.Legend, htmlLegend{Name: st.Name, Fill: colors[st.Name]})
			}
		}
		row.TotalX = x(at) + 6
		row.Total = htmlSeconds(at)
		c.Rows = append(c.Rows, row)
	}
	return c
}

func htmlSeconds(s float64) string {
	return strconv.FormatFloat(s, 'f', 1, 64) + " s"
}

// htmlNiceScale picks an axis maximum ≥ v and a tick step from the 1, 2, 2.5,
// 5 × 10ⁿ series, giving four to five ticks with round labels.
func htmlNiceScale(v float64) (top, step float64) {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1, 0.25
	}
	raw := v / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step-1e-9) * step, step
}

// htmlCompact prints v with an SI prefix and at most three significant
// digits ("3.85M", "108", "2.5"), short enough for an axis label.
func htmlCompact(v float64) string {
	if v == 0 {
		return "0"
	}
	prefixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	// Three significant digits, then drop trailing zeros.
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	digits = max(0, digits)
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s + prefixes[i]
}

// htmlShort keeps an axis label within its bar's slot; the bar's tooltip
// has the full text.
func htmlShort(s string) string {
	if r := []rune(s); len(r) > 16 {
		return string(r[:15]) + "…"
	}
	return s
}

// htmlAnchor makes s usable as an id or class name.
func htmlAnchor(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '-' || r == '_' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	return sb.String()
}

func htmlPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

var htmlTmpl = template.Must(template.New("report").Parse(htmlSource))

// htmlSource is the report page. The style sheet is inline (the file must
// stand alone) and uses only system fonts.
const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bootbench report</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; }
h1 { font-size: 1.6em; margin: 0 0 .2em; }
h2 { font-size: 1.3em; margin: 2em 0 .3em; border-bottom: 2px solid #4e79a7; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 .4em; }
nav a { margin-right: 1em; }
.muted { color: #666; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; border: 1px solid #ddd; border-radius: 4px; padding: .5em; background: #fff; }
figcaption { font-size: 12px; color: #555; }
figcaption b { color: #222; font-size: 13px; }
svg text { font: 11px system-ui, sans-serif; fill: #333; }
svg .axis { stroke: #888; stroke-width: 1; }
svg .grid { stroke: #e6e6e6; stroke-width: 1; }
svg .whisker { stroke: #222; stroke-width: 1.5; }
svg .val { font-weight: 600; }
table { border-collapse: collapse; font-size: 13px; margin: .3em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f5f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ratio { color: #666; font-size: 12px; margin-left: .4em; }
.st-ok { color: #2e7d32; }
.st-failed, .st-corrupt { color: #c62828; font-weight: 600; }
.st-interrupted, .st-throttled { color: #ef6c00; font-weight: 600; }
.reason { max-width: 32em; }
code { font-size: 12px; }
.legend span { display: inline-block; margin-right: 1em; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
summary { cursor: pointer; font-weight: 600; margin: 1em 0 .3em; }
</style>
</head>
<body>
<h1>bootbench report</h1>
<p class="muted">{{.Summary}}</p>
{{if .Boards}}<nav>Boards: {{range .Boards}}<a href="#{{.Anchor}}">{{.Name}}</a>{{end}}</nav>{{end}}
{{if .BoardCharts}}
<h2>Boards compared</h2>
<p class="muted">Median of the ok runs at each board and clock setting.</p>
<div class="charts">
{{range .BoardCharts}}{{template "bars" .}}{{end}}
</div>
{{end}}
{{range .Boards}}
<h2 id="{{.Anchor}}">{{.Name}}</h2>
<p class="muted">{{.Summary}}</p>
{{if .ClockCharts}}
<h3>Clock settings compared</h3>
<div class="charts">
{{range .ClockCharts}}{{template "bars" .}}{{end}}
</div>
{{end}}{{if .RouteCharts}}
<h3>Routing throughput by packet size</h3>
<div class="charts">
{{range .RouteCharts}}{{template "lines" .}}{{end}}
</div>
{{end}}
{{if .Medians}}
<details{{if .MediansOpen}} open{{end}}>
<summary>Medians per clock setting ({{len .Medians}} metrics)</summary>
<table>
<thead><tr><th>metric</th><th>unit</th>{{range .Clocks}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Medians}}<tr><td><code>{{.Metric}}</code></td><td>{{.Unit}}</td>{{range .Cells}}<td class="num"{{if .Tip}} title="{{.Tip}}"{{end}}>{{.Value}}{{if .Ratio}}<span class="ratio">{{.Ratio}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</details>
{{end}}{{with .Energy}}
<h3>Power</h3>
<p class="muted">{{.Summary}}</p>
{{with .Chart}}<div class="charts">
{{template "lines" .}}</div>
{{end}}<table>
<thead><tr><th>test</th><th>per joule</th>{{range .Clocks}}<th>{{.}} W</th><th>J</th><th>per J</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr><td><code>{{.Test}}</code></td><td>{{.Unit}}</td>{{range .Cells}}<td class="num">{{.Watts}}</td><td class="num">{{.Joules}}</td><td class="num">{{.PerJoule}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}
<h3>Runs</h3>
<table>
<thead><tr><th>run</th><th>clock</th><th>rep</th><th>status</th><th>started (UTC)</th><th>tool</th><th>metrics</th><th>boot total</th><th>reason</th></tr></thead>
<tbody>
{{range .Runs}}<tr><td><code>{{.ID}}</code></td><td>{{.Clock}}</td><td class="num">{{.Rep}}</td><td class="{{.StatusCSSClass}}">{{.Status}}</td><td>{{.Started}}</td><td>{{.Tool}}</td><td class="num">{{.Metrics}}</td><td class="num">{{.Boot}}</td><td class="reason">{{.Reason}}</td></tr>
{{end}}</tbody>
</table>
{{with .Stages}}
<h3>Boot stages</h3>
{{template "stages" .}}
{{end}}
{{end}}
</body>
</html>
{{/* The helpers below print nothing where they are defined. */ -}}
{{define "stages"}}<figure>
<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="boot stage timings per run">
{{range .Ticks}}<line class="grid" x1="{{.X}}" x2="{{.X}}" y1="{{$.Top}}" y2="{{$.Bottom}}"/>
<text x="{{.X}}" y="{{$.Height}}" dy="-8" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Rows}}<g><title>{{.Tip}}</title>
<text x="{{$.Left}}" dx="-8" y="{{.TextY}}" text-anchor="end"{{if .StatusIsNotOK}} class="{{.StatusCSSClass}}"{{end}}>{{.Label}}</text>
{{$row := .}}{{range .Segs}}<rect x="{{.X}}" y="{{$row.Y}}" width="{{.W}}" height="{{$row.BarH}}" fill="{{.Fill}}"><title>{{.Tip}}</title></rect>
{{end}}<text x="{{.TotalX}}" y="{{.TextY}}">{{.Total}}</text>
</g>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}"/>
</svg>
<figcaption class="legend">{{range .Legend}}<span><i style="background: {{.Fill}}"></i>{{.Name}}</span>{{end}}</figcaption>
</figure>
{{end -}}
{{define "lines"}}<figure>
<figcaption><b>{{.Title}}</b><br>{{.Caption}}</figcaption>
<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Ticks}}<line class="grid" x1="{{$.Left}}" x2="{{$.Right}}" y1="{{.Y}}" y2="{{.Y}}"/>
<text x="{{$.Left}}" dx="-6" y="{{.Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<text x="{{.X}}" y="{{$.Bottom}}" dy="15" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Bands}}<rect x="{{.X}}" y="{{$.Top}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}" fill-opacity="0.12"><title>{{.Tip}}</title></rect>
{{end}}{{range $i, $s := .Series}}<g><title>{{.Name}}</title>
<polyline points="{{.Points}}" fill="none" stroke="{{.Stroke}}" stroke-width="2"{{if .Dash}} stroke-dasharray="{{.Dash}}"{{end}}/>
{{range .Dots}}<circle cx="{{.X}}" cy="{{.Y}}" r="3" fill="{{$s.Stroke}}"><title>{{.Tip}}</title></circle>
{{end}}</g>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/>
<line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}"/>
</svg>
<figcaption class="legend">{{range .Series}}<span><i style="background: {{.Stroke}}"></i>{{.Name}}</span>{{end}}</figcaption>
</figure>
{{end -}}
{{define "bars"}}<figure>
<figcaption><b>{{.Title}}</b><br>{{.Caption}}</figcaption>
<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Ticks}}<line class="grid" x1="{{$.Left}}" x2="{{$.Right}}" y1="{{.Y}}" y2="{{.Y}}"/>
<text x="{{$.Left}}" dx="-6" y="{{.Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .Bars}}<g><title>{{.Tip}}</title>
<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{.Fill}}"/>
{{if .Err}}<line class="whisker" x1="{{.ErrX}}" x2="{{.ErrX}}" y1="{{.ErrTop}}" y2="{{.ErrBelow}}"/>
<line class="whisker" x1="{{.ErrX1}}" x2="{{.ErrX2}}" y1="{{.ErrTop}}" y2="{{.ErrTop}}"/>
<line class="whisker" x1="{{.ErrX1}}" x2="{{.ErrX2}}" y1="{{.ErrBelow}}" y2="{{.ErrBelow}}"/>
{{end}}<text class="val" x="{{.LabelX}}" y="{{.ValueY}}" text-anchor="middle">{{.Value}}</text>
<text x="{{.LabelX}}" y="{{$.Bottom}}" dy="15" text-anchor="middle">{{.Label1}}</text>
{{if .Label2}}<text x="{{.LabelX}}" y="{{$.Bottom}}" dy="29" text-anchor="middle">{{.Label2}}</text>
{{end}}</g>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/>
<line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}"/>
</svg>
</figure>
{{end}}`
