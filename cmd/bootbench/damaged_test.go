package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// storeOfRuns imports n copies of the rb450 capture, each its own run of
// 104 metrics, into a new store, and returns its path.
func storeOfRuns(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	files := captures(t, dir, "out", n)
	db := filepath.Join(dir, "results.db")
	// The first at another clock, for a comparison by clock: one the
	// RB450 does not run at, hence --force.
	for _, imp := range [][]string{{"350", files[0]}, append([]string{"300"}, files[1:]...)} {
		args := append([]string{"import", "--board", "rb450", "--clock", imp[0], "--force", "--db", db}, imp[1:]...)
		if r := (invocation{args: args}).run(t); r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
	}
	return db
}

// metricRow finds, in a page of the metrics table, a row's text: its run
// id, then the metric's name and unit.
var metricRow = regexp.MustCompile(`(\d{8}-\d{6}-[0-9a-f]{8})([a-z0-9@.-]+)(B/s|op/s)`)

// TestDamagedPageNamesTheRun: one byte changed in the last page of metric
// rows in a store of 200 runs — in the run id of a metric row, in a metric's name, in the
// page's header —
// makes a listing of every run (results list --limit 0), which reads the
// metrics table itself, exit non-zero with one line naming the run the
// byte belonged to, where it exited 0 and left the metric out; results
// check lists the run. Every other reading command either fails the same
// way or, where it reads the metric through an index the byte did not
// touch (a page of runs, a board's, an export read a page at a time),
// prints what it prints on the sound store: never less.
func TestDamagedPageNamesTheRun(t *testing.T) {
	clean := storeOfRuns(t, 200)
	image, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	// The last page of the metrics table's rows. The table is kept in
	// its key's order (WITHOUT ROWID): its rows are in the leaf pages of
	// an index b-tree.
	const page = 4096
	lastPage, rows := -1, [][]int(nil)
	for p := (len(image)/page - 1) * page; p > 0 && lastPage < 0; p -= page {
		if image[p] == 0x0a { // an index's leaf page
			if rows = metricRow.FindAllSubmatchIndex(image[p:p+page], -1); rows != nil {
				lastPage = p
			}
		}
	}
	if lastPage < 0 {
		t.Fatal("no page of the store holds a metric row")
	}
	t.Logf("damaging page %d of %d", lastPage/page+1, len(image)/page)
	row := rows[len(rows)-1]
	run := string(image[lastPage+row[2] : lastPage+row[3]])
	tests := []struct {
		name string
		at   int    // offset of the byte changed, in the file
		says string // what the error says of the run
	}{
		// The id may become another run's: one reads a metric more.
		{"a byte of a metric's run id", lastPage + row[3] - 1, " metrics, but was saved with 104"},
		{"a byte of a metric's name", lastPage + row[4], " reads 104 metrics that differ from those it was saved with"},
		// SQLite itself finds this one.
		{"the page's type", lastPage, " cannot be read (database disk image is malformed"},
	}
	commands := []struct {
		args     []string
		mustFail bool
	}{
		{[]string{"results", "list", "--limit", "0"}, true},
		{[]string{"results", "list"}, false},
		{[]string{"results", "export", "--format", "json"}, false},
		{[]string{"results", "export", "--format", "csv"}, false},
		{[]string{"results", "export", "--format", "openwrt", "--board", "rb450"}, false},
		{[]string{"results", "export", "--format", "json", "--clock", "300"}, false},
		{[]string{"results", "show", run}, false},
		{[]string{"results", "compare", "--by", "clock", "--board", "rb450"}, false},
	}
	sound := map[int]result{}
	for i, c := range commands {
		if sound[i] = (invocation{args: append(c.args, "--db", clean)}).run(t); sound[i].code != 0 {
			t.Fatalf("%v on the sound store: exit %d: %s", c.args, sound[i].code, sound[i].stderr)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			damaged := bytes.Clone(image)
			damaged[tt.at] ^= 0x04 // a hex digit stays one, a letter one
			db := filepath.Join(t.TempDir(), "results.db")
			if err := os.WriteFile(db, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			for i, c := range commands {
				r := invocation{args: append(c.args, "--db", db)}.run(t)
				named := r.code != 0 && strings.Contains(r.stderr, "results store "+db+" is damaged") &&
					strings.Contains(r.stderr, tt.says) && strings.Contains(r.stderr, run) &&
					strings.Count(strings.TrimSpace(r.stderr), "\n") == 0
				switch {
				case c.mustFail && !named:
					t.Errorf("%v: exit %d, stderr %q: want one line naming run %s", c.args, r.code, r.stderr, run)
				case !named && (r.code != 0 || r.stdout != sound[i].stdout):
					t.Errorf("%v: exit %d, stderr %q, stdout differs from the sound store's: %v", c.args, r.code, r.stderr, r.stdout != sound[i].stdout)
				}
			}
			r := invocation{args: []string{"results", "check", "--db", db}}.run(t)
			if r.code != 1 || !strings.Contains(r.stdout, run) {
				t.Errorf("results check: exit %d, stdout %q: want run %s listed", r.code, r.stdout, run)
			}
		})
	}
}

// TestDamagedRunFailsEveryRead: a run that lost a metric row fails every
// command that reads it — ci's baseline read included — with one line
// naming the store and the run, before anything is run or written.
func TestDamagedRunFailsEveryRead(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	data, err := os.ReadFile(rb450Fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, clock := range []string{"300", "400"} {
		f := filepath.Join(t.TempDir(), "out.txt")
		os.WriteFile(f, append([]byte("# at "+clock+" MHz\n"), data...), 0o644)
		if r := (invocation{args: []string{"import", "--board", "rb450", "--clock", clock, "--force", "--db", db, f}}).run(t); r.code != 0 {
			t.Fatalf("import: %s", r.stderr)
		}
	}
	var run string
	for _, l := range strings.Split((invocation{args: []string{"results", "list", "--db", db}}).run(t).stdout, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[2] == "300" {
			run = f[0]
		}
	}
	sqliteFile(t, db, fmt.Sprintf(`DELETE FROM metrics WHERE run = '%s' AND name = 'rsa4096-sign'`, run))
	before := fileStates(t, dir)
	for _, args := range [][]string{
		{"results", "list"},
		{"results", "list", "--board", "rb450"},
		{"results", "show", run},
		{"results", "show", run, "--raw"},
		{"results", "export", "--format", "json"},
		{"results", "export", "--format", "openwrt", "--board", "rb450", "--clock", "300"},
		{"results", "export", "--format", "csv", "-o", filepath.Join(dir, "out.csv")},
		{"results", "compare", "--by", "clock", "--board", "rb450"},
		{"results", "compare", "--by", "board", "--boards", "rb450@300,rb450@400"},
		// Bounded, should a regression let ci past its baseline.
		{"ci", "--board", "qemu-x86_64", "--baseline", "board=rb450,clock=300", "--max-regression", "3%", "--reps", "1", "--boot-timeout", "1s", "--retries", "0"},
	} {
		r := invocation{args: append(args, "--db", db)}.run(t)
		oneLine(t, r, 2, "results store "+db+" is damaged")
		if !strings.Contains(r.stderr, "run "+run+" reads 103 metrics, but was saved with 104") {
			t.Errorf("%v: %q does not name run %s and what it lost", args, r.stderr, run)
		}
		if r.stdout != "" {
			t.Errorf("%v printed %q", args, r.stdout)
		}
	}
	sameFiles(t, "the reading commands", before, fileStates(t, dir))
}

// adviceRE is the command results check's advice gives, if it gives one.
var adviceRE = regexp.MustCompile(`\(bootbench (results export [^)]*)\)`)

// TestCheckAdviceWorks: what results check tells a user to do with a
// damaged store works: the export it names exits 0 with every run that
// is not damaged, or, where nothing reads past the damage, it names no
// export and says to restore a backup.
func TestCheckAdviceWorks(t *testing.T) {
	tamper := map[string]func(t *testing.T, db string){
		// One metric row deleted: the run reads fewer metrics than it
		// was saved with (the finding's case).
		"a run lost a metric": func(t *testing.T, db string) {
			sqliteFile(t, db, `DELETE FROM metrics WHERE (run, name) = (SELECT run, name FROM metrics ORDER BY run, name LIMIT 1)`)
		},
		// One page in the middle of the file overwritten.
		"a page overwritten": func(t *testing.T, db string) {
			f, err := os.OpenFile(db, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			const page = 4096
			f.WriteAt(bytes.Repeat([]byte{0xa5}, page), (fi.Size()/page/2)*page)
		},
	}
	for name, damage := range tamper {
		t.Run(name, func(t *testing.T) {
			db := storeOfRuns(t, 12)
			damage(t, db)
			r := invocation{args: []string{"results", "check", "--db", db}}.run(t)
			if r.code != 1 {
				t.Fatalf("check: exit %d, want 1: %s", r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "(1 problems") {
				t.Errorf("check says %q", r.stderr)
			}
			m := adviceRE.FindStringSubmatch(r.stderr)
			if m == nil {
				if !strings.Contains(r.stderr, "restore the file from a backup") {
					t.Fatalf("check advises neither an export nor a backup: %s", r.stderr)
				}
				return
			}
			out := filepath.Join(t.TempDir(), "runs.json")
			args := strings.Fields(strings.Replace(m[1], "runs.json", out, 1))
			e := invocation{args: args}.run(t)
			if e.code != 0 {
				t.Fatalf("the advice %q: exit %d: %s", m[1], e.code, e.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			skipped := 0
			if i := slices.Index(args, "--skip"); i >= 0 {
				skipped = len(strings.Split(args[i+1], ","))
			}
			if got := strings.Count(string(data), `"board": "rb450"`); got != 12-skipped || got == 0 {
				t.Errorf("the advised export %v holds %d runs, want the %d not skipped: %.300s", args, got, 12-skipped, data)
			}
		})
	}
}
