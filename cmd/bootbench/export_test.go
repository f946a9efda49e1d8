package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// TestResultsExportWindow: --since and --until select in the store for
// every format, as they do for list: the export of a window is, byte for
// byte, the export of the whole store with the runs outside the window
// skipped, and a window holding every run exports what no flags export.
func TestResultsExportWindow(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		// One import a command: each run starts later than the last.
		for _, args := range [][]string{
			{"--board", "rb450", "--clock", "300", rb450Fixture},
			{"--board", "rb450g", "--clock", "680", "testdata/openssl-0.9.8k-rb450g-680mhz.txt"},
			{"--board", "rb450", "--clock", "300", "--force", rb450Fixture},
			{"--board", "rb450g", "--clock", "800", "testdata/openssl-0.9.8k-rb450g-800mhz.txt"},
		} {
			if r := bootbench(t, db, append([]string{"import"}, args...)...); r.code != 0 {
				t.Fatalf("import %v: %s", args, r.stderr)
			}
		}
		runs, err := openTestStore(t, db).Runs(context.Background(), results.Filter{})
		if err != nil || len(runs) != 4 {
			t.Fatalf("%d runs, %v", len(runs), err)
		}
		for i := 1; i < len(runs); i++ {
			if !runs[i-1].Started.Before(runs[i].Started) {
				t.Fatalf("runs %s and %s started at the same time", runs[i-1].ID, runs[i].ID)
			}
		}
		at := func(i int) string { return runs[i].Started.UTC().Format(time.RFC3339Nano) }
		windows := []struct {
			name  string
			flags []string
			in    []int // the runs it selects, by index
		}{
			{"since", []string{"--since", at(1)}, []int{1, 2, 3}},
			{"until", []string{"--until", at(2)}, []int{0, 1}},
			{"since and until", []string{"--since", at(1), "--until", at(3)}, []int{1, 2}},
			{"a board's window", []string{"--board", "rb450", "--since", at(1)}, []int{2}},
			{"a board and clock's window", []string{"--board", "rb450g", "--clock", "800", "--until", at(3)}, nil},
			{"days around every run", []string{"--since", "2000-01-01", "--until", "2100-01-01"}, []int{0, 1, 2, 3}},
		}
		formats := [][]string{{"json"}, {"csv"}, {"html"}, {"gobench"}, {"openwrt"}, {"openwrt", "--with-setting"}}
		for _, w := range windows {
			t.Run(w.name, func(t *testing.T) {
				// The same selection by the other flags alone.
				var same []string
				if i := slices.Index(w.flags, "--board"); i >= 0 {
					same = append(same, w.flags[i:i+2]...)
				}
				if i := slices.Index(w.flags, "--clock"); i >= 0 {
					same = append(same, w.flags[i:i+2]...)
				}
				var skip []string
				for i, r := range runs {
					if !slices.Contains(w.in, i) {
						skip = append(skip, string(r.ID))
					}
				}
				if len(skip) > 0 {
					same = append(same, "--skip", strings.Join(skip, ","))
				}
				for _, f := range formats {
					exp := func(flags []string) result {
						args := append([]string{"results", "export", "--format"}, f...)
						return bootbench(t, db, append(args, flags...)...)
					}
					got, want := exp(w.flags), exp(same)
					if got != want {
						t.Errorf("--format %s %s: exit %d\n%s%s\nwant, as %s gives: exit %d\n%s%s", strings.Join(f, " "), strings.Join(w.flags, " "),
							got.code, got.stdout, got.stderr, strings.Join(same, " "), want.code, want.stdout, want.stderr)
					}
				}
			})
		}
	})
}

// TestResultsExportRefusesWindow: a window that selects nothing sensible
// is a usage error, exit 2, said as list says it, before the store is read.
func TestResultsExportRefusesWindow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "yesterday"}, `--since "yesterday": give a day, 2026-12-01, or a time`},
		{[]string{"--format", "html", "--until", "2026-13-01"}, `--until "2026-13-01": give a day`},
		{[]string{"--since", "2026-12-02", "--until", "2026-12-01"}, "--since 2026-12-02 is not before --until 2026-12-01"},
		{[]string{"--clock", "-5"}, "--clock -5: give a clock in MHz"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := invocation{args: append(append([]string{"results", "export"}, tt.args...), "--db", db)}.run(t)
			oneLine(t, r, 2, "results export: "+tt.want)
		})
	}
}
