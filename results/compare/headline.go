package compare

import (
	"fmt"
	"math"
	"strconv"

	"github.com/aclements/go-moremath/stats"

	"github.com/bootbench/bootbench/boards"
)

// scalesWithin is how far a median scaling efficiency may be from 1.0 for
// a comparison of clocks to read "scales with the clock": a few percent
// is what boot-to-boot spread alone gives.
const scalesWithin = 0.05

// Summary is a comparison in one line: the median over its metrics of the
// candidate/baseline ratio and, by clock, of the scaling efficiency, with
// the efficiencies' (or, without a clock ratio, the ratios') middle half.
type Summary struct {
	// Metrics is how many metrics have a ratio (a baseline other than 0).
	Metrics int `json:"metrics"`
	// Throughput is the median ratio candidate/baseline.
	Throughput *number `json:"throughput_ratio"`
	// Efficiency is the median scaling efficiency (ratio / clock
	// ratio); null without a clock ratio.
	Efficiency *number `json:"scaling_efficiency"`
	// Low and High bound the middle half of the metrics (quartiles) of
	// the efficiencies, or of the ratios when there is no clock ratio.
	Low  *number `json:"low"`
	High *number `json:"high"`
	// Verdict, by clock: "scales with the clock" (median efficiency
	// within 5 % of 1.0), "scales less than the clock", "scales more
	// than the clock", or the flags "sublinear" and "superlinear" below
	// 0.8 and above 1.25. Empty without a clock ratio.
	Verdict string `json:"verdict,omitempty"`
	// Headline is the line the text output starts the comparison with.
	Headline string `json:"headline"`

	throughput, efficiency, low, high float64 // unrounded, for the headline
}

// summarize sums up one comparison; board and by say how to name it.
func summarize(board, by string, cand *Candidate) *Summary {
	// From the medians themselves, not the rounded ratios: 800/680 is
	// ×1.176, where its four-digit 1.1765 would round to 1.177.
	clockRatio, haveClock := 0.0, cand.ClockRatio != nil
	if haveClock {
		clockRatio = float64(cand.Candidate.ClockMHz) / float64(cand.Baseline.ClockMHz)
	}
	var ratios, effs []float64
	for _, m := range cand.Metrics {
		if m.Baseline == 0 {
			continue
		}
		r := float64(m.Candidate) / float64(m.Baseline)
		ratios = append(ratios, r)
		if haveClock {
			effs = append(effs, r/clockRatio)
		}
	}
	s := &Summary{Metrics: len(ratios)}
	spread := ratios
	if len(effs) > 0 {
		spread = effs
		s.efficiency = median(effs)
		s.Efficiency, s.Verdict = round4(s.efficiency), scalingVerdict(s.efficiency)
	}
	if len(ratios) > 0 {
		s.throughput = median(ratios)
		s.low, s.high = quartiles(spread)
		s.Throughput, s.Low, s.High = round4(s.throughput), round4(s.low), round4(s.high)
	}
	s.Headline = s.headline(settingsText(board, by, cand), clockRatio, haveClock)
	return s
}

func scalingVerdict(e float64) string {
	switch {
	case e < sublinearBelow:
		return "sublinear"
	case e > superlinearAbove:
		return "superlinear"
	case e < 1-scalesWithin:
		return "scales less than the clock"
	case e > 1+scalesWithin:
		return "scales more than the clock"
	}
	return "scales with the clock"
}

// settingsText names the two settings: "rb450g 800 vs 680 MHz" by clock,
// "rb450g@680 vs rb450@300" by board.
func settingsText(board, by string, cand *Candidate) string {
	b, k := cand.Baseline, cand.Candidate
	if by == ByClock {
		if b.ClockMHz != 0 && k.ClockMHz != 0 {
			return fmt.Sprintf("%s %s", board, boards.Clocks{k.ClockMHz, b.ClockMHz}.Joined(" vs "))
		}
		return fmt.Sprintf("%s %s vs %s", board, k.ClockMHz, b.ClockMHz)
	}
	return fmt.Sprintf("%s@%d vs %s@%d", k.Board, k.ClockMHz, b.Board, b.ClockMHz)
}

func (s *Summary) headline(settings string, clockRatio float64, haveClock bool) string {
	if s.Metrics == 0 {
		return settings + ": no metric with a ratio"
	}
	metrics := "metrics"
	if s.Metrics == 1 {
		metrics = "metric"
	}
	line := settings + ": "
	if haveClock {
		line += "clock ×" + fixed3(clockRatio) + ", "
	}
	line += fmt.Sprintf("throughput ×%s (median of %d %s", fixed3(s.throughput), s.Metrics, metrics)
	if haveClock {
		line += ", efficiency " + fixed3(s.efficiency)
	}
	line += fmt.Sprintf(", %s–%s)", fixed3(s.low), fixed3(s.high))
	if s.Verdict != "" {
		line += ": " + s.Verdict
	}
	return line
}

func fixed3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func median(xs []float64) float64 { return stats.Sample{Xs: xs}.Quantile(0.5) }

// quartiles are the first and third quartiles of xs.
func quartiles(xs []float64) (lo, hi float64) {
	s := stats.Sample{Xs: xs}
	lo, hi = s.Quantile(0.25), s.Quantile(0.75)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 0
	}
	return lo, hi
}
