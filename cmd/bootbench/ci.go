package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/compare"
	"github.com/bootbench/bootbench/results/export"
	"github.com/bootbench/bootbench/results/gate"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/rig"
)

const ciSynopsis = "ci --board NAME --baseline REF --max-regression PCT [--reps N|auto] [--metrics GLOB,...] [--junit FILE] [--summary FILE] [flags]\n\n" +
	"Runs the board N times (default 5) and compares the results with a baseline, metric by\n" +
	"metric: a metric whose ratio to the baseline has its 95 % interval (Mann-Whitney's, from\n" +
	"4 runs a side, as results compare prints it) wholly beyond PCT slower fails the job, as\n" +
	"does a run that gives no result; one whose interval straddles PCT is undecided, reported\n" +
	"apart, and does not fail it. --reps auto runs until every metric is decided (or its\n" +
	"interval is within --target-ci), at most --max-reps times. With fewer than 4 runs a side,\n" +
	"a metric slower than PCT fails without a p-value and the summary says so.\n\n" +
	"REF is a JSON export ('bootbench results export --format json --board B --clock MHZ >\n" +
	"base.json') or a selector of stored runs: board=NAME,clock=MHZ[,bench=B][,since=DATE].\n\n" +
	"Exit status: 0 pass, 1 a regression or a failed run, 2 bad usage or baseline."

func cmdCI(ctx context.Context, args []string) error {
	fs := newCommand("ci", ciSynopsis, "")
	rf := addRunFlags(fs.FlagSet, "5")
	baselineRef := fs.String("baseline", "", "the baseline: a JSON export file, or board=NAME,clock=MHZ[,bench=B][,since=YYYY-MM-DD]")
	maxRegression := fs.String("max-regression", "", "how much slower than the baseline a metric may be, e.g. 3%")
	metrics := fs.String("metrics", "", "metrics to judge, comma-separated globs (default: every metric both sides have)")
	junit := fs.String("junit", "", "write JUnit XML here (one testsuite per board, one testcase per metric)")
	summary := fs.String("summary", "", "write a Markdown summary here, for the job's page")
	if err := fs.parse(args); err != nil {
		return err
	}
	maxReg, err := parsePercent(*maxRegression)
	if err != nil {
		return err
	}
	if len(splitList(*rf.clocks)) > 1 {
		return usageErr("ci: one --clock at a time: a baseline is one setting")
	}
	if err := store.CheckName(storePath(*rf.db)); err != nil {
		return storeErr(err)
	}
	job, err := rf.resolve(ctx, "ci")
	if err != nil {
		return err
	}
	st, err := openSpooled(ctx, *rf.db, func(msg string) { rig.SetupNote(os.Stderr, "spool", "%s", msg) })
	if err != nil {
		return err
	}
	defer st.Close()
	dbPath := st.name
	base, err := loadBaseline(ctx, st.Store, *baselineRef, job.board.Name)
	if err != nil {
		return storeFailure(dbPath, err)
	}
	// The benchmark the runs will run is known now: a baseline of
	// another is refused before power-on, not after the boots.
	for _, r := range base {
		if r.Bench != *rf.bench {
			return usageErr("ci: baseline %s is of bench %s (%s %s), and --bench is %s: compare like with like (--bench %s, or a baseline of bench %s: bench=%s in the selector)",
				*baselineRef, r.Bench, r.Tool, r.ToolVersion, *rf.bench, r.Bench, *rf.bench, *rf.bench)
		}
	}
	opts := gate.Options{MaxRegression: maxReg, Metrics: splitList(*metrics), BaselineName: *baselineRef}
	// Check the baseline and the metrics against themselves before any boot.
	if _, err := gate.Judge(base, base, opts); err != nil {
		return usageErr("ci: baseline %s: %v", *baselineRef, err)
	}
	if job.reps.Auto && len(base) < compare.MinStatRuns {
		return usageErr("ci: --reps auto: baseline %s has %s, and an interval of the ratio needs %d a side: add runs to it, or give --reps N",
			*baselineRef, runsCount(len(base)), compare.MinStatRuns)
	}
	if err := job.check(ctx, "ci"); err != nil {
		return err
	}
	rg, err := job.open(ctx, st.saver())
	if err != nil {
		return err
	}
	defer rg.Close()
	return runCI(ctx, job.sweep(rg), rg.Rig, st, base, opts, ciReports{junit: *junit, summary: *summary})
}

// ciReports are where ci writes its verdict beside stdout.
type ciReports struct{ junit, summary string }

// runCI runs the candidates of sw against the baseline base and judges
// them: the summary on stdout, the reports where asked, and the exit
// status the job goes by.
func runCI(ctx context.Context, sw plan.Sweep, rg harness.Rig, st *spooledStore, base []results.Run, opts gate.Options, to ciReports) error {
	cand, tally, err := runCandidates(ctx, sw, rg, st, base, opts)
	if err != nil {
		return interrupted(err, st.name)
	}
	rep, err := gate.Judge(base, cand, opts)
	if err != nil {
		return usageErr("ci: %v", err)
	}
	if sw.Reps.Auto {
		stderrNote("ci: reps auto: " + autoEnd(rep, sw.Reps, len(cand)))
	}
	if err := writeCIReports(rep, to.junit, to.summary); err != nil {
		return err
	}
	if err := gate.WriteMarkdown(os.Stdout, rep); err != nil {
		return err
	}
	if rep.Regressed() {
		return fmt.Errorf("ci: %s failed: %d metric(s) regressed, %d run(s) failed (stored in %s)", rep.Board, len(rep.Regressions()), len(rep.Failed), st.name)
	}
	// Judged from the runs as they ended; those the store did not take
	// still fail the job, as a run that could not be stored always has.
	return tally.unstoredVerdict(len(cand), st)
}

// autoEnd says how ci --reps auto ended.
func autoEnd(rep *gate.Report, reps boards.Reps, runs int) string {
	und := len(rep.Undecided())
	switch {
	case len(rep.Failed) > 0:
		return fmt.Sprintf("stopped after %s: a run gave no result, which fails the job whatever more runs would say", runsCount(runs))
	case und == 0 && !rep.NoStatistics:
		return fmt.Sprintf("every metric decided after %s", runsCount(runs))
	case rep.Settled(reps.Target):
		return fmt.Sprintf("stopped after %s: %d metric(s) undecided, each interval already within ±%s", runsCount(runs), und, boards.Percent(reps.Target))
	}
	return fmt.Sprintf("stopped at the most, %s (--max-reps %d), with %d metric(s) undecided", runsCount(runs), reps.Max, und)
}

// runCandidates runs the sweep and returns every run, stored or kept in
// the spool, and what became of them. With --reps auto it judges the runs
// against the baseline after each one, and stops once that settles the
// job (gate.Report.Settled).
func runCandidates(ctx context.Context, sw plan.Sweep, rg harness.Rig, st *spooledStore, base []results.Run, opts gate.Options) ([]results.Run, *runTally, error) {
	var cand []results.Run
	tally := &runTally{}
	enough := func(rounds int) bool {
		rep, err := gate.Judge(base, cand, opts)
		if err != nil {
			return true // more runs would not judge better; the end says why
		}
		if rep.Settled(sw.Reps.Target) {
			return true
		}
		stderrNote(fmt.Sprintf("ci: reps auto: after %s: %s; another run", runsCount(rounds), undecidedText(rep)))
		return false
	}
	err := runPlan(ctx, sw, rg, enough, func(rec *results.Run, rep int, err error) error {
		if outcome := harness.Outcome(err); outcome != nil {
			stderrNote(fmt.Sprintf("run %s failed: %s", rec.ID, redact.Text(outcome.Error())))
		}
		tally.addUnstored(ctx, rec, err, st, false)
		cand = append(cand, *rec)
		return nil
	})
	return cand, tally, err
}

// undecidedText says what keeps ci --reps auto going.
func undecidedText(rep *gate.Report) string {
	if rep.NoStatistics {
		return fmt.Sprintf("no intervals yet (they need %d runs a side)", compare.MinStatRuns)
	}
	var names []string
	for _, v := range rep.Undecided() {
		names = append(names, v.Name)
	}
	if len(names) > 6 {
		names = append(names[:6], "…")
	}
	return fmt.Sprintf("%d of %d metrics undecided (%s)", len(rep.Undecided()), len(rep.Verdicts), strings.Join(names, ", "))
}

func writeCIReports(rep *gate.Report, junit, summary string) error {
	write := func(path string, fn func(*os.File) error) error {
		if path == "" {
			return nil
		}
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("ci: %w", err)
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("ci: write %s: %w", path, err)
		}
		return f.Close()
	}
	if err := write(junit, func(f *os.File) error { return gate.WriteJUnit(f, rep) }); err != nil {
		return err
	}
	return write(summary, func(f *os.File) error { return gate.WriteMarkdown(f, rep) })
}

// parsePercent reads "3%", "3" or "2.5 %" as a fraction.
func parsePercent(s string) (float64, error) {
	if s == "" {
		return 0, usageErr("ci: --max-regression is required, e.g. --max-regression 3%%")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || v < 0 || v >= 100 {
		return 0, usageErr("ci: --max-regression %q: give a percentage from 0 to 100, e.g. 3%%", s)
	}
	return v / 100, nil
}

// loadBaseline reads the baseline runs REF names: a JSON export file, or
// a selector of stored runs. Runs of other boards in an export are left
// out; an export of just one other board is taken as it is (a board of the
// same model on another bench, say).
func loadBaseline(ctx context.Context, store *store.Store, ref, board string) ([]results.Run, error) {
	if ref == "" {
		return nil, usageErr("ci: --baseline is required: a JSON export file, or board=NAME,clock=MHZ")
	}
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		return baselineFile(ref, board)
	}
	if !strings.Contains(ref, "=") {
		return nil, usageErr("ci: baseline %q: no such file, and not a selector board=NAME,clock=MHZ[,bench=B][,since=DATE]", ref)
	}
	sel, err := parseSelector(ref)
	if err != nil {
		return nil, err
	}
	// The window goes to the store: a baseline of last month's runs reads
	// those, not the board's years, and of them what a comparison uses.
	var runs []results.Run
	err = store.EachMeasured(ctx, results.Filter{Board: sel.board, ClockMHz: sel.clock, Status: results.StatusOK, Since: sel.since},
		func(r *results.Run) error {
			runs = append(runs, *r)
			return nil
		})
	if err != nil {
		return nil, err
	}
	var out []results.Run
	for _, r := range runs {
		if (sel.bench == "" || r.Bench == sel.bench) && !r.Started.Before(sel.since) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, usageErr("ci: baseline %q selects no ok runs in the store", ref)
	}
	return out, nil
}

func baselineFile(path, board string) ([]results.Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErr("ci: baseline: %v", err)
	}
	defer f.Close()
	runs, err := export.ReadJSON(f)
	if err != nil {
		return nil, usageErr("ci: baseline %s: %v", path, err)
	}
	boardsIn := map[string]bool{}
	var mine []results.Run
	for _, r := range runs {
		boardsIn[r.Board] = true
		if r.Board == board {
			mine = append(mine, r)
		}
	}
	switch {
	case len(runs) == 0:
		return nil, usageErr("ci: baseline %s holds no runs", path)
	case len(mine) > 0:
		return mine, nil
	case len(boardsIn) == 1:
		return runs, nil
	}
	return nil, usageErr("ci: baseline %s holds no runs of %s, and several other boards: export one board (--board)", path, board)
}

type selector struct {
	board, bench string
	clock        boards.MHz
	since        time.Time
}

func parseSelector(ref string) (selector, error) {
	var s selector
	for _, kv := range strings.Split(ref, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return s, usageErr("ci: baseline selector %q: %q is not key=value", ref, kv)
		}
		var err error
		switch k {
		case "board":
			s.board = v
		case "clock":
			s.clock, err = boards.ParseMHz(v)
		case "bench":
			s.bench = v
		case "since":
			s.since, err = time.Parse("2006-01-02", v)
		default:
			err = errors.New("unknown key (board, clock, bench, since)")
		}
		if err != nil {
			return s, usageErr("ci: baseline selector %q: %s: %v", ref, k, err)
		}
	}
	if s.board == "" || s.clock == 0 {
		return s, usageErr("ci: baseline selector %q needs board=NAME and clock=MHZ", ref)
	}
	return s, nil
}
