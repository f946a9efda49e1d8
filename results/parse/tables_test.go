package parse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTablesForumPost reads a forum post pasting three openssl speed
// outputs between prose: each output comes out alone, with the figures the
// same output gives in a file of its own, and the lines of the post that
// belong to it.
func TestTablesForumPost(t *testing.T) {
	post := readTestdata(t, "forum-three-tables.txt")
	tables, err := Tables("auto", post, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		file                  string
		version               string
		line, first, last     int
		firstLine, lastMetric string // the span's first line and the last figure's line, as text
	}{
		{"openssl-0.9.8k-rb450-300mhz.txt", "0.9.8k", 3, 1, 37, "Here are the numbers from my RB450 at 300 MHz, stock OpenWrt:", "dsa 2048 bits"},
		{"openssl-3.0.19-speed.txt", "3.0.19", 99, 38, 118, "", "dsa 2048 bits"},
		{"openssl-3.0.22-pkey.txt", "3.0.22", 132, 119, 149, "", "Hope this helps!"},
	}
	if len(tables) != len(want) {
		t.Fatalf("%d tables, want %d", len(tables), len(want))
	}
	lines := strings.Split(string(post), "\n")
	for i, w := range want {
		got := tables[i]
		alone, err := Auto(readTestdata(t, w.file))
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != w.version || got.Line != w.line || got.FirstLine != w.first || got.LastLine != w.last {
			t.Errorf("table %d: version %q, line %d, lines %d-%d; want %q, %d, %d-%d",
				i+1, got.Version, got.Line, got.FirstLine, got.LastLine, w.version, w.line, w.first, w.last)
		}
		if first := lines[got.FirstLine-1]; first != w.firstLine {
			t.Errorf("table %d starts with %q, want %q", i+1, first, w.firstLine)
		}
		if last := lines[got.LastLine-1]; !strings.HasPrefix(strings.TrimSpace(last), w.lastMetric) {
			t.Errorf("table %d ends with %q, want a line starting %q", i+1, last, w.lastMetric)
		}
		if len(got.Metrics) != len(alone.Metrics) {
			t.Fatalf("table %d: %d metrics, the file alone %d", i+1, len(got.Metrics), len(alone.Metrics))
		}
		for j, m := range got.Metrics {
			if a := alone.Metrics[j]; m.Name != a.Name || m.Unit != a.Unit || m.Value != a.Value {
				t.Errorf("table %d metric %d = %v, the file alone %v", i+1, j, m, a)
			}
		}
	}
}

// TestTablesCases cuts inputs into outputs: at version lines and report
// starts once figures were seen, and where a metric repeats.
func TestTablesCases(t *testing.T) {
	const (
		numbers = "The 'numbers' are in 1000s of bytes per second processed.\n"
		typ     = "type             16 bytes     64 bytes\n"
		md5     = "md5                840.67k     2944.73k\n"
		rsaHead = "                  sign    verify    sign/s verify/s\n"
		rsa     = "rsa 2048 bits 0.334333s 0.009217s      3.0    108.5\n"
	)
	type span struct {
		line, first, last int
		version           string
		metrics           int
	}
	tests := []struct {
		name   string
		format string
		in     string
		want   []span
	}{
		{
			name: "one output spans the input", format: "openssl",
			in:   "OpenSSL 0.9.8k 25 Mar 2009\n" + numbers + typ + md5 + "\n",
			want: []span{{1, 1, 5, "0.9.8k", 2}},
		},
		{
			name: "two outputs with version lines", format: "openssl",
			in:   "OpenSSL 0.9.8k 25 Mar 2009\n" + numbers + typ + md5 + "Doing md5 for 3s\nOpenSSL 1.1.1w 11 Sep 2023\n" + numbers + typ + md5,
			want: []span{{1, 1, 4, "0.9.8k", 2}, {6, 5, 9, "1.1.1w", 2}},
		},
		{
			name: "tables pasted without version lines: cut at the repeated table's header", format: "openssl",
			in:   typ + md5 + rsaHead + rsa + "\n" + typ + md5 + rsaHead + rsa,
			want: []span{{1, 1, 4, "", 4}, {6, 5, 9, "", 4}},
		},
		{
			name: "a report start without a version line", format: "openssl",
			in:   numbers + typ + md5 + numbers + typ + md5,
			want: []span{{1, 1, 3, "", 2}, {4, 4, 6, "", 2}},
		},
		{
			name: "different algorithms without a boundary are one output", format: "openssl",
			in:   typ + md5 + typ + "sha1               702.42k     1940.59k\n",
			want: []span{{1, 1, 4, "", 4}},
		},
		{
			name: "-mr: a version line after the figures belongs to them", format: "openssl-mr",
			in:   "+H:16:64\n+F:3:md5:1.00:2.00\nOpenSSL 1.0.2u  20 Dec 2019\n",
			want: []span{{1, 1, 3, "1.0.2u", 2}},
		},
		{
			name: "-mr: each +H starts a report with its own block sizes", format: "openssl-mr",
			in:   "+H:16:64\n+F:3:md5:1.00:2.00\n+H:1024\n+F:3:md5:3.00\n",
			want: []span{{1, 1, 2, "", 2}, {3, 3, 4, "", 1}},
		},
		{
			name: "dd: two writes are two runs", format: "dd",
			in:   "1048576 bytes (1.0 MB) copied, 0.5 s, 2.1 MB/s\n1048576 bytes (1.0 MB) copied, 0.25 s, 4.2 MB/s\n",
			want: []span{{1, 1, 1, "", 1}, {2, 2, 2, "", 1}},
		},
		{
			name: "dd: a write and a read are one run", format: "dd",
			in:   "# dd-write\n1048576 bytes (1.0 MB) copied, 0.5 s, 2.1 MB/s\n# dd-read\n1048576 bytes (1.0 MB) copied, 0.25 s, 4.2 MB/s\n",
			want: []span{{2, 1, 4, "", 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tables, err := Tables(tt.format, []byte(tt.in), "")
			if err != nil {
				t.Fatal(err)
			}
			var got []span
			for _, o := range tables {
				got = append(got, span{o.Line, o.FirstLine, o.LastLine, o.Version, len(o.Metrics)})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("tables %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("table %d = %+v, want %+v", i+1, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestParseWithTable picks one output of several, and refuses to guess.
func TestParseWithTable(t *testing.T) {
	post := readTestdata(t, "forum-three-tables.txt")
	tests := []struct {
		name    string
		table   int
		version string // of the output picked; "" for an error
		errHas  string
	}{
		{"none picked", 0, "", "holds 3 benchmark outputs: 1 at line 3 (openssl 0.9.8k: md4, md5, hmac(md5), …); 2 at line 99 (openssl 3.0.19: md5, sha1, sha256, …); 3 at line 132 (openssl 3.0.22: dsa2048-sign, dsa2048-verify, ecdsa-p256-sign, …); pick one"},
		{"first", 1, "0.9.8k", ""},
		{"second", 2, "3.0.19", ""},
		{"third", 3, "3.0.22", ""},
		{"past the end", 4, "", "no table 4: the output holds 3"},
		{"negative", -1, "", "tables count from 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, format := range []string{"auto", "openssl"} {
				out, err := ParseWith(format, post, Options{Table: tt.table})
				if tt.errHas != "" {
					if err == nil || !strings.Contains(err.Error(), tt.errHas) {
						t.Fatalf("%s: err = %v, want one saying %q", format, err, tt.errHas)
					}
					var te *TablesError
					if tt.table == 0 && (!errors.As(err, &te) || len(te.Tables) != 3) {
						t.Errorf("%s: err %T, want a *TablesError with 3 tables", format, err)
					}
					continue
				}
				if err != nil || out.Version != tt.version {
					t.Fatalf("%s: %v, %v; want the output of openssl %s", format, out, err, tt.version)
				}
			}
		})
	}
}

// TestOpenSSLMREra tells seconds per operation (before 1.1.1) from rates
// by the figures' shape when no version says, and refuses when it cannot.
func TestOpenSSLMREra(t *testing.T) {
	derived := string(readTestdata(t, "openssl-0.9.8k-mr-derived.txt"))
	_, noVersion, _ := strings.Cut(derived, "\n")
	real3 := string(readTestdata(t, "openssl-3.0.22-mr.txt"))
	tests := []struct {
		name   string
		in     string
		hint   string
		want   map[string]float64 // some figures; nil: an error
		errHas string
	}{
		{
			// The bug this guards against: 0.334 s per signature read as
			// 0.334 signatures per second.
			name: "0.9.8k without a version line: RSA signing slower than verifying",
			in:   noVersion,
			want: map[string]float64{"rsa2048-sign": inv(0.334333), "rsa2048-verify": inv(0.009217), "dsa2048-sign": inv(0.090541), "md5@1024": 16160430},
		},
		{
			name: "3.0.22 without a version line: rates",
			in:   real3,
			want: map[string]float64{"rsa2048-sign": 3197.938144, "ecdsa-p256-sign": 48678.350515},
		},
		{
			name: "ECDSA alone tells",
			in:   "+F4:3:256:0.000020:0.000060\n",
			want: map[string]float64{"ecdsa-p256-sign": inv(0.000020), "ecdsa-p256-verify": inv(0.000060)},
		},
		{
			name: "ECDH alone tells: seconds first",
			in:   "+F5:3:256:0.000500:2000.000000\n",
			want: map[string]float64{"ecdh-p256": 2000},
		},
		{
			name: "EdDSA exists from 1.1.1",
			in:   "+F3:2:2048:3000:3500\n+F6:0:253:Ed25519:23692.0:8358.2\n",
			want: map[string]float64{"dsa2048-sign": 3000, "ed25519-sign": 23692},
		},
		{
			name: "throughput alone needs no era",
			in:   "+H:16\n+F:3:md5:1000.00\n",
			want: map[string]float64{"md5@16": 1000},
		},
		{
			name: "a version agreeing with the shape",
			in:   "OpenSSL 1.0.2u  20 Dec 2019\n+F2:2:2048:0.002000:0.000050\n",
			want: map[string]float64{"rsa2048-sign": inv(0.002)},
		},
		{
			name:   "a version contradicting the shape",
			in:     "version: 3.0.13\n+F2:2:2048:0.002000:0.000050\n",
			errHas: "openssl 3.0.13 prints public-key figures as operations per second (1.1.1 and later), but these read as seconds per operation (before 1.1.1) (rsa2048 sign 0.002000 > verify 0.000050)",
		},
		{
			name:   "a hint contradicting the shape",
			in:     "+F2:2:2048:3197.9:52759.8\n",
			hint:   "1.0.2u",
			errHas: "openssl 1.0.2u prints public-key figures as seconds per operation",
		},
		{
			name:   "lines disagreeing",
			in:     "+F2:2:2048:0.002:0.00005\n+F6:0:253:Ed25519:23692.0:8358.2\n",
			errHas: "figures disagree on their unit: line 1 reads as seconds per operation",
		},
		{
			name:   "nothing tells",
			in:     "+F3:2:2048:0.0003:0.0003\n",
			errHas: "no version line and figures that do not tell",
		},
		{
			name: "nothing tells, but the hint does",
			in:   "+F3:2:2048:0.0003:0.0004\n",
			hint: "1.0.1u",
			want: map[string]float64{"dsa2048-sign": inv(0.0003), "dsa2048-verify": inv(0.0004)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ParseWith("openssl-mr", []byte(tt.in), Options{ToolVersion: tt.hint})
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) || !errors.Is(err, ErrEra) {
					t.Fatalf("err = %v, want an ErrEra saying %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, out, tt.want)
		})
	}
}

// TestToolVersion fills in what the output does not say and refuses what
// contradicts it.
func TestToolVersion(t *testing.T) {
	dd := "1048576 bytes (1.0 MB) copied, 0.5 s, 2.1 MB/s\n"
	tests := []struct {
		name, format, in, version string
		want                      string // Output.Version; "" for an error
		errHas                    string
	}{
		{"dd says none", "dd", dd, "coreutils 9.1", "coreutils 9.1", ""},
		{"openssl line as given", "openssl", "type 16 bytes\nmd5 1.00k\n", "OpenSSL 1.0.2u  20 Dec 2019", "1.0.2u", ""},
		{"the output's own agrees", "openssl", "OpenSSL 0.9.8k 25 Mar 2009\ntype 16 bytes\nmd5 1.00k\n", "0.9.8k", "0.9.8k", ""},
		{"the output's own disagrees", "openssl", "OpenSSL 0.9.8k 25 Mar 2009\ntype 16 bytes\nmd5 1.00k\n", "1.0.2u", "", "line 1: the output says it is openssl 0.9.8k, not 1.0.2u"},
		{"no openssl version", "openssl", "type 16 bytes\nmd5 1.00k\n", "latest", "", `openssl version "latest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ParseWith(tt.format, []byte(tt.in), Options{ToolVersion: tt.version})
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("err = %v, want one saying %q", err, tt.errHas)
				}
				return
			}
			if err != nil || out.Version != tt.want {
				t.Fatalf("%+v, %v; want version %q", out, err, tt.want)
			}
		})
	}
}
