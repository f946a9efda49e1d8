package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/testkit/menuboard"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

// TestFirmwareMenuReworded: a RouterBOOT whose menu words its items
// otherwise than the profile knows is refused in one line quoting the
// menu; the board is switched off and nothing is stored.
func TestFirmwareMenuReworded(t *testing.T) {
	menu, err := os.ReadFile("testdata/routerboot-3.41-menu.txt")
	if err != nil {
		t.Fatal(err)
	}
	p, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	board := &menuboard.Board{Menu: string(menu)}
	o := fakeOptions(t, board, boards.Profile{})
	o.Board = boards.Board{Name: "rb1", Profile: p, MAC: net.HardwareAddr{0, 0x0c, 0x42, 1, 2, 3}, Address: netip.MustParseAddr("198.18.5.40"), Kernel: o.Kernel}
	o.Bench = stubBench{net.IPv4(198, 18, 5, 1)}
	o.Clock = 800
	rec, err := runOnce(context.Background(), o)
	want := `RouterBOOT's setup menu has no item "cpu frequency"; it printed: RouterBOOT-3.41 | What do you want to configure? | d - boot delay | k - boot key | s - serial console | o - boot device | c - cpu clock | r - reset booter configuration | x - exit setup`
	if rec != nil || !errors.Is(err, ErrFirmwareRefused) || Kind(err) != FailSetup || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, %v\nwant no record and one line with %s", rec, err, want)
	}
	if ons, offs := board.Switched(); ons != 1 || offs != 1 {
		t.Errorf("board switched on %d times, off %d times; want once each", ons, offs)
	}
	runs, err := o.Store.(*store.Store).Runs(context.Background(), results.Filter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("stored %d runs (%v), want none", len(runs), err)
	}
}

// TestFirmwareClockCheck: a clock set in the firmware is held to what the
// firmware announced as it booted, beside BogoMIPS.
func TestFirmwareClockCheck(t *testing.T) {
	rb450g, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	manual := rb450g
	manual.ClockMethod = boards.ClockManual
	tests := []struct {
		name           string
		p              boards.Profile
		want, announce boards.MHz
		err            string
	}{
		{"announced as asked", rb450g, 800, 800, ""},
		{"announced the old clock", rb450g, 800, 680, "asked for 800 MHz, the firmware announced 680 MHz"},
		{"announced none", rb450g, 800, 0, "asked for 800 MHz, but the firmware announced no clock as it booted"},
		{"no clock asked", rb450g, 0, 680, ""},
		{"a clock not set in the firmware", manual, 800, 0, ""},
	}
	for _, tt := range tests {
		err := firmwareClockCheck(tt.p, tt.want, tt.announce)
		if got := fmt.Sprint(err); tt.err == "" && err != nil || tt.err != "" && got != tt.err {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}

// TestJudgeClock: a clock set in the firmware stands only when both the
// firmware's announcement and the kernel's BogoMIPS (0.6656 per MHz on an
// RB450G's 24Kc) agree with it, and a mismatch names both figures.
func TestJudgeClock(t *testing.T) {
	rb450g, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	at800, at680 := frame.HelloBody{BogoMIPS: "532.48"}, frame.HelloBody{BogoMIPS: "452.60"}
	tests := []struct {
		name      string
		announced boards.MHz
		h         frame.HelloBody
		check     string
		err       string
	}{
		{"both agree", 800, at800, results.ClockVerified, ""},
		{"the firmware disagrees", 680, at800, results.ClockMismatch,
			"asked for 800 MHz, the firmware announced 680 MHz; the kernel's BogoMIPS 532.48 say about 800 MHz"},
		{"the kernel disagrees", 800, at680, results.ClockMismatch,
			"asked for 800 MHz, the board's BogoMIPS 452.60 say about 680 MHz; the firmware announced 800 MHz"},
		{"a firmware rounding beyond its MHz", 805, at800, results.ClockMismatch,
			"asked for 800 MHz, the firmware announced 805 MHz; the kernel's BogoMIPS 532.48 say about 800 MHz"},
	}
	for _, tt := range tests {
		_, check, err := judgeClock(rb450g, 800, tt.announced, tt.h)
		if check != tt.check || fmt.Sprint(err) != tt.err && (tt.err != "" || err != nil) {
			t.Errorf("%s: %s, %v; want %s, %q", tt.name, check, err, tt.check, tt.err)
		}
	}
}
