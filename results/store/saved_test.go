package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// TestReadsRefuseDamagedRuns: a run whose metric rows read otherwise than
// they were saved — one gone, moved to another run id, renamed, changed in
// value — makes every read that includes it fail with an error naming the
// run, in both engines; the runs around it still read alone.
func TestReadsRefuseDamagedRuns(t *testing.T) {
	tests := []struct {
		name   string
		damage string // SQL over the metrics of run r002, '?' its id
		says   string
	}{
		{"a metric gone", `DELETE FROM metrics WHERE run = ? AND name = 'rsa2048-sign'`, "reads 2 metrics, but was saved with 3"},
		{"a metric moved to another run id", `UPDATE metrics SET run = 'r00z' WHERE run = ? AND name = 'md5@16'`, "reads 2 metrics, but was saved with 3"},
		{"a metric renamed", `UPDATE metrics SET name = 'md4@16' WHERE run = ? AND name = 'md5@16'`, "reads 3 metrics that differ from those it was saved with"},
		{"a value changed", `UPDATE metrics SET value = 123457 WHERE run = ? AND name = 'md5@16'`, "reads 3 metrics that differ from those it was saved with"},
		{"a unit changed", `UPDATE metrics SET unit = 'b/s' WHERE run = ? AND name = 'md5@16'`, "reads 3 metrics that differ from those it was saved with"},
	}
	eachEngine(t, func(t *testing.T, e engineKind) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				s, loc := e.open(t)
				for i := range 4 {
					if err := s.SaveRun(ctx, sampleRun(fmt.Sprintf("r%03d", i), t0.Add(time.Duration(i)*time.Second))); err != nil {
						t.Fatal(err)
					}
				}
				damage(t, s, tt.damage, "r002")

				reads := map[string]func() error{
					"Runs":             func() error { _, err := s.Runs(ctx, results.Filter{}); return err },
					"Runs of a board":  func() error { _, err := s.Runs(ctx, results.Filter{Board: "qemu-x86_64"}); return err },
					"Runs by id":       func() error { _, err := s.Runs(ctx, results.Filter{IDs: []results.RunID{"r001", "r002"}}); return err },
					"Run":              func() error { _, err := s.Run(ctx, "r002"); return err },
					"Runs, transcript": func() error { _, err := s.Runs(ctx, results.Filter{WithTranscript: true}); return err },
				}
				for name, read := range reads {
					err := read()
					var de *DamagedRunError
					if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || !IsDamaged(err) {
						t.Errorf("%s: err = %v, want a DamagedRunError", name, err)
						continue
					}
					if msg := err.Error(); !strings.Contains(msg, "run r002 "+tt.says) {
						t.Errorf("%s: %q does not say %q", name, msg, "run r002 "+tt.says)
					}
				}
				for _, id := range []results.RunID{"r001", "r003"} {
					if _, err := s.Run(ctx, id); err != nil {
						t.Errorf("run %s, undamaged: %v", id, err)
					}
				}
				rep, err := Check(ctx, loc)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(rep.Problems, "run r002 "+tt.says) {
					t.Errorf("check found %q, want %q among them", rep.Problems, "run r002 "+tt.says)
				}
			})
		}
	})
}

// damage runs stmt, with the id as its one argument, against the store's
// database as damage would: around bootbench's own checks and the foreign
// keys, as a restore with them off would (PostgreSQL's with its triggers
// disabled).
func damage(t *testing.T, s *Store, stmt string, id results.RunID) {
	t.Helper()
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	off, on := `SET session_replication_role = replica`, `SET session_replication_role = DEFAULT`
	if _, ok := s.eng.(sqliteEngine); ok {
		off, on = `PRAGMA foreign_keys = OFF`, `PRAGMA foreign_keys = ON`
	}
	if _, err := conn.ExecContext(ctx, off); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, on)
	if _, err := conn.ExecContext(ctx, s.eng.bind(stmt), id); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// TestDamagedRunErrorNames: the error names the first damaged run, what
// is wrong with it, and the others up to a few.
func TestDamagedRunErrorNames(t *testing.T) {
	tests := []struct {
		runs []results.RunID
		want string
	}{
		{[]results.RunID{"a"}, "run a reads 1 metrics, but was saved with 2"},
		{[]results.RunID{"a", "b"}, "run a reads 1 metrics, but was saved with 2; 1 more run damaged: b"},
		{[]results.RunID{"a", "b", "c", "d", "e", "f"}, "run a reads 1 metrics, but was saved with 2; 5 more runs damaged: b, c, d, …"},
	}
	for _, tt := range tests {
		e := &DamagedRunError{Runs: tt.runs, What: "reads 1 metrics, but was saved with 2"}
		if got := e.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

// TestMetricsDigest: the digest does not depend on the metrics' order,
// and does on every name, unit and value.
func TestMetricsDigest(t *testing.T) {
	base := []results.Metric{{Name: "md5@16", Unit: "B/s", Value: 1}, {Name: "sha1@16", Unit: "B/s", Value: 2}}
	if metricsDigest(base) != metricsDigest([]results.Metric{base[1], base[0]}) {
		t.Error("digest depends on order")
	}
	for _, other := range [][]results.Metric{
		{{Name: "md5@16", Unit: "B/s", Value: 1}},
		{{Name: "md5@16", Unit: "B/s", Value: 1}, {Name: "sha1@16", Unit: "B/s", Value: 3}},
		{{Name: "md5@16", Unit: "B/s", Value: 1}, {Name: "sha1@64", Unit: "B/s", Value: 2}},
		{{Name: "md5@16", Unit: "B/s", Value: 1}, {Name: "sha1@16", Unit: "op/s", Value: 2}},
		{{Name: "md5@16", Unit: "B/s", Value: 1}, {Name: "sha1@1", Unit: "6B/s", Value: 2}},
	} {
		if metricsDigest(other) == metricsDigest(base) {
			t.Errorf("%v has the digest of %v", other, base)
		}
	}
}
