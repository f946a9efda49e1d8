package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/storetest"
)

func exportRuns() []results.Run {
	ok := storetest.SampleRun("20250314-150926-qemu-x86_64-1000-2", storetest.T0)
	ok.Metrics = append(ok.Metrics,
		results.Metric{Name: "md5@1024", Unit: "B/s", Value: 16160430},
		results.Metric{Name: "aes-128-cbc@16", Unit: "B/s", Value: 87654321.5},
		results.Metric{Name: "tcp-throughput", Unit: "bit/s", Value: 941000000},
	)
	failed := &results.Run{
		ID:       "20250314-151200-rb450g-680-0",
		Board:    "rb450g",
		ClockMHz: 680,
		Status:   results.StatusFailed,
		Reason:   "no DHCP request within 60s:\n check the bench NIC & <cable>",
		Bench:    "speed",
		Started:  storetest.T0.Add(154 * time.Second).Truncate(time.Second),
	}
	return []results.Run{*ok, *failed}
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, exportRuns()); err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "export.json", buf.Bytes())

	// The documented fields lead each run, in the documented order.
	var doc struct {
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	lead := []string{"id", "board", "clock_mhz", "status", "started", "bench", "metrics"}
	for i, raw := range doc.Runs {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.Token() // {
		for _, key := range lead {
			tok, err := dec.Token()
			if err != nil || tok != key {
				t.Fatalf("run %d: key %v, want %q", i, tok, key)
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
			if key == "metrics" && string(skip) == "null" {
				t.Errorf("run %d: metrics is null", i)
			}
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"value": 28782800`)) {
		t.Error("integer value not printed as a plain number")
	}
}

func TestWriteJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(buf.String()); got != `{
  "runs": []
}` {
		t.Errorf("got %s", got)
	}
}

func TestWriteTableGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, exportRuns()); err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "list.txt", buf.Bytes())
}

func TestWriteMetricsGolden(t *testing.T) {
	var buf bytes.Buffer
	r := exportRuns()[0]
	if err := WriteMetrics(&buf, &r); err != nil {
		t.Fatal(err)
	}
	storetest.Golden(t, "metrics.txt", buf.Bytes())
}

func TestWriteMetricsOrder(t *testing.T) {
	r := &results.Run{Metrics: []results.Metric{
		{Name: "md5@8192", Unit: "B/s", Value: 3}, {Name: "md5@1024", Unit: "B/s", Value: 2}, {Name: "md5@16", Unit: "B/s", Value: 1},
	}}
	var buf bytes.Buffer
	if err := WriteMetrics(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	a, b, c := strings.Index(out, "md5@16 "), strings.Index(out, "md5@1024"), strings.Index(out, "md5@8192")
	if !(a >= 0 && a < b && b < c) {
		t.Errorf("md5 rows out of order:\n%s", out)
	}
	if r.Metrics[0].Name != "md5@8192" {
		t.Error("WriteMetrics reordered the caller's slice")
	}
}
