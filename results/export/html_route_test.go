package export

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// A route run's report draws throughput against packet size: a line per
// configuration in the usual order, the direct baseline dashed, a dot per
// figure with its value as the tooltip.
func TestHTMLRouteChart(t *testing.T) {
	var ms []results.Metric
	for _, c := range []struct {
		config string
		scale  float64
	}{{"stateful", 0.5}, {"direct", 10}, {"plain", 1}, {"firewall", 0.8}, {"conntrack", 0.6}} {
		for _, size := range []string{"64", "512", "1460"} {
			v := map[string]float64{"64": 10e6, "512": 60e6, "1460": 150e6}[size] * c.scale
			ms = append(ms, results.Metric{Name: "tcp-throughput@" + size + "/" + c.config, Unit: "bit/s", Value: v}, results.Metric{Name: "tcp-retransmits@" + size + "/" + c.config, Unit: "count", Value: 0})
		}
	}
	run := results.Run{ID: "r1", Board: "qemu-x86_64", ClockMHz: 1000, Status: results.StatusOK, Bench: "route", Tool: "iperf3", ToolVersion: "3.12",
		Started: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC), Metrics: ms}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, []results.Run{run}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if !strings.Contains(html, "<b>tcp-throughput by packet size</b>") {
		t.Fatalf("no route chart:\n%s", html)
	}
	if strings.Contains(html, "udp-throughput by packet size") {
		t.Error("a UDP chart without UDP figures")
	}
	lines := regexp.MustCompile(`<g><title>(\w+)</title>\n<polyline points="([^"]*)" fill="none" stroke="([^"]*)" stroke-width="2"( stroke-dasharray="6 4")?/>`).FindAllStringSubmatch(html, -1)
	var order []string
	for _, l := range lines {
		order = append(order, l[1])
		if got := len(strings.Fields(l[2])); got != 3 {
			t.Errorf("%s: %d points, want 3", l[1], got)
		}
		if (l[4] != "") != (l[1] == "direct") {
			t.Errorf("%s: dashed %v", l[1], l[4] != "")
		}
	}
	if got := strings.Join(order, " "); got != "plain firewall conntrack stateful direct" {
		t.Errorf("series %q", got)
	}
	for _, label := range []string{">64 B</text>", ">512 B</text>", ">1460 B</text>", "<title>plain at 1460 B: median 150000000 bit/s"} {
		if !strings.Contains(html, label) {
			t.Errorf("report lacks %q", label)
		}
	}
}
