package harness

// What a run meets when the world around it fails: a store that does not
// take the run, a bootbench killed while the board was on.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// switchLog is a power switch that remembers what it was told.
type switchLog struct{ said []string }

func (s *switchLog) On(ctx context.Context) error  { s.said = append(s.said, "on"); return nil }
func (s *switchLog) Off(ctx context.Context) error { s.said = append(s.said, "off"); return nil }
func (s *switchLog) String() string                { return "the test's switch" }

// TestWiredLeftOn: a board switched on is recorded until it is switched
// off; a record whose process is gone (a bootbench killed with SIGKILL)
// gets the board switched off by the next one, which says so; a live
// process's record is left alone.
func TestWiredLeftOn(t *testing.T) {
	ctx := context.Background()
	rec := filepath.Join(t.TempDir(), "power-pc1")
	sw := &switchLog{}
	w := &Wired{Driver: sw, PowerRecord: rec}
	if err := w.On(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(rec, "owner")); err != nil || string(b) != fmt.Sprintf("%d \n", os.Getpid()) {
		t.Fatalf("record after On: %q, %v", b, err)
	}
	if said, err := w.SweepLeftOn(ctx); said != "" || err != nil {
		t.Errorf("SweepLeftOn of our own run: %q, %v", said, err)
	}
	if err := w.Off(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rec); err == nil {
		t.Error("record left after Off")
	}

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(rec, 0o755)
	os.WriteFile(filepath.Join(rec, "owner"), fmt.Appendf(nil, "%d \n", dead.Process.Pid), 0o644)
	sw.said = nil
	said, err := w.SweepLeftOn(ctx)
	if err != nil || said != "switched off: a bootbench that was killed had left it on (its switch: the test's switch)" || len(sw.said) != 1 || sw.said[0] != "off" {
		t.Errorf("SweepLeftOn after a kill: %q, %v; switch told %v", said, err, sw.said)
	}
	if _, err := os.Stat(rec); err == nil {
		t.Error("record left after the sweep")
	}
	if said, err := w.SweepLeftOn(ctx); said != "" || err != nil {
		t.Errorf("SweepLeftOn with no record: %q, %v", said, err)
	}
}

// awayStore is a store that cannot be reached.
type awayStore struct{ saves int }

func (a *awayStore) SaveRun(ctx context.Context, r *results.Run) error {
	a.saves++
	return errors.New("results: save run " + string(r.ID) + ": dial tcp 198.18.7.7:5432: connect: no route to host")
}

// TestNotStored: a run its store does not take comes back whole with a
// NotStoredError that carries both the run's own outcome and the store's
// error, said once in the progress; the run is not dropped.
func TestNotStored(t *testing.T) {
	o := fakeOptions(t, &leakyTarget{}, boards.Profile{})
	away := &awayStore{}
	o.Store, o.Retries = away, 0
	var progress strings.Builder
	o.Progress = &progress
	rec, err := Run(context.Background(), o.Job, o.Rig)
	var ns *NotStoredError
	if rec == nil || !errors.As(err, &ns) || ns.Run != rec.ID || away.saves != 1 {
		t.Fatalf("Run = %+v, %v (%d saves); want the run back with a NotStoredError", rec, err, away.saves)
	}
	if Kind(err) != FailBootTimeout || Kind(Outcome(err)) != FailBootTimeout || rec.Status != results.StatusFailed {
		t.Errorf("outcome %v, status %s: want the run's own failure kept", Outcome(err), rec.Status)
	}
	if !strings.Contains(ns.Err.Error(), "no route to host") || strings.Count(err.Error(), "no route to host") != 1 {
		t.Errorf("error %q: want the store's error once", err)
	}
	if n := strings.Count(progress.String(), "unstored run "+string(rec.ID)+": failed, 0 metrics: results: save run"); n != 1 {
		t.Errorf("progress says it %d times:\n%s", n, progress.String())
	}
	if Outcome(errors.New("x")).Error() != "x" || Outcome(nil) != nil {
		t.Error("Outcome of an error that is not a NotStoredError is the error")
	}
}
