package boards

import "math"

// ClockSource is where a figure for a board's clock came from. Each
// source has its own tolerance: how far its figure may be from the clock
// that was set and still confirm it. The rule lives here, in one place,
// so a live run and a replayed console judge a clock alike.
type ClockSource string

// The sources of a clock figure.
const (
	// FromCPUFreq is cpufreq's current operating point: exact up to the
	// driver's rounding.
	FromCPUFreq ClockSource = "cpufreq"
	// FromBogoMIPS is the kernel's delay-loop calibration turned into
	// MHz by the profile's BogoMIPS per MHz: it wanders a few percent
	// from boot to boot on a virtual board's clock.
	FromBogoMIPS ClockSource = "BogoMIPS"
	// FromFirmware is the clock a board's firmware announces in its
	// banner (RouterBOOT "CPU frequency: 680 MHz", CFE "CPU type
	// 0x29008: 200MHz"): the setting it made, in whole MHz.
	FromFirmware ClockSource = "firmware"
)

// Tolerance is the relative distance from the clock set within which a
// figure from s confirms it.
func (s ClockSource) Tolerance() float64 {
	switch s {
	case FromCPUFreq:
		return 0.02
	case FromFirmware:
		// A firmware prints the clock it set in whole MHz: allow that
		// rounding (1 MHz at 200) and no more (216 is not 228).
		return 0.005
	}
	// BogoMIPS: a calibration loop count, not a setting. Published
	// figures of real MIPS 24Kc cores stay within 0.5 % of 0.6656 per MHz
	// (an AR7161 at 680 MHz: 452.19; AR7241s at 400: 265.42, 266.24);
	// QEMU's Malta under -icount wanders further from boot to boot.
	return 0.06
}

// ClockAgrees says whether figure got, read from source s, confirms the
// clock want. A figure of 0 (none read) confirms nothing.
func ClockAgrees(s ClockSource, got, want MHz) bool {
	if got <= 0 || want <= 0 {
		return false
	}
	return math.Abs(float64(got-want)) <= s.Tolerance()*float64(want)
}
