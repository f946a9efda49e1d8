package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
)

// rewordedRouterBOOT is an RB450G whose RouterBOOT prints its banner at
// power-on and, at a key, a main menu worded otherwise than bootbench
// knows (RouterBOOT 3.41's "c - cpu clock").
type rewordedRouterBOOT struct {
	menu     string
	mu       sync.Mutex
	w        *io.PipeWriter
	ons, off int
}

func (b *rewordedRouterBOOT) String() string { return "reworded RouterBOOT" }

func (b *rewordedRouterBOOT) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	r, w := io.Pipe()
	b.w = w
	return struct {
		io.ReadCloser
		io.Writer
	}{r, routerBOOTKeys{b}}, nil
}

type routerBOOTKeys struct{ b *rewordedRouterBOOT }

func (k routerBOOTKeys) Write(p []byte) (int, error) {
	if string(p) == "\x7f" {
		go io.WriteString(k.b.w, "\r\n"+k.b.menu)
	}
	return len(p), nil
}

func (b *rewordedRouterBOOT) On(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ons++
	go io.WriteString(b.w, "RouterBOOT booter 3.41\r\n\r\nRB450G\r\n\r\nCPU frequency: 680 MHz\r\n  Memory size: 256 MB\r\n\r\nPress any key within 2 seconds to enter setup")
	return nil
}

func (b *rewordedRouterBOOT) Off(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.off++
	b.w.Close()
	return nil
}

type quietBench struct{}

func (quietBench) Serve(context.Context, *boot.Booter, netboot.Reporter) (func(), error) {
	return func() {}, nil
}
func (quietBench) ServerIP() net.IP { return net.IPv4(198, 18, 5, 1) }
func (quietBench) Mask() net.IPMask { return net.CIDRMask(24, 32) }
func (quietBench) String() string   { return "quiet bench" }

// TestRunPlanStopsAtFirmwareRefusal: run --clock 680,800 on an RB450G
// whose setup menu bootbench cannot read ends at the first boot with exit
// status 2, one line quoting the menu, the board off, nothing stored.
func TestRunPlanStopsAtFirmwareRefusal(t *testing.T) {
	dir := t.TempDir()
	menu, err := os.ReadFile("../../harness/testdata/routerboot-3.41-menu.txt")
	if err != nil {
		t.Fatal(err)
	}
	kernel, image := filepath.Join(dir, "vmlinux"), filepath.Join(dir, "image.cpio")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	os.WriteFile(image, []byte("image"), 0o644)
	st, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	board := boards.Board{Name: "rb1", Profile: p, MAC: net.HardwareAddr{0, 0x0c, 0x42, 1, 2, 3}, Address: netip.MustParseAddr("198.18.5.40")}
	job := plan.Job{Board: board, Kernel: kernel, BootTimeout: 5 * time.Second, RunTimeout: 5 * time.Second}
	target := &rewordedRouterBOOT{menu: string(menu)}
	rg := harness.Rig{Target: target, Bench: quietBench{}, Store: st, Builders: plan.Builders{CacheDir: dir,
		BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
			return &initramfs.Image{Path: image, Size: 5, Digest: "00", Cached: true}, nil
		}}}
	spooled := &spooledStore{Store: st, name: "r.db", path: filepath.Join(dir, "r.db"), spool: spool.For(filepath.Join(dir, "r.db"))}
	err = runSettings(context.Background(), plan.Sweep{Job: job, Clocks: []boards.MHz{680, 800}, Reps: boards.Reps{Count: 2}}, rg, spooled)

	var ee *exitError
	want := `RouterBOOT's setup menu has no item "cpu frequency"; it printed: RouterBOOT-3.41 | What do you want to configure?`
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), want) ||
		!strings.HasSuffix(err.Error(), "; nothing of the run was stored") || strings.Contains(err.Error(), "\n") {
		t.Errorf("runSettings = %v; want exit 2, one line quoting the menu, nothing stored", err)
	}
	runs, err := st.Runs(context.Background(), results.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 || target.ons != 1 || target.off != 1 {
		t.Errorf("%d runs stored, board on %d times and off %d; want none stored, on and off once", len(runs), target.ons, target.off)
	}
}
