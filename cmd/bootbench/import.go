package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

const importSynopsis = "import --board NAME --clock MHZ [--format auto|openssl|openssl-mr|iperf|iperf3|dd] [--rep N] [--force] [--db PATH] FILE..."

// cmdImport stores benchmark output saved elsewhere (a board without
// bootbench support, a published table) as runs. Every file is read, parsed
// and checked before the first is stored, so a bad file in the list leaves
// the store as it was; then each file is stored in its own transaction and
// reported only once committed, so an interrupted import loses nothing it
// reported.
func cmdImport(ctx context.Context, args []string) error {
	fs := newFlags("import", importSynopsis)
	board := fs.String("board", "", "board the output came from (required)")
	clock := fs.Int("clock", 0, "clock setting in MHz the output was measured at (required; 0: the board's default)")
	format := fs.String("format", "auto", "output format: "+strings.Join(parse.Formats, ", "))
	rep := fs.Int("rep", -1, "repetition number of the first file, counting up per file (default: after the highest stored)")
	force := fs.Bool("force", false, "store output even if the same bytes were imported before")
	db := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *board == "":
		return usageErr("import: say which board the output came from with --board NAME")
	case !set["clock"]:
		return usageErr("import: say which clock setting it was measured at with --clock MHZ (0 for the board's default)")
	case *clock < 0:
		return usageErr("import: --clock %d: want MHz, 0 or more", *clock)
	case !slices.Contains(parse.Formats, *format):
		return usageErr("import: unknown format %q (formats: %s)", *format, strings.Join(parse.Formats, ", "))
	case fs.NArg() == 0:
		return usageErr("import: name at least one FILE of benchmark output")
	}

	s, _, err := openStore(*db)
	if err != nil {
		return err
	}
	defer s.Close()

	imports, err := readImports(ctx, s, fs.Args(), *format, *force)
	if err != nil {
		return err
	}
	next := *rep
	if next < 0 {
		if next, err = s.NextRep(ctx, *board, *clock); err != nil {
			return err
		}
	}
	for _, im := range imports {
		im.Board, im.ClockMHz, im.Rep = *board, *clock, next
		next++
		r := im.Run()
		if err := s.SaveRun(ctx, r); err != nil {
			if errors.Is(err, results.ErrDuplicateInput) {
				// Another import of the same bytes won the race since
				// readImports looked.
				return &exitError{code: 2, err: fmt.Errorf("%s: %w (use --force to store it again)", im.Path, err)}
			}
			return fmt.Errorf("%s: %w", im.Path, err)
		}
		// Printed only once committed: a line here is a promise that
		// the run survives whatever happens next.
		metrics := "metrics"
		if len(r.Metrics) == 1 {
			metrics = "metric"
		}
		fmt.Printf("imported %s as run %s (%d %s)\n", im.Path, r.ID, len(r.Metrics), metrics)
	}
	return nil
}

// readImports reads and parses every file and refuses output already
// imported (unless force), before anything is stored.
func readImports(ctx context.Context, s *results.Store, paths []string, format string, force bool) ([]*results.Import, error) {
	var imports []*results.Import
	seen := map[string]string{} // sha256 → file, for the same output named twice
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		out, err := parse.Parse(format, data)
		if err != nil {
			// parse.Error reads "line N: msg".
			return nil, usageErr("%s: %v", path, err)
		}
		im := &results.Import{Path: path, Data: data, Modified: fi.ModTime(), Tool: out.Tool, Version: out.Version}
		for _, m := range out.Metrics {
			im.Metrics = append(im.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
		}
		sum := results.InputSHA256(data)
		prev, dup := seen[sum]
		if !dup {
			id, err := s.RunByInputSHA256(ctx, sum)
			if err != nil {
				return nil, err
			}
			prev, dup = "run "+string(id), id != ""
		}
		switch {
		case dup && !force:
			return nil, usageErr("%s: already imported (same bytes as %s); nothing imported (use --force to store it again)", path, prev)
		case dup:
			// The hash stays with the first import; this one is an
			// extra run of the same output.
			im.Again = true
		}
		seen[sum] = path
		imports = append(imports, im)
	}
	return imports, nil
}
