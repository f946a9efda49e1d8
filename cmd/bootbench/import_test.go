package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/userenv"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/results/store"
)

// These tests run the bootbench binary TestMain builds; none needs a board,
// root or the virtual bench.

const rb450Fixture = "testdata/openssl-0.9.8k-rb450-300mhz.txt"

// importedRE matches the line import prints once a file's run is committed.
var importedRE = regexp.MustCompile(`^imported (.+) as run (\d{8}-\d{6}-[0-9a-f]{8}) \((\d+) metrics?\)$`)

type importedLine struct {
	file, id string
	metrics  int
}

func importedLines(t *testing.T, stdout string) []importedLine {
	t.Helper()
	var out []importedLine
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		m := importedRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected output line %q", line)
		}
		n, _ := strconv.Atoi(m[3])
		out = append(out, importedLine{m[1], m[2], n})
	}
	return out
}

func openTestStore(t *testing.T, db string) *store.Store {
	t.Helper()
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestImportRB450 imports the published RB450 output: every figure is
// stored with the openssl version that printed it and the bytes as read.
func TestImportRB450(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", rb450Fixture)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		lines := importedLines(t, r.stdout)
		data, err := os.ReadFile(rb450Fixture)
		if err != nil {
			t.Fatal(err)
		}
		want, err := parse.Auto(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 1 || lines[0].file != rb450Fixture || lines[0].metrics != len(want.Metrics) {
			t.Fatalf("output %q: want one line for %s with %d metrics", r.stdout, rb450Fixture, len(want.Metrics))
		}

		s := openTestStore(t, db)
		run, err := s.Run(context.Background(), results.RunID(lines[0].id))
		if err != nil {
			t.Fatal(err)
		}
		if run.Board != "rb450" || run.ClockMHz != 300 || run.Status != results.StatusOK ||
			run.Bench != "openssl" || run.Tool != "openssl" || run.ToolVersion != "0.9.8k" ||
			run.Source != "import:openssl-0.9.8k-rb450-300mhz.txt" || run.InputSHA256 != results.InputSHA256(data) ||
			time.Since(run.Started) > time.Minute || run.StartedFrom != results.StartedImported || string(run.RawOutput) != string(data) {
			t.Errorf("stored run: board %s clock %d status %s bench %s tool %s %s source %s started %v, raw output %d bytes",
				run.Board, run.ClockMHz, run.Status, run.Bench, run.Tool, run.ToolVersion, run.Source, run.Started, len(run.RawOutput))
		}
		got := map[string]results.Metric{}
		for _, m := range run.Metrics {
			got[m.Name] = m
		}
		if len(got) != len(want.Metrics) {
			t.Errorf("%d metrics stored, want %d", len(got), len(want.Metrics))
		}
		for _, m := range want.Metrics {
			if g := got[m.Name]; g.Unit != m.Unit || g.Value != m.Value {
				t.Errorf("metric %s = %v %s, want %v %s", m.Name, g.Value, g.Unit, m.Value, m.Unit)
			}
		}
	})
}

// TestImportRefuses checks that import stores nothing from an invocation it
// refuses, and says why.
func TestImportRefuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("hello\nthis is not a benchmark\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyOf := filepath.Join(dir, "copy.txt")
	data, err := os.ReadFile(rb450Fixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyOf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"import", "--board", "rb450", "--clock", "300"}
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
		stored   int // runs in the store afterwards, starting from one import of the fixture
	}{
		{"again", []string{rb450Fixture}, 2, "already imported (same bytes as run ", 1},
		{"same bytes, other name", []string{copyOf}, 2, "copy.txt: already imported", 1},
		{"bad file after a good one", []string{"testdata/openssl-0.9.8k-rb450g-680mhz.txt", bad}, 2, bad + ": line 1: ", 1},
		{"missing file", []string{filepath.Join(dir, "nope.txt")}, 2, "nope.txt: no such file", 1},
		{"force", []string{"--force", rb450Fixture}, 0, "", 2},
		{"force twice in one go", []string{"--force", rb450Fixture, copyOf}, 0, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "r.db")
			if r := bootbench(t, db, append(base, rb450Fixture)...); r.code != 0 {
				t.Fatalf("first import: exit %d: %s", r.code, r.stderr)
			}
			r := bootbench(t, db, append(base, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want %d containing %q", r.code, r.stderr, tt.code, tt.inStderr)
			}
			if tt.code != 0 && r.stdout != "" {
				t.Errorf("refused import printed %q", r.stdout)
			}
			runs, err := openTestStore(t, db).Runs(context.Background(), results.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != tt.stored {
				t.Errorf("%d runs stored, want %d", len(runs), tt.stored)
			}
		})
	}
}

func TestImportUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"import", "--clock", "300", rb450Fixture}, "--board NAME"},
		{[]string{"import", "--board", "rb450", rb450Fixture}, "--clock MHZ"},
		{[]string{"import", "--board", "rb450", "--clock", "-1", rb450Fixture}, "--clock -1"},
		{[]string{"import", "--board", "rb450", "--clock", "300"}, "at least one FILE"},
		{[]string{"import", "--board", "rb450", "--clock", "300", "--format", "yaml", rb450Fixture}, `unknown format "yaml"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.inStderr) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", r.code, r.stderr, tt.inStderr)
			}
		})
	}
}

// TestImportThenCompare imports the published RB450G figures at 680 and
// 800 MHz and compares them: DESIGN.md's example, end to end.
func TestImportThenCompare(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		for _, clock := range []string{"680", "800"} {
			r := bootbench(t, db, "import", "--board", "rb450g", "--clock", clock,
				"testdata/openssl-0.9.8k-rb450g-"+clock+"mhz.txt")
			if r.code != 0 {
				t.Fatalf("import at %s MHz: exit %d: %s", clock, r.code, r.stderr)
			}
		}
		r := bootbench(t, db, "results", "compare", "--board", "rb450g", "--by", "clock", "--format", "json")
		if r.code != 0 {
			t.Fatalf("compare: exit %d: %s", r.code, r.stderr)
		}
		var c struct {
			Board, By string
			Baseline  struct {
				ClockMHz int `json:"clock_mhz"`
			}
			Comparisons []struct {
				Candidate struct {
					ClockMHz int `json:"clock_mhz"`
				}
				ClockRatio float64 `json:"clock_ratio"`
				Metrics    []map[string]any
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
			t.Fatalf("compare JSON: %v\n%s", err, r.stdout)
		}
		if c.Board != "rb450g" || c.By != "clock" || c.Baseline.ClockMHz != 680 || len(c.Comparisons) != 1 ||
			c.Comparisons[0].Candidate.ClockMHz != 800 || c.Comparisons[0].ClockRatio != 1.1765 || len(c.Comparisons[0].Metrics) != 1 {
			t.Fatalf("compare JSON:\n%s", r.stdout)
		}
		m := c.Comparisons[0].Metrics[0]
		want := map[string]any{
			"name": "aes-128-cbc@1024", "unit": "B/s", "baseline": 8730280.0, "candidate": 10272090.0,
			"n_baseline": 1.0, "n_candidate": 1.0, "ratio": 1.1766, "scaling_efficiency": 1.0001,
			"ci_low": nil, "ci_high": nil, "p_value": nil,
		}
		for k, v := range want {
			if g, ok := m[k]; !ok || g != v {
				t.Errorf("%s = %v, want %v", k, g, v)
			}
		}
		if v, _ := m["verdict"].(string); !strings.HasPrefix(v, "n<4: 1 vs 1 runs") {
			t.Errorf("verdict %q: want n<4 saying there is one run a side", v)
		}

		r = bootbench(t, db, "results", "compare", "--board", "rb450g", "--by", "clock")
		if r.code != 0 || !strings.Contains(r.stdout, "rb450g: 680 MHz (baseline, 1 run) vs 800 MHz (1 run), clock ratio 1.1765") {
			t.Errorf("compare text: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// The headline comes first, in text and in JSON: 10272.09/8730.28
		// is ×1.177 for a clock ×1.176 (800/680).
		const headline = "rb450g 800 vs 680 MHz: clock ×1.176, throughput ×1.177 (median of 1 metric, efficiency 1.000, 1.000–1.000): scales with the clock"
		if first, _, _ := strings.Cut(r.stdout, "\n"); first != headline {
			t.Errorf("compare text starts %q, want %q", first, headline)
		}
		j := bootbench(t, db, "results", "compare", "--board", "rb450g", "--by", "clock", "--format", "json")
		if !strings.Contains(j.stdout, `"headline": "`+headline+`"`) {
			t.Errorf("compare JSON has no headline %q:\n%s", headline, j.stdout)
		}
	})
}

func TestCompareUsage(t *testing.T) {
	db := emptyStore(t)
	tests := []struct {
		args     []string
		inStderr string
	}{
		{[]string{"--board", "rb450g"}, "--by clock or --by board"},
		{[]string{"--by", "clock"}, "--board NAME"},
		{[]string{"--by", "board"}, "--boards A,B"},
		{[]string{"--by", "clock", "--board", "rb450g", "--boards", "a,b"}, "go with --by board"},
		{[]string{"--by", "clock", "--board", "rb450g", "--format", "csv"}, `unknown format "csv"`},
		{[]string{"--by", "clock", "--board", "rb450g"}, "nothing to compare"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, append([]string{"results", "compare"}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want 2 containing %q", r.code, r.stderr, tt.inStderr)
			}
		})
	}
}

// TestImportSurvivesKill kills an import of many files with SIGKILL at a
// random moment: every run it reported as stored must be there in full, and
// the store must pass its integrity check and take further imports.
func TestImportSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	fixture, err := os.ReadFile(rb450Fixture)
	if err != nil {
		t.Fatal(err)
	}
	// Distinct bytes per file, or import would refuse them as the same
	// output: a leading line the parser skips.
	const nFiles = 300
	files := make([]string, nFiles)
	contents := map[string][]byte{}
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("out-%03d.txt", i))
		data := append([]byte(fmt.Sprintf("# capture %d\n", i)), fixture...)
		if err := os.WriteFile(files[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
		contents[files[i]] = data
	}
	// Opening the store first keeps schema creation out of the race, so
	// the kill lands among the imports.
	openTestStore(t, db).Close()

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	killAfter := 1 + rng.IntN(40)                             // lines seen before the kill
	delay := time.Duration(rng.IntN(3000)) * time.Microsecond // and then a little more

	cmd := userenv.Command(nil, bootbenchBin, append([]string{"import", "--board", "rb450", "--clock", "300", "--db", db}, files...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var reported []importedLine
	sc := bufio.NewScanner(stdout)
	for len(reported) < killAfter && sc.Scan() {
		reported = append(reported, importedLines(t, sc.Text())...)
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Lines written before the kill are promises too: read them all,
	// through the same scanner, which may hold lines it read ahead.
	for sc.Scan() {
		reported = append(reported, importedLines(t, sc.Text())...)
	}
	werr := cmd.Wait()
	if len(reported) == nFiles {
		t.Logf("import finished before the kill (%v); the store is still checked", werr)
	} else if werr == nil {
		t.Fatalf("import was not killed; stderr: %s", stderr.String())
	}
	t.Logf("killed after %d of %d files reported (%v)", len(reported), nFiles, werr)

	ctx := context.Background()
	s := openTestStore(t, db)
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, results.Filter{WithTranscript: true})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[results.RunID]results.Run{}
	for _, r := range runs {
		stored[r.ID] = r
	}
	for _, rep := range reported {
		r, ok := stored[results.RunID(rep.id)]
		switch {
		case !ok:
			t.Errorf("%s: reported as run %s, not in the store", rep.file, rep.id)
		case len(r.Metrics) != rep.metrics || rep.metrics == 0:
			t.Errorf("%s: run %s has %d metrics, reported %d", rep.file, rep.id, len(r.Metrics), rep.metrics)
		case string(r.RawOutput) != string(contents[rep.file]) || r.InputSHA256 != results.InputSHA256(contents[rep.file]):
			t.Errorf("%s: run %s does not hold the file's bytes", rep.file, rep.id)
		}
	}
	// At most the batch in flight may have committed without being
	// reported (its lines are printed once it is committed: a kill among
	// them cuts them short); a run is never stored without its metrics.
	if len(runs) < len(reported) || len(runs) > len(reported)+importBatch {
		t.Errorf("%d runs stored, %d reported", len(runs), len(reported))
	}
	for _, r := range runs {
		if len(r.Metrics) == 0 {
			t.Errorf("run %s stored without metrics", r.ID)
		}
	}
	s.Close()

	// The store takes further imports.
	more := filepath.Join(dir, "more.txt")
	if err := os.WriteFile(more, append([]byte("# after the kill\n"), fixture...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", more); r.code != 0 {
		t.Fatalf("import after the kill: exit %d: %s", r.code, r.stderr)
	}
	s = openTestStore(t, db)
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	if after, err := s.Runs(ctx, results.Filter{}); err != nil || len(after) != len(runs)+1 {
		t.Errorf("after one more import: %d runs, %v; want %d", len(after), err, len(runs)+1)
	}
}

// TestImportUnknownBoard: a board name that is neither a profile nor in
// the store (a typo) is refused in one line with the nearest name, and
// stores nothing; --new-board takes it, and from then on it is known.
func TestImportUnknownBoard(t *testing.T) {
	const g680 = "testdata/openssl-0.9.8k-rb450g-680mhz.txt"
	db := filepath.Join(t.TempDir(), "r.db")
	r := bootbench(t, db, "import", "--board", "rb450gg", "--clock", "680", g680)
	oneLine(t, r, 2, `import: board "rb450gg" is neither a board profile nor in results store `+db+` (did you mean rb450g?); nothing imported (add --new-board`)
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused import created the store")
	}
	steps := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--board", "rb450g", "--clock", "680", g680}, 0, ""}, // a profile
		{[]string{"--board", "desktop", "--clock", "0", rb450Fixture}, 2, `board "desktop" is neither`},
		{[]string{"--board", "desktop", "--clock", "0", "--new-board", rb450Fixture}, 0, ""},
		{[]string{"--board", "desktop", "--clock", "0", "--force", rb450Fixture}, 0, ""}, // in the store now
		{[]string{"--board", "deskop", "--clock", "0", "--force", rb450Fixture}, 2, "(did you mean desktop?)"},
	}
	for _, st := range steps {
		r := bootbench(t, db, append([]string{"import"}, st.args...)...)
		if st.code != 0 {
			oneLine(t, r, st.code, st.says)
		} else if r.code != 0 {
			t.Errorf("import %v: exit %d: %s", st.args, r.code, r.stderr)
		}
	}
	runs, err := openTestStore(t, db).Runs(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Errorf("%d runs stored, want 3", len(runs))
	}
}

// TestImportClockHeldToModel: import holds --clock to the board model's
// clocks as run does (--force stores it anyway), and --clock 0 is the
// model's default clock, stored as such, not a setting of its own.
func TestImportClockHeldToModel(t *testing.T) {
	refused := []struct {
		board, clock, says string
	}{
		{"rb450g", "99999999", "import: board model rb450g has no clock setting 99999999 MHz (settings: 680, 800 MHz); nothing imported (--force stores it at 99999999 MHz anyway)"},
		{"rpi4b", "2500", "board model rpi4b: 2500 MHz is above 2100 MHz, the highest clock its firmware takes"},
		{"wrt54g-v3", "5000", "board model wrt54g-v3 has no clock setting 5000 MHz (settings: 192, 200, 216, 228, 240, 252, 264, 272, 280, 300 MHz)"},
		{"tl-mr3420", "5000", "board model tl-mr3420 runs at one clock, 400 MHz; it has no clock settings"},
	}
	for _, tt := range refused {
		db := filepath.Join(t.TempDir(), "r.db")
		r := bootbench(t, db, "import", "--board", tt.board, "--clock", tt.clock, rb450Fixture)
		oneLine(t, r, 2, tt.says)
		if _, err := os.Stat(db); err == nil {
			t.Errorf("%s at %s: a refused import created the store", tt.board, tt.clock)
		}
		if r := bootbench(t, db, "import", "--board", tt.board, "--clock", tt.clock, "--force", rb450Fixture); r.code != 0 {
			t.Errorf("%s at %s with --force: exit %d: %s", tt.board, tt.clock, r.code, r.stderr)
		}
	}
	stored := []struct {
		board, clock string
		want         int
	}{
		{"rb450g", "0", 680},    // its default clock
		{"rb450", "0", 300},     // its stock clock, the one it lists
		{"rpi4b", "2000", 2000}, // above the safe 1800, which the firmware takes with over_voltage
		{"rb450", "300", 300},
	}
	for _, tt := range stored {
		db := filepath.Join(t.TempDir(), "r.db")
		if r := bootbench(t, db, "import", "--board", tt.board, "--clock", tt.clock, rb450Fixture); r.code != 0 {
			t.Fatalf("%s at %s: exit %d: %s", tt.board, tt.clock, r.code, r.stderr)
		}
		var e struct {
			Runs []struct {
				ClockMHz int `json:"clock_mhz"`
			} `json:"runs"`
		}
		out := bootbench(t, db, "results", "export", "--format", "json").stdout
		if err := json.Unmarshal([]byte(out), &e); err != nil || len(e.Runs) != 1 || e.Runs[0].ClockMHz != tt.want {
			t.Errorf("%s --clock %s: stored %s, want clock_mhz %d", tt.board, tt.clock, out, tt.want)
		}
	}
}

// TestUnknownBoardNamed: a reading command given a board that is neither
// a board profile nor in the store says so with the nearest name, exit 2,
// as import does, instead of printing an empty listing with exit 0; run
// suggests the model a typo is nearest to.
func TestUnknownBoardNamed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if r := bootbench(t, db, "import", "--board", "my-rb", "--new-board", "--clock", "300", rb450Fixture); r.code != 0 {
		t.Fatal(r.stderr)
	}
	not := `board "rb450gg" is neither a board profile nor in results store ` + db + ` (did you mean rb450g?)`
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"results", "list", "--board", "rb450gg"}, "results list: " + not},
		{[]string{"results", "export", "--format", "csv", "--board", "rb450gg"}, "results export: " + not},
		{[]string{"results", "export", "--format", "html", "--board", "rb450gg", "-o", filepath.Join(t.TempDir(), "r.html")}, not},
		{[]string{"results", "compare", "--by", "clock", "--board", "rb450gg"}, "results compare: " + not},
		{[]string{"results", "compare", "--by", "board", "--boards", "my-rb@300,my-rc@300"}, `board "my-rc" is neither a board profile nor in results store ` + db + ` (did you mean my-rb?)`},
		{[]string{"results", "compare", "--by", "board", "--baseline", "rb450gg@680", "--boards", "my-rb"}, not},
		{[]string{"run", "--board", "rb450gg"}, `unknown board "rb450gg" (did you mean rb450g?): virtual boards:`},
	} {
		oneLine(t, bootbench(t, db, tt.args...), 2, tt.says)
	}
	// A board the store holds, and a model with no runs, are no typos.
	for _, args := range [][]string{{"results", "list", "--board", "my-rb"}, {"results", "list", "--board", "rb450g"}} {
		if r := bootbench(t, db, args...); r.code != 0 {
			t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
}

// TestImportedRunAnswers: what results shows of imported runs says what
// is known: the start time is the output's own where it has one (iperf3
// -J's), else the import's, labelled so, never the file's; no empty
// kernel and image lines; a version the output did not print said so;
// bootbench speed's output is bench speed, as run stores it; the OpenWrt
// recipe leaves out, and names, a run it reads no figure from; a run is
// found by the start of its id.
func TestImportedRunAnswers(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	dir := t.TempDir()
	copyOld := func(src, name string) string {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC) // a file's time says nothing of its run
		os.Chtimes(p, old, old)
		return p
	}
	speedOut := bootbench(t, db, "speed", "--algs", "md5", "--seconds", "0.01")
	if speedOut.code != 0 {
		t.Fatal(speedOut.stderr)
	}
	os.WriteFile(filepath.Join(dir, "speed.txt"), []byte(speedOut.stdout), 0o644)
	for _, f := range []string{copyOld(rb450Fixture, "rb450.txt"), copyOld("../../results/parse/testdata/iperf3-3.12-json.txt", "iperf3.json"),
		copyOld("../../results/parse/testdata/openssl-3.0.22-mr.txt", "mr.txt"), filepath.Join(dir, "speed.txt")} {
		if r := bootbench(t, db, "import", "--board", "rb450", "--clock", "300", f); r.code != 0 {
			t.Fatalf("import %s: %s", f, r.stderr)
		}
	}
	list := bootbench(t, db, "results", "list").stdout
	if strings.Contains(list, "2020-01-02") {
		t.Errorf("a run is listed with its file's time:\n%s", list)
	}
	ids := map[string]string{}
	for _, l := range strings.Split(list, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			show := bootbench(t, db, "results", "show", f[0]).stdout
			src := regexp.MustCompile(`source   import:(\S+)`).FindStringSubmatch(show)[1]
			ids[src] = f[0]
			if strings.Contains(show, "kernel   \n") || strings.Contains(show, "image    \n") {
				t.Errorf("%s: empty kernel or image line:\n%s", src, show)
			}
		}
	}
	for _, tt := range []struct{ file, want string }{
		{"rb450.txt", "started  " + time.Now().UTC().Format("2006-01-02")},
		{"rb450.txt", "(when imported: the output does not say when it ran)"},
		{"iperf3.json", "started  2026-11-30 08:28:14Z (as the output says)"},
		{"mr.txt", "bench    openssl (openssl, version not in the output)"},
		{"speed.txt", "bench    speed (bootbench-speed 0.1.0)"},
	} {
		// By the start of its id: the date and time results list shows first.
		show := bootbench(t, db, "results", "show", ids[tt.file][:20])
		if show.code != 0 || !strings.Contains(show.stdout, tt.want) {
			t.Errorf("results show %s (%s): exit %d %s\n%s\nwant %q", ids[tt.file][:20], tt.file, show.code, show.stderr, show.stdout, tt.want)
		}
	}
	if !strings.Contains(list, "(imported)") {
		t.Errorf("results list does not say which start times are the import's:\n%s", list)
	}
	ow := bootbench(t, db, "results", "export", "--format", "openwrt")
	if strings.Contains(ow.stdout, "|   |   |") || !strings.Contains(ow.stderr, "run "+ids["mr.txt"]+" left out: the OpenWrt recipe reads no figure from its output") {
		t.Errorf("openwrt export of an -mr run: stdout %q stderr %q", ow.stdout, ow.stderr)
	}
	oneLine(t, bootbench(t, db, "results", "show", "2"), 2, `results show: "2" starts several runs' ids`)
	oneLine(t, bootbench(t, db, "tftp", "--root", filepath.Join(dir, "nonexistent"), "--listen", "127.0.0.1:6969"), 2, "does not exist")
}
