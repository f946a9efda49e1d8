package main

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/internal/testkit/menuboard"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
)

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
	menu, err := os.ReadFile("../../harness/testdata/routerboot-3.41-menu.txt")
	if err != nil {
		t.Fatal(err)
	}
	kernel, st, builders, spooled := stubbedRun(t)
	p, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	board := boards.Board{Name: "rb1", Profile: p, MAC: net.HardwareAddr{0, 0x0c, 0x42, 1, 2, 3}, Address: netip.MustParseAddr("198.18.5.40")}
	job := plan.Job{Board: board, Kernel: kernel, BootTimeout: 5 * time.Second, RunTimeout: 5 * time.Second}
	target := &menuboard.Board{Menu: string(menu)}
	rg := harness.Rig{Target: target, Bench: quietBench{}, Store: st, Builders: builders}
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
	if ons, offs := target.Switched(); len(runs) != 0 || ons != 1 || offs != 1 {
		t.Errorf("%d runs stored, board on %d times and off %d; want none stored, on and off once", len(runs), ons, offs)
	}
}
