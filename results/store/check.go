package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CheckReport is what Check found.
type CheckReport struct {
	Path     string
	Version  int      // schema version
	Runs     int      // runs stored; -1 if they could not be counted
	Problems []string // what SQLite's integrity and foreign key checks found; none: the store is sound
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
	rep.Problems = append(rep.Problems, s.runProblems(ctx)...)
	return rep, nil
}

// runProblems reads every run and lists, one line each, those that read
// otherwise than they were saved and those SQLite cannot read.
func (s *Store) runProblems(ctx context.Context) []string {
	problems, err := s.savedProblems(ctx)
	if err == nil {
		return problems
	}
	var e *DamagedRunError
	if !IsDamaged(err) || !errors.As(s.locate(ctx, "", nil, bulk{}, err), &e) {
		return []string{"read runs: " + err.Error()}
	}
	for _, id := range e.Runs {
		problems = append(problems, fmt.Sprintf("run %s cannot be read", id))
	}
	return problems
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
