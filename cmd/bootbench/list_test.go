package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestResultsListPage: a store of more runs than a page lists the newest
// page, oldest of it first, as rows of the whole listing, and says on
// stderr how many older runs it left out and the --until that lists
// them; that --until lists them. A page that holds every run prints what
// --limit 0 prints and says nothing more.
func TestResultsListPage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	files := captures(t, dir, "out", 5)
	if r := (invocation{args: append([]string{"import", "--board", "rb450", "--clock", "300", "--db", db}, files...)}).run(t); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	list := func(args ...string) result {
		t.Helper()
		r := invocation{args: append(append([]string{"results", "list"}, args...), "--db", db)}.run(t)
		if r.code != 0 {
			t.Fatalf("results list %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	all := list("--limit", "0")
	rows := strings.Split(strings.TrimSuffix(all.stdout, "\n"), "\n")
	if len(rows) != 6 || all.stderr != "" {
		t.Fatalf("--limit 0: %d lines, stderr %q; want a header and 5 runs, nothing on stderr:\n%s", len(rows), all.stderr, all.stdout)
	}
	if r := list(); r.stdout != all.stdout || r.stderr != "" {
		t.Errorf("the default page of a store of 5 runs differs from --limit 0:\n%s\nstderr %q", r.stdout, r.stderr)
	}

	page := list("--limit", "2")
	if want := strings.Join([]string{rows[0], rows[4], rows[5]}, "\n") + "\n"; page.stdout != want {
		t.Errorf("--limit 2 lists\n%s\nwant the newest two, oldest first:\n%s", page.stdout, want)
	}
	more := regexp.MustCompile(`^bootbench: results list: 3 older runs not shown \(the newest 2 of 5\); --limit 0 lists them all, --until (\S+) the ones before\n$`).FindStringSubmatch(page.stderr)
	if more == nil {
		t.Fatalf("--limit 2: stderr %q: want the line saying 3 older runs", page.stderr)
	}
	before := list("--limit", "0", "--until", more[1])
	if want := strings.Join(rows[:4], "\n") + "\n"; before.stdout != want {
		t.Errorf("--until %s lists\n%s\nwant the 3 older runs:\n%s", more[1], before.stdout, want)
	}
	if since := list("--since", more[1]); since.stdout != page.stdout || since.stderr != "" {
		t.Errorf("--since %s lists\n%s\nwant the page's 2 runs", more[1], since.stdout)
	}
	if r := list("--clock", "680"); strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--clock 680 on runs at 300: %q; want the header alone", r.stdout)
	}
}

// TestResultsListCountsNoFurther: after a page, list counts the older
// runs no further than listCountMost, and past it says "more than": a
// page of a store kept for years does not read every run's id.
func TestResultsListCountsNoFurther(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	files := captures(t, dir, "out", 5)
	if r := (invocation{args: append([]string{"import", "--board", "rb450", "--clock", "300", "--db", db}, files...)}).run(t); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	defer func(was int) { listCountMost = was }(listCountMost)
	listCountMost = 2
	for _, tt := range []struct {
		limit int
		says  *regexp.Regexp
	}{
		{1, regexp.MustCompile(`^bootbench: results list: more than 2 older runs not shown \(the newest 1\); --limit 0 lists them all, --until \S+ the ones before\n$`)},
		{3, regexp.MustCompile(`^bootbench: results list: 2 older runs not shown \(the newest 3 of 5\); --limit 0 lists them all, --until \S+ the ones before\n$`)},
		{5, regexp.MustCompile(`^$`)},
	} {
		stdout, stderr, err := captured(t, func() error {
			return cmdResultsList(context.Background(), []string{"--limit", strconv.Itoa(tt.limit), "--db", db})
		})
		if err != nil || strings.Count(stdout, "\n") != 1+tt.limit || !tt.says.MatchString(stderr) {
			t.Errorf("--limit %d: %v; stdout\n%sstderr %q, want a header, %d runs, and stderr matching %s", tt.limit, err, stdout, stderr, tt.limit, tt.says)
		}
	}
}

// TestResultsListRefuses: flags that select nothing sensible are usage
// errors, exit 2, before the store is read.
func TestResultsListRefuses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "-1"}, "--limit -1: give how many runs to list, or 0 for every run"},
		{[]string{"--clock", "-5"}, "--clock -5: give a clock in MHz"},
		{[]string{"--since", "yesterday"}, `--since "yesterday": give a day, 2026-12-01, or a time`},
		{[]string{"--until", "2026-13-01"}, `--until "2026-13-01": give a day`},
		{[]string{"--since", "2026-12-02", "--until", "2026-12-01"}, "--since 2026-12-02 is not before --until 2026-12-01"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := invocation{args: append(append([]string{"results", "list"}, tt.args...), "--db", db)}.run(t)
			oneLine(t, r, 2, "results list: "+tt.want)
		})
	}
}
