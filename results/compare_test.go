package results

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// fillStore stores runs and returns the store.
func fillStore(t *testing.T, runs []Run) *Store {
	t.Helper()
	s, _ := openTemp(t)
	for i := range runs {
		if err := s.SaveRun(context.Background(), &runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// series makes one ok run per value set: values[i] holds run i's figure
// for each metric in names.
func series(board string, clock int, names, units []string, values ...[]float64) []Run {
	var runs []Run
	for i, vs := range values {
		r := Run{
			ID:       RunID(fmt.Sprintf("%s-%d-%d", board, clock, i)),
			Board:    board,
			ClockMHz: clock,
			Rep:      i,
			Status:   StatusOK,
			Bench:    "openssl",
			Started:  t0.Add(time.Duration(clock*100+i) * time.Minute),
		}
		for j, v := range vs {
			r.Metrics = append(r.Metrics, Metric{names[j], units[j], v})
		}
		runs = append(runs, r)
	}
	return runs
}

// designRuns are DESIGN.md's compare example: the published RB450G figures,
// one run a side.
func designRuns() []Run {
	names, units := []string{"aes-128-cbc@1024"}, []string{"B/s"}
	return append(series("rb450g", 680, names, units, []float64{8730280}),
		series("rb450g", 800, names, units, []float64{10272090})...)
}

// statRuns have four runs a side at 680 and 800 MHz: aes scales with the
// clock (faster, significant), sha256 does not move (~, sublinear), md5
// gains far more than the clock (superlinear) and rsa verify loses
// (slower). A failed run at 800 MHz must not count.
func statRuns() []Run {
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
	runs = append(runs, Run{ID: "rb450g-800-failed", Board: "rb450g", ClockMHz: 800, Status: StatusFailed,
		Reason: "no DHCP request within 60s", Started: t0,
		Metrics: []Metric{{"aes-128-cbc@1024", "B/s", 1}}})
	return runs
}

// boardRuns compare two boards at the same clock, three runs against four:
// too few for statistics.
func boardRuns() []Run {
	names, units := []string{"sha256@1024", "rsa2048-sign"}, []string{"B/s", "ops/s"}
	runs := series("rb450g", 680, names, units,
		[]float64{3850580, 3.0}, []float64{3861200, 3.1}, []float64{3843900, 3.0})
	runs = append(runs, series("rb493g", 680, names, units,
		[]float64{4321000, 3.4}, []float64{4330100, 3.5}, []float64{4318800, 3.4}, []float64{4325000, 3.4})...)
	return append(runs, series("hap-ac2", 716, names, units, []float64{9000000, 20.5})...)
}

func TestCompareGolden(t *testing.T) {
	tests := []struct {
		name string
		runs []Run
		opts CompareOptions
	}{
		{"design", designRuns(), CompareOptions{By: ByClock, Board: "rb450g"}},
		{"stats", statRuns(), CompareOptions{By: ByClock, Board: "rb450g"}},
		{"boards", boardRuns(), CompareOptions{By: ByBoard, Boards: []string{"rb450g", "rb493g"}}},
		// One board named: every other board is a candidate, alphabetically.
		{"boards-all", boardRuns(), CompareOptions{By: ByBoard, Board: "rb493g"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fillStore(t, tt.runs)
			c, err := s.Compare(context.Background(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var js, txt bytes.Buffer
			if err := WriteCompareJSON(&js, c); err != nil {
				t.Fatal(err)
			}
			if err := WriteCompareText(&txt, c); err != nil {
				t.Fatal(err)
			}
			golden(t, "compare-"+tt.name+".json", js.Bytes())
			golden(t, "compare-"+tt.name+".txt", txt.Bytes())
			for i, line := range strings.Split(txt.String(), "\n") {
				if strings.TrimRight(line, " ") != line {
					t.Errorf("text line %d has trailing blanks: %q", i+1, line)
				}
			}
		})
	}
}

// TestCompareDesignExample reproduces DESIGN.md's compare JSON from the
// published RB450G 680 → 800 MHz figures.
func TestCompareDesignExample(t *testing.T) {
	s := fillStore(t, designRuns())
	c, err := s.Compare(context.Background(), CompareOptions{By: ByClock, Board: "rb450g"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCompareJSON(&buf, c); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// DESIGN.md's example, with the verdict's explanation that follows
	// the "n<4" token.
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
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("compare JSON\n got %s\nwant %s", g, w)
	}
}

func TestCompareStatistics(t *testing.T) {
	s := fillStore(t, statRuns())
	c, err := s.Compare(context.Background(), CompareOptions{By: ByClock, Board: "rb450g"})
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
}

func TestCompareErrors(t *testing.T) {
	tests := []struct {
		name    string
		runs    []Run
		opts    CompareOptions
		nothing bool   // want ErrNothingToCompare
		msg     string // the error says this
	}{
		{"one clock", designRuns()[:1], CompareOptions{By: ByClock, Board: "rb450g"}, true, "only 680 MHz"},
		{"no runs", nil, CompareOptions{By: ByClock, Board: "rb450g"}, true, "no setting"},
		{"only failed runs", statRuns()[8:], CompareOptions{By: ByClock, Board: "rb450g"}, true, "no setting"},
		{"board at two clocks", designRuns(), CompareOptions{By: ByBoard, Boards: []string{"rb450g", "x"}}, false, "680, 800 MHz; pick one"},
		{"unknown board", boardRuns(), CompareOptions{By: ByBoard, Boards: []string{"rb450g", "nope"}}, true, "nope has no ok runs"},
		{"no other board", designRuns(), CompareOptions{By: ByBoard, Board: "rb450g", ClockMHz: 680}, true, "no other board"},
		{"by what", designRuns(), CompareOptions{By: "rep", Board: "rb450g"}, false, `by "rep"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fillStore(t, tt.runs)
			_, err := s.Compare(context.Background(), tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if errors.Is(err, ErrNothingToCompare) != tt.nothing || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q: want ErrNothingToCompare %v, containing %q", err, tt.nothing, tt.msg)
			}
		})
	}
}

func TestCompareFewRuns(t *testing.T) {
	names, units := []string{"sha256@1024"}, []string{"B/s"}
	runs := series("b", 100, names, units, []float64{1}, []float64{2}, []float64{3})
	runs = append(runs, series("b", 200, names, units, []float64{10}, []float64{20}, []float64{30}, []float64{40})...)
	s := fillStore(t, runs)
	c, err := s.Compare(context.Background(), CompareOptions{By: ByClock, Board: "b"})
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
