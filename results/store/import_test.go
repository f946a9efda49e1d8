package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/results"
)

func TestImportRun(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		data := []byte("OpenSSL 0.9.8k 25 Mar 2009\n")
		im := &results.Import{
			Board: "rb450", ClockMHz: 300, Rep: 0,
			Path: filepath.Join("some", "dir", "rb450.txt"), Data: data, Modified: t0,
			Tool: "openssl", Version: "0.9.8k",
			Metrics: []results.Metric{{Name: "md5@1024", Unit: "B/s", Value: 16160430}},
		}
		first := im.Run()
		if err := s.SaveRun(ctx, first); err != nil {
			t.Fatal(err)
		}
		got, err := s.Run(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != results.StatusOK || got.Bench != "openssl" || got.Tool != "openssl" || got.ToolVersion != "0.9.8k" ||
			got.Source != "import:rb450.txt" || got.InputSHA256 != results.InputSHA256(data) ||
			!got.Started.Equal(t0) || string(got.RawOutput) != string(data) || len(got.Metrics) != 1 {
			t.Errorf("stored import = %+v", got)
		}
		if id, err := s.RunByInputSHA256(ctx, results.InputSHA256(data)); err != nil || id != first.ID {
			t.Errorf("RunByInputSHA256 = %q, %v; want %q", id, err, first.ID)
		}

		// The same bytes again are refused, also when nobody checked first.
		if err := s.SaveRun(ctx, im.Run()); !errors.Is(err, ErrDuplicateInput) {
			t.Errorf("second import of the same bytes: %v, want ErrDuplicateInput", err)
		}
		// A deliberate re-import is another run; the hash stays with the first.
		im.Again = true
		again := im.Run()
		if err := s.SaveRun(ctx, again); err != nil {
			t.Fatalf("forced re-import: %v", err)
		}
		if got, err := s.Run(ctx, again.ID); err != nil || got.InputSHA256 != "" {
			t.Errorf("forced re-import stored hash %q, %v; want none", got.InputSHA256, err)
		}
		if n, err := s.NextRep(ctx, "rb450", 300); err != nil || n != 1 {
			t.Errorf("NextRep = %d, %v; want 1", n, err)
		}
		if n, err := s.NextRep(ctx, "rb450", 400); err != nil || n != 1 {
			t.Errorf("NextRep at an unused clock = %d, %v; want 1", n, err)
		}
		if err := s.IntegrityCheck(ctx); err != nil {
			t.Error(err)
		}
	})
}

// TestImportMigrationKeepsOldRuns opens a database written before imports
// existed: its runs come back as bench runs, and imports work on it.
func TestImportMigrationKeepsOldRuns(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		path := e.fresh(t)
		old, err := openWith(path, migrations[:1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.db.ExecContext(ctx, `
			INSERT INTO boards(name, first_seen) VALUES('rb450', '2025-03-14T15:09:26.000000000Z');
			INSERT INTO runs(id, board, status, started) VALUES('old', 'rb450', 'ok', '2025-03-14T15:09:26.000000000Z');`); err != nil {
			t.Fatal(err)
		}
		old.Close()

		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := s.Run(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		if r.Source != "" || r.InputSHA256 != "" {
			t.Errorf("old run: source %q hash %q; want a bench run without hash", r.Source, r.InputSHA256)
		}
		var source string
		var sum sql.NullString
		if err := s.db.QueryRowContext(ctx, `SELECT source, input_sha256 FROM runs WHERE id = 'old'`).Scan(&source, &sum); err != nil {
			t.Fatal(err)
		}
		if source != results.SourceRun || sum.Valid {
			t.Errorf("old run's row: source %q hash %v; want %q and NULL", source, sum, results.SourceRun)
		}
		if err := s.SaveRun(ctx, (&results.Import{Board: "rb450", Path: "f", Data: []byte("f"), Tool: "openssl"}).Run()); err != nil {
			t.Errorf("import into a migrated store: %v", err)
		}
	})
}
