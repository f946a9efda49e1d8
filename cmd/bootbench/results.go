package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/export"
	"github.com/bootbench/bootbench/results/store"
)

// resultsHelp is what 'bootbench results --help' prints: the subcommands,
// each with its own --help.
const resultsHelp = `Usage: bootbench results SUBCOMMAND [flags]

Reads the results store (--db, else $BOOTBENCH_DB, else $XDG_DATA_HOME/bootbench/results.db):
  bootbench ` + listSynopsis + `
  bootbench ` + showSynopsis + `
  bootbench results compare --by clock|board [--board NAME] [--boards BOARD[@MHZ],...] [flags]
  bootbench results export [--format openwrt|csv|json|gobench|html] [--board NAME] [--clock MHZ] [-o OUT] [flags]
  bootbench ` + checkSynopsis + `
  bootbench ` + pushSynopsis + `

Run 'bootbench results SUBCOMMAND --help' for a subcommand's flags.
`

func cmdResults(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usageErr("results: say list, show RUN, compare, export, check or push (see 'bootbench results --help')")
	}
	if sub, ok := groupHelp(args, resultsHelp); ok {
		if sub == nil {
			return errHelpShown
		}
		return cmdResults(ctx, sub)
	}
	switch args[0] {
	case "list":
		return cmdResultsList(ctx, args[1:])
	case "show":
		return cmdResultsShow(ctx, args[1:])
	case "compare":
		return cmdCompare(ctx, args[1:])
	case "export":
		return cmdResultsExport(ctx, args[1:])
	case "check":
		return cmdResultsCheck(ctx, args[1:])
	case "push":
		return cmdResultsPush(ctx, args[1:])
	}
	return usageErr("results: unknown subcommand %q (list, show, compare, export, check, push)", args[0])
}

const (
	listSynopsis = "results list [--board NAME] [--clock MHZ] [--since DATE] [--until DATE] [--limit N] [--db PATH]"
	showSynopsis = "results show RUN [--transcript | --raw] [--db PATH]"
)

// listPage is how many runs results list shows unless --limit says: the
// newest, so a store kept for years lists as fast as a new one.
const listPage = 100

func cmdResultsList(ctx context.Context, args []string) error {
	fs := newCommand("results list", listSynopsis, "Lists the newest "+fmt.Sprint(listPage)+" runs selected, oldest of them first, and says on\n"+
		"stderr how many older ones it left out. DATE is YYYY-MM-DD (UTC) or RFC 3339;\n"+
		"--since takes runs started at or after it, --until runs started before it.")
	board := fs.String("board", "", "only this board")
	clock := fs.Int("clock", 0, "only this clock setting (MHz)")
	since := fs.String("since", "", "only runs started at or after this time (YYYY-MM-DD or RFC 3339)")
	until := fs.String("until", "", "only runs started before this time (YYYY-MM-DD or RFC 3339)")
	limit := fs.Int("limit", listPage, "list at most this many runs, the newest; 0 lists every run selected")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	f, err := listFilter("results list", *board, *clock, *since, *until, *limit)
	if err != nil {
		return err
	}
	// Runs the store has not got yet are said whatever the store does:
	// when it is away, they are the runs a user looks for.
	if waiting := spoolWaiting(storePath(*fs.db)); waiting != "" {
		defer stderrNote(waiting)
	}
	s, path, err := fs.readStore()
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkBoardsNamed(ctx, s, path, "results list", *board); err != nil {
		return err
	}
	runs, err := s.Runs(ctx, f)
	if err != nil {
		return storeFailure(path, err)
	}
	if err := export.WriteTable(os.Stdout, runs); err != nil {
		return err
	}
	return listRest(ctx, s, path, f, runs)
}

// listFilter is the selecting flags of list and export (cmd, as errors
// name it) as the store's filter, refused as usage errors where they
// make no sense.
func listFilter(cmd, board string, clock int, since, until string, limit int) (results.Filter, error) {
	f := results.Filter{Board: board, ClockMHz: boards.MHz(clock), Limit: limit}
	var err error
	switch {
	case clock < 0:
		return f, usageErr("%s: --clock %d: give a clock in MHz, e.g. --clock 680", cmd, clock)
	case limit < 0:
		return f, usageErr("%s: --limit %d: give how many runs to list, or 0 for every run", cmd, limit)
	}
	if f.Since, err = parseWhen(cmd, "--since", since); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen(cmd, "--until", until); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, usageErr("%s: --since %s is not before --until %s: no run could start between them", cmd, since, until)
	}
	return f, nil
}

// parseWhen reads cmd's --since or --until: a day (YYYY-MM-DD, its start
// in UTC) or an RFC 3339 time, as the run times list shows and the JSON
// export gives; "" is no bound.
func parseWhen(cmd, flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usageErr("%s: %s %q: give a day, 2026-12-01, or a time, 2026-12-01T10:00:00Z", cmd, flag, v)
	}
	return t, nil
}

// listCountMost is how many older runs list counts at most after a page:
// counting every run of a store kept for years reads all their ids (a
// million runs' take about 0.2 s); past this many it says "more than".
var listCountMost = 10000 // a variable so a test can pass it with a few runs

// listRest says on stderr, after a full page, how many older runs the
// page left out and how to see them; nothing when it showed them all.
// Only a full page pays for the count, and no more than listCountMost.
func listRest(ctx context.Context, s *store.Store, path string, f results.Filter, shown []results.Run) error {
	if f.Limit <= 0 || len(shown) < f.Limit {
		return nil
	}
	total, err := s.CountRuns(ctx, f, len(shown)+listCountMost+1)
	if err != nil {
		return storeFailure(path, err)
	}
	if total <= len(shown) {
		return nil
	}
	older := total - len(shown)
	before := ""
	if first := shown[0].Started; !first.IsZero() {
		before = ", --until " + first.UTC().Format(time.RFC3339Nano) + " the ones before"
	}
	if older > listCountMost {
		stderrNote(fmt.Sprintf("results list: more than %d older runs not shown (the newest %d); --limit 0 lists them all%s",
			listCountMost, len(shown), before))
		return nil
	}
	stderrNote(fmt.Sprintf("results list: %d older run%s not shown (the newest %d of %d); --limit 0 lists them all%s",
		older, plural(older), len(shown), total, before))
	return nil
}

func cmdResultsShow(ctx context.Context, args []string) error {
	fs := newCommand("results show", showSynopsis, "")
	transcript := fs.Bool("transcript", false, "print the serial transcript too")
	raw := fs.Bool("raw", false, "print only the benchmark's own output, byte for byte as the board printed it (or as imported)")
	fs.storeFlag()
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return usageErr("results show: name one run id (see 'bootbench results list')")
	case *raw && *transcript:
		return usageErr("results show: --raw prints the benchmark's output alone; drop --transcript")
	}
	s, path, err := fs.readStore()
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := runNamed(ctx, s, path, storePath(*fs.db), fs.Arg(0))
	if err != nil {
		return err
	}
	r, err := s.Run(ctx, id)
	if err != nil {
		return storeFailure(path, err)
	}
	if *raw {
		return writeRaw(r)
	}
	writeRunHeader(r)
	if err := export.WriteMetrics(os.Stdout, r); err != nil {
		return err
	}
	if err := export.WriteEnergy(os.Stdout, r); err != nil {
		return err
	}
	if *transcript {
		return writeTranscript(os.Stdout, r.Transcript)
	}
	return nil
}

// runNamed is the run name names: its id, or the start of one id (the
// part results list shows first, 20261204-101010, or more).
func runNamed(ctx context.Context, s *store.Store, path, raw, name string) (results.RunID, error) {
	ids, err := s.IDsWithPrefix(ctx, name)
	if err != nil {
		return "", storeFailure(path, err)
	}
	switch {
	case slices.Contains(ids, results.RunID(name)) || len(ids) == 1:
		if len(ids) == 1 {
			return ids[0], nil
		}
		return results.RunID(name), nil
	case len(ids) > 1:
		var some []string
		for _, id := range ids {
			some = append(some, string(id))
		}
		return "", usageErr("results show: %q starts several runs' ids in %s (%s); give more of it", name, path, strings.Join(some, ", "))
	}
	if file := spooledRun(raw, name); file != "" {
		return "", usageErr("results show: run %s is not in %s yet: it waits in the spool (%s) for the next command that writes to that store, or '%s'", name, path, file, pushHint(raw))
	}
	return "", usageErr("results show: no run %q in %s (see 'bootbench results list')", name, path)
}

// writeTranscript prints a run's serial transcript: byte for byte into a
// pipe or file, escaped on a terminal, which would otherwise obey the
// control sequences the board sent (--raw gives the benchmark's output
// byte for byte, terminal or not).
func writeTranscript(out *os.File, transcript []byte) error {
	if !isTerminal(out) {
		fmt.Fprintf(out, "\n--- transcript (%d bytes) ---\n", len(transcript))
		_, err := out.Write(transcript)
		return err
	}
	fmt.Fprintf(out, "\n--- transcript (%d bytes; control bytes shown as \\xNN) ---\n", len(transcript))
	return writeForTerminal(out, transcript)
}

// writeRaw prints a run's benchmark output exactly as stored, so it can be
// read again by the tool's own parser or by bootbench import.
func writeRaw(r *results.Run) error {
	if len(r.RawOutput) == 0 {
		why := "the board sent none"
		if r.Reason != "" {
			why += ": " + r.Reason
		}
		return fmt.Errorf("results show: run %s (%s) has no benchmark output stored (%s); see --transcript", r.ID, r.Status, why)
	}
	_, err := os.Stdout.Write(r.RawOutput)
	return err
}

func writeRunHeader(r *results.Run) {
	fmt.Printf("run      %s\nboard    %s\nclock    %s\nstatus   %s\n", r.ID, r.Board, clockLine(r), r.Status)
	if r.Reason != "" {
		fmt.Printf("reason   %s\n", r.Reason)
	}
	if r.Throttle != nil {
		fmt.Printf("throttle %s; left out of comparisons unless --include-throttled\n", r.Throttle)
	}
	tool := strings.TrimSpace(r.Tool + " " + r.ToolVersion)
	if r.ToolVersion == "" && r.Tool != "" {
		tool += ", version not in the output"
	}
	fmt.Printf("bench    %s (%s)\n", r.Bench, tool)
	if fw := firmwareLine(r); fw != "" {
		fmt.Printf("firmware %s\n", fw)
	}
	// An imported run has no kernel or image of bootbench's.
	if r.Kernel != "" {
		fmt.Printf("kernel   %s\n", r.Kernel)
	}
	if r.ImageDigest != "" {
		fmt.Printf("image    %s\n", r.ImageDigest)
	}
	started := r.Started.Format("2006-01-02 15:04:05Z07:00")
	switch r.StartedFrom {
	case results.StartedImported:
		started += " (when imported: the output does not say when it ran)"
	case results.StartedOutput:
		started += " (as the output says)"
	}
	fmt.Printf("started  %s\n", started)
	if r.Source != "" {
		fmt.Printf("source   %s\n", r.Source)
	}
	for _, st := range r.Stages {
		fmt.Printf("  %-9s %6.1fs\n", st.Name, st.Duration.Seconds())
	}
	fmt.Println()
}

// exporters are the export writers by format name, in the order usage and
// errors list them.
var exporters = []struct {
	name  string
	write func(io.Writer, []results.Run) error
}{
	{"openwrt", export.WriteOpenWrt},
	{"csv", export.WriteCSV},
	{"json", export.WriteJSON},
	{"gobench", export.WriteGobench},
	{"html", export.WriteHTML},
}

func exportFormats(sep string) string {
	var names []string
	for _, w := range exporters {
		names = append(names, w.name)
	}
	return strings.Join(names, sep)
}

func cmdResultsExport(ctx context.Context, args []string) error {
	synopsis := "results export [--format " + exportFormats("|") + "] [--with-setting] [--board NAME] [--clock MHZ] [--since DATE] [--until DATE] [--skip RUN,...] [-o OUT] [--db PATH]"
	fs := newCommand("results export", synopsis, "--format openwrt prints, per run, what the OpenWrt wiki's OpenSSL benchmark recipe\n"+
		"prints on the board: its /proc/cpuinfo line (system type, machine, cpu model, BogoMIPS)\n"+
		"and the openssl version and figures, no header. --with-setting gives one row per board\n"+
		"and clock instead, board and clock first, under a header. DATE is YYYY-MM-DD (UTC) or\n"+
		"RFC 3339; --since takes runs started at or after it, --until runs started before it.\n"+
		"--board, --clock, --since and --until select in the store: an HTML report of one\n"+
		"board's last month reads that month's runs alone.")
	format := fs.String("format", "json", "output format: "+exportFormats(", "))
	withSetting := fs.Bool("with-setting", false, "openwrt: one row per board and clock setting (medians of its runs), with board and clock columns and a header")
	board := fs.String("board", "", "only this board")
	clock := fs.Int("clock", 0, "only this clock setting (MHz)")
	since := fs.String("since", "", "only runs started at or after this time (YYYY-MM-DD or RFC 3339)")
	until := fs.String("until", "", "only runs started before this time (YYYY-MM-DD or RFC 3339)")
	skip := fs.String("skip", "", "leave out these runs, comma separated: the damaged runs 'results check' names, to export what still reads")
	out := fs.String("o", "", "write to this file (default standard output)")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	var write func(io.Writer, []results.Run) error
	for _, w := range exporters {
		if w.name == *format {
			write = w.write
		}
	}
	if write == nil {
		return usageErr("results export: unknown format %q (formats: %s)", *format, exportFormats(", "))
	}
	switch {
	case *withSetting && *format != "openwrt":
		return usageErr("results export: --with-setting goes with --format openwrt")
	case *withSetting:
		write = export.WriteOpenWrtSettings
	}
	f, err := listFilter("results export", *board, *clock, *since, *until, 0)
	if err != nil {
		return err
	}
	if err := checkOutPath(*out); err != nil {
		return err
	}
	s, path, err := fs.readStore()
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkBoardsNamed(ctx, s, path, "results export", *board); err != nil {
		return err
	}
	// The wiki's own row is made from each run's output, as the recipe
	// makes it.
	raw := *format == "openwrt" && !*withSetting
	// The report draws each run's power, and the JSON carries it.
	samples := *format == "html" || *format == "json"
	for _, id := range splitList(*skip) {
		f.Skip = append(f.Skip, results.RunID(id))
	}
	f.WithTranscript, f.WithSamples = raw, samples
	if stream := streamed[*format]; stream != nil {
		return exportStream(ctx, s, path, *out, f, stream)
	}
	runs, err := s.Runs(ctx, f)
	if err != nil {
		return storeFailure(path, err)
	}
	if raw {
		for _, id := range export.OpenWrtUnread(runs) {
			fmt.Fprintf(os.Stderr, "bootbench: results export: run %s left out: the OpenWrt recipe reads no figure from its output (openssl speed -mr's); --with-setting gives its figures\n", id)
		}
	}
	return writeOut(*out, func(w io.Writer) error { return write(w, runs) })
}

// streamed are the formats written as the runs are read, a page at a
// time, so their memory is bounded whatever the store holds; the others
// need every run before their first byte (a report's charts, a table's
// widths, medians of settings).
var streamed = map[string]func(io.Writer) export.RunWriter{
	"json": export.NewJSONWriter,
	"csv":  export.NewCSVWriter,
}

// exportStream writes the runs f selects to out as the store gives them.
// A damaged run stops it with nothing written where the export goes:
// a file is written beside and renamed (writeOut), standard output is
// written through a temporary file, so a script never reads half an
// export as a whole one.
func exportStream(ctx context.Context, s *store.Store, path, out string, f results.Filter, stream func(io.Writer) export.RunWriter) error {
	var readErr error // the store's, said as every reading command says it
	write := func(w io.Writer) error {
		rw := stream(w)
		var writeErr error
		readErr = s.EachRun(ctx, f, func(r *results.Run) error {
			writeErr = rw.Write(r)
			return writeErr
		})
		switch {
		case writeErr != nil:
			readErr = nil
			return writeErr
		case readErr != nil:
			return readErr
		}
		return rw.Close()
	}
	var err error
	if out == "" || out == "-" {
		err = throughTempFile(os.Stdout, write)
	} else {
		err = writeOut(out, write)
	}
	if readErr != nil {
		return storeFailure(path, readErr)
	}
	return err
}

// throughTempFile gives write a temporary file, and copies what it wrote
// to dst only once it is all written.
func throughTempFile(dst io.Writer, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp("", "bootbench-export-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	buf := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(buf); err != nil {
		return err
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = io.Copy(dst, tmp)
	return err
}

const checkSynopsis = "results check [--db PATH]"

// cmdResultsCheck runs SQLite's integrity and foreign key checks over the
// store (in PostgreSQL, the store's consistency checks), without writing
// to it.
func cmdResultsCheck(ctx context.Context, args []string) error {
	fs := newCommand("results check", checkSynopsis, "Checks the results store with SQLite's integrity and foreign key checks\n"+
		"(a store in PostgreSQL: that its rows keep bootbench's promises), reading\n"+
		"only. Exit status 1 when it finds problems, listed one a line.")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	raw := storePath(*fs.db)
	path := store.DisplayName(raw)
	rep, err := store.Check(ctx, raw)
	if err != nil {
		return storeErr(err)
	}
	if len(rep.Problems) == 0 {
		fmt.Printf("results store %s is sound: schema version %d, %d runs\n", path, rep.Version, rep.Runs)
		return nil
	}
	for _, p := range rep.Problems {
		fmt.Println(p)
	}
	problems := fmt.Sprintf("%d problem%s, listed above", len(rep.Problems), plural(len(rep.Problems)))
	if store.IsURL(raw) {
		return fmt.Errorf("results store %s fails its consistency check (%s): the rows named break what bootbench expects of them; restore them from a backup, or remove them", path, problems)
	}
	return fmt.Errorf("results store %s fails its integrity check (%s): %s", path, problems, salvageAdvice(rep, path))
}

// salvageAdvice says what to do with a damaged store file: an export of
// what still reads when check found that it does (the damaged runs left
// out with --skip), else a backup.
func salvageAdvice(rep *store.CheckReport, path string) string {
	switch {
	case rep.RestReads && len(rep.Damaged) == 0:
		return fmt.Sprintf("every run still reads: export them (bootbench results export --format json --db %s -o runs.json), then move the file away", path)
	case rep.RestReads:
		var ids []string
		for _, id := range rep.Damaged {
			ids = append(ids, string(id))
		}
		return fmt.Sprintf("export the runs that still read, leaving out the %d damaged (bootbench results export --format json --skip %s --db %s -o runs.json), then move the file away",
			len(ids), strings.Join(ids, ","), path)
	}
	return "no export reads past the damage: restore the file from a backup (or try sqlite3's .recover on a copy of it), then move it away"
}

// checkOutPath refuses an output path that cannot be written before any
// work is done, naming the path as given.
func checkOutPath(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usageErr("cannot write %s: it is a directory; name a file", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usageErr("cannot write %s: directory %s does not exist", path, dir)
	case err != nil:
		return usageErr("cannot write %s: %v", path, err)
	case !fi.IsDir():
		return usageErr("cannot write %s: %s is not a directory", path, dir)
	}
	return refuseKernelFS(path, dir)
}

// writeOut writes to path through a temporary file beside it, so a failed
// export never leaves a half-written file where a good one was; "" is
// standard output. Errors name path, not the temporary file. A new file
// gets the mode the user's umask gives; a file written over keeps its
// own, so an export never widens who may read it.
func writeOut(path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(os.Stdout)
	}
	tmp, err := createBeside(path)
	if err != nil {
		return usageErr("cannot write %s: %v", path, unwrapPathErr(err))
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, unwrapPathErr(err))
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
			tmp.Close()
			return fmt.Errorf("write %s: %w", path, unwrapPathErr(err))
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPathErr(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPathErr(err))
	}
	return nil
}

// createBeside creates a new temporary file in path's directory with mode
// 0666, which the kernel narrows by the umask as for any new file
// (os.CreateTemp's 0600 would ignore it).
func createBeside(path string) (*os.File, error) {
	for {
		name := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d", filepath.Base(path), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
}

// unwrapPathErr drops the file name from an *os.PathError, for messages
// that name the user's path instead of a temporary file's.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// firmwareLine names the firmware that booted a run and the clock it
// announced, as far as its console showed them: "RouterBOOT 2.41,
// announced 800 MHz"; "" when it showed neither.
func firmwareLine(r *results.Run) string {
	var parts []string
	if r.Bootloader != "" {
		parts = append(parts, r.Bootloader)
	}
	if r.FirmwareClockMHz > 0 {
		parts = append(parts, "announced "+r.FirmwareClockMHz.String())
	}
	return strings.Join(parts, ", ")
}

// clockLine says what clock a run asked for and what came of it.
func clockLine(r *results.Run) string {
	asked := r.ClockMHz.Or("the board's default")
	reported := ""
	if r.ClockReportedMHz > 0 {
		reported = ", the board reported " + r.ClockReportedMHz.String()
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
