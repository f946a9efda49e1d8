package harness

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
)

// vettedBench serves at once and gives its verdict after a while, as a
// real bench does on a segment heard quiet minutes ago.
type vettedBench struct {
	stubBench
	after   time.Duration
	verdict error
	served  int
}

func (b *vettedBench) Serve(context.Context, *boot.Booter, netboot.Reporter) (func(), error) {
	b.served++
	return func() {}, nil
}

func (b *vettedBench) Refused(ctx context.Context) error {
	select {
	case <-time.After(b.after):
		return b.verdict
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestRefusedMidRun: a bench refused after the board was switched on ends
// the run at once, switches the board off, stores nothing and says
// FailSetup with the reason, so the caller stops its plan; a verdict to
// serve on leaves the run alone.
func TestRefusedMidRun(t *testing.T) {
	profile, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	rival := errors.New("another DHCP server answers on the bench segment: a DHCP server at 198.18.5.2")
	tests := []struct {
		name    string
		verdict error
		wantRec bool
	}{
		{"refused", rival, false},
		{"quiet", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The board boots and then says nothing until its boot
			// timeout (a run that would be stored as failed).
			ft := &fakeTarget{boots: []script{lines("[    0.000000] Linux version 6.1.0", "<sleep 10s>")}}
			o := fakeOptions(t, ft, profile)
			o.Board.Profile.Boot = boards.BootIPXE // served by the bench, not loaded by QEMU
			o.Board.MAC = net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20}
			o.Board.Address = netip.MustParseAddr("198.18.5.20")
			o.BootTimeout, o.Retries = 3*time.Second, 0
			bench := &vettedBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, after: 300 * time.Millisecond, verdict: tt.verdict}
			o.Bench = bench
			var progress strings.Builder
			o.Progress = &progress
			start := time.Now()
			rec, err := Run(context.Background(), o.Job, o.Rig)
			took := time.Since(start)
			runs, serr := o.Store.Runs(context.Background(), results.Filter{})
			if serr != nil {
				t.Fatal(serr)
			}
			if bench.served != 1 || ft.ons != 1 || ft.offs != 1 {
				t.Errorf("served %d times, powered on %d and off %d times; want once each", bench.served, ft.ons, ft.offs)
			}
			if !tt.wantRec {
				if rec != nil || len(runs) != 0 || Kind(err) != FailSetup || !errors.Is(err, rival) {
					t.Fatalf("Run = %v, %v with %d runs stored; want nothing stored and the refusal as a setup failure", rec, err, len(runs))
				}
				if took > 2*time.Second {
					t.Errorf("the refused run took %v, want it ended at the verdict", took)
				}
				if !strings.Contains(progress.String(), "refused: another DHCP server answers") {
					t.Errorf("progress does not say why the board went off:\n%s", progress.String())
				}
				return
			}
			if rec == nil || len(runs) != 1 || Kind(err) != FailBootTimeout {
				t.Errorf("Run = %v, %v with %d runs stored; want the boot timeout stored", rec, err, len(runs))
			}
		})
	}
}
