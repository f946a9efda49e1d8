package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/bootbench/bootbench/results"
)

// CheckReport is what Check found.
type CheckReport struct {
	Path     string
	Version  int      // schema version
	Runs     int      // runs stored; -1 if they could not be counted
	Problems []string // what SQLite's integrity and foreign key checks found; none: the store is sound
	// Damaged are the runs the problems name: runs that read otherwise
	// than they were saved, or that SQLite cannot read.
	Damaged []results.RunID
	// RestReads is set when the store has problems and every other run
	// still reads whole, transcripts included: an export that skips
	// Damaged (Filter.Skip) works.
	RestReads bool
}

// Check runs SQLite's integrity check and the foreign key check over the
// store at path, and reads every run to compare its metrics with what it
// was saved with, read-only, without upgrading or otherwise writing it. A
// path that holds no store, or not ours, gives a *StoreError; problems in a
// store are in the report. A store in PostgreSQL gets the store's own
// consistency checks (checkPostgres).
func Check(ctx context.Context, path string) (*CheckReport, error) {
	if IsURL(path) {
		return checkPostgres(ctx, path)
	}
	state, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if err := requireStore(path, state); err != nil {
		return nil, err
	}
	db, err := openReadConn(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	s := &Store{db: db, eng: sqliteEngine{}, path: path}
	rep := &CheckReport{Path: path, Runs: -1}
	if rep.Version, err = s.SchemaVersion(ctx); err != nil {
		return nil, s.describe(err)
	}
	if err := s.knownVersion(rep.Version, len(migrations)); err != nil {
		return nil, err
	}
	if rep.Problems, err = integrityProblems(ctx, db); err != nil {
		// SQLite gave up rather than listing problems: that is one.
		rep.Problems = []string{err.Error()}
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&rep.Runs); err != nil {
		rep.Runs = -1
		rep.Problems = append(rep.Problems, "count runs: "+err.Error())
	}
	if rep.Version < 4 {
		return rep, nil // saved before runs kept their metrics' count
	}
	problems, damaged := s.runProblems(ctx)
	rep.Problems, rep.Damaged = append(rep.Problems, problems...), damaged
	if len(rep.Problems) > 0 {
		// Tried, not guessed: the advice check gives must work, so the
		// runs are read as the export it advises reads them, a page at a
		// time through the runs' index (damage there stops an export
		// that a read of the whole table gets past).
		f := results.Filter{Skip: rep.Damaged, WithTranscript: true, WithSamples: true}
		rep.RestReads = s.EachRun(ctx, f, func(*results.Run) error { return nil }) == nil
	}
	return rep, nil
}

// runProblems reads every run and lists, one line each, those that read
// otherwise than they were saved and those SQLite cannot read, and the
// runs named.
func (s *Store) runProblems(ctx context.Context) ([]string, []results.RunID) {
	problems, ids, err := s.savedProblems(ctx)
	if err == nil {
		return problems, ids
	}
	var e *DamagedRunError
	if !IsDamaged(err) || !errors.As(s.locate(ctx, runSel{}, bulk{}, err), &e) {
		return []string{"read runs: " + err.Error()}, nil
	}
	for _, id := range e.Runs {
		problems = append(problems, fmt.Sprintf("run %s cannot be read", id))
	}
	return problems, e.Runs
}

// integrityProblems runs PRAGMA integrity_check (which lists up to 100
// problems) and PRAGMA foreign_key_check, and returns what they found.
func integrityProblems(ctx context.Context, db *sql.DB) ([]string, error) {
	lines, err := column(db, `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	var problems []string
	if len(lines) != 1 || lines[0] != "ok" {
		problems = append(problems, lines...)
	}
	rows, err := db.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fkid int
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return nil, err
		}
		problems = append(problems, fmt.Sprintf("row %d of %s refers to a missing %s", rowid.Int64, table, parent))
	}
	return problems, rows.Err()
}
