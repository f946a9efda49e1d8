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
	"github.com/bootbench/bootbench/results/store"
)

// vettedBench serves at once and has its verdict at a set time, as a real
// bench does on a segment heard quiet minutes ago.
type vettedBench struct {
	stubBench
	at      time.Time // when the verdict is in
	verdict error
	served  int
	// lateAt is when a server is heard after a quiet verdict (zero:
	// never), late what it says then.
	lateAt time.Time
	late   error
}

func (b *vettedBench) Serve(context.Context, *boot.Booter, netboot.Reporter) (func(), error) {
	b.served++
	return func() {}, nil
}

func (b *vettedBench) Refused(ctx context.Context) error {
	select {
	case <-time.After(time.Until(b.at)):
	case <-ctx.Done():
		return ctx.Err()
	}
	if b.verdict == nil && !b.lateAt.IsZero() && time.Now().After(b.lateAt) {
		return b.late
	}
	return b.verdict
}

// TestRefusedByLateRival: a server heard after the bench's quiet verdict
// (dnsmasq's answer to the probe, late on a busy host) ends the run as
// the verdict would have: board off, nothing stored.
func TestRefusedByLateRival(t *testing.T) {
	profile, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	late := errors.New("another DHCP server answers on the bench segment: a DHCP server at 198.18.5.2, heard after the probe found none")
	ft := &fakeTarget{boots: []script{lines("[    0.000000] Linux version 6.1.0", "<sleep 10s>")}}
	o := fakeOptions(t, ft, profile)
	o.Board.Profile.Boot = boards.BootIPXE
	o.Board.MAC = net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20}
	o.Board.Address = netip.MustParseAddr("198.18.5.20")
	o.BootTimeout, o.Retries = 5*time.Second, 0
	start := time.Now()
	o.Bench = &vettedBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, at: start.Add(200 * time.Millisecond), lateAt: start.Add(time.Second), late: late}
	rec, err := Run(context.Background(), o.Job, o.Rig)
	runs, serr := o.Store.(*store.Store).Runs(context.Background(), results.Filter{})
	if serr != nil {
		t.Fatal(serr)
	}
	if rec != nil || len(runs) != 0 || !errors.Is(err, ErrRefusedMidRun) || !errors.Is(err, late) {
		t.Fatalf("Run = %v, %v with %d runs stored; want nothing stored, refused by the late server", rec, err, len(runs))
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v: the run went on past the server heard at 1 s", took)
	}
	if ft.offs != 1 {
		t.Errorf("switched off %d times, want once", ft.offs)
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
		boot    script
		verdict error
		at      time.Duration // the verdict is in this long after the start
		cancel  time.Duration // Ctrl-C this long after the start; 0: none
		want    error         // with no run stored; nil: the run is stored
	}{
		// The board boots and then says nothing until its boot timeout
		// (a run that would be stored as failed)...
		{"refused mid-run", lines("[    0.000000] Linux version 6.1.0", "<sleep 10s>"), rival, 300 * time.Millisecond, 0, ErrRefusedMidRun},
		{"quiet", lines("[    0.000000] Linux version 6.1.0", "<sleep 10s>"), nil, 300 * time.Millisecond, 0, nil},
		{"Ctrl-C before the verdict", lines("[    0.000000] Linux version 6.1.0", "<sleep 10s>"), rival, 300 * time.Millisecond, 100 * time.Millisecond, ErrInterrupted},
		// ...or switches itself off at once, before the verdict.
		{"refused after the run ended", lines("<off>"), rival, 2 * time.Second, 0, ErrRefusedMidRun},
		{"Ctrl-C waiting for the verdict", lines("<off>"), nil, 3 * time.Second, 1500 * time.Millisecond, ErrInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTarget{boots: []script{tt.boot}}
			o := fakeOptions(t, ft, profile)
			o.Board.Profile.Boot = boards.BootIPXE // served by the bench, not loaded by QEMU
			o.Board.MAC = net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20}
			o.Board.Address = netip.MustParseAddr("198.18.5.20")
			o.BootTimeout, o.Retries = 3*time.Second, 0
			// One start for the verdict's time, the Ctrl-C's and the
			// run's: taken after them, a loaded host's pause between
			// would make the run look as if it ended early.
			start := time.Now()
			bench := &vettedBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, at: start.Add(tt.at), verdict: tt.verdict}
			o.Bench = bench
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel-time.Since(start), cancel)
			}
			var progress strings.Builder
			o.Progress = &progress
			rec, err := Run(ctx, o.Job, o.Rig)
			took := time.Since(start)
			runs, serr := o.Store.(*store.Store).Runs(context.Background(), results.Filter{})
			if serr != nil {
				t.Fatal(serr)
			}
			if bench.served != 1 || ft.ons != 1 || ft.offs != 1 {
				t.Errorf("served %d times, powered on %d and off %d times; want once each", bench.served, ft.ons, ft.offs)
			}
			if tt.want == nil {
				if rec == nil || len(runs) != 1 || Kind(err) != FailBootTimeout {
					t.Errorf("Run = %v, %v with %d runs stored; want the boot timeout stored", rec, err, len(runs))
				}
				return
			}
			if rec != nil || len(runs) != 0 || !errors.Is(err, tt.want) {
				t.Fatalf("Run = %v, %v with %d runs stored; want nothing stored and %v", rec, err, len(runs), tt.want)
			}
			if tt.want == ErrRefusedMidRun && (Kind(err) != FailSetup || !errors.Is(err, rival)) {
				t.Errorf("Run's error %v: want the refusal as a setup failure", err)
			}
			end := tt.at // the run ends at the verdict, or at a Ctrl-C before it
			if tt.cancel > 0 && tt.cancel < end {
				end = tt.cancel
			}
			if took < end || took > end+time.Second {
				t.Errorf("took %v, want it to end at %v", took, end)
			}
			if tt.want == ErrRefusedMidRun && tt.cancel == 0 && !strings.Contains(progress.String(), "refused: another DHCP server answers") && !strings.Contains(err.Error(), "another DHCP server answers") {
				t.Errorf("nothing says why:\n%s", progress.String())
			}
		})
	}
}
