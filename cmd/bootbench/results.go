package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bootbench/bootbench/results"
)

func cmdResults(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErr("results: say list, show RUN, compare or export (see 'bootbench help')")
	}
	switch args[0] {
	case "list":
		fs := newFlags("results list", "results list [--board NAME] [--db PATH]")
		board := fs.String("board", "", "only this board")
		db := dbFlag(fs)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		s, _, err := openStore(*db)
		if err != nil {
			return err
		}
		defer s.Close()
		runs, err := s.Runs(ctx, results.Filter{Board: *board})
		if err != nil {
			return err
		}
		return results.WriteTable(os.Stdout, runs)
	case "show":
		fs := newFlags("results show", "results show RUN [--transcript] [--db PATH]")
		transcript := fs.Bool("transcript", false, "print the serial transcript too")
		db := dbFlag(fs)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usageErr("results show: name one run id (see 'bootbench results list')")
		}
		s, _, err := openStore(*db)
		if err != nil {
			return err
		}
		defer s.Close()
		r, err := s.Run(ctx, results.RunID(fs.Arg(0)))
		if errors.Is(err, results.ErrNotFound) {
			return usageErr("results show: no run %q (see 'bootbench results list')", fs.Arg(0))
		}
		if err != nil {
			return err
		}
		fmt.Printf("run      %s\nboard    %s\nclock    %s\nstatus   %s\n", r.ID, r.Board, clockLine(r), r.Status)
		if r.Reason != "" {
			fmt.Printf("reason   %s\n", r.Reason)
		}
		fmt.Printf("bench    %s (%s %s)\nkernel   %s\nimage    %s\nstarted  %s\n", r.Bench, r.Tool, r.ToolVersion, r.Kernel, r.ImageDigest, r.Started.Format("2006-01-02 15:04:05Z07:00"))
		for _, st := range r.Stages {
			fmt.Printf("  %-9s %6.1fs\n", st.Name, st.Duration.Seconds())
		}
		fmt.Println()
		if err := results.WriteMetrics(os.Stdout, r); err != nil {
			return err
		}
		if *transcript {
			fmt.Printf("\n--- transcript (%d bytes) ---\n", len(r.Transcript))
			os.Stdout.Write(r.Transcript)
		}
		return nil
	case "compare":
		return cmdCompare(ctx, args[1:])
	case "export":
		// The writers by format name; the order is the one usage and
		// errors list them in.
		writers := []struct {
			name  string
			write func(io.Writer, []results.Run) error
		}{
			{"openwrt", results.WriteOpenWrt},
			{"csv", results.WriteCSV},
			{"json", results.WriteJSON},
			{"gobench", results.WriteGobench},
			{"html", results.WriteHTML},
		}
		var bar, comma string // "openwrt|csv|..." and "openwrt, csv, ..."
		for i, w := range writers {
			if i > 0 {
				bar, comma = bar+"|", comma+", "
			}
			bar, comma = bar+w.name, comma+w.name
		}
		fs := newFlags("results export", "results export --format "+bar+" [--board NAME] [--clock MHZ] [-o OUT] [--db PATH]")
		format := fs.String("format", "json", "output format: "+comma)
		board := fs.String("board", "", "only this board")
		clock := fs.Int("clock", 0, "only this clock setting (MHz)")
		out := fs.String("o", "", "write to this file (default standard output)")
		db := dbFlag(fs)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		var write func(io.Writer, []results.Run) error
		for _, w := range writers {
			if w.name == *format {
				write = w.write
			}
		}
		if write == nil {
			return usageErr("results export: unknown format %q (formats: %s)", *format, comma)
		}
		if *clock < 0 {
			return usageErr("results export: --clock %d: give a clock in MHz, e.g. --clock 680", *clock)
		}
		s, _, err := openStore(*db)
		if err != nil {
			return err
		}
		defer s.Close()
		runs, err := s.Runs(ctx, results.Filter{Board: *board, ClockMHz: *clock})
		if err != nil {
			return err
		}
		return writeOut(*out, func(w io.Writer) error { return write(w, runs) })
	}
	return usageErr("results: unknown subcommand %q (list, show, compare, export)", args[0])
}

// writeOut writes to path through a temporary file, so a failed export never
// leaves a half-written file where a good one was; "" is standard output.
func writeOut(path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(os.Stdout)
	}
	tmp, err := os.CreateTemp(dirOf(path), ".bootbench-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	// CreateTemp makes the file 0600; an export is for sharing.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i+1]
		}
	}
	return "."
}

// clockLine says what clock a run asked for and what came of it.
func clockLine(r *results.Run) string {
	asked := "the board's default"
	if r.ClockMHz > 0 {
		asked = fmt.Sprintf("%d MHz", r.ClockMHz)
	}
	reported := ""
	if r.ClockReportedMHz > 0 {
		reported = fmt.Sprintf(", the board reported %d MHz", r.ClockReportedMHz)
	}
	switch r.ClockCheck {
	case results.ClockVerified:
		return asked + reported + " (verified)"
	case results.ClockUnverified:
		return asked + reported + " (unverified: nothing on the board could confirm it)"
	case results.ClockMismatch:
		return asked + " asked for" + reported + " (mismatch)"
	}
	return asked + reported
}
