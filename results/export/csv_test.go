package export

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
)

func csvRuns() []results.Run {
	runs := exportRuns()
	// A board name that needs quoting, and values that %g would print
	// in exponent form.
	odd := *storetest.SampleRun("20250314-160000-odd-0", storetest.T0.Add(7*time.Minute))
	odd.Board = `lab "A", shelf 2`
	odd.Metrics = []results.Metric{
		{Name: "aes-128-cbc@16384", Unit: "B/s", Value: 123456789012},
		{Name: "ed25519-sign", Unit: "ops/s", Value: 0.000125},
	}
	return append(runs, odd)
}

func TestCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, csvRuns()); err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "export.csv", buf.Bytes())
}

func TestCSVReadsBack(t *testing.T) {
	runs := csvRuns()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, runs); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(recs[0], csvHeader) {
		t.Fatalf("header %q", recs[0])
	}
	want := 0
	for _, r := range runs {
		want += max(1, len(r.Metrics))
	}
	if len(recs)-1 != want {
		t.Errorf("%d data rows, want %d (one per run and metric, one for a run without)", len(recs)-1, want)
	}
	col := map[string]int{}
	for i, h := range csvHeader {
		col[h] = i
	}
	byRunMetric := map[[2]string]float64{}
	for _, r := range runs {
		for _, m := range r.Metrics {
			byRunMetric[[2]string{string(r.ID), m.Name}] = m.Value
		}
	}
	for _, rec := range recs[1:] {
		v := rec[col["value"]]
		if rec[col["metric"]] == "" {
			if v != "" || rec[col["status"]] == results.StatusOK {
				t.Errorf("row without metric: %q", rec)
			}
			continue
		}
		if strings.ContainsAny(v, "eE") {
			t.Errorf("value %q in exponent form", v)
		}
		got, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		if w := byRunMetric[[2]string{rec[col["run"]], rec[col["metric"]]}]; got != w {
			t.Errorf("%s %s = %v, want %v", rec[col["run"]], rec[col["metric"]], got, w)
		}
	}
	if got := recs[len(recs)-1][col["board"]]; got != `lab "A", shelf 2` {
		t.Errorf("board read back as %q", got)
	}
}
