package main

import (
	"context"
	"errors"
	"io"
	"net/netip"
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
	dir := t.TempDir()
	kernel, image := filepath.Join(dir, "vmlinux"), filepath.Join(dir, "image.cpio")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	os.WriteFile(image, []byte("image"), 0o644)
	store, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := boards.Profile{Name: "rbx", Arch: "amd64", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatCPIO,
		Console: "ttyS0", Baud: 115200, ClockMethod: boards.ClockManual, Clocks: []boards.MHz{680, 800}, DefaultClock: 680}
	job := plan.Job{Board: boards.Board{Name: "rb1", Profile: p}, Kernel: kernel, BootTimeout: time.Second, RunTimeout: time.Second, Retries: 1}
	board := &unpluggedBoard{}
	rig := harness.Rig{Target: board, Store: store, Builders: plan.Builders{CacheDir: dir,
		BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
			return &initramfs.Image{Path: image, Size: 5, Digest: "00", Cached: true}, nil
		}}}
	st := &spooledStore{Store: store, name: "r.db", path: filepath.Join(dir, "r.db"), spool: spool.For(filepath.Join(dir, "r.db"))}
	err = runSettings(context.Background(), job, rig, []boards.MHz{680, 800}, 2, st)
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

// TestOpenBenchNoInterface: an inventory whose bench NIC is not on this
// host is a setup failure, exit 2, before anything is served.
func TestOpenBenchNoInterface(t *testing.T) {
	t.Setenv("BOOTBENCH_CACHE", t.TempDir())
	inv := &boards.Inventory{Bench: boards.Bench{Interface: "bbnonic0", Address: netip.MustParsePrefix("198.18.5.1/24")}}
	_, _, err := openBench(context.Background(), inv, false, nil, func(string) {})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "bench interface bbnonic0: no such interface here") {
		t.Errorf("openBench = %v; want exit 2 naming the missing interface", err)
	}
}
