package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"

	_ "modernc.org/sqlite" // to make other applications' databases
)

// These tests hold the CLI to the contract that the results store is the
// user's data: a file that is not a bootbench store is refused untouched by
// every command, reading never writes, and a store the user may not write
// can still be read. None boots a board.

// invocation is one run of the bootbench binary.
type invocation struct {
	args   []string
	env    []string            // added to the environment
	cred   *syscall.Credential // run as this user; nil: as we are
	prefix []string            // run under this command (unshare ...)
	dir    string              // working directory; "" the package's
	stdin  []byte
}

func (iv invocation) run(t *testing.T) result {
	t.Helper()
	argv := append(append(append([]string(nil), iv.prefix...), bootbenchBin), iv.args...)
	// No BOOTBENCH_DB from the developer's environment: --db says.
	cmd := userenv.Command(append([]string{"BOOTBENCH_DB="}, iv.env...), argv[0], argv[1:]...)
	cmd.Dir = iv.dir
	if iv.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: iv.cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", argv, err)
	}
	return result{code, out.String(), errb.String()}
}

// oneLine checks an error is one line on stderr saying want.
func oneLine(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstderr: %s", r.code, code, r.stderr)
	}
	if !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("stderr %q: want one line saying %q", r.stderr, want)
	}
}

// fileStates hashes every file in dir, to show nothing was changed or
// added.
func fileStates(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			states[e.Name()] = "dir"
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		states[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return states
}

func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("%s changed the directory:\nbefore %v\nafter  %v", what, before, after)
	}
}

// sqliteFile makes a SQLite database as another application would.
// sqliteInt is what query, of one integer, gives in the SQLite file at
// path.
func sqliteInt(t *testing.T, path, query string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func sqliteFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
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

func foreignApp(version int, wal bool, appID int32) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		stmts := []string{
			`CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)`,
			`INSERT INTO contacts(name) VALUES ('Ada'), ('Grace')`,
			fmt.Sprintf(`PRAGMA user_version = %d`, version),
			fmt.Sprintf(`PRAGMA application_id = %d`, appID),
		}
		if wal {
			stmts = append([]string{`PRAGMA journal_mode = WAL`}, stmts...)
		}
		sqliteFile(t, path, stmts...)
	}
}

// storeCommands are every command that takes --db, as a user would give
// them; the store holds no run "r1", so show fails after opening it.
func storeCommands(db string) [][]string {
	fixture, _ := filepath.Abs(rb450Fixture)
	return [][]string{
		{"results", "list", "--db", db},
		{"results", "show", "r1", "--db", db},
		{"results", "show", "r1", "--raw", "--db", db},
		{"results", "export", "--format", "json", "--db", db},
		{"results", "export", "--format", "openwrt", "--db", db},
		{"results", "export", "--format", "openwrt", "--with-setting", "--db", db},
		{"results", "export", "--format", "html", "--db", db},
		{"results", "compare", "--by", "clock", "--board", "rb450", "--db", db},
		{"results", "compare", "--by", "board", "--boards", "rb450@300,rb450g@680", "--db", db},
		{"results", "check", "--db", db},
		{"import", "--board", "rb450", "--clock", "300", "--db", db, fixture},
		// A bounded boot, should a regression let run past the store.
		{"run", "--board", "qemu-x86_64", "--boot-timeout", "1s", "--retries", "0", "--db", db},
	}
}

// TestStoreForeignFileUntouched: another application's SQLite file given
// as --db to every command is refused in one line and is byte-identical
// afterwards, with nothing added next to it.
func TestStoreForeignFileUntouched(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		says string
	}{
		{"version 0", foreignApp(0, false, 0), "application_id 0, user_version 0, tables contacts"},
		{"version 1", foreignApp(1, false, 0), "application_id 0, user_version 1, tables contacts"},
		{"version 2, WAL", foreignApp(2, true, 0), "application_id 0, user_version 2, tables contacts"},
		{"version 7", foreignApp(7, false, 0), "application_id 0, user_version 7, tables contacts"},
		{"its own application_id", foreignApp(3, true, 0x46697a7a), "application_id 0x46697a7a, user_version 3"},
		{"no tables", func(t *testing.T, p string) { sqliteFile(t, p, `CREATE TABLE t(x)`, `DROP TABLE t`) }, "application_id 0, user_version 0, no tables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "contacts.db")
			tt.make(t, db)
			before := fileStates(t, dir)
			for _, args := range storeCommands(db) {
				r := invocation{args: args}.run(t)
				oneLine(t, r, 2, "results store "+db+" is another application's SQLite database ("+tt.says+"): it was left untouched")
				sameFiles(t, strings.Join(args[:2], " "), before, fileStates(t, dir))
			}
		})
	}
}

// TestStoreUnusable: a --db that cannot be a store, or holds one this
// bootbench cannot use, exits 2 with one line naming it and what to do,
// for every command, and is left as it was.
func TestStoreUnusable(t *testing.T) {
	ours := func(t *testing.T, path string) {
		if r := (invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", path, rb450Fixture}}).run(t); r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
	}
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		says string
	}{
		{"a directory", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "is a directory: name a file, e.g. "},
		{"a text file", func(t *testing.T, p string) { os.WriteFile(p, []byte("my notes\n"), 0o644) }, "is not a SQLite database: it was left untouched"},
		{"negative schema version", func(t *testing.T, p string) { ours(t, p); sqliteFile(t, p, `PRAGMA user_version = -1`) },
			"has schema version -1, which no bootbench writes"},
		{"newer schema version", func(t *testing.T, p string) { ours(t, p); sqliteFile(t, p, `PRAGMA user_version = 42`) },
			"has schema version 42, newer than this bootbench knows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "results.db")
			tt.make(t, db)
			before := fileStates(t, dir)
			for _, args := range storeCommands(db) {
				r := invocation{args: args}.run(t)
				oneLine(t, r, 2, "results store "+db+" "+tt.says)
				sameFiles(t, strings.Join(args[:2], " "), before, fileStates(t, dir))
			}
		})
	}
}

// TestStoreReadersCreateNothing: with no store at --db, reading commands
// say so and create neither the store nor its directory, nor a cache
// directory for the image builder's dependencies.
func TestStoreReadersCreateNothing(t *testing.T) {
	top := t.TempDir()
	db := filepath.Join(top, "nonexistent", "dir", "r.db")
	home, cache := filepath.Join(top, "home"), filepath.Join(top, "cache")
	env := []string{"HOME=" + home, "XDG_CACHE_HOME=" + cache}
	for _, args := range storeCommands(db) {
		if args[0] == "import" || args[0] == "run" {
			continue // writers create the store
		}
		r := invocation{args: args, env: env}.run(t)
		oneLine(t, r, 2, "results store "+db+" does not exist: nothing is stored there yet")
	}
	for _, args := range [][]string{{"boards", "list"}, {"boards", "show", "qemu-x86_64"}, {"speed", "--help"}, {"help"}, {"results", "compare", "--help"}} {
		if r := (invocation{args: args, env: env}).run(t); r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	for _, p := range []string{filepath.Dir(db), home, cache} {
		if _, err := os.Stat(p); err == nil {
			left, _ := filepath.Glob(filepath.Join(p, "*"))
			t.Errorf("%s was created (holds %v)", p, left)
		}
	}
}

// TestStoreDamaged: an import that meets damage in the store (the runs
// table's first page, which every run written goes through) writes
// nothing and says so, and results check lists what is wrong.
func TestStoreDamaged(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	for i := range 12 {
		data, err := os.ReadFile(rb450Fixture)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("out-%d.txt", i))
		os.WriteFile(f, append([]byte(fmt.Sprintf("# capture %d\n", i)), data...), 0o644)
		if r := (invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", db, f}}).run(t); r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
	}
	if r := (invocation{args: []string{"results", "check", "--db", db}}).run(t); r.code != 0 || !strings.Contains(r.stdout, "results store "+db+" is sound: schema version") {
		t.Fatalf("check of a sound store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	root := sqliteInt(t, db, `SELECT rootpage FROM sqlite_master WHERE name = 'runs'`)
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	f.WriteAt(bytes.Repeat([]byte{0xa5}, page), int64(root-1)*page)
	f.Close()
	before := fileStates(t, dir)

	r := invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", db, "testdata/openssl-0.9.8k-rb450g-680mhz.txt"}}.run(t)
	oneLine(t, r, 2, "results store "+db+" fails its integrity check (")
	if !strings.Contains(r.stderr, "nothing was written; see bootbench results check") || r.stdout != "" {
		t.Errorf("import into a damaged store: stdout %q stderr %q", r.stdout, r.stderr)
	}
	sameFiles(t, "import", before, fileStates(t, dir))

	r = invocation{args: []string{"results", "check", "--db", db}}.run(t)
	oneLine(t, r, 1, "results store "+db+" fails its integrity check (")
	if r.stdout == "" {
		t.Error("results check listed no problem")
	}
	sameFiles(t, "results check", before, fileStates(t, dir))
}

// requireRoot fails (BOOTBENCH_E2E=1) or skips a test that needs root to
// make a store the user may not write.
func requireRoot(t *testing.T) {
	t.Helper()
	needs.Root(t, "needs root: to run bootbench as another user and to mount read-only")
}

// TestStoreReadOnly: every reading command works on a store the user may
// not write, a file owned by someone else, and one on a read-only mount,
// and leaves it as it was; import says it cannot write there.
func TestStoreReadOnly(t *testing.T) {
	requireRoot(t)
	// Another user must reach the binary and the store.
	if err := os.Chmod(filepath.Dir(bootbenchBin), 0o755); err != nil {
		t.Fatal(err)
	}
	top, err := os.MkdirTemp("", "bootbench-ro-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	os.Chmod(top, 0o755)
	dir := filepath.Join(top, "store")
	os.Mkdir(dir, 0o755)
	db := filepath.Join(dir, "results.db")
	fixtures := map[string]string{"rb450": rb450Fixture, "rb450g680": "testdata/openssl-0.9.8k-rb450g-680mhz.txt", "rb450g800": "testdata/openssl-0.9.8k-rb450g-800mhz.txt"}
	for _, imp := range [][]string{{"rb450", "300", "rb450"}, {"rb450g", "680", "rb450g680"}, {"rb450g", "800", "rb450g800"}} {
		r := invocation{args: []string{"import", "--board", imp[0], "--clock", imp[1], "--db", db, fixtures[imp[2]]}}.run(t)
		if r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
	}
	list := invocation{args: []string{"results", "list", "--db", db}}.run(t)
	// Imports start when their file was written; a fresh checkout may give
	// all three the same time, so find the rb450 run by its board.
	var runID string
	for _, l := range strings.Split(list.stdout, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "rb450" {
			runID = f[0]
		}
	}
	raw, _ := os.ReadFile(rb450Fixture)

	readers := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"results", "list"}, "rb450g"},
		{[]string{"results", "list", "--board", "rb450"}, runID},
		{[]string{"results", "show", runID}, "board    rb450"},
		{[]string{"results", "show", runID, "--raw"}, string(raw)},
		{[]string{"results", "export", "--format", "json"}, `"board": "rb450"`},
		{[]string{"results", "export", "--format", "openwrt"}, "| 0.9.8k |  16160430 |"},
		{[]string{"results", "export", "--format", "openwrt", "--with-setting"}, "| rb450 | 300 | 0.9.8k |"},
		{[]string{"results", "export", "--format", "csv"}, "rb450"},
		{[]string{"results", "export", "--format", "gobench"}, "Benchmark"},
		{[]string{"results", "export", "--format", "html"}, "<!DOCTYPE html>"},
		{[]string{"results", "compare", "--by", "clock", "--board", "rb450g"}, "rb450g: 680 MHz (baseline, 1 run) vs 800 MHz (1 run)"},
		{[]string{"results", "compare", "--by", "board", "--boards", "rb450@300,rb450g@680", "--format", "json"}, `"clock_mhz": 680`},
		{[]string{"results", "check"}, "is sound"},
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	ways := []struct {
		name   string
		cred   *syscall.Credential
		prefix []string
		why    string // what import's refusal says
	}{
		{"owned by someone else", nobody, nil, "permission denied"},
		{"on a read-only mount", nil, []string{"unshare", "-m", "--", "sh", "-c", `mount --bind -o ro "$0" "$0" && exec "$@"`, dir}, "read-only file system"},
	}
	env := []string{"HOME=" + top, "XDG_CACHE_HOME="}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			before := fileStates(t, dir)
			for _, rd := range readers {
				args := append(append([]string(nil), rd.args...), "--db", db)
				r := invocation{args: args, cred: w.cred, prefix: w.prefix, env: env, dir: top}.run(t)
				if r.code != 0 || !strings.Contains(r.stdout, rd.want) {
					t.Errorf("%v: exit %d, stdout lacks %q\nstderr: %s", rd.args, r.code, rd.want, r.stderr)
				}
				sameFiles(t, strings.Join(rd.args, " "), before, fileStates(t, dir))
			}
			abs, _ := filepath.Abs("testdata/openssl-0.9.8k-rb450g-680mhz.txt")
			r := invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", db, abs}, cred: w.cred, prefix: w.prefix, env: env, dir: top}.run(t)
			oneLine(t, r, 2, "results store "+db+" is read-only (")
			if !strings.Contains(r.stderr, w.why) {
				t.Errorf("import: %q does not say %q", r.stderr, w.why)
			}
			sameFiles(t, "import", before, fileStates(t, dir))
		})
	}
}

// TestStoreNamesRefused: a store named by a URL bootbench does not speak
// (a misspelt postgres://, mysql://) is refused by every command, naming
// the schemes taken, and nothing is created where SQLite would have made
// a file of that name; a path no file can be made at (/proc/x) is one line
// and exit 2; an unreachable PostgreSQL says its error once.
func TestStoreNamesRefused(t *testing.T) {
	tests := []struct {
		db, readers, writers string
	}{
		{"postgress://bench@db.lab/bootbench", "is a postgress:// URL, a store bootbench does not know: give a file path, or a PostgreSQL store as postgres://USER@HOST/DATABASE (the schemes taken: postgres://, postgresql://)", ""},
		{"mysql://u:secret@db.lab/z", "results store mysql://u:xxxxx@db.lab/z is a mysql:// URL, a store bootbench does not know", ""},
		{"/proc/bootbench-x", "does not exist", "results store /proc/bootbench-x cannot be opened or created (unable to open database file): name a file"},
		{"/sys/bootbench-x.db", "does not exist", "cannot be opened or created"},
		{"postgres://bench@127.0.0.1:1/bootbench", "cannot be reached (127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused): check the URL", ""},
	}
	for _, tt := range tests {
		t.Run(tt.db, func(t *testing.T) {
			for _, args := range storeCommands(tt.db) {
				r := invocation{args: args}.run(t) // in the package's directory, as run needs the tree
				want := tt.readers
				if tt.writers != "" && (args[0] == "import" || args[0] == "run") {
					want = tt.writers
				}
				oneLine(t, r, 2, want)
				if n := strings.Count(r.stderr, "connection refused"); n > 1 {
					t.Errorf("%v: the dial error said %d times: %s", args[:2], n, r.stderr)
				}
			}
			// SQLite would have made the URL a relative path here.
			if scheme, _, ok := strings.Cut(tt.db, "//"); ok {
				if _, err := os.Stat(scheme); err == nil {
					os.RemoveAll(scheme)
					t.Errorf("created %s", scheme)
				}
			}
		})
	}
}
