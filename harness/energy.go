package harness

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/energy"
)

// sampleEvery is how often a run reads its board's power meter: plugs
// measure about once a second (Tasmota's energy driver, Shelly's meters),
// so asking more often would only read the same figure again.
const sampleEvery = time.Second

// Metered is a Target whose power switch may measure what it passes.
type Metered interface {
	// Meter is the switch's meter; nil when it has none.
	Meter() power.Meter
}

// Meter is w's power driver's meter, if it has one.
func (w *Wired) Meter() power.Meter {
	m, _ := w.Driver.(power.Meter)
	return m
}

// meterOf is t's meter, or nil.
func meterOf(t Target) power.Meter {
	if m, ok := t.(Metered); ok {
		return m.Meter()
	}
	return nil
}

// sampler reads a meter about once a second while the board is on.
type sampler struct {
	r     *run
	meter power.Meter
	// poweredOn is when the board was switched on, since the run started.
	poweredOn time.Duration

	mu      sync.Mutex
	samples []results.PowerSample
	failed  int
	noMeter bool // the device answered that it measures nothing
	// lines are the benchmark's output lines as they arrived, for when
	// each test ran.
	lines []energy.Line
}

// sampleEnergy starts reading the board's meter, just after power-on; the
// returned stop ends it (before power-off). A switch without a meter is
// said once and the run goes on without samples; so does one whose
// samples fail, counted.
func (r *run) sampleEnergy(ctx context.Context) (stop func()) {
	m := meterOf(r.o.Target)
	if m == nil {
		r.say("power", "%s has no meter", r.o.Target)
		return func() {}
	}
	s := &sampler{r: r, meter: m, poweredOn: time.Since(r.start)}
	r.energy = s
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.loop(ctx)
	}()
	return func() {
		cancel()
		<-done
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failed > 0 {
			r.say("power", "%d of %d meter samples failed", s.failed, s.failed+len(s.samples))
		}
	}
}

func (s *sampler) loop(ctx context.Context) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		if !s.sample(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample reads the meter once; false when sampling should stop.
func (s *sampler) sample(ctx context.Context) bool {
	sent := time.Now()
	w, err := s.meter.Watts(ctx)
	if ctx.Err() != nil {
		return false // stopped: the board is being switched off
	}
	// The device measured between sending and answering: the middle of
	// the request is the best guess of when.
	at := sent.Add(time.Since(sent) / 2).Sub(s.r.start)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, power.ErrNoMeter):
		s.noMeter = true
		s.r.say("power", "%s has no meter: %v", s.r.o.Target, err)
		return false
	case err != nil:
		if s.failed == 0 {
			s.r.say("power", "meter sample failed (counted; the run goes on): %v", err)
		}
		s.failed++
	default:
		s.samples = append(s.samples, results.PowerSample{At: at, Watts: w})
	}
	return true
}

// output notes one line of the benchmark's output as it arrived.
func (s *sampler) output(at time.Time, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, energy.Line{At: at.Sub(s.r.start), Text: text})
}

// result is what the meter measured, with the spans derived for metrics;
// nil when the switch turned out to have no meter.
func (s *sampler) result(metrics []results.Metric) *results.Energy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noMeter {
		return nil
	}
	return &results.Energy{
		Meter:   redact.Text(s.r.o.Target.String()),
		Failed:  s.failed,
		Samples: s.samples,
		Spans:   energy.Derive(s.samples, s.poweredOn, s.lines, metrics),
	}
}
