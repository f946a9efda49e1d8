package harness

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/internal/testkit/frametest"
	"github.com/bootbench/bootbench/results/store"
)

// meteredTarget is a fake board behind a plug with a meter, which answers
// each reading with the next of its answers (the last again when they run
// out).
type meteredTarget struct {
	*fakeTarget
	mu      sync.Mutex
	answers []any // float64 watts or an error
	asked   int
}

func (m *meteredTarget) Meter() power.Meter { return m }

func (m *meteredTarget) Watts(ctx context.Context) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.answers[min(m.asked, len(m.answers)-1)]
	m.asked++
	if err, ok := a.(error); ok {
		return 0, err
	}
	return a.(float64), nil
}

// meteredBoot is a board that reports, waits a second, runs one test for
// a second (its progress line arrives at its end) and sends its result.
func meteredBoot(run string) []string {
	const version, doing = "version: bootbench-speed 0.1.0 (go1.26.8)\n", "Doing md5 for 1s on 1024 size blocks: 86457 md5's in 1.00s\n"
	rest := strings.TrimPrefix(speedOutput, version)
	l := frametest.Board(run, version+doing+rest, version, doing, rest)
	// hello, the version line, the test, the tables, done
	return append(l[:2], append([]string{"<sleep 2s>", l[2], "<sleep 1200ms>"}, l[3:]...)...)
}

// TestRunSamplesTheMeter: a run on a metered switch stores the meter's
// samples from power-on to power-off, counts a failed one without
// failing, and derives idle and the test's power from them.
func TestRunSamplesTheMeter(t *testing.T) {
	target := &meteredTarget{
		fakeTarget: &fakeTarget{boots: []script{meteredBoot}},
		answers:    []any{2.0, errors.New("no answer from the plug"), 6.0},
	}
	o := fakeOptions(t, target, boards.Profile{})
	o.RunTimeout = 10 * time.Second // the test takes its time
	var progress strings.Builder
	o.Progress = &progress
	rec, err := Run(context.Background(), o.Job, o.Rig)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	got, err := o.Store.(*store.Store).Run(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	e := got.Energy
	if e == nil || e.Meter != "fake" || e.Failed != 1 || len(e.Samples) < 2 {
		t.Fatalf("stored energy %+v, want the fake meter's samples with one failed\n%s", e, progress.String())
	}
	if n := strings.Count(progress.String(), "meter sample failed (counted; the run goes on): no answer from the plug"); n != 1 {
		t.Errorf("the failed sample said %d times, want once:\n%s", n, progress.String())
	}
	if !strings.Contains(progress.String(), fmt.Sprintf("1 of %d meter samples failed", len(e.Samples)+1)) {
		t.Errorf("progress does not count the failed samples:\n%s", progress.String())
	}
	for i, s := range e.Samples {
		if s.Watts != 2 && s.Watts != 6 || i > 0 && s.At <= e.Samples[i-1].At || s.At < 0 || s.At > got.Finished.Sub(got.Started) {
			t.Errorf("sample %d: %+v (of %+v)", i, s, e.Samples)
		}
	}
	idle, ok := e.Idle()
	md5, ok2 := e.Span("md5@1024")
	if !ok || !ok2 || len(e.Spans) != 2 {
		t.Fatalf("spans %+v, want idle and md5@1024", e.Spans)
	}
	// The test ran 1 s up to its line's arrival, 2 s after hello.
	if d := (md5.To - md5.From).Seconds(); d != 1 || idle.To != md5.From || idle.From < 0 || idle.To.Seconds() < 1 {
		t.Errorf("idle %+v, md5 %+v: want the test's 1.5 s after the idle span", idle, md5)
	}
	if idle.MeanWatts < 2 || md5.MeanWatts > 6 || md5.MeanWatts <= idle.MeanWatts {
		t.Errorf("idle %.3f W, md5 %.3f W: want 2 W ≤ idle < md5 ≤ 6 W as the meter rose", idle.MeanWatts, md5.MeanWatts)
	}
	if math.Abs(md5.Joules-md5.MeanWatts) > 1e-6 || md5.Unit != "B/J" || math.Abs(md5.PerJoule-88531990/md5.MeanWatts) > 1e-3 {
		t.Errorf("md5 %+v: want joules = mean W × 1 s and 88531990 B/s over its mean W in B/J", md5)
	}
}

// TestRunWithoutMeter: a switch without a meter, or a plug without one,
// is said once; the run goes on and stores no energy.
func TestRunWithoutMeter(t *testing.T) {
	plain := &fakeTarget{boots: []script{lines(hello(frame.HelloBody{}), result())}}
	noMeter := &meteredTarget{
		fakeTarget: &fakeTarget{boots: []script{lines(hello(frame.HelloBody{}), "<sleep 1200ms>", result())}},
		answers:    []any{fmt.Errorf("read fake1's power: %w: Status 8 reports no ENERGY", power.ErrNoMeter)},
	}
	for _, tt := range []struct {
		name   string
		target Target
		said   string
	}{
		{"a switch without", plain, "power    fake has no meter\n"},
		{"a plug without", noMeter, "power    fake has no meter: read fake1's power: the device has no power meter: Status 8 reports no ENERGY\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := fakeOptions(t, tt.target, boards.Profile{})
			var progress strings.Builder
			o.Progress = &progress
			rec, err := Run(context.Background(), o.Job, o.Rig)
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, progress.String())
			}
			if n := strings.Count(progress.String(), "has no meter"); n != 1 || !strings.Contains(progress.String(), tt.said) {
				t.Errorf("said %d times, want once: %q\n%s", n, tt.said, progress.String())
			}
			got, err := o.Store.(*store.Store).Run(context.Background(), rec.ID)
			if err != nil || got.Energy != nil {
				t.Errorf("stored energy %+v, %v; want none", got.Energy, err)
			}
		})
	}
	if noMeter.asked != 1 {
		t.Errorf("a plug without a meter was asked %d times, want once", noMeter.asked)
	}
}
