package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
)

// After a kernel panic the board prints its backtrace, then reboots (panic=-1);
// the run waits this long for the rest of the message before it judges.
const panicGrace = 2 * time.Second

// pollEvery is how often a target that knows its power state is asked.
const pollEvery = time.Second

// consoleGrace is how long a console that went away (a USB serial adapter
// unplugged, or re-enumerated after a glitch) has to come back before the
// run fails: long enough to plug an adapter back in, short of waiting out
// a run timeout of minutes for a result that can no longer be read.
var consoleGrace = 15 * time.Second

// watcher follows one boot on the console and the servers.
type watcher struct {
	r   *run
	ctx context.Context
	col *frame.Collector
	// stepped is set when the board made a step of a run that has
	// several (the route benchmark's configurations): the run timeout
	// holds per step.
	stepped bool

	hello    bool   // the board has reported
	kernel   bool   // the kernel has started
	last     string // the last printable console line
	lastAt   time.Time
	panicked string // the panic line, once the kernel panicked
	oops     string // an Oops or BUG the kernel reported on the way
	// firmwareClock is the clock the firmware announced last before the
	// kernel (0: none).
	firmwareClock boards.MHz
	// firmwareErr is the first error a boot ROM printed (PXE-E53: no boot
	// filename): the likely reason when no kernel ever comes.
	firmwareErr string
	banners     map[string]bool
	ignored     map[string]bool // MACs whose DHCP requests were not ours, said once
	// throttled is set once the board's throttling watch showed it
	// slowing down, said as it happened.
	throttled bool
	// lost is the note that the console went away, until it is back;
	// lostGrace ends the run when it is not back in time.
	lost      string
	lostGrace <-chan time.Time
}

// watch follows the boot until the board reports its result, fails, or
// runs out of time, and says why in a classified error.
func (r *run) watch(ctx context.Context, lines <-chan serialctl.Line, events <-chan netboot.Event) error {
	w := &watcher{
		r: r, ctx: ctx, col: frame.NewCollector(string(r.rec.ID)), lastAt: time.Now(),
		kernel: r.stage == "kernel", banners: map[string]bool{}, ignored: map[string]bool{},
		firmwareClock: r.announcedBefore,
	}
	deadline := time.NewTimer(r.o.BootTimeout)
	defer deadline.Stop()
	var steps <-chan Step
	if r.host != nil {
		steps = r.host.Steps()
	}
	var poll <-chan time.Time
	ps, knowsPower := r.o.Target.(PowerState)
	if knowsPower {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return interruption(ctx)
		case <-deadline.C:
			return w.timedOut()
		case <-poll:
			if ps.PoweredOff(ctx) {
				return w.afterPowerOff(ctx, lines)
			}
		case e := <-events:
			w.netEvent(e)
		case step := <-steps:
			if err := step(); err != nil {
				return err
			}
			deadline.Reset(r.o.RunTimeout)
		case err := <-r.driven:
			r.driven = nil
			if err != nil {
				return err
			}
		case <-w.lostGrace:
			return w.consoleLost()
		case l, ok := <-lines:
			if !ok {
				lines = nil // the console ended; the deadline still stands
				continue
			}
			if l.Lost || l.Back {
				w.consoleNote(l)
				continue
			}
			if l.Cut {
				// Half a line, cut by the console's loss, which the
				// next line notes: the loss decides the run, not a
				// frame that lost its end with it.
				continue
			}
			hadHello, hadPanic := w.hello, w.panicked != ""
			if err, done := w.line(l); done {
				return err
			}
			switch {
			case w.panicked != "" && !hadPanic:
				deadline.Reset(panicGrace)
			case w.hello && !hadHello, w.stepped:
				w.stepped = false
				deadline.Reset(r.o.RunTimeout)
			}
		}
	}
}

// line takes one console line; done says the run is decided.
func (w *watcher) line(l serialctl.Line) (err error, done bool) {
	r, text := w.r, l.Text
	// mark judges with the line before this one as the last seen.
	if err := w.mark(text); err != nil {
		return err, true
	}
	w.announcedClock(text)
	if p := serialctl.Printable(text); p != "" {
		w.last, w.lastAt = p, time.Now()
	}
	ev, ferr := w.col.Feed(text)
	switch {
	case ferr != nil:
		return w.classifyEnd(r.result(w.col, ev, ferr)), true
	case ev == frame.EventHello:
		return w.helloArrived()
	case ev == frame.EventProgress:
		r.showProgress(w.col.Output(), l.Time)
	case ev == frame.EventWatch:
		w.watchArrived()
	case (ev == frame.EventReady || ev == frame.EventCounters) && r.host != nil:
		w.stepped = ev == frame.EventReady
		if err := r.host.Board(w.ctx, ev, w.col.Result()); err != nil {
			return err, true
		}
	case ev == frame.EventDone, ev == frame.EventFailed:
		return r.result(w.col, ev, nil), true
	}
	return nil, false
}

// mark notes what a console line says about the boot's stage, and fails
// the run on a reset: a firmware or bootloader starting again after the
// kernel did.
func (w *watcher) mark(text []byte) error {
	m, ok := serialctl.Classify(text)
	if !ok {
		return nil
	}
	r := w.r
	line := serialctl.Printable(text)
	switch m.Kind {
	case serialctl.Firmware:
		if w.panicked != "" {
			// A panicking kernel reboots the board (panic=-1): the
			// panic is the cause, the firmware only its echo.
			return failf(FailPanic, !w.hello, "%s", w.panicked)
		}
		if w.kernel {
			return failf(FailReset, !w.hello, "the board reset: %s started again after the kernel had (last line before: %q)", m.Name, clip(w.last, 120))
		}
		if !w.banners[m.Name] {
			w.banners[m.Name] = true
			r.say("firmware", "%s", clip(line, 100))
		}
	case serialctl.FirmwareError:
		if w.firmwareErr == "" {
			w.firmwareErr = line
		}
		r.say("firmware", "%s", clip(line, 110))
	case serialctl.Handoff, serialctl.KernelStart:
		if !w.kernel {
			w.kernel = true
			r.enter("kernel")
		}
		r.say("kernel", "%s", clip(line, 100))
	case serialctl.KernelPanic:
		if w.panicked == "" {
			// The mark's name, not the line: a kernel message can start
			// in the middle of a bootloader's line.
			w.panicked = "Kernel panic - not syncing: " + m.Name
			r.say("kernel", "%s", clip(w.panicked, 110))
		}
	case serialctl.KernelOops, serialctl.KernelBug:
		if w.oops == "" {
			w.oops = m.Kind.String() + ": " + m.Name
			r.say("kernel", "%s", clip(w.oops, 110))
		}
	}
	return nil
}

// consoleNote follows the console going away and coming back.
func (w *watcher) consoleNote(l serialctl.Line) {
	text := strings.TrimSuffix(strings.TrimPrefix(string(l.Text), "[bootbench: "), "]")
	w.r.say("console", "%s", text)
	if l.Back {
		w.lost, w.lostGrace = "", nil
		return
	}
	w.lost, w.lostGrace = text, time.After(consoleGrace)
}

// consoleLost ends a run whose console went away and stayed away: what
// the board sends now reaches no one.
func (w *watcher) consoleLost() error {
	return failf(FailConsoleLost, !w.hello, "%s at the %s stage, and not back within %s: was its adapter unplugged?", w.lost, w.r.stage, consoleGrace)
}

// helloArrived checks the board's report: the clock it runs at first.
func (w *watcher) helloArrived() (error, bool) {
	r := w.r
	res := w.col.Result()
	h := res.Hello
	r.rec.Hello = res.HelloRaw
	w.hello = true
	r.enter("bench")
	r.say("bench", "board up: %s, kernel %s, cpu %q, BogoMIPS %s%s; running %s", h.Arch, h.Kernel, h.CPU, h.BogoMIPS, timersPhrase(h), h.Bench)
	reported, check, err := judgeClock(r.o.Board.Profile, r.o.Clock, w.firmwareClock, h)
	r.rec.ClockReportedMHz, r.rec.ClockCheck = reported, check
	if err != nil {
		return failf(FailClockMismatch, false, "%v", err), true
	}
	note, err := checkGoRuntime(r.o.Benchmark, h)
	if err != nil {
		return failf(FailGoRuntime, false, "%v", err), true
	}
	if note != "" {
		r.say("bench", "%s", note)
	}
	if r.host != nil {
		r.host.Hello(w.ctx)
	}
	switch check {
	case "verified":
		if r.o.Board.Profile.ClockMethod.SetInFirmware() {
			r.say("clock", "%s, announced by the firmware and confirmed by the board (BogoMIPS %s)", r.o.Clock, h.BogoMIPS)
			break
		}
		r.say("clock", "%s, confirmed by the board", r.o.Clock)
	case "unverified":
		r.say("clock", "%s asked for; nothing on the board can confirm it (stored as unverified)", r.o.Clock)
	}
	return nil, false
}

// watchArrived says, once and as it happens, that the board's throttling
// watch saw it slow down; the run's verdict comes when it is stored.
func (w *watcher) watchArrived() {
	if w.throttled {
		return
	}
	res := w.col.Result()
	if t := judgeThrottle(boards.MHz(res.Hello.ClockRequestedMHz), res.Zones, res.Samples); t != nil {
		w.throttled = true
		w.r.say(results.EventThrottle, "the board is slowing down: %s", t)
	}
}

func (w *watcher) timedOut() error {
	if w.panicked != "" {
		return failf(FailPanic, !w.hello, "%s", w.panicked)
	}
	kind, waiting, limit := FailBootTimeout, "hello", w.r.o.BootTimeout
	if w.hello {
		kind, waiting, limit = FailRunTimeout, "result", w.r.o.RunTimeout
	}
	msg := fmt.Sprintf("no %s from the board within %s", waiting, limit)
	switch {
	case w.last == "":
		msg += " (its console stayed silent: check the serial wiring, the port and the baud rate)"
	default:
		msg += fmt.Sprintf(" (console silent for %.0fs since the %s stage; last line: %q)", time.Since(w.lastAt).Seconds(), w.r.stage, clip(w.last, 120))
	}
	if w.oops != "" {
		msg += "; the kernel reported " + clip(w.oops, 100)
	}
	if w.firmwareErr != "" && !w.kernel {
		msg += "; the firmware said " + clip(w.firmwareErr, 100)
	}
	return failf(kind, !w.hello, "%s", msg)
}

// afterPowerOff reads what the console still holds once the board is off,
// then judges. A pty whose other end is gone does not always report it, so
// the last bytes get a moment rather than a wait for an end.
func (w *watcher) afterPowerOff(ctx context.Context, lines <-chan serialctl.Line) error {
	grace := time.After(time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return w.poweredOff()
			}
			if err, done := w.line(l); done {
				return err
			}
		case <-grace:
			return w.poweredOff()
		case <-ctx.Done():
			return interruption(ctx)
		}
	}
}

func (w *watcher) poweredOff() error {
	if w.panicked != "" {
		return failf(FailPanic, !w.hello, "%s", w.panicked)
	}
	waiting := "hello"
	if w.hello {
		waiting = "result"
	}
	return failf(FailPoweredOff, !w.hello, "the board powered off before its %s (last console line: %q)", waiting, clip(w.last, 120))
}

// classifyEnd marks a failure that happened before the board reported as
// one a new boot may mend.
func (w *watcher) classifyEnd(err error) error {
	if f, ok := err.(*Failure); ok && !w.hello {
		f.BeforeHello = true
	}
	return err
}

// answeredAddress is what a DHCP answer says of the board's address: a
// proxyDHCP answer carries none (the segment's own DHCP server gives it),
// nor does a NAK.
func answeredAddress(e netboot.Event) string {
	switch {
	case e.IP != nil:
		return e.IP.String()
	case strings.HasPrefix(e.Kind, "proxy-"):
		return "its address from the segment's DHCP server"
	}
	return "no address"
}

func (w *watcher) netEvent(e netboot.Event) {
	r := w.r
	switch e.Kind {
	case "dhcp-offer", "bootp-reply", "proxy-offer":
		r.enter("netboot")
		r.say("dhcp", "%s to %s: %s, boot file %s (options %s)", e.Kind, e.MAC, answeredAddress(e), e.File, e.Options)
	case "dhcp-ack", "dhcp-nak", "proxy-ack":
		r.say("dhcp", "%s to %s: %s", e.Kind, e.MAC, answeredAddress(e))
	case "tftp-done", "http-done":
		opts := "" // what a TFTP transfer negotiated: its block and window sizes
		if e.Options != "" {
			opts = " " + e.Options
		}
		r.say(results.EventKind(strings.TrimSuffix(e.Kind, "-done")), "%s %s in %.2fs (%s/s)%s", e.File, mib(e.Bytes), e.Duration.Seconds(), mib(int64(float64(e.Bytes)/max(e.Duration.Seconds(), 1e-3))), opts)
		if slices.Contains(boot.ImageNames(r.o.Board), e.File) {
			r.enter("kernel")
			w.kernel = true
			r.say("kernel", "booting %s", r.rec.Kernel)
		}
	case "tftp-error", "http-error", "dhcp-error":
		r.say("netboot", "%s %s: %v", e.Kind, e.File, e.Err)
	case "ignored":
		w.ignoredRequest(e)
	}
}

// ignoredRequest says once per MAC that a request was not answered: on a
// real bench the commonest mistake is a MAC mistyped in the inventory.
func (w *watcher) ignoredRequest(e netboot.Event) {
	if e.MAC == nil || w.ignored[e.MAC.String()] || e.MAC.String() == w.r.o.Board.MAC.String() {
		return
	}
	w.ignored[e.MAC.String()] = true
	class := ""
	if e.VendorClass != "" {
		class = fmt.Sprintf(" (%s)", e.VendorClass)
	}
	w.r.say("dhcp", "not answering %s%s: not %s's MAC %s (is the inventory's mac right?)", e.MAC, class, w.r.o.Board.Name, w.r.o.Board.MAC)
}

// showProgress echoes the benchmark's own complete output lines as they
// arrive, so a long run is visibly alive, and notes when each arrived
// (at), for the power each test drew.
func (r *run) showProgress(out []byte, at time.Time) {
	for {
		i := strings.IndexByte(string(out[r.shown:]), '\n')
		if i < 0 {
			return
		}
		line := strings.TrimSpace(string(out[r.shown : r.shown+i]))
		r.shown += i + 1
		if line != "" {
			r.say("bench", "| %s", clip(line, 110))
		}
		if line != "" && r.energy != nil {
			r.energy.output(at, line)
		}
	}
}

// interruption is why ctx ended a watch: a classified failure its cause
// names (the board booted again), else an interruption.
func interruption(ctx context.Context) error {
	var f *Failure
	if errors.As(context.Cause(ctx), &f) {
		return f
	}
	return ErrInterrupted
}

// timersPhrase names the board's tick device and clocksource for the
// progress line, when the board sent them.
func timersPhrase(h frame.HelloBody) string {
	if h.ClockEvent == "" && h.ClockSource == "" {
		return ""
	}
	return fmt.Sprintf(", ticks from %s, time from %s", orUnknown(h.ClockEvent), orUnknown(h.ClockSource))
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
