// Package harness runs one benchmark on one board, from power-on to stored
// result, and files the outcome, whatever it is, in the results store:
//
//	build image → prepare the bench → power on → watch the console → classify → store
//
// It drives a board through two interfaces, a Target (power and console) and
// a Bench (the netboot it serves), so a board on a real bench (a serial
// port and a power switch bootbench did not create) and a virtual QEMU board
// go the same way. It imports neither concretely. Everything a run starts
// (servers, the board's power) ends before Run returns; a run that never got
// going, or whose frames went corrupt, is booted again (Options.Retries).
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/redact"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
)

// Rig is what a run measures with: the board's target, the bench that
// serves its netboot, the builders of what it boots, where the finished
// run is saved. What it measures is the job (plan.Job).
type Rig struct {
	Target Target
	// Bench serves the netboot; nil for a board that boots without the
	// network (qemu-direct).
	Bench boot.Bench
	// Operator is asked to set a clock by hand (clock method manual).
	Operator Operator
	// Host drives a benchmark the host takes part in (the route
	// benchmark's networks); nil where the bench has none.
	Host HostDriver
	// Firmware measures a board under its own firmware (image: none)
	// from the host; nil for a netbooted board.
	Firmware FirmwareHost
	Builders plan.Builders

	// Store keeps every run: a results/store.Store, or a spool in front
	// of one (results/spool); nil keeps none.
	Store    results.Saver
	Progress io.Writer // one line per stage; nil for silence
	// Events, when set, gets every progress step as it happens, for
	// displays other than Progress's line log.
	Events func(Event)
}

// config is one run's job on its rig.
type config struct {
	plan.Job
	Rig
}

// Event is one progress step of a run.
type Event struct {
	Time  time.Time
	Board string
	Run   results.RunID
	Stage results.EventKind // a stage entered or a step in it, or another event
	Msg   string
	// Bench and Clock are what the run measures: the benchmark's name
	// and the clock asked for, so a display need not read them from Msg.
	Bench string
	Clock boards.MHz
	// Took is the time since the run started.
	Took time.Duration
}

// Operator is the person at the bench (power.Operator has this shape).
type Operator interface {
	Ask(ctx context.Context, msg string) (confirmed bool, err error)
	Tell(msg string)
}

// ErrInterrupted is returned when the caller cancelled the run.
var ErrInterrupted = errors.New("run interrupted")

// NotStoredError is a run Rig.Store did not store, returned with the run
// so that its figures are not lost with it: the caller says so, and keeps
// or prints them. Err may say the run was kept elsewhere (a spool's
// error); Outcome is the run's own outcome, nil when it succeeded.
type NotStoredError struct {
	Run     results.RunID
	Outcome error
	Err     error
}

func (e *NotStoredError) Error() string {
	if e.Outcome == nil {
		return fmt.Sprintf("run %s was not stored: %v", e.Run, e.Err)
	}
	return fmt.Sprintf("%v (and run %s was not stored: %v)", e.Outcome, e.Run, e.Err)
}

// Unwrap gives both, so errors.Is and errors.As find the run's outcome
// (ErrInterrupted, a *Failure) and the store's error alike.
func (e *NotStoredError) Unwrap() []error {
	if e.Outcome == nil {
		return []error{e.Err}
	}
	return []error{e.Outcome, e.Err}
}

// Outcome is the run's own outcome in err, as Run returned it: err
// itself, or the outcome of a run that was not stored (nil when that run
// succeeded).
func Outcome(err error) error {
	var ns *NotStoredError
	if errors.As(err, &ns) {
		return ns.Outcome
	}
	return err
}

// Run performs job on rig, booting the board again per job.Retries, and
// stores every attempt. The returned run is the last one; err says why it
// did not succeed (the run's Reason holds the same text), or, a
// *NotStoredError, that the store did not take it. A nil run with an
// error means nothing was run or kept: setup failed before the board was
// switched on (Kind FailSetup: no image, kernel, network or console,
// which would fail every run alike), the bench was refused the segment
// (FailSetup too: another DHCP server answered, maybe after power-on,
// see boot.Vetted), or the run was interrupted before that check ended
// (ErrInterrupted).
func Run(ctx context.Context, job plan.Job, rig Rig) (*results.Run, error) {
	o := config{Job: job, Rig: rig}
	if err := o.fill(); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		rec, err := runOnce(ctx, o)
		if err == nil || rec == nil || attempt > o.Retries || !Retryable(err) || ctx.Err() != nil {
			return rec, err
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "[   retry] run %s failed: %s; booting again (%d of %d)\n", rec.ID, redact.Text(err.Error()), attempt, o.Retries)
		}
	}
}

// fill checks o and puts in the defaults.
func (o *config) fill() error {
	if o.Target == nil {
		return fmt.Errorf("board %s: no target to run on", o.Board.Name)
	}
	return o.settle()
}

// settle checks the job against its board and the rig, and puts in the
// defaults, for a run bootbench powers on and for one the board starts
// itself (serve).
func (o *config) settle() error {
	if err := o.Job.Settle(); err != nil {
		return err
	}
	if o.Board.OwnFirmware {
		if o.Firmware == nil {
			return fmt.Errorf("board %s keeps its own firmware (image: none): the %s benchmark needs the host's networks on both sides of it, which this bench does not have", o.Board.Name, o.Benchmark)
		}
		return nil
	}
	if bm, _ := benchmark.Lookup(o.Benchmark); bm.HostNetworks && o.Host == nil {
		return fmt.Errorf("board %s: the %s benchmark needs the host's networks on both sides of the board, which this bench does not have", o.Board.Name, o.Bench)
	}
	return nil
}

// run is one attempt.
type run struct {
	o     config
	start time.Time
	rec   *results.Run
	out   []byte // the benchmark's verified output

	// driven reports the end of the console steps (nil when the profile
	// has none): an error fails the boot.
	driven <-chan error

	// host drives a benchmark the host takes part in (nil for the
	// others); res is the board's verified report.
	host HostRun
	res  frame.Result

	sayMu sync.Mutex // held while a step is reported

	mu        sync.Mutex
	stageFrom time.Time
	stage     results.StageName
	shown     int // bytes of benchmark output already echoed

	// poweredOn is set once the board is switched on: a setup failure
	// before that measured and touched nothing.
	poweredOn bool

	// vetted is set once the board's bench serves it and may yet be
	// refused (boot.Vetted); refused is why it was, mid-run.
	vetted  bool
	refused error

	// measured are the host's figures of a board under its own
	// firmware, which sends none.
	measured []results.Metric

	// energy reads the board's power meter while it is on; nil when its
	// switch has none.
	energy *sampler

	// lookback is the console's text just before a served run's
	// transcript, where its firmware printed its banner before the board
	// asked to boot; nil for a run that switches its board on. bootFrom
	// is where the run's boot began in lookback and the transcript read
	// as one: power-on, or the board asking.
	lookback []byte
	bootFrom int
	// announcedBefore is the clock a served board's firmware announced
	// before it asked to boot, before the run's transcript begins.
	announcedBefore boards.MHz
}

func runOnce(ctx context.Context, o config) (*results.Run, error) {
	r := newRun(o)
	r.say("run", "%s on %s at %s, bench %s", r.rec.ID, o.Board.Name, o.Clock, o.Benchmark)
	var err error
	if o.Board.OwnFirmware {
		err = r.runFirmware(ctx)
	} else {
		err = r.boot(ctx)
	}
	if refused := r.refusal(ctx); errors.Is(refused, ErrInterrupted) {
		return nil, refused
	} else if refused != nil {
		// The bench must not have served this board at all: whatever
		// the board did is not a run. No record; the caller stops.
		return nil, refusedMidRun(refused)
	}
	if errors.Is(err, ErrFirmwareRefused) {
		// The firmware was not what the profile knows: whatever the
		// board did next is no run of the profile's. No record.
		return nil, err
	}
	if Kind(err) == FailSetup && !r.poweredOn {
		// The board was never switched on: nothing ran, and every run
		// after would fail the same way. No record; the caller stops.
		return nil, err
	}
	return r.finish(ctx, err)
}

// newRun starts the record of one run of o, under a new id.
func newRun(o config) *run {
	now := time.Now()
	return &run{o: o, start: now, rec: &results.Run{
		ID: results.NewRunID(), Board: o.Board.Name, ClockMHz: o.Clock, Rep: o.Rep,
		Bench: o.Benchmark, Route: o.Job.Route, Started: now,
	}}
}

// say reports a step of the run, as an event and on the progress writer,
// with any password a URL in it carries masked: power commands and
// device URLs come from the inventory, and events end up in logs. Steps
// come from the run's goroutines (the console's watch, its steps, the
// power meter's samples) one at a time.
func (r *run) say(kind results.EventKind, format string, args ...any) {
	msg := redact.Text(fmt.Sprintf(format, args...))
	r.sayMu.Lock()
	defer r.sayMu.Unlock()
	if r.o.Events != nil {
		r.o.Events(Event{Time: time.Now(), Board: r.o.Board.Name, Run: r.rec.ID, Stage: kind, Msg: msg,
			Bench: r.o.Benchmark, Clock: r.o.Clock, Took: time.Since(r.start)})
	}
	if r.o.Progress == nil {
		return
	}
	fmt.Fprintf(r.o.Progress, "[%6.1fs] %-8s %s\n", time.Since(r.start).Seconds(), kind, msg)
}

// enter closes the current stage's timing and opens the next.
func (r *run) enter(stage results.StageName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stage == r.stage {
		return
	}
	now := time.Now()
	if r.stage != "" {
		r.rec.Stages = append(r.rec.Stages, results.Stage{Name: r.stage, Duration: now.Sub(r.stageFrom)})
	}
	r.stage, r.stageFrom = stage, now
}

// boot takes the board from off to its result.
func (r *run) boot(ctx context.Context) error {
	o := r.o
	built, err := r.prepare(ctx)
	if err != nil {
		return fail(FailSetup, err)
	}
	dir, err := os.MkdirTemp(o.Builders.CacheDir, "run-"+string(r.rec.ID)+"-")
	if err != nil {
		return fail(FailSetup, fmt.Errorf("run directory: %w", err))
	}
	defer os.RemoveAll(dir)
	sweepStale(o.Builders.CacheDir)
	if err := writeOwner(dir); err != nil {
		return fail(FailSetup, fmt.Errorf("run directory: %w", err))
	}

	events := make(chan netboot.Event, 64)
	stopServing, err := r.serve(ctx, built, dir, events)
	if err != nil {
		return fail(FailSetup, err)
	}
	defer stopServing()
	ctx, endVet := r.vet(ctx)
	defer endVet()
	if err := r.applyClock(ctx); err != nil {
		return err
	}

	con, err := openConsole(ctx, o.Target)
	if err != nil {
		return fail(FailSetup, err)
	}
	defer func() {
		con.Close()
		r.rec.Transcript = con.Transcript()
	}()
	if o.Board.Profile.Boot == boards.BootQEMUDirect {
		r.enter("kernel")
	} else {
		r.enter("firmware")
	}
	r.say("power", "on: %s; console %s", o.Target, consoleName(o))
	defer r.powerOff()
	from := con.Offset()
	r.bootFrom = from
	if err := o.Target.On(ctx); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fail(FailSetup, fmt.Errorf("power on: %w", err))
	}
	r.poweredOn = true
	defer r.sampleEnergy(ctx)() // stops before the power goes off
	if drivenOverConsole(o.Board.Profile) {
		dctx, stop := context.WithCancel(ctx)
		driven := make(chan error, 1)
		go func() { driven <- r.drive(dctx, con, from) }()
		r.driven = driven
		defer func() {
			stop()
			if r.driven != nil {
				<-driven // the steps end with the boot
			}
		}()
	}
	if r.drivenByHost() {
		r.host = o.Host.Start(con, r.say)
		defer r.host.Stop()
	}
	return r.watch(ctx, con.Lines(), events)
}

// drivenByHost is a run of a benchmark the host drives, on a rig that can.
func (r *run) drivenByHost() bool {
	bm, _ := benchmark.Lookup(r.o.Benchmark)
	return bm.HostNetworks && r.o.Host != nil
}

func consoleName(o config) string {
	if o.Board.Console != "" {
		return o.Board.Console
	}
	return "QEMU's serial port"
}

// powerOff switches the board off whatever ended the run, even an
// interrupted one: a board left running would still be benchmarking, or
// worse, reboot into the next run.
func (r *run) powerOff() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.o.Target.Off(ctx); err != nil {
		r.say("power", "off failed: %v (switch %s off by hand)", err, r.o.Board.Name)
	}
}

// prepare finds the kernel and builds the image (which may carry files
// for that kernel), as the job's plan says.
func (r *run) prepare(ctx context.Context) (*plan.Built, error) {
	r.enter("image")
	built, err := r.o.Builders.Build(ctx, r.o.Job)
	if err != nil {
		return nil, err
	}
	r.rec.Kernel = filepath.Base(built.Kernel)
	r.rec.ImageDigest = "sha256:" + built.Image.Digest
	img := built.Image
	how := fmt.Sprintf("built in %.1fs", img.Took.Seconds())
	if img.Cached {
		how = "cached"
	}
	r.say("image", "%s initramfs %s (%s gzipped), %s", r.o.Board.Profile.Arch, mib(img.Size), mib(img.GzipSize), how)
	return built, nil
}

// result turns the collector's verdict into the run's outcome.
func (r *run) result(col *frame.Collector, ev frame.Event, err error) error {
	r.out = col.Output()
	if err != nil {
		return fail(FailCorrupt, err)
	}
	if ev == frame.EventFailed {
		return fail(FailBoard, fmt.Errorf("board failed: %s", col.Reason))
	}
	res := col.Result()
	r.res = res
	r.out = res.Output
	if res.Exit != 0 {
		return fail(FailExit, fmt.Errorf("benchmark exited with status %d", res.Exit))
	}
	return nil
}

// finish classifies the outcome, parses the output and stores the run.
func (r *run) finish(ctx context.Context, err error) (*results.Run, error) {
	r.enter("")
	rec := r.rec
	rec.Finished = time.Now()
	rec.RawOutput = r.out
	r.noteFirmware()
	if err == nil && r.o.Board.OwnFirmware {
		rec.Metrics = r.measured
	} else if err == nil && r.host != nil {
		ms, tool, version, rerr := r.host.Result(r.res)
		if rerr != nil {
			err = fail(FailOutput, rerr)
		} else {
			rec.Tool, rec.ToolVersion, rec.Metrics = tool, version, ms
		}
	} else if err == nil {
		out, perr := parseOutput(r.o.Benchmark, r.out)
		if perr != nil {
			err = fail(FailOutput, fmt.Errorf("benchmark output not understood: %w", perr))
		} else {
			rec.Tool, rec.ToolVersion = results.SplitToolVersion(out.Tool, out.Version)
			for _, m := range out.Metrics {
				rec.Metrics = append(rec.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
			}
		}
	}
	if err == nil {
		rec.Throttle = judgeThrottle(boards.MHz(r.res.Hello.ClockRequestedMHz), r.res.Zones, r.res.Samples)
	}
	var f *Failure
	switch {
	case err == nil && rec.Throttle != nil:
		rec.Status = results.StatusThrottled
		r.say(results.EventThrottle, "%s: stored as throttled, left out of comparisons unless asked", rec.Throttle)
	case err == nil:
		rec.Status = results.StatusOK
	case errors.As(err, &f) && f.Kind == FailCorrupt:
		rec.Status = results.StatusCorrupt
	case errors.As(err, &f) && f.Kind == FailClockMismatch:
		rec.Status = results.StatusClockMismatch
	case errors.As(err, &f):
		// Classified even if the run was then cancelled: a board that
		// booted again ends its last run this way.
		rec.Status = results.StatusFailed
	case errors.Is(err, ErrInterrupted) || ctx.Err() != nil:
		rec.Status, err = results.StatusInterrupted, ErrInterrupted
	default:
		rec.Status = results.StatusFailed
	}
	if err != nil {
		rec.Reason = redact.Text(firstLine(err.Error()))
		rec.Metrics = nil // a failed run's partial output is kept raw, never as figures
	}
	if r.energy != nil {
		rec.Energy = r.energy.result(rec.Metrics)
	}
	if r.o.Store == nil {
		return rec, err
	}
	if serr := r.o.Store.SaveRun(context.WithoutCancel(ctx), rec); serr != nil {
		r.say(results.EventNotStored, "run %s: %s, %d metrics: %s", rec.ID, rec.Status, len(rec.Metrics), redact.Text(firstLine(serr.Error())))
		return rec, &NotStoredError{Run: rec.ID, Outcome: err, Err: serr}
	}
	r.say(results.EventStored, "run %s: %s, %d metrics", rec.ID, rec.Status, len(rec.Metrics))
	return rec, err
}

func mib(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// parseOutput reads a benchmark's output in the format the benchmark
// names; one it does not know (a command of the user's) is recognised.
func parseOutput(bench string, out []byte) (*parse.Output, error) {
	if bm, err := benchmark.Lookup(bench); err == nil && bm.Output != "" {
		return parse.Parse(bm.Output, out)
	}
	return parse.Auto(out)
}
