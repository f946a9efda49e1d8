// Package energy derives a run's power figures from its meter's samples
// and the benchmark's progress lines: the board's mean power before the
// benchmark (idle), and per test its mean power, its energy in joules and
// its metric per joule (bytes or operations per joule).
//
// When each test ran is read off the benchmark's own progress lines, as
// the host received them. `openssl speed` and bootbench-speed print one
// line per test as it ends, "Doing aes-128-cbc for 3s on 1024 size blocks:
// 2231 aes-128-cbc's in 2.99s"; the board sends it in a frame at once (a
// frame per output line), so the line's arrival on the console is the
// test's end, a few milliseconds late, and the time it states is its
// length. That needs nothing new on the board and holds for real openssl
// as for the built-in suite, where markers sent by benchinit would only see
// a benchmark's start and end, not its tests.
package energy

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

// Line is one line of the benchmark's output and when the host had it
// whole, since the run started.
type Line struct {
	At   time.Duration
	Text string
}

// Derive computes the spans of a run: the idle span, from power-on to the
// first test's start, then one per test whose progress line names its
// metric, in the order they ran; a test run several times (repetitions)
// is one span over all its runs. Without samples, or without a test read
// off the lines, there are none.
func Derive(samples []results.PowerSample, poweredOn time.Duration, lines []Line, metrics []results.Metric) []results.PowerSpan {
	tests := testSpans(lines)
	if len(samples) == 0 || len(tests) == 0 {
		return nil
	}
	idle := results.PowerSpan{Name: results.SpanIdle, From: poweredOn, To: tests[0].from}
	spans := []results.PowerSpan{measure(idle, samples)}
	unit := map[string]results.Metric{}
	for _, m := range metrics {
		unit[m.Name] = m
	}
	index := map[string]int{}
	for _, t := range tests {
		s := measure(results.PowerSpan{Name: t.name, From: t.from, To: t.to}, samples)
		if i, ok := index[t.name]; ok {
			spans[i] = merge(spans[i], s)
			continue
		}
		index[t.name] = len(spans)
		spans = append(spans, s)
	}
	for i := range spans[1:] {
		s := &spans[i+1]
		if m, ok := unit[s.Name]; ok && s.MeanWatts > 0 {
			s.PerJoule, s.Unit = m.Value/s.MeanWatts, results.PerJouleUnit(m.Unit)
		}
	}
	return spans
}

// measure fills in a span's joules and mean watts.
func measure(s results.PowerSpan, samples []results.PowerSample) results.PowerSpan {
	s.Joules = Joules(samples, s.From, s.To)
	if d := (s.To - s.From).Seconds(); d > 0 {
		s.MeanWatts = s.Joules / d
	} else {
		s.MeanWatts = wattsAt(samples, s.From)
	}
	return s
}

// merge is one test's span over two of its runs: from the first's start to
// the last's end, with the energy of both and the mean power over the time
// they ran (not the gap between them).
func merge(a, b results.PowerSpan) results.PowerSpan {
	d := (a.To - a.From) + (b.To - b.From)
	a.To = b.To
	a.Joules += b.Joules
	if d > 0 {
		a.MeanWatts = a.Joules / d.Seconds()
	}
	return a
}

// Joules is the energy from from to to: the trapezoid rule over the
// samples, the power between two samples taken as the straight line
// between them, and before the first or after the last as that sample's.
func Joules(samples []results.PowerSample, from, to time.Duration) float64 {
	if to <= from || len(samples) == 0 {
		return 0
	}
	// The points the integral passes: from, the samples inside, to.
	at := []time.Duration{from}
	w := []float64{wattsAt(samples, from)}
	for _, s := range samples {
		if s.At > from && s.At < to {
			at, w = append(at, s.At), append(w, s.Watts)
		}
	}
	at, w = append(at, to), append(w, wattsAt(samples, to))
	var j float64
	for i := 1; i < len(at); i++ {
		j += (w[i-1] + w[i]) / 2 * (at[i] - at[i-1]).Seconds()
	}
	return j
}

// wattsAt is the power at t, between samples on the straight line joining
// them (samples are in time order).
func wattsAt(samples []results.PowerSample, t time.Duration) float64 {
	if t <= samples[0].At {
		return samples[0].Watts
	}
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if t <= b.At {
			f := float64(t-a.At) / float64(b.At-a.At)
			return a.Watts + f*(b.Watts-a.Watts)
		}
	}
	return samples[len(samples)-1].Watts
}

// test is one test's time, read off its progress line.
type test struct {
	name     string
	from, to time.Duration
}

func testSpans(lines []Line) []test {
	var tests []test
	for _, l := range lines {
		name, took, ok := Test(l.Text)
		if !ok {
			continue
		}
		from := max(l.At-took, 0)
		tests = append(tests, test{name: name, from: from, to: l.At})
	}
	return tests
}

// progress is openssl's and bootbench-speed's line for a finished test:
// "Doing aes-128-cbc for 3s on 1024 size blocks: 2231 aes-128-cbc's in
// 2.99s" (3.x with -evp: "Doing AES-128-CBC ops for 3s on ..."; 1.1:
// "Doing aes-128 cbc for 3s on ..."), and the public-key tests' "Doing
// 2048 bits private rsa's for 10s: 1879 2048 bits private RSA's in 9.69s".
var (
	throughputRE = regexp.MustCompile(`^Doing (.+?)(?: ops)? for \S+ on (\d+) size blocks: \d+ .* in (\d+(?:\.\d+)?)s\s*$`)
	pkeyRE       = regexp.MustCompile(`^Doing (\d+) bits (private rsa|public rsa|sign dsa|verify dsa|sign Ed25519|verify Ed25519|\s*ffdh)'s for \S+: \d+ .* in (\d+(?:\.\d+)?)s\s*$`)
)

// pkeyMetric names the public-key tests whose progress line says which
// metric they measure. ECDSA and ECDH lines give the curve's bits, not
// the curve (P-256 and brainpoolP256r1 both say 256): they get no span.
var pkeyMetric = map[string]string{
	"private rsa":    "rsa{bits}-sign",
	"public rsa":     "rsa{bits}-verify",
	"sign dsa":       "dsa{bits}-sign",
	"verify dsa":     "dsa{bits}-verify",
	"sign Ed25519":   "ed25519-sign",
	"verify Ed25519": "ed25519-verify",
	"ffdh":           "ffdh{bits}",
}

// Test reads a finished test's progress line: the metric it measured and
// how long it ran, as the line says. ok is false for any other line.
func Test(line string) (metric string, took time.Duration, ok bool) {
	var secs string
	if m := throughputRE.FindStringSubmatch(line); m != nil {
		size, err := strconv.Atoi(m[2])
		if err != nil {
			return "", 0, false
		}
		metric, secs = parse.ThroughputName(m[1], size), m[3]
	} else if m := pkeyRE.FindStringSubmatch(line); m != nil {
		metric = strings.Replace(pkeyMetric[strings.TrimSpace(m[2])], "{bits}", m[1], 1)
		secs = m[3]
	} else {
		return "", 0, false
	}
	s, err := strconv.ParseFloat(secs, 64)
	if err != nil {
		return "", 0, false
	}
	return metric, time.Duration(s * float64(time.Second)), true
}
