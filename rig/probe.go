package rig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/internal/quietseg"
	"github.com/bootbench/bootbench/netboot"
)

// rivalProbe is how long bootbench listens for another DHCP server on a
// bench segment before it serves as the segment's DHCP server. dnsmasq
// answers a new client's first DISCOVER only after 3 s (it pings the
// address first), so 2 s would miss the commonest rival.
const rivalProbe = 4 * time.Second

// errRival is a bench segment that has a DHCP server of its own.
var errRival = errors.New("another DHCP server answers on the bench segment")

// Probe is one command's probe for another DHCP server on the bench
// segment, running on its own while the command gets ready.
type Probe struct {
	done   chan struct{} // closed with err set
	err    error
	cancel context.CancelFunc
	// early: the segment was heard quiet within quietseg.Fresh, and the
	// command may switch boards on before this probe's verdict, which
	// then ends a run it refuses.
	early bool

	iface string
	mac   net.HardwareAddr // nil: the segment's verdicts are not kept
	mem   quietseg.Memory
	note  func(string)
}

// StartProbe starts probing iface, as the first step of a command that
// serves a bench segment (it needs only the interface: the probe asks from
// its MAC, with or without an address). mayTrust lets boards be switched
// on before the verdict when the segment was heard quiet minutes ago (run
// and ci, whose runs a late refusal ends; serve waits, once).
func StartProbe(ctx context.Context, cache, iface string, mayTrust bool, note func(string)) *Probe {
	pctx, cancel := context.WithCancel(ctx)
	p := &Probe{done: make(chan struct{}), cancel: cancel, iface: iface, note: note,
		mem: quietseg.Memory{Dir: filepath.Join(cache, "quiet")}}
	if ifi, err := net.InterfaceByName(iface); err == nil {
		p.mac = ifi.HardwareAddr
	}
	msg := fmt.Sprintf("listening %s on %s for another DHCP server", rivalProbe, iface)
	if ago, ok := p.mem.QuietAgo(iface, p.mac, time.Now()); ok && mayTrust && p.mac != nil {
		p.early = true
		msg += fmt.Sprintf(" (none answered %s ago: the board is switched on meanwhile, and a server heard now ends the run)", ago.Round(time.Second))
	}
	note(msg)
	go func() {
		defer close(p.done)
		p.err = probeRival(pctx, iface)
		switch {
		case p.err == nil:
			if p.mac != nil {
				if err := p.mem.Quiet(iface, p.mac, time.Now()); err != nil {
					note(fmt.Sprintf("%v (the next command waits for its own verdict before power-on)", err))
				}
			}
		case !errors.Is(p.err, context.Canceled):
			p.heard() // a rival, or a probe that could not tell: trust nothing
		}
	}()
	return p
}

// heard forgets that the probe's segment was quiet: a DHCP server was heard
// on it, or it could not be probed.
func (p *Probe) heard() {
	if p.mac == nil {
		return
	}
	if err := p.mem.Heard(p.iface, p.mac); err != nil {
		p.note(fmt.Sprintf("%v (the next command may switch its board on before its verdict)", err))
	}
}

// wait is the probe's verdict: nil when no other server answered. A
// verdict already in is given even if ctx has ended meanwhile.
func (p *Probe) wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the probe if it still runs.
func (p *Probe) stop() {
	p.cancel()
	<-p.done
}

// probedBench is a bench on a segment that must have no other DHCP server:
// Serve waits for the probe's verdict (or, on a segment heard quiet within
// quietseg.Fresh, serves at once and the harness ends the run the verdict
// refuses: boot.Vetted), and a watch, once the probe found none, reports a
// server that starts later.
type probedBench struct {
	*boot.NetBench
	probe *Probe

	mu      sync.Mutex
	watched chan struct{} // closed when the watch runs or will not
	stopped bool
	endFn   func()

	// late is a server the watch heard after the probe's quiet verdict:
	// it refuses the runs still going as the probe's own verdict would.
	lateMu sync.Mutex
	late   error
}

// watch starts the watch for offers once the probe says the segment is
// quiet: the probe's own offers are not news.
func (pb *probedBench) watch(note func(string)) {
	pb.watched = make(chan struct{})
	iface := pb.Net.Interface()
	go func() {
		defer close(pb.watched)
		if pb.probe.wait(context.Background()) != nil {
			return
		}
		pb.mu.Lock()
		defer pb.mu.Unlock()
		if pb.stopped {
			return
		}
		end, err := netboot.WatchOffers(iface, pb.ServerIP(), func(o netboot.ForeignOffer) {
			note(fmt.Sprintf("%s on %s: two DHCP servers give the boards different answers (stop it, or run with --proxy)", o, iface))
			pb.probe.heard() // the next command waits for its verdict again
			pb.heardLate(o, iface)
		})
		if err != nil {
			note(fmt.Sprintf("no watch for other DHCP servers on %s: %v", iface, err))
			return
		}
		note(fmt.Sprintf("no other DHCP server answered on %s; watching for one that starts", iface))
		pb.endFn = end
	}()
}

// stopWatch ends the watch; the probe has ended.
func (pb *probedBench) stopWatch() {
	<-pb.watched
	pb.mu.Lock()
	defer pb.mu.Unlock()
	pb.stopped = true
	if pb.endFn != nil {
		pb.endFn()
	}
}

// Serve waits for the probe, then serves unless it found a rival; on a
// segment heard quiet minutes ago it serves at once (see Refused).
func (pb *probedBench) Serve(ctx context.Context, b *boot.Booter, report netboot.Reporter) (func(), error) {
	if !pb.probe.early {
		if err := pb.probe.wait(ctx); err != nil {
			return nil, err
		}
	}
	return pb.NetBench.Serve(ctx, b, report)
}

// Refused implements boot.Vetted: the probe's verdict, or a server the
// watch heard since it found none. dnsmasq answers a DISCOVER only after
// pinging the address for 3 s, and later still on a busy segment or host:
// its answer to the probe itself can come after the probe stopped
// listening, and is a rival all the same.
func (pb *probedBench) Refused(ctx context.Context) error {
	if err := pb.probe.wait(ctx); err != nil {
		return err
	}
	pb.lateMu.Lock()
	defer pb.lateMu.Unlock()
	return pb.late
}

// heardLate keeps the first server the watch heard, as the probe's verdict
// words it.
func (pb *probedBench) heardLate(o netboot.ForeignOffer, iface string) {
	pb.lateMu.Lock()
	defer pb.lateMu.Unlock()
	if pb.late == nil {
		pb.late = &SetupError{fmt.Errorf("%w: %s on %s, heard after the probe found none; two DHCP servers would give the boards different answers. Run with --proxy: bootbench then answers only the boot (proxyDHCP) and that server hands out the addresses", errRival, o, iface)}
	}
}

// probeRival refuses to be a second DHCP server on a segment that has one.
func probeRival(ctx context.Context, iface string) error {
	rival, err := netboot.ProbeDHCP(ctx, iface, rivalProbe)
	if err != nil {
		return err
	}
	if rival != nil {
		return &SetupError{fmt.Errorf("%w: %s on %s; two DHCP servers would give the boards different answers. Run with --proxy: bootbench then answers only the boot (proxyDHCP) and that server hands out the addresses", errRival, rival, iface)}
	}
	return nil
}
