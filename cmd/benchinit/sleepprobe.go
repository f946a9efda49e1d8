package main

import (
	"runtime"
	"slices"
	"time"
	_ "unsafe" // go:linkname
)

// runtimeUsleep is the runtime's own sleep, the one sysmon backs off with.
// The probe must time this function, not time.Sleep: time.Sleep goes
// through timers and the netpoller, which are right even where usleep is
// not (Go's usleep on MIPS sleeps 1000 times too short; initramfs/gofix).
//
//go:linkname runtimeUsleep runtime.usleep
func runtimeUsleep(usec uint32)

// Sleep probe: 100 sleeps of 1 ms, 100 ms when the runtime is right. On a
// runtime whose usleep passes microseconds as nanoseconds it takes about
// 100 × the kernel's 50 µs timer slack.
const (
	probeSleeps  = 100
	probeSleepUS = 1000
)

// sleepProbe times the runtime's sleeps, in microseconds of the board's
// monotonic clock: probeSleeps times the median sleep, so that the few a
// signal cuts short (the runtime's usleep does not resume after EINTR: a
// garbage collection's preemption signals, a loaded host in tests) do not
// read as a runtime that sleeps too short, which shortens every one.
func sleepProbe() int64 {
	took := make([]time.Duration, probeSleeps)
	for i := range took {
		start := time.Now()
		runtimeUsleep(probeSleepUS)
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	return probeSleeps * took[probeSleeps/2].Microseconds()
}

// goRuntime is the board's Go runtime as hello reports it: its version,
// and the correction it was built with ("go1.26.8 +mips-usleep").
func goRuntime() string {
	if runtimeFix == "" {
		return runtime.Version()
	}
	return runtime.Version() + " +" + runtimeFix
}
