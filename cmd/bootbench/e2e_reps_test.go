package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results/compare"
)

// TestE2ERepsAuto is --reps auto on the virtual PC, as README's "How many
// runs?" shows it: `run --clock 1000,500 --reps auto --target-ci 1% --algs
// md5,sha256` stops at fewer rounds than its most, every ratio's interval
// within ±1 %, and every ratio 2.00 ± 0.02 (QEMU's instruction count
// makes the clocks). results compare, run by the user, prints the same
// intervals.
func TestE2ERepsAuto(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	db := filepath.Join(t.TempDir(), "results.db")
	start := time.Now()
	r := bootbench(t, db, "run", "--clock", "1000,500", "--reps", "auto", "--target-ci", "1%", "--algs", "md5,sha256")
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	end := regexp.MustCompile(`reps auto: every interval within ±1 % after (\d+) runs of each setting \((\d+) judged; widest ±([0-9.]+) %`).FindStringSubmatch(r.stdout)
	if end == nil {
		t.Fatalf("run does not say its intervals came within ±1 %%:\n%s\n%s", r.stdout, r.stderr)
	}
	rounds, _ := strconv.Atoi(end[1])
	if rounds >= boards.DefaultMaxReps {
		t.Errorf("stopped after %d rounds, not before the most (%d)", rounds, boards.DefaultMaxReps)
	}
	if runs := storedRuns(t, db); len(runs) != 2*rounds {
		t.Errorf("%d runs stored, want %d (2 clocks × %d)", len(runs), 2*rounds, rounds)
	}
	c := bootbench(t, db, "results", "compare", "--by", "clock", "--board", "qemu-x86_64", "--format", "json")
	var doc struct {
		Comparisons []struct {
			Metrics []struct {
				Name      string   `json:"name"`
				Ratio     *float64 `json:"ratio"`
				CILow     *float64 `json:"ci_low"`
				CIHigh    *float64 `json:"ci_high"`
				HalfWidth *float64 `json:"ci_half_width"`
			} `json:"metrics"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(c.stdout), &doc); err != nil || c.code != 0 || len(doc.Comparisons) != 1 {
		t.Fatalf("compare: exit %d, %v:\n%s%s", c.code, err, c.stdout, c.stderr)
	}
	ms := doc.Comparisons[0].Metrics
	if judged, _ := strconv.Atoi(end[2]); len(ms) != judged || len(ms) < 12 {
		t.Errorf("compare has %d metrics, run judged %s; want the 12 or more of md5 and sha256", len(ms), end[2])
	}
	widest := 0.0
	for _, m := range ms {
		if m.Ratio == nil || m.HalfWidth == nil || m.CILow == nil || m.CIHigh == nil {
			t.Errorf("%s: no ratio or interval", m.Name)
			continue
		}
		if math.Abs(*m.Ratio-2) > 0.02 || *m.CILow < 1.98 || *m.CIHigh > 2.02 || *m.HalfWidth > 0.01 {
			t.Errorf("%s: ratio %.4f, interval %.4f–%.4f (±%.2f %%); want 2.00 ± 0.02 within ±1 %%", m.Name, *m.Ratio, *m.CILow, *m.CIHigh, *m.HalfWidth*100)
		}
		widest = math.Max(widest, *m.HalfWidth)
	}
	if got := compare.HalfWidthText(widest); got != end[3]+" %" {
		t.Errorf("run stopped on ±%s %%, compare's widest is ±%s", end[3], got)
	}
	text := bootbench(t, db, "results", "compare", "--by", "clock", "--board", "qemu-x86_64", "--target-ci", "1%")
	var progress []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "reps auto") {
			progress = append(progress, l)
		}
	}
	t.Logf("%d runs in %s\nrun's progress:\n%s\nrun's end:\n%s\nresults compare --target-ci 1%%:\n%s", 2*rounds, took.Round(time.Second),
		strings.Join(progress, "\n"), r.stdout[strings.LastIndex(r.stdout, "stored in"):], text.stdout)
}
