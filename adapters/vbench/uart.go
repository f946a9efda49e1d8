package vbench

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// uart is a virtual board's serial line when something other than QEMU
// talks on it first (a boot ROM): a pty whose master end is the bench's
// console and whose slave end the board writes to, the ROM and then QEMU
// (-chardev serial on its path). The board holds the slave open from
// power-on to power-off, so the console never sees the line drop between
// the ROM and QEMU.
type uart struct {
	master *os.File // the console's end
	slave  *os.File // the board's end, held by the ROM
	path   string   // the slave's path, for QEMU
}

// newUART opens a pty pair with the line in raw mode: no echo, no newline
// translation, bytes as sent.
func newUART() (*uart, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open a pty: %w", err)
	}
	var n int
	err = control(m, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return err
		}
		var err error
		n, err = unix.IoctlGetInt(fd, unix.TIOCGPTN)
		return err
	})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("unlock pty: %w", err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	s, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	err = control(s, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return err
		}
		// cfmakeraw
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB
		t.Cflag |= unix.CS8
		return unix.IoctlSetTermios(fd, unix.TCSETS, t)
	})
	if err != nil {
		m.Close()
		s.Close()
		return nil, fmt.Errorf("raw mode on %s: %w", path, err)
	}
	return &uart{master: m, slave: s, path: path}, nil
}

// control runs fn on f's descriptor without taking f out of the poller.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// closeBoard lets go of the board's end (power off).
func (u *uart) closeBoard() { u.slave.Close() }
