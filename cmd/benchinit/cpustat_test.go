package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
)

// TestParseCPUTimes: busy is everything but idle and iowait; guest time,
// already in user, is not counted twice; a kernel with fewer columns is
// read as far as it goes.
func TestParseCPUTimes(t *testing.T) {
	for _, tt := range []struct {
		name, stat string
		want       cpuTimes
		err        string
	}{
		{"6.1", "cpu  2255 34 2290 22625563 6290 127 456 0 40 0\ncpu0 1132 34 1441 11311718 3675 127 438 0 0 0\nintr 1\n", cpuTimes{busy: 2255 + 34 + 2290 + 127 + 456, total: 2255 + 34 + 2290 + 22625563 + 6290 + 127 + 456, cpus: 1}, ""},
		{"2.4: four columns", "cpu  100 0 50 850\n", cpuTimes{busy: 150, total: 1000}, ""},
		{"not /proc/stat", "intr 1 2\n", cpuTimes{}, "not with the cpu line"},
		{"garbage", "cpu  1 x 2 3 4\n", cpuTimes{}, "invalid syntax"},
	} {
		got, err := parseCPUTimes(tt.stat)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: parseCPUTimes = %+v, %v; want %+v, %q", tt.name, got, err, tt.want, tt.err)
		}
	}
}

// TestCPUWatch: a sample a test, the test's length on the board's clock
// and what of it was not idle between its begin and its end (time the
// kernel counted neither busy nor idle is busy: a softirq run out of
// idle between ticks); take starts afresh; an end without its begin is
// an error.
func TestCPUWatch(t *testing.T) {
	root := t.TempDir()
	stat := func(busy, idle int) {
		t.Helper()
		os.MkdirAll(filepath.Join(root, "proc"), 0o755)
		line := "cpu  " + strconv.Itoa(busy) + " 0 0 " + strconv.Itoa(idle) + " 0 0 0 0 0 0\n"
		if err := os.WriteFile(filepath.Join(root, "proc/stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := newCPUWatch(root)
	start := time.Now()
	var at time.Duration
	w.now = func() time.Time { return start.Add(at) }
	steps := []struct {
		busy, idle int
		at         time.Duration
		cmd        string
	}{
		{100, 1000, 0, "begin 1460/tcp"},
		{190, 1010, time.Second, "end 1460/tcp"},
		{190, 1010, time.Second, "begin 1460/tcp-reverse"},
		{240, 1060, 2 * time.Second, "end 1460/tcp-reverse"},
		{240, 1060, 2 * time.Second, "begin 64/udp"},
		{240, 1120, 3 * time.Second, "end 64/udp"},
	}
	for _, s := range steps {
		stat(s.busy, s.idle)
		at = s.at
		if err := w.command(s.cmd); err != nil {
			t.Fatalf("%s: %v", s.cmd, err)
		}
	}
	want := []frame.CPUSample{{Test: "1460/tcp", Busy: 90, Total: 100}, {Test: "1460/tcp-reverse", Busy: 50, Total: 100}, {Test: "64/udp", Busy: 40, Total: 100}}
	if got := w.take(); !slices.Equal(got, want) {
		t.Errorf("samples %+v, want %+v", got, want)
	}
	if got := w.take(); len(got) != 0 {
		t.Errorf("after take: %+v", got)
	}
	for _, bad := range []string{"end 64/udp", "start 64/udp", "begin", "begin 64/udp x"} {
		if err := w.command(bad); err == nil {
			t.Errorf("cpu %s: no error", bad)
		}
	}
}
