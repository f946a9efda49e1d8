package harness

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl"
)

// TestServeTapsConsoles: serve hands every console line to its Console
// tap, named by board, between runs too (a board someone switched on
// prints before it asks to boot).
func TestServeTapsConsoles(t *testing.T) {
	profile, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(t, &fakeTarget{}, boards.Profile{})
	target := &fakeTarget{}
	b := boards.Board{Name: "pc1", Profile: profile, MAC: net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20},
		Address: netip.MustParseAddr("198.18.5.20"), Baud: 115200}
	bench := &capturingBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, got: make(chan struct{})}
	tapped := make(chan string, 4)
	so := ServeOptions{Bench: bench, Boards: []Served{{Board: b, Target: target}}, Rig: o.Rig, Job: o.Job,
		Console: func(board string, l serialctl.Line) { tapped <- board + ": " + strings.TrimSpace(string(l.Text)) }}
	so.Job.Transport = "http"
	cancelStop, returned := serveUntilServing(t, so, bench)
	target.mu.Lock()
	w := target.w
	target.mu.Unlock()
	fmt.Fprintf(w, "SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n")
	select {
	case got := <-tapped:
		if want := "pc1: SeaBIOS (version 1.16.2-debian-1.16.2-1)"; got != want {
			t.Errorf("tapped %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the console's line never reached the tap")
	}
	cancelStop()
	if err := <-returned; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
