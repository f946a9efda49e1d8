package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// Throttle is why a run is stored StatusThrottled: what the board's
// throttling watch saw while the benchmark ran, when (into the benchmark)
// and how much. Its figures are real but not the clock's, so comparisons
// leave the run out unless asked.
type Throttle struct {
	Clock *ClockDrop `json:"clock,omitempty"` // the CPU ran slower than asked
	Heat  *Heat      `json:"heat,omitempty"`  // a thermal zone reached a trip point
}

// ClockDrop is a CPU clock that fell below the one the run asked for.
type ClockDrop struct {
	AskedMHz  boards.MHz `json:"asked_mhz"`
	LowestMHz boards.MHz `json:"lowest_mhz"`
	// AtMS is when cpufreq first reported it below, in milliseconds
	// since the benchmark started.
	AtMS int64 `json:"at_ms"`
}

// Heat is a thermal zone at or over a trip point at which its kernel
// slows the CPU (passive) or is about to shut down (hot, critical).
type Heat struct {
	Zone      string `json:"zone"` // the zone's type: "cpu-thermal"
	Trip      string `json:"trip"` // the trip point's type
	TripMC    int    `json:"trip_mc"`
	HighestMC int    `json:"highest_mc"` // the zone's highest temperature
	AtMS      int64  `json:"at_ms"`      // when it first reached the trip point
}

// String says what happened in one line: "the clock fell to 600 MHz
// (800 MHz asked) 4.0 s into the benchmark; cpu-thermal reached 86.0 °C
// (passive trip point 85.0 °C) 12.0 s in".
func (t *Throttle) String() string {
	if t == nil {
		return ""
	}
	var parts []string
	if c := t.Clock; c != nil {
		parts = append(parts, fmt.Sprintf("the clock fell to %s (%s asked) %s into the benchmark", c.LowestMHz, c.AskedMHz, secondsPhrase(c.AtMS)))
	}
	if h := t.Heat; h != nil {
		in := " into the benchmark"
		if t.Clock != nil {
			in = " in"
		}
		parts = append(parts, fmt.Sprintf("%s reached %s (%s trip point %s) %s%s", h.Zone, celsius(h.HighestMC), h.Trip, celsius(h.TripMC), secondsPhrase(h.AtMS), in))
	}
	return strings.Join(parts, "; ")
}

// secondsPhrase says ms milliseconds in seconds: "4.0 s".
func secondsPhrase(ms int64) string {
	return fmt.Sprintf("%.1f s", (time.Duration(ms) * time.Millisecond).Seconds())
}

func celsius(mc int) string { return fmt.Sprintf("%.1f °C", float64(mc)/1000) }

// Why says in one line why a run gave no result to count: its failure
// reason, or what throttled it; "" for an ok run.
func (r *Run) Why() string {
	if r.Reason == "" {
		return r.Throttle.String()
	}
	return r.Reason
}
