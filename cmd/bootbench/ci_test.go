package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/junitxsd"
)

// TestCIBadBaseline: a baseline that cannot be used stops ci with exit 2
// and one line, before any board is booted.
func TestCIBadBaseline(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	malformed := filepath.Join(dir, "malformed.json")
	os.WriteFile(malformed, []byte(`{"runs": [{"id": "x"`), 0o644)
	notExport := filepath.Join(dir, "other.json")
	os.WriteFile(notExport, []byte(`{"hello": 1}`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"runs": []}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-regression", "3%"}, "--baseline is required"},
		{[]string{"--baseline", filepath.Join(dir, "missing.json"), "--max-regression", "3%"}, "no such file, and not a selector"},
		{[]string{"--baseline", malformed, "--max-regression", "3%"}, "not a bootbench JSON export"},
		{[]string{"--baseline", notExport, "--max-regression", "3%"}, `no "runs" list`},
		{[]string{"--baseline", empty, "--max-regression", "3%"}, "holds no runs"},
		{[]string{"--baseline", "board=qemu-x86_64", "--max-regression", "3%"}, "needs board=NAME and clock=MHZ"},
		{[]string{"--baseline", "board=qemu-x86_64,clock=1000,colour=red", "--max-regression", "3%"}, "unknown key"},
		{[]string{"--baseline", "board=qemu-x86_64,clock=1000", "--max-regression", "3%"}, "selects no ok runs in the store"},
		{[]string{"--baseline", "board=qemu-x86_64,clock=1000MHz", "--max-regression", "3%"}, "selects no ok runs in the store"},
		{[]string{"--baseline", "board=qemu-x86_64,clock=fast", "--max-regression", "3%"}, `clock: "fast" is not a clock in MHz`},
		{[]string{"--baseline", empty}, "--max-regression is required"},
		{[]string{"--baseline", empty, "--max-regression", "lots"}, `--max-regression "lots"`},
		{[]string{"--baseline", empty, "--max-regression", "3%", "--clock", "1000,500"}, "one --clock at a time"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, append([]string{"ci", "--board", "qemu-x86_64"}, tt.args...)...)
			if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, "power ") {
				t.Error("a board was booted")
			}
		})
	}
}

// TestE2ECI is the CI job on an attached board: a baseline of 4 runs; ci
// of one run against it, chosen from the store, passes without a p-value
// (too few runs); ci of 4 runs at half the clock against the exported
// baseline fails, naming every metric in valid JUnit. Nine boots of the
// quick suite: the verdicts' statistics are the gate package's unit tests.
func TestE2ECI(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	ci := func(args ...string) result {
		t.Helper()
		return bootbench(t, db, append(append([]string{"ci", "--board", "qemu-x86_64", "--max-regression", "3%"}, args...), quickSuite...)...)
	}
	if r := bootbench(t, db, append([]string{"run", "--board", "qemu-x86_64", "--reps", "4"}, quickSuite...)...); r.code != 0 {
		t.Fatalf("baseline runs: exit %d\n%s", r.code, r.stderr)
	}
	exp := bootbench(t, db, "results", "export", "--format", "json", "--board", "qemu-x86_64", "--clock", "1000")
	base := filepath.Join(dir, "base.json")
	if exp.code != 0 || os.WriteFile(base, []byte(exp.stdout), 0o644) != nil {
		t.Fatalf("export: %d %s", exp.code, exp.stderr)
	}

	// The store selector is the same baseline.
	pass := filepath.Join(dir, "pass.xml")
	r := ci("--reps", "1", "--baseline", "board=qemu-x86_64,clock=1000,bench=speed", "--junit", pass)
	if r.code != 0 || !strings.Contains(r.stdout, "without a p-value") {
		t.Fatalf("ci of 1 run against the store's 4: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	checkJUnit(t, pass, 0)

	fail := filepath.Join(dir, "fail.xml")
	summary := filepath.Join(dir, "summary.md")
	r = ci("--reps", "4", "--baseline", base, "--clock", "500", "--junit", fail, "--summary", summary)
	if r.code != 1 {
		t.Fatalf("ci at half the clock: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// Every throughput metric of the suite halves with the clock.
	var throughput []string
	for _, l := range strings.Split(exp.stdout, "\n") {
		if strings.Contains(l, `"name": "`) && strings.Contains(l, "@") && !slices.Contains(throughput, strings.Split(l, `"`)[3]) {
			throughput = append(throughput, strings.Split(l, `"`)[3])
		}
	}
	if len(throughput) < 12 {
		t.Fatalf("baseline has %d throughput metrics, want the quick suite's 12", len(throughput))
	}
	failed := checkJUnit(t, fail, len(throughput))
	for _, name := range throughput {
		if !failed[name] {
			t.Errorf("JUnit has no failure for %s", name)
		}
	}
	md, _ := os.ReadFile(summary)
	if !bytes.Contains(md, []byte("**failed**")) || !bytes.Contains(md, []byte("metrics regressed")) {
		t.Errorf("summary:\n%s", md)
	}
}

// checkJUnit validates a JUnit file against the schema (junitxsd) and
// returns the testcases that failed; it wants at least minFailures.
func checkJUnit(t *testing.T, path string, minFailures int) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := junitxsd.Check(b); err != nil {
		t.Errorf("%s is not valid JUnit: %v", path, err)
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	failed := map[string]bool{}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "qemu-x86_64" {
		t.Fatalf("%s: suites %+v", path, doc.Suites)
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Name] = true
		}
	}
	if len(failed) < minFailures || (minFailures == 0 && len(failed) > 0) || doc.Suites[0].Failures != len(failed) {
		t.Errorf("%s: %d failures (attribute %d), want at least %d:\n%s", path, len(failed), doc.Suites[0].Failures, minFailures, b)
	}
	return failed
}

// markerBench writes an inventory whose one board, pc1, is switched on by
// a command that writes marker: a check that must come before power-on
// holds when marker never appears.
func markerBench(t *testing.T) (inventory, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "powered-on")
	inv := `bench:
  interface: bbmarker0
  address: 198.18.5.1/24
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:30"
    address: 198.18.5.30
    console: ` + filepath.Join(dir, "ttyUSB-none") + `
    power: {driver: command, on: "touch ` + marker + `", off: "true"}
`
	inventory = filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(inventory, []byte(inv), 0o644); err != nil {
		t.Fatal(err)
	}
	return inventory, marker
}

// TestRefusedBeforePowerOn: what the host can check is checked before the
// board is switched on (its power command would write the marker): a
// baseline of another benchmark than --bench (it was found only after the
// boots), an algorithm the benchmark does not have, and a test length
// that is not more than 0 (it became the default); speed refuses the
// length too.
func TestRefusedBeforePowerOn(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if r := bootbench(t, db, "import", "--board", "rb450g", "--clock", "680", "testdata/openssl-0.9.8k-rb450g-680mhz.txt"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	inv, marker := markerBench(t)
	board := []string{"--inventory", inv, "--board", "pc1"}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{append([]string{"ci", "--baseline", "board=rb450g,clock=680", "--max-regression", "3%", "--bench", "speed"}, board...),
			"ci: baseline board=rb450g,clock=680 is of bench openssl (openssl 0.9.8k), and --bench is speed: compare like with like"},
		{append([]string{"run", "--algs", "md2"}, board...), `run: --algs: bench speed has no algorithm "md2" (did you mean md5?)`},
		{append([]string{"run", "--bench", "openssl", "--algs", "sha265"}, board...), `bench openssl has no algorithm "sha265" (did you mean sha256?)`},
		{append([]string{"ci", "--baseline", "board=rb450g,clock=680", "--max-regression", "3%", "--bench", "openssl", "--algs", "md2,aes-128-cbx"}, board...), `ci: --algs: bench openssl has no algorithm "aes-128-cbx"`},
		{append([]string{"run", "--seconds", "0"}, board...), "run: --seconds 0: give the seconds per test, more than 0"},
		{append([]string{"run", "--seconds", "-1"}, board...), "run: --seconds -1: give the seconds per test, more than 0"},
		{append([]string{"ci", "--baseline", "board=rb450g,clock=680", "--max-regression", "3%", "--seconds", "0"}, board...), "ci: --seconds 0"},
		{[]string{"speed", "--seconds", "0"}, "speed: --seconds 0: give the seconds per test, more than 0"},
		{[]string{"speed", "--seconds", "-1"}, "speed: --seconds -1"},
	} {
		t.Run(strings.Join(tt.args[:3], " "), func(t *testing.T) {
			oneLine(t, bootbench(t, db, tt.args...), 2, tt.says)
			if _, err := os.Stat(marker); err == nil {
				os.Remove(marker)
				t.Errorf("%v: the board was switched on before the refusal", tt.args)
			}
		})
	}
}
