package results

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Energy is what a run's power meter measured: its samples, from power-on
// to power-off, and the figures derived from them (see results/energy).
// A run on a switch without a meter has none.
type Energy struct {
	// Meter names the meter as its driver does ("tasmota
	// http://198.18.5.7 relay 1"), without credentials.
	Meter string
	// Failed counts the samples the meter did not give.
	Failed int
	// Samples are loaded with a run's transcript (Filter.WithTranscript,
	// a store's Run) or when asked (Filter.WithSamples): a listing leaves
	// them out.
	Samples []PowerSample
	// Spans are the idle span (Name SpanIdle), then one per test, in the
	// order the board ran them.
	Spans []PowerSpan
}

// PowerSample is one reading of the meter.
type PowerSample struct {
	At    time.Duration // since the run started (Run.Started)
	Watts float64
}

// SpanIdle names the span before the benchmark's first test.
const SpanIdle = "idle"

// PowerSpan is a stretch of the run and its power: before the benchmark
// (SpanIdle), or one test, named as its metric ("aes-128-cbc@1024").
type PowerSpan struct {
	Name     string
	From, To time.Duration // since the run started
	// MeanWatts is Joules over the span's length.
	MeanWatts float64
	Joules    float64
	// PerJoule is the test's metric over MeanWatts, in Unit: bytes per
	// joule for a throughput in B/s ("B/J"), operations per joule for
	// ops/s ("ops/J"). 0 and "" for the idle span.
	PerJoule float64
	Unit     string
}

// Idle is e's span before the benchmark; ok is false when there is none.
func (e *Energy) Idle() (PowerSpan, bool) {
	return e.Span(SpanIdle)
}

// Span is e's span called name; ok is false when there is none.
func (e *Energy) Span(name string) (PowerSpan, bool) {
	if e == nil {
		return PowerSpan{}, false
	}
	for _, s := range e.Spans {
		if s.Name == name {
			return s, true
		}
	}
	return PowerSpan{}, false
}

// PerJouleUnit is the energy efficiency's unit for a metric's unit: B/s
// gives B/J, ops/s ops/J; "" when the unit is no rate.
func PerJouleUnit(metricUnit string) string {
	if u, ok := strings.CutSuffix(metricUnit, "/s"); ok && u != "" {
		return u + "/J"
	}
	return ""
}

func (e *Energy) validate(id RunID) error {
	if e == nil {
		return nil
	}
	finite := func(vs ...float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	for _, s := range e.Samples {
		if !finite(s.Watts) {
			return fmt.Errorf("run %s: power sample at %s is %v W", id, s.At, s.Watts)
		}
	}
	for _, s := range e.Spans {
		if s.Name == "" || !finite(s.MeanWatts, s.Joules, s.PerJoule) {
			return fmt.Errorf("run %s: power span %q has no name or a non-finite figure", id, s.Name)
		}
	}
	return nil
}
