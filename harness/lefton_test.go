package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
