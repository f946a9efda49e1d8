package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/rig"
)

// unpluggedBoard is a board whose serial adapter is not there: its
// console cannot be opened. It counts what the runs asked of it.
type unpluggedBoard struct{ consoles, ons int }

func (b *unpluggedBoard) String() string                            { return "unplugged" }
func (b *unpluggedBoard) LoadDirect(kernel, initrd, cmdline string) {}
func (b *unpluggedBoard) On(ctx context.Context) error              { b.ons++; return nil }
func (b *unpluggedBoard) Off(ctx context.Context) error             { return nil }
func (b *unpluggedBoard) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	b.consoles++
	return nil, errors.New("open /dev/ttyUSB0: no such file or directory")
}

// TestRunPlanStopsAtSetupFailure: run --clock 680,800 --reps 2 on a board
// with no console stops at the first run, stores nothing and exits 2,
// instead of storing four identical failed runs.
func TestRunPlanStopsAtSetupFailure(t *testing.T) {
	kernel, store, builders, st := stubbedRun(t)
	p := boards.Profile{Name: "rbx", Arch: "amd64", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatCPIO,
		Console: "ttyS0", Baud: 115200, ClockMethod: boards.ClockManual, Clocks: []boards.MHz{680, 800}, DefaultClock: 680}
	job := plan.Job{Board: boards.Board{Name: "rb1", Profile: p}, Kernel: kernel, BootTimeout: time.Second, RunTimeout: time.Second, Retries: 1}
	board := &unpluggedBoard{}
	rig := harness.Rig{Target: board, Store: store, Builders: builders}
	err := runSettings(context.Background(), plan.Sweep{Job: job, Clocks: []boards.MHz{680, 800}, Reps: boards.Reps{Count: 2}}, rig, st)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "setup: open /dev/ttyUSB0: no such file or directory; nothing was run or stored") {
		t.Errorf("runSettings = %v; want exit 2 naming the console, nothing run or stored", err)
	}
	runs, err := store.Runs(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 || board.consoles != 1 || board.ons != 0 {
		t.Errorf("%d runs stored, console opened %d times, powered on %d times; want 0, 1, 0", len(runs), board.consoles, board.ons)
	}
}

// TestRouteJobKeepsSettings: a route run's job carries its settings to
// the stored run (window, streams, UDP rate, test length); another
// benchmark's carries none.
func TestRouteJobKeepsSettings(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want *results.RouteSettings
	}{
		{[]string{"--bench", "route", "--route-streams", "4", "--route-window", "256K", "--route-udp-rate", "20M", "--seconds", "3"},
			&results.RouteSettings{Window: "256K", Streams: 4, UDPRate: 20e6, Seconds: 3}},
		{[]string{"--bench", "route"}, &results.RouteSettings{Streams: 1, UDPRate: 50e6, Seconds: 1}},
		{[]string{"--bench", "speed", "--route-streams", "4"}, nil},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		rf := addRunFlags(fs, "1")
		if err := fs.Parse(append([]string{"--board", "qemu-x86_64"}, tt.args...)); err != nil {
			t.Fatal(err)
		}
		job, err := rf.resolve(context.Background(), "run")
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		got := job.job(&rig.Rig{Board: job.board}).Route
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%v: route settings %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

// stubbedRun is what runSettings needs around a board that never gets as
// far as its image: a kernel file, a store in a temporary directory with
// its spool, and builders whose image is a file already there.
func stubbedRun(t *testing.T) (kernel string, st *store.Store, b plan.Builders, spooled *spooledStore) {
	t.Helper()
	dir := t.TempDir()
	kernel, image := filepath.Join(dir, "vmlinux"), filepath.Join(dir, "image.cpio")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	os.WriteFile(image, []byte("image"), 0o644)
	db := filepath.Join(dir, "r.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b = plan.Builders{CacheDir: dir, BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
		return &initramfs.Image{Path: image, Size: 5, Digest: "00", Cached: true}, nil
	}}
	return kernel, st, b, &spooledStore{Store: st, name: "r.db", path: db, spool: spool.For(db)}
}
