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
