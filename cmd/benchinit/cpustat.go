package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/internal/frame"
)

// cpuTimes is /proc/stat's first line, every CPU's time in clock ticks,
// split into busy and all.
type cpuTimes struct {
	busy, total uint64
}

// parseCPUTimes reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice (older kernels stop earlier).
// Idle and iowait are the CPU waiting; guest time is in user already.
func parseCPUTimes(stat string) (cpuTimes, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat starts %q, not with the cpu line", line)
	}
	var t cpuTimes
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat's cpu line %q: %v", line, err)
		}
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.busy += n
		}
	}
	return t, nil
}

// cpuWatch samples the CPU over the host's tests: "begin <test>" reads
// /proc/stat, "end <test>" reads it again and keeps the difference.
type cpuWatch struct {
	root    string
	begun   map[string]cpuTimes
	samples []frame.CPUSample
}

func newCPUWatch(root string) *cpuWatch {
	return &cpuWatch{root: root, begun: map[string]cpuTimes{}}
}

// command takes what followed "bootbench route cpu ".
func (w *cpuWatch) command(cmd string) error {
	what, test, _ := strings.Cut(cmd, " ")
	if test == "" || strings.ContainsAny(test, " \t") || (what != "begin" && what != "end") {
		return fmt.Errorf("the host's cpu command %q is not begin or end and a test", cmd)
	}
	data, err := os.ReadFile(filepath.Join(w.root, "proc/stat"))
	if err != nil {
		return fmt.Errorf("sample the CPU: %w", err)
	}
	now, err := parseCPUTimes(string(data))
	if err != nil {
		return err
	}
	if what == "begin" {
		w.begun[test] = now
		return nil
	}
	then, ok := w.begun[test]
	if !ok {
		return fmt.Errorf("the host ended test %s, which it never began", test)
	}
	delete(w.begun, test)
	w.samples = append(w.samples, frame.CPUSample{Test: test, Busy: now.busy - then.busy, Total: now.total - then.total})
	return nil
}

// take returns the samples so far and starts afresh, for the next
// configuration.
func (w *cpuWatch) take() []frame.CPUSample {
	s := w.samples
	w.samples, w.begun = nil, map[string]cpuTimes{}
	return s
}
