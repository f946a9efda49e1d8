package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// JUnit XML as GitLab and Jenkins read it (Jenkins' junit-4.xsd): one
// testsuite per board, one testcase per metric, a failure per regression.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitFailure `xml:"skipped,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the reports as one JUnit XML document.
func WriteJUnit(w io.Writer, reps ...*Report) error {
	doc := junitSuites{Name: "bootbench ci"}
	for _, r := range reps {
		s := r.junitSuite()
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func (r *Report) junitSuite() junitSuite {
	s := junitSuite{Name: r.Board, Time: "0", Properties: []junitProperty{
		{"baseline", r.Options.BaselineName},
		{"baseline_runs", strconv.Itoa(r.Baseline.Runs)},
		{"baseline_clock_mhz", strconv.Itoa(int(r.Baseline.ClockMHz))},
		{"candidate_runs", strconv.Itoa(r.Candidate.Runs)},
		{"candidate_clock_mhz", strconv.Itoa(int(r.Candidate.ClockMHz))},
		{"bench", r.Candidate.Bench},
		{"tool", r.Candidate.Tool},
		{"max_regression", pct(r.Options.MaxRegression)},
		{"undecided", strconv.Itoa(len(r.Undecided()))},
	}}
	class := "bootbench." + r.Board
	for _, v := range r.Verdicts {
		c := junitCase{Name: v.Name, Classname: class, Time: "0", SystemOut: v.Why}
		switch {
		case v.Regressed:
			c.Failure = &junitFailure{Message: v.Name + ": " + v.Why, Type: "regression", Text: v.detail()}
			s.Failures++
		case v.Undecided:
			// Neither passed nor failed: a CI page shows it apart.
			c.Skipped = &junitFailure{Message: v.Name + ": " + v.Why, Type: "undecided", Text: v.detail()}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	for _, f := range r.Failed {
		s.Cases = append(s.Cases, junitCase{Name: "run " + string(f.ID), Classname: class, Time: "0",
			Error: &junitFailure{Message: f.Status + ": " + f.Why(), Type: f.Status, Text: "see: bootbench results show " + string(f.ID) + " --transcript"}})
		s.Errors++
	}
	if r.Candidate.Runs == 0 {
		s.Cases = append(s.Cases, junitCase{Name: "runs", Classname: class, Time: "0",
			Error: &junitFailure{Message: "no run gave a result", Type: "failed"}})
		s.Errors++
	}
	s.Tests = len(s.Cases)
	if r.NoStatistics {
		s.SystemOut = fmt.Sprintf("%d baseline and %d new runs: too few for statistics (%d a side); a metric fails on the fraction alone, without a p-value.", r.Baseline.Runs, r.Candidate.Runs, 4)
	}
	return s
}

// detail is a failure's body: the figures behind the verdict.
func (v Verdict) detail() string {
	lines := []string{
		fmt.Sprintf("baseline:  %s %s (median of %d)", fig(float64(v.Baseline)), v.Unit, v.NBaseline),
		fmt.Sprintf("candidate: %s %s (median of %d)", fig(float64(v.Candidate)), v.Unit, v.NCandidate),
	}
	if r, ok := v.Ratio.Float(); ok {
		lines = append(lines, fmt.Sprintf("ratio:     %.4f", r))
	}
	lo, okLo := v.CILow.Float()
	hi, okHi := v.CIHigh.Float()
	if okLo && okHi {
		lines = append(lines, fmt.Sprintf("95 %%:      %.4f–%.4f", lo, hi))
	}
	if p, ok := v.PValue.Float(); ok {
		lines = append(lines, fmt.Sprintf("p:         %.4g", p))
	} else {
		lines = append(lines, "p:         none (fewer than 4 runs a side)")
	}
	if v.DecidedAt > 0 {
		lines = append(lines, fmt.Sprintf("decided:   at %s", runsText(v.DecidedAt)))
	}
	return strings.Join(lines, "\n")
}

func fig(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// WriteMarkdown writes a short summary for a CI job's page.
func WriteMarkdown(w io.Writer, reps ...*Report) error {
	var b strings.Builder
	for _, r := range reps {
		verdict := "passed"
		if r.Regressed() {
			verdict = "**failed**"
		}
		fmt.Fprintf(&b, "### bootbench ci: %s %s\n\n", r.Board, verdict)
		fmt.Fprintf(&b, "%s at %s, %d new run(s) against %d baseline run(s) at %s (%s); allowed regression %s.\n\n",
			r.Candidate.Bench, r.Candidate.ClockMHz.Phrase(), r.Candidate.Runs, r.Baseline.Runs, r.Baseline.ClockMHz.Phrase(), r.Options.BaselineName, pct(r.Options.MaxRegression))
		if r.NoStatistics {
			fmt.Fprintf(&b, "Too few runs for statistics (4 a side): a metric slower than allowed fails without a p-value.\n\n")
		}
		for _, f := range r.Failed {
			fmt.Fprintf(&b, "- run `%s` %s: %s\n", f.ID, f.Status, f.Why())
		}
		if len(r.Failed) > 0 {
			b.WriteString("\n")
		}
		regs := r.Regressions()
		if len(regs) == 0 {
			fmt.Fprintf(&b, "No metric of %d regressed.\n\n", len(r.Verdicts))
		} else {
			fmt.Fprintf(&b, "%d of %d metrics regressed:\n\n| metric | baseline | new | ratio | p |\n|---|---:|---:|---:|---:|\n", len(regs), len(r.Verdicts))
			for _, v := range regs {
				ratio, _ := v.Ratio.Float()
				p := "–"
				if pv, ok := v.PValue.Float(); ok {
					p = fmt.Sprintf("%.3g", pv)
				}
				fmt.Fprintf(&b, "| %s | %s %s | %s %s | %.4f | %s |\n", v.Name, fig(float64(v.Baseline)), v.Unit, fig(float64(v.Candidate)), v.Unit, ratio, p)
			}
			b.WriteString("\n")
		}
		writeUndecided(&b, r)
		writeDecidedAt(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeUndecided lists the metrics whose interval straddles the allowed
// regression: they neither fail nor pass the job.
func writeUndecided(b *strings.Builder, r *Report) {
	und := r.Undecided()
	if len(und) == 0 {
		return
	}
	fmt.Fprintf(b, "%d of %d metrics undecided, not failed: the 95 %% interval of the ratio straddles %s slower; more runs would decide them:\n\n"+
		"| metric | baseline | new | ratio | 95 %% interval |\n|---|---:|---:|---:|---:|\n", len(und), len(r.Verdicts), pct(r.Options.MaxRegression))
	for _, v := range und {
		ratio, _ := v.Ratio.Float()
		lo, _ := v.CILow.Float()
		hi, _ := v.CIHigh.Float()
		fmt.Fprintf(b, "| %s | %s %s | %s %s | %.4f | %.4f–%.4f |\n", v.Name, fig(float64(v.Baseline)), v.Unit, fig(float64(v.Candidate)), v.Unit, ratio, lo, hi)
	}
	b.WriteString("\n")
}

// writeDecidedAt says at how many new runs each metric an interval
// decided was decided, fewest first: a line per count.
func writeDecidedAt(b *strings.Builder, r *Report) {
	byRuns := map[int][]string{}
	var counts []int
	for _, v := range r.Verdicts {
		if v.DecidedAt == 0 {
			continue
		}
		if _, ok := byRuns[v.DecidedAt]; !ok {
			counts = append(counts, v.DecidedAt)
		}
		what := "within"
		if v.Regressed {
			what = "regressed"
		}
		byRuns[v.DecidedAt] = append(byRuns[v.DecidedAt], v.Name+" ("+what+")")
	}
	if len(counts) == 0 {
		return
	}
	slices.Sort(counts)
	b.WriteString("Decided:\n\n")
	for _, n := range counts {
		fmt.Fprintf(b, "- at %s: %s\n", runsText(n), strings.Join(byRuns[n], ", "))
	}
	b.WriteString("\n")
}
