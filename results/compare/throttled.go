package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
)

// Throttled is what a comparison did with throttled runs: their figures
// are real but not their clock's (the board slowed down while they ran),
// so they are left out unless asked for, and the comparison says so.
type Throttled struct {
	// LeftOut is how many throttled runs the comparison would have
	// pooled had it been asked to; Included how many it pooled.
	LeftOut  int `json:"left_out"`
	Included int `json:"included"`
	// Settings are where they are, with how many at each.
	Settings []ThrottledSetting `json:"settings,omitempty"`
}

// ThrottledSetting is how many throttled runs one board has at a clock.
type ThrottledSetting struct {
	Board    string     `json:"board"`
	ClockMHz boards.MHz `json:"clock_mhz"`
	Runs     int        `json:"runs"`
}

func okOnly(runs []results.Run) []results.Run {
	return slices.DeleteFunc(slices.Clone(runs), func(r results.Run) bool { return r.Status != results.StatusOK })
}

// compareMeasured compares runs as o says: the throttled ones pooled
// when o includes them, else left out and counted. Which were left out
// is what a comparison that included them would have pooled; when that
// one cannot be made (a board with runs at two clocks once its throttled
// runs count), every throttled run of the boards compared.
func compareMeasured(o Options, runs []results.Run) (*Comparison, error) {
	if o.IncludeThrottled {
		c, err := compareRuns(o, runs)
		if err != nil {
			return nil, err
		}
		c.Throttled = throttledOf(pooledThrottled(c))
		c.Throttled.Included, c.Throttled.LeftOut = c.Throttled.LeftOut, 0
		return c, nil
	}
	c, err := compareRuns(o, okOnly(runs))
	var left []results.Run
	// Without a throttled run, the comparison that would include them
	// is this one, and leaves none out: not made again.
	if slices.ContainsFunc(runs, func(r results.Run) bool { return r.Status == results.StatusThrottled }) {
		if all, aerr := compareRuns(o, runs); aerr == nil {
			left = pooledThrottled(all)
		} else {
			left = throttledOfBoards(runs, comparedBoards(o, c))
		}
	}
	t := throttledOf(left)
	if err != nil {
		if t.LeftOut > 0 {
			return nil, fmt.Errorf("%w; %s", err, t.line())
		}
		return nil, err
	}
	c.Throttled = t
	return c, nil
}

// pooledThrottled are the throttled runs c pooled, each once.
func pooledThrottled(c *Comparison) []results.Run {
	var out []results.Run
	seen := map[results.RunID]bool{}
	for _, cand := range c.Comparisons {
		for _, r := range append(slices.Clone(cand.Baseline.throttled), cand.Candidate.throttled...) {
			if !seen[r.ID] {
				seen[r.ID] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// comparedBoards are the boards a comparison takes runs of: by clock its
// board, by board those named, and those compared.
func comparedBoards(o Options, c *Comparison) []string {
	names := []string{o.Board}
	for _, p := range o.Boards {
		names = append(names, p.Board)
	}
	if o.Baseline != nil {
		names = append(names, o.Baseline.Board)
	}
	if c != nil {
		for _, cand := range c.Comparisons {
			names = append(names, cand.Baseline.Board, cand.Candidate.Board)
		}
	}
	return names
}

func throttledOfBoards(runs []results.Run, names []string) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if r.Status == results.StatusThrottled && slices.Contains(names, r.Board) {
			out = append(out, r)
		}
	}
	return out
}

// throttledOf counts runs by setting, as left out.
func throttledOf(runs []results.Run) Throttled {
	t := Throttled{LeftOut: len(runs)}
	for _, r := range runs {
		i := slices.IndexFunc(t.Settings, func(s ThrottledSetting) bool { return s.Board == r.Board && s.ClockMHz == r.ClockMHz })
		if i < 0 {
			t.Settings = append(t.Settings, ThrottledSetting{Board: r.Board, ClockMHz: r.ClockMHz})
			i = len(t.Settings) - 1
		}
		t.Settings[i].Runs++
	}
	slices.SortFunc(t.Settings, func(a, b ThrottledSetting) int {
		if c := strings.Compare(a.Board, b.Board); c != 0 {
			return c
		}
		return int(a.ClockMHz - b.ClockMHz)
	})
	return t
}

// line says it in one line: "left out 1 throttled run (rb450g at 800
// MHz ×1); --include-throttled pools them too"; "" when there were none.
func (t Throttled) line() string {
	var where []string
	for _, s := range t.Settings {
		where = append(where, fmt.Sprintf("%s at %s ×%d", s.Board, s.ClockMHz.Phrase(), s.Runs))
	}
	switch {
	case t.LeftOut > 0:
		return fmt.Sprintf("left out %s (%s); --include-throttled pools them too", throttledText(t.LeftOut), strings.Join(where, ", "))
	case t.Included > 0:
		return fmt.Sprintf("included %s (%s), as asked", throttledText(t.Included), strings.Join(where, ", "))
	}
	return ""
}

func throttledText(n int) string {
	if n == 1 {
		return "1 throttled run"
	}
	return fmt.Sprintf("%d throttled runs", n)
}
