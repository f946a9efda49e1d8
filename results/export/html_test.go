package export

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
)

// htmlFixtureRuns is a small bench history: an RB450G at two clocks with
// three runs each (one failed boot among them) and a QEMU board running the
// built-in suite.
func htmlFixtureRuns() []*results.Run {
	base := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	var runs []*results.Run
	n := 0
	add := func(board string, clock boards.MHz, rep int, status, reason, tool, version string, stages []results.Stage, ms ...results.Metric) {
		started := base.Add(time.Duration(n) * 5 * time.Minute)
		n++
		runs = append(runs, &results.Run{
			ID:    results.RunID(fmt.Sprintf("%s-%s-%d-%d", started.Format("20060102-150405"), board, clock, rep)),
			Board: board, ClockMHz: clock, Rep: rep, Status: status, Reason: reason,
			Bench: "openssl", Tool: tool, ToolVersion: version,
			Started: started, Finished: started.Add(time.Minute),
			Stages: stages, Metrics: ms,
		})
	}
	boot := func(dhcp, tftp, kernel, bench float64) []results.Stage {
		s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
		return []results.Stage{{Name: "dhcp", Duration: s(dhcp)}, {Name: "tftp", Duration: s(tftp)}, {Name: "kernel", Duration: s(kernel)}, {Name: "bench", Duration: s(bench)}}
	}
	rb := func(scale float64) []results.Metric {
		return []results.Metric{
			{Name: "md5@1024", Unit: "B/s", Value: float64(int(16160430 * scale))},
			{Name: "sha256@1024", Unit: "B/s", Value: float64(int(3850580 * scale))},
			{Name: "aes-128-cbc@1024", Unit: "B/s", Value: float64(int(3849560 * scale))},
			{Name: "rsa2048-sign", Unit: "ops/s", Value: float64(int(30*scale)) / 10},
			{Name: "rsa2048-verify", Unit: "ops/s", Value: float64(int(1085*scale)) / 10},
		}
	}
	for rep, j := range []float64{1.0, 0.98, 1.01} {
		add("rb450g", 680, rep, results.StatusOK, "", "openssl", "0.9.8k", boot(1.2+0.1*float64(rep), 3.4, 7.9, 31), rb(2.27*j)...)
	}
	for rep, j := range []float64{1.0, 1.02} {
		add("rb450g", 800, rep, results.StatusOK, "", "openssl", "0.9.8k", boot(1.1, 3.3+0.2*float64(rep), 7.7, 27), rb(2.67*j)...)
	}
	add("rb450g", 800, 2, results.StatusFailed, "no DHCP request within 60s: check the bench NIC", "", "", []results.Stage{{Name: "dhcp", Duration: 60 * time.Second}})
	for rep, j := range []float64{1.0, 1.03} {
		add("qemu-x86_64", 1000, rep, results.StatusOK, "", "bootbench-speed", "0.1.0", boot(0.4, 0.9, 2.1, 12),
			results.Metric{Name: "md5@1024", Unit: "B/s", Value: 612345678 * j},
			results.Metric{Name: "sha256@1024", Unit: "B/s", Value: 298765432 * j},
			results.Metric{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 1234567890 * j},
			results.Metric{Name: "ed25519-sign", Unit: "ops/s", Value: 41234.5 * j},
		)
	}
	return runs
}

// htmlFixtureStore stores htmlFixtureRuns and loads them back, so the
// report is rendered from what the store returns.
func htmlFixtureStore(t *testing.T, e storetest.Engine) []results.Run {
	t.Helper()
	s := e.Open(t)
	ctx := context.Background()
	for _, r := range htmlFixtureRuns() {
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestHTMLGolden(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, htmlFixtureStore(t, e)); err != nil {
			t.Fatal(err)
		}
		storetest.Golden(t, "report.html", buf.Bytes())
	})
}

// TestHTMLSelfContained checks the report needs nothing from elsewhere:
// it must open offline, from a mail attachment or a CI artifact.
func TestHTMLSelfContained(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, htmlFixtureStore(t, e)); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		for _, bad := range []string{"http://", "https://", "<script", "<link", "<img", "<iframe", "@import", "url(", " src="} {
			if strings.Contains(page, bad) {
				t.Errorf("report contains %q", bad)
			}
		}
		for _, href := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(href[1], "#") {
				t.Errorf("link to %q leaves the page", href[1])
			}
		}
		if strings.Contains(page, "ZgotmplZ") {
			t.Error("html/template rejected a value (ZgotmplZ in output)")
		}
		for _, want := range []string{
			"<h2>Boards compared</h2>", `<h2 id="board-rb450g">rb450g</h2>`, `<h2 id="board-qemu-x86_64">qemu-x86_64</h2>`,
			"<b>aes-128-cbc@1024</b>", "<b>rsa2048-sign</b>", "whiskers: min–max", "<h3>Boot stages</h3>",
			"no DHCP request within 60s", "680 MHz (n=3)", "800 MHz (n=2)",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("report lacks %q", want)
			}
		}
		if n := strings.Count(page, "<svg "); n != 4+4+3+2 {
			// board comparison (4 headline metrics), rb450g clocks (4),
			// qemu clocks (3: no rsa2048-sign), one stage chart per board.
			t.Errorf("%d charts, want 13", n)
		}
	})
}

func TestHTMLEscapes(t *testing.T) {
	r := *storetest.SampleRun(`x"><script>alert(1)</script>`, storetest.T0)
	r.Board = `<b>board & co</b>`
	r.Reason = `<img src=x onerror=alert(1)>`
	r.Status = results.StatusFailed
	var buf bytes.Buffer
	if err := WriteHTML(&buf, []results.Run{r}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script>alert", "<b>board", "<img src"} {
		if strings.Contains(page, bad) {
			t.Errorf("unescaped %q in report", bad)
		}
	}
	if !strings.Contains(page, "&lt;b&gt;board &amp; co&lt;/b&gt;") {
		t.Error("board name not shown escaped")
	}
}

func TestHTMLEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No runs match.") {
		t.Errorf("empty report:\n%s", buf.String())
	}
}

func TestHTMLNiceScale(t *testing.T) {
	tests := []struct {
		in, top, step float64
	}{
		{0, 1, 0.25},
		{1, 1, 0.25},
		{3.1, 4, 1},
		{9.2, 10, 2.5},
		{108.5, 150, 50},
		{3849560, 4e6, 1e6},
		{16160430, 20e6, 5e6},
		{60, 60, 20},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			top, step := htmlNiceScale(tt.in)
			if top < tt.in {
				t.Errorf("top %v below %v", top, tt.in)
			}
			if n := top / step; n < 2 || n > 5 {
				t.Errorf("%v ticks", n)
			}
			if top != tt.top || step != tt.step {
				t.Errorf("htmlNiceScale(%v) = %v, %v; want %v, %v", tt.in, top, step, tt.top, tt.step)
			}
		})
	}
}

func TestHTMLCompact(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{2.5, "2.5"},
		{108.6, "109"},
		{1000, "1k"},
		{3849560, "3.85M"},
		{16160430, "16.2M"},
		{1234567890, "1.23G"},
		{0.25, "0.25"},
	}
	for _, tt := range tests {
		if got := htmlCompact(tt.in); got != tt.want {
			t.Errorf("htmlCompact(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestExportWritersEmpty: every format copes with a filter that matched
// nothing, as `results export --board typo` gives.
func TestExportWritersEmpty(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer, []results.Run) error{
		"openwrt":              func(b *bytes.Buffer, r []results.Run) error { return WriteOpenWrt(b, r) },
		"openwrt with setting": func(b *bytes.Buffer, r []results.Run) error { return WriteOpenWrtSettings(b, r) },
		"csv":                  func(b *bytes.Buffer, r []results.Run) error { return WriteCSV(b, r) },
		"json":                 func(b *bytes.Buffer, r []results.Run) error { return WriteJSON(b, r) },
		"gobench":              func(b *bytes.Buffer, r []results.Run) error { return WriteGobench(b, r) },
		"html":                 func(b *bytes.Buffer, r []results.Run) error { return WriteHTML(b, r) },
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// htmlEnergyRuns are two metered runs of a QEMU board at one clock, its
// plug reading 2 W idle and more while a test runs, and one run whose
// switch had no meter.
func htmlEnergyRuns() []*results.Run {
	base := time.Date(2026, 12, 3, 13, 0, 0, 0, time.UTC)
	var runs []*results.Run
	for rep, extra := range []float64{0, 0.2, -1} {
		started := base.Add(time.Duration(rep) * 2 * time.Minute)
		r := &results.Run{
			ID: results.RunID(fmt.Sprintf("%s-pc1-%d", started.Format("20060102-150405"), rep)), Board: "pc1", Rep: rep,
			Status: results.StatusOK, Bench: "speed", Tool: "bootbench-speed", ToolVersion: "0.1.0",
			Started: started, Finished: started.Add(40 * time.Second),
			Metrics: []results.Metric{
				{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 51_200_000 * (1 + extra/10)},
				{Name: "aes-128-cbc@16384", Unit: "B/s", Value: 52_428_800 * (1 + extra/10)},
			},
		}
		runs = append(runs, r)
		if extra < 0 {
			continue // no meter
		}
		e := &results.Energy{Meter: "tasmota http://198.18.5.7 relay 1"}
		for i := 0; i <= 40; i++ {
			w := 2.0 + extra
			if i >= 36 && i < 39 {
				w = 4.5 + extra // the tests
			}
			e.Samples = append(e.Samples, results.PowerSample{At: time.Duration(i)*time.Second + 300*time.Millisecond, Watts: w})
		}
		watts := 4.5 + extra
		e.Spans = []results.PowerSpan{
			{Name: results.SpanIdle, From: 0, To: 36 * time.Second, MeanWatts: 2 + extra, Joules: 36 * (2 + extra)},
			{Name: "aes-128-cbc@1024", From: 36 * time.Second, To: 37 * time.Second, MeanWatts: watts, Joules: watts, PerJoule: r.Metrics[0].Value / watts, Unit: "B/J"},
			{Name: "aes-128-cbc@16384", From: 37 * time.Second, To: 38 * time.Second, MeanWatts: watts, Joules: watts, PerJoule: r.Metrics[1].Value / watts, Unit: "B/J"},
		}
		r.Energy = e
	}
	return runs
}

// TestHTMLEnergy: a board's runs with a meter get a power section: their
// samples drawn over time, and per test the median watts, joules and bytes
// per joule; the runs of the other board have none.
func TestHTMLEnergy(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		ctx := context.Background()
		for _, r := range append(htmlEnergyRuns(), htmlFixtureRuns()[6:]...) {
			if err := s.SaveRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx, results.Filter{WithSamples: true})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteHTML(&buf, runs); err != nil {
			t.Fatal(err)
		}
		storetest.Golden(t, "report-energy.html", buf.Bytes())
		page := buf.String()
		for _, want := range []string{
			"<h3>Power</h3>", "2 of 3 runs had a power meter (tasmota http://198.18.5.7 relay 1)", "<b>power while running</b>",
			// idle: medians of 2.0 and 2.2 W over 36 s
			"<tr><td><code>idle</code></td><td></td><td class=\"num\">2.10</td><td class=\"num\">75.6</td><td class=\"num\"></td></tr>",
			// aes at 1024: 4.6 W median; 51.2M B/s over 4.5 W and 52.224M over 4.7 W, 11.38M and 11.11M B/J
			"<tr><td><code>aes-128-cbc@1024</code></td><td>B/J</td><td class=\"num\">4.60</td><td class=\"num\">4.6</td><td class=\"num\">11.2M</td></tr>",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("report lacks %q", want)
			}
		}
		if n := strings.Count(page, "<h3>Power</h3>"); n != 1 {
			t.Errorf("%d power sections, want pc1's alone", n)
		}
		if n := strings.Count(page, "<circle "); n != 2*41 {
			t.Errorf("%d samples drawn, want 82", n)
		}
		if n := strings.Count(page, ": the tests, 36.0–38.0 s</title></rect>"); n != 2 {
			t.Errorf("%d runs' tests shaded, want 2", n)
		}
	})
}

// TestHeadline: a run's headline figures are the report's charted
// metrics it has, in the charts' order, labelled as the charts label them.
func TestHeadline(t *testing.T) {
	for _, tt := range []struct {
		name    string
		metrics []results.Metric
		want    []Figure
	}{
		{"none", nil, nil},
		{"not charted", []results.Metric{{Name: "md5@16", Unit: "B/s", Value: 1e6}}, nil},
		{"speed suite, two algorithms", []results.Metric{
			{Name: "md5@1024", Unit: "B/s", Value: 226674710},
			{Name: "sha256@16", Unit: "B/s", Value: 4391740},
			{Name: "sha256@1024", Unit: "B/s", Value: 24149630},
		}, []Figure{{"sha256@1024", "24.1M bytes/s"}, {"md5@1024", "227M bytes/s"}}},
		{"public key", []results.Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: 12.5}, {Name: "aes-128-cbc@1024", Unit: "B/s", Value: 3.85e6}},
			[]Figure{{"aes-128-cbc@1024", "3.85M bytes/s"}, {"rsa2048-sign", "12.5 operations/s"}}},
	} {
		got := Headline(&results.Run{Metrics: tt.metrics})
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestHTMLEnergyThrottled: a metered run that was throttled is drawn in
// the power chart, named as throttled, and left out of the table's
// medians as the report's other tables leave it out.
func TestHTMLEnergyThrottled(t *testing.T) {
	runs := htmlEnergyRuns()
	hot := runs[1]
	hot.Status = results.StatusThrottled
	hot.Throttle = &results.Throttle{Heat: &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 86000, AtMS: 500}}
	var all []results.Run
	for _, r := range runs {
		all = append(all, *r)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, all); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"(" + string(hot.ID) + ", throttled)</span>",
		"(" + string(runs[0].ID) + ")</span>",
		// idle: run 0's 2.0 W alone, not the median with the throttled run's 2.2
		"<tr><td><code>idle</code></td><td></td><td class=\"num\">2.00</td><td class=\"num\">72.0</td><td class=\"num\"></td></tr>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
