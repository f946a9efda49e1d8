package harness

import (
	"context"
	"fmt"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
)

// applyClock does, before power-on, what the profile's clock method needs
// done on the host's side: a virtual clock is set on QEMU, a manual one is
// asked of the operator. (cpufreq and cmdline travel on the command line.)
func (r *run) applyClock(ctx context.Context) error {
	o, p := r.o, r.o.Board.Profile
	switch p.ClockMethod {
	case boards.ClockQEMUIcount:
		cs, ok := o.Target.(ClockSetter)
		if !ok {
			return fail(FailSetup, fmt.Errorf("board %s: clock method qemu-icount needs a virtual board", o.Board.Name))
		}
		return fail(FailSetup, cs.SetClock(o.Clock))
	case boards.ClockBootloader:
		if o.Clock != 0 {
			return fail(FailSetup, fmt.Errorf("board %s: setting the clock through the bootloader is not supported yet; set it by hand and run without --clock", o.Board.Name))
		}
	case boards.ClockManual:
		if o.Clock == 0 || o.Operator == nil {
			return nil
		}
		msg := fmt.Sprintf("Set %s's CPU clock to %s by hand (the way %s boards set it), then press Enter.", o.Board.Name, o.Clock, p.Name)
		ok, err := o.Operator.Ask(ctx, msg)
		if err != nil {
			return ErrInterrupted
		}
		if !ok {
			r.say("clock", "%s is set by hand and nobody confirmed it (no terminal): stored as unverified unless the board reports it", o.Clock)
		}
	}
	return nil
}

// checkClock compares the clock the run asked for with what the board
// reported in its hello. It returns the reported clock (0: none), how it
// was checked, and an error when the board is not at the requested clock.
func checkClock(p boards.Profile, want boards.MHz, h frame.HelloBody) (reported boards.MHz, check string, err error) {
	if h.CPUFreqCurKHz > 0 {
		reported = boards.MHzFromKHz(h.CPUFreqCurKHz)
	} else if bm := boards.MHzFromBogoMIPS(h.BogoMIPS, p.BogoMIPSPerMHz); bm > 0 {
		reported = bm
	}
	switch {
	case want == 0:
		return reported, "", nil
	case p.ClockMethod == boards.ClockQEMUIcount && reported == 0:
		// The virtual clock is the instruction count: exact by
		// construction. A board whose profile knows its BogoMIPS per MHz
		// is checked from them below, as a real board of its kind is:
		// QEMU's option may not be what the guest's timers run on.
		return want, results.ClockVerified, nil
	case h.CPUFreqCurKHz > 0:
		if boards.ClockAgrees(boards.FromCPUFreq, reported, want) {
			return reported, results.ClockVerified, nil
		}
		return reported, results.ClockMismatch, fmt.Errorf("asked for %s, the board runs at %s (cpufreq; %s)", want, reported, setNote(h))
	case reported > 0:
		if boards.ClockAgrees(boards.FromBogoMIPS, reported, want) {
			return reported, results.ClockVerified, nil
		}
		return reported, results.ClockMismatch, fmt.Errorf("asked for %s, the board's BogoMIPS %s say about %s", want, h.BogoMIPS, reported)
	case p.ClockMethod == boards.ClockConfigTxt && p.Virtual != nil && reported == 0:
		// A virtual Raspberry Pi runs the clock its config.txt names on
		// the icount clock its ROM stand-in maps it to: exact by
		// construction, as qemu-icount's.
		return want, results.ClockVerified, nil
	case p.ClockMethod == boards.ClockCPUFreq, p.ClockMethod == boards.ClockConfigTxt:
		// The one way this board sets its clock did not work (or, for a
		// Raspberry Pi, the one way to confirm it): the run would be
		// filed under a clock it never ran at.
		return 0, results.ClockMismatch, fmt.Errorf("asked for %s, but the board reports no clock: %s%s", want, setNote(h), bogoNote(h))
	}
	return 0, results.ClockUnverified, nil
}

func setNote(h frame.HelloBody) string {
	if h.ClockSet == "" {
		return "the board did not say what it set"
	}
	return "the board says: " + h.ClockSet
}

func bogoNote(h frame.HelloBody) string {
	if h.BogoMIPS == "" {
		return ""
	}
	return ", BogoMIPS " + h.BogoMIPS
}
