package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
	"github.com/bootbench/bootbench/serialctl/fwclock"
)

// setFirmwareClock types the run's clock into the board's own firmware as
// it boots (RouterBOOT's setup menu, CFE's NVRAM), from offset from of the
// transcript, and returns where the profile's console steps take over.
// The default clock is set too when none was asked for: the firmware keeps
// the last run's, which is not the board's stock.
func (r *run) setFirmwareClock(ctx context.Context, con *serialctl.Console, from int) (int, error) {
	p := r.o.Board.Profile
	mhz := r.o.Clock
	if mhz == 0 {
		mhz = p.DefaultClock
	}
	say := func(format string, args ...any) { r.say("console", format, args...) }
	next, err := fwclock.For(p.ClockMethod, con, say, r.o.BootTimeout).SetClock(ctx, from, mhz)
	return next, firmwareClockFailure(ctx, err)
}

// firmwareClockFailure classifies what went wrong in the firmware: a
// firmware that words itself otherwise is refused (nothing is stored, as
// for a bench that refused the board); one that did not answer is a boot
// that did not come.
func firmwareClockFailure(ctx context.Context, err error) error {
	var ref *fwclock.Refusal
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, &ref):
		return &Failure{Kind: FailSetup, Err: fmt.Errorf("%w: %w", ErrFirmwareRefused, err)}
	case errors.Is(err, fwclock.ErrNoAnswer):
		return failf(FailBootTimeout, true, "setting the clock: %v", err)
	}
	return fail(FailSetup, fmt.Errorf("setting the clock: %w", err))
}

// ErrFirmwareRefused marks a board whose firmware printed what bootbench
// does not know how to answer: the board is switched off and nothing is
// stored, as when a bench refuses a board.
var ErrFirmwareRefused = errors.New("firmware not as its profile knows it")

// announcedClock follows the clock a firmware announces as it boots (the
// last one before the kernel: a firmware restarts itself to take a new
// clock).
func (w *watcher) announcedClock(text []byte) {
	if w.kernel {
		return
	}
	if mhz, ok := serialctl.AnnouncedClock(text); ok {
		w.firmwareClock = mhz
	}
}

// judgeClock is the run's clock verdict from the board's hello and, for a
// clock set in the firmware, from what the firmware announced as well: a
// mismatch names both figures, whichever of them disagreed.
func judgeClock(p boards.Profile, want, announced boards.MHz, h frame.HelloBody) (boards.MHz, string, error) {
	reported, check, err := checkClock(p, want, h)
	if ferr := firmwareClockCheck(p, want, announced); ferr != nil {
		return reported, results.ClockMismatch, fmt.Errorf("%v; the kernel's BogoMIPS %s say about %s", ferr, h.BogoMIPS, reported)
	}
	if err != nil && p.ClockMethod.SetInFirmware() {
		return reported, check, fmt.Errorf("%v; the firmware announced %s", err, announced)
	}
	return reported, check, err
}

// firmwareClockCheck holds a clock set in the firmware to what the firmware
// announced: both it and BogoMIPS must agree with the clock asked for.
func firmwareClockCheck(p boards.Profile, want, announced boards.MHz) error {
	switch {
	case want == 0 || !p.ClockMethod.SetInFirmware():
		return nil
	case announced == 0:
		return fmt.Errorf("asked for %s, but the firmware announced no clock as it booted", want)
	case !boards.ClockAgrees(boards.FromFirmware, announced, want):
		return fmt.Errorf("asked for %s, the firmware announced %s", want, announced)
	}
	return nil
}
