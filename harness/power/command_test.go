package power

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// newCommandDriver makes a command driver whose commands run in dir.
func newCommandDriver(t *testing.T, spec boards.PowerSpec) Driver {
	t.Helper()
	spec.Driver = boards.PowerCommand
	d, err := New("pc1", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCommandOnOffCycle(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	// Each command notes what it was, its board and what its stdin held.
	note := func(what string) string {
		return "echo " + what + " $BOOTBENCH_BOARD $(cat | wc -c) >> " + log
	}
	tests := []struct {
		name  string
		spec  boards.PowerSpec
		cycle bool
		want  string
	}{
		{"on", boards.PowerSpec{On: note("on"), Off: note("off")}, false, "on pc1 0\n"},
		{"cycle without a cycle command: off, on", boards.PowerSpec{On: note("on"), Off: note("off"), Delay: 10 * time.Millisecond}, true, "off pc1 0\non pc1 0\n"},
		{"cycle command", boards.PowerSpec{On: note("on"), Off: note("off"), Cycle: note("cycle")}, true, "cycle pc1 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(log)
			d := newCommandDriver(t, tt.spec)
			var err error
			if tt.cycle {
				err = Cycle(context.Background(), d, tt.spec.Delay)
			} else {
				err = d.On(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, log); got != tt.want {
				t.Errorf("commands ran as %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCommandFails(t *testing.T) {
	d := newCommandDriver(t, boards.PowerSpec{
		On:  "echo switching; echo 'relay: no such device' >&2; exit 3",
		Off: "echo 'only stdout says why'; exit 1",
	})
	err := d.On(context.Background())
	if err == nil {
		t.Fatal("On succeeded, want the exit status")
	}
	for _, want := range []string{"pc1", "exit status 3", "relay: no such device"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if !strings.HasSuffix(err.Error(), "exit status 3: relay: no such device") {
		t.Errorf("error %q does not end with stderr's last line", err)
	}
	if err := d.Off(context.Background()); err == nil || !strings.Contains(err.Error(), "only stdout says why") {
		t.Errorf("Off: %v, want stdout's last line when stderr is empty", err)
	}
}

// A command that starts a long-running child which keeps stdout and stderr
// (as `qemu … &` does) must not hold the driver up.
func TestCommandBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	d := newCommandDriver(t, boards.PowerSpec{
		On:  "sleep 60 & echo $! > " + pidFile + "; echo started",
		Off: "kill $(cat " + pidFile + ")",
	})
	start := time.Now()
	if err := d.On(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("On took %s with a child holding its output", took)
	}
	if !alive(pid) {
		t.Fatalf("the background child %d did not survive On", pid)
	}
	if err := d.Off(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCommandCancelKillsWhatItWaitsFor(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	d := newCommandDriver(t, boards.PowerSpec{On: "sleep 60 & echo $! > " + pidFile + "; wait", Off: "true"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !fileHas(pidFile) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	err := d.On(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("On: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled On took %s", took)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	waitGone(t, pid)
}

func TestCommandTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	d := newCommandDriver(t, boards.PowerSpec{On: "sleep 60 & echo $! > " + pidFile + "; wait", Off: "true"})
	d.(*command).timeout = 300 * time.Millisecond
	err := d.On(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no exit within 300ms") || !strings.Contains(err.Error(), "background") {
		t.Fatalf("On: %v, want a timeout that says to background long-running work", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, pidFile)))
	waitGone(t, pid)
}

func fileHas(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.HasSuffix(string(b), "\n")
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d outlived the command", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
