package vbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/internal/owner"
)

// Board is a virtual board as the harness drives any board (a
// harness.Target): opening its console starts QEMU paused, as a board
// cabled to the bench but switched off; power-on lets it run; power-off
// ends QEMU. Each boot is a new QEMU.
type Board struct {
	Net      *Net // nil: a board without network (it loads its kernel directly)
	Machine  Machine
	CacheDir string // QEMU's files for one boot go in a directory here
	// ROM is the board's boot ROM when it has one instead of QEMU's
	// firmware: "routerboot" (see routerBOOTROM), "cfe" (cfeROM) or
	// "raspberrypi" (piROM). The ROM runs on the bench's tap from
	// power-on; QEMU starts with what it loaded.
	ROM  string
	Name string // the board model, as a ROM tells it
	// Serial is the board's serial number where its ROM uses one (a
	// Raspberry Pi's: its TFTP directory).
	Serial string
	// KernelReadsCmdline is a kernel with a command line area of its own
	// (OpenWrt's, or bootbench's Malta kernel): the ROM passes only its
	// own parameters, as the real loader does. Otherwise the area was
	// added to the ELF for the ROM, which appends what it holds, as such
	// a kernel would itself.
	KernelReadsCmdline bool
	// Flash is the directory that holds what the ROM keeps across power
	// cycles (RouterBOOT's settings, CFE's NVRAM); "" keeps nothing.
	Flash string
	// FirmwareClock: the clock is the one the ROM was told in its own
	// firmware (RouterBOOT's menu, CFE's NVRAM), not one set on QEMU.
	FirmwareClock bool

	mu  sync.Mutex // guards q, which a ROM's goroutine sets
	q   *QEMU
	dir string

	// A board with a ROM: its line, and the ROM while it runs.
	line    *uart
	romStop context.CancelFunc
	romDone chan struct{}
}

// NewBoard is a virtual board on n (nil for none) with QEMU as m says.
// Until SetClock it runs on real time.
func NewBoard(n *Net, m Machine, cacheDir string) *Board {
	m.Icount = -1
	return &Board{Net: n, Machine: m, CacheDir: cacheDir}
}

func (b *Board) String() string {
	clock := "real-time clock"
	switch {
	case b.ROM == "raspberrypi":
		// Its ROM sets the clock from the config.txt it fetches.
		clock = "the clock config.txt names"
	case b.FirmwareClock:
		clock = "the clock its firmware was told"
	case b.Machine.Icount >= 0:
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
func (b *Board) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	if b.q != nil || b.line != nil {
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
	if b.ROM != "" {
		if b.line, err = newUART(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		b.dir = dir
		return b.line.master, nil
	}
	q, err := Start(ctx, b.Net, b.Machine, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// QEMU's pty is in raw mode already (it sets it up so): bytes as sent.
	con, err := os.OpenFile(q.PTY, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		q.Kill()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open console %s: %w", q.PTY, err)
	}
	b.q, b.dir = q, dir
	return con, nil
}

// On lets the paused guest run; a board with a ROM starts the ROM.
func (b *Board) On(ctx context.Context) error {
	if b.ROM != "" {
		return b.startROM()
	}
	if b.q == nil {
		return fmt.Errorf("%s: not started (open its console first)", b.Machine.Binary)
	}
	return b.q.Continue()
}

// Off ends the ROM and QEMU and removes their files.
func (b *Board) Off(ctx context.Context) error {
	if b.romStop != nil {
		b.romStop()
		<-b.romDone
		b.romStop = nil
	}
	if b.line != nil {
		b.line.closeBoard()
		b.line = nil
	}
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
	q := b.guest()
	if q == nil {
		return b.romDone == nil || chanClosed(b.romDone)
	}
	select {
	case <-q.Exited():
		return true
	default:
	}
	return q.PoweredOff()
}

// startROM powers the board on: the ROM runs until it has a kernel, then
// QEMU starts the kernel on the board's line. A ROM that gets nowhere goes
// on trying until power-off, as a board's would.
func (b *Board) startROM() error {
	if b.line == nil {
		return fmt.Errorf("%s: not started (open its console first)", b.Name)
	}
	if b.Net == nil {
		return fmt.Errorf("virtual board %s: its ROM boots from the network, and it has none", b.Name)
	}
	rom, err := b.newROM()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.romStop, b.romDone = cancel, make(chan struct{})
	go func() {
		defer close(b.romDone)
		load, err := rom.boot(ctx)
		if ctx.Err() != nil {
			return // powered off
		}
		if err != nil {
			fmt.Fprintf(b.line.slave, "\r\nbootbench: virtual board: %v\r\n", err)
			return
		}
		if err := b.startKernel(ctx, load); err != nil {
			fmt.Fprintf(b.line.slave, "\r\nbootbench: virtual board: %v\r\n", err)
		}
	}()
	return nil
}

// bootROM is a boot ROM's power-on: it returns what it loaded.
type bootROM interface {
	boot(ctx context.Context) (*romLoad, error)
}

// newROM is the board's ROM, by the profile's name for it.
func (b *Board) newROM() (bootROM, error) {
	switch b.ROM {
	case "routerboot":
		mhz := 0
		if b.Machine.Icount >= 0 {
			mhz = 1000 >> b.Machine.Icount
		}
		return &routerBOOTROM{net: b.Net, mac: b.Machine.MAC, con: b.line.slave, ramMB: b.Machine.Memory, mhz: mhz, board: b.Name, kernelReadsArea: b.KernelReadsCmdline,
			flash: b.Flash, ownClock: b.FirmwareClock, factoryMHz: twinFactoryMHz}, nil
	case "cfe":
		return &cfeROM{
			con: b.line.slave, net: &tapNet{n: b.Net, mac: b.Machine.MAC}, mac: b.Machine.MAC,
			ramMB: b.Machine.Memory, autoboot: cfeAutoboot, kernelReadsArea: b.KernelReadsCmdline,
			flash: b.Flash, ownClock: b.FirmwareClock,
		}, nil
	case "raspberrypi":
		return newPiROM(b.line.slave, &tapNet{n: b.Net, mac: b.Machine.MAC}, b.Serial, b.Machine.Memory)
	}
	return nil, fmt.Errorf("virtual board %s: unknown boot ROM %q (routerboot, cfe, raspberrypi)", b.Name, b.ROM)
}

// twinFactoryMHz is the clock a twin whose firmware sets it leaves the
// factory with: the fastest QEMU makes exact.
const twinFactoryMHz = 1000

// cfeAutoboot is how long the virtual CFE waits for Ctrl-C before its
// startup command: about as long as a WRT54G's CFE takes from its banner
// to booting the flash.
const cfeAutoboot = 2 * time.Second

// startKernel starts QEMU with what the ROM loaded, as the CPU jumping to
// it: no firmware, no NIC (the ROM had it), the board's line as its UART.
func (b *Board) startKernel(ctx context.Context, load *romLoad) error {
	name := load.kernelFile
	if name == "" {
		name = "kernel.elf"
	}
	m := b.Machine
	m.Kernel, m.Initrd, m.Append, m.Serial = filepath.Join(b.dir, name), "", load.cmdline, b.line.path
	if err := os.WriteFile(m.Kernel, load.kernel, 0o644); err != nil {
		return err
	}
	if load.initrd != nil {
		m.Initrd = filepath.Join(b.dir, "initrd.img")
		if err := os.WriteFile(m.Initrd, load.initrd, 0o644); err != nil {
			return err
		}
	}
	if load.ownClock {
		m.Icount = load.icount
	}
	q, err := Start(ctx, nil, m, b.dir)
	if err != nil {
		return err
	}
	b.setGuest(q)
	return q.Continue()
}

func (b *Board) guest() *QEMU {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.q
}

func (b *Board) setGuest(q *QEMU) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.q = q
}

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
