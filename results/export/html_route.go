package export

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The route benchmark's figures are "<kind>@<size>/<config>": its charts
// draw each configuration's median against the packet size, the way the
// routing reports people publish draw them, with the direct baseline (the
// board bypassed) as a dashed line on top.
var htmlRouteKinds = []string{"tcp-throughput", "udp-throughput"}

// htmlRouteDirect is the baseline's configuration name.
const htmlRouteDirect = "direct"

// htmlRouteOrder is the usual order of the configurations in a legend;
// others follow by name.
var htmlRouteOrder = []string{"plain", "firewall", "conntrack", "stateful"}

type htmlLineChart struct {
	Title, Caption string
	Width, Height  htmlCoord
	Left, Right    htmlCoord
	Top, Bottom    htmlCoord
	Ticks          []htmlTick
	XTicks         []htmlXTick
	// Bands shade stretches of the x axis (a run's tests), behind the
	// series.
	Bands  []htmlBand
	Series []htmlSeries
}

type htmlBand struct {
	X, W, H htmlCoord
	Fill    string
	Tip     string
}

type htmlSeries struct {
	Name, Stroke, Dash string
	Points             string // polyline points
	Dots               []htmlDot
}

type htmlDot struct {
	X, Y htmlCoord
	Tip  string
}

// Line chart geometry.
const (
	htmlLineLeft   = 56
	htmlLineTop    = 12
	htmlLinePlotW  = 360
	htmlLinePlotH  = 180
	htmlLineBottom = 30
)

// htmlRouteCharts are the route charts of one board at one clock setting.
func htmlRouteCharts(s htmlSetting, title string) []htmlLineChart {
	var charts []htmlLineChart
	for _, kind := range htmlRouteKinds {
		series := map[string]map[int]htmlStat{}
		sizes := map[int]bool{}
		for name, st := range s.stats {
			size, config, ok := splitRouteMetric(name, kind)
			if !ok {
				continue
			}
			if series[config] == nil {
				series[config] = map[int]htmlStat{}
			}
			series[config][size] = st
			sizes[size] = true
		}
		if len(series) == 0 {
			continue
		}
		charts = append(charts, htmlRouteChart(kind+" by packet size"+title, series, sizes))
	}
	return charts
}

// splitRouteMetric reads "<kind>@<size>/<config>".
func splitRouteMetric(name, kind string) (size int, config string, ok bool) {
	rest, ok := strings.CutPrefix(name, kind+"@")
	if !ok {
		return 0, "", false
	}
	sz, config, ok := strings.Cut(rest, "/")
	if !ok || config == "" {
		return 0, "", false
	}
	size, err := strconv.Atoi(sz)
	return size, config, err == nil && size > 0
}

// htmlRouteChart lays the series out: packet sizes evenly spaced (they
// double from 64 bytes, so an even spacing is their log scale), the value
// axis from zero.
func htmlRouteChart(title string, series map[string]map[int]htmlStat, sizeSet map[int]bool) htmlLineChart {
	var sizes []int
	for s := range sizeSet {
		sizes = append(sizes, s)
	}
	sort.Ints(sizes)
	configs := routeConfigOrder(series)
	top, unit := 0.0, ""
	for _, pts := range series {
		for _, st := range pts {
			top, unit = math.Max(top, st.Median), st.Unit
		}
	}
	top, step := htmlNiceScale(top)
	c := htmlLineChart{
		Title: title, Caption: unitLabel(unit) + ", median; dashed: " + htmlRouteDirect + " (the board bypassed)",
		Left: htmlLineLeft, Right: htmlLineLeft + htmlLinePlotW, Top: htmlLineTop, Bottom: htmlLineTop + htmlLinePlotH,
	}
	c.Width, c.Height = c.Right+100, c.Bottom+htmlLineBottom
	x := func(i int) htmlCoord {
		if len(sizes) == 1 {
			return c.Left + htmlLinePlotW/2
		}
		return c.Left + 10 + htmlCoord(i)*(htmlLinePlotW-20)/htmlCoord(len(sizes)-1)
	}
	y := func(v float64) htmlCoord { return c.Bottom - htmlCoord(v/top*htmlLinePlotH) }
	for v := 0.0; v <= top*(1+1e-9); v += step {
		c.Ticks = append(c.Ticks, htmlTick{Y: y(v), Label: htmlCompact(v)})
	}
	for i, s := range sizes {
		c.XTicks = append(c.XTicks, htmlXTick{X: x(i), Label: strconv.Itoa(s) + " B"})
	}
	for ci, config := range configs {
		hs := htmlSeries{Name: config, Stroke: htmlColor(ci)}
		if config == htmlRouteDirect {
			hs.Stroke, hs.Dash = "#222", "6 4"
		}
		var pts []string
		for i, size := range sizes {
			st, ok := series[config][size]
			if !ok {
				continue
			}
			d := htmlDot{X: x(i), Y: y(st.Median), Tip: fmt.Sprintf("%s at %d B: %s", config, size, htmlStatTip(st))}
			hs.Dots = append(hs.Dots, d)
			pts = append(pts, d.X.String()+","+d.Y.String())
		}
		hs.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, hs)
	}
	return c
}

// routeConfigOrder puts the configurations in their usual order, others by
// name, and the direct baseline last (drawn on top).
func routeConfigOrder(series map[string]map[int]htmlStat) []string {
	var out []string
	for _, c := range htmlRouteOrder {
		if series[c] != nil {
			out = append(out, c)
		}
	}
	var rest []string
	for c := range series {
		if c != htmlRouteDirect && !slices.Contains(htmlRouteOrder, c) {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	out = append(out, rest...)
	if series[htmlRouteDirect] != nil {
		out = append(out, htmlRouteDirect)
	}
	return out
}
