package harness

import (
	"context"
	"io"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
)

// A HostDriver is the host's side of a benchmark the host drives while
// the board runs it (benchmark.HostNetworks: the route benchmark sends
// traffic through the board). It lives with its benchmark, not here: the
// rig hands one to the run.
type HostDriver interface {
	// Ports are the board's ports the driver measures through, for the
	// kernel command line.
	Ports() []bootparam.Port
	// Start begins one boot's drive: con is the board's console, to tell
	// it what next; say reports progress.
	Start(con io.Writer, say Say) HostRun
	String() string
}

// Say reports a run's progress at a stage.
type Say func(stage results.EventKind, format string, args ...any)

// HostRun is one boot driven by the host. Its methods are called on the
// run's goroutine; it measures on its own and hands each finished
// measurement back as a Step. Its errors end the run as they are: they
// are classified (*Failure) by the driver.
type HostRun interface {
	// Hello is the board up and reporting.
	Hello(ctx context.Context)
	// Board is a frame of the board's own for the driver (ready,
	// counters); res holds every frame so far.
	Board(ctx context.Context, ev frame.Event, res frame.Result) error
	// Steps delivers finished measurements; each is run on the run's
	// goroutine, and a step taken holds the run timeout again.
	Steps() <-chan Step
	// Result is the run's figures from the board's verified report.
	Result(res frame.Result) (metrics []results.Metric, tool, version string, err error)
	// Stop ends a measurement still going and waits for it.
	Stop()
}

// Step is a finished measurement, recorded when called.
type Step func() error
