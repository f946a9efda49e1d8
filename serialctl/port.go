package serialctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.bug.st/serial"
	"go.bug.st/serial/enumerator"
	"golang.org/x/sys/unix"
)

// ErrPermission means the user may not open the console.
var ErrPermission = errors.New("permission denied")

// PermissionError is a console the user may not open, with what to do.
type PermissionError struct {
	Device string
	Err    error // the system's error
}

func (e *PermissionError) Error() string {
	name := "USER"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return fmt.Sprintf("open console %s: permission denied (add the user to the dialout group: usermod -aG dialout %s, then log in again)", e.Device, name)
}

func (e *PermissionError) Is(target error) bool { return target == ErrPermission }
func (e *PermissionError) Unwrap() error        { return e.Err }

// PortOptions are what OpenPort needs besides the spec and the baud rate.
type PortOptions struct {
	// LockDir is where UUCP lock files (LCK..ttyUSB0) go; "" means
	// /run/lock, or /var/lock when that is what exists.
	LockDir string
	// Tee, if set, gets every byte as it arrives, partial lines too (a
	// bootloader's prompt has no newline), and bootbench's notes. A slow
	// Tee holds up reading.
	Tee io.Writer
}

// reconnectPoll is how often a lost console is looked for.
const reconnectPoll = 250 * time.Millisecond

// OpenPort opens a board's console and starts reading it. spec is a device
// path, a /dev/serial/by-id/ link, or usb:VID:PID[:SERIAL]. The port is
// locked against every other user (see BusyError), input left from before
// is dropped, and no modem line is set (a pty has none). If the port goes
// away while open, it is reopened when it comes back and the transcript
// marks the gap. The console stops when ctx is done or on Close; only
// Close releases the port.
func OpenPort(ctx context.Context, spec string, baud int, opts PortOptions) (*Console, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := OpenDevice(spec, baud, opts.LockDir)
	if err != nil {
		return nil, err
	}
	c := newConsole(d.serialPort)
	c.src = d.o
	c.tee = opts.Tee
	go c.loop()
	c.stopCtx = context.AfterFunc(ctx, func() { c.shutdown() })
	return c, nil
}

// Device is a board's console device as OpenDevice opened it: locked, input
// left from before dropped. A Console reading it (New) finds it again when
// it goes away and comes back, as OpenPort's does.
type Device struct {
	*serialPort
	o *opener
}

// OpenDevice opens and locks a board's console device (spec and lockDir as
// for OpenPort) for a Console to read.
func OpenDevice(spec string, baud int, lockDir string) (*Device, error) {
	o := &opener{spec: spec, baud: baud, lockDir: lockDir}
	p, err := o.open(true)
	if err != nil {
		return nil, err
	}
	return &Device{serialPort: p, o: o}, nil
}

// opener opens one console spec, again and again if it comes and goes.
// Only the console's reading goroutine uses it after OpenPort.
type opener struct {
	spec    string
	baud    int
	lockDir string
	device  string // what spec resolved to last
}

// serialPort is an open, locked console device.
type serialPort struct {
	serial.Port
	lock *portLock
}

func (p *serialPort) Close() error {
	err := p.Port.Close()
	p.lock.release()
	return err
}

// reopen opens the console again after it was lost.
func (o *opener) reopen() (io.ReadCloser, error) {
	p, err := o.open(false)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// open resolves the spec, locks the device and opens it. flush drops what
// the device received before; not after a reconnection, where those bytes
// are the board's.
func (o *opener) open(flush bool) (*serialPort, error) {
	device, err := o.resolve()
	if err != nil {
		return nil, err
	}
	o.device = device
	lock, err := lockPort(device, o.lockDir)
	if err != nil {
		return nil, err
	}
	// No InitialStatusBits: setting modem lines fails on a pty.
	sp, err := openNoInherit(device, &serial.Mode{BaudRate: o.baud})
	if err != nil {
		lock.release()
		return nil, o.openError(device, err)
	}
	if err := sp.SetReadTimeout(pollInterval); err != nil {
		sp.Close()
		lock.release()
		return nil, fmt.Errorf("set read timeout on console %s: %w", device, err)
	}
	if flush {
		if err := sp.ResetInputBuffer(); err != nil && !isPTY(device) {
			sp.Close()
			lock.release()
			return nil, fmt.Errorf("flush console %s: %w", device, err)
		}
	}
	return &serialPort{Port: sp, lock: lock}, nil
}

func (o *opener) openError(device string, err error) error {
	var pe *serial.PortError
	if errors.As(err, &pe) {
		switch pe.Code() {
		case serial.PortBusy:
			return busy(device, lockFilePath(device, o.lockDir))
		case serial.PermissionDenied:
			return &PermissionError{Device: device, Err: fs.ErrPermission}
		}
	}
	return openError(device, err)
}

// openNoInherit opens a port with go.bug.st/serial, which makes its
// descriptors (the port and a pipe) without O_CLOEXEC: every process
// bootbench started afterwards (a power command, QEMU) would hold the
// console open. Holding syscall.ForkLock, as the syscall package asks of
// code that sets close-on-exec after the fact, no child is forked between
// the open and the fix.
func openNoInherit(device string, mode *serial.Mode) (serial.Port, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	before := openFDs()
	p, err := serial.Open(device, mode)
	for fd := range openFDs() {
		if !before[fd] {
			unix.CloseOnExec(fd)
		}
	}
	return p, err
}

// openFDs lists this process's descriptors, leaving out the one it
// reads the list with.
func openFDs() map[int]bool {
	fds := map[int]bool{}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return fds
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd != int(d.Fd()) {
			fds[fd] = true
		}
	}
	return fds
}

// resolve finds the device node the spec names now, symlinks followed so
// that a by-id link and its /dev/ttyUSB0 are one lock.
func (o *opener) resolve() (string, error) {
	name := o.spec
	if strings.HasPrefix(o.spec, "usb:") {
		ports, err := enumerator.GetDetailedPortsList()
		if err != nil {
			return "", fmt.Errorf("list serial ports to find console %s: %w", o.spec, err)
		}
		if name, err = Resolve(o.spec, ports); err != nil {
			return "", err
		}
	}
	device, err := filepath.EvalSymlinks(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &NoPortError{Spec: o.spec, Present: presentPorts()}
		}
		return "", fmt.Errorf("find console %s: %w", o.spec, err)
	}
	return device, nil
}

// name is how markers in the transcript name the console: the spec, and
// the device it is on when that says more.
func (o *opener) name() string {
	if o.device == "" || o.device == o.spec {
		return o.spec
	}
	return o.spec + " (" + o.device + ")"
}

// lost reports whether a read failed because the device went away. A
// vanished USB adapter or a pty whose other end closed hangs up: reads
// return 0 bytes, which go.bug.st/serial reports as "port closed".
func (o *opener) lost(err error) bool {
	var pe *serial.PortError
	if errors.As(err, &pe) && pe.Code() == serial.PortClosed {
		return true
	}
	if errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
		return true
	}
	_, serr := os.Stat(o.device)
	return serr != nil
}

// lostReason says in words why a read failed. A pty whose other end
// closed answers a read with 0 bytes or with EIO, depending on whether the
// read was waiting when it closed: both are a hang-up.
func lostReason(err error) string {
	var pe *serial.PortError
	if errors.As(err, &pe) && pe.Code() == serial.PortClosed || errors.Is(err, syscall.EIO) {
		return "hung up"
	}
	return err.Error()
}

// openError turns a failed open(2) of a console into one of ours.
func openError(device string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return &NoPortError{Spec: device, Present: presentPorts()}
	case errors.Is(err, syscall.EIO):
		// A pty whose other end has closed, or a UART slot with no hardware.
		return fmt.Errorf("open console %s: %w (nothing answers on it): %w", device, ErrNoPort, err)
	case errors.Is(err, fs.ErrPermission):
		return &PermissionError{Device: device, Err: err}
	}
	return fmt.Errorf("open console %s: %w", device, err)
}

// presentPorts lists the serial ports for an error message; none when
// they cannot be listed.
func presentPorts() []*enumerator.PortDetails {
	ports, _ := enumerator.GetDetailedPortsList()
	return ports
}

// isPTY reports whether device is a pseudo-terminal (Unix 98 pty slaves
// have majors 136 to 143), which has no hardware buffer to flush.
func isPTY(device string) bool {
	var st unix.Stat_t
	if err := unix.Stat(device, &st); err != nil {
		return false
	}
	m := unix.Major(uint64(st.Rdev))
	return m >= 136 && m <= 143
}
