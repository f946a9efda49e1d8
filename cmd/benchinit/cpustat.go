package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
)

// cpuTimes is /proc/stat's first line, every CPU's time in clock ticks,
// split into busy and all, and how many CPUs it sums.
type cpuTimes struct {
	busy, total uint64
	cpus        int
}

// userHZ is the clock tick /proc/stat counts in (USER_HZ, 100 on every
// architecture Linux runs on).
const userHZ = 100

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
	for _, l := range strings.Split(stat, "\n")[1:] {
		if n, ok := strings.CutPrefix(l, "cpu"); ok && n != "" && n[0] >= '0' && n[0] <= '9' {
			t.cpus++
		}
	}
	return t, nil
}

// sample is the CPU over a test from its two readings, elapsed apart on
// the board's clock: all of the CPUs' time is the test's length, and busy
// is what of it they were not idle. Not the busy ticks /proc/stat counts:
// a tickless kernel (NOHZ) counts its idle time exactly but its busy time
// by the tick, which is stopped while the CPU idles, so a packet routed
// in a softirq run straight out of idle, between two ticks, as a lightly
// loaded router routes most of them, is counted neither busy nor idle
// (Debian's kernels have no IRQ_TIME_ACCOUNTING to count it).
func sample(test string, then, now cpuTimes, elapsed time.Duration) frame.CPUSample {
	cpus := uint64(max(1, now.cpus))
	total := uint64(elapsed.Round(time.Second/userHZ)/(time.Second/userHZ)) * cpus
	idle := (now.total - now.busy) - (then.total - then.busy)
	busy := uint64(0)
	if total > idle {
		busy = total - idle
	}
	return frame.CPUSample{Test: test, Busy: busy, Total: max(total, 1)}
}

// cpuWatch samples the CPU over the host's tests: "begin <test>" reads
// /proc/stat, "end <test>" reads it again and keeps the difference.
type cpuWatch struct {
	root    string
	now     func() time.Time // the board's monotonic clock
	begun   map[string]reading
	samples []frame.CPUSample
}

// reading is /proc/stat at a moment.
type reading struct {
	times cpuTimes
	at    time.Time
}

func newCPUWatch(root string) *cpuWatch {
	return &cpuWatch{root: root, now: time.Now, begun: map[string]reading{}}
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
	times, err := parseCPUTimes(string(data))
	if err != nil {
		return err
	}
	now := reading{times, w.now()}
	if what == "begin" {
		w.begun[test] = now
		return nil
	}
	then, ok := w.begun[test]
	if !ok {
		return fmt.Errorf("the host ended test %s, which it never began", test)
	}
	delete(w.begun, test)
	w.samples = append(w.samples, sample(test, then.times, now.times, now.at.Sub(then.at)))
	return nil
}

// take returns the samples so far and starts afresh, for the next
// configuration.
func (w *cpuWatch) take() []frame.CPUSample {
	s := w.samples
	w.samples, w.begun = nil, map[string]reading{}
	return s
}
