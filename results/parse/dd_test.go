package parse

import (
	"errors"
	"strings"
	"testing"
)

// The dd testdata besides the GNU 9.1 captures is transcribed from
// published real output, as no such dd was at hand:
//   - dd-gnu-old.txt: coreutils before 8.24 (no "GiB" part), the memory
//     test on noah.org's "Benchmarks" wiki page: "134217728 bytes (134 MB)
//     copied, 0.220513 s, 609 MB/s".
//   - dd-busybox.txt: BusyBox with FEATURE_DD_THIRD_STATUS_LINE, from the
//     test log of Nuvoton-Israel/openbmc pull request 883 (evb-npcm845):
//     "8388608 bytes (8.0MB) copied, 10.029590 seconds, 816.8KB/s".

func TestDD(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		metric string // DD's argument
		want   []Metric
	}{
		{
			// BusyBox's 191.1MB/s is MiB/s; the figure comes from bytes
			// and seconds, not from it.
			name: "busybox", in: "1048576 bytes (1.0MB) copied, 0.005233 seconds, 191.1MB/s\n",
			want: []Metric{{"dd-write", "B/s", 1048576 / ddSecs(0.005233), 1}},
		},
		{
			name: "gnu since 8.24", in: "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 5.2 s, 206 MB/s\n",
			want: []Metric{{"dd-write", "B/s", 1073741824 / ddSecs(5.2), 1}},
		},
		{
			name: "gnu before 8.24, read by argument", in: "1073741824 bytes (1.1 GB) copied, 5.2 s, 206 MB/s\n", metric: "dd-read",
			want: []Metric{{"dd-read", "B/s", 1073741824 / ddSecs(5.2), 1}},
		},
		{
			name: "gnu, few bytes, exponent", in: "3 bytes copied, 9.44e-05 s, 31.8 kB/s\n",
			want: []Metric{{"dd-write", "B/s", 3 / ddSecs(9.44e-05), 1}},
		},
		{
			name: "bsd", in: "67108864 bytes transferred in 0.009185 secs (7306376680 bytes/sec)\n",
			want: []Metric{{"dd-write", "B/s", 67108864 / ddSecs(0.009185), 1}},
		},
		{
			name: "markers override the argument, CRLF, progress skipped",
			in: "# dd-read\r\n" +
				"\r104857600 bytes (105 MB, 100 MiB) copied, 1 s, 105 MB/s\r209715200 bytes (210 MB, 200 MiB) copied, 2 s, 105 MB/s\n" +
				"256+0 records in\r\n256+0 records out\r\n268435456 bytes (268 MB, 256 MiB) copied, 2.5 s, 107 MB/s\r\n" +
				"#dd-write\r\n1048576 bytes (1.0MB) copied, 0.5 seconds, 2.0MB/s\r\n",
			metric: "dd-x",
			want:   []Metric{{"dd-read", "B/s", 268435456 / ddSecs(2.5), 5}, {"dd-write", "B/s", 1048576 / ddSecs(0.5), 7}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := DD(strings.NewReader(tt.in), tt.metric)
			if err != nil {
				t.Fatal(err)
			}
			if out.Tool != "dd" || out.Version != "" {
				t.Errorf("tool, version = %q, %q; want dd and none", out.Tool, out.Version)
			}
			if len(out.Metrics) != len(tt.want) {
				t.Fatalf("metrics %v, want %v", out.Metrics, tt.want)
			}
			for i := range tt.want {
				if out.Metrics[i] != tt.want[i] {
					t.Errorf("metric %d = %v, want %v", i, out.Metrics[i], tt.want[i])
				}
			}
			if tt.metric == "" {
				auto, err := Auto([]byte(tt.in))
				if err != nil || auto.Metrics[0] != tt.want[0] {
					t.Errorf("Auto = %+v, %v; want %v", auto, err, tt.want[0])
				}
			}
		})
	}
}

// ddSecs keeps the divisor a run-time float64, as the parser's is, so the
// quotient rounds the same way.
func ddSecs(s float64) float64 { return s }

// TestDDCaptures pins the testdata figures.
func TestDDCaptures(t *testing.T) {
	for file, want := range map[string]map[string]float64{
		"dd-gnu-coreutils-9.1.txt":         {"dd-write": 67108864 / ddSecs(0.00210228)},
		"dd-gnu-coreutils-9.1-markers.txt": {"dd-write": 16777216 / ddSecs(0.0141379), "dd-read": 16777216 / ddSecs(0.00151052)},
		"dd-gnu-old.txt":                   {"dd-write": 134217728 / ddSecs(0.220513)},
		"dd-busybox.txt":                   {"dd-write": 8388608 / ddSecs(10.029590)},
	} {
		t.Run(file, func(t *testing.T) {
			checkMetrics(t, mustParseFile(t, file, Auto), want)
		})
	}
}

func TestDDErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"nothing", "hello\n", 1, "no dd results"},
		{"truncated", "64+0 records in\n64+0 records out\n67108864 bytes (67 MB, 64 MiB) copied, 0.0021\n", 3, "truncated"},
		{"zero seconds", "512 bytes copied, 0 s, Infinity B/s\n", 1, "no rate"},
		{"dd failed", "dd: failed to open '/dev/mmcblk0': No such file or directory\n", 1, "failure"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DD(strings.NewReader(tt.in), "")
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("err = %v, want line %d mentioning %q", err, tt.line, tt.msg)
			}
		})
	}
	if _, err := DD(strings.NewReader("1 byte copied, 1 s, 1 B/s\n"), "dd write"); err == nil {
		t.Error("metric name with a space accepted")
	}
}
