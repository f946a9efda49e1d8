package energy

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

const s = time.Second

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// A meter's samples: 2 W idle, 4 W for a while, 2 W again.
var samples = []results.PowerSample{{At: 0, Watts: 2}, {At: 1 * s, Watts: 2}, {At: 2 * s, Watts: 4}, {At: 3 * s, Watts: 4}, {At: 4 * s, Watts: 2}}

func TestJoules(t *testing.T) {
	tests := []struct {
		name     string
		from, to time.Duration
		want     float64
	}{
		{"flat", 0, 1 * s, 2},
		{"rising: the trapezoid", 1 * s, 2 * s, 3},
		{"between samples: interpolated ends", ms(1500), ms(2500), 0.5*(3+4)/2 + 0.5*4},
		{"the whole run", 0, 4 * s, 2 + 3 + 4 + 3},
		{"before the first sample: its power", -1 * s, 0, 2},
		{"after the last sample: its power", 4 * s, 6 * s, 4},
		{"no time", 2 * s, 2 * s, 0},
		{"backwards", 3 * s, 2 * s, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Joules(samples, tt.from, tt.to); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Joules(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
	if got := Joules(nil, 0, s); got != 0 {
		t.Errorf("Joules without samples = %v", got)
	}
}

func TestTest(t *testing.T) {
	tests := []struct {
		line   string
		metric string
		took   time.Duration
	}{
		{"Doing aes-128-cbc for 1s on 1024 size blocks: 51200 aes-128-cbc's in 1.00s", "aes-128-cbc@1024", s},
		{"Doing md5 for 20ms on 16 size blocks: 163839 md5's in 0.02s", "md5@16", ms(20)},
		{"Doing AES-128-CBC ops for 3s on 16384 size blocks: 2231 AES-128-CBC ops in 2.99s", "aes-128-cbc@16384", ms(2990)},
		{"Doing aes-128 cbc for 3s on 64 size blocks: 2231 aes-128 cbc's in 3.00s", "aes-128-cbc@64", 3 * s},
		{"Doing 2048 bits private rsa's for 10s: 1879 2048 bits private RSA's in 9.69s", "rsa2048-sign", ms(9690)},
		{"Doing 2048 bits public rsa's for 1s: 26908 2048 bits public RSA's in 0.59s", "rsa2048-verify", ms(590)},
		{"Doing 2048 bits verify dsa's for 1s: 2449 2048 bits DSA verify in 0.67s", "dsa2048-verify", ms(670)},
		{"Doing 253 bits sign Ed25519's for 1s: 17769 253 bits Ed25519 signs in 0.75s ", "ed25519-sign", ms(750)},
		{"Doing 2048 bits  ffdh's for 1s: 2376 2048-bits FFDH ops in 0.81s", "ffdh2048", ms(810)},
		// Not a finished test, or not one a metric can be named from.
		{"Doing 256 bits sign ecdsa's for 1s: 1804 256 bits ECDSA signs in 0.69s", "", 0},
		{"Doing aes-128-cbc for 1s on 1024 size blocks: ", "", 0},
		{"version: bootbench-speed 0.1.0 (go1.26.8)", "", 0},
		{"aes-128-cbc  1000.00k  2000.00k", "", 0},
	}
	for _, tt := range tests {
		metric, took, ok := Test(tt.line)
		if metric != tt.metric || took != tt.took || ok != (tt.metric != "") {
			t.Errorf("Test(%q) = %q, %s, %v; want %q, %s", tt.line, metric, took, ok, tt.metric, tt.took)
		}
	}
}

func TestDerive(t *testing.T) {
	aes1k := "Doing aes-128-cbc for 1s on 1024 size blocks: 5000 aes-128-cbc's in 1.00s"
	aes16k := "Doing aes-128-cbc for 1s on 16384 size blocks: 312 aes-128-cbc's in 1.00s"
	metrics := []results.Metric{
		{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 5_120_000},
		{Name: "aes-128-cbc@16384", Unit: "B/s", Value: 5_111_808},
		{Name: "rsa2048-sign", Unit: "op/s", Value: 40},
	}
	idle := results.PowerSpan{Name: "idle", From: 0, To: 2 * s, MeanWatts: 2.5, Joules: 5}
	tests := []struct {
		name      string
		samples   []results.PowerSample
		poweredOn time.Duration
		lines     []Line
		want      []results.PowerSpan
	}{
		{
			name: "two tests", samples: samples,
			lines: []Line{{ms(1200), "version: bootbench-speed 0.1.0 (go1.26.8)"}, {3 * s, aes1k}, {4 * s, aes16k}},
			want: []results.PowerSpan{
				idle,
				{Name: "aes-128-cbc@1024", From: 2 * s, To: 3 * s, MeanWatts: 4, Joules: 4, PerJoule: 1_280_000, Unit: "B/J"},
				{Name: "aes-128-cbc@16384", From: 3 * s, To: 4 * s, MeanWatts: 3, Joules: 3, PerJoule: 5_111_808.0 / 3, Unit: "B/J"},
			},
		},
		{
			name: "idle from power-on", samples: samples, poweredOn: 1 * s,
			lines: []Line{{3 * s, aes1k}},
			want: []results.PowerSpan{
				{Name: "idle", From: 1 * s, To: 2 * s, MeanWatts: 3, Joules: 3},
				{Name: "aes-128-cbc@1024", From: 2 * s, To: 3 * s, MeanWatts: 4, Joules: 4, PerJoule: 1_280_000, Unit: "B/J"},
			},
		},
		{
			name: "a test run twice is one span over both runs", samples: samples,
			lines: []Line{{ms(2500), "Doing aes-128-cbc for 1s on 1024 size blocks: 5000 aes-128-cbc's in 0.50s"}, {4 * s, aes1k}},
			want: []results.PowerSpan{
				{Name: "idle", From: 0, To: 2 * s, MeanWatts: 2.5, Joules: 5},
				// 2 J in 2.0–2.5 s, 3 J in 3–4 s: 5 J in 1.5 s.
				{Name: "aes-128-cbc@1024", From: 2 * s, To: 4 * s, MeanWatts: 5 / 1.5, Joules: 5, PerJoule: 5_120_000 / (5 / 1.5), Unit: "B/J"},
			},
		},
		{
			name: "operations per joule", samples: samples,
			lines: []Line{{3 * s, "Doing 2048 bits private rsa's for 1s: 40 2048 bits private RSA's in 1.00s"}},
			want: []results.PowerSpan{
				idle,
				{Name: "rsa2048-sign", From: 2 * s, To: 3 * s, MeanWatts: 4, Joules: 4, PerJoule: 10, Unit: "op/J"},
			},
		},
		{
			name: "a test without its metric (the run failed) keeps its power", samples: samples,
			lines: []Line{{3 * s, "Doing sha1 for 1s on 64 size blocks: 9 sha1's in 1.00s"}},
			want:  []results.PowerSpan{idle, {Name: "sha1@64", From: 2 * s, To: 3 * s, MeanWatts: 4, Joules: 4}},
		},
		{
			name: "one sample", samples: []results.PowerSample{{At: ms(500), Watts: 3.5}},
			lines: []Line{{3 * s, aes1k}},
			want: []results.PowerSpan{
				{Name: "idle", From: 0, To: 2 * s, MeanWatts: 3.5, Joules: 7},
				{Name: "aes-128-cbc@1024", From: 2 * s, To: 3 * s, MeanWatts: 3.5, Joules: 3.5, PerJoule: 5_120_000 / 3.5, Unit: "B/J"},
			},
		},
		{name: "no samples", lines: []Line{{3 * s, aes1k}}},
		{name: "no test in the output", samples: samples, lines: []Line{{3 * s, "1 packets transmitted"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Derive(tt.samples, tt.poweredOn, tt.lines, metrics)
			if !sameSpans(got, tt.want) {
				t.Errorf("Derive:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// sameSpans compares spans with their figures to a billionth.
func sameSpans(a, b []results.PowerSpan) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		for _, p := range [][2]float64{{x.MeanWatts, y.MeanWatts}, {x.Joules, y.Joules}, {x.PerJoule, y.PerJoule}} {
			if math.Abs(p[0]-p[1]) > 1e-9*max(1, math.Abs(p[1])) {
				return false
			}
		}
		x.MeanWatts, x.Joules, x.PerJoule = y.MeanWatts, y.Joules, y.PerJoule
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
