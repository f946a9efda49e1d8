package main

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results/compare"
)

const compareSynopsis = "results compare --by clock|board [--board NAME] [--boards BOARD[@MHZ],...] [--baseline [BOARD]@MHZ] [--clock MHZ] [--include-throttled] [--target-ci PCT] [--format text|json] [--db PATH]"

// cmdCompare compares a board's clock settings, or settings of boards,
// each benchmark (and version) with itself. By clock the lowest clock is
// the baseline; by board the first setting named (--baseline, --board,
// then --boards) is, and with only one named every other board is a
// candidate, alphabetically, at each of its clock settings. Throttled runs
// are left out, and counted, unless --include-throttled.
func cmdCompare(ctx context.Context, args []string) error {
	fs := newCommand("results compare", compareSynopsis, "")
	board := fs.String("board", "", "by clock: the board; by board: the baseline board")
	by := fs.String("by", "", "what to compare: clock (the board's clock settings) or board")
	settings := fs.String("boards", "", "by board: comma-separated settings to compare, BOARD or BOARD@MHZ, baseline first unless --board or --baseline is given")
	baseline := fs.String("baseline", "", "the baseline: by clock, a clock (@800 or BOARD@800); by board, a setting BOARD@MHZ")
	clock := fs.Int("clock", 0, "by board: only runs at this clock setting (MHz) for boards named without @MHZ")
	format := fs.String("format", "text", "output format: text or json")
	withThrottled := fs.Bool("include-throttled", false, "pool throttled runs too (the board slowed down while they ran: see 'results show RUN'); without it they are left out and counted")
	targetCI := fs.String("target-ci", boards.Percent(compare.DefaultTargetCI), "each comparison says how many more runs a side would bring every 95 % interval within ± this of its ratio")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	o, err := compareOptions(*by, *board, *settings, *baseline, *clock)
	if err != nil {
		return err
	}
	o.IncludeThrottled = *withThrottled
	if o.TargetCI, err = boards.ParsePercent(*targetCI); err != nil || !(o.TargetCI > 0 && o.TargetCI < 1) {
		return usageErr("results compare: --target-ci %q: give a percentage more than 0 and under 100, like 2%%", *targetCI)
	}
	if *format != "text" && *format != "json" {
		return usageErr("results compare: unknown format %q (formats: text, json)", *format)
	}
	s, path, err := fs.readStore()
	if err != nil {
		return err
	}
	defer s.Close()
	named := []string{o.Board}
	for _, p := range append(slices.Clone(o.Boards), ptrPicks(o.Baseline)...) {
		named = append(named, p.Board)
	}
	if err := checkBoardsNamed(ctx, s, path, "results compare", named...); err != nil {
		return err
	}
	c, err := compare.Stored(ctx, s, o)
	if errors.Is(err, compare.ErrNothingToCompare) || errors.Is(err, compare.ErrPickClock) {
		// The store is fine; the request names settings it does not
		// hold, or not precisely enough.
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return storeFailure(path, err)
	}
	if *format == "json" {
		return compare.WriteJSON(os.Stdout, c)
	}
	return compare.WriteText(os.Stdout, c)
}

// compareOptions checks the flags' combination and reads the settings.
func compareOptions(by, board, settings, baseline string, clock int) (compare.Options, error) {
	o := compare.Options{By: by, Board: board, ClockMHz: boards.MHz(clock)}
	for _, s := range splitList(settings) {
		p, err := compare.ParsePick(s)
		if err != nil {
			return o, usageErr("results compare: --boards: %v", err)
		}
		if p.Board == "" {
			return o, usageErr("results compare: --boards %s: name the board, e.g. rb450g@680", s)
		}
		o.Boards = append(o.Boards, p)
	}
	if baseline != "" {
		p, err := compare.ParsePick(baseline)
		if err != nil {
			return o, usageErr("results compare: --baseline: %v", err)
		}
		o.Baseline = &p
	}
	switch {
	case o.By != compare.ByClock && o.By != compare.ByBoard:
		return o, usageErr("results compare: say --by clock or --by board")
	case o.By == compare.ByClock && o.Board == "":
		return o, usageErr("results compare: say which board's clock settings to compare with --board NAME")
	case o.By == compare.ByClock && (len(o.Boards) > 0 || o.ClockMHz != 0):
		return o, usageErr("results compare: --boards and --clock go with --by board")
	case o.By == compare.ByClock && o.Baseline != nil && (!o.Baseline.HasClock || (o.Baseline.Board != "" && o.Baseline.Board != o.Board)):
		return o, usageErr("results compare: --by clock --baseline names one of %s's clock settings, e.g. --baseline @680", o.Board)
	case o.By == compare.ByBoard && o.Board == "" && len(o.Boards) == 0 && o.Baseline == nil:
		return o, usageErr("results compare: name the settings to compare with --boards A,B@MHZ (the first is the baseline)")
	case o.By == compare.ByBoard && o.Baseline != nil && o.Baseline.Board == "":
		return o, usageErr("results compare: --by board --baseline names a board's setting, e.g. --baseline rb450g@680")
	case o.By == compare.ByBoard && o.Baseline != nil && o.Board != "":
		return o, usageErr("results compare: --board and --baseline both name the baseline; give one")
	case clock < 0:
		return o, usageErr("results compare: --clock %d: want MHz", clock)
	}
	return o, nil
}

// ptrPicks is the pick p points at, none for nil.
func ptrPicks(p *compare.Pick) []compare.Pick {
	if p == nil {
		return nil
	}
	return []compare.Pick{*p}
}
