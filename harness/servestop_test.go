package harness

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
)

// capturingBench is a bench that serves nothing but hands the test the
// Booter and the Reporter, so the test can be the boards asking to boot
// and fetching their files.
type capturingBench struct {
	stubBench
	got chan struct{}
	mu  sync.Mutex
	bt  *boot.Booter
	rep netboot.Reporter
}

func (b *capturingBench) Serve(_ context.Context, bt *boot.Booter, rep netboot.Reporter) (func(), error) {
	b.mu.Lock()
	b.bt, b.rep = bt, bt.Report(rep)
	b.mu.Unlock()
	close(b.got)
	return func() {}, nil
}

// TestServeStopEndsUnbootedRuns: the first Ctrl-C of serve stops a board
// whose run has not got past its netboot at once (stored interrupted),
// rather than after its boot timeout; a board already in its kernel still
// gets its time.
func TestServeStopEndsUnbootedRuns(t *testing.T) {
	profile, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(t, &fakeTarget{}, boards.Profile{})
	o.BootTimeout, o.RunTimeout = 3*time.Second, 3*time.Second
	var served []Served
	for i, name := range []string{"unbooted", "booted"} {
		mac := net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, byte(0x20 + i)}
		b := boards.Board{Name: name, Profile: profile, MAC: mac, Address: netip.AddrFrom4([4]byte{198, 18, 5, byte(20 + i)}), Baud: 115200}
		served = append(served, Served{Board: b, Target: &fakeTarget{}})
	}
	bench := &capturingBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, got: make(chan struct{})}
	type done struct {
		rec *results.Run
		at  time.Time
	}
	dones := make(chan done, 4)
	so := ServeOptions{Bench: bench, Boards: served, Rig: o.Rig, Job: o.Job,
		Done: func(rec *results.Run, _ error) { dones <- done{rec, time.Now()} }}
	so.Job.Transport = "http"
	cancelStop, returned := serveUntilServing(t, so, bench)
	for _, sv := range served {
		if _, ok := bench.bt.Plan(netboot.Client{MAC: sv.Board.MAC, VendorClass: "PXEClient:Arch:00000:UNDI:002001", IPXE: true}); !ok {
			t.Fatalf("%s: no answer to its boot", sv.Board.Name)
		}
	}
	// The second board fetched its image: it is in its kernel.
	booted := served[1].Board
	bench.rep(netboot.Event{Kind: "http-done", File: boot.KeyOf(booted).File("initramfs.cpio"), Bytes: 5, Time: time.Now()})
	time.Sleep(200 * time.Millisecond)

	stopped := time.Now()
	cancelStop()
	got := map[string]done{}
	for len(got) < 2 {
		select {
		case d := <-dones:
			got[d.rec.Board] = d
		case <-time.After(10 * time.Second):
			t.Fatalf("runs stored after Ctrl-C: %v, want both", got)
		}
	}
	if d := got["unbooted"]; d.rec.Status != results.StatusInterrupted || d.at.Sub(stopped) > time.Second {
		t.Errorf("the board still netbooting: %s (%s) %v after Ctrl-C, want interrupted at once", d.rec.Status, d.rec.Reason, d.at.Sub(stopped).Round(time.Millisecond))
	}
	if d := got["booted"]; d.rec.Status == results.StatusInterrupted || d.at.Sub(stopped) < 2*time.Second {
		t.Errorf("the board in its kernel: %s (%s) %v after Ctrl-C, want its boot timeout to decide", d.rec.Status, d.rec.Reason, d.at.Sub(stopped).Round(time.Millisecond))
	}
	if err := <-returned; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// serveUntilServing starts Serve with so and waits until bench serves;
// cancelStop is serve's Ctrl-C, and returned gets what Serve returns.
func serveUntilServing(t *testing.T, so ServeOptions, bench *capturingBench) (cancelStop context.CancelFunc, returned <-chan error) {
	t.Helper()
	stop, cancelStop := context.WithCancel(context.Background())
	t.Cleanup(cancelStop)
	ret := make(chan error, 1)
	go func() { ret <- Serve(context.Background(), stop, so) }()
	select {
	case <-bench.got:
	case err := <-ret:
		t.Fatalf("Serve returned before serving: %v", err)
	}
	return cancelStop, ret
}
