package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/results/parse"
)

// TestDDSize: 64 MiB where the RAM allows, else a quarter of what the
// kernel says is available, in whole 16 KiB blocks.
func TestDDSize(t *testing.T) {
	for _, tt := range []struct {
		name, meminfo string
		want          int64
	}{
		{"plenty", "MemTotal: 2048000 kB\nMemFree: 1900000 kB\nMemAvailable: 1950000 kB\n", 64 << 20},
		{"available caps it", "MemTotal: 61572 kB\nMemFree: 50000 kB\nMemAvailable: 40000 kB\n", 40000 << 10 / 4 / ddBlock * ddBlock},
		{"MemFree before 3.14", "MemTotal: 30000 kB\nMemFree: 16384 kB\n", 4 << 20},
		{"unknown: the most", "", 64 << 20},
		{"tiny: one block", "MemAvailable: 20 kB\n", ddBlock},
	} {
		if got := ddSize(tt.meminfo); got != tt.want {
			t.Errorf("%s: ddSize = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestDDFile: what ddFile prints is what the dd parser reads as a write
// and a read of the whole file, and the file is gone afterwards.
func TestDDFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testfile")
	var out bytes.Buffer
	if err := ddFile(context.Background(), &out, path, 1<<20+ddBlock); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the test file is left: %v", err)
	}
	if n := strings.Count(out.String(), "1064960 bytes (1 MB, 1 MiB) copied, "); n != 2 {
		t.Errorf("%d summaries of 1064960 bytes, want 2:\n%s", n, out.String())
	}
	assertDDMetrics(t, out.String())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ddFile(ctx, &out, path, 1<<20); err == nil {
		t.Error("ddFile with a cancelled context: no error")
	}
}

// assertDDMetrics checks that output parses as dd's, a write and a read.
func assertDDMetrics(t *testing.T, output string) {
	t.Helper()
	o, err := parse.Auto([]byte(output))
	if err != nil {
		t.Fatalf("dd output not understood: %v\n%s", err, output)
	}
	if o.Tool != "dd" || len(o.Metrics) != 2 || o.Metrics[0].Name != parse.MetricDDWrite || o.Metrics[1].Name != parse.MetricDDRead {
		t.Fatalf("parsed %+v\nfrom:\n%s", o, output)
	}
	for _, m := range o.Metrics {
		if !(m.Value > 0) || m.Unit != parse.UnitBytesPerSec {
			t.Errorf("%s = %v %s", m.Name, m.Value, m.Unit)
		}
	}
}

// TestRunDD runs bench dd as the board does, on a tmpfs it mounts below
// the fake root (as root only), sized by the board's meminfo.
func TestRunDD(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	root := fakeBoard(t, "")
	if err := os.WriteFile(filepath.Join(root, "proc/meminfo"), []byte("MemTotal: 61572 kB\nMemAvailable: 8192 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBoard(t, bootparam.Params{Run: "r1", Bench: "dd", Reps: 1}, root)
	if r.reason != "" || r.done.Exit != 0 {
		t.Fatalf("fail %q, exit %d:\n%s", r.reason, r.done.Exit, r.output)
	}
	if !strings.Contains(r.output, "# dd bs=16k count=128 of=/tmp/bootbench-dd/testfile") || strings.Count(r.output, "2097152 bytes") != 2 {
		t.Errorf("not 128 blocks of 16 KiB written and read:\n%s", r.output)
	}
	assertDDMetrics(t, r.output)
	mounts, _ := os.ReadFile("/proc/self/mounts")
	if strings.Contains(string(mounts), " "+filepath.Join(root, ddDir)+" ") {
		t.Error("the tmpfs is still mounted")
	}
}
