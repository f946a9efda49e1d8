package harness

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/harness/power"
	"github.com/bootbench/bootbench/internal/owner"
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
	// PowerRecord, when set, is a directory that says, while the board
	// is switched on, which process switched it on: a bootbench killed
	// before it could switch the board off leaves it, and the next one
	// switches the board off (SweepLeftOn). Its switch outlives the
	// process, unlike a virtual board's QEMU.
	PowerRecord string
}

// On records that the board is switched on (before switching it, so no
// kill in between leaves it on unrecorded), then switches it on.
func (w *Wired) On(ctx context.Context) error {
	if w.PowerRecord != "" {
		if err := os.MkdirAll(w.PowerRecord, 0o755); err != nil {
			return fmt.Errorf("record the power: %w", err)
		}
		if err := owner.Claim(w.PowerRecord, ""); err != nil {
			return fmt.Errorf("record the power: %w", err)
		}
	}
	return w.Driver.On(ctx)
}

// Off switches the board off and, once it is, drops the record.
func (w *Wired) Off(ctx context.Context) error {
	if err := w.Driver.Off(ctx); err != nil {
		return err
	}
	if w.PowerRecord != "" {
		os.RemoveAll(w.PowerRecord)
	}
	return nil
}

// SweepLeftOn switches the board off when a bootbench that was killed
// left it on (its PowerRecord names a process that is gone), and says so;
// "" when there was nothing to do.
func (w *Wired) SweepLeftOn(ctx context.Context) (string, error) {
	if w.PowerRecord == "" || len(owner.Orphans(w.PowerRecord)) == 0 {
		return "", nil
	}
	if err := w.Off(ctx); err != nil {
		return "", fmt.Errorf("a bootbench that was killed left the board on, and switching it off failed: %w", err)
	}
	return fmt.Sprintf("switched off: a bootbench that was killed had left it on (its switch: %s)", w.Driver), nil
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
