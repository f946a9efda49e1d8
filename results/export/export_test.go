package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results"
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
		// Its console showed RouterBOOT's banner before the netboot
		// failed.
		Bootloader:       "RouterBOOT 2.41",
		FirmwareClockMHz: 680,
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

// energyRun is a run whose plug had a meter: samples, idle, two tests.
func energyRun() results.Run {
	r := *storetest.SampleRun("20261203-133147-e0201368", storetest.T0)
	r.Metrics = []results.Metric{{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 9350150}, {Name: "rsa2048-sign", Unit: "op/s", Value: 812.5}}
	r.Energy = &results.Energy{
		Meter: "tasmota http://198.18.5.7 relay 1", Failed: 1,
		Samples: []results.PowerSample{{At: 4 * time.Second, Watts: 5}, {At: 5 * time.Second, Watts: 2.4}, {At: 6 * time.Second, Watts: 3.1}},
		Spans: []results.PowerSpan{
			{Name: results.SpanIdle, From: 3900 * time.Millisecond, To: 19500 * time.Millisecond, MeanWatts: 3.3612, Joules: 52.43472},
			{Name: "aes-128-cbc@1024", From: 19500 * time.Millisecond, To: 20505 * time.Millisecond, MeanWatts: 2.87, Joules: 2.88435, PerJoule: 9350150 / 2.87, Unit: "B/J"},
			{Name: "rsa2048-sign", From: 20505 * time.Millisecond, To: 21505 * time.Millisecond, MeanWatts: 3.25, Joules: 3.25, PerJoule: 250, Unit: "op/J"},
		},
	}
	return r
}

// TestWriteEnergy: results show's power table, and nothing for a run
// without a meter.
func TestWriteEnergy(t *testing.T) {
	r := energyRun()
	var buf bytes.Buffer
	if err := WriteEnergy(&buf, &r); err != nil {
		t.Fatal(err)
	}
	want := `
power    tasmota http://198.18.5.7 relay 1: 3 samples, 1 failed
SPAN                MEAN W     JOULES   SECONDS  PER JOULE
idle                  3.36      52.43     15.60  -
aes-128-cbc@1024      2.87       2.88      1.00  3257890 B/J
rsa2048-sign          3.25       3.25      1.00  250 op/J
`
	if buf.String() != want {
		t.Errorf("WriteEnergy:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	r.Energy = nil
	if err := WriteEnergy(&buf, &r); err != nil || buf.Len() != 0 {
		t.Errorf("WriteEnergy without a meter wrote %q, %v", buf.String(), err)
	}
}

// TestWriteJSONEnergy: a metered run's JSON has its meter, samples and
// spans; an unmetered one has no energy field.
func TestWriteJSONEnergy(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []results.Run{energyRun(), exportRuns()[1]}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			Energy *struct {
				Meter   string `json:"meter"`
				Failed  int    `json:"failed_samples"`
				Samples []struct {
					Seconds float64 `json:"seconds"`
					Watts   float64 `json:"watts"`
				} `json:"samples"`
				Spans []map[string]any `json:"spans"`
			} `json:"energy"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	e := got.Runs[0].Energy
	if e == nil || e.Meter != "tasmota http://198.18.5.7 relay 1" || e.Failed != 1 || len(e.Samples) != 3 || e.Samples[1].Seconds != 5 || e.Samples[1].Watts != 2.4 {
		t.Fatalf("energy %+v", e)
	}
	aes := e.Spans[1]
	if aes["name"] != "aes-128-cbc@1024" || aes["from_seconds"] != 19.5 || aes["to_seconds"] != 20.505 || aes["mean_watts"] != 2.87 || aes["unit"] != "B/J" || aes["per_joule"] != 9350150/2.87 {
		t.Errorf("aes span %v", aes)
	}
	if _, ok := e.Spans[0]["per_joule"]; ok {
		t.Errorf("idle span %v has a per-joule figure", e.Spans[0])
	}
	var raw struct{ Runs []map[string]json.RawMessage }
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if e, ok := raw.Runs[1]["energy"]; ok {
		t.Errorf("the run without a meter has energy %s", e)
	}
}

// TestJSONWriterIsTheWholeDocument: runs written one at a time make, byte
// for byte, the document encoding/json indents from all of them at once
// (the export before it streamed), with no runs, one, or several.
func TestJSONWriterIsTheWholeDocument(t *testing.T) {
	all := exportRuns()
	for _, n := range []int{0, 1, len(all)} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			whole := struct {
				Runs []jsonRun `json:"runs"`
			}{Runs: []jsonRun{}}
			for i := range all[:n] {
				whole.Runs = append(whole.Runs, jsonRunOf(&all[i]))
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(whole); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteJSON(&got, all[:n]); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("streamed:\n%s\nwhole:\n%s", got.String(), want.String())
			}
		})
	}
}
