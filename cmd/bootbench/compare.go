package main

import (
	"context"
	"errors"
	"os"

	"github.com/bootbench/bootbench/results"
)

const compareSynopsis = "results compare --board NAME --by clock|board [--boards A,B...] [--clock MHZ] [--format text|json] [--db PATH]"

// cmdCompare compares a board's clock settings, or boards. By clock the
// lowest clock is the baseline; by board the first board named (--board,
// then --boards) is, and with only one named every other board is a
// candidate, alphabetically.
func cmdCompare(ctx context.Context, args []string) error {
	fs := newFlags("results compare", compareSynopsis)
	board := fs.String("board", "", "by clock: the board; by board: the baseline board")
	by := fs.String("by", "", "what to compare: clock (the board's clock settings) or board")
	boards := fs.String("boards", "", "by board: comma-separated boards to compare, baseline first unless --board is given")
	clock := fs.Int("clock", 0, "by board: only runs at this clock setting (MHz)")
	format := fs.String("format", "text", "output format: text or json")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o := results.CompareOptions{By: *by, Board: *board, Boards: splitList(*boards), ClockMHz: *clock}
	switch {
	case fs.NArg() > 0:
		return usageErr("results compare: unexpected argument %q (usage: bootbench %s)", fs.Arg(0), compareSynopsis)
	case o.By != results.ByClock && o.By != results.ByBoard:
		return usageErr("results compare: say --by clock or --by board")
	case o.By == results.ByClock && o.Board == "":
		return usageErr("results compare: say which board's clock settings to compare with --board NAME")
	case o.By == results.ByClock && (len(o.Boards) > 0 || o.ClockMHz != 0):
		return usageErr("results compare: --boards and --clock go with --by board")
	case o.By == results.ByBoard && o.Board == "" && len(o.Boards) == 0:
		return usageErr("results compare: name the boards to compare with --boards A,B (the first is the baseline)")
	case *clock < 0:
		return usageErr("results compare: --clock %d: want MHz", *clock)
	case *format != "text" && *format != "json":
		return usageErr("results compare: unknown format %q (formats: text, json)", *format)
	}
	s, _, err := openStore(*db)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := s.Compare(ctx, o)
	if errors.Is(err, results.ErrNothingToCompare) {
		// The store is fine; the request names settings it does not hold.
		return &exitError{code: 2, err: err}
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		return results.WriteCompareJSON(os.Stdout, c)
	}
	return results.WriteCompareText(os.Stdout, c)
}
