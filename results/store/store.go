// Package store is bootbench's results store: runs (results.Run) per
// board, clock setting and repetition, with their metrics, boot-stage
// timings and the byte-exact serial transcript, kept in a single SQLite
// file or, for a lab of several bench hosts, in a PostgreSQL database they
// share; pushing runs between stores, importing output, checking a store.
// The record itself, free of any database, is package results.
package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite" // pure Go driver, so the host binary cross-compiles without cgo
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/bootbench/bootbench/internal/redact"

	"github.com/bootbench/bootbench/results"
)

// ErrNotFound is returned (wrapped) when a run id is not in the store.
var ErrNotFound = errors.New("run not found")

// ErrExists is returned (wrapped) by SaveRun when the run id is already
// stored; results are never overwritten.
var ErrExists = errors.New("run already stored")

// ErrDuplicateInput is returned (wrapped) by SaveRun when a run with the
// same InputSHA256 is already stored: the same output imported twice.
var ErrDuplicateInput = errors.New("input already imported")

// bulk says which of a run's parts a read loads: the bulky ones, and
// the stages, which a comparison does without.
type bulk struct{ transcript, samples, noStages bool }

// Store is an open results database: a SQLite file or a PostgreSQL
// database, the same to every caller. It is safe for concurrent use, and
// several Stores (or processes, or hosts) may share one database.
type Store struct {
	db   *sql.DB
	eng  engine
	path string // the file or URL named, for messages (a URL's password hidden)
	// cleanup removes what reading an older store left behind (its
	// upgraded copy); nil if nothing.
	cleanup func()
}

// A Store is what the harness saves runs through.
var _ results.Saver = (*Store)(nil)

// DefaultPath is where the results database lives when --db is not given:
// $BOOTBENCH_DB (a file, or a postgres:// URL), else $XDG_DATA_HOME/bootbench/results.db, else
// $HOME/.local/share/bootbench/results.db.
func DefaultPath() string {
	if p := os.Getenv("BOOTBENCH_DB"); p != "" {
		return p
	}
	// The XDG spec says a relative XDG_DATA_HOME is invalid and must be
	// ignored; honouring it would scatter databases per working directory.
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "bootbench", "results.db")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "bootbench", "results.db")
	}
	// No home at all (minimal containers): fall back to the working
	// directory rather than failing, so a one-off run is still recorded.
	return "results.db"
}

// dsn builds the connection string. The pragmas are per connection, so they
// go in the DSN where the driver applies them to every pooled connection:
//   - busy_timeout: a bench daemon and a `results list` may touch the file at
//     the same time; waiting beats failing with SQLITE_BUSY.
//   - foreign_keys: SQLite leaves them off by default.
//   - _txlock=immediate: write transactions take the write lock up front, so
//     two writers queue on busy_timeout instead of deadlocking on a
//     read-to-write upgrade (which busy_timeout cannot resolve).
//   - cell_size_check: SQLite checks each b-tree page in full as it loads
//     it, so a write that meets a damaged page fails (and rolls back)
//     rather than writing into it.
func dsn(path string) string {
	return fileURI(path) +
		"?_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(1)" +
		"&_pragma=cell_size_check(1)" +
		"&_txlock=immediate"
}

// setWAL switches the file to write-ahead logging, so readers (`results
// list`) and the writer (a bench daemon) do not block each other. The mode is
// persistent in the file, so it is set once here rather than per connection
// in the DSN. SQLite does not apply busy_timeout to the switch itself, so two
// processes opening a fresh file at once would see an immediate SQLITE_BUSY;
// that is retried here.
func setWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var mode string
		err := db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("cannot use WAL journal mode (got %q)", mode)
		case !isBusy(err) || time.Now().After(deadline):
			return fmt.Errorf("set WAL journal mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func isBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	// The low byte is the primary result code; extended codes such as
	// SQLITE_BUSY_RECOVERY share it.
	code := e.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}

// Close closes the database.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.cleanup != nil {
		s.cleanup()
	}
	return err
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction. RFC3339Nano trims
// trailing zeros, which breaks lexical ordering ("05Z" sorts after "05.5Z");
// a fixed width in UTC makes ORDER BY on the text column chronological.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// SaveRun stores r with its stages, metrics and transcript in one
// transaction, so a run is either fully recorded or not at all. It records
// the board on first sight. Storing an id twice is an error wrapping
// ErrExists; storing imported input already stored under another run, one
// wrapping ErrDuplicateInput, also when another process or host stored it
// a moment earlier.
func (s *Store) SaveRun(ctx context.Context, r *results.Run) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("results: %w", invalidRun{err})
	}
	err := s.saveRun(ctx, storable(r))
	if err == nil {
		return nil
	}
	if IsDamaged(err) {
		return s.damagedWrite(err)
	}
	switch s.eng.conflict(err) {
	case ErrExists:
		return fmt.Errorf("results: save run %s: %w", r.ID, ErrExists)
	case ErrDuplicateInput:
		// Another writer committed the same input since the check in
		// saveRun; name its run as that check would have.
		prev, _ := s.RunByInputSHA256(ctx, r.InputSHA256)
		if prev == r.ID {
			return fmt.Errorf("results: save run %s: %w", r.ID, ErrExists)
		}
		return fmt.Errorf("results: save run %s: %w as run %s", r.ID, ErrDuplicateInput, prev)
	}
	return err
}

// SaveRuns stores runs in one transaction: all of them or none, each
// whole. One commit for many runs is what makes a large import fast (a
// commit waits for the disk). It stores nothing when any run would be
// refused, and says why with that run's error; a caller that wants the
// others stored saves them one by one (SaveRun), as it would have.
func (s *Store) SaveRuns(ctx context.Context, runs []*results.Run) (err error) {
	for _, r := range runs {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("results: %w", invalidRun{err})
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: save %d runs: %w", len(runs), err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	// The runs' statements are the same text run after run: prepared
	// once a batch, not parsed again for each.
	w := &preparedTx{tx: tx, stmts: map[string]*sql.Stmt{}}
	written := make([]*results.Run, len(runs))
	for i, r := range runs {
		written[i] = storable(r)
		if err := s.saveRunTx(ctx, w, written[i]); err != nil {
			if c := s.eng.conflict(err); c != nil {
				return fmt.Errorf("results: save run %s: %w", r.ID, c)
			}
			if IsDamaged(err) {
				return s.damagedWrite(err)
			}
			return err
		}
	}
	if err := s.checkWritten(ctx, tx, written); err != nil {
		return s.damagedWrite(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: save %d runs: %w", len(runs), err)
	}
	return nil
}

func (s *Store) saveRun(ctx context.Context, r *results.Run) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := s.saveRunTx(ctx, tx, r); err != nil {
		return err
	}
	if err := s.checkWritten(ctx, tx, []*results.Run{r}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}
	return nil
}

// checkWritten reads the runs just written back inside tx, before it
// commits: each must be there with as many metrics as it was saved with,
// or the write fails and nothing of it is stored. With SQLite checking
// each page a write reads as it loads it (cell_size_check, see dsn), a
// write checks the store where it touches it, at a cost that stays with
// the runs written; a check of the whole store, which grows with it, is
// results check's, and every read checks each run's metrics in full.
func (s *Store) checkWritten(ctx context.Context, tx *sql.Tx, runs []*results.Run) error {
	for len(runs) > 0 {
		n := min(len(runs), rowsPerInsert)
		ids := make([]any, n)
		for i, r := range runs[:n] {
			ids[i] = r.ID
		}
		rows, err := tx.QueryContext(ctx, s.eng.bind(`SELECT r.id, r.metric_count, (SELECT count(*) FROM metrics m WHERE m.run = r.id)
			FROM runs r WHERE r.id IN (?`+strings.Repeat(", ?", n-1)+`)`), ids...)
		if err != nil {
			return err
		}
		counts := map[results.RunID][2]int{}
		for rows.Next() {
			var id results.RunID
			var saved, read int
			if err := rows.Scan(&id, &saved, &read); err != nil {
				rows.Close()
				return err
			}
			counts[id] = [2]int{saved, read}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		for _, r := range runs[:n] {
			c, ok := counts[r.ID]
			switch {
			case !ok:
				return &DamagedRunError{Runs: []results.RunID{r.ID}, What: "does not read back as it was written"}
			case c[0] != len(r.Metrics) || c[1] != len(r.Metrics):
				return &DamagedRunError{Runs: []results.RunID{r.ID}, What: fmt.Sprintf("reads back %d metrics, but was written with %d", c[1], len(r.Metrics))}
			}
		}
		runs = runs[n:]
	}
	return nil
}

// damagedWrite says that a write met damage in the store, err what it
// met; the write's transaction is rolled back.
func (s *Store) damagedWrite(err error) error {
	return &StoreError{Path: s.path, Kind: ErrDamaged, What: fmt.Sprintf("fails its integrity check (%v) where this write meets it", err),
		Do: "nothing was written; see bootbench results check"}
}

// saveRunTx writes r, its board, stages, metrics and energy inside tx.
func (s *Store) saveRunTx(ctx context.Context, tx writer, r *results.Run) error {
	if err := s.checkNew(ctx, tx, r); err != nil {
		return err
	}
	if err := s.saveBoard(ctx, tx, r); err != nil {
		return fmt.Errorf("results: save run %s: board: %w", r.ID, err)
	}
	if err := s.insertRun(ctx, tx, r); err != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}

	// Stages and metrics go in as multi-row inserts: on a database across
	// the network every statement is a round trip.
	stages := make([][]any, len(r.Stages))
	for i, st := range r.Stages {
		stages[i] = []any{r.ID, i, st.Name, st.Duration.Seconds()}
	}
	if err := insertRows(ctx, tx, s.eng, `INSERT INTO stages(run, seq, name, seconds) VALUES`, stages); err != nil {
		return fmt.Errorf("results: save run %s: stages: %w", r.ID, err)
	}
	metrics := make([][]any, len(r.Metrics))
	for i, m := range r.Metrics {
		metrics[i] = []any{r.ID, m.Name, m.Unit, m.Value}
	}
	if err := insertRows(ctx, tx, s.eng, `INSERT INTO metrics(run, name, unit, value) VALUES`, metrics); err != nil {
		return fmt.Errorf("results: save run %s: metrics: %w", r.ID, err)
	}
	if err := s.saveEnergy(ctx, tx, r); err != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}
	return nil
}

// checkNew refuses a run whose id, or imported input, is already stored.
//
// Checked inside the transaction so that (on SQLite, whose write
// transactions are immediate) no other writer can slip the same id in
// between; gives a clean ErrExists instead of a driver-specific
// constraint message. On PostgreSQL a writer that commits the same id
// meanwhile makes the insert fail, and SaveRun says the same.
//
// A new id must have nothing stored under it either: stages, metrics or
// power rows of a run that is not there (which the foreign keys forbid,
// and a restore with triggers off, or damage, can leave) are damage this
// write meets, said as such before anything is written, where the
// inserts would fail on a key, or the read-back (checkWritten) would
// count rows the run was not written with. The same index lookups as
// the id's: what a write checks stays with what it writes.
func (s *Store) checkNew(ctx context.Context, tx writer, r *results.Run) error {
	var exists bool
	var orphans string
	if err := tx.QueryRowContext(ctx, s.eng.bind(`SELECT EXISTS(SELECT 1 FROM runs WHERE id = ?), CASE
			WHEN EXISTS(SELECT 1 FROM metrics WHERE run = ?) THEN 'metrics'
			WHEN EXISTS(SELECT 1 FROM stages WHERE run = ?) THEN 'stages'
			WHEN EXISTS(SELECT 1 FROM power_meters WHERE run = ?) THEN 'a power meter'
			WHEN EXISTS(SELECT 1 FROM power_samples WHERE run = ?) THEN 'power samples'
			WHEN EXISTS(SELECT 1 FROM power_spans WHERE run = ?) THEN 'power spans'
			ELSE '' END`), r.ID, r.ID, r.ID, r.ID, r.ID, r.ID).Scan(&exists, &orphans); err != nil {
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}
	switch {
	case exists:
		return fmt.Errorf("results: save run %s: %w", r.ID, ErrExists)
	case orphans != "":
		return &DamagedRunError{Runs: []results.RunID{r.ID}, What: "has " + orphans + " stored without its run"}
	}
	if r.InputSHA256 == "" {
		return nil
	}
	// Checked like the id, for a message that names the earlier run
	// rather than a constraint failure.
	var prev results.RunID
	switch err := tx.QueryRowContext(ctx, s.eng.bind(`SELECT id FROM runs WHERE input_sha256 = ?`), r.InputSHA256).Scan(&prev); {
	case err == nil && prev == r.ID:
		// Committed by another writer since the id was checked
		// (PostgreSQL's transactions see each commit).
		return fmt.Errorf("results: save run %s: %w", r.ID, ErrExists)
	case err == nil:
		return fmt.Errorf("results: save run %s: %w as run %s", r.ID, ErrDuplicateInput, prev)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("results: save run %s: %w", r.ID, err)
	}
	return nil
}

// Boards are the names of the boards the store holds runs of, sorted.
func (s *Store) Boards(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM boards ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// saveBoard records r's board on first sight, or an earlier first sight.
//
// first_seen keeps the earliest run; imports of old output may arrive
// after newer runs. The fixed-width layout makes < on text correct.
// Insert, then lower only if earlier: writers of one board's runs do
// not queue behind each other's board row unless they must.
func (s *Store) saveBoard(ctx context.Context, tx writer, r *results.Run) error {
	seen := r.Started
	if seen.IsZero() {
		seen = time.Now()
	}
	first := formatTime(seen)
	if _, err := tx.ExecContext(ctx, s.eng.bind(`INSERT INTO boards(name, first_seen) VALUES(?, ?) ON CONFLICT(name) DO NOTHING`), r.Board, first); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, s.eng.bind(`UPDATE boards SET first_seen = ? WHERE name = ? AND first_seen > ?`), first, r.Board, first)
	return err
}

// insertRun inserts r's own row.
func (s *Store) insertRun(ctx context.Context, tx writer, r *results.Run) error {
	var hello any // NULL when the board never said hello
	if r.Hello != nil {
		hello = string(r.Hello)
	}
	source := r.Source
	if source == "" {
		source = results.SourceRun
	}
	var sum any // NULL: the unique index only constrains real hashes
	if r.InputSHA256 != "" {
		sum = r.InputSHA256
	}
	throttle, err := throttleJSON(r.Throttle)
	if err != nil {
		return err
	}
	route, err := routeJSON(r.Route)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.eng.bind(`
		INSERT INTO runs(id, board, clock_mhz, rep, status, reason, bench, tool, tool_version,
			started, finished, image_digest, kernel, hello, transcript, raw_output, source, input_sha256,
			clock_reported_mhz, clock_check, metric_count, metrics_sha256, throttle, route_settings, started_from,
			bootloader, firmware_clock_mhz)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		r.ID, r.Board, r.ClockMHz, r.Rep, r.Status, r.Reason, r.Bench, r.Tool, r.ToolVersion,
		formatTime(r.Started), formatTime(r.Finished), r.ImageDigest, r.Kernel, hello,
		r.Transcript, r.RawOutput, source, sum, r.ClockReportedMHz, r.ClockCheck,
		len(r.Metrics), metricsDigest(r.Metrics), throttle, route, r.StartedFrom,
		r.Bootloader, r.FirmwareClockMHz)
	return err
}

// storable is r as the store keeps it: its text valid UTF-8 without NUL
// bytes. A board's console can put any byte into a failure reason or a
// kernel name; PostgreSQL refuses such text outright, so both engines
// store the same readable text (invalid bytes as U+FFFD), and the exact
// bytes stay in the transcript and raw output, which are kept as bytes.
func storable(r *results.Run) *results.Run {
	c := *r
	for _, p := range []*string{&c.Board, &c.Status, &c.Reason, &c.Bench, &c.Tool, &c.ToolVersion,
		&c.ImageDigest, &c.Kernel, &c.Source, &c.InputSHA256, &c.ClockCheck, &c.Bootloader} {
		*p = cleanText(*p)
	}
	// A failure reason can quote a URL from the inventory; its password
	// is never stored.
	c.Reason = redact.Text(c.Reason)
	c.ID = results.RunID(cleanText(string(c.ID)))
	if c.Hello != nil {
		c.Hello = json.RawMessage(cleanText(string(c.Hello)))
	}
	c.Stages = make([]results.Stage, len(r.Stages))
	for i, st := range r.Stages {
		c.Stages[i] = results.Stage{Name: results.StageName(cleanText(string(st.Name))), Duration: st.Duration}
	}
	c.Metrics = make([]results.Metric, len(r.Metrics))
	for i, m := range r.Metrics {
		c.Metrics[i] = results.Metric{Name: cleanText(m.Name), Unit: cleanText(m.Unit), Value: m.Value}
	}
	return &c
}

func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}

// rowsPerInsert bounds one multi-row insert well inside both databases'
// limits on bound parameters (SQLite's 32766, PostgreSQL's 65535).
const rowsPerInsert = 500

// insertRows inserts rows (all of one width) with as few statements as
// rowsPerInsert allows; insert is the statement up to VALUES.
func insertRows(ctx context.Context, tx writer, eng engine, insert string, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), rowsPerInsert)
		one := "(?" + strings.Repeat(", ?", len(rows[0])-1) + ")"
		query := insert + " " + one + strings.Repeat(", "+one, n-1)
		var args []any
		for _, row := range rows[:n] {
			args = append(args, row...)
		}
		if _, err := tx.ExecContext(ctx, eng.bind(query), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// Runs returns the runs matching f, oldest first, with their metrics (in
// metric order, see MetricLess) and stages. Transcript and RawOutput are
// filled in only when f.WithTranscript is set. The selection, f.Limit's
// page included, is made in SQL over the runs' indexes: only the runs
// returned are read, and only theirs are checked (see saved.go).
func (s *Store) Runs(ctx context.Context, f results.Filter) ([]results.Run, error) {
	runs, err := s.load(ctx, selection(f), bulkOf(f))
	if err != nil {
		return nil, fmt.Errorf("results: list runs: %w", err)
	}
	return runs, nil
}

func bulkOf(f results.Filter) bulk {
	return bulk{transcript: f.WithTranscript, samples: f.WithTranscript || f.WithSamples}
}

// CountRuns says how many runs match f, f.Limit aside: what a page of
// them leaves out. It reads the runs' index only, and when most > 0 no
// further than most runs into it: a count of every run reads the whole
// index (a million runs' ids, about 0.2 s), a bounded one what most
// costs whatever the store holds.
func (s *Store) CountRuns(ctx context.Context, f results.Filter, most int) (int, error) {
	where, args := filterWhere(f)
	query := `SELECT count(*) FROM runs r` + where
	if most > 0 {
		query = `SELECT count(*) FROM (SELECT 1 FROM runs r` + where + ` LIMIT ?) AS selected`
		args = append(args, most)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, s.eng.bind(query), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("results: count runs: %w", err)
	}
	return n, nil
}

// pageRuns is how many runs EachRun reads at a time: enough that the
// queries' own cost is small, few enough that a page's metrics take a few
// megabytes.
var pageRuns = 500 // a variable so tests can walk several pages of a few runs

// EachRun calls fn with each run matching f, oldest first, as Runs would
// return them, reading pageRuns runs at a time: a command that writes each
// run as it is read (an export) holds one page, however large the store.
// Each page is read in one snapshot and checked as Runs checks; a page
// that fails the check stops the walk before fn sees any of its runs.
// f.Limit is not taken: a walk is of every run selected.
func (s *Store) EachRun(ctx context.Context, f results.Filter, fn func(*results.Run) error) error {
	return s.eachRun(ctx, f, bulkOf(f), fn)
}

// EachMeasured is EachRun for a comparison: each run with its metrics
// (checked as every read checks them) and its power figures, but not its
// stages, transcript or power samples, which a comparison does not use.
// fn may keep the run, and its metrics, as its own.
func (s *Store) EachMeasured(ctx context.Context, f results.Filter, fn func(*results.Run) error) error {
	return s.eachRun(ctx, f, bulk{noStages: true}, fn)
}

func (s *Store) eachRun(ctx context.Context, f results.Filter, b bulk, fn func(*results.Run) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := s.readPages(ctx, f, b)
	// However the walk ends, the pages read ahead are waited for: none
	// reads on after the walk returns (and its store may be closed).
	defer func() {
		cancel()
		for p := range pages {
			<-p
		}
	}()
	for p := range pages {
		pg := <-p
		if pg.err != nil {
			return fmt.Errorf("results: list runs: %w", pg.err)
		}
		for i := range pg.runs {
			if err := fn(&pg.runs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// pagesAhead is how many pages a walk reads while its caller takes the
// one before: a store's reads are mostly SQLite's work and the driver's,
// which a second core does beside the first.
const pagesAhead = 1

// page is one page of a walk, as load read it.
type page struct {
	runs []results.Run
	err  error
}

// readPages reads the pages of the runs f selects in the store's order,
// each loaded on a goroutine of its own, pagesAhead ahead of the caller:
// the channel gives, in order, where each page will arrive. It ends after
// the last page, or one that failed, or when ctx is done.
func (s *Store) readPages(ctx context.Context, f results.Filter, b bulk) <-chan chan page {
	f.Limit = 0
	where, args := filterWhere(f)
	out := make(chan chan page, pagesAhead)
	go func() {
		defer close(out)
		var after *pageKey
		for {
			ids, last, err := s.pageAfter(ctx, where, args, after)
			p := make(chan page, 1)
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
			if err != nil || len(ids) == 0 {
				p <- page{err: err}
				return
			}
			// The page by its ids: each query of the load seeks them,
			// where a subquery would select the page again for each.
			go func() {
				runs, err := s.load(ctx, s.byIDs(ids), b)
				p <- page{runs, err}
			}()
			if len(ids) < pageRuns {
				return
			}
			after = &last
		}
	}()
	return out
}

// pageKey is where a run is in the store's order: started, then id.
type pageKey struct {
	started string
	id      results.RunID
}

// pageAfter is the ids of the pageRuns runs after after (from the first
// when nil) in the store's order, started then id, among those where
// selects, and where the last of them is: a keyset page, which costs the
// same deep in the store as at its start, unlike an OFFSET.
func (s *Store) pageAfter(ctx context.Context, where string, args []any, after *pageKey) ([]results.RunID, pageKey, error) {
	args = slices.Clone(args)
	if after != nil {
		// A row value, not started > ? OR (started = ? AND id > ?):
		// both engines seek an index to a row value's bound, where
		// the OR has them read the selection from its start again
		// for every page.
		where = andWhere(where, "(r.started, r.id) > (?, ?)")
		args = append(args, after.started, after.id)
	}
	args = append(args, pageRuns)
	rows, err := s.db.QueryContext(ctx, s.eng.bind(`SELECT r.id, r.started FROM runs r`+where+` ORDER BY r.started, r.id LIMIT ?`), args...)
	if err != nil {
		return nil, pageKey{}, err
	}
	defer rows.Close()
	var ids []results.RunID
	var last pageKey
	for rows.Next() {
		if err := rows.Scan(&last.id, &last.started); err != nil {
			return nil, pageKey{}, err
		}
		ids = append(ids, last.id)
	}
	return ids, last, rows.Err()
}

// selection is f as load selects it: f's filter, and f.Limit's page of
// the newest runs as a subquery, so the stages and metrics read are those
// of the page alone.
func selection(f results.Filter) runSel {
	where, args := filterWhere(f)
	if f.Limit <= 0 {
		return runSel{where: where, args: args}
	}
	return runSel{where: " WHERE r.id IN (SELECT r.id FROM runs r" + where + " ORDER BY r.started DESC, r.id DESC LIMIT ?)",
		args: append(args, f.Limit)}
}

// runSel is the runs a load reads, as each of its queries selects them.
type runSel struct {
	where string // a WHERE clause over alias r, "" for every run
	args  []any
	// runIn, when not "", follows a run id to say it is one of the
	// runs' (where is r.id's): " IN (?, ?)", " = ANY(?)". Then the
	// rows of a table with a run column are found by it alone, not by
	// a join with runs: of the join PostgreSQL can make a parallel scan
	// of a whole index of runs for each page of a walk (0.26 s a page
	// of 500 runs in a store of 100,000, where the run column's index
	// reads the page's metrics in 9 ms).
	runIn string
}

// byIDs selects the runs of ids (not empty).
func (s *Store) byIDs(ids []results.RunID) runSel {
	in, args := s.eng.runIn(ids)
	return runSel{where: " WHERE r.id" + in, args: args, runIn: in}
}

// from is a FROM clause of table, as alias a, for its rows of the runs q
// selects (its run column a.run), WHERE included.
func (q runSel) from(table, a string) string {
	if q.runIn != "" {
		return " FROM " + table + " " + a + " WHERE " + a + ".run" + q.runIn
	}
	return " FROM " + table + " " + a + " JOIN runs r ON r.id = " + a + ".run" + q.where
}

// bind is q with its placeholders as eng wants them.
func (q runSel) bind(eng engine) runSel {
	q.where, q.runIn = eng.bind(q.where), eng.bind(q.runIn)
	return q
}

// filterWhere is f's filter as a WHERE clause over alias r ("" when f
// selects every run), with its arguments in order.
func filterWhere(f results.Filter) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, vals ...any) {
		where = append(where, cond)
		args = append(args, vals...)
	}
	if f.Board != "" {
		add("r.board = ?", f.Board)
	}
	if f.Boards != nil {
		add("r.board IN (NULL"+strings.Repeat(", ?", len(f.Boards))+")", anys(f.Boards)...)
	}
	if f.ClockMHz != 0 {
		add("r.clock_mhz = ?", f.ClockMHz)
	}
	if f.Status != "" {
		add("r.status = ?", f.Status)
	}
	// The stored times are fixed-width UTC text, so they compare as
	// times do.
	if !f.Since.IsZero() {
		add("r.started >= ?", formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		add("r.started < ?", formatTime(f.Until))
	}
	if f.IDs != nil {
		add("r.id IN (NULL"+strings.Repeat(", ?", len(f.IDs))+")", anys(f.IDs)...)
	}
	if len(f.Skip) > 0 {
		// No NULL in the list, as IN's has: NOT IN with a NULL is never true.
		add("r.id NOT IN (?"+strings.Repeat(", ?", len(f.Skip)-1)+")", anys(f.Skip)...)
	}
	if len(where) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// andWhere adds cond to a WHERE clause, or starts one.
func andWhere(where, cond string) string {
	if where == "" {
		return " WHERE " + cond
	}
	return where + " AND " + cond
}

func anys[T any](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// IDsWithPrefix returns the ids of up to 10 runs whose id starts with
// prefix, sorted, so a user may name a run by the start of its id.
func (s *Store) IDsWithPrefix(ctx context.Context, prefix string) ([]results.RunID, error) {
	ids, err := textColumn(ctx, s.db, s.eng.bind(`SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 10`), len(prefix), prefix)
	if err != nil {
		return nil, err
	}
	out := make([]results.RunID, len(ids))
	for i, id := range ids {
		out[i] = results.RunID(id)
	}
	return out, nil
}

// RunByInputSHA256 returns the id of the run imported from input with the
// given hex sha256, or "" if there is none.
func (s *Store) RunByInputSHA256(ctx context.Context, sum string) (results.RunID, error) {
	var id results.RunID
	err := s.db.QueryRowContext(ctx, s.eng.bind(`SELECT id FROM runs WHERE input_sha256 = ?`), sum).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("results: look up input %s: %w", sum, err)
	}
	return id, nil
}

// RunsByInputSHA256 is RunByInputSHA256 for many inputs at once, read in
// one snapshot a few hundred at a time: the ids of the runs imported from
// those of sums that are stored, by sum.
func (s *Store) RunsByInputSHA256(ctx context.Context, sums []string) (map[string]results.RunID, error) {
	tx, err := s.db.BeginTx(ctx, s.eng.readTx())
	if err != nil {
		return nil, fmt.Errorf("results: look up inputs: %w", err)
	}
	defer tx.Rollback() // read-only: nothing to commit
	found := map[string]results.RunID{}
	for len(sums) > 0 {
		n := min(len(sums), rowsPerInsert)
		rows, err := tx.QueryContext(ctx, s.eng.bind(`SELECT input_sha256, id FROM runs WHERE input_sha256 IN (?`+strings.Repeat(", ?", n-1)+`)`), anys(sums[:n])...)
		if err != nil {
			return nil, fmt.Errorf("results: look up inputs: %w", err)
		}
		for rows.Next() {
			var sum string
			var id results.RunID
			if err := rows.Scan(&sum, &id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("results: look up inputs: %w", err)
			}
			found[sum] = id
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("results: look up inputs: %w", err)
		}
		sums = sums[n:]
	}
	return found, nil
}

// IntegrityCheck runs the store's consistency checks (on SQLite its full
// integrity check and the foreign key check), and reports the first
// problem found.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	problems, err := s.eng.problems(ctx, s.db)
	if err != nil {
		return fmt.Errorf("results: integrity check: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("results: integrity check: %s", problems[0])
	}
	return nil
}

// Run returns the run with the given id, transcript included. A missing id
// gives an error wrapping ErrNotFound.
func (s *Store) Run(ctx context.Context, id results.RunID) (*results.Run, error) {
	runs, err := s.load(ctx, runSel{where: " WHERE r.id = ?", args: []any{id}}, bulk{transcript: true, samples: true})
	if err != nil {
		return nil, fmt.Errorf("results: run %s: %w", id, err)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("results: run %s: %w", id, ErrNotFound)
	}
	return &runs[0], nil
}

// load reads the runs q selects and attaches
// their stages and metrics. It reads inside one read-only transaction so a
// run saved meanwhile cannot show up half-loaded. A run whose metrics read
// otherwise than they were saved fails the read (see saved.go): never a
// partial run handed on as whole.
func (s *Store) load(ctx context.Context, q runSel, b bulk) ([]results.Run, error) {
	runs, saved, err := s.loadUnchecked(ctx, q, b)
	if err != nil && IsDamaged(err) {
		return nil, s.locate(ctx, q, b, err)
	}
	if err != nil {
		return nil, err
	}
	if e := checkSaved(runs, saved); e != nil {
		return nil, e
	}
	sortMetrics(runs)
	return runs, nil
}

// sortMetrics sorts each run's metrics as results.SortMetrics does.
// Runs of one benchmark read the same names in the same order, so the
// order found for one run is reused for the next that reads the same:
// comparing names costs little, finding their order much more.
func sortMetrics(runs []results.Run) {
	var names []string // of the run the order was found for, as read
	var order []int    // order[j]: where the j-th metric sorted was read
	var buf []results.Metric
	for i := range runs {
		ms := runs[i].Metrics
		if !sameNames(ms, names) {
			names = names[:0]
			for _, m := range ms {
				names = append(names, m.Name)
			}
			order = order[:0]
			for j := range ms {
				order = append(order, j)
			}
			// Names are a run's key, so no two are equal: the order
			// is the one a stable sort gives.
			slices.SortFunc(order, func(a, b int) int { return metricCmp(names[a], names[b]) })
		}
		buf = append(buf[:0], ms...)
		for j, k := range order {
			ms[j] = buf[k]
		}
	}
}

func metricCmp(a, b string) int {
	switch {
	case results.MetricLess(a, b):
		return -1
	case results.MetricLess(b, a):
		return 1
	}
	return 0
}

// sameNames says whether ms are named names, in that order.
func sameNames(ms []results.Metric, names []string) bool {
	if len(ms) != len(names) {
		return false
	}
	for i, m := range ms {
		if m.Name != names[i] {
			return false
		}
	}
	return true
}

// maxRoom bounds the metrics a read makes room for ahead, per run.
const maxRoom = 4096

// loadUnchecked is load without the check, for the check itself: the runs
// as read, and what their rows say they were saved with.
func (s *Store) loadUnchecked(ctx context.Context, q runSel, b bulk) ([]results.Run, []savedMetrics, error) {
	// A connection of its own, so the engine may read the metrics from
	// the driver's connection itself, inside the same transaction.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close() // after the rollback: a Conn waits for its Tx
	tx, err := conn.BeginTx(ctx, s.eng.readTx())
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback() // read-only: nothing to commit
	q = q.bind(s.eng)

	runs, saved, err := loadRuns(ctx, tx, q, b.transcript)
	if err != nil || len(runs) == 0 {
		return nil, nil, err
	}
	index := make(map[results.RunID]int, len(runs))
	for i, r := range runs {
		index[r.ID] = i
		// Room for the metrics the run was saved with, so a long read
		// does not grow each run's slice a metric at a time (a count a
		// damaged page made huge is not believed).
		if c := saved[i].count; c.Valid && c.Int64 > 0 && c.Int64 <= maxRoom {
			runs[i].Metrics = make([]results.Metric, 0, c.Int64)
		}
	}
	// One query per child table for the whole selection rather than one
	// per run: `results list` over a long bench history stays fast.
	if !b.noStages {
		if err := loadStages(ctx, tx, q, runs, index); err != nil {
			return nil, nil, err
		}
	}
	if err := loadMetrics(ctx, s.eng, inTx{conn, tx}, q, runs, index); err != nil {
		return nil, nil, err
	}
	if err := loadEnergy(ctx, tx, q, runs, index, b.samples); err != nil {
		return nil, nil, err
	}
	return runs, saved, nil
}

// locate turns SQLite finding the store damaged during a read into the
// runs that cannot be read alone, so the error names them; readErr itself
// when none can be named (the runs' own table is damaged, say). Only a
// failed read pays for it.
func (s *Store) locate(ctx context.Context, q runSel, b bulk, readErr error) error {
	ids, err := textColumn(ctx, s.db, s.eng.bind(`SELECT r.id FROM runs r`+q.where+` ORDER BY r.started, r.id`), q.args...)
	if err != nil {
		return readErr
	}
	e := &DamagedRunError{}
	for _, id := range ids {
		_, _, err := s.loadUnchecked(ctx, runSel{where: " WHERE r.id = ?", args: []any{id}}, b)
		if err == nil || !IsDamaged(err) {
			continue
		}
		if e.What == "" {
			e.What, e.cause = fmt.Sprintf("cannot be read (%v)", err), err
		}
		e.Runs = append(e.Runs, results.RunID(id))
	}
	if len(e.Runs) == 0 {
		return readErr
	}
	return e
}

// savedProblems lists every run whose metrics read otherwise than they
// were saved, one line each, for the store's check, and the runs.
func (s *Store) savedProblems(ctx context.Context) ([]string, []results.RunID, error) {
	runs, saved, err := s.loadUnchecked(ctx, runSel{}, bulk{})
	if err != nil {
		return nil, nil, err
	}
	var problems []string
	var ids []results.RunID
	var d digester
	for i := range runs {
		if what := savedProblem(&d, &runs[i], saved[i]); what != "" {
			problems = append(problems, fmt.Sprintf("run %s %s", runs[i].ID, what))
			ids = append(ids, runs[i].ID)
		}
	}
	return problems, ids, nil
}

// loadRuns reads the runs' own rows, transcripts only if asked, and what
// each says of the metrics it was saved with.
func loadRuns(ctx context.Context, tx *sql.Tx, q runSel, withTranscript bool) ([]results.Run, []savedMetrics, error) {
	blobs := "NULL, NULL"
	if withTranscript {
		blobs = "r.transcript, r.raw_output"
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT r.id, r.board, r.clock_mhz, r.rep, r.status, r.reason, r.bench, r.tool, r.tool_version,
			r.started, r.finished, r.image_digest, r.kernel, r.hello, `+blobs+`,
			r.source, r.input_sha256, r.clock_reported_mhz, r.clock_check, r.metric_count, r.metrics_sha256,
			r.throttle, r.route_settings, r.started_from, r.bootloader, r.firmware_clock_mhz
		FROM runs r`+q.where+` ORDER BY r.started, r.id`, q.args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var runs []results.Run
	var saved []savedMetrics
	for rows.Next() {
		var r results.Run
		var sm savedMetrics
		var started, finished string
		var hello, sum, throttle, route sql.NullString
		if err := rows.Scan(&r.ID, &r.Board, &r.ClockMHz, &r.Rep, &r.Status, &r.Reason, &r.Bench,
			&r.Tool, &r.ToolVersion, &started, &finished, &r.ImageDigest, &r.Kernel, &hello,
			&r.Transcript, &r.RawOutput, &r.Source, &sum, &r.ClockReportedMHz, &r.ClockCheck,
			&sm.count, &sm.digest, &throttle, &route, &r.StartedFrom, &r.Bootloader, &r.FirmwareClockMHz); err != nil {
			return nil, nil, err
		}
		if r.Throttle, err = parseThrottle(throttle); err != nil {
			return nil, nil, fmt.Errorf("run %s: throttle: %w", r.ID, err)
		}
		if r.Route, err = parseRoute(route); err != nil {
			return nil, nil, fmt.Errorf("run %s: route settings: %w", r.ID, err)
		}
		if r.Source == results.SourceRun {
			r.Source = ""
		}
		r.Reason = redact.Text(r.Reason) // stored before reasons were masked
		r.InputSHA256 = sum.String
		if r.Started, err = parseTime(started); err != nil {
			return nil, nil, fmt.Errorf("run %s: started: %w", r.ID, err)
		}
		if r.Finished, err = parseTime(finished); err != nil {
			return nil, nil, fmt.Errorf("run %s: finished: %w", r.ID, err)
		}
		if hello.Valid {
			r.Hello = json.RawMessage(hello.String)
		}
		runs = append(runs, r)
		saved = append(saved, sm)
	}
	return runs, saved, rows.Err()
}

// loadStages attaches the selected runs' stages, in their order.
func loadStages(ctx context.Context, tx *sql.Tx, q runSel, runs []results.Run, index map[results.RunID]int) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.run, s.name, s.seconds`+q.from("stages", "s")+` ORDER BY s.run, s.seq`, q.args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var run results.RunID
		var name results.StageName
		var secs float64
		if err := rows.Scan(&run, &name, &secs); err != nil {
			return err
		}
		if i, ok := index[run]; ok {
			runs[i].Stages = append(runs[i].Stages, results.Stage{Name: name, Duration: seconds(secs)})
		}
	}
	return rows.Err()
}

// loadMetrics attaches the selected runs' metrics.
func loadMetrics(ctx context.Context, eng engine, in inTx, q runSel, runs []results.Run, index map[results.RunID]int) error {
	a := &attacher{runs: runs, index: index, words: map[string]string{}}
	return eng.eachMetric(ctx, in, `SELECT m.run, m.name, m.unit, m.value`+q.from("metrics", "m"), q.args, a.add)
}

// attacher attaches metric rows to their runs as they are read.
type attacher struct {
	runs  []results.Run
	index map[results.RunID]int
	// Every run of a benchmark has the same hundred-odd names and units:
	// one copy of each, not one a row, keeps a long read's memory to
	// its values.
	words map[string]string
	// A run's metrics come one after another: its id is looked up once,
	// not once a metric.
	last []byte
	at   *results.Run // the run of last, nil if not one of runs
	// prev is the metrics of the run read before at. The next run of a
	// benchmark has the same names and units in the same order: taken
	// from there, they cost a comparison, not a lookup in words.
	prev []results.Metric
}

func (a *attacher) add(run, name, unit []byte, value float64) {
	if a.last == nil || !bytes.Equal(run, a.last) {
		a.next(run)
	}
	if a.at == nil {
		return
	}
	m := results.Metric{Value: value}
	if k := len(a.at.Metrics); k < len(a.prev) && a.prev[k].Name == string(name) && a.prev[k].Unit == string(unit) {
		m.Name, m.Unit = a.prev[k].Name, a.prev[k].Unit
	} else {
		m.Name, m.Unit = intern(a.words, name), intern(a.words, unit)
	}
	a.at.Metrics = append(a.at.Metrics, m)
}

// next starts the metrics of run.
func (a *attacher) next(run []byte) {
	if a.at != nil {
		a.prev = a.at.Metrics
	}
	a.at = nil
	if i, ok := a.index[results.RunID(run)]; ok {
		a.at = &a.runs[i]
	}
	a.last = append(a.last[:0], run...)
}

// inTx is a read's transaction and the connection it is on.
type inTx struct {
	conn *sql.Conn
	tx   *sql.Tx
}

// metricRow takes one metric row as read: the bytes are the driver's,
// good only until it returns.
type metricRow func(run, name, unit []byte, value float64)

// eachMetricSQL is eachMetric through database/sql, as a SQLite store
// reads them.
func eachMetricSQL(ctx context.Context, in inTx, query string, args []any, fn metricRow) error {
	rows, err := in.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var run, name, unit sql.RawBytes
	var value float64
	for rows.Next() {
		if err := rows.Scan(&run, &name, &unit, &value); err != nil {
			return err
		}
		fn(run, name, unit, value)
	}
	return rows.Err()
}

// intern is b as a string, the one copy words holds of it.
func intern(words map[string]string, b []byte) string {
	if w, ok := words[string(b)]; ok { // no allocation for the lookup
		return w
	}
	w := string(b)
	words[w] = w
	return w
}

// writer is what a run is saved through: a transaction, or a
// preparedTx over one.
type writer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// preparedTx is a transaction that prepares each statement text once and
// runs it again from there. The statements close with the transaction.
type preparedTx struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (p *preparedTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := p.stmts[query]; ok {
		return st, nil
	}
	st, err := p.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.stmts[query] = st
	return st, nil
}

func (p *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (p *preparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil {
		// The query fails again unprepared, and its Row says why.
		return p.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
