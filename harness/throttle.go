package harness

import (
	"slices"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
)

// heatTrips are the trip points whose crossing throttles a run: at a
// passive one the kernel slows the CPU down, at hot and critical ones it
// is about to shut the board down (a driver may cap the clock on its way
// there). Active trips start fans and cost no speed.
var heatTrips = []string{"passive", "hot", "critical"}

// judgeThrottle says whether the board's throttling watch saw a run slow
// down, and how: a CPU clock below the one asked (within the tolerance
// the hello's clock check allows: cpufreq reports the operating point the
// driver picked, 799999 kHz for 800 MHz, and a clock that passed the
// check must not be called throttled for the same rounding), or a thermal
// zone at or over a passive, hot or critical trip point. Nil: it did not,
// or the board sent no samples to tell.
//
// The clock is judged only when one was asked for: a governor left to
// itself moves the clock as it likes. CPU 0's policy is always judged;
// another only if its first sample was at the clock asked, as a cluster
// that cannot reach it (a big.LITTLE board's little one) never slowed.
func judgeThrottle(asked boards.MHz, zones []frame.ThermalZone, samples []frame.WatchSample) *results.Throttle {
	t := &results.Throttle{Clock: clockDrop(asked, samples), Heat: heat(zones, samples)}
	if t.Clock == nil && t.Heat == nil {
		return nil
	}
	return t
}

func clockDrop(asked boards.MHz, samples []frame.WatchSample) *results.ClockDrop {
	if asked <= 0 || len(samples) == 0 {
		return nil
	}
	var drop *results.ClockDrop
	for p := range samples[0].CurKHz {
		if p > 0 && !boards.ClockAgrees(boards.FromCPUFreq, boards.MHzFromKHz(samples[0].CurKHz[p]), asked) {
			continue
		}
		for _, s := range samples {
			if p >= len(s.CurKHz) || s.CurKHz[p] <= 0 {
				continue // the policy could not be read this time
			}
			mhz := boards.MHzFromKHz(s.CurKHz[p])
			if mhz >= asked || boards.ClockAgrees(boards.FromCPUFreq, mhz, asked) {
				continue
			}
			if drop == nil {
				drop = &results.ClockDrop{AskedMHz: asked, LowestMHz: mhz, AtMS: s.AtMS}
			}
			drop.LowestMHz = min(drop.LowestMHz, mhz)
			drop.AtMS = min(drop.AtMS, s.AtMS)
		}
	}
	return drop
}

// heat is the zone that first reached one of its heat trips, the lowest
// it reached, and the zone's highest temperature.
func heat(zones []frame.ThermalZone, samples []frame.WatchSample) *results.Heat {
	var first *results.Heat
	for i, z := range zones {
		h := zoneHeat(i, z, samples)
		if h != nil && (first == nil || h.AtMS < first.AtMS) {
			first = h
		}
	}
	return first
}

func zoneHeat(i int, z frame.ThermalZone, samples []frame.WatchSample) *results.Heat {
	var h *results.Heat
	for _, s := range samples {
		temp := s.TempMC[i]
		if h != nil {
			h.HighestMC = max(h.HighestMC, temp)
			continue
		}
		if trip, ok := lowestReached(z.Trips, temp); ok {
			h = &results.Heat{Zone: z.Type, Trip: trip.Type, TripMC: trip.TempMC, HighestMC: temp, AtMS: s.AtMS}
		}
	}
	return h
}

// lowestReached is the lowest heat trip point temp is at or over.
func lowestReached(trips []frame.TripPoint, temp int) (frame.TripPoint, bool) {
	var low frame.TripPoint
	found := false
	for _, t := range trips {
		if slices.Contains(heatTrips, t.Type) && t.TempMC > 0 && temp >= t.TempMC && (!found || t.TempMC < low.TempMC) {
			low, found = t, true
		}
	}
	return low, found
}
