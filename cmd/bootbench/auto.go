package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/compare"
)

// autoWatch follows a sweep of --reps auto (run's, a served board's): it
// keeps the sweep's runs, judges them after each round by the intervals
// results compare prints for them (compare.Converge), says on progress
// where they stand, and at the end whether every interval came within the
// target, or which did not and why. For a count of reps it does nothing.
type autoWatch struct {
	board    string
	settings boards.Clocks
	reps     boards.Reps
	width    int // runs a round
	runs     []results.Run
	progress io.Writer
	said     bool // served: the outcome was said
}

// newAutoWatch watches sw; nil when its reps are a count.
func newAutoWatch(sw plan.Sweep, progress io.Writer) *autoWatch {
	if !sw.Reps.Auto {
		return nil
	}
	return &autoWatch{board: sw.Job.Board.Name, settings: sw.Clocks, reps: sw.Reps, width: sw.Width(), progress: progress}
}

// add keeps a run of the sweep, failed ones too (they count as rounds,
// not as figures).
func (w *autoWatch) add(rec *results.Run) {
	if w != nil {
		w.runs = append(w.runs, *rec)
	}
}

// enough is the sweep's question after a round: are the figures pinned
// down? It says where they stand on progress.
func (w *autoWatch) enough(rounds int) bool {
	if w == nil {
		return false
	}
	c, err := compare.Converge(w.board, w.settings, w.runs, w.reps.Target)
	if err != nil {
		fmt.Fprintf(w.progress, "bootbench: reps auto: after %s: %v; another round\n", roundsText(rounds), err)
		return false
	}
	if c.Done() {
		return true
	}
	fmt.Fprintf(w.progress, "bootbench: reps auto: after %s: %s; another round\n", roundsText(rounds), w.wideText(c))
	return false
}

// wideText says in a line how far the sweep is from its target.
func (w *autoWatch) wideText(c compare.Convergence) string {
	if c.Missing != "" {
		return c.Missing
	}
	var widest *compare.Judged
	without := 0
	for _, j := range c.Judged {
		switch {
		case math.IsInf(j.HalfWidth, 1):
			without++
		case widest == nil || j.HalfWidth > widest.HalfWidth:
			widest = &j
		}
	}
	if widest == nil {
		return fmt.Sprintf("no intervals yet (they need %s)", roundsText(boards.MinAutoRounds(len(w.settings))))
	}
	s := fmt.Sprintf("%d of %d intervals wider than ±%s (widest ±%s: %s %s)",
		len(c.Wide()), len(c.Judged), boards.Percent(c.Target), pctFigure(widest.HalfWidth), widest.Metric, widest.Of)
	if without > 0 {
		s += fmt.Sprintf(", %d with none yet", without)
	}
	return s
}

// report says, after the sweep, where its intervals stand: every one
// within the target after how many rounds, or which are not and why.
func (w *autoWatch) report(out io.Writer) {
	if w == nil {
		return
	}
	rounds := len(w.runs) / w.width
	c, err := compare.Converge(w.board, w.settings, w.runs, w.reps.Target)
	if err != nil {
		fmt.Fprintf(out, "\nreps auto: after %s: %v\n", roundsText(rounds), err)
		return
	}
	target := "±" + boards.Percent(w.reps.Target)
	if c.Done() {
		widest, _ := c.Widest()
		fmt.Fprintf(out, "\nreps auto: every interval within %s after %s (%d judged; widest ±%s: %s %s)\n",
			target, roundsText(rounds), len(c.Judged), pctFigure(widest.HalfWidth), widest.Metric, widest.Of)
		return
	}
	wide := c.Wide()
	if c.Missing != "" {
		fmt.Fprintf(out, "\nreps auto: stopped at the most, %s (--max-reps %d): %s\n", roundsText(rounds), w.reps.Max, c.Missing)
		return
	}
	fmt.Fprintf(out, "\nreps auto: stopped at the most, %s (--max-reps %d); %d of %d intervals did not come within %s:\n",
		roundsText(rounds), w.reps.Max, len(wide), len(c.Judged), target)
	rows := make([][]string, 0, len(wide))
	for _, j := range wide {
		rows = append(rows, []string{"  " + j.Metric, j.Of, halfWidthText(j), whyWide(j, w.reps.Target)})
	}
	writeColumns(out, rows)
}

// halfWidthText is a judged figure's interval: "±3.41 %", or "none".
func halfWidthText(j compare.Judged) string {
	if math.IsInf(j.HalfWidth, 1) {
		return "no interval"
	}
	return "±" + pctFigure(j.HalfWidth)
}

// whyWide says why a figure's interval did not come within target: its
// runs' spread, and how many more runs a side would have done.
func whyWide(j compare.Judged, target float64) string {
	var why []string
	if !math.IsNaN(j.Spread) {
		why = append(why, fmt.Sprintf("its runs scatter ±%s (one standard deviation)", pctFigure(math.Expm1(j.Spread))))
	}
	if math.IsInf(j.HalfWidth, 1) {
		why = append(why, fmt.Sprintf("only %s gave a result on a side", runsCount(j.Runs)))
	}
	switch {
	case j.MoreRuns > 1000:
		why = append(why, "more than 1000 more runs a side would be needed")
	case j.MoreRuns > 0:
		why = append(why, fmt.Sprintf("about %d more runs a side would bring it within ±%s", j.MoreRuns, boards.Percent(target)))
	}
	return strings.Join(why, "; ")
}

// pctFigure is a fraction as a percentage, as compare says a half-width:
// "1.04 %", "0.0050 %".
func pctFigure(f float64) string { return compare.HalfWidthText(f) }

func roundsText(n int) string {
	if n == 1 {
		return "1 run of each setting"
	}
	return fmt.Sprintf("%d runs of each setting", n)
}

// writeColumns writes rows with their columns aligned, the last one
// left as it is.
func writeColumns(w io.Writer, rows [][]string) {
	if len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r[:len(r)-1] {
			b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))+2))
		}
		b.WriteString(r[len(r)-1])
		fmt.Fprintln(w, b.String())
	}
}

// served takes a served board's run and, when it ends a round that
// answers the job (every interval within the target, or the most rounds
// run), says so once: serve answers the board's boots all the same, for
// it never stops a board, but its owner may.
func (w *autoWatch) served(rec *results.Run) string {
	if w == nil || w.said {
		return ""
	}
	w.add(rec)
	if len(w.runs)%w.width != 0 {
		return ""
	}
	rounds := len(w.runs) / w.width
	c, err := compare.Converge(w.board, w.settings, w.runs, w.reps.Target)
	switch {
	case err == nil && c.Done():
		w.said = true
		widest, _ := c.Widest()
		return fmt.Sprintf("%s: reps auto: every interval within ±%s after %s (widest ±%s: %s %s); its job has its answer",
			w.board, boards.Percent(w.reps.Target), roundsText(rounds), pctFigure(widest.HalfWidth), widest.Metric, widest.Of)
	case rounds >= w.reps.Max:
		w.said = true
		what := fmt.Sprint(err)
		if err == nil {
			what = w.wideText(c)
		}
		return fmt.Sprintf("%s: reps auto: at its most, %s (max_reps %d), %s; see 'bootbench results compare --by clock --board %s'",
			w.board, roundsText(rounds), w.reps.Max, what, w.board)
	}
	return ""
}
