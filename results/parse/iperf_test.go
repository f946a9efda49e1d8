package parse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIPerfCaptures pins the figure taken from each real capture, where
// the choice between rows matters.
func TestIPerfCaptures(t *testing.T) {
	tests := []struct {
		file    string
		tool    string
		version string
		want    map[string]float64
	}{
		// One stream, no -i: its only row.
		{"iperf-2.1.8-tcp.txt", "iperf", "", map[string]float64{"tcp-throughput": 15998e6}},
		// -P 2 -i 1: the whole-test [SUM] row, not the last interval's
		// (41646) nor a stream's.
		{"iperf-2.1.8-tcp-P2-i1.txt", "iperf", "", map[string]float64{"tcp-throughput": 34334e6}},
		// CSV -i 1: the 0.0-2.0 row, exact.
		{"iperf-2.1.8-csv-i1.txt", "iperf", "", map[string]float64{"tcp-throughput": 23637278506}},
		// CSV -P 2 has no sum row in 2.1: the streams added up.
		{"iperf-2.1.8-csv-P2.txt", "iperf", "", map[string]float64{"tcp-throughput": 25456217403 + 18857078307}},
		{"iperf3-3.12-tcp.txt", "iperf3", "", map[string]float64{"tcp-throughput": 18.4e9, "tcp-throughput-sender": 18.4e9}},
		// -P 2: the [SUM] rows, not stream 5's 9.42 Gbits/sec.
		{"iperf3-3.12-tcp-P2.txt", "iperf3", "", map[string]float64{"tcp-throughput": 18.2e9, "tcp-throughput-sender": 18.2e9}},
		{"iperf3-3.12-tcp-V.txt", "iperf3", "3.12", map[string]float64{"tcp-throughput": 22.0e9}},
		{"iperf3-3.12-json.txt", "iperf3", "3.12", map[string]float64{"tcp-throughput": 20052542138.152843, "tcp-throughput-sender": 20053133662.11887}},
		{"iperf3-3.12-json-P2.txt", "iperf3", "3.12", map[string]float64{"tcp-throughput": 23311322581.403107, "tcp-throughput-sender": 23312196647.6157}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out := mustParseFile(t, tt.file, Auto)
			if out.Tool != tt.tool || out.Version != tt.version {
				t.Errorf("tool, version = %q, %q; want %q, %q", out.Tool, out.Version, tt.tool, tt.version)
			}
			for _, m := range out.Metrics {
				if m.Unit != UnitBitsPerSec {
					t.Errorf("%s in %s, want bit/s", m.Name, m.Unit)
				}
			}
			checkMetrics(t, out, tt.want)
		})
	}
}

func TestIPerfCases(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want float64
	}{
		// The row REFERENCE.md quotes: iperf 2.0's layout, one decimal.
		{"2.0 single stream", "[  3]  0.0-10.0 sec  1120 MBytes   939 Mbits/sec\n", 939e6},
		{
			"2.0 -P 2 -i 5, SUM preferred, CRLF",
			"[ ID] Interval       Transfer     Bandwidth\r\n" +
				"[  4]  0.0- 5.0 sec   280 MBytes   470 Mbits/sec\r\n" +
				"[  3]  0.0- 5.0 sec   281 MBytes   471 Mbits/sec\r\n" +
				"[SUM]  0.0- 5.0 sec   561 MBytes   941 Mbits/sec\r\n" +
				"[  4]  5.0-10.0 sec   280 MBytes   470 Mbits/sec\r\n" +
				"[  3]  0.0-10.0 sec   561 MBytes   471 Mbits/sec\r\n" +
				"[  4]  0.0-10.0 sec   560 MBytes   470 Mbits/sec\r\n" +
				"[SUM]  0.0-10.0 sec  1.10 GBytes   940 Mbits/sec\r\n",
			940e6,
		},
		{"Kbits", "[  3]  0.0-10.0 sec  11.2 MBytes  9.39 Kbits/sec\n", 9390},
		{"Gbits, adaptive", "[  1] 0.0000-2.0012 sec  3.75 GBytes  16.1 Gbits/sec\n", 16.1e9},
		{"bits", "[  3]  0.0-10.0 sec  1175 Bytes   940 bits/sec\n", 940},
		{"-i 1 without -P: the whole-test row", "[  3]  0.0- 1.0 sec   112 MBytes   941 Mbits/sec\n[  3]  1.0- 2.0 sec   112 MBytes   939 Mbits/sec\n[  3]  0.0- 2.0 sec   224 MBytes   940 Mbits/sec\n", 940e6},
		{"2.0 CSV with its -1 sum row", "20140101120000,10.0.0.2,5001,10.0.0.1,40000,3,0.0-10.0,587202560,469762048\n20140101120000,10.0.0.2,5001,10.0.0.1,40001,4,0.0-10.0,587202560,469762048\n20140101120000,10.0.0.2,5001,10.0.0.1,0,-1,0.0-10.0,1174405120,939524096\n", 939524096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, parse := range []func(string) (*Output, error){
				func(s string) (*Output, error) { return IPerf(strings.NewReader(s)) },
				func(s string) (*Output, error) { return Auto([]byte(s)) },
			} {
				out, err := parse(tt.in)
				if err != nil {
					t.Fatal(err)
				}
				if out.Tool != "iperf" || len(out.Metrics) != 1 {
					t.Fatalf("got %+v, want one iperf metric", out)
				}
				if m := out.Metrics[0]; m != (Metric{Name: "tcp-throughput", Unit: "bit/s", Value: tt.want}) {
					t.Errorf("got %v, want tcp-throughput %v bit/s", m, tt.want)
				}
			}
		})
	}
}

func TestIPerfErrors(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) (*Output, error)
		in    string
		line  int
		msg   string
	}{
		{"iperf2 refused", iperfReader, "------------\nClient connecting to 10.0.0.1, TCP port 5001\nconnect failed: Connection refused\n", 3, "failure"},
		{"iperf2 nothing", iperfReader, "hello\n", 1, "no iperf results"},
		{"iperf2 truncated row", iperfReader, "[ ID] Interval       Transfer     Bandwidth\n[  3]  0.0-10.0 sec  1120 MBy\n", 2, "truncated"},
		{"iperf2 udp", iperfReader, "Client connecting to 10.0.0.1, UDP port 5001\n[  3]  0.0-10.0 sec  1.25 MBytes  1.05 Mbits/sec\n", 1, "UDP"},
		{"iperf3 error", iperf3Reader, "Connecting to host 10.0.0.1, port 5201\niperf3: error - unable to connect to server: Connection refused\n", 2, "unable to connect"},
		{"iperf3 no summary", iperf3Reader, "Connecting to host 10.0.0.1, port 5201\n[  5]   0.00-1.00   sec   112 MBytes   941 Mbits/sec    0    376 KBytes\n", 3, "truncated"},
		{"iperf3 udp", iperf3Reader, "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n", 1, "UDP"},
		{"iperf3 json error", iperf3Reader, "{\n\t\"start\":\t{},\n\t\"intervals\":\t[],\n\t\"end\":\t{},\n\t\"error\":\t\"unable to connect to server: Connection refused\"\n}\n", 5, "unable to connect"},
		{"iperf3 json truncated", iperf3Reader, "{\n\t\"start\":\t{\n\t\t\"version\":\t\"iperf 3.12\"\n", 4, "truncated"},
		{"iperf3 json syntax", iperf3Reader, "{\n\t\"start\":\t{\n\t\t\"version\":\t\"iperf 3.12\",,\n", 3, "invalid character"},
		{"iperf3 json udp", iperf3Reader, "{\"start\": {\"test_start\": {\"protocol\": \"UDP\"}},\n\"end\": {\"sum\": {\"bits_per_second\": 1}}}\n", 1, "UDP"},
		{"iperf3 json no sums", iperf3Reader, "{\"start\": {\"version\": \"iperf 3.12\"},\n\"end\": {}}\n", 2, "sum_received"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.parse(tt.in)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("err = %v, want line %d mentioning %q", err, tt.line, tt.msg)
			}
		})
	}
}

func iperfReader(s string) (*Output, error)  { return IPerf(strings.NewReader(s)) }
func iperf3Reader(s string) (*Output, error) { return IPerf3(strings.NewReader(s)) }

// IPerf3JSON gives a benchmark that runs iperf3 itself every figure of a
// test, from real captures of iperf3 3.12 -J.
func TestIPerf3JSON(t *testing.T) {
	tests := []struct {
		file string
		want IPerf3Test
	}{
		{"iperf3-3.12-json.txt", IPerf3Test{Version: "3.12", Protocol: "TCP", Received: 20052542138.152843, Sent: 20053133662.11887, Retransmits: 2}},
		// -u -b 20M -l 256 between two namespaces: nothing lost.
		{"iperf3-3.12-udp-J.out", IPerf3Test{Version: "3.12", Protocol: "UDP", Received: 19979868.549707767, Sent: 0, Retransmits: -1}},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := IPerf3JSON(data)
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if tt.want.Protocol == "UDP" {
			tt.want.Sent = got.Sent // checked apart: the client's own figure
			if !(got.Sent >= got.Received) {
				t.Errorf("%s: sent %v < received %v", tt.file, got.Sent, got.Received)
			}
		}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.file, got, tt.want)
		}
	}
	if _, err := IPerf3JSON([]byte(`{"start":{},"end":{},"error":"unable to connect to server: Connection refused"}`)); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("iperf3's own error: %v", err)
	}
}
