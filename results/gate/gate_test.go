package gate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/junitxsd"
	"github.com/bootbench/bootbench/results"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runs makes n ok runs of board at clock whose metrics scale with factor
// (and a little jitter, so the U test has ranks to work with).
func runs(board string, clock boards.MHz, n int, factor float64, prefix string) []results.Run {
	var out []results.Run
	for i := 0; i < n; i++ {
		j := 1 + float64(i)*0.001
		out = append(out, results.Run{
			ID: results.RunID(fmt.Sprintf("%s-%d", prefix, i)), Board: board, ClockMHz: clock, Status: results.StatusOK,
			Bench: "speed", Tool: "bootbench-speed", ToolVersion: "0.1.0",
			Metrics: []results.Metric{
				{Name: "md5@1024", Unit: "B/s", Value: 88_000_000 * factor * j},
				{Name: "sha256@1024", Unit: "B/s", Value: 11_600_000 * factor * j},
				{Name: "rsa2048-sign", Unit: "op/s", Value: 120 * j},
			},
		})
	}
	return out
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name      string
		base      []results.Run
		cand      []results.Run
		opts      Options
		regressed []string // the metrics that must fail
		noStats   bool
	}{
		{"same speed passes", runs("b", 1000, 4, 1, "a"), runs("b", 1000, 4, 1, "c"), Options{MaxRegression: 0.03}, nil, false},
		{"half speed fails every scaling metric", runs("b", 1000, 4, 1, "a"), runs("b", 500, 4, 0.5, "c"), Options{MaxRegression: 0.03}, []string{"md5@1024", "sha256@1024"}, false},
		{"2 % slower is within 3 %", runs("b", 1000, 4, 1, "a"), runs("b", 1000, 4, 0.98, "c"), Options{MaxRegression: 0.03}, nil, false},
		{"faster never fails", runs("b", 1000, 4, 1, "a"), runs("b", 1000, 4, 1.5, "c"), Options{MaxRegression: 0.03}, nil, false},
		{"few runs: the fraction alone decides", runs("b", 1000, 1, 1, "a"), runs("b", 1000, 2, 0.9, "c"), Options{MaxRegression: 0.03}, []string{"md5@1024", "sha256@1024"}, true},
		{"metrics selects", runs("b", 1000, 4, 1, "a"), runs("b", 500, 4, 0.5, "c"), Options{MaxRegression: 0.03, Metrics: []string{"sha*"}}, []string{"sha256@1024"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Judge(tt.base, tt.cand, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rep.Regressions() {
				got = append(got, v.Name)
			}
			if !slices.Equal(got, tt.regressed) || rep.NoStatistics != tt.noStats || rep.Regressed() != (len(tt.regressed) > 0) {
				t.Errorf("regressed %v (no statistics %v), want %v (%v)", got, rep.NoStatistics, tt.regressed, tt.noStats)
			}
			for _, v := range rep.Regressions() {
				if _, ok := v.PValue.Float(); ok == tt.noStats {
					t.Errorf("%s: p-value present %v with no statistics %v", v.Name, ok, tt.noStats)
				}
			}
		})
	}
}

func TestJudgeRefuses(t *testing.T) {
	openssl := runs("b", 1000, 4, 1, "c")
	for i := range openssl {
		openssl[i].Bench, openssl[i].Tool, openssl[i].ToolVersion = "openssl", "openssl", "3.0.22"
	}
	mixed := append(runs("b", 1000, 2, 1, "a"), runs("b", 500, 2, 1, "x")...)
	failed := []results.Run{{ID: "f", Board: "b", Status: results.StatusFailed}}
	tests := []struct {
		name       string
		base, cand []results.Run
		opts       Options
		want       string
	}{
		{"no baseline", failed, runs("b", 1000, 4, 1, "c"), Options{}, "the baseline has no ok runs"},
		{"other benchmark", runs("b", 1000, 4, 1, "a"), openssl, Options{}, "compare like with like"},
		{"baseline of two clocks", mixed, runs("b", 1000, 4, 1, "c"), Options{}, "holds clocks 1000 and 500 MHz"},
		{"glob that matches nothing", runs("b", 1000, 4, 1, "a"), runs("b", 1000, 4, 1, "c"), Options{Metrics: []string{"aes*"}}, `--metrics "aes*" matches no metric`},
		{"bad glob", runs("b", 1000, 4, 1, "a"), runs("b", 1000, 4, 1, "c"), Options{Metrics: []string{"[x"}}, "syntax error"},
	}
	for _, tt := range tests {
		if _, err := Judge(tt.base, tt.cand, tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestFailedRunsFail: a run that gave no result fails the job, with or
// without a regression.
func TestFailedRunsFail(t *testing.T) {
	cand := append(runs("b", 1000, 3, 1, "c"), results.Run{ID: "f1", Board: "b", Status: results.StatusFailed, Reason: "boot-timeout: no hello"})
	rep, err := Judge(runs("b", 1000, 4, 1, "a"), cand, Options{MaxRegression: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Regressed() || len(rep.Regressions()) != 0 || len(rep.Failed) != 1 {
		t.Errorf("regressed %v, %d regressions, %d failed", rep.Regressed(), len(rep.Regressions()), len(rep.Failed))
	}
	none, _ := Judge(runs("b", 1000, 4, 1, "a"), []results.Run{cand[3]}, Options{})
	if !none.Regressed() {
		t.Error("no ok run at all passed")
	}
}

// TestThrottledRunFails: a throttled run's figures are not its clock's:
// the job fails on it as on a run that gave no result, saying why.
func TestThrottledRunFails(t *testing.T) {
	hot := runs("b", 1000, 1, 1, "h")[0]
	hot.ID, hot.Status = "t1", results.StatusThrottled
	hot.Throttle = &results.Throttle{Clock: &results.ClockDrop{AskedMHz: 1000, LowestMHz: 600, AtMS: 3000}}
	rep, err := Judge(runs("b", 1000, 4, 1, "a"), append(runs("b", 1000, 4, 1, "c"), hot), Options{MaxRegression: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Regressed() || len(rep.Failed) != 1 || rep.Candidate.Runs != 4 {
		t.Fatalf("regressed %v, %d failed, %d candidate runs", rep.Regressed(), len(rep.Failed), rep.Candidate.Runs)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if want := "- run `t1` throttled: the clock fell to 600 MHz (1000 MHz asked) 3.0 s into the benchmark"; !strings.Contains(md.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, md.String())
	}
}

// TestFailedRunsKeepTheirClock: when no run gave a result, the report
// still names the clock they were asked at (ci --clock 680), never "the
// default clock" or 0.
func TestFailedRunsKeepTheirClock(t *testing.T) {
	failed := []results.Run{
		{ID: "f1", Board: "rb450g", ClockMHz: 680, Bench: "openssl", Status: results.StatusFailed, Reason: "boot-timeout: no hello"},
		{ID: "f2", Board: "rb450g", ClockMHz: 680, Bench: "openssl", Status: results.StatusFailed, Reason: "boot-timeout: no hello"},
	}
	rep, err := Judge(runs("rb450g", 680, 4, 1, "a"), failed, Options{MaxRegression: 0.03, BaselineName: "base.json"})
	if err != nil {
		t.Fatal(err)
	}
	var md, junit bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); strings.Contains(s, "default clock") || !strings.Contains(s, "openssl at 680 MHz, 0 new run(s)") {
		t.Errorf("summary does not name 680 MHz:\n%s", s)
	}
	if s := junit.String(); !strings.Contains(s, `name="candidate_clock_mhz" value="680"`) {
		t.Errorf("JUnit does not say candidate_clock_mhz=680:\n%s", s)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to accept):\n%s", name, got)
	}
}

func reportForOutput(t *testing.T) *Report {
	cand := append(runs("qemu-x86_64", 500, 4, 0.5, "c"), results.Run{ID: "20261201-000000-0000dead", Board: "qemu-x86_64", Status: results.StatusFailed, Reason: "boot-timeout: no hello from the board within 180s"})
	rep, err := Judge(runs("qemu-x86_64", 1000, 4, 1, "a"), cand, Options{MaxRegression: 0.03, BaselineName: "base.json"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, reportForOutput(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml", b.Bytes())
	if err := junitxsd.Check(b.Bytes()); err != nil {
		t.Errorf("not valid JUnit: %v", err)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, reportForOutput(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", b.Bytes())
}

// TestSchemaCheckerRejects keeps junitxsd.Check honest: each document
// breaks one rule of the schema.
func TestSchemaCheckerRejects(t *testing.T) {
	for _, doc := range []string{
		`<testsuites><testcase name="x"/></testsuites>`,
		`<testsuites><testsuite name="b" tests="1" failures="0"><testcase name="x"/></testsuite></testsuites>`,
		`<testsuites><testsuite name="b" tests="1" failures="0" errors="0"><testcase classname="c"/></testsuite></testsuites>`,
		`<testsuites><testsuite name="b" tests="1" failures="0" errors="0" time="a lot"/></testsuites>`,
		`<testsuites><testsuite name="b" tests="1" failures="0" errors="0"><testcase name="x"><oops/></testcase></testsuite></testsuites>`,
		`<testsuites><testsuite name="b" tests="1" failures="0" errors="0"><properties><property name="a"/></properties></testsuite></testsuites>`,
		`<testsuites colour="red"/>`,
	} {
		if err := junitxsd.Check([]byte(doc)); err == nil {
			t.Errorf("accepted %s", doc)
		}
	}
}

// scattered makes ok runs of board b whose md5 figure is 88 MB/s × factor
// × each of spread's factors in turn (one run each), and whose sha256 is
// steady at 11.6 MB/s × factor.
func scattered(factor float64, prefix string, spread ...float64) []results.Run {
	var out []results.Run
	for i, s := range spread {
		j := 1 + float64(i%3)*0.0005
		out = append(out, results.Run{
			ID: results.RunID(fmt.Sprintf("%s-%d", prefix, i)), Board: "b", ClockMHz: 1000, Status: results.StatusOK,
			Bench: "speed", Tool: "bootbench-speed", ToolVersion: "0.1.0",
			Metrics: []results.Metric{
				{Name: "md5@1024", Unit: "B/s", Value: 88_000_000 * factor * s},
				{Name: "sha256@1024", Unit: "B/s", Value: 11_600_000 * factor * j},
			},
		})
	}
	return out
}

// noise is a board's scatter, ±4 % and more, run after run.
var noise = []float64{1.04, 0.97, 1.01, 0.95, 1.03, 0.99, 1.05, 0.96}

// TestJudgeByInterval is the gate's rule: a regression only when the
// interval of the ratio lies wholly beyond the allowed fraction; one that
// straddles it is undecided, and passes; each decided verdict says at how
// many runs it was.
func TestJudgeByInterval(t *testing.T) {
	base := scattered(1, "a", noise...)
	tests := []struct {
		name      string
		cand      []results.Run
		max       float64
		regressed []string
		undecided []string
		decidedAt map[string]int
		passes    bool
	}{
		{"3 % slower on a noisy board, 5 % allowed: undecided, passes", scattered(0.97, "c", noise[3:]...), 0.05,
			nil, []string{"md5@1024"}, map[string]int{"sha256@1024": 4}, true},
		{"10 % slower on a noisy board: fails", scattered(0.90, "c", 1.01, 0.99, 1.0, 1.005, 0.995, 1.0), 0.05,
			[]string{"md5@1024", "sha256@1024"}, nil, map[string]int{"md5@1024": 4, "sha256@1024": 4}, false},
		{"3 % slower, noisy baseline but steady runs: the baseline's noise keeps it undecided", scattered(0.97, "c", 1.0, 1.001, 0.999, 1.0), 0.05,
			nil, []string{"md5@1024"}, map[string]int{"sha256@1024": 4}, true},
		{"as fast, noisy: undecided against 1 %", scattered(1, "c", noise...), 0.01,
			nil, []string{"md5@1024"}, map[string]int{"sha256@1024": 4}, true},
		// md5's first runs straddle, its later ones settle it: decided
		// at the run from which it stayed so.
		{"a noisy start decides later", scattered(0.88, "c", 1.14, 1.10, 0.99, 1.0, 1.0, 1.0, 1.0, 1.0), 0.05,
			[]string{"md5@1024", "sha256@1024"}, nil, map[string]int{"md5@1024": 8, "sha256@1024": 4}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Judge(base, tt.cand, Options{MaxRegression: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			var regs, und []string
			decided := map[string]int{}
			for _, v := range rep.Verdicts {
				if v.Regressed {
					regs = append(regs, v.Name)
				}
				if v.Undecided {
					und = append(und, v.Name)
				}
				if v.DecidedAt > 0 {
					decided[v.Name] = v.DecidedAt
					if !strings.HasSuffix(v.Why, fmt.Sprintf("decided at %d runs", v.DecidedAt)) {
						t.Errorf("%s: why %q does not say it was decided at %d runs", v.Name, v.Why, v.DecidedAt)
					}
				}
			}
			if !slices.Equal(regs, tt.regressed) || !slices.Equal(und, tt.undecided) || fmt.Sprint(decided) != fmt.Sprint(tt.decidedAt) || rep.Regressed() == tt.passes {
				for _, v := range rep.Verdicts {
					t.Logf("%s: %s", v.Name, v.Why)
				}
				t.Errorf("regressed %v, undecided %v, decided at %v, passes %v; want %v, %v, %v, %v", regs, und, decided, !rep.Regressed(), tt.regressed, tt.undecided, tt.decidedAt, tt.passes)
			}
		})
	}
}

// TestSettled is ci --reps auto's stopping rule: go on while a metric is
// undecided and its interval wider than the target; stop once every
// metric is decided, or a run failed (the job fails anyway).
func TestSettled(t *testing.T) {
	base := scattered(1, "a", noise...)
	failed := results.Run{ID: "f", Board: "b", Status: results.StatusFailed}
	tests := []struct {
		name    string
		cand    []results.Run
		target  float64
		settled bool
	}{
		{"too few runs for an interval", scattered(0.9, "c", 1, 1, 1), 0.02, false},
		{"every metric decided", scattered(0.9, "c", 1, 1.001, 0.999, 1), 0.02, true},
		{"undecided and wide: more runs", scattered(0.97, "c", noise[3:]...), 0.02, false},
		{"undecided but already narrower than the target", scattered(0.97, "c", noise[3:]...), 0.5, true},
		{"a failed run", append(scattered(0.97, "c", 1, 1), failed), 0.02, true},
	}
	for _, tt := range tests {
		rep, err := Judge(base, tt.cand, Options{MaxRegression: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Settled(tt.target); got != tt.settled {
			t.Errorf("%s: settled %v, want %v", tt.name, got, tt.settled)
		}
	}
}

// reportUndecided is a job of 6 new runs on a noisy board: md5 undecided,
// sha256 within from the first 4.
func reportUndecided(t *testing.T) *Report {
	rep, err := Judge(scattered(1, "a", noise...), scattered(0.97, "c", noise[2:]...), Options{MaxRegression: 0.05, BaselineName: "board=b,clock=1000"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestWriteUndecided(t *testing.T) {
	var junit, md bytes.Buffer
	if err := WriteJUnit(&junit, reportUndecided(t)); err != nil {
		t.Fatal(err)
	}
	if err := junitxsd.Check(junit.Bytes()); err != nil {
		t.Errorf("not valid JUnit: %v", err)
	}
	golden(t, "junit-undecided.xml", junit.Bytes())
	if err := WriteMarkdown(&md, reportUndecided(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary-undecided.md", md.Bytes())
}
