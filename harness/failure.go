package harness

import (
	"context"
	"errors"
	"fmt"
)

// FailKind classifies why a run did not give a result. It leads the stored
// reason ("kernel-panic: Kernel panic - not syncing: ..."), so a bench's
// history can be sorted by cause.
type FailKind string

// The kinds of failure.
const (
	FailSetup         FailKind = "setup"          // image, kernel, network, console or power could not be had
	FailBootTimeout   FailKind = "boot-timeout"   // no hello within the boot timeout
	FailRunTimeout    FailKind = "run-timeout"    // no result within the run timeout
	FailPoweredOff    FailKind = "powered-off"    // the board went off before its result
	FailPanic         FailKind = "kernel-panic"   // the kernel panicked
	FailReset         FailKind = "reset"          // a bootloader started again after the kernel had
	FailCorrupt       FailKind = "corrupt"        // a frame failed its checks
	FailBoard         FailKind = "board-failed"   // the board reported it could not run the benchmark
	FailExit          FailKind = "benchmark-exit" // the benchmark exited non-zero
	FailOutput        FailKind = "output"         // the output did not parse
	FailClockMismatch FailKind = "clock-mismatch" // the board did not run at the clock asked for
	FailGoRuntime     FailKind = "go-runtime"     // the board's Go runtime sleeps too short for a Go benchmark's figures to hold
	FailConsoleLost   FailKind = "console-lost"   // the console went away (its adapter unplugged) and did not come back
)

// Failure is a classified reason a run gave no result.
type Failure struct {
	Kind FailKind
	Err  error
	// BeforeHello is true when the board never reported: it measured
	// nothing, so booting it again loses nothing.
	BeforeHello bool
}

func (f *Failure) Error() string { return string(f.Kind) + ": " + f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

func fail(kind FailKind, err error) error {
	if err == nil {
		return nil
	}
	var f *Failure
	if errors.As(err, &f) || errors.Is(err, ErrInterrupted) {
		return err // already classified
	}
	if errors.Is(err, context.Canceled) {
		return ErrInterrupted
	}
	return &Failure{Kind: kind, Err: err}
}

func failf(kind FailKind, beforeHello bool, format string, args ...any) error {
	return &Failure{Kind: kind, Err: fmt.Errorf(format, args...), BeforeHello: beforeHello}
}

// Retryable reports whether booting again may give the result err denied:
// the board never got to report (a boot that hung, panicked or reset), or
// its frames went corrupt on the way (DESIGN: a corrupt run is retried). A
// clock that did not take, a benchmark that failed, or setup trouble would
// only fail again.
func Retryable(err error) bool {
	var f *Failure
	if !errors.As(err, &f) {
		return false
	}
	switch f.Kind {
	case FailCorrupt:
		return true
	case FailBootTimeout, FailPoweredOff, FailPanic, FailReset:
		return f.BeforeHello
	}
	return false
}

// Kind is the failure kind of err, "" when it is not a classified failure.
func Kind(err error) FailKind {
	var f *Failure
	if errors.As(err, &f) {
		return f.Kind
	}
	return ""
}
