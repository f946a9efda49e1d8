package harness

import (
	"context"
	"io"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/serialctl"
)

// A Target is one board as a run drives it: its power and its console. A
// board on a real bench is a Wired target (a serial port and a power
// driver); a virtual board is QEMU (vbench). The harness opens the
// console before it powers the board on, so that nothing the board prints
// is lost, and powers it off and closes the console when the run ends.
type Target interface {
	power.Driver
	// Console opens the board's console for one boot: the bytes the board
	// sends and takes, which the harness reads as a serialctl.Console (a
	// serialctl.Device is found again if it goes away).
	Console(ctx context.Context) (io.ReadWriteCloser, error)
}

// PowerState is a Target that knows when the board has powered itself
// off (QEMU does; a relay does not).
type PowerState interface {
	PoweredOff(ctx context.Context) bool
}

// DirectLoader is a Target that loads a kernel itself, without network or
// bootloader (QEMU's -kernel): the "qemu-direct" boot method.
type DirectLoader interface {
	LoadDirect(kernel, initrd, cmdline string)
}

// ClockSetter is a Target that sets its own clock (QEMU's virtual
// instruction clock): the "qemu-icount" clock method.
type ClockSetter interface {
	SetClock(mhz boards.MHz) error
}

// Wired is a board on a real bench: a serial console at a path (or a USB
// adapter's identity) and a power driver. bootbench did not create either;
// it only opens the port (locked for the run) and switches the power.
type Wired struct {
	power.Driver
	Port string // device path, /dev/serial/by-id/..., or usb:VID:PID[:SERIAL]
	Baud int
}

// Console opens the board's serial port, locked against every other user.
// The console lives until Close, whatever happens to ctx.
func (w *Wired) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	return serialctl.OpenDevice(w.Port, w.Baud, "")
}

// openConsole opens t's console and starts reading it.
func openConsole(ctx context.Context, t Target) (*serialctl.Console, error) {
	rw, err := t.Console(ctx)
	if err != nil {
		return nil, err
	}
	return serialctl.New(rw), nil
}
