package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/serialctl"
	"github.com/bootbench/bootbench/serialctl/pasted"
)

const importSynopsis = "import --board NAME --clock MHZ [--format auto|openssl|openssl-mr|iperf|iperf3|dd] [--table N] [--tool-version V] [--rep N] [--force | --skip-existing] [--new-board] [--db PATH] FILE..."

// importOptions are import's flags, checked.
type importOptions struct {
	board, format, toolVersion, dbPath string
	clock, rep, table                  int // rep 0: after the highest stored
	force, newBoard, skipExisting      bool
}

// cmdImport stores benchmark output saved elsewhere (a board without
// bootbench support, a published table) as runs. Every file is read, parsed
// and checked before the first is stored, so a bad file in the list leaves
// the store as it was; then each file is stored in its own transaction and
// reported only once committed, so an interrupted import loses nothing it
// reported.
func cmdImport(ctx context.Context, args []string) error {
	o, files, err := importFlags(args)
	if err != nil {
		return err
	}
	// Files first: bad input is refused before the store is opened, so
	// it creates nothing.
	imports, err := readImports(files, o)
	if err != nil {
		return err
	}
	if !o.newBoard {
		if err := refuseUnknownBoard(ctx, o); err != nil {
			return err
		}
	}
	if err := o.settleClock(); err != nil {
		return err
	}
	// Output already stored is found before the store is opened for
	// writing: a refused import writes nothing, not even the store's mark.
	imports, skipped, err := dropImported(ctx, o, imports)
	if err != nil {
		return err
	}
	stored := 0
	if len(imports) > 0 {
		if stored, err = storeImports(ctx, o, imports); err != nil {
			return err
		}
	}
	if o.skipExisting {
		fmt.Printf("%d imported, %d skipped as already imported\n", stored, skipped+len(imports)-stored)
	}
	return nil
}

// storeImports stores the imports a batch of files a transaction (see
// storeBatch) and reports each once committed. It returns how many it
// stored.
func storeImports(ctx context.Context, o *importOptions, imports []*results.Import) (int, error) {
	s, path, err := openStoreChecked(o.dbPath)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	// A writer of the store delivers what waits in its spool first.
	ss := &spooledStore{Store: s, name: path, path: storePath(o.dbPath), spool: spool.For(storePath(o.dbPath))}
	ss.deliver(ctx, stderrNote)
	next := o.rep
	if next == 0 {
		if next, err = s.NextRep(ctx, o.board, boards.MHz(o.clock)); err != nil {
			return 0, storeFailure(path, err)
		}
	}
	stored := 0
	for len(imports) > 0 {
		batch := imports[:min(len(imports), importBatch)]
		imports = imports[len(batch):]
		n, err := storeBatch(ctx, s, path, o, batch, &next)
		stored += n
		if err != nil {
			return stored, err
		}
	}
	return stored, nil
}

// importBatch is how many files import commits at once: a commit waits
// for the disk, so one a file bounds an import at a few hundred runs a
// second; a batch's lines are printed once it is committed.
const importBatch = 200

// storeBatch stores a batch of imports in one transaction, reps from
// *next on, and reports each once committed. When the store refuses one
// of them (output another import stored meanwhile, say), nothing of the
// batch was stored, and it is stored file by file instead, as that one
// file decides. It returns how many it stored.
func storeBatch(ctx context.Context, s *store.Store, path string, o *importOptions, batch []*results.Import, next *int) (int, error) {
	runs := make([]*results.Run, len(batch))
	for i, im := range batch {
		im.Board, im.ClockMHz, im.Rep = o.board, boards.MHz(o.clock), *next+i
		runs[i] = im.Run()
	}
	if err := s.SaveRuns(ctx, runs); err != nil {
		if store.IsDamaged(err) {
			// Met damage: the store takes nothing more.
			return 0, storeFailure(path, err)
		}
		return storeOneByOne(ctx, s, path, o, batch, next)
	}
	*next += len(batch)
	for i, im := range batch {
		reportImported(im, runs[i])
	}
	return len(batch), nil
}

// storeOneByOne stores each import in its own transaction and reports it
// once committed; with --skip-existing, output another import stored
// meanwhile is skipped. It returns how many it stored.
func storeOneByOne(ctx context.Context, s *store.Store, path string, o *importOptions, imports []*results.Import, next *int) (int, error) {
	stored := 0
	for _, im := range imports {
		im.Board, im.ClockMHz, im.Rep = o.board, boards.MHz(o.clock), *next
		r := im.Run()
		if err := s.SaveRun(ctx, r); err != nil {
			if errors.Is(err, store.ErrDuplicateInput) {
				// Another import of the same bytes won the race since
				// dropImported looked.
				if o.skipExisting {
					fmt.Printf("skipped %s: %v\n", im.Label(), err)
					continue
				}
				return stored, &exitError{code: 2, err: fmt.Errorf("%s: %w (use --force to store it again)", im.Path, err)}
			}
			return stored, storeFailure(path, fmt.Errorf("%s: %w", im.Path, err))
		}
		*next++
		stored++
		reportImported(im, r)
	}
	return stored, nil
}

// reportImported says a run is stored. Printed only once committed: a
// line is a promise that the run survives whatever happens next.
func reportImported(im *results.Import, r *results.Run) {
	metrics := "metrics"
	if len(r.Metrics) == 1 {
		metrics = "metric"
	}
	fmt.Printf("imported %s as run %s (%d %s)\n", im.Label(), r.ID, len(r.Metrics), metrics)
}

// importFlags parses and checks import's command line.
func importFlags(args []string) (*importOptions, []string, error) {
	fs := newCommand("import", importSynopsis, "")
	board := fs.String("board", "", "board the output came from (required)")
	clock := fs.Int("clock", 0, "clock setting in MHz the output was measured at (required; 0: the board model's default clock); held to the model's clocks as run is")
	format := fs.String("format", "auto", "output format: "+strings.Join(parse.Formats, ", "))
	table := fs.Int("table", 0, "import the Nth of several outputs a file holds (a forum post pasting several openssl speed runs)")
	toolVersion := fs.String("tool-version", "", "version of what printed the output when it does not say (openssl speed -mr, iperf 2, dd)")
	rep := fs.Int("rep", 0, "repetition number of the first file, counting up per file (default: after the highest stored)")
	force := fs.Bool("force", false, "store output even if the same bytes were imported before, or at a clock the board's model does not run")
	newBoard := fs.Bool("new-board", false, "--board names a new board: store runs under it though it is neither a board profile nor in the store")
	skip := fs.Bool("skip-existing", false, "skip output already imported (the same bytes) and import the rest, as after an interrupted import")
	fs.storeFlag()
	if err := fs.parseArgs(args); err != nil {
		return nil, nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *board == "":
		return nil, nil, usageErr("import: say which board the output came from with --board NAME")
	case !set["clock"]:
		return nil, nil, usageErr("import: say which clock setting it was measured at with --clock MHZ (0 for the board's default)")
	case *clock < 0:
		return nil, nil, usageErr("import: --clock %d: want MHz, 0 or more", *clock)
	case set["rep"] && *rep < 1:
		return nil, nil, usageErr("import: --rep %d: repetitions count from 1", *rep)
	case set["table"] && *table < 1:
		return nil, nil, usageErr("import: --table %d: tables count from 1", *table)
	case !slices.Contains(parse.Formats, *format):
		return nil, nil, usageErr("import: unknown format %q (formats: %s)", *format, strings.Join(parse.Formats, ", "))
	case fs.NArg() == 0:
		return nil, nil, usageErr("import: name at least one FILE of benchmark output")
	case *force && *skip:
		return nil, nil, usageErr("import: --force stores output again, --skip-existing skips it: give one")
	}
	o := &importOptions{board: *board, format: *format, toolVersion: *toolVersion,
		clock: *clock, rep: *rep, table: *table, force: *force, newBoard: *newBoard, skipExisting: *skip, dbPath: *fs.db}
	return o, fs.Args(), nil
}

// settleClock holds the clock to what the board's model can run, as run
// does (a board model's limits: 99999999 MHz is no RB450G clock, nor 2500
// MHz a Raspberry Pi 4's), unless --force; and --clock 0, the board's
// default, is the model's default clock, so compare counts it with the
// runs at that clock. A board that is no model (a name of the user's)
// keeps the clock as given.
func (o *importOptions) settleClock() error {
	p, err := boards.Get(o.board)
	if err != nil {
		return nil
	}
	if o.clock == 0 {
		o.clock = int(cmp.Or(p.DefaultClock, p.FixedClock))
		return nil
	}
	// A clock above a Raspberry Pi's safe limit is one the board runs
	// (with over_voltage): only the firmware's limits hold here.
	if err := p.CheckClock(boards.MHz(o.clock)); err != nil && !o.force {
		return usageErr("import: %v; nothing imported (--force stores it at %s anyway)", err, boards.MHz(o.clock).Figure())
	}
	return nil
}

// refuseUnknownBoard refuses a board name that is neither a board profile
// nor a board with runs in the store, so a typo does not start a board of
// its own: it suggests the nearest known name, and --new-board says the
// name is meant. It reads the store only, so a refusal creates nothing.
func refuseUnknownBoard(ctx context.Context, o *importOptions) error {
	if isProfile(o.board) {
		return nil
	}
	s, path, err := openStoreReadOnly(o.dbPath)
	var stored []string
	switch {
	case errors.Is(err, store.ErrNoStore):
	case err != nil:
		return err
	default:
		defer s.Close()
		if stored, err = s.Boards(ctx); err != nil {
			return storeFailure(path, err)
		}
	}
	if slices.Contains(stored, o.board) {
		return nil
	}
	return usageErr("import: board %q is neither a board profile nor in results store %s%s; nothing imported (add --new-board to store runs under a new board name)", o.board, path, didYouMean(o.board, stored))
}

// isProfile reports whether name is a board profile's.
func isProfile(name string) bool {
	_, err := boards.Get(name)
	return err == nil
}

// checkBoardsNamed refuses, for a command that reads the store, a board
// name that is neither a board profile nor a board with runs in it: a
// typo would otherwise select nothing and exit 0 as if the board had no
// runs.
func checkBoardsNamed(ctx context.Context, s *store.Store, path, cmd string, names ...string) error {
	var stored []string
	for _, name := range names {
		if name == "" || isProfile(name) {
			continue
		}
		if stored == nil {
			var err error
			if stored, err = s.Boards(ctx); err != nil {
				return storeFailure(path, err)
			}
		}
		if !slices.Contains(stored, name) {
			return usageErr("%s: board %q is neither a board profile nor in results store %s%s", cmd, name, path, didYouMean(name, stored))
		}
	}
	return nil
}

// didYouMean is " (did you mean NAME?)" for the known board name nearest
// to name, among the board profiles and stored; "" when none is near.
func didYouMean(name string, stored []string) string {
	known := slices.Clone(stored)
	if ps, err := boards.All(); err == nil {
		for _, p := range ps {
			known = append(known, p.Name)
		}
	}
	if near := boards.Closest(name, known); near != "" {
		return fmt.Sprintf(" (did you mean %s?)", near)
	}
	return ""
}

// readImports reads and parses every file.
func readImports(paths []string, o *importOptions) ([]*results.Import, error) {
	imports := make([]*results.Import, len(paths))
	errs := make([]error, len(paths))
	// Parsing is a third of a large import's time and each file is its
	// own: every core parses. The first bad file in the list is the one
	// said, whichever was parsed first.
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				imports[i], errs[i] = readImport(paths[i], o)
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return imports, nil
}

// dropImported finds output already stored, or named twice, before
// anything is stored, reading the store only: it refuses the whole import
// unless force (stored again) or skip (left out, each said so). It returns
// the imports to store and how many it skipped.
func dropImported(ctx context.Context, o *importOptions, imports []*results.Import) ([]*results.Import, int, error) {
	// A store this import could not write is refused as such first.
	if err := store.CheckWritable(storePath(o.dbPath)); err != nil {
		return nil, 0, storeErr(err)
	}
	s, path, err := openStoreReadOnly(o.dbPath)
	switch {
	case errors.Is(err, store.ErrNoStore):
		s = nil // nothing stored yet: only the list can repeat itself
	case err != nil:
		return nil, 0, err
	default:
		defer s.Close()
	}
	sums := make([]string, len(imports))
	for i, im := range imports {
		sums[i] = results.InputSHA256(im.Data)
	}
	// Looked up together: one by one, a large import's lookups took
	// longer than its writes.
	stored := map[string]results.RunID{}
	if s != nil {
		if stored, err = s.RunsByInputSHA256(ctx, sums); err != nil {
			return nil, 0, storeFailure(path, err)
		}
	}
	var keep []*results.Import
	seen := map[string]string{} // sha256 → file, for the same output named twice
	for i, im := range imports {
		sum := sums[i]
		prev, dup := seen[sum]
		if id := stored[sum]; !dup && id != "" {
			prev, dup = "run "+string(id), true
		}
		switch {
		case dup && o.skipExisting:
			fmt.Printf("skipped %s: already imported (same bytes as %s)\n", im.Label(), prev)
			continue
		case dup && !o.force:
			return nil, 0, usageErr("%s: already imported (same bytes as %s); nothing imported (use --force to store it again, --skip-existing to import the rest)", im.Label(), prev)
		case dup:
			// The hash stays with the first import; this one is an
			// extra run of the same output.
			im.Again = true
		}
		seen[sum] = im.Label()
		keep = append(keep, im)
	}
	return keep, len(imports) - len(keep), nil
}

// readImport reads and parses one file. Of a file holding several
// outputs, the one --table picks is imported, and its own lines are kept
// as the run's output.
func readImport(path string, o *importOptions) (*results.Import, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	tables, err := parse.Tables(o.format, data, o.toolVersion)
	if err != nil {
		return nil, parseErr(path, err, o.toolVersion)
	}
	out, err := pickTable(path, tables, o.table)
	if err != nil {
		return nil, err
	}
	im := &results.Import{Path: path, Data: data, Measured: out.Measured, Tool: out.Tool, Version: out.Version}
	im.Bootloader, im.FirmwareClockMHz = capturedFirmware(data, out.Line)
	if len(tables) > 1 {
		im.Table, im.Tables = o.table, len(tables)
		im.Data = lines(data, out.FirstLine, out.LastLine)
	}
	for _, m := range out.Metrics {
		im.Metrics = append(im.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
	}
	return im, nil
}

// capturedFirmware is the firmware a console capture shows before its
// benchmark output, which starts at line first: the banner and announced
// clock of the last boot before it (serialctl.BootFirmware). Output
// saved alone shows none, and so does a file that reads as no console
// log.
func capturedFirmware(data []byte, first int) (string, boards.MHz) {
	log, err := pasted.Read(bytes.NewReader(data))
	if err != nil {
		return "", 0
	}
	var fw serialctl.BootFirmware
	for _, l := range log.Lines {
		if l.N >= first {
			break
		}
		fw.Line(l.Text)
	}
	return fw.Bootloader, fw.ClockMHz
}

// parseErr says what is wrong with a file's output (parse errors read
// "line N: ..."), and what to do where bootbench can tell.
func parseErr(path string, err error, toolVersion string) error {
	switch {
	case errors.Is(err, parse.ErrEra) && toolVersion != "":
		return usageErr("%s: %v (--tool-version %s did not settle it: is it the version that printed this file?)", path, err, toolVersion)
	case errors.Is(err, parse.ErrEra):
		return usageErr("%s: %v (say which with --tool-version, e.g. --tool-version 1.0.2u)", path, err)
	}
	return usageErr("%s: %v", path, err)
}

// pickTable returns the output --table picks, refusing to guess when a
// file holds several.
func pickTable(path string, tables []*parse.Output, table int) (*parse.Output, error) {
	switch {
	case table == 0 && len(tables) > 1:
		var s []string
		for i, t := range tables {
			s = append(s, fmt.Sprintf("%d at line %d (%s)", i+1, t.Line, t.Summary()))
		}
		return nil, usageErr("%s holds %d benchmark outputs: %s; import one with --table N", path, len(tables), strings.Join(s, "; "))
	case table > len(tables):
		return nil, usageErr("%s: --table %d: it holds %d benchmark output%s", path, table, len(tables), plural(len(tables)))
	case table == 0:
		return tables[0], nil
	}
	return tables[table-1], nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// lines returns lines first to last (from 1, inclusive) of data, byte for
// byte.
func lines(data []byte, first, last int) []byte {
	start, n := 0, 1
	for i := 0; i < len(data) && n < first; i++ {
		if data[i] == '\n' {
			n, start = n+1, i+1
		}
	}
	end := start
	for ; end < len(data); end++ {
		if data[end] == '\n' {
			if n == last {
				end++
				break
			}
			n++
		}
	}
	return data[start:end]
}
