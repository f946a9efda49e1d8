package harness

import (
	"fmt"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/contract/frame"
)

// checkGoRuntime judges the board's sleep probe (hello's sleep_probe_us):
// a Go runtime whose own sleeps are over twice too short wakes its
// scheduler so often that a benchmark running in it (a built-in one)
// loses a share of the CPU that depends on the clock — the figures would
// be wrong, and their clock ratios more so (initramfs/gofix). Sleeps too
// long cost the benchmark nothing (the scheduler only wakes less often)
// and are what a kernel without high-resolution timers gives, so they are
// only said. note is for the progress line, "" when there is no probe (an
// image from before it).
func checkGoRuntime(bench string, h frame.HelloBody) (note string, err error) {
	if h.SleepProbeUS <= 0 || h.SleepProbeWantUS <= 0 {
		return "", nil
	}
	ratio := float64(h.SleepProbeUS) / float64(h.SleepProbeWantUS)
	note = fmt.Sprintf("Go runtime %s: its sleeps took %.1f ms for %.0f ms asked", h.GoRuntime, float64(h.SleepProbeUS)/1000, float64(h.SleepProbeWantUS)/1000)
	bm, _ := benchmark.Lookup(bench)
	if ratio < 0.5 && bm.Image.BuiltIn {
		return note, fmt.Errorf("%s (%.0f× too short): the %s benchmark runs in that runtime, whose scheduler would take a clock-dependent share of the CPU; build the image with bootbench's runtime correction (README, Go on MIPS)", note, 1/ratio, bench)
	}
	return note, nil
}
