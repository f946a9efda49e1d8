package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/pgtest"

	"github.com/bootbench/bootbench/results"
)

// The contract of open_test.go, for a store in PostgreSQL: what is not a
// store of ours is refused untouched by every way of opening it, readers
// never create or write anything, and a user or server that may not write
// is refused before anything is written.

func TestDisplayName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/var/lib/bootbench/results.db", "/var/lib/bootbench/results.db"},
		{"postgres://bench@db.lab/results", "postgres://bench@db.lab/results"},
		{"postgres://bench@/results?host=/run/postgresql", "postgres://bench@/results?host=/run/postgresql"},
		{"postgres://bench:s3cret@db.lab:5433/results", "postgres://bench:xxxxx@db.lab:5433/results"},
		{"postgresql://db.lab/results?user=bench&password=s3cret", "postgresql://db.lab/results?password=xxxxx&user=bench"},
		{"postgres://bench:s3cret@db.lab/%zz", "postgres://…"},
	} {
		if got := DisplayName(tt.in); got != tt.want {
			t.Errorf("DisplayName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBindDollar(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT id FROM runs WHERE board = ? AND clock_mhz = ?`, `SELECT id FROM runs WHERE board = $1 AND clock_mhz = $2`},
		{`INSERT INTO t VALUES (?, '?', "a?b", ?)`, `INSERT INTO t VALUES ($1, '?', "a?b", $2)`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
	} {
		if got := bindDollar(tt.in); got != tt.want {
			t.Errorf("bindDollar(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// pgDB is a fresh database in the test cluster.
type pgDB struct {
	c    *pgtest.Cluster
	url  string
	name string
}

func newPGDB(t *testing.T) pgDB {
	t.Helper()
	url := freshDatabase(t)
	return pgDB{pgtest.Shared(t), url, pgtest.DatabaseOf(url)}
}

func (d pgDB) exec(t *testing.T, stmts ...string) {
	t.Helper()
	if err := d.c.Exec(context.Background(), d.name, stmts...); err != nil {
		t.Fatal(err)
	}
}

// state is everything in the database outside the system schemas: each
// schema's tables with their columns and a digest of their rows, to show
// a refused database was left exactly as it was.
func (d pgDB) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	tables, err := d.c.Query(ctx, d.name, `
		SELECT n.nspname||'.'||c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND c.relkind = 'r' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := d.c.Query(ctx, d.name, `SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace`)
	if err != nil {
		t.Fatal(err)
	}
	out := "schemas " + schemas[0] + "\n"
	for _, tbl := range tables {
		rows, err := d.c.Query(ctx, d.name, `SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM `+tbl+` x`)
		if err != nil {
			t.Fatal(err)
		}
		out += tbl + " " + rows[0] + "\n"
	}
	return out
}

// storeAt makes a store of ours holding n runs.
func (d pgDB) storeAt(t *testing.T, n int) {
	t.Helper()
	s, err := Open(d.url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		if err := s.SaveRun(context.Background(), sampleRun(fmt.Sprintf("r%03d", i), t0)); err != nil {
			t.Fatal(err)
		}
	}
}

type opener struct {
	name string
	open func(string) (*Store, error)
}

var openers = []opener{{"Open", Open}, {"OpenChecked", OpenChecked}, {"OpenReadOnly", OpenReadOnly}}

// TestPostgresRefusesForeign: a database whose bootbench schema is not a
// store of ours, or one this bootbench cannot use, is refused by every way
// of opening it, in one line naming the URL and what to do, untouched.
func TestPostgresRefusesForeign(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, d pgDB)
		kind error
		has  string
	}{
		{"another application's schema", func(t *testing.T, d pgDB) {
			d.exec(t, `CREATE SCHEMA bootbench`, `CREATE TABLE bootbench.notes (id int, body text)`, `INSERT INTO bootbench.notes VALUES (1, 'keep me')`)
		}, ErrNotStore, "holds another application's schema bootbench (tables notes): it was left untouched; name another database"},
		{"its tables named like ours", func(t *testing.T, d pgDB) {
			d.exec(t, `CREATE SCHEMA bootbench`, `CREATE TABLE bootbench.runs (x int)`, `CREATE TABLE bootbench.metrics (x int)`)
		}, ErrNotStore, "(tables metrics, runs)"},
		{"a schema_version of another application", func(t *testing.T, d pgDB) {
			d.exec(t, `CREATE SCHEMA bootbench`, `CREATE TABLE bootbench.schema_version (application bigint, version int)`,
				`INSERT INTO bootbench.schema_version VALUES (1179208314, 3)`)
		}, ErrNotStore, "(schema_version with 1 rows, application 0x46494a7a)"},
		{"newer version", func(t *testing.T, d pgDB) {
			d.storeAt(t, 1)
			d.exec(t, `UPDATE bootbench.schema_version SET version = 99`)
		}, ErrNotStore, fmt.Sprintf("has schema version 99, newer than this bootbench knows (%d): upgrade bootbench", len(migrations))},
		{"negative version", func(t *testing.T, d pgDB) {
			d.storeAt(t, 1)
			d.exec(t, `UPDATE bootbench.schema_version SET version = -1`)
		}, ErrNotStore, "has schema version -1, which no bootbench writes"},
	}
	for _, tt := range tests {
		for _, o := range openers {
			t.Run(tt.name+"/"+o.name, func(t *testing.T) {
				d := newPGDB(t)
				tt.make(t, d)
				// Other applications' tables beside the schema are none of
				// bootbench's business either.
				d.exec(t, `CREATE TABLE public.contacts (name text)`, `INSERT INTO public.contacts VALUES ('ada')`)
				before := d.state(t)
				s, err := o.open(d.url)
				if err == nil {
					s.Close()
					t.Fatalf("%s opened it", o.name)
				}
				var se *StoreError
				if !errors.As(err, &se) || !errors.Is(err, tt.kind) {
					t.Fatalf("err = %v (%T); want a StoreError of kind %v", err, err, tt.kind)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "results store "+d.url+" ") || !strings.Contains(msg, tt.has) || strings.Contains(msg, "\n") {
					t.Errorf("err = %q; want one line naming %s and saying %q", msg, d.url, tt.has)
				}
				if after := d.state(t); after != before {
					t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// TestPostgresReadersNeverWrite: reading never creates the schema, needs
// no more than SELECT, and cannot write even when the user may.
func TestPostgresReadersNeverWrite(t *testing.T) {
	ctx := context.Background()
	t.Run("no store", func(t *testing.T) {
		d := newPGDB(t)
		before := d.state(t)
		_, err := OpenReadOnly(d.url)
		if !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "results store "+d.url+" holds no results store (no schema bootbench): nothing is stored there yet") {
			t.Errorf("err = %v, want ErrNoStore naming the URL", err)
		}
		if rep, err := Check(ctx, d.url); !errors.Is(err, ErrNoStore) {
			t.Errorf("Check = %+v, %v; want ErrNoStore", rep, err)
		}
		if after := d.state(t); after != before {
			t.Errorf("a reader changed the database:\nbefore %s\nafter  %s", before, after)
		}
	})
	t.Run("empty schema", func(t *testing.T) {
		d := newPGDB(t)
		d.exec(t, `CREATE SCHEMA bootbench`)
		if _, err := OpenReadOnly(d.url); !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "holds no results yet") {
			t.Errorf("err = %v, want ErrNoStore", err)
		}
	})
	t.Run("a user with SELECT only", func(t *testing.T) {
		d := newPGDB(t)
		d.storeAt(t, 3)
		role := "reader_" + d.name
		d.exec(t, `CREATE ROLE `+role+` LOGIN`, `GRANT USAGE ON SCHEMA bootbench TO `+role,
			`GRANT SELECT ON ALL TABLES IN SCHEMA bootbench TO `+role)
		url := d.c.UserURL(role, d.name)
		before := d.state(t)
		s, err := OpenReadOnly(url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if runs, err := s.Runs(ctx, results.Filter{WithTranscript: true}); err != nil || len(runs) != 3 {
			t.Errorf("Runs = %d runs, %v; want 3", len(runs), err)
		}
		if rep, err := Check(ctx, url); err != nil || rep.Runs != 3 || len(rep.Problems) != 0 || rep.Version != len(migrations) {
			t.Errorf("Check = %+v, %v; want a sound store of 3 runs", rep, err)
		}
		// Writers are refused before writing, naming what is missing.
		for _, o := range openers[:2] {
			_, err := o.open(url)
			if !errors.Is(err, ErrReadOnlyStore) || !strings.Contains(err.Error(), "is read-only for user "+role+" (no INSERT on boards, INSERT on metrics, INSERT on power_meters, INSERT on power_samples, INSERT on power_spans, INSERT on runs, INSERT on stages, UPDATE on boards): this command writes to it") {
				t.Errorf("%s as a reader: %v; want ErrReadOnlyStore naming the privileges", o.name, err)
			}
		}
		if after := d.state(t); after != before {
			t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
		}
	})
	t.Run("a reader that may write", func(t *testing.T) {
		d := newPGDB(t)
		d.storeAt(t, 1)
		s, err := OpenReadOnly(d.url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.db.Exec(`DELETE FROM runs`); err == nil {
			t.Error("a read-only store took a write")
		}
		if err := s.SaveRun(ctx, sampleRun("new", t0)); err == nil {
			t.Error("a read-only store saved a run")
		}
	})
	t.Run("an older store", func(t *testing.T) {
		d := newPGDB(t)
		old, err := openWith(d.url, migrations[:1])
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		before := d.state(t)
		_, err = OpenReadOnly(d.url)
		if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), fmt.Sprintf("has schema version 1, older than this bootbench's (%d): a bootbench command that writes to it", len(migrations))) {
			t.Errorf("err = %v; want the older store refused, saying what upgrades it", err)
		}
		if after := d.state(t); after != before {
			t.Errorf("a reader upgraded the store")
		}
		s, err := Open(d.url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v, err := s.SchemaVersion(ctx); err != nil || v != len(migrations) {
			t.Errorf("after a writer opened it: version %d, %v; want %d", v, err, len(migrations))
		}
	})
}

// TestPostgresWritersRefused: a writer that cannot write is refused
// before writing, saying why: no privilege to create the store, a
// read-only session, a database or server that is not there.
func TestPostgresWritersRefused(t *testing.T) {
	d := newPGDB(t)
	noCreate := "nocreate_" + d.name
	readOnly := "readonly_" + d.name
	noLogin := "nologin_" + d.name
	d.exec(t, `CREATE ROLE `+noCreate+` LOGIN`, `CREATE ROLE `+readOnly+` LOGIN`,
		`ALTER ROLE `+readOnly+` SET default_transaction_read_only = on`, `CREATE ROLE `+noLogin)
	before := d.state(t)
	gone := filepath.Join(t.TempDir(), "no-server")
	os.Mkdir(gone, 0o755)
	tests := []struct {
		name, url string
		kind      error
		has       string
	}{
		{"may not create the schema", d.c.UserURL(noCreate, d.name), ErrReadOnlyStore,
			"cannot be created by this user (permission denied for database " + d.name + "): run this once as the database's owner"},
		{"read-only session", d.c.UserURL(readOnly, d.name), ErrReadOnlyStore,
			"is read-only (transaction_read_only is on for user " + readOnly + "): this command writes to it"},
		{"may not log in", d.c.UserURL(noLogin, d.name), ErrNotStore,
			`refused the connection (role "` + noLogin + `" is not permitted to log in): check the user and password`},
		{"no such database", d.c.URL("nonexistent"), ErrNoStore,
			`cannot be opened (database "nonexistent" does not exist): create the database (createdb NAME) or name another`},
		{"no server", "postgres://postgres@/x?host=" + gone, ErrNotStore,
			"cannot be reached ("},
		{"not a URL pgx reads", "postgres://postgres@/x?port=fivefourthreetwo", ErrNotStore,
			"is not a PostgreSQL URL bootbench can use ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.url)
			var se *StoreError
			if !errors.As(err, &se) || !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v (%T); want a StoreError of kind %v", err, err, tt.kind)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "results store "+DisplayName(tt.url)+" ") || !strings.Contains(msg, tt.has) || strings.Contains(msg, "\n") {
				t.Errorf("err = %q; want one line saying %q", msg, tt.has)
			}
		})
	}
	if after := d.state(t); after != before {
		t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
	}
}

// TestPostgresCheck: the consistency check finds rows that break the
// store's promises (here, left by a restore that ran with triggers off).
// A writer checks only what it meets: storing a run under the orphan's id
// fails as damaged and changes nothing, storing another run succeeds.
func TestPostgresCheck(t *testing.T) {
	ctx := context.Background()
	d := newPGDB(t)
	d.storeAt(t, 2)
	if rep, err := Check(ctx, d.url); err != nil || len(rep.Problems) != 0 || rep.Runs != 2 {
		t.Fatalf("Check of a sound store = %+v, %v", rep, err)
	}
	d.exec(t, `SET session_replication_role = replica; INSERT INTO bootbench.metrics VALUES ('ghost', 'md5@16', 'B/s', 1)`)
	s, err := OpenChecked(d.url)
	if err != nil {
		t.Fatalf("OpenChecked: %v; want the store opened, damage met by the writes that meet it", err)
	}
	defer s.Close()
	before := d.state(t)
	for _, tt := range []struct {
		name string
		save func(r *results.Run) error
	}{
		{"SaveRun", func(r *results.Run) error { return s.SaveRun(ctx, r) }},
		{"SaveRuns", func(r *results.Run) error { return s.SaveRuns(ctx, []*results.Run{sampleRun("r100", t0), r}) }},
	} {
		err := tt.save(sampleRun("ghost", t0))
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "(run ghost has metrics stored without its run) where this write meets it: nothing was written") {
			t.Errorf("%s of run ghost: err = %v, want ErrDamaged naming the orphan", tt.name, err)
		}
		if after := d.state(t); after != before {
			t.Errorf("%s of run ghost changed the database:\nbefore %s\nafter  %s", tt.name, before, after)
		}
	}
	// A metric of a name the run does not have is refused the same.
	d.exec(t, `SET session_replication_role = replica; INSERT INTO bootbench.metrics VALUES ('ghost2', 'other', 'B/s', 1)`)
	before = d.state(t)
	if err := s.SaveRun(ctx, sampleRun("ghost2", t0)); !errors.Is(err, ErrDamaged) {
		t.Errorf("SaveRun of run ghost2: err = %v, want ErrDamaged", err)
	}
	if after := d.state(t); after != before {
		t.Errorf("SaveRun of run ghost2 changed the database:\nbefore %s\nafter  %s", before, after)
	}
	if err := s.SaveRun(ctx, sampleRun("r002", t0)); err != nil {
		t.Errorf("SaveRun of a run the damage is not under: %v", err)
	}
	rep, err := Check(ctx, d.url)
	if err != nil || len(rep.Problems) != 2 || rep.Runs != 3 || rep.Version != len(migrations) ||
		!slices.Contains(rep.Problems, "metric md5@16 of run ghost refers to a missing run") {
		t.Errorf("Check = %+v, %v; want the two orphans", rep, err)
	}
}

// TestPostgresReadsEitherFormat: metric values read the same whether the
// server sends them in binary, as a read asks, or in text, as it does
// for a URL that asks for the simple protocol; a walk of several runs a
// page reads them as a read of each run does.
func TestPostgresReadsEitherFormat(t *testing.T) {
	ctx := context.Background()
	d := newPGDB(t)
	s, err := Open(d.url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var saved []results.Run
	for i, v := range []float64{5e-324, math.MaxFloat64, 1.0 / 3, 0.1} {
		r := sampleRun(fmt.Sprintf("r%03d", i), t0.Add(time.Duration(i)*time.Second))
		r.Metrics = append(r.Metrics, results.Metric{Name: "odd", Unit: "x", Value: v})
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		saved = append(saved, want(r, false))
		saved[i].Energy.Spans = r.Energy.Spans
	}
	for _, url := range []string{d.url, d.url + "&default_query_exec_mode=simple_protocol"} {
		r, err := OpenReadOnly(url)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var walked []results.Run
		err = r.EachRun(ctx, results.Filter{}, func(run *results.Run) error {
			walked = append(walked, *run)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: EachRun: %v", url, err)
		}
		if !reflect.DeepEqual(walked, saved) {
			t.Errorf("%s: EachRun read\n%+v\nwant\n%+v", url, walked, saved)
		}
		for _, w := range saved {
			got, err := r.Run(ctx, w.ID)
			if err != nil {
				t.Fatalf("%s: Run %s: %v", url, w.ID, err)
			}
			if !reflect.DeepEqual(got.Metrics, w.Metrics) {
				t.Errorf("%s: run %s read %v, want %v", url, w.ID, got.Metrics, w.Metrics)
			}
		}
	}
}
