// Package power switches the boards of a bench on and off. Each board's
// inventory entry (bench.yaml) names a driver and what it needs:
//
//	# the operator at the bench, asked on the terminal
//	power: {driver: manual}
//
//	# shell commands (sh -c), run with BOOTBENCH_BOARD set to the board's name
//	power:
//	  driver: command
//	  on: "relay 3 on"
//	  off: "relay 3 off"
//	  cycle: "relay 3 cycle"   # optional: else off, delay, on
//	  delay: 2s                # optional pause between off and on
//
//	# a pdudaemon's HTTP listener: pdu is the PDU's name in its configuration
//	power: {driver: pdudaemon, url: "http://localhost:16421", pdu: bench-pdu, port: 3, delay: 5s}
//
//	# a Tasmota smart plug or relay board; relay counts from 1 (default 1)
//	power: {driver: tasmota, url: "http://198.18.5.7", relay: 1}
//
//	# a Shelly relay, any generation; relay counts from 0 (default 0)
//	power: {driver: shelly, url: "http://admin:secret@198.18.5.8", relay: 0}
//
// The tasmota and shelly drivers are also a Meter: a plug with an energy
// meter tells what the board draws, and a run samples it (meter.go).
//
// The virtual boards' driver, qemu, is the virtual bench itself
// (vbench); New does not make it.
//
// A URL may carry credentials (http://user:password@host): Shelly Gen1 and a
// pdudaemon behind an authenticating proxy get them as HTTP basic
// authentication, Shelly Gen2+ as the digest authentication it asks for,
// Tasmota as its user and password parameters. Errors and progress lines
// never show them.
package power

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// Driver switches one board's power.
type Driver interface {
	On(ctx context.Context) error
	Off(ctx context.Context) error
	// String names the switch for progress lines, e.g. `command "relay 3
	// on"`, "pdudaemon bench-pdu port 3", "tasmota http://198.18.5.7
	// relay 1", "manual".
	String() string
}

// Cycler is a Driver that power-cycles in one step (pdudaemon's reboot, a
// command's cycle).
type Cycler interface {
	Cycle(ctx context.Context) error
}

// DefaultCycleDelay is how long Cycle leaves a board off when not told.
const DefaultCycleDelay = 2 * time.Second

// Cycle power-cycles d: its own Cycle when it has one, else Off, a pause of
// delay (DefaultCycleDelay when 0), On.
func Cycle(ctx context.Context, d Driver, delay time.Duration) error {
	if c, ok := d.(Cycler); ok {
		return c.Cycle(ctx)
	}
	return offPauseOn(ctx, d, delay)
}

func offPauseOn(ctx context.Context, d Driver, delay time.Duration) error {
	if err := d.Off(ctx); err != nil {
		return err
	}
	if delay == 0 {
		delay = DefaultCycleDelay
	}
	if err := sleep(ctx, delay); err != nil {
		return fmt.Errorf("power-cycle with %s: %w", d, err)
	}
	return d.On(ctx)
}

// sleep pauses for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// New makes the driver an inventory entry asks for. board is the board's
// name, for messages and commands; op is who a manual driver asks.
func New(board string, spec boards.PowerSpec, op Operator) (Driver, error) {
	if spec.Delay < 0 {
		return nil, fmt.Errorf("power for %s: negative delay %s", board, spec.Delay)
	}
	switch spec.Driver {
	case boards.PowerManual:
		if op == nil {
			return nil, fmt.Errorf("power for %s: driver manual needs an operator to ask", board)
		}
		return &manual{board: board, op: op}, nil
	case boards.PowerCommand:
		return newCommand(board, spec)
	case boards.PowerPDUDaemon:
		return newPDUDaemon(board, spec)
	case boards.PowerTasmota:
		return newTasmota(board, spec)
	case boards.PowerShelly:
		return newShelly(board, spec)
	case boards.PowerQEMU:
		return nil, fmt.Errorf("power for %s: driver qemu is the virtual bench's own (vbench), not a bench driver; start QEMU with driver command", board)
	case "":
		return nil, errors.New("power for " + board + ": no driver (manual, command, pdudaemon, tasmota or shelly)")
	default:
		return nil, fmt.Errorf("power for %s: unknown driver %q (manual, command, pdudaemon, tasmota or shelly)", board, spec.Driver)
	}
}
