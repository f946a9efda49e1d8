package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/boottest"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
)

// directTarget is a qemu-direct board that keeps what it was given.
type directTarget struct {
	fakeTarget
	kernel, initrd, cmdline string
}

func (d *directTarget) LoadDirect(kernel, initrd, cmdline string) {
	d.kernel, d.initrd, d.cmdline = kernel, initrd, cmdline
}

// keepBench is a bench that keeps the Booter it was asked to serve.
type keepBench struct {
	stubBench
	booter *boot.Booter
}

func (k *keepBench) Serve(_ context.Context, b *boot.Booter, _ netboot.Reporter) (func(), error) {
	k.booter = b
	return func() {}, nil
}

var rdSize = regexp.MustCompile(`rd_size=(\d+)`)

// TestRAMCheckMeasuresBootedImage: the image size the RAM check counts
// (the plan's Built, as checkBoard makes it before a run) is the size of
// the image the board is then given, for every way a board loads one: one
// ELF with the gzipped image (RouterBOOT), one ELF with the plain cpio
// (QEMU's -kernel), the cpio by iPXE, a gzipped initrd.
func TestRAMCheckMeasuresBootedImage(t *testing.T) {
	tests := []struct {
		name   string
		boot   boards.BootMethod
		format boards.ImageFormat
	}{
		{"RouterBOOT, one ELF", boards.BootRouterBOOT, boards.FormatELF},
		{"qemu-direct, one ELF", boards.BootQEMUDirect, boards.FormatELF},
		{"iPXE, cpio", boards.BootIPXE, boards.FormatCPIO},
		{"qemu-direct, cpio.gz initrd", boards.BootQEMUDirect, boards.FormatCPIOGz},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			b := boottest.Board("b1", tt.boot, "52:54:00:12:34:56")
			b.Profile.ImageFormat, b.Profile.RAMMB, b.Profile.Arch = tt.format, 256, "mipsle"
			job := plan.Job{Board: b, Kernel: boottest.MIPSKernel(t, dir)}
			if err := job.Settle(); err != nil {
				t.Fatal(err)
			}
			bs := plan.Builders{CacheDir: dir, BuildImage: fakeImage(t, dir)}

			// The RAM check's figures.
			checked, err := bs.Build(context.Background(), job)
			if err != nil {
				t.Fatal(err)
			}
			_, loaded, unpacked, err := checked.Sizes()
			if err != nil {
				t.Fatal(err)
			}
			if compressed := tt.boot == boards.BootRouterBOOT || tt.format == boards.FormatCPIOGz; compressed == (loaded == unpacked) {
				t.Fatalf("loaded %d bytes of an image of %d: compressed should be %v", loaded, unpacked, compressed)
			}

			// What the run gives the board.
			tgt, bench := &directTarget{}, &keepBench{stubBench: stubBench{net.IPv4(198, 18, 0, 1)}}
			r := newRun(config{Job: job, Rig: Rig{Target: tgt, Bench: bench, Builders: bs}})
			built, err := r.prepare(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			stop, err := r.serve(context.Background(), built, dir, make(chan netboot.Event, 8))
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if got := bootedImage(t, tt.boot, tt.format, tgt, bench); got != loaded {
				t.Errorf("the board is given an image of %d bytes; the RAM check counted %d", got, loaded)
			}
		})
	}
}

// bootedImage is the size of the image as the board's loader gets it.
func bootedImage(t *testing.T, m boards.BootMethod, f boards.ImageFormat, tgt *directTarget, bench *keepBench) int64 {
	t.Helper()
	switch {
	case m == boards.BootQEMUDirect && f == boards.FormatELF:
		return rdSizeOf(t, tgt.cmdline)
	case m == boards.BootQEMUDirect:
		st, err := os.Stat(tgt.initrd)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	case m == boards.BootRouterBOOT:
		rc, _, err := bench.booter.Open("b1/kernel.elf")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		elf, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return rdSizeOf(t, string(elf))
	}
	rc, size, err := bench.booter.Open("b1/initramfs.cpio")
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	return size
}

func rdSizeOf(t *testing.T, s string) int64 {
	t.Helper()
	m := rdSize.FindStringSubmatch(s)
	if m == nil {
		t.Fatal("no rd_size= in the kernel's command line")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// fakeImage builds a half-compressible "cpio" in dir, as initramfs.Build
// would describe it.
func fakeImage(t *testing.T, dir string) func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
	return func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
		data := make([]byte, 64<<10)
		rand.New(rand.NewSource(1)).Read(data[:32<<10])
		path := filepath.Join(dir, "image.cpio")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		return &initramfs.Image{Path: path, Size: int64(len(data)), Digest: hex.EncodeToString(sum[:])}, nil
	}
}
