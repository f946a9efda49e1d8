package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func exportRuns() []Run {
	ok := sampleRun("20250314-150926-qemu-x86_64-1000-2", t0)
	ok.Metrics = append(ok.Metrics,
		Metric{"md5@1024", "B/s", 16160430},
		Metric{"aes-128-cbc@16", "B/s", 87654321.5},
		Metric{"tcp-throughput", "bit/s", 941000000},
	)
	failed := &Run{
		ID:       "20250314-151200-rb450g-680-0",
		Board:    "rb450g",
		ClockMHz: 680,
		Status:   StatusFailed,
		Reason:   "no DHCP request within 60s:\n check the bench NIC & <cable>",
		Bench:    "speed",
		Started:  t0.Add(154 * time.Second).Truncate(time.Second),
	}
	return []Run{*ok, *failed}
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, exportRuns()); err != nil {
		t.Fatal(err)
	}
	golden(t, "export.json", buf.Bytes())

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
	golden(t, "list.txt", buf.Bytes())
}

func TestWriteMetricsGolden(t *testing.T) {
	var buf bytes.Buffer
	r := exportRuns()[0]
	if err := WriteMetrics(&buf, &r); err != nil {
		t.Fatal(err)
	}
	golden(t, "metrics.txt", buf.Bytes())
}

func TestSortMetrics(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			"block sizes numerically",
			[]string{"md5@8192", "md5@1024", "md5@16", "md5@256", "md5@64", "md5@16384"},
			[]string{"md5@16", "md5@64", "md5@256", "md5@1024", "md5@8192", "md5@16384"},
		},
		{
			"algorithm then block",
			[]string{"sha256@16", "aes-128-cbc@1024", "sha1@1024", "aes-128-cbc@16", "sha256@1024", "sha512@16"},
			[]string{"aes-128-cbc@16", "aes-128-cbc@1024", "sha1@1024", "sha256@16", "sha256@1024", "sha512@16"},
		},
		{
			"throughput before ops, key sizes naturally",
			[]string{"tcp-throughput", "rsa4096-sign", "rsa512-sign", "md5@16", "rsa2048-verify", "rsa2048-sign", "dd-write"},
			[]string{"md5@16", "dd-write", "rsa512-sign", "rsa2048-sign", "rsa2048-verify", "rsa4096-sign", "tcp-throughput"},
		},
		{
			"non-numeric suffix is not a block",
			[]string{"x@abc", "x@2", "x@10"},
			[]string{"x@2", "x@10", "x@abc"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := make([]Metric, len(tt.in))
			for i, n := range tt.in {
				ms[i] = Metric{Name: n}
			}
			SortMetrics(ms)
			var got []string
			for _, m := range ms {
				got = append(got, m.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestWriteMetricsOrder(t *testing.T) {
	r := &Run{Metrics: []Metric{
		{"md5@8192", "B/s", 3}, {"md5@1024", "B/s", 2}, {"md5@16", "B/s", 1},
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

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{28782800, "28782800"},
		{1e15, "1000000000000000"},
		{123.4, "123.4"},
		{0.126, "0.13"},
		{16160.43, "16160.43"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.in); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
