package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/testkit/syncbuf"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
)

// routerBOARD is a RouterBOARD on a served bench, which a person power-cycles
// (powerCycle): RouterBOOT 2.20's banner with the clock it is set to, the
// setup menu of the fixtures at a key, a restart after a new clock, then a
// plain BOOTP request (ask). Its console is open for the whole session.
type routerBOARD struct {
	t         *testing.T
	main      string
	freq      string
	bootDev   string
	ask       func()
	mu        sync.Mutex
	w         *io.PipeWriter
	mhz, want int
	sub       string
	typed     []string // each boot's keys, as one string
}

func (b *routerBOARD) String() string                  { return "RouterBOARD" }
func (b *routerBOARD) On(ctx context.Context) error    { return nil }
func (b *routerBOARD) Off(ctx context.Context) error   { return nil }
func (b *routerBOARD) print(s string)                  { go io.WriteString(b.w, s) }
func (b *routerBOARD) Write(p []byte) (n int, _ error) { b.key(string(p)); return len(p), nil }

func (b *routerBOARD) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	r, w := io.Pipe()
	b.w = w
	return console{r, b}, nil
}

// banner is RouterBOOT starting.
func (b *routerBOARD) banner() string {
	return fmt.Sprintf("\r\nRouterBOOT booter 2.20\r\n\r\nRB450G\r\n\r\nCPU frequency: %d MHz\r\n  Memory size: 256 MB\r\n\r\nPress any key within 2 seconds to enter setup", b.mhz)
}

func (b *routerBOARD) powerCycle() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.typed = append(b.typed, "")
	b.want = b.mhz
	b.print(b.banner())
}

// key answers a key as RouterBOOT's menu does.
func (b *routerBOARD) key(k string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.typed[len(b.typed)-1] += k
	switch {
	case k == "\x7f":
		b.print("\r\n" + b.main)
	case b.sub == "f":
		b.sub = ""
		fmt.Sscanf(strings.SplitN(strings.SplitN(b.freq, k+" - ", 2)[1], "MHz", 2)[0], "%d", &b.want)
		b.print(k + "\r\n\r\n" + b.main)
	case b.sub == "o":
		b.sub = ""
		b.print(k + "\r\n\r\n" + b.main)
	case k == "f":
		b.sub = k
		b.print("f - cpu frequency\r\n\r\n" + b.freq)
	case k == "o":
		b.sub = k
		b.print("o - boot device\r\n\r\n" + b.bootDev)
	case k == "x":
		out := "x - exit setup\r\n"
		if b.want != b.mhz {
			b.mhz = b.want
			out += "\r\nrebooting...\r\n" + b.banner()
		}
		b.print(out)
		go func() { time.Sleep(300 * time.Millisecond); b.ask() }()
	}
}

// TestServeRouterBOOTMenu: serve with a board of clock method
// routerboot-menu and a job of two clocks interleaves them with nobody
// typing: as the board starts, serve sets the next run's clock in its
// menu, leaves the restart that takes it alone, and the run the board's
// BOOTP request starts is at that clock.
func TestServeRouterBOOTMenu(t *testing.T) {
	p, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	fixture := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mac := net.HardwareAddr{0, 0x0c, 0x42, 1, 2, 3}
	bench := &capturingBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, got: make(chan struct{})}
	rb := &routerBOARD{t: t, main: fixture("routerboot-2.20-main.txt"), freq: fixture("routerboot-2.20-frequency.txt"),
		bootDev: fixture("routerboot-2.20-bootdevice.txt"), mhz: 680}
	rb.ask = func() {
		if _, ok := bench.bt.Plan(netboot.Client{MAC: mac, BOOTP: true}); !ok {
			t.Error("no answer to the board's BOOTP request")
		}
	}
	o := fakeOptions(t, &fakeTarget{}, boards.Profile{})
	o.BootTimeout = time.Second
	b := boards.Board{Name: "rb1", Profile: p, MAC: mac, Address: netip.MustParseAddr("198.18.5.40"), Kernel: o.Kernel}
	done := make(chan *results.Run, 4)
	so := ServeOptions{Bench: bench, Boards: []Served{{Board: b, Target: rb, Job: boards.Job{Bench: "speed", Clocks: []boards.MHz{800, 680}}}},
		Rig: o.Rig, Job: o.Job, Done: func(rec *results.Run, _ error) { done <- rec }}
	var progress lockedWriter
	so.Rig.Progress = &progress
	cancelStop, returned := serveUntilServing(t, so, bench)
	defer func() { t.Logf("progress:\n%s", progress.String()) }()
	var got []string
	for range 3 {
		rb.powerCycle()
		select {
		case rec := <-done:
			got = append(got, fmt.Sprint(int(rec.ClockMHz)))
		case <-time.After(20 * time.Second):
			t.Fatalf("no run after the board was power-cycled; runs so far at %v; typed %q", got, rb.typed)
		}
	}
	cancelStop()
	<-returned
	if strings.Join(got, ",") != "800,680,800" {
		t.Errorf("runs at %v MHz, want 800,680,800", got)
	}
	// Each boot: into setup, the clock (g 800, f 680), boot Ethernet
	// once, exit; nothing at the restart.
	want := []string{"\x7ffgo1x", "\x7fffo1x", "\x7ffgo1x"}
	if strings.Join(rb.typed, "|") != strings.Join(want, "|") {
		t.Errorf("typed %q, want %q", rb.typed, want)
	}
}

// lockedWriter is what a test reads while something writes it.
type lockedWriter = syncbuf.Buffer
