package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

const forumPost = "../../results/parse/testdata/forum-three-tables.txt"

// TestCLIContract: bad usage exits 2 with one line that says what was
// wrong once, and does nothing.
func TestCLIContract(t *testing.T) {
	db := emptyStore(t)
	fixture := rb450Fixture
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"results list extra", []string{"results", "list", "extra"}, `results list: unexpected argument "extra" (usage: bootbench results list`},
		{"results export extra", []string{"results", "export", "--format", "csv", "extra"}, `results export: unexpected argument "extra"`},
		{"results compare extra", []string{"results", "compare", "--by", "clock", "--board", "b", "extra"}, `results compare: unexpected argument "extra"`},
		{"results check extra", []string{"results", "check", "extra"}, `results check: unexpected argument "extra"`},
		{"speed extra", []string{"speed", "extra"}, `speed: unexpected argument "extra" (usage: bootbench speed`},
		{"boards list extra", []string{"boards", "list", "extra"}, `boards list: unexpected argument "extra"`},
		{"boards show without a name", []string{"boards", "show"}, "boards show: name one board"},
		{"boards prepare without a board", []string{"boards", "prepare"}, "boards prepare: name one board or more"},
		{"boards prepare --bench nosuch", []string{"boards", "prepare", "--bench", "nosuch", "qemu-x86_64"}, `boards prepare: --bench: unknown benchmark "nosuch"`},
		{"boards prepare an unknown board", []string{"boards", "prepare", "qemu-x86_64", "qemu-nosuch"}, `unknown board "qemu-nosuch"`},
		{"boards prepare route on a twin without its ports", []string{"boards", "prepare", "--bench", "route", "qemu-arm64"}, "boards prepare: board qemu-arm64: the route benchmark"},
		{"import --rep -3", []string{"import", "--board", "b", "--clock", "1", "--rep", "-3", fixture}, "import: --rep -3: repetitions count from 1"},
		{"import --rep 0", []string{"import", "--board", "b", "--clock", "1", "--rep", "0", fixture}, "import: --rep 0: repetitions count from 1"},
		{"import --table 0", []string{"import", "--board", "b", "--clock", "1", "--table", "0", fixture}, "import: --table 0: tables count from 1"},
		{"import --table past the end", []string{"import", "--board", "b", "--clock", "1", "--table", "2", fixture}, fixture + ": --table 2: it holds 1 benchmark output"},
		{"speed --algs nosuch", []string{"speed", "--algs", "nosuch"}, `speed: unknown algorithm "nosuch"`},
		{"show --raw --transcript", []string{"results", "show", "r", "--raw", "--transcript"}, "results show: --raw prints the benchmark's output alone"},
		{"compare --baseline without a clock by clock", []string{"results", "compare", "--by", "clock", "--board", "b", "--baseline", "b"}, "--by clock --baseline names one of b's clock settings, e.g. --baseline @680"},
		{"compare --boards bad clock", []string{"results", "compare", "--by", "board", "--boards", "a@fast,b"}, `--boards: setting "a@fast": the clock after @ is MHz`},
		{"export -o into a missing directory", []string{"results", "export", "-o", "/nonexistent/dir/x"}, "cannot write /nonexistent/dir/x: directory /nonexistent/dir does not exist"},
		{"export --with-setting, not openwrt", []string{"results", "export", "--format", "csv", "--with-setting"}, "results export: --with-setting goes with --format openwrt"},
		{"export -o into /proc", []string{"results", "export", "-o", "/proc/version"}, "cannot write /proc/version: /proc is in the kernel's proc filesystem, which holds only the kernel's own files"},
		{"export -o a directory", []string{"results", "export", "-o", os.TempDir()}, "cannot write " + os.TempDir() + ": it is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fileStates(t, filepath.Dir(db))
			r := bootbench(t, db, tt.args...)
			oneLine(t, r, 2, tt.says)
			if n := strings.Count(r.stderr, "speed:"); tt.args[0] == "speed" && n != 1 {
				t.Errorf("stderr says speed: %d times: %q", n, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("refused command printed %q", r.stdout)
			}
			sameFiles(t, tt.name, before, fileStates(t, filepath.Dir(db)))
		})
	}
}

// TestImportTables: a forum post holding three openssl speed outputs is
// refused without --table, naming them; --table 2 imports exactly the
// second, keeps its lines as the run's output, and gives the OpenWrt row
// the same output gives alone.
func TestImportTables(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	r := bootbench(t, db, "import", "--board", "desktop", "--new-board", "--clock", "0", forumPost)
	oneLine(t, r, 2, forumPost+" holds 3 benchmark outputs: "+
		"1 at line 3 (openssl 0.9.8k: md4, md5, hmac(md5), …); "+
		"2 at line 99 (openssl 3.0.19: md5, sha1, sha256, …); "+
		"3 at line 132 (openssl 3.0.22: dsa2048-sign, dsa2048-verify, ecdsa-p256-sign, …); import one with --table N")
	if _, err := os.Stat(db); err == nil {
		t.Errorf("a refused import created the store")
	}

	r = bootbench(t, db, "import", "--board", "desktop", "--new-board", "--clock", "0", "--table", "2", forumPost)
	lines := importedLines(t, r.stdout)
	if r.code != 0 || len(lines) != 1 || lines[0].file != forumPost+" table 2" || lines[0].metrics != 58 {
		t.Fatalf("import --table 2: exit %d %s\n%s", r.code, r.stdout, r.stderr)
	}
	post, err := os.ReadFile(forumPost)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(strings.SplitAfter(string(post), "\n")[37:118], "")
	if raw := bootbench(t, db, "results", "show", lines[0].id, "--raw"); raw.code != 0 || raw.stdout != want {
		t.Errorf("show --raw: exit %d, %d bytes; want lines 38-118 of the post (%d bytes)\n%s", raw.code, len(raw.stdout), len(want), raw.stderr)
	}
	if show := bootbench(t, db, "results", "show", lines[0].id); !strings.Contains(show.stdout, "source   import:forum-three-tables.txt table 2 of 3") {
		t.Errorf("show does not say where the run came from:\n%s", show.stdout)
	}
	row := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting")
	recipeRow := bootbench(t, db, "results", "export", "--format", "openwrt")

	alone := filepath.Join(t.TempDir(), "alone.db")
	if r := bootbench(t, alone, "import", "--board", "desktop", "--new-board", "--clock", "0", "../../results/parse/testdata/openssl-3.0.19-speed.txt"); r.code != 0 {
		t.Fatalf("import alone: %s", r.stderr)
	}
	rowAlone := bootbench(t, alone, "results", "export", "--format", "openwrt", "--with-setting")
	if row.code != 0 || row.stdout != rowAlone.stdout {
		t.Errorf("OpenWrt row of table 2:\n%s\nof the output alone:\n%s", row.stdout, rowAlone.stdout)
	}
	recipeAlone := bootbench(t, alone, "results", "export", "--format", "openwrt")
	if recipeRow.code != 0 || recipeRow.stdout == "" || recipeRow.stdout != recipeAlone.stdout {
		t.Errorf("the wiki recipe's row of table 2:\n%s\nof the output alone:\n%s", recipeRow.stdout, recipeAlone.stdout)
	}
	golden(t, "forum-table-2.openwrt", []byte(row.stdout))

	// The same table again is the same output.
	r = bootbench(t, db, "import", "--board", "desktop", "--new-board", "--clock", "0", "--table", "2", forumPost)
	oneLine(t, r, 2, forumPost+" table 2: already imported (same bytes as run "+lines[0].id+")")
	// Another table of the same post is not.
	if r := bootbench(t, db, "import", "--board", "desktop", "--new-board", "--clock", "0", "--table", "3", forumPost); r.code != 0 {
		t.Errorf("import --table 3: exit %d: %s", r.code, r.stderr)
	}
}

// TestImportRepeatedMetrics: output naming a metric twice (two dd runs in
// one capture) is refused like several tables, not with a database error.
func TestImportRepeatedMetrics(t *testing.T) {
	dir := t.TempDir()
	dd := filepath.Join(dir, "dd.txt")
	os.WriteFile(dd, []byte("1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.01 s, 100 MB/s\n1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.02 s, 50 MB/s\n"), 0o644)
	db := filepath.Join(dir, "r.db")
	r := bootbench(t, db, "import", "--board", "b", "--new-board", "--clock", "0", dd)
	oneLine(t, r, 2, dd+" holds 2 benchmark outputs: 1 at line 1 (dd: dd-write); 2 at line 2 (dd: dd-write); import one with --table N")
	r = bootbench(t, db, "import", "--board", "b", "--new-board", "--clock", "0", "--table", "2", dd)
	if r.code != 0 {
		t.Fatalf("import --table 2: %s", r.stderr)
	}
	var e exported
	if err := json.Unmarshal([]byte(bootbench(t, db, "results", "export", "--format", "json").stdout), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Runs) != 1 || len(e.Runs[0].Metrics) != 1 || e.Runs[0].Metrics[0].Value != 1048576/0.02 {
		t.Errorf("stored %+v, want the second dd run's 52428800 B/s", e.Runs)
	}
}

// TestImportMREra: openssl speed -mr output from before 1.1.1 without a
// version line is read in seconds per operation (the wiki row shows 3.0
// RSA signatures a second, not 0.3); output whose unit cannot be told is
// refused, asking for --tool-version.
func TestImportMREra(t *testing.T) {
	dir := t.TempDir()
	derived, err := os.ReadFile("../../results/parse/testdata/openssl-0.9.8k-mr-derived.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, noVersion, _ := strings.Cut(string(derived), "\n")
	mr := filepath.Join(dir, "rb450-mr.txt")
	os.WriteFile(mr, []byte(noVersion), 0o644)
	db := filepath.Join(dir, "r.db")
	if r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", mr); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	row := bootbench(t, db, "results", "export", "--format", "openwrt", "--with-setting").stdout
	if !strings.Contains(row, "| rb450 | 300 | - | 16160430 | 5467140 | 3850580 | 1684140 | 2287620 | 829440 | 3849560 | 3344730 | 2956630 | 3.0 | 108.5 | 11.0 | 9.2 |") {
		t.Errorf("OpenWrt row:\n%s", row)
	}

	unclear := filepath.Join(dir, "dsa-mr.txt")
	os.WriteFile(unclear, []byte("+F3:2:2048:0.000300:0.000300\n"), 0o644)
	r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", unclear)
	oneLine(t, r, 2, unclear+": line 1: no version line and figures that do not tell seconds per operation (openssl before 1.1.1) from operations per second: give the openssl version that printed them (say which with --tool-version, e.g. --tool-version 1.0.2u)")
	r = bootbench(t, db, "import", "--board", "rb450", "--clock", "300", "--tool-version", "1.0.2u", unclear)
	if r.code != 0 {
		t.Fatalf("import --tool-version: %s", r.stderr)
	}
	if show := bootbench(t, db, "results", "list", "--board", "rb450"); strings.Count(show.stdout, "rb450") != 2 {
		t.Errorf("runs:\n%s", show.stdout)
	}

	// A --tool-version the figures contradict is not suggested back.
	r = bootbench(t, db, "import", "--board", "rb450", "--clock", "300", "--tool-version", "3.0.2", mr)
	if r.code != 2 || !strings.Contains(r.stderr, "(--tool-version 3.0.2 did not settle it: is it the version that printed this file?)") || strings.Contains(r.stderr, "say which with --tool-version") {
		t.Errorf("import with a contradicted --tool-version: exit %d\n%s", r.code, r.stderr)
	}
}

// TestShowRaw: the benchmark's output comes back byte for byte.
func TestShowRaw(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		dir := t.TempDir()
		// CRLF, a trailing line without newline and bytes that are not UTF-8
		// must all survive.
		data, err := os.ReadFile(rb450Fixture)
		if err != nil {
			t.Fatal(err)
		}
		capture := append([]byte("\xff\xfe console noise\r\n"), data...)
		capture = append(capture, []byte("[  12.345] reboot: Power down")...)
		f := filepath.Join(dir, "capture.txt")
		os.WriteFile(f, capture, 0o644)
		r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", f)
		lines := importedLines(t, r.stdout)
		if r.code != 0 || len(lines) != 1 {
			t.Fatalf("import: exit %d: %s", r.code, r.stderr)
		}
		raw := bootbench(t, db, "results", "show", lines[0].id, "--raw")
		if raw.code != 0 || raw.stdout != string(capture) || raw.stderr != "" {
			t.Errorf("show --raw: exit %d, %d bytes, stderr %q; want the %d bytes imported", raw.code, len(raw.stdout), raw.stderr, len(capture))
		}
	})
}

// TestCompareSettingsCLI: the seed thread's question, RB450 at 300 MHz
// against RB450G at 680 MHz, while the store also holds RB450G runs at
// 800 MHz: exactly those two settings are compared, in text and JSON.
func TestCompareSettingsCLI(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		for _, imp := range [][]string{
			{"rb450", "300", rb450Fixture},
			{"rb450g", "680", "testdata/openssl-0.9.8k-rb450g-680mhz.txt"},
			{"rb450g", "800", "testdata/openssl-0.9.8k-rb450g-800mhz.txt"},
		} {
			if r := bootbench(t, db, "import", "--board", imp[0], "--clock", imp[1], imp[2]); r.code != 0 {
				t.Fatalf("import %v: %s", imp, r.stderr)
			}
		}
		for _, args := range [][]string{
			{"--boards", "rb450@300,rb450g@680"},
			{"--board", "rb450", "--boards", "rb450g@680"},
			{"--baseline", "rb450@300", "--boards", "rb450g@680"},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				base := append([]string{"results", "compare", "--by", "board"}, args...)
				r := bootbench(t, db, append(base, "--format", "json")...)
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				var c struct {
					Comparisons []struct {
						Baseline, Candidate struct {
							Board    string
							ClockMHz int `json:"clock_mhz"`
							Runs     int
						}
						Metrics []struct {
							Name                string
							Baseline, Candidate float64
						}
					}
				}
				if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
					t.Fatal(err)
				}
				if len(c.Comparisons) != 1 {
					t.Fatalf("%d comparisons, want 1:\n%s", len(c.Comparisons), r.stdout)
				}
				cmp := c.Comparisons[0]
				if cmp.Baseline.Board != "rb450" || cmp.Baseline.ClockMHz != 300 || cmp.Candidate.Board != "rb450g" || cmp.Candidate.ClockMHz != 680 ||
					cmp.Baseline.Runs != 1 || cmp.Candidate.Runs != 1 || len(cmp.Metrics) != 1 ||
					cmp.Metrics[0].Baseline != 3849560 || cmp.Metrics[0].Candidate != 8730280 {
					t.Errorf("compared %+v", cmp)
				}
				txt := bootbench(t, db, base...)
				if txt.code != 0 {
					t.Fatalf("text: exit %d: %s", txt.code, txt.stderr)
				}
				golden(t, "compare-rb450-300-rb450g-680.txt", []byte(txt.stdout))
			})
		}
		// Without a clock, RB450G's two settings are not mixed.
		r := bootbench(t, db, "results", "compare", "--by", "board", "--boards", "rb450,rb450g")
		oneLine(t, r, 2, "rb450g has runs at 680, 800 MHz; pick one clock setting, e.g. rb450g@680")
		// One setting named: the boards not named are candidates at each
		// of their clocks, never a complaint.
		r = bootbench(t, db, "results", "compare", "--by", "board", "--boards", "rb450@300")
		if r.code != 0 || !strings.Contains(r.stdout, "vs rb450g at 680 MHz") || !strings.Contains(r.stdout, "vs rb450g at 800 MHz") {
			t.Errorf("--boards rb450@300: exit %d, stdout %q, stderr %q; want rb450g at 680 and 800 MHz as candidates", r.code, r.stdout, r.stderr)
		}
		// A setting is never compared with itself.
		r = bootbench(t, db, "results", "compare", "--by", "board", "--board", "rb450", "--boards", "rb450@300")
		oneLine(t, r, 2, "nothing to compare: only one setting, rb450@300 (1 run), and it is named twice; name a second setting to compare it with")
	})
}
