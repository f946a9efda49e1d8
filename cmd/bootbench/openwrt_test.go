package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/contract/openwrtwiki"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

// The /proc/cpuinfo fixtures are assembled, not captured: Linux's layouts
// (arch/mips/kernel/proc.c, arch/arm/kernel/setup.c) filled with the
// values the wiki page's own example output shows for a TP-Link
// TL-MR3420, and a Raspberry Pi 1's.
var recipeCases = []struct {
	name, cpuinfo, openssl string
}{
	{"TL-MR3420 cpuinfo, openssl 0.9.8k", "testdata/cpuinfo-tl-mr3420.txt", rb450Fixture},
	{"TL-MR3420 cpuinfo, openssl 3.0.19", "testdata/cpuinfo-tl-mr3420.txt", "../../results/parse/testdata/openssl-3.0.19-speed.txt"},
	{"BCM2835 cpuinfo, openssl 3.0.19", "testdata/cpuinfo-bcm2835.txt", "../../results/parse/testdata/openssl-3.0.19-speed.txt"},
}

// recipe runs the wiki recipe's own lines (testdata/openwrt-wiki-recipe.sh)
// with sh, awk and sed on a /proc/cpuinfo and an openssl speed output.
func recipe(t *testing.T, cpuinfo, openssl string) string {
	t.Helper()
	script, err := os.ReadFile("testdata/openwrt-wiki-recipe.sh")
	if err != nil {
		t.Fatal(err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	s := strings.NewReplacer("/proc/cpuinfo", abs(cpuinfo), "/tmp/sslspeed", abs(openssl)).Replace(string(script))
	cmd := userenv.Command(nil, "sh", "-c", s)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 {
		t.Fatalf("the recipe: %v %s", err, errb.String())
	}
	return out.String()
}

// storeRecipeRun stores the run a board with cpuinfo gives running
// openssl with that output: its hello carries the cpuinfo lines as
// benchinit sends them, its raw output is the output.
func storeRecipeRun(t *testing.T, db, board, cpuinfo, openssl string) {
	t.Helper()
	ci, err := os.ReadFile(cpuinfo)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(openssl)
	if err != nil {
		t.Fatal(err)
	}
	out, err := parse.Auto(data)
	if err != nil {
		t.Fatal(err)
	}
	hello, err := json.Marshal(frame.HelloBody{Arch: "mips", Bench: "openssl", CPUInfo: openwrtwiki.CPUInfoLines(string(ci))})
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Run{ID: results.NewRunID(), Board: board, ClockMHz: 400, Rep: 1, Status: results.StatusOK,
		Bench: "openssl", Tool: out.Tool, ToolVersion: out.Version, Started: time.Unix(1764547200, 0), Finished: time.Unix(1764547260, 0),
		Hello: hello, RawOutput: data}
	for _, m := range out.Metrics {
		r.Metrics = append(r.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
	}
	s := openTestStore(t, db)
	if err := s.SaveRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestOpenWrtExportIsTheRecipe: results export --format openwrt is, byte
// for byte, what the wiki recipe's own awk and sed lines print on the same
// /proc/cpuinfo and openssl speed output; a store of several runs gives
// each run's, in order.
func TestOpenWrtExportIsTheRecipe(t *testing.T) {
	all := filepath.Join(t.TempDir(), "all.db")
	var want string
	for i, tt := range recipeCases {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "r.db")
			storeRecipeRun(t, db, "tl-mr3420", tt.cpuinfo, tt.openssl)
			r := bootbench(t, db, "results", "export", "--format", "openwrt")
			got, rec := r.stdout, recipe(t, tt.cpuinfo, tt.openssl)
			if r.code != 0 || got != rec {
				t.Errorf("exit %d, stderr %q; export\n%q\nthe recipe prints\n%q", r.code, r.stderr, got, rec)
			}
		})
		storeRecipeRun(t, all, "board"+string(rune('a'+i)), tt.cpuinfo, tt.openssl)
		want += recipe(t, tt.cpuinfo, tt.openssl)
	}
	if r := bootbench(t, all, "results", "export", "--format", "openwrt"); r.stdout != want {
		t.Errorf("export of three runs\n%q\nwant the recipe's three\n%q", r.stdout, want)
	}
}
