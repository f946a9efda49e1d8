package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// rawExec runs statements on path with SQLite alone, the way another
// application (or damage) would change the file.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// dirState is every file in a directory with a hash of its bytes, to
// show a refused file was left as it was and nothing was added next to it.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			state[e.Name()] = "unreadable: " + err.Error()
			continue
		}
		state[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return state
}

func sameState(t *testing.T, before, after map[string]string) {
	t.Helper()
	for name, sum := range after {
		if b, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		} else if b != sum {
			t.Errorf("%s changed", name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s disappeared", name)
		}
	}
}

// storeWithRuns makes a store of ours holding n runs.
func storeWithRuns(t *testing.T, path string, n int) {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range n {
		r := sampleRun(fmt.Sprintf("r%03d", i), t0.Add(time.Duration(i)*time.Second))
		r.Transcript = []byte(strings.Repeat(fmt.Sprintf("line %d of a long console transcript\n", i), 60))
		if err := s.SaveRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// foreignDB makes another application's database: its own table, its own
// user_version and application_id, in rollback or WAL mode.
func foreignDB(version int, appID uint32, wal bool) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		stmts := []string{
			`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`,
			`INSERT INTO notes(body) VALUES ('not bootbench''s'), ('keep me')`,
			fmt.Sprintf(`PRAGMA user_version = %d`, version),
			fmt.Sprintf(`PRAGMA application_id = %d`, int32(appID)),
		}
		if wal {
			stmts = append([]string{`PRAGMA journal_mode = WAL`}, stmts...)
		}
		rawExec(t, path, stmts...)
	}
}

// corruptPage overwrites one page in the middle of a store with garbage.
// rootPage is the number of table's first page in the store at path.
func rootPage(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// damagePage overwrites page n (from 1) of the file at path.
func damagePage(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const page = 4096
	if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", page/4)), int64(n-1)*page); err != nil {
		t.Fatal(err)
	}
}

func corruptPage(t *testing.T, path string) {
	t.Helper()
	storeWithRuns(t, path, 30)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	const page = 4096
	if fi.Size() < 8*page {
		t.Fatalf("store has %d bytes, too few pages to damage one in the middle", fi.Size())
	}
	garbage := []byte(strings.Repeat("\xde\xad\xbe\xef", page/4))
	if _, err := f.WriteAt(garbage, (fi.Size()/page/2)*page); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesBadStores: a file that is not a usable store is refused
// by every way of opening it, with one line that names it and says what to
// do, before anything is written: the file stays byte-identical and
// nothing appears next to it.
func TestOpenRefusesBadStores(t *testing.T) {
	type opener struct {
		name string
		open func(string) (*Store, error)
	}
	openers := []opener{{"Open", Open}, {"OpenChecked", OpenChecked}, {"OpenReadOnly", OpenReadOnly}}
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		kind  error
		has   string
		skips []string // openers that accept this file
	}{
		{"negative version", func(t *testing.T, p string) { storeWithRuns(t, p, 1); rawExec(t, p, `PRAGMA user_version = -1`) },
			ErrNotStore, "has schema version -1, which no bootbench writes", nil},
		{"newer version", func(t *testing.T, p string) { storeWithRuns(t, p, 1); rawExec(t, p, `PRAGMA user_version = 99`) },
			ErrNotStore, fmt.Sprintf("has schema version 99, newer than this bootbench knows (%d): upgrade bootbench", len(migrations)), nil},
		{"foreign app at version 0", foreignDB(0, 0, false), ErrNotStore, "is another application's SQLite database (application_id 0, user_version 0, tables notes)", nil},
		{"foreign app at version 1", foreignDB(1, 0, false), ErrNotStore, "(application_id 0, user_version 1, tables notes)", nil},
		{"foreign app at version 2", foreignDB(2, 0, true), ErrNotStore, "(application_id 0, user_version 2, tables notes)", nil},
		{"foreign app at version 7", foreignDB(7, 0, false), ErrNotStore, "(application_id 0, user_version 7, tables notes)", nil},
		{"foreign app with its own mark", foreignDB(2, 0x0f055170, true), ErrNotStore, "(application_id 0xf055170, user_version 2)", nil},
		{"foreign app with bootbench's table names", func(t *testing.T, p string) {
			rawExec(t, p, `CREATE TABLE boards(x)`, `CREATE TABLE runs(x)`, `CREATE TABLE stages(x)`, `CREATE TABLE metrics(x)`, `PRAGMA user_version = 1`)
		}, ErrNotStore, "is another application's SQLite database", nil},
		// Only a file of no bytes is nobody's.
		{"SQLite database without tables", func(t *testing.T, p string) { rawExec(t, p, `VACUUM`) },
			ErrNotStore, "is another application's SQLite database (application_id 0, user_version 0, no tables)", nil},
		{"SQLite database whose tables were dropped", func(t *testing.T, p string) { rawExec(t, p, `CREATE TABLE t(x)`, `DROP TABLE t`) },
			ErrNotStore, "is another application's SQLite database (application_id 0, user_version 0, no tables)", nil},
		{"SQLite database without tables, in WAL mode", func(t *testing.T, p string) { rawExec(t, p, `PRAGMA journal_mode = WAL`) },
			ErrNotStore, "is another application's SQLite database (application_id 0, user_version 0, no tables)", nil},
		{"directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, ErrNotStore, "is a directory: name a file, e.g. ", nil},
		{"text file", func(t *testing.T, p string) { os.WriteFile(p, []byte("hello, this is not a database\n"), 0o644) },
			ErrNotStore, "is not a SQLite database: it was left untouched", nil},
		{"SQLite header cut short", func(t *testing.T, p string) { os.WriteFile(p, []byte("SQLite format 3\x00\x10\x00"), 0o644) },
			ErrNotStore, "is not a SQLite database", nil},
		// Opened by all: a read checks the runs it reads, a write the
		// store where it meets it (TestOpenCheckedRefusesDamage).
		{"corrupted page", corruptPage, ErrDamaged, "", []string{"Open", "OpenChecked", "OpenReadOnly"}},
	}
	for _, tt := range tests {
		for _, o := range openers {
			t.Run(tt.name+"/"+o.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "results.db")
				tt.make(t, path)
				before := dirState(t, dir)
				s, err := o.open(path)
				if contains(tt.skips, o.name) {
					if err == nil {
						s.Close()
					}
					return
				}
				if err == nil {
					s.Close()
					t.Fatalf("%s opened it", o.name)
				}
				var se *StoreError
				if !errors.As(err, &se) || !errors.Is(err, tt.kind) {
					t.Fatalf("err = %v (%T); want a StoreError of kind %v", err, err, tt.kind)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, "results store "+path+" ") || !strings.Contains(msg, tt.has) || strings.Contains(msg, "\n") {
					t.Errorf("err = %q; want one line naming %s and saying %q", msg, path, tt.has)
				}
				sameState(t, before, dirState(t, dir))
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestOpenReadOnlyNeverWrites: reading never creates a store or its
// directory, never writes one (its journal mode included), and reads an
// older store, or one written before stores were marked, as it is.
func TestOpenReadOnlyNeverWrites(t *testing.T) {
	ctx := context.Background()
	t.Run("missing store, missing directory", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "nonexistent", "results.db")
		_, err := OpenReadOnly(path)
		if !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "results store "+path+" does not exist: nothing is stored there yet") {
			t.Errorf("err = %v, want ErrNoStore naming the path", err)
		}
		if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory created: %v", err)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "results.db")
		os.WriteFile(path, nil, 0o644)
		if _, err := OpenReadOnly(path); !errors.Is(err, ErrNoStore) || !strings.Contains(err.Error(), "holds no results yet") {
			t.Errorf("err = %v, want ErrNoStore", err)
		}
	})
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		runs int
	}{
		{"current store", func(t *testing.T, p string) { storeWithRuns(t, p, 3) }, 3},
		{"store at version 1, read through an upgraded copy", func(t *testing.T, p string) {
			old, err := openWith(p, migrations[:1])
			if err != nil {
				t.Fatal(err)
			}
			old.db.Exec(`INSERT INTO boards(name, first_seen) VALUES('rb450', '2025-03-14T15:09:26.000000000Z');
				INSERT INTO runs(id, board, status, started) VALUES('old', 'rb450', 'ok', '2025-03-14T15:09:26.000000000Z');`)
			old.Close()
		}, 1},
		{"store written before stores were marked", func(t *testing.T, p string) {
			storeWithRuns(t, p, 2)
			rawExec(t, p, `PRAGMA application_id = 0`)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "results.db")
			tt.make(t, path)
			before := dirState(t, dir)
			s, err := OpenReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx, results.Filter{WithTranscript: true})
			if err != nil || len(runs) != tt.runs {
				t.Errorf("Runs = %d runs, %v; want %d", len(runs), err, tt.runs)
			}
			if _, err := s.db.Exec(`DELETE FROM runs`); err == nil {
				t.Error("a read-only store took a write")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			sameState(t, before, dirState(t, dir))
			if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "bootbench-store-*")); len(left) > 0 {
				t.Errorf("upgraded copies left behind: %v", left)
			}
		})
	}
}

// TestOpenMarksStores: new stores carry the mark, and a store written
// before marks existed gets it at its first write open, data kept.
func TestOpenMarksStores(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		make func(t *testing.T, path string)
		runs int
	}{
		{"new file", func(t *testing.T, p string) {}, 0},
		{"empty file", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o644) }, 0},
		{"unmarked store", func(t *testing.T, p string) { storeWithRuns(t, p, 2); rawExec(t, p, `PRAGMA application_id = 0`) }, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.db")
			tt.make(t, path)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			runs, err := s.Runs(ctx, results.Filter{})
			if err != nil || len(runs) != tt.runs {
				t.Errorf("Runs = %d, %v; want %d", len(runs), err, tt.runs)
			}
			s.Close()
			h, err := readHeader(path)
			if err != nil || !h.sqlite || h.appID != storeAppID || int(h.version) != len(migrations) {
				t.Errorf("header %+v, %v; want a SQLite file marked %#x at version %d", h, err, storeAppID, len(migrations))
			}
		})
	}
}

// TestOpenCheckedRefusesDamage: a write that meets damage in the store
// (the runs table's first page, which every run written goes through)
// stores nothing, says so, and leaves the store as it was; Check lists
// what is wrong.
func TestOpenCheckedRefusesDamage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	storeWithRuns(t, path, 30)
	damagePage(t, path, rootPage(t, path, "runs"))
	before := dirState(t, dir)
	s, err := OpenChecked(path)
	if err != nil {
		t.Fatal(err)
	}
	err = s.SaveRun(ctx, sampleRun("r999", t0.Add(time.Hour)))
	s.Close()
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "fails its integrity check (") || !strings.Contains(err.Error(), ") where this write meets it: ") ||
		!strings.Contains(err.Error(), "nothing was written; see bootbench results check") {
		t.Errorf("err = %v, want ErrDamaged saying nothing was written", err)
	}
	sameState(t, before, dirState(t, dir))

	rep, err := Check(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 || rep.Version != len(migrations) {
		t.Errorf("Check = %+v, want problems at version %d", rep, len(migrations))
	}
	sameState(t, before, dirState(t, dir))

	good := filepath.Join(dir, "good.db")
	storeWithRuns(t, good, 3)
	if rep, err := Check(ctx, good); err != nil || len(rep.Problems) != 0 || rep.Runs != 3 {
		t.Errorf("Check of a sound store = %+v, %v; want no problems, 3 runs", rep, err)
	}
}
