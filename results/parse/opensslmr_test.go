package parse

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/openssl-0.9.8k-mr-derived.txt is not a capture: no 0.9.8 -mr
// output from a board was at hand, so it was derived from the real
// openssl-0.9.8k-rb450-300mhz.txt the way 0.9.8's apps/speed.c prints
// -mr: "+H:" and the block sizes; "+F:<index>:<name>:<bytes/s %.2f>..."
// with 0.9.8's two-word names and their indices in its names[] table;
// "+F2:"/"+F3:<index>:<bits>:<sign s>:<verify s>" with the seconds per
// operation the human table printed (%f, so no precision lost); and the
// `openssl version` line first, as a user running both would capture.
// Only stdout is there: the stderr progress lines would need counts the
// human table does not keep.

// TestOpenSSLMRDerivedMatchesHuman checks that the -mr parser reads the
// derived 0.9.8k sample to the figures the human parser reads from the
// table it was derived from.
func TestOpenSSLMRDerivedMatchesHuman(t *testing.T) {
	human := mustParseFile(t, "openssl-0.9.8k-rb450-300mhz.txt", func(b []byte) (*Output, error) { return OpenSSL(bytes.NewReader(b)) })
	mr := mustParseFile(t, "openssl-0.9.8k-mr-derived.txt", func(b []byte) (*Output, error) { return OpenSSLMR(bytes.NewReader(b), "") })
	if mr.Version != "0.9.8k" {
		t.Errorf("version %q, want 0.9.8k", mr.Version)
	}
	if len(mr.Metrics) != len(human.Metrics) {
		t.Fatalf("%d metrics from -mr, %d from the human table", len(mr.Metrics), len(human.Metrics))
	}
	for i, h := range human.Metrics {
		m := mr.Metrics[i]
		if m.Name != h.Name || m.Unit != h.Unit {
			t.Errorf("metric %d: -mr %s %s, human %s %s", i, m.Name, m.Unit, h.Name, h.Unit)
			continue
		}
		// Throughput is the same figure, exactly. Sign/verify rates the
		// human table rounds to 0.1/s, while -mr gives seconds rounded to
		// 1µs, so 1/seconds is off by up to rate²·0.5µs.
		tol := 0.0
		if h.Unit == UnitOpsPerSec {
			tol = 0.05 + h.Value*h.Value*0.5e-6
		}
		if math.Abs(m.Value-h.Value) > tol {
			t.Errorf("%s: -mr %v, human %v", h.Name, m.Value, h.Value)
		}
	}
}

func mustParseFile(t *testing.T, name string, parse func([]byte) (*Output, error)) *Output {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	out, err := parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestOpenSSLMR30 pins figures of the real 3.0 capture.
func TestOpenSSLMR30(t *testing.T) {
	out := mustParseFile(t, "openssl-3.0.22-mr.txt", Auto)
	if out.Tool != "openssl" || out.Version != "" {
		t.Errorf("tool, version = %q, %q; want openssl and none (-mr prints none)", out.Tool, out.Version)
	}
	want := map[string]float64{
		"md5@16":            64414468.09,
		"sha256@1024":       1480155136.00,
		"aes-128-cbc@16384": 1418250778.95,
		"rsa2048-sign":      3197.938144,
		"rsa2048-verify":    52759.793814,
		"ecdsa-p256-sign":   48678.350515,
		"ecdsa-p256-verify": 16190.909091,
	}
	checkMetrics(t, out, want)
}

func checkMetrics(t *testing.T, out *Output, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	for _, m := range out.Metrics {
		got[m.Name] = m.Value
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s missing from %v", name, out.Metrics)
		} else if g != w {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
}

func TestOpenSSLMRCases(t *testing.T) {
	derived, err := os.ReadFile(filepath.Join("testdata", "openssl-0.9.8k-mr-derived.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, derivedNoVersion, _ := strings.Cut(string(derived), "\n")
	const rsa = "+F2:2:2048:0.002000:0.000050\n"
	tests := []struct {
		name    string
		in      string
		hint    string
		version string
		want    []Metric
	}{
		{
			name: "no version: 1.1.1+ rates",
			in:   "+F2:2:2048:3197.9:52759.8\n",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: 3197.9}, {Name: "rsa2048-verify", Unit: "ops/s", Value: 52759.8}},
		},
		{
			name: "hint 1.0.2u: seconds per op", in: rsa, hint: "1.0.2u", version: "1.0.2u",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: inv(0.002)}, {Name: "rsa2048-verify", Unit: "ops/s", Value: inv(0.00005)}},
		},
		{
			name: "hint as openssl version prints it, 1.1.0", in: rsa, hint: "OpenSSL 1.1.0l  10 Sep 2019", version: "1.1.0l",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: inv(0.002)}, {Name: "rsa2048-verify", Unit: "ops/s", Value: inv(0.00005)}},
		},
		{
			name: "hint 1.1.1w: rates", in: "+F2:2:2048:500:20000\n", hint: "1.1.1w", version: "1.1.1w",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: 500}, {Name: "rsa2048-verify", Unit: "ops/s", Value: 20000}},
		},
		{
			name: "version line after the figures beats the hint", in: rsa + "OpenSSL 1.0.2u  20 Dec 2019\n", hint: "3.0.13", version: "1.0.2u",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: inv(0.002)}, {Name: "rsa2048-verify", Unit: "ops/s", Value: inv(0.00005)}},
		},
		{
			name: "3.x version line", in: "version: 3.0.13\n+F2:2:2048:500:20000\n", version: "3.0.13",
			want: []Metric{{Name: "rsa2048-sign", Unit: "ops/s", Value: 500}, {Name: "rsa2048-verify", Unit: "ops/s", Value: 20000}},
		},
		{
			name: "derived 0.9.8k without its version line, hint", in: derivedNoVersion, hint: "0.9.8k", version: "0.9.8k",
			want: nil, // checked below
		},
		{
			name: "ecdh before 1.1.1: seconds then rate", in: "+F5:3:256:0.000500:2000.000000\n+F5:16:253:0.000100:10000.000000\n", hint: "1.1.0l", version: "1.1.0l",
			want: []Metric{{Name: "ecdh-p256", Unit: "ops/s", Value: 2000}, {Name: "ecdh-x25519", Unit: "ops/s", Value: 10000}},
		},
		{
			name: "ecdh from 1.1.1: rate then seconds", in: "+F5:3:256:19696.1:0.000051\n+F5:23:448:5000:0.0002\n",
			want: []Metric{{Name: "ecdh-p256", Unit: "ops/s", Value: 19696.1}, {Name: "ecdh-x448", Unit: "ops/s", Value: 5000}},
		},
		{
			name: "curves told apart by index",
			in:   "+F4:7:233:20:10\n+F4:12:233:21:11\n+F4:16:256:22:12\n+F4:17:256:23:13\n+F4:21:512:25:15\n+F4:5:521:26:16\n",
			want: []Metric{
				{Name: "ecdsa-k233-sign", Unit: "ops/s", Value: 20}, {Name: "ecdsa-k233-verify", Unit: "ops/s", Value: 10},
				{Name: "ecdsa-b233-sign", Unit: "ops/s", Value: 21}, {Name: "ecdsa-b233-verify", Unit: "ops/s", Value: 11},
				{Name: "ecdsa-brainpoolp256r1-sign", Unit: "ops/s", Value: 22}, {Name: "ecdsa-brainpoolp256r1-verify", Unit: "ops/s", Value: 12},
				{Name: "ecdsa-brainpoolp256t1-sign", Unit: "ops/s", Value: 23}, {Name: "ecdsa-brainpoolp256t1-verify", Unit: "ops/s", Value: 13},
				{Name: "ecdsa-brainpoolp512t1-sign", Unit: "ops/s", Value: 25}, {Name: "ecdsa-brainpoolp512t1-verify", Unit: "ops/s", Value: 15},
				{Name: "ecdsa-p521-sign", Unit: "ops/s", Value: 26}, {Name: "ecdsa-p521-verify", Unit: "ops/s", Value: 16},
			},
		},
		{
			name: "3.x built without binary curves: brainpool from index 6",
			in:   "+F4:6:256:24:14\n+F4:11:512:25:15\n",
			want: []Metric{
				{Name: "ecdsa-brainpoolp256r1-sign", Unit: "ops/s", Value: 24}, {Name: "ecdsa-brainpoolp256r1-verify", Unit: "ops/s", Value: 14},
				{Name: "ecdsa-brainpoolp512t1-sign", Unit: "ops/s", Value: 25}, {Name: "ecdsa-brainpoolp512t1-verify", Unit: "ops/s", Value: 15},
			},
		},
		{
			name: "eddsa, sm2, ffdh, 3.2 rsa, kem skipped",
			in: "+F6:0:253:Ed25519:23692.0:8358.2\n+F6:1:456:Ed448:5000:3000\n+F7:0:256:CurveSM2:1500:1200\n" +
				"+F8:0:2048:2933.3:0.000341\n+F2:2:2048:1594.0:52604.9:51413.8:1582.2\n+F9:0:100.0:200.0:300.0\n",
			want: []Metric{
				{Name: "ed25519-sign", Unit: "ops/s", Value: 23692}, {Name: "ed25519-verify", Unit: "ops/s", Value: 8358.2},
				{Name: "ed448-sign", Unit: "ops/s", Value: 5000}, {Name: "ed448-verify", Unit: "ops/s", Value: 3000},
				{Name: "sm2-sign", Unit: "ops/s", Value: 1500}, {Name: "sm2-verify", Unit: "ops/s", Value: 1200},
				{Name: "ffdh2048", Unit: "ops/s", Value: 2933.3},
				{Name: "rsa2048-sign", Unit: "ops/s", Value: 1594}, {Name: "rsa2048-verify", Unit: "ops/s", Value: 52604.9},
				{Name: "rsa2048-encrypt", Unit: "ops/s", Value: 51413.8}, {Name: "rsa2048-decrypt", Unit: "ops/s", Value: 1582.2},
			},
		},
		{
			name: "progress lines, CRLF, 0.9.8 two-word names, zeros",
			in: "+DT:aes-128 cbc:3:16\r\n+R:123:aes-128 cbc:3.00\r\n+H:16:64\r\n+F:16:aes-128 cbc:1000.00:0.00\r\n" +
				"[   12.3] random: crng init done\r\n+DTP:2048:private:rsa:10\r\n+R1:31:2048:10.00\r\n+F:8:des cbc:5000.50:6000.00\r\n",
			want: []Metric{{Name: "aes-128-cbc@16", Unit: "B/s", Value: 1000}, {Name: "des-cbc@16", Unit: "B/s", Value: 5000.5}, {Name: "des-cbc@64", Unit: "B/s", Value: 6000}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := OpenSSLMR(strings.NewReader(tt.in), tt.hint)
			if err != nil {
				t.Fatal(err)
			}
			if out.Tool != "openssl" || out.Version != tt.version {
				t.Errorf("tool, version = %q, %q; want openssl, %q", out.Tool, out.Version, tt.version)
			}
			if tt.want == nil {
				checkMetrics(t, out, map[string]float64{"rsa2048-sign": inv(0.334333), "dsa512-verify": inv(0.010416), "md5@1024": 16160430})
				return
			}
			if len(out.Metrics) != len(tt.want) {
				t.Fatalf("metrics %v, want %v", out.Metrics, tt.want)
			}
			for i := range tt.want {
				if withoutLine(out.Metrics[i]) != tt.want[i] {
					t.Errorf("metric %d = %v, want %v", i, out.Metrics[i], tt.want[i])
				}
			}
		})
	}
}

// withoutLine is m as the cases spell it, without the line it came from.
func withoutLine(m Metric) Metric {
	m.Line = 0
	return m
}

// inv is 1/x computed at run time as the parser does, not as an exact
// constant, which can differ in the last bit.
func inv(x float64) float64 { return 1 / x }

func TestOpenSSLMRErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty", "", 1, "no openssl speed -mr results"},
		{"progress only", "+DT:md5:3:16\n+R:1:md5:3.00\n", 1, "no openssl speed -mr results"},
		{"+F before +H", "OpenSSL 1.0.2u\n+F:3:md5:1.00:2.00\n", 2, "before the +H"},
		{"truncated +F", "+H:16:64:256\n+F:3:md5:1.00:2.00:3.00\n+F:5:sha1:1.00:2.00\n", 3, "sha1 has 2 figures"},
		{"bad block size", "+H:16:sixty-four\n", 1, `"sixty-four"`},
		{"bad figure", "+H:16\n+F:3:md5:1e\n", 2, `"1e"`},
		{"truncated +F2", "+F2:2:2048:0.1\n", 1, "at least 4"},
		{"three rsa figures", "+F2:2:2048:1:2:3\n", 1, "want 2 or 4"},
		{"unknown curve", "+F4:9:256:1:2\n", 1, "which 256-bit curve"},
		{"all zero", "x\n+H:16\n+F:3:md5:0.00\n", 2, "no figures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenSSLMR(strings.NewReader(tt.in), "")
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("err = %v, want line %d mentioning %q", err, tt.line, tt.msg)
			}
		})
	}
	// A version hint that is no version is the caller's mistake, not the
	// output's.
	_, err := OpenSSLMR(strings.NewReader("+F2:2:2048:1:2\n"), "latest")
	var pe *Error
	if err == nil || errors.As(err, &pe) {
		t.Errorf("bad hint: err = %v, want a non-*Error", err)
	}
}

func TestSecondsPerOp(t *testing.T) {
	for v, want := range map[string]bool{
		"0.9.8k": true, "1.0.1": true, "1.0.2u": true, "1.1.0l": true, "1.1.0": true,
		"1.1.1": false, "1.1.1w": false, "3.0.13": false, "3.5.0": false, "": false, "unknown": false,
	} {
		if got := secondsPerOp(v); got != want {
			t.Errorf("secondsPerOp(%q) = %v, want %v", v, got, want)
		}
	}
}
