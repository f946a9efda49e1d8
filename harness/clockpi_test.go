package harness

import (
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
)

// TestCheckConfigTxtClock: a Raspberry Pi's clock, set by config.txt, is
// checked from the cpufreq its hello reports, as a cpufreq board's is; a
// real Pi that reports none cannot be filed under the clock, and a
// virtual one runs it on the exact icount clock.
func TestCheckConfigTxtClock(t *testing.T) {
	pi := boards.Profile{Name: "rpi4b", ClockMethod: boards.ClockConfigTxt}
	twin := pi
	twin.Virtual = &boards.Virtual{}
	for _, tt := range []struct {
		name     string
		p        boards.Profile
		hello    frame.HelloBody
		check    string
		reported boards.MHz
	}{
		{"cpufreq at the clock", pi, frame.HelloBody{CPUFreqCurKHz: 1800000}, results.ClockVerified, 1800},
		{"cpufreq below it (config.txt not taken)", pi, frame.HelloBody{CPUFreqCurKHz: 1500000}, results.ClockMismatch, 1500},
		{"no cpufreq on a real Pi", pi, frame.HelloBody{ClockSet: "no cpufreq in this kernel"}, results.ClockMismatch, 0},
		{"no cpufreq on the twin", twin, frame.HelloBody{}, results.ClockVerified, 1800},
	} {
		reported, check, err := checkClock(tt.p, 1800, tt.hello)
		if check != tt.check || reported != tt.reported || (err != nil) != (check == results.ClockMismatch) {
			t.Errorf("%s: %d, %q, %v; want %d, %q", tt.name, reported, check, err, tt.reported, tt.check)
		}
	}
}
