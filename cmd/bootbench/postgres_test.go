package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/testkit/pgtest"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// These tests hold every command to working the same on a store in
// PostgreSQL as on a SQLite file, against a real server the tests start
// (internal/testkit/pgtest): none boots a board.

// newPostgresStore is the URL of a fresh database in the test cluster.
func newPostgresStore(t *testing.T) string {
	t.Helper()
	url, err := pgtest.Shared(t).NewDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// eachStore runs test against a fresh SQLite store and a fresh store in
// PostgreSQL, as subtests named after them.
func eachStore(t *testing.T, test func(t *testing.T, db string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "r.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, newPostgresStore(t)) })
}

// captures writes n copies of the RB450 fixture, each with bytes of its
// own (a leading line the parser skips), so import takes each as new.
func captures(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	fixture, err := os.ReadFile(rb450Fixture)
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, n)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("%s-%03d.txt", prefix, i))
		if err := os.WriteFile(files[i], append(fmt.Appendf(nil, "# %s capture %d\n", prefix, i), fixture...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// runAll runs the invocations at once and returns their results in order.
func runAll(t *testing.T, db string, argvs ...[]string) []result {
	t.Helper()
	out := make([]result, len(argvs))
	var wg sync.WaitGroup
	for i, args := range argvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := userenv.Command([]string{"BOOTBENCH_DB=" + db}, bootbenchBin, args...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
				se.WriteString(err.Error())
			}
			out[i] = result{code, so.String(), se.String()}
		}()
	}
	wg.Wait()
	return out
}

// TestConcurrentImports: two bootbench import processes of 100 files
// each, into one store at once, for the same board and clock: 200 runs,
// every metric, each run holding its own file's bytes, no error.
func TestConcurrentImports(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		a, b := captures(t, dir, "a", 100), captures(t, dir, "b", 100)
		base := []string{"import", "--board", "rb450", "--clock", "300"}
		rs := runAll(t, db, append(base, a...), append(base, b...))
		reported := map[string]importedLine{}
		for i, r := range rs {
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("import %d: exit %d: %s", i, r.code, r.stderr)
			}
			for _, l := range importedLines(t, r.stdout) {
				reported[l.id] = l
			}
		}
		s := openTestStore(t, db)
		ctx := context.Background()
		runs, err := s.Runs(ctx, results.Filter{WithTranscript: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 200 || len(reported) != 200 {
			t.Fatalf("%d runs stored, %d reported; want 200", len(runs), len(reported))
		}
		for _, r := range runs {
			l, ok := reported[string(r.ID)]
			data, _ := os.ReadFile(l.file)
			if !ok || len(r.Metrics) != l.metrics || l.metrics < 20 || string(r.RawOutput) != string(data) {
				t.Errorf("run %s: reported %v, %d metrics, %d bytes of output", r.ID, ok, len(r.Metrics), len(r.RawOutput))
			}
		}
		if err := s.IntegrityCheck(ctx); err != nil {
			t.Error(err)
		}
	})
}

var pushedRE = regexp.MustCompile(`(?m)^pushed (\d+) runs? from (.+) to (.+); (\d+) already there$`)

// TestPushTwice: two benches' stores of 100 runs each, pushed to one
// PostgreSQL store at once, then both pushed again at once: 200 runs, each
// once, with everything stored about them; the second round copies
// nothing.
func TestPushTwice(t *testing.T) {
	dir := t.TempDir()
	shared := newPostgresStore(t)
	benches := []string{filepath.Join(dir, "bench1.db"), filepath.Join(dir, "bench2.db")}
	for i, db := range benches {
		files := captures(t, dir, fmt.Sprint("bench", i+1), 100)
		if r := bootbench(t, db, append([]string{"import", "--board", "rb450", "--clock", "300"}, files...)...); r.code != 0 {
			t.Fatalf("import into %s: %s", db, r.stderr)
		}
	}
	for round, wantPushed := range []int{100, 0} {
		rs := runAll(t, "", []string{"results", "push", "--db", benches[0], "--to", shared},
			[]string{"results", "push", "--db", benches[1], "--to", shared})
		for i, r := range rs {
			m := pushedRE.FindStringSubmatch(r.stdout)
			if r.code != 0 || m == nil || m[1] != fmt.Sprint(wantPushed) || m[2] != benches[i] || m[3] != shared || m[4] != fmt.Sprint(100-wantPushed) {
				t.Errorf("round %d, push of %s: exit %d\n%s%s", round+1, benches[i], r.code, r.stdout, r.stderr)
			}
		}
	}
	ctx := context.Background()
	got := openTestStore(t, shared)
	gotRuns, err := got.Runs(ctx, results.Filter{WithTranscript: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[results.RunID]results.Run{}
	for _, db := range benches {
		runs, err := openTestStore(t, db).Runs(ctx, results.Filter{WithTranscript: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			want[r.ID] = r
		}
	}
	if len(gotRuns) != 200 || len(want) != 200 {
		t.Fatalf("shared store holds %d runs; want the benches' 200", len(gotRuns))
	}
	for _, r := range gotRuns {
		w := want[r.ID]
		if r.Board != w.Board || r.InputSHA256 != w.InputSHA256 || string(r.RawOutput) != string(w.RawOutput) ||
			len(r.Metrics) != len(w.Metrics) || !r.Started.Equal(w.Started) || r.Source != w.Source {
			t.Errorf("run %s arrived as %+v", r.ID, r)
		}
	}
}

// TestExportOpenWrtSame is the acceptance check: the same imports into a
// SQLite file and into PostgreSQL give the same OpenWrt rows, byte for
// byte.
func TestExportOpenWrtSame(t *testing.T) {
	imports := [][]string{
		{"--board", "rb450", "--clock", "300", rb450Fixture},
		{"--board", "rb450g", "--clock", "680", "testdata/openssl-0.9.8k-rb450g-680mhz.txt"},
		{"--board", "rb450g", "--clock", "800", "testdata/openssl-0.9.8k-rb450g-800mhz.txt"},
		{"--board", "desktop", "--new-board", "--clock", "0", "--table", "2", forumPost},
		{"--board", "Desktop", "--new-board", "--clock", "0", "--table", "3", forumPost},
	}
	var exports []string
	for _, db := range []string{filepath.Join(t.TempDir(), "r.db"), newPostgresStore(t)} {
		for _, args := range imports {
			if r := bootbench(t, db, append([]string{"import"}, args...)...); r.code != 0 {
				t.Fatalf("import %v into %s: %s", args, db, r.stderr)
			}
		}
		r := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting")
		if r.code != 0 || strings.Count(r.stdout, "\n") != 6 {
			t.Fatalf("export from %s: exit %d\n%s%s", db, r.code, r.stdout, r.stderr)
		}
		exports = append(exports, r.stdout)
	}
	if exports[0] != exports[1] {
		t.Errorf("OpenWrt export differs:\nSQLite:\n%s\nPostgreSQL:\n%s", exports[0], exports[1])
	}
}

// TestStoresAgree: a bench's SQLite store pushed to PostgreSQL reads back
// the same through every reading command, byte for byte (only the store's
// name in what check says differs).
func TestStoresAgree(t *testing.T) {
	dir := t.TempDir()
	local, shared := filepath.Join(dir, "r.db"), newPostgresStore(t)
	noisy := filepath.Join(dir, "noisy.txt")
	fixture, _ := os.ReadFile(rb450Fixture)
	os.WriteFile(noisy, append([]byte("\xff\xfe console noise\r\n"), fixture...), 0o644)
	for _, args := range [][]string{
		{"--board", "rb450", "--clock", "300", rb450Fixture},
		{"--board", "rb450", "--clock", "300", noisy},
		{"--board", "rb450g", "--clock", "680", "testdata/openssl-0.9.8k-rb450g-680mhz.txt"},
		{"--board", "rb450g", "--clock", "800", "testdata/openssl-0.9.8k-rb450g-800mhz.txt"},
		{"--board", "desktop", "--new-board", "--clock", "0", "--table", "2", forumPost},
		{"--board", "rb450g", "--clock", "800", "--force", "testdata/openssl-0.9.8k-rb450g-800mhz.txt"},
	} {
		if r := bootbench(t, local, append([]string{"import"}, args...)...); r.code != 0 {
			t.Fatalf("import %v: %s", args, r.stderr)
		}
	}
	if r := bootbench(t, local, "results", "push", "--to", shared); r.code != 0 {
		t.Fatalf("push: %s", r.stderr)
	}
	runs, err := openTestStore(t, local).Runs(context.Background(), results.Filter{})
	if err != nil || len(runs) != 6 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	commands := [][]string{
		{"results", "list"},
		{"results", "list", "--board", "rb450g"},
		{"results", "compare", "--by", "clock", "--board", "rb450g"},
		{"results", "compare", "--by", "clock", "--board", "rb450g", "--format", "json"},
		{"results", "compare", "--by", "board", "--boards", "rb450@300,rb450g@680"},
		{"results", "export", "--format", "json"},
		{"results", "export", "--format", "csv"},
		{"results", "export", "--format", "openwrt"},
		{"results", "export", "--format", "openwrt", "--with-setting"},
		{"results", "export", "--format", "gobench"},
		{"results", "export", "--format", "html"},
		{"results", "export", "--format", "json", "--board", "rb450g", "--clock", "800"},
	}
	for _, r := range runs {
		commands = append(commands, []string{"results", "show", string(r.ID)},
			[]string{"results", "show", string(r.ID), "--raw"}, []string{"results", "show", string(r.ID), "--transcript"})
	}
	for _, args := range commands {
		a, b := bootbench(t, local, args...), bootbench(t, shared, args...)
		if a.code != 0 || a != b {
			t.Errorf("%v: SQLite exit %d, PostgreSQL exit %d; outputs differ: %v\nSQLite:\n%s%s\nPostgreSQL:\n%s%s",
				args, a.code, b.code, a.stdout != b.stdout, a.stdout, a.stderr, b.stdout, b.stderr)
		}
	}
	check := bootbench(t, shared, "results", "check")
	if check.code != 0 || check.stdout != fmt.Sprintf("results store %s is sound: schema version %d, 6 runs\n", shared, schemaVersion(t)) {
		t.Errorf("check: exit %d\n%s%s", check.code, check.stdout, check.stderr)
	}
}

// schemaVersion is the schema a store this bootbench makes is at.
func schemaVersion(t *testing.T) int {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "fresh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := s.SchemaVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPostgresStoreContract: the store contract of store_test.go on
// PostgreSQL. Another application's schema named bootbench is refused by
// every command, untouched; a database without a store is reported by
// readers, who create nothing; a user who may only read can read.
func TestPostgresStoreContract(t *testing.T) {
	c := pgtest.Shared(t)
	ctx := context.Background()
	state := func(db string) string {
		t.Helper()
		rows, err := c.Query(ctx, db, `
			SELECT n.nspname||'.'||coalesce(c.relname, '') FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid
			WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		notes, err := c.Query(ctx, db, `SELECT count(*)::text FROM pg_class WHERE relname = 'notes'`)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(rows, " ") + " notes:" + notes[0]
	}

	t.Run("another application's schema", func(t *testing.T) {
		url := newPostgresStore(t)
		db := pgtest.DatabaseOf(url)
		if err := c.Exec(ctx, db, `CREATE SCHEMA bootbench`, `CREATE TABLE bootbench.notes (body text)`, `INSERT INTO bootbench.notes VALUES ('keep me')`); err != nil {
			t.Fatal(err)
		}
		// A bench store to push from, so push gets as far as the target.
		local := filepath.Join(t.TempDir(), "r.db")
		if r := bootbench(t, local, "import", "--board", "rb450", "--clock", "300", rb450Fixture); r.code != 0 {
			t.Fatal(r.stderr)
		}
		before := state(db)
		for _, args := range append(storeCommands(url), []string{"results", "push", "--db", local, "--to", url}) {
			r := invocation{args: args}.run(t)
			oneLine(t, r, 2, "results store "+url+" holds another application's schema bootbench (tables notes): it was left untouched; name another database")
			if after := state(db); after != before {
				t.Errorf("%v changed the database:\nbefore %s\nafter  %s", args[:2], before, after)
			}
		}
	})

	t.Run("readers create nothing", func(t *testing.T) {
		url := newPostgresStore(t)
		db := pgtest.DatabaseOf(url)
		before := state(db)
		for _, args := range storeCommands(url) {
			if args[0] == "import" || args[0] == "run" {
				continue // writers create the store
			}
			r := invocation{args: args}.run(t)
			oneLine(t, r, 2, "results store "+url+" holds no results store (no schema bootbench): nothing is stored there yet")
		}
		if after := state(db); after != before {
			t.Errorf("readers changed the database:\nbefore %s\nafter  %s", before, after)
		}
	})

	t.Run("a user who may only read", func(t *testing.T) {
		url := newPostgresStore(t)
		db := pgtest.DatabaseOf(url)
		if r := bootbench(t, url, "import", "--board", "rb450", "--clock", "300", rb450Fixture); r.code != 0 {
			t.Fatal(r.stderr)
		}
		role := "reader_" + db
		if err := c.Exec(ctx, db, `CREATE ROLE `+role+` LOGIN`, `GRANT USAGE ON SCHEMA bootbench TO `+role, `GRANT SELECT ON ALL TABLES IN SCHEMA bootbench TO `+role); err != nil {
			t.Fatal(err)
		}
		reader := c.UserURL(role, db)
		for _, args := range storeCommands(reader) {
			r := invocation{args: args}.run(t)
			switch {
			case args[0] == "import" || args[0] == "run":
				oneLine(t, r, 2, "results store "+reader+" is read-only for user "+role+" (no INSERT on boards, INSERT on metrics, INSERT on power_meters, INSERT on power_samples, INSERT on power_spans, INSERT on runs, INSERT on stages, UPDATE on boards): this command writes to it")
			case args[1] == "show":
				oneLine(t, r, 2, `no run "r1" in `+reader)
			case args[1] == "compare":
				oneLine(t, r, 2, "nothing to compare") // one setting of one board stored
			case r.code != 0:
				t.Errorf("%v as a reader: exit %d: %s", args, r.code, r.stderr)
			}
		}
	})
}

// TestPushRefuses: push says what is wrong in one line and copies
// nothing when it cannot.
func TestPushRefuses(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "r.db")
	if r := bootbench(t, local, "import", "--board", "rb450", "--clock", "300", rb450Fixture); r.code != 0 {
		t.Fatal(r.stderr)
	}
	shared := newPostgresStore(t)
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"results", "push", "--board", "rb450"}, "results push: --board selects runs to copy --to another store; the spool is delivered whole"},
		{[]string{"results", "push", "--to", local}, "results push: --to " + local + " is the store pushed from; name another"},
		{[]string{"results", "push", "--to", shared, "extra"}, `results push: unexpected argument "extra"`},
		{[]string{"results", "push", "--db", filepath.Join(dir, "none.db"), "--to", shared}, "results store " + filepath.Join(dir, "none.db") + " does not exist"},
	} {
		r := bootbench(t, local, tt.args...)
		oneLine(t, r, 2, tt.says)
	}
	if runs, err := store.OpenReadOnly(shared); err == nil {
		runs.Close()
		t.Errorf("a refused push created the shared store")
	}
	// A run the shared store holds under the same id, but different, is
	// not pushed over, and push says so.
	runs, err := openTestStore(t, local).Runs(context.Background(), results.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	other := runs[0]
	other.Board, other.InputSHA256 = "elsewhere", ""
	s := openTestStore(t, shared)
	if err := s.SaveRun(context.Background(), &other); err != nil {
		t.Fatal(err)
	}
	r := bootbench(t, local, "results", "push", "--to", shared)
	if r.code != 1 || !strings.Contains(r.stdout, "not pushed: run "+string(other.ID)+": "+shared+" holds a different run under that id\n") ||
		!strings.Contains(r.stderr, "results push: 1 run not pushed: "+shared+" holds different runs under their ids") {
		t.Errorf("push over a different run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestE2ERunIntoPostgres: bootbench run on the virtual board stores its
// run in PostgreSQL, whole, and the store names it by its URL.
func TestE2ERunIntoPostgres(t *testing.T) {
	requireBench(t)
	db := newPostgresStore(t)
	r := bootbench(t, db, "run", "--seconds", "0.1", "--algs", "md5,sha256")
	if r.code != 0 {
		t.Fatalf("bootbench run: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	m := runIDRE.FindStringSubmatch(r.stderr)
	if m == nil || !strings.Contains(r.stdout, "stored in "+db+"\n") {
		t.Fatalf("no run id in the progress, or not stored in %s:\n%s%s", db, r.stdout, r.stderr)
	}
	e := exportJSON(t, db)
	if len(e.Runs) != 1 || e.Runs[0].ID != m[1] || e.Runs[0].Status != "ok" || len(e.Runs[0].Metrics) == 0 {
		t.Fatalf("export: %+v", e)
	}
	show := bootbench(t, db, "results", "show", m[1], "--transcript")
	for _, want := range []string{"status   ok", "  kernel ", "Welcome to u-root", frame.Prefix} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("results show lacks %q:\n%s", want, show.stdout)
		}
	}
	assertNothingLeft(t, r.stderr)
}
