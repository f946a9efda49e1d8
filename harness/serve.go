package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
	"github.com/bootbench/bootbench/serialctl/fwclock"
)

// ServeOptions describe a bench served as a daemon: every board of the
// inventory at once, each run starting when the board asks to boot (someone
// plugged it in or power-cycled it), not when bootbench powers it on.
type ServeOptions struct {
	// Bench serves every board's netboot.
	Bench  boot.Bench
	Boards []Served

	// Rig holds what every run shares: builders, store, progress. Its
	// Target is each Served's; its Bench serves, not the runs.
	Rig Rig
	// Job holds what every board's job shares: source, transport. Its
	// Board, Benchmark, Clock, Rep, Seconds and Algs are set per run from
	// each Served's inventory job.
	Job plan.Job

	// Console, when set, gets every line of every board's console as it
	// is read, between runs too, for a live view of the consoles. It is
	// called from the console's reader and must not block.
	Console func(board string, l serialctl.Line)
	// Done gets every stored run, as it is stored.
	Done func(*results.Run, error)
	// Unknown gets a MAC that is not in the inventory and asked to boot,
	// once per MAC, and for the first few new MACs of a minute only
	// (see hintsPerInterval). It gets no answer.
	Unknown func(UnknownBoard)
	// UnknownMore gets, once per interval, how many more such MACs asked
	// to boot in it without going to Unknown.
	UnknownMore func(n int, interval time.Duration)
}

// Served is one board of a served bench.
type Served struct {
	Board boards.Board
	// Target gives the board's console, open for the whole session;
	// serve never switches its power.
	Target Target
	Job    boards.Job
}

// UnknownBoard is a machine the inventory does not know that asked to boot.
type UnknownBoard struct {
	MAC         net.HardwareAddr
	VendorClass string // DHCP option 60
	ClientArch  string // DHCP option 93, e.g. "x86 BIOS", "EFI x86-64"
}

// errBootedAgain ends a run whose board asked to boot again.
var errBootedAgain = &Failure{Kind: FailReset, Err: errors.New("the board booted again before its result (it asked DHCP for a new boot)")}

// Serve answers the boards' boots until stop is done, then lets the runs in
// progress finish (each within its timeouts), stores them, and returns.
// Cancelling ctx ends those runs at once, stored as interrupted. Nothing it
// started (servers, consoles) outlives it.
func Serve(ctx, stop context.Context, o ServeOptions) error {
	sweepStale(o.Rig.Builders.CacheDir)
	s := &server{o: o, ctx: ctx, stop: stop, byMAC: map[string]*servedBoard{}, byKey: map[boot.Key]*servedBoard{}, unknown: newUnknownHints(o.Unknown, o.UnknownMore)}
	defer s.closeBoards()
	defer s.unknown.close()
	transport, err := plan.ParseTransport(string(o.Job.Transport))
	if err != nil {
		return err
	}
	booter := boot.NewBooter(o.Bench.ServerIP(), o.Bench.Mask(), transport)
	for _, sv := range o.Boards {
		b, err := s.prepare(ctx, sv)
		if err != nil {
			return err
		}
		s.byMAC[sv.Board.MAC.String()] = b
		s.byKey[boot.KeyOf(sv.Board)] = b
		booter.AddServed(sv.Board, b.answer)
	}
	stopServers, err := o.Bench.Serve(ctx, booter, s.report)
	if err != nil {
		return err
	}
	defer stopServers()
	select {
	case <-stop.Done():
		s.endUnbooted()
	case <-ctx.Done():
	}
	s.wait()
	return nil
}

// errStoppedUnbooted ends, when serving stops, a run whose board has not
// got past its netboot: nothing of its benchmark would be lost, and
// waiting for it would mean waiting out its boot timeout (a board that
// asked once and never booted held one Ctrl-C for 115 s).
var errStoppedUnbooted = fmt.Errorf("%w: serving stopped before the board got past its netboot", ErrInterrupted)

// endUnbooted ends the runs not yet past their netboot; the others finish
// within their timeouts.
func (s *server) endUnbooted() {
	for _, b := range s.byMAC {
		b.mu.Lock()
		if a := b.active; a != nil && !a.r.pastNetboot() {
			a.cancel(errStoppedUnbooted)
		}
		b.mu.Unlock()
	}
}

// server is one serve session.
type server struct {
	o     ServeOptions
	ctx   context.Context // ends runs at once
	stop  context.Context // ends answering
	byMAC map[string]*servedBoard
	byKey map[boot.Key]*servedBoard

	unknown *unknownHints
	runs    sync.WaitGroup
}

// servedBoard is one board, its console open for the session.
type servedBoard struct {
	s          *server
	sv         Served
	con        *serialctl.Console
	built      *plan.Built // what every boot loads; the command line is each run's
	forwarding sync.WaitGroup

	mu     sync.Mutex
	active *servedRun
	next   int // how many boots the job's plan has handed out
	// clockSet: the firmware was told the clock of boot next and has not
	// asked to boot since (see driveFirmware).
	clockSet bool
}

// servedRun is one boot of a served board.
type servedRun struct {
	r        *run
	spec     *boot.Spec // what its boot loads
	lines    chan serialctl.Line
	events   chan netboot.Event
	cancel   context.CancelCauseFunc
	done     chan struct{}
	startOff int // where its transcript starts in the console's
}

// prepare builds the board's image, finds its kernel, opens its console
// and starts reading it.
func (s *server) prepare(ctx context.Context, sv Served) (*servedBoard, error) {
	switch m := sv.Board.Profile.Boot; m {
	case boards.BootUBootSerial, boards.BootCFE:
		// Nothing asks for a boot until the console is driven, and serve
		// does not power boards: the board could never start a run here.
		return nil, fmt.Errorf("board %s: boot method %s is driven over the console from power-on; run it with bootbench run", sv.Board.Name, m)
	}
	if err := boot.Servable(sv.Board); err != nil {
		return nil, err
	}
	b := &servedBoard{s: s, sv: sv}
	// Every clock of the job, checked before a board asks.
	for n := range s.sweep(sv).Width() {
		if _, err := s.runConfig(sv, n); err != nil {
			return nil, fmt.Errorf("board %s: %w", sv.Board.Name, err)
		}
	}
	o, _ := s.runConfig(sv, 0)
	built, err := o.Builders.Build(ctx, o.Job)
	if err != nil {
		return nil, err
	}
	b.built = built
	if b.con, err = openConsole(ctx, sv.Target); err != nil {
		return nil, fmt.Errorf("board %s: %w", sv.Board.Name, err)
	}
	b.forwarding.Add(1)
	go b.forward()
	if sv.Board.Profile.ClockMethod == boards.ClockRouterBOOTMenu {
		b.forwarding.Add(1)
		go b.driveFirmware(s.stop, b.con.Offset())
	}
	return b, nil
}

// sweep is a served board's runs: its inventory job on the session's
// job, the clock settings interleaved, boot after boot. serve answers every
// boot, past the rounds the job's reps ask for too: it never powers a
// board, so it never stops one.
func (s *server) sweep(sv Served) plan.Sweep {
	return SweepOf(s.o.Job, sv)
}

// SweepOf is the runs of board sv served with job: what every boot of it
// measures (its inventory job's bench, algorithms, seconds), the clocks
// in turn.
func SweepOf(job plan.Job, sv Served) plan.Sweep {
	j := sv.Job
	job.Board, job.Benchmark, job.Algs, job.AllowOvervoltage = sv.Board, j.Bench, j.Algs, j.AllowOvervoltage
	job.Seconds = time.Duration(j.Seconds * float64(time.Second))
	return plan.Sweep{Job: job, Clocks: j.Clocks, Reps: j.Reps}
}

// runConfig is the board's nth boot: its sweep's nth run.
func (s *server) runConfig(sv Served, n int) (config, error) {
	o := config{Job: s.sweep(sv).At(n), Rig: s.o.Rig}
	o.Target, o.Bench = sv.Target, nil
	return o, o.settle()
}

// forward hands console lines to the run in progress; between runs they
// only go to the console's transcript.
func (b *servedBoard) forward() {
	defer b.forwarding.Done()
	for l := range b.con.Lines() {
		if tap := b.s.o.Console; tap != nil {
			tap(b.sv.Board.Name, l)
		}
		b.mu.Lock()
		a := b.active
		b.mu.Unlock()
		if a == nil {
			continue
		}
		select {
		case a.lines <- l:
		case <-a.done:
		}
	}
}

// answer is the boot the board gets when it asks, as the Booter wants it:
// nothing once serving stops, and a failed start is told, not answered.
func (b *servedBoard) answer() (*boot.Spec, error) {
	s := b.s
	if s.stop.Err() != nil {
		return nil, errors.New("serving stopped")
	}
	spec, err := b.boot(s.ctx)
	if err != nil && s.o.Rig.Progress != nil {
		fmt.Fprintf(s.o.Rig.Progress, "bootbench: %s: %v\n", b.sv.Board.Name, err)
	}
	return spec, err
}

// boot is the board asking to boot: the run in progress goes on if it is
// still netbooting (a PXE ROM and then iPXE both ask), else a new run
// starts. It returns what the boot loads.
func (b *servedBoard) boot(ctx context.Context) (*boot.Spec, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a := b.active; a != nil {
		if !a.r.pastNetboot() {
			return a.spec, nil
		}
		a.cancel(errBootedAgain)
		b.mu.Unlock()
		<-a.done
		b.mu.Lock()
	}
	o, err := b.s.runConfig(b.sv, b.next)
	if err != nil {
		return nil, err
	}
	b.next++
	b.clockSet = false
	r := newRun(o)
	before, _ := lookback(b.con, b.con.Offset())
	_, r.announcedBefore = bootFirmware(before, len(before))
	r.rec.Kernel, r.rec.ImageDigest = filepath.Base(b.built.Kernel), "sha256:"+b.built.Image.Digest
	if err := b.startRun(r); err != nil {
		return nil, err
	}
	spec := r.bootSpec(b.built)
	rctx, cancel := context.WithCancelCause(ctx)
	a := &servedRun{r: r, spec: spec, lines: make(chan serialctl.Line, 1024), events: make(chan netboot.Event, 64),
		cancel: cancel, done: make(chan struct{}), startOff: b.con.Offset()}
	b.active = a
	b.s.runs.Add(1)
	go b.watchRun(rctx, a)
	return spec, nil
}

// driveFirmware sets, each time the board's firmware offers its setup as
// it starts, the clock of the board's next boot and a one-time Ethernet
// boot (RouterBOOT's menu): someone power-cycles the board, serve types.
// A firmware that restarts itself to take the new clock is left to boot.
// It ends when serving stops, or at a menu it does not know, which it
// says: the board then boots as its firmware was left. It reads the
// console from offset from, where serving began.
func (b *servedBoard) driveFirmware(stop context.Context, from int) {
	defer b.forwarding.Done()
	p, name := b.sv.Board.Profile, b.sv.Board.Name
	say := func(format string, args ...any) { b.s.note(name, "console", format, args...) }
	for off := from; ; {
		prompt, err := b.con.Expect(stop, off, fwclock.SetupPrompt)
		if err != nil {
			return
		}
		b.mu.Lock()
		set, n := b.clockSet, b.next
		b.mu.Unlock()
		if set {
			off = prompt
			continue
		}
		o, _ := b.s.runConfig(b.sv, n) // checked in prepare
		mhz := o.Clock
		if mhz == 0 {
			mhz = p.DefaultClock
		}
		setter := fwclock.For(p.ClockMethod, b.con, say, time.Second)
		if _, err := setter.SetClock(stop, off, mhz); err != nil {
			if stop.Err() == nil {
				say("%s: %v; the board boots as its firmware was left", name, err)
			}
			var ref *fwclock.Refusal
			if errors.As(err, &ref) {
				return
			}
		} else {
			b.mu.Lock()
			b.clockSet = b.next == n
			b.mu.Unlock()
		}
		off = prompt
	}
}

// startRun says the run has started and applies its clock.
func (b *servedBoard) startRun(r *run) error {
	r.say("run", "%s: %s asked to boot; at %s, bench %s", r.rec.ID, r.o.Board.Name, r.o.Clock, r.o.Benchmark)
	return r.applyClock(context.Background())
}

// watchRun follows one boot to its stored result.
func (b *servedBoard) watchRun(ctx context.Context, a *servedRun) {
	defer b.s.runs.Done()
	r := a.r
	r.enter("netboot")
	err := r.watch(ctx, a.lines, a.events)
	r.lookback, r.rec.Transcript = lookback(b.con, a.startOff)
	r.bootFrom = len(r.lookback)
	rec, err := r.finish(ctx, err)
	b.mu.Lock()
	if b.active == a {
		b.active = nil
	}
	b.mu.Unlock()
	close(a.done)
	a.cancel(nil)
	if b.s.o.Done != nil {
		b.s.o.Done(rec, err)
	}
}

// event routes a server's event to the run of the board it concerns.
func (b *servedBoard) event(e netboot.Event) {
	b.mu.Lock()
	a := b.active
	b.mu.Unlock()
	if a == nil {
		return
	}
	select {
	case a.events <- e:
	default:
	}
}

// pastNetboot reports whether the board got beyond fetching its boot: a
// DHCP request now means it booted again.
func (r *run) pastNetboot() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stage == "kernel" || r.stage == "bench"
}

// report routes the servers' events to the board each names (the
// Booter's Reporter names it).
func (s *server) report(e netboot.Event) {
	if e.Kind == "ignored" {
		s.ignored(e)
		return
	}
	if b := s.byKey[boot.Key(e.Board)]; b != nil {
		b.event(e)
	}
}

// ignored tells about a MAC the inventory lacks, once, within the hints'
// rate limit.
func (s *server) ignored(e netboot.Event) {
	if e.MAC == nil || s.byMAC[e.MAC.String()] != nil {
		return
	}
	s.unknown.add(UnknownBoard{MAC: e.MAC, VendorClass: e.VendorClass, ClientArch: e.ClientArch})
}

// wait lets the runs in progress finish.
func (s *server) wait() { s.runs.Wait() }

func (s *server) closeBoards() {
	for _, b := range s.byMAC {
		if b.con != nil {
			b.con.Close()
			b.forwarding.Wait()
		}
	}
}

// note reports a step a served board took between runs: as an event
// without a run, and on the progress writer.
func (s *server) note(board string, kind results.EventKind, format string, args ...any) {
	msg := redact.Text(fmt.Sprintf(format, args...))
	if s.o.Rig.Events != nil {
		s.o.Rig.Events(Event{Time: time.Now(), Board: board, Stage: kind, Msg: msg})
	}
	if s.o.Rig.Progress != nil {
		fmt.Fprintf(s.o.Rig.Progress, "%s: %-8s %s\n", board, kind, msg)
	}
}
