package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
)

// series makes one ok run per value set: values[i] holds run i's figure
// for each metric in names.
func series(board string, clock int, names, units []string, values ...[]float64) []results.Run {
	var runs []results.Run
	for i, vs := range values {
		r := results.Run{
			ID:       results.RunID(fmt.Sprintf("%s-%d-%d", board, clock, i)),
			Board:    board,
			ClockMHz: boards.MHz(clock),
			Rep:      i,
			Status:   results.StatusOK,
			Bench:    "openssl",
			Started:  storetest.T0.Add(time.Duration(clock*100+i) * time.Minute),
		}
		for j, v := range vs {
			r.Metrics = append(r.Metrics, results.Metric{Name: names[j], Unit: units[j], Value: v})
		}
		runs = append(runs, r)
	}
	return runs
}

// designRuns are DESIGN.md's compare example: the published RB450G figures,
// one run a side.
func designRuns() []results.Run {
	names, units := []string{"aes-128-cbc@1024"}, []string{"B/s"}
	return append(series("rb450g", 680, names, units, []float64{8730280}),
		series("rb450g", 800, names, units, []float64{10272090})...)
}

// statRuns have four runs a side at 680 and 800 MHz: aes scales with the
// clock (faster, significant), sha256 does not move (~, sublinear), md5
// gains far more than the clock (superlinear) and rsa verify loses
// (slower). A failed run at 800 MHz must not count.
func statRuns() []results.Run {
	names := []string{"aes-128-cbc@1024", "sha256@1024", "md5@1024", "rsa2048-verify"}
	units := []string{"B/s", "B/s", "B/s", "ops/s"}
	runs := series("rb450g", 680, names, units,
		[]float64{8730280, 3850580, 16160430, 108.5},
		[]float64{8712000, 3861200, 16150000, 108.9},
		[]float64{8745100, 3843900, 16171200, 108.2},
		[]float64{8721900, 3855000, 16158800, 108.7},
	)
	runs = append(runs, series("rb450g", 800, names, units,
		[]float64{10272090, 3852000, 28604000, 97.1},
		[]float64{10251000, 3846100, 28590100, 97.6},
		[]float64{10290300, 3859900, 28620400, 96.9},
		[]float64{10262400, 3849300, 28611000, 97.3},
	)...)
	runs = append(runs, results.Run{ID: "rb450g-800-failed", Board: "rb450g", ClockMHz: 800, Status: results.StatusFailed,
		Reason: "no DHCP request within 60s", Started: storetest.T0,
		Metrics: []results.Metric{{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 1}}})
	return runs
}

// boardRuns compare two boards at the same clock, three runs against four:
// too few for statistics.
func boardRuns() []results.Run {
	names, units := []string{"sha256@1024", "rsa2048-sign"}, []string{"B/s", "ops/s"}
	runs := series("rb450g", 680, names, units,
		[]float64{3850580, 3.0}, []float64{3861200, 3.1}, []float64{3843900, 3.0})
	runs = append(runs, series("rb493g", 680, names, units,
		[]float64{4321000, 3.4}, []float64{4330100, 3.5}, []float64{4318800, 3.4}, []float64{4325000, 3.4})...)
	return append(runs, series("hap-ac2", 716, names, units, []float64{9000000, 20.5})...)
}

// throttle marks runs throttled: their clock fell from 800 to 600 MHz.
func throttle(runs []results.Run) []results.Run {
	for i := range runs {
		runs[i].ID += "-throttled"
		runs[i].Status = results.StatusThrottled
		runs[i].Throttle = &results.Throttle{Clock: &results.ClockDrop{AskedMHz: runs[i].ClockMHz, LowestMHz: 600, AtMS: 4000}}
	}
	return runs
}

// energyRuns are boardRuns with power meters: rb450g's first two runs and
// all of rb493g's, hap-ac2's none. The idle and test watts rise a little
// from run to run.
func energyRuns() []results.Run {
	runs := boardRuns()
	for i := range runs {
		r := &runs[i]
		if r.Board == "hap-ac2" || r.Board == "rb450g" && r.Rep == 2 {
			continue
		}
		base := map[string]float64{"rb450g": 3.1, "rb493g": 4.6}[r.Board] + 0.05*float64(r.Rep)
		e := &results.Energy{Meter: "tasmota http://198.18.5.7 relay 1"}
		e.Spans = append(e.Spans, results.PowerSpan{Name: results.SpanIdle, To: 20 * time.Second, MeanWatts: base, Joules: 20 * base})
		from := 20 * time.Second
		for j, m := range r.Metrics {
			w := base + 1.5 + 0.5*float64(j)
			e.Spans = append(e.Spans, results.PowerSpan{Name: m.Name, From: from, To: from + 3*time.Second,
				MeanWatts: w, Joules: 3 * w, PerJoule: m.Value / w, Unit: results.PerJouleUnit(m.Unit)})
			from += 3 * time.Second
		}
		r.Energy = e
	}
	return runs
}

// throttledRuns are designRuns with a throttled run at 800 MHz whose
// figures are those of 600.
func throttledRuns() []results.Run {
	names, units := []string{"aes-128-cbc@1024"}, []string{"B/s"}
	return append(designRuns(), throttle(series("rb450g", 800, names, units, []float64{7703000}))...)
}

func TestCompareGolden(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		tests := []struct {
			name string
			runs []results.Run
			opts Options
		}{
			{"design", designRuns(), Options{By: ByClock, Board: "rb450g"}},
			{"stats", statRuns(), Options{By: ByClock, Board: "rb450g"}},
			{"boards", boardRuns(), Options{By: ByBoard, Boards: []Pick{{Board: "rb450g"}, {Board: "rb493g"}}}},
			// One board named: every other board is a candidate, alphabetically.
			{"boards-all", boardRuns(), Options{By: ByBoard, Board: "rb493g"}},
			// A throttled run is left out, and the comparison says so;
			// asked, it is pooled and the pool says how many were.
			{"throttled", throttledRuns(), Options{By: ByClock, Board: "rb450g"}},
			{"throttled-included", throttledRuns(), Options{By: ByClock, Board: "rb450g", IncludeThrottled: true}},
			// Power where the runs had a meter: idle, mean watts and per joule.
			{"energy", energyRuns(), Options{By: ByBoard, Board: "rb450g"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := e.Fill(t, tt.runs)
				c, err := Stored(context.Background(), s, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				var js, txt bytes.Buffer
				if err := WriteJSON(&js, c); err != nil {
					t.Fatal(err)
				}
				if err := WriteText(&txt, c); err != nil {
					t.Fatal(err)
				}
				storetest.Golden(t, "compare-"+tt.name+".json", js.Bytes())
				storetest.Golden(t, "compare-"+tt.name+".txt", txt.Bytes())
				for i, line := range strings.Split(txt.String(), "\n") {
					if strings.TrimRight(line, " ") != line {
						t.Errorf("text line %d has trailing blanks: %q", i+1, line)
					}
				}
			})
		}
	})
}

// TestCompareDesignExample reproduces DESIGN.md's compare JSON from the
// published RB450G 680 → 800 MHz figures.
func TestCompareDesignExample(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Fill(t, designRuns())
		c, err := Stored(context.Background(), s, Options{By: ByClock, Board: "rb450g"})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, c); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		// DESIGN.md's example, with the verdict's explanation that follows
		// the "n<4" token. The report carries more (what each side pooled);
		// everything the example has must be there as it says.
		const design = `{"board":"rb450g","by":"clock","baseline":{"clock_mhz":680},
	 "comparisons":[{"candidate":{"clock_mhz":800},"clock_ratio":1.1765,
	   "metrics":[{"name":"aes-128-cbc@1024","unit":"B/s","baseline":8730280,"candidate":10272090,
	               "n_baseline":1,"n_candidate":1,"ratio":1.1766,"scaling_efficiency":1.0001,
	               "ci_low":null,"ci_high":null,"p_value":null,"verdict":"n<4"}]}]}`
		var want map[string]any
		if err := json.Unmarshal([]byte(design), &want); err != nil {
			t.Fatal(err)
		}
		m := got["comparisons"].([]any)[0].(map[string]any)["metrics"].([]any)[0].(map[string]any)
		verdict, _ := m["verdict"].(string)
		if v, why, _ := strings.Cut(verdict, ": "); v != "n<4" || !strings.Contains(why, "1 vs 1 runs") {
			t.Errorf("verdict %q: want n<4 saying there is 1 run a side", verdict)
		}
		m["verdict"] = "n<4"
		for _, miss := range missingFrom(got, want, "") {
			t.Errorf("compare JSON lacks DESIGN.md's %s\n%s", miss, buf.String())
		}
	})
}

// missingFrom lists the paths in want whose values got does not hold.
func missingFrom(got, want any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path}
		}
		var miss []string
		for k, v := range w {
			gv, ok := g[k]
			if !ok {
				miss = append(miss, path+"."+k)
				continue
			}
			miss = append(miss, missingFrom(gv, v, path+"."+k)...)
		}
		return miss
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{path}
		}
		var miss []string
		for i := range w {
			miss = append(miss, missingFrom(g[i], w[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return miss
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return []string{fmt.Sprintf("%s = %v (got %v)", path, want, got)}
	}
	return nil
}

func TestCompareStatistics(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Fill(t, statRuns())
		c, err := Stored(context.Background(), s, Options{By: ByClock, Board: "rb450g"})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Comparisons) != 1 {
			t.Fatalf("%d comparisons, want 1", len(c.Comparisons))
		}
		got := map[string]MetricCompare{}
		for _, m := range c.Comparisons[0].Metrics {
			got[m.Name] = m
		}
		tests := []struct {
			metric      string
			verdict     string
			scaling     string
			significant bool
		}{
			{"aes-128-cbc@1024", "faster", "", true},
			{"sha256@1024", "~", "", false},
			{"md5@1024", "faster", "superlinear", true},
			{"rsa2048-verify", "slower", "sublinear", true},
		}
		for _, tt := range tests {
			t.Run(tt.metric, func(t *testing.T) {
				m, ok := got[tt.metric]
				if !ok {
					t.Fatal("metric not compared")
				}
				if m.NBaseline != 4 || m.NCandidate != 4 {
					t.Errorf("n = %d vs %d, want 4 vs 4 (the failed run must not count)", m.NBaseline, m.NCandidate)
				}
				if m.Verdict != tt.verdict || m.Scaling != tt.scaling {
					t.Errorf("verdict %q scaling %q, want %q %q", m.Verdict, m.Scaling, tt.verdict, tt.scaling)
				}
				if m.PValue == nil || m.CILow == nil || m.CIHigh == nil {
					t.Fatalf("statistics missing with 4 runs a side: p %v ci %v–%v", m.PValue, m.CILow, m.CIHigh)
				}
				p, lo, hi, r := float64(*m.PValue), float64(*m.CILow), float64(*m.CIHigh), float64(*m.Ratio)
				if (p < 0.05) != tt.significant {
					t.Errorf("p = %v, want significant %v", p, tt.significant)
				}
				// The interval inverts the same test: it excludes 1 exactly
				// when the difference is significant, and holds the ratio.
				if excl := lo > 1 || hi < 1; excl != tt.significant {
					t.Errorf("interval %v–%v excludes 1: %v, want %v", lo, hi, excl, tt.significant)
				}
				if r < lo || r > hi {
					t.Errorf("ratio %v outside its interval %v–%v", r, lo, hi)
				}
			})
		}
	})
}

func TestCompareErrors(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		tests := []struct {
			name    string
			runs    []results.Run
			opts    Options
			nothing bool   // want ErrNothingToCompare
			msg     string // the error says this
		}{
			{"one clock", designRuns()[:1], Options{By: ByClock, Board: "rb450g"}, true, "nothing to compare: openssl: only at 680 MHz"},
			{"no runs", nil, Options{By: ByClock, Board: "rb450g"}, true, "nothing to compare: no ok runs"},
			{"only failed runs", statRuns()[8:], Options{By: ByClock, Board: "rb450g"}, true, "nothing to compare: no ok runs"},
			{"board at two clocks", designRuns(), Options{By: ByBoard, Boards: []Pick{{Board: "rb450g"}, {Board: "x"}}}, false, "680, 800 MHz; pick one"},
			{"unknown board", boardRuns(), Options{By: ByBoard, Boards: []Pick{{Board: "rb450g"}, {Board: "nope"}}}, true, "nope has no ok runs"},
			{"no other board", designRuns(), Options{By: ByBoard, Board: "rb450g", ClockMHz: 680}, true, "no other board"},
			{"by what", designRuns(), Options{By: "rep", Board: "rb450g"}, false, `by "rep"`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := e.Fill(t, tt.runs)
				_, err := Stored(context.Background(), s, tt.opts)
				if err == nil {
					t.Fatal("no error")
				}
				if errors.Is(err, ErrNothingToCompare) != tt.nothing || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q: want ErrNothingToCompare %v, containing %q", err, tt.nothing, tt.msg)
				}
			})
		}
	})
}

func TestCompareFewRuns(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		names, units := []string{"sha256@1024"}, []string{"B/s"}
		runs := series("b", 100, names, units, []float64{1}, []float64{2}, []float64{3})
		runs = append(runs, series("b", 200, names, units, []float64{10}, []float64{20}, []float64{30}, []float64{40})...)
		s := e.Fill(t, runs)
		c, err := Stored(context.Background(), s, Options{By: ByClock, Board: "b"})
		if err != nil {
			t.Fatal(err)
		}
		m := c.Comparisons[0].Metrics[0]
		if m.PValue != nil || m.CILow != nil || m.CIHigh != nil {
			t.Errorf("statistics with 3 vs 4 runs: p %v ci %v–%v", m.PValue, m.CILow, m.CIHigh)
		}
		if want := "n<4: 3 vs 4 runs"; !strings.HasPrefix(m.Verdict, want) {
			t.Errorf("verdict %q, want it to start %q", m.Verdict, want)
		}
		// Medians: 2 and 25.
		if m.Baseline != 2 || m.Candidate != 25 || m.Ratio == nil || *m.Ratio != 12.5 {
			t.Errorf("medians %v, %v ratio %v; want 2, 25, 12.5", m.Baseline, m.Candidate, m.Ratio)
		}
	})
}

func TestRatioInterval(t *testing.T) {
	tests := []struct {
		name       string
		base, cand []float64
		lo, hi     float64
		ok         bool
	}{
		// 4+4: P(U=0) = 1/70 ≤ 0.025 < P(U≤1), so the interval spans all
		// 16 pairwise ratios.
		{"4+4", []float64{1, 2, 3, 4}, []float64{8, 6, 10, 12}, 1.5, 12, true},
		// 5+5: P(U≤2) = 4/252 ≤ 0.025 < P(U≤3) = 7/252: drop the two
		// smallest and two largest of 25 ratios.
		{"5+5", []float64{1, 2, 4, 5, 10}, []float64{10, 20, 40, 50, 100}, 2, 50, true},
		{"3+3 too few", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0, false},
		{"zero baseline", []float64{0, 2, 3, 4}, []float64{4, 5, 6, 7}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, ok := ratioInterval(tt.base, tt.cand, 0.05)
			if ok != tt.ok || math.Abs(lo-tt.lo) > 1e-12 || math.Abs(hi-tt.hi) > 1e-12 {
				t.Errorf("ratioInterval = %v, %v, %v; want %v, %v, %v", lo, hi, ok, tt.lo, tt.hi, tt.ok)
			}
		})
	}
}

// TestRatioIntervalPairs: the interval's bounds are the order statistics
// of the pairwise ratios, found without forming them, for samples with and
// without ties, below and above the exact U distribution's limit; and a
// store's worth of runs a side takes moments, not hours.
func TestRatioIntervalPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range [][2]int{{4, 4}, {4, 9}, {7, 5}, {12, 12}, {30, 17}, {50, 50}, {51, 60}, {300, 400}} {
		for _, ties := range []bool{false, true} {
			n1, n2 := size[0], size[1]
			draw := func(n int, center float64) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = center * (1 + rng.NormFloat64()/50)
					if ties {
						v[i] = math.Round(v[i]/20) * 20 // a few distinct figures
					}
				}
				return v
			}
			base, cand := draw(n1, 1000), draw(n2, 1150)
			k := uCritical(n1, n2, 0.05)
			var ratios []float64
			for _, b := range base {
				for _, c := range cand {
					ratios = append(ratios, c/b)
				}
			}
			sort.Float64s(ratios)
			lo, hi, ok := ratioInterval(base, cand, 0.05)
			if !ok || k == 0 || lo != ratios[k-1] || hi != ratios[len(ratios)-k] || lo > 1.15 || hi < 1.15 {
				t.Errorf("%dx%d ties %v: interval %v–%v (%v), want ratios %d and %d of %d: %v–%v",
					n1, n2, ties, lo, hi, ok, k, len(ratios)-k+1, len(ratios), ratios[k-1], ratios[len(ratios)-k])
			}
		}
	}
	// The exact distribution's critical value and the normal
	// approximation's agree where one hands over to the other.
	if exact, approx := uCritical(50, 50, 0.05), normalCritical(50, 50, 0.05); exact < approx-3 || exact > approx+3 {
		t.Errorf("critical value at 50+50: exact %d, normal approximation %d", exact, approx)
	}

	big := make([]float64, 5000)
	for i := range big {
		big[i] = 1000 + float64(i%97)
	}
	start := time.Now()
	if _, _, ok := ratioInterval(big, big, 0.05); !ok {
		t.Error("no interval for 5000+5000 runs")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("5000+5000 runs took %v", d)
	}
}

// benchRuns re-labels runs as one benchmark's, booted from image (""
// for none); suffix keeps their ids apart from other labels' runs.
func benchRuns(runs []results.Run, suffix, bench, tool, version, image string) []results.Run {
	for i := range runs {
		runs[i].ID += results.RunID(suffix)
		runs[i].Bench, runs[i].Tool, runs[i].ToolVersion, runs[i].ImageDigest = bench, tool, version, image
	}
	return runs
}

// poolRuns hold, on one board at the same clocks, the built-in suite and
// openssl (which share metric names) from several images, and an openssl
// version measured at one clock only.
func poolRuns() []results.Run {
	names, units := []string{"sha256@1024"}, []string{"B/s"}
	var runs []results.Run
	runs = append(runs, benchRuns(series("qemu", 500, names, units, []float64{100}, []float64{101}, []float64{102}), "-s", "speed", "bootbench-speed", "0.1.0", "sha256:aaaaaaaaaaaaaaaa")...)
	runs = append(runs, benchRuns(series("qemu", 1000, names, units, []float64{200}, []float64{202}), "-s", "speed", "bootbench-speed", "0.1.0", "sha256:aaaaaaaaaaaaaaaa")...)
	runs = append(runs, benchRuns(series("qemu", 1000, names, units, []float64{204}), "-s2", "speed", "bootbench-speed", "0.1.0", "sha256:bbbbbbbbbbbbbbbb")...)
	runs = append(runs, benchRuns(series("qemu", 500, names, units, []float64{900}), "-o", "openssl", "openssl", "3.0.19", "sha256:cccccccccccccccc")...)
	runs = append(runs, benchRuns(series("qemu", 1000, names, units, []float64{1800}), "-o", "openssl", "openssl", "3.0.19", "sha256:cccccccccccccccc")...)
	runs = append(runs, benchRuns(series("qemu", 1000, names, units, []float64{5000}), "-n", "openssl", "openssl", "3.0.22", "")...)
	return runs
}

// TestComparePools compares each benchmark with itself: never the
// built-in suite with openssl, nor one openssl version with another, and
// says what each side pooled.
func TestComparePools(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Fill(t, poolRuns())
		c, err := Stored(context.Background(), s, Options{By: ByClock, Board: "qemu"})
		if err != nil {
			t.Fatal(err)
		}
		type want struct {
			tool, version  string
			base, cand     number
			nBase, nCand   int
			candImages     []ImageCount
			baseImageCount int
		}
		wants := []want{
			{"bootbench-speed", "0.1.0", 101, 202, 3, 3, []ImageCount{{"sha256:aaaaaaaaaaaaaaaa", 2}, {"sha256:bbbbbbbbbbbbbbbb", 1}}, 1},
			{"openssl", "3.0.19", 900, 1800, 1, 1, []ImageCount{{"sha256:cccccccccccccccc", 1}}, 1},
		}
		if len(c.Comparisons) != len(wants) {
			t.Fatalf("%d comparisons, want %d: %+v", len(c.Comparisons), len(wants), c.Comparisons)
		}
		for i, w := range wants {
			cand := c.Comparisons[i]
			m := cand.Metrics[0]
			for _, st := range []Setting{cand.Baseline, cand.Candidate} {
				if st.Tool != w.tool || st.ToolVersion != w.version {
					t.Errorf("comparison %d side %+v: want %s %s", i, st, w.tool, w.version)
				}
			}
			if m.Baseline != w.base || m.Candidate != w.cand || m.NBaseline != w.nBase || m.NCandidate != w.nCand {
				t.Errorf("comparison %d: %v (%d runs) vs %v (%d runs); want %v (%d) vs %v (%d)",
					i, m.Baseline, m.NBaseline, m.Candidate, m.NCandidate, w.base, w.nBase, w.cand, w.nCand)
			}
			if fmt.Sprint(cand.Candidate.Images) != fmt.Sprint(w.candImages) || len(cand.Baseline.Images) != w.baseImageCount {
				t.Errorf("comparison %d images: baseline %v candidate %v; want candidate %v", i, cand.Baseline.Images, cand.Candidate.Images, w.candImages)
			}
		}
		if want := []string{"openssl 3.0.22: only at 1000 MHz"}; fmt.Sprint(c.Skipped) != fmt.Sprint(want) {
			t.Errorf("skipped %q, want %q", c.Skipped, want)
		}
		var txt bytes.Buffer
		if err := WriteText(&txt, c); err != nil {
			t.Fatal(err)
		}
		storetest.Golden(t, "compare-pools.txt", txt.Bytes())
	})
}

// settingRuns are the seed thread's boards: the RB450 at 300 MHz and the
// RB450G at 680 and 800 MHz (published aes-128-cbc figures).
func settingRuns() []results.Run {
	names, units := []string{"aes-128-cbc@1024"}, []string{"B/s"}
	runs := series("rb450", 300, names, units, []float64{3849560})
	return append(runs, designRuns()...)
}

// TestCompareSettings compares settings named board@clock, and baselines
// named by --baseline.
func TestCompareSettings(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		pick := func(s string) Pick {
			p, err := ParsePick(s)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		type side struct {
			board string
			clock boards.MHz
			value number
		}
		tests := []struct {
			name       string
			opts       Options
			base       side
			cands      []side
			clockRatio string // of the first comparison; "" for none
		}{
			{"seed thread: rb450@300 against rb450g@680, not 800",
				Options{By: ByBoard, Boards: []Pick{pick("rb450@300"), pick("rb450g@680")}},
				side{"rb450", 300, 3849560}, []side{{"rb450g", 680, 8730280}}, ""},
			{"one setting named: every other board at each of its clocks",
				Options{By: ByBoard, Boards: []Pick{pick("rb450@300")}},
				side{"rb450", 300, 3849560}, []side{{"rb450g", 680, 8730280}, {"rb450g", 800, 10272090}}, ""},
			{"--board and a setting",
				Options{By: ByBoard, Board: "rb450", Boards: []Pick{pick("rb450g@800")}},
				side{"rb450", 300, 3849560}, []side{{"rb450g", 800, 10272090}}, ""},
			{"--clock for boards named without one",
				Options{By: ByBoard, Boards: []Pick{pick("rb450g"), pick("rb450@300")}, ClockMHz: 800},
				side{"rb450g", 800, 10272090}, []side{{"rb450", 300, 3849560}}, ""},
			{"baseline named apart",
				Options{By: ByBoard, Boards: []Pick{pick("rb450@300"), pick("rb450g@800")}, Baseline: ptr(pick("rb450g@680"))},
				side{"rb450g", 680, 8730280}, []side{{"rb450", 300, 3849560}, {"rb450g", 800, 10272090}}, ""},
			{"by clock, baseline the higher clock",
				Options{By: ByClock, Board: "rb450g", Baseline: ptr(pick("800"))},
				side{"", 800, 10272090}, []side{{"", 680, 8730280}}, "0.85"},
			{"by clock, baseline as board@clock",
				Options{By: ByClock, Board: "rb450g", Baseline: ptr(pick("rb450g@680"))},
				side{"", 680, 8730280}, []side{{"", 800, 10272090}}, "1.1765"},
		}
		s := e.Fill(t, settingRuns())
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := Stored(context.Background(), s, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Comparisons) != len(tt.cands) {
					t.Fatalf("%d comparisons, want %d", len(c.Comparisons), len(tt.cands))
				}
				for i, w := range tt.cands {
					cand := c.Comparisons[i]
					b, k, m := cand.Baseline, cand.Candidate, cand.Metrics[0]
					if got := (side{b.Board, b.ClockMHz, m.Baseline}); got != tt.base {
						t.Errorf("comparison %d baseline %+v, want %+v", i, got, tt.base)
					}
					if got := (side{k.Board, k.ClockMHz, m.Candidate}); got != w {
						t.Errorf("comparison %d candidate %+v, want %+v", i, got, w)
					}
				}
				if got := optText(c.Comparisons[0].ClockRatio, 4); tt.clockRatio != "" && got != tt.clockRatio+strings.Repeat("0", 6-len(tt.clockRatio)) {
					t.Errorf("clock ratio %s, want %s", got, tt.clockRatio)
				}
			})
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestCompareSettingErrors: settings that hold nothing, or baselines that
// name no setting, say so.
func TestCompareSettingErrors(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Fill(t, settingRuns())
		tests := []struct {
			name    string
			opts    Options
			nothing bool
			msg     string
		}{
			{"no runs at the named clock", Options{By: ByBoard, Boards: []Pick{{Board: "rb450", ClockMHz: 300, HasClock: true}, {Board: "rb450g", ClockMHz: 1000, HasClock: true}}},
				true, "rb450g has no ok runs at 1000 MHz"},
			{"board at two clocks", Options{By: ByBoard, Boards: []Pick{{Board: "rb450"}, {Board: "rb450g"}}},
				false, "rb450g has runs at 680, 800 MHz; pick one clock setting, e.g. rb450g@680"},
			{"baseline clock not held", Options{By: ByClock, Board: "rb450g", Baseline: &Pick{ClockMHz: 1000, HasClock: true}},
				true, "openssl: no runs at the baseline 1000 MHz (only 680 MHz, 800 MHz)"},
			{"by clock, baseline without a clock", Options{By: ByClock, Board: "rb450g", Baseline: &Pick{Board: "rb450g"}},
				false, "baseline rb450g: name one of its clock settings"},
			{"by clock, baseline of another board", Options{By: ByClock, Board: "rb450g", Baseline: &Pick{Board: "rb450", ClockMHz: 300, HasClock: true}},
				false, "baseline rb450@300: name one of its clock settings"},
			{"a setting named twice", Options{By: ByBoard, Board: "rb450", Boards: []Pick{{Board: "rb450", ClockMHz: 300, HasClock: true}}},
				true, "only one setting, rb450@300 (1 run), and it is named twice; name a second setting"},
			{"one setting, no other board at --clock", Options{By: ByBoard, Boards: []Pick{{Board: "rb450", ClockMHz: 300, HasClock: true}}, ClockMHz: 1000},
				true, "only one setting, rb450@300 (1 run), and no other board has ok runs at 1000 MHz (rb450g has no ok runs at 1000 MHz)"},
			{"two baselines", Options{By: ByBoard, Board: "rb450", Boards: []Pick{{Board: "rb450g"}}, Baseline: &Pick{Board: "rb450g", ClockMHz: 680, HasClock: true}},
				false, "--board rb450 and baseline rb450g@680 name two baselines"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := Stored(context.Background(), s, tt.opts)
				if err == nil || errors.Is(err, ErrNothingToCompare) != tt.nothing || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("err = %v; want ErrNothingToCompare %v, saying %q", err, tt.nothing, tt.msg)
				}
			})
		}
	})
}

func TestParsePick(t *testing.T) {
	tests := []struct {
		in   string
		want Pick
		err  string
	}{
		{"rb450g", Pick{Board: "rb450g"}, ""},
		{"rb450g@680", Pick{Board: "rb450g", ClockMHz: 680, HasClock: true}, ""},
		{"rb450g@0", Pick{Board: "rb450g", HasClock: true}, ""},
		{"rb450g@680MHz", Pick{Board: "rb450g", ClockMHz: 680, HasClock: true}, ""},
		{"@800", Pick{ClockMHz: 800, HasClock: true}, ""},
		{"800", Pick{ClockMHz: 800, HasClock: true}, ""},
		{"rb450g@fast", Pick{}, `setting "rb450g@fast": the clock after @ is MHz`},
		{"rb450g@-5", Pick{}, "the clock after @ is MHz"},
		{"", Pick{}, "names no board or clock"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePick(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParsePick(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestCompareThrottled: which throttled runs a comparison leaves out is
// what it would have pooled, counted in the text and the JSON, and a
// comparison that has nothing left to compare says they are why.
func TestCompareThrottled(t *testing.T) {
	names, units := []string{"sha256@1024"}, []string{"B/s"}
	onlyThrottled := append(series("rb450g", 680, names, units, []float64{3850580}),
		throttle(series("rb450g", 800, names, units, []float64{3400000}, []float64{3410000}))...)
	otherBoard := append(boardRuns(), throttle(series("hap-ac2", 716, names, units, []float64{8000000}))...)
	tests := []struct {
		name      string
		runs      []results.Run
		opts      Options
		left, inc int
		text, err string
	}{
		{"left out by clock", throttledRuns(), Options{By: ByClock, Board: "rb450g"}, 1, 0,
			"left out 1 throttled run (rb450g at 800 MHz ×1); --include-throttled pools them too", ""},
		{"included by clock", throttledRuns(), Options{By: ByClock, Board: "rb450g", IncludeThrottled: true}, 0, 1,
			"included 1 throttled run (rb450g at 800 MHz ×1), as asked", ""},
		{"every run of a setting throttled", onlyThrottled, Options{By: ByClock, Board: "rb450g"}, 0, 0, "",
			"only at 680 MHz; left out 2 throttled runs (rb450g at 800 MHz ×2); --include-throttled pools them too"},
		{"every run of a setting throttled, included", onlyThrottled, Options{By: ByClock, Board: "rb450g", IncludeThrottled: true}, 0, 2,
			"rb450g: 680 MHz (baseline, 1 run) vs 800 MHz (2 runs)", ""},
		{"a board not compared", otherBoard, Options{By: ByBoard, Boards: []Pick{{Board: "rb450g"}, {Board: "rb493g"}}}, 0, 0, "", ""},
		{"a board compared by board", otherBoard, Options{By: ByBoard, Boards: []Pick{{Board: "rb450g"}, {Board: "hap-ac2"}}}, 1, 0,
			"left out 1 throttled run (hap-ac2 at 716 MHz ×1)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := storetest.Engines[0].Fill(t, tt.runs)
			c, err := Stored(context.Background(), s, tt.opts)
			if tt.err != "" {
				if !errors.Is(err, ErrNothingToCompare) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want nothing to compare saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Throttled.LeftOut != tt.left || c.Throttled.Included != tt.inc {
				t.Errorf("throttled %+v, want %d left out, %d included", c.Throttled, tt.left, tt.inc)
			}
			var txt, js bytes.Buffer
			WriteText(&txt, c)
			WriteJSON(&js, c)
			if !strings.Contains(txt.String(), tt.text) || (tt.left == 0 && tt.inc == 0 && strings.Contains(txt.String(), "throttled")) {
				t.Errorf("text does not say %q:\n%s", tt.text, txt.String())
			}
			want := fmt.Sprintf(`"throttled": {
    "left_out": %d,
    "included": %d`, tt.left, tt.inc)
			if !strings.Contains(js.String(), want) {
				t.Errorf("JSON lacks %s:\n%s", want, js.String())
			}
		})
	}
}

// routeRuns are route runs at two clocks, some with one stream and some
// with four, which fill the link otherwise: board "a" has both settings,
// "b" only four streams.
func routeRuns() []results.Run {
	names, units := []string{"tcp-throughput@1460/plain"}, []string{"bit/s"}
	one := &results.RouteSettings{Streams: 1, UDPRate: 50e6, Seconds: 3}
	four := &results.RouteSettings{Window: "256K", Streams: 4, UDPRate: 50e6, Seconds: 3}
	set := func(runs []results.Run, suffix string, s *results.RouteSettings) []results.Run {
		for i := range runs {
			runs[i].ID += results.RunID(suffix)
			runs[i].Bench, runs[i].Tool, runs[i].ToolVersion, runs[i].Route = "route", "iperf3", "3.12", s
		}
		return runs
	}
	var runs []results.Run
	runs = append(runs, set(series("a", 500, names, units, []float64{100e6}, []float64{102e6}), "-1", one)...)
	runs = append(runs, set(series("a", 1000, names, units, []float64{150e6}, []float64{152e6}), "-1", one)...)
	runs = append(runs, set(series("a", 500, names, units, []float64{380e6}), "-4", four)...)
	runs = append(runs, set(series("a", 1000, names, units, []float64{600e6}), "-4", four)...)
	runs = append(runs, set(series("b", 1000, names, units, []float64{610e6}), "-4", four)...)
	return runs
}

// TestCompareRouteSettingsApart: route runs of different settings (here
// one stream against four) are never pooled, in either store: by clock
// each setting is compared with itself, and by board a setting is never
// put against another.
func TestCompareRouteSettingsApart(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Fill(t, routeRuns())
		c, err := Stored(context.Background(), s, Options{By: ByClock, Board: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Comparisons) != 2 {
			t.Fatalf("%d comparisons, want one per setting: %+v", len(c.Comparisons), c.Comparisons)
		}
		for _, cand := range c.Comparisons {
			m, b := cand.Metrics[0], cand.Baseline
			if b.Route == nil || cand.Candidate.Route == nil || *b.Route != *cand.Candidate.Route {
				t.Fatalf("sides of other settings compared: %+v vs %+v", b.Route, cand.Candidate.Route)
			}
			wantN := map[int]int{1: 2, 4: 1}[b.Route.Streams]
			if m.NBaseline != wantN || m.NCandidate != wantN {
				t.Errorf("%d streams: pooled %d vs %d runs, want %d a side", b.Route.Streams, m.NBaseline, m.NCandidate, wantN)
			}
		}
		_, err = Stored(context.Background(), s, Options{By: ByBoard, Boards: []Pick{{Board: "a", ClockMHz: 1000, HasClock: true}, {Board: "b", ClockMHz: 1000, HasClock: true}}})
		if err != nil {
			t.Fatalf("by board: %v", err)
		}
		// a at 1000 MHz with one stream only, b with four only.
		apart := e.Fill(t, append(routeRuns()[:4], routeRuns()[6]))
		got, err := Stored(context.Background(), apart, Options{By: ByBoard, Boards: []Pick{{Board: "a", ClockMHz: 1000, HasClock: true}, {Board: "b", ClockMHz: 1000, HasClock: true}}})
		if !errors.Is(err, ErrNothingToCompare) {
			t.Errorf("by board, one stream on a against four on b: %v, %+v; want nothing to compare", err, got)
		}
	})
}
