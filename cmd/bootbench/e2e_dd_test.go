package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EDD runs the dd benchmark on the virtual PC: a file written to the
// board's tmpfs in 16 KiB blocks and read back, stored as a write and a
// read rate in B/s, and the output it was read from is dd's.
func TestE2EDD(t *testing.T) {
	requireBench(t)
	db := filepath.Join(t.TempDir(), "results.db")
	r := bootbench(t, db, "run", "--board", "qemu-x86_64", "--bench", "dd", "--retries", "0")
	if r.code != 0 {
		t.Fatalf("bootbench run --bench dd: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Status != "ok" {
		t.Fatalf("stored: %+v\nstderr:\n%s", runs, r.stderr)
	}
	got := map[string]float64{}
	for _, m := range runs[0].Metrics {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"dd-write", "dd-read"} {
		if !(got[name] > 0) {
			t.Errorf("%s = %v, want a rate; stored %v", name, got[name], got)
		}
	}
	if len(got) != 2 {
		t.Errorf("stored %v, want dd-write and dd-read only", got)
	}
	show := bootbench(t, db, "results", "show", runs[0].ID, "--raw")
	if !strings.Contains(show.stdout, "# dd bs=16k count=4096 of=/tmp/bootbench-dd/testfile") {
		t.Errorf("the output does not show 64 MiB written in 16 KiB blocks:\n%s", show.stdout)
	}
	t.Logf("dd-write %.1f MB/s, dd-read %.1f MB/s", got["dd-write"]/1e6, got["dd-read"]/1e6)
}
