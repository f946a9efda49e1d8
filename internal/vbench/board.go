package vbench

import (
	"context"
	"fmt"
	"os"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/owner"
	"github.com/bootbench/bootbench/serialctl"
)

// Board is a virtual board as the harness drives any board (a
// harness.Target): opening its console starts QEMU paused, as a board
// cabled to the bench but switched off; power-on lets it run; power-off
// ends QEMU. Each boot is a new QEMU.
type Board struct {
	Net      *Net // nil: a board without network (it loads its kernel directly)
	Machine  Machine
	CacheDir string // QEMU's files for one boot go in a directory here

	q   *QEMU
	dir string
}

// NewBoard is a virtual board on n (nil for none) with QEMU as m says.
// Until SetClock it runs on real time.
func NewBoard(n *Net, m Machine, cacheDir string) *Board {
	m.Icount = -1
	return &Board{Net: n, Machine: m, CacheDir: cacheDir}
}

func (b *Board) String() string {
	clock := "real-time clock"
	if b.Machine.Icount >= 0 {
		clock = fmt.Sprintf("-icount shift=%d", b.Machine.Icount)
	}
	return fmt.Sprintf("%s (%s)", b.Machine.Binary, clock)
}

// SetClock runs the next boot on the virtual clock that gives mhz.
func (b *Board) SetClock(mhz boards.MHz) error {
	s, err := boards.IcountShift(mhz)
	if err != nil {
		return err
	}
	b.Machine.Icount = s
	return nil
}

// LoadDirect makes the next boot load kernel (and initrd) itself, with
// cmdline, the way a bootloader that takes one file from flash would.
func (b *Board) LoadDirect(kernel, initrd, cmdline string) {
	b.Machine.Kernel, b.Machine.Initrd, b.Machine.Append = kernel, initrd, cmdline
}

// Console starts QEMU paused and opens its serial port: the guest runs
// only on power-on, so the console misses nothing.
func (b *Board) Console(ctx context.Context) (*serialctl.Console, error) {
	if b.q != nil {
		return nil, fmt.Errorf("%s: already running", b.Machine.Binary)
	}
	dir, err := os.MkdirTemp(b.CacheDir, "qemu-")
	if err != nil {
		return nil, fmt.Errorf("virtual board: %w", err)
	}
	if err := owner.Claim(dir, ""); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("virtual board: %w", err)
	}
	q, err := Start(ctx, b.Net, b.Machine, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	con, err := serialctl.Open(q.PTY, 115200)
	if err != nil {
		q.Kill()
		os.RemoveAll(dir)
		return nil, err
	}
	b.q, b.dir = q, dir
	return con, nil
}

// On lets the paused guest run.
func (b *Board) On(ctx context.Context) error {
	if b.q == nil {
		return fmt.Errorf("%s: not started (open its console first)", b.Machine.Binary)
	}
	return b.q.Continue()
}

// Off ends QEMU and removes its files.
func (b *Board) Off(ctx context.Context) error {
	if b.q != nil {
		b.q.Kill()
		b.q = nil
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
		b.dir = ""
	}
	return nil
}

// PoweredOff reports whether the guest shut itself down. QEMU stays up
// after that (-no-shutdown), so the last frames are not lost with the pty.
func (b *Board) PoweredOff(ctx context.Context) bool {
	if b.q == nil {
		return true
	}
	select {
	case <-b.q.Exited():
		return true
	default:
	}
	return b.q.PoweredOff()
}
