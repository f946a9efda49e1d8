package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/serialctl"
)

// A FirmwareHost is the host's side of a benchmark on a board that keeps
// its own firmware (image: none): nothing of bootbench's runs on the
// board, so no frames come back; the host's own figures are the result.
// The route benchmark's lives with it (route.Firmware).
type FirmwareHost interface {
	// Forwards tries the path through the board once: nil when it
	// forwards, else what went wrong (the ping's answer).
	Forwards(ctx context.Context) error
	// Measure measures configuration config through the board, or
	// with Direct the baseline past it.
	Measure(ctx context.Context, config string) ([]results.Metric, error)
	// Tool is what measured: iperf3 and its version, once measured.
	Tool() (name, version string)
	String() string
}

// Direct is the configuration a FirmwareHost measures the baseline in.
const Direct = "direct"

// forwardEvery is how often the path through a board is tried while it
// comes up.
const forwardEvery = time.Second

// runFirmware takes a board under its own firmware from off to its
// figures: power on, wait until the path through it forwards, measure the
// baseline, then set and measure each configuration with its console
// steps. Nothing is built or served.
func (r *run) runFirmware(ctx context.Context) error {
	o := r.o
	con, err := openConsole(ctx, o.Target)
	if err != nil {
		return fail(FailSetup, err)
	}
	go drain(con) // the transcript keeps what matters; Expect reads it
	defer func() {
		con.Close()
		r.rec.Transcript = con.Transcript()
	}()
	r.enter(results.StageFirmware)
	r.say("power", "on: %s; console %s; the board keeps its own firmware: nothing is netbooted", o.Target, consoleName(o))
	defer r.powerOff()
	off := con.Offset()
	r.bootFrom = off
	if err := o.Target.On(ctx); err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return fail(FailSetup, fmt.Errorf("power on: %w", err))
	}
	r.poweredOn = true
	defer r.sampleEnergy(ctx)() // stops before the power goes off
	if err := r.awaitForwarding(ctx, "after power-on", true); err != nil {
		return err
	}
	r.enter(results.StageBench)
	r.say("route", "direct baseline: %s", o.Firmware)
	if err := r.measureFirmware(ctx, Direct); err != nil {
		return err
	}
	for _, c := range o.Board.RouteConfigs {
		if off, err = r.steps(ctx, con, off, c.Steps, "configuration "+c.Name, false); err != nil {
			return err
		}
		if err := r.awaitForwarding(ctx, "in configuration "+c.Name, false); err != nil {
			return err
		}
		if err := r.measureFirmware(ctx, c.Name); err != nil {
			return err
		}
	}
	r.rec.Tool, r.rec.ToolVersion = o.Firmware.Tool()
	return nil
}

// drain takes the console's lines, which nobody reads as lines here.
func drain(con *serialctl.Console) {
	for range con.Lines() {
	}
}

// awaitForwarding tries the path through the board until it forwards,
// for at most the boot timeout.
func (r *run) awaitForwarding(ctx context.Context, when string, booting bool) error {
	o := r.o
	wctx, cancel := context.WithTimeout(ctx, o.BootTimeout)
	defer cancel()
	start := time.Now()
	for {
		err := o.Firmware.Forwards(wctx)
		if err == nil {
			r.say("route", "the path through the board forwards %s (%.1fs)", when, time.Since(start).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return ErrInterrupted
		case <-wctx.Done():
			return failf(FailBootTimeout, booting, "the path through the board did not forward %s within %s: %v", when, o.BootTimeout, err)
		case <-time.After(forwardEvery):
		}
	}
}

// measureFirmware measures one configuration, within the run timeout.
func (r *run) measureFirmware(ctx context.Context, config string) error {
	mctx, cancel := context.WithTimeout(ctx, r.o.RunTimeout)
	defer cancel()
	ms, err := r.o.Firmware.Measure(mctx, config)
	switch {
	case ctx.Err() != nil:
		return ErrInterrupted
	case errors.Is(mctx.Err(), context.DeadlineExceeded):
		return failf(FailRunTimeout, false, "route %s: not measured within %s: %v", config, r.o.RunTimeout, err)
	case err != nil:
		return fail(FailExit, fmt.Errorf("route %s: %w", config, err))
	}
	r.measured = append(r.measured, ms...)
	for _, m := range ms {
		if m.Unit == parse.UnitBitsPerSec {
			r.say("route", "%s %.1f Mbit/s", m.Name, m.Value/1e6)
		}
	}
	return nil
}

// steps works a board's console as steps say, from offset off of the
// transcript, and returns the offset after the last text expected. what
// names the steps in messages ("" for the bootloader's); beforeHello says
// a timeout came before anything was measured. A manual step asks the
// operator.
func (r *run) steps(ctx context.Context, con *serialctl.Console, off int, steps []boards.ConsoleStep, what string, beforeHello bool) (int, error) {
	vars := r.stepVars()
	if what != "" {
		what += ": "
	}
	for i, st := range steps {
		n := i + 1
		switch {
		case st.Expect != "":
			sctx, cancel := context.WithTimeout(ctx, st.Timeout)
			next, err := con.Expect(sctx, off, st.Expect)
			cancel()
			if ctx.Err() != nil {
				return off, ctx.Err()
			}
			if err != nil {
				return off, failf(FailBootTimeout, beforeHello, "%sconsole step %d: %q did not come within %s (after %q)", what, n, st.Expect, st.Timeout, tail(con.TranscriptFrom(off), 80))
			}
			off = next
		case st.Send != "":
			cmd := vars.Replace(st.Send)
			r.say("console", "%sstep %d: %s", what, n, cmd)
			if _, err := con.Write([]byte(cmd + "\r")); err != nil {
				return off, fail(FailSetup, fmt.Errorf("%sconsole step %d: type %q: %w", what, n, cmd, err))
			}
		case st.Key != "":
			if _, err := con.Write([]byte(st.Key)); err != nil {
				return off, fail(FailSetup, fmt.Errorf("%sconsole step %d: type a key: %w", what, n, err))
			}
		case st.Manual != "":
			if err := r.askOperator(ctx, fmt.Sprintf("%s, %s%s", r.o.Board.Name, what, st.Manual)); err != nil {
				return off, err
			}
			off = con.Offset() // what the operator's work printed is no answer to a later expect
		}
	}
	return off, nil
}

// askOperator has the operator do a step by hand and confirm it.
func (r *run) askOperator(ctx context.Context, msg string) error {
	if r.o.Operator == nil {
		return fail(FailSetup, fmt.Errorf("%s: no operator at this bench to ask", msg))
	}
	r.say("console", "asking the operator: %s", msg)
	ok, err := r.o.Operator.Ask(ctx, msg)
	switch {
	case ctx.Err() != nil:
		return ErrInterrupted
	case err != nil:
		return fail(FailSetup, err)
	case !ok:
		return fail(FailSetup, fmt.Errorf("%s: nobody confirmed it (a manual step needs bootbench run at a terminal)", msg))
	}
	return nil
}
