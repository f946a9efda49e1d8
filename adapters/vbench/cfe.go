package vbench

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/elfcmdline"
)

// The virtual WRT54G's boot ROM stands in for Broadcom's CFE as bootbench
// meets it on a WRT54G (CFE's manual and its cfe_error.h; published CFE
// consoles, harness/testdata/cfe-replay.txt and
// serialctl/testdata/cfe-wrt160n.txt):
//
//   - at power-on CFE's banner, then a short window in which Ctrl-C on the
//     console stops the autoboot; without it CFE boots from flash, which
//     the virtual board has none of, so the boot fails and CFE is left at
//     its prompt, as a WRT54G with a blank flash is;
//   - the "CFE> " prompt, echoing what is typed, and three answers:
//     "ifconfig eth0 -auto" (DHCP from the board's MAC), "boot -elf
//     HOST:FILE" (FILE from HOST by TFTP, one ELF, started), and CFE's own
//     reply to any other command;
//   - every command ends with CFE's "*** command status = N" line.
//
// CFE passes the kernel no command line of ours: the run's is in the
// kernel's CMDLINE: area, which an OpenWrt kernel reads itself. Debian's
// and bootbench's Malta kernels have no such reader, so the ROM passes the
// area's text as QEMU's -append, as the RouterBOOT ROM does.

// cfeROM is one power-on of the ROM.
type cfeROM struct {
	con   romConsole
	net   cfeNet
	mac   net.HardwareAddr
	ramMB int

	lease *cfeLease // what ifconfig got; nil before
	// autoboot is how long Ctrl-C is waited for after the banner.
	autoboot time.Duration
	// kernelReadsArea: the kernel appends its own command line area;
	// CFE passes it nothing.
	kernelReadsArea bool

	// flash is the directory of the board's flash, where NVRAM is
	// committed; nvram is the working copy, read at each start.
	flash string
	nvram map[string]string
	// ownClock: the kernel runs at the clock NVRAM's clkfreq names.
	ownClock bool
}

// romConsole is the board's end of its serial line: a ROM types on it and
// reads keys off it, with a deadline so that power-off is heard.
type romConsole interface {
	io.ReadWriter
	SetReadDeadline(time.Time) error
}

// cfeNet is what CFE's network stack does for the two commands that use it.
type cfeNet interface {
	// dhcp asks for an address from the board's MAC.
	dhcp(ctx context.Context) (*cfeLease, error)
	// fetch gets file from server by TFTP, from the address lease gave.
	fetch(ctx context.Context, lease *cfeLease, server net.IP, file string) ([]byte, error)
	close()
}

// cfeLease is what CFE's DHCP client keeps of an answer.
type cfeLease struct {
	ip, mask, gateway, dns net.IP
	domain                 string
}

// CFE's status codes (its cfe_error.h, also in Linux's
// arch/mips/include/asm/fw/cfe/cfe_error.h).
const (
	cfeOK             = 0
	cfeErr            = -1
	cfeErrDevNotFound = -6
	cfeErrInvParam    = -8
	cfeErrNotELF      = -11
)

// cfeCommands are the commands CFE lists when it does not know one: the
// twin's, which are the ones bootbench types.
var cfeCommands = []string{"ifconfig", "boot", "nvram", "reboot"}

func (r *cfeROM) say(format string, args ...any) {
	fmt.Fprintf(r.con, format, args...)
}

// boot runs CFE until a boot -elf has an ELF to start, or ctx ends; a
// reboot starts it again from its banner.
func (r *cfeROM) boot(ctx context.Context) (*romLoad, error) {
	defer r.net.close()
	for {
		load, err := r.start(ctx)
		if !errors.Is(err, errRestart) {
			return load, err
		}
	}
}

// start is one start of CFE: NVRAM read, banner, autoboot, prompt.
func (r *cfeROM) start(ctx context.Context) (*romLoad, error) {
	r.nvram, r.lease = map[string]string{}, nil
	if err := loadFlash(r.flash, cfeNVRAMFile, &r.nvram); err != nil {
		return nil, err
	}
	r.banner()
	if !r.stopped(ctx) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.flashBoot()
	}
	for {
		line, err := r.prompt(ctx)
		if err != nil {
			return nil, err
		}
		load, err := r.command(ctx, line)
		if load != nil || err != nil {
			return load, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// banner is what CFE prints as it starts, as the WRT54G's CFE does.
func (r *cfeROM) banner() {
	r.say("\r\nCFE version 1.0.37 for BCM947XX (32bit,SP,LE)\r\n")
	r.say("Build Date: virtual (bootbench)\r\n")
	r.say("Copyright (C) 2000,2001,2002,2003 Broadcom Corporation.\r\n\r\n")
	r.say("Initializing Arena\r\nInitializing Devices.\r\n")
	r.say("CPU type 0x29008: %dMHz\r\nTotal memory: %d KBytes\r\n\r\n", r.clock(), r.ramMB<<10)
}

// stopped waits the autoboot window for Ctrl-C, as CFE checks its console
// before it runs its startup command. Other keys are ignored.
func (r *cfeROM) stopped(ctx context.Context) bool {
	deadline := time.Now().Add(r.autoboot)
	for time.Now().Before(deadline) {
		b, err := r.key(ctx, deadline)
		if err != nil {
			return false
		}
		if b == 0x03 {
			r.say("Automatic startup canceled via Ctrl-C\r\n")
			return true
		}
	}
	return false
}

// flashBoot is CFE's startup command on a board whose flash holds no
// kernel: the load fails and CFE goes to its prompt.
func (r *cfeROM) flashBoot() {
	r.say("CMD: [boot -raw -z -addr=0x80001000 -max=0x770000 flash0.os:]\r\n")
	r.say("Loader:raw Filesys:raw Dev:flash0.os File: Options:(null)\r\n")
	r.say("Loading: Could not load flash0.os:: Device not found\r\n")
	r.status(cfeErrDevNotFound)
}

// key reads one byte before deadline; errTimeout when none came, the
// context's error once it ended.
func (r *cfeROM) key(ctx context.Context, deadline time.Time) (byte, error) {
	return readKey(ctx, r.con, deadline)
}

// readKey reads one byte typed on a ROM's console before deadline;
// errTimeout when none came, the context's error once it ended.
func readKey(ctx context.Context, con romConsole, deadline time.Time) (byte, error) {
	var b [1]byte
	for ctx.Err() == nil {
		// Short reads, so power-off (ctx) is heard within a tick.
		tick := time.Now().Add(100 * time.Millisecond)
		if tick.After(deadline) {
			tick = deadline
		}
		if err := con.SetReadDeadline(tick); err != nil {
			return 0, err
		}
		n, err := con.Read(b[:])
		if n == 1 {
			return b[0], nil
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, err
		}
		if !time.Now().Before(deadline) {
			return 0, errTimeout
		}
	}
	return 0, ctx.Err()
}

// prompt shows "CFE> " and reads one line, echoing it as CFE's console
// does: Enter ends it, backspace erases, Ctrl-C drops it for a new prompt.
func (r *cfeROM) prompt(ctx context.Context) (string, error) {
	r.say("CFE> ")
	var line []byte
	for {
		b, err := r.key(ctx, time.Now().Add(time.Hour))
		switch {
		case errors.Is(err, errTimeout):
			continue
		case err != nil:
			return "", err
		}
		switch b {
		case '\r', '\n':
			r.say("\r\n")
			return string(line), nil
		case 0x03:
			r.say("^C\r\nCFE> ")
			line = line[:0]
		case 0x08, 0x7f:
			if len(line) > 0 {
				line = line[:len(line)-1]
				r.say("\b \b")
			}
		default:
			if b >= ' ' && b < 0x7f {
				line = append(line, b)
				r.con.Write([]byte{b})
			}
		}
	}
}

// command runs one command line; it returns what to start when it was a
// boot that loaded a program, errRestart for a reboot.
func (r *cfeROM) command(ctx context.Context, line string) (*romLoad, error) {
	args := strings.Fields(line)
	if len(args) == 0 {
		return nil, nil // CFE prints nothing for an empty line
	}
	switch args[0] {
	case "ifconfig":
		r.status(r.ifconfig(ctx, args[1:]))
	case "boot":
		load, st := r.bootELF(ctx, args[1:])
		if load != nil {
			return load, nil
		}
		r.status(st)
	case "nvram":
		r.status(r.nvramCommand(args[1:]))
	case "reboot":
		return nil, errRestart
	default:
		r.say("Invalid command: \"%s\"\r\n", args[0])
		r.say("Available commands: %s\r\n", strings.Join(cfeCommands, ", "))
		r.status(cfeErr)
	}
	return nil, nil
}

func (r *cfeROM) status(st int) {
	r.say("*** command status = %d\r\n", st)
}

// switches splits CFE command arguments into switches (-auto, -elf) and
// the rest, since CFE takes switches anywhere on the line.
func switches(args []string) (sw map[string]bool, rest []string) {
	sw = map[string]bool{}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			sw[a] = true
		} else {
			rest = append(rest, a)
		}
	}
	return sw, rest
}

// ifconfig eth0 -auto: DHCP on the board's one Ethernet port. Static
// settings are not part of what bootbench types, and the twin refuses them.
func (r *cfeROM) ifconfig(ctx context.Context, args []string) int {
	sw, rest := switches(args)
	if len(rest) != 1 || rest[0] != "eth0" {
		r.say("Device not found\r\n")
		return cfeErrDevNotFound
	}
	if !sw["-auto"] || len(sw) != 1 {
		r.say("ifconfig: the virtual board takes only -auto\r\n")
		return cfeErrInvParam
	}
	lease, err := r.net.dhcp(ctx)
	if err != nil {
		r.say("DHCP failed: %v\r\n", err)
		return cfeErr
	}
	r.lease = lease
	r.say("Device eth0:  hwaddr %s, ipaddr %s, mask %s\r\n", cfeMAC(r.mac), lease.ip, net.IP(lease.mask))
	r.say("        %s\r\n", lease.servers())
	return cfeOK
}

// cfeMAC is a MAC as CFE prints it: 00-0C-41-12-34-56.
func cfeMAC(mac net.HardwareAddr) string {
	return strings.ToUpper(strings.ReplaceAll(mac.String(), ":", "-"))
}

// servers is CFE's second ifconfig line.
func (l *cfeLease) servers() string {
	s := "gateway not set"
	if l.gateway != nil {
		s = "gateway " + l.gateway.String()
	}
	if l.dns != nil {
		s += ", nameserver " + l.dns.String()
	} else {
		s += ", nameserver not set"
	}
	if l.domain != "" {
		s += ", domain " + l.domain
	}
	return s
}

// bootELF is boot -elf HOST:FILE: FILE by TFTP from HOST, checked as an
// ELF CFE can start, its segments listed as CFE lists them.
func (r *cfeROM) bootELF(ctx context.Context, args []string) (*romLoad, int) {
	sw, rest := switches(args)
	if !sw["-elf"] || len(sw) != 1 || len(rest) != 1 {
		r.say("boot: the virtual board takes only boot -elf HOST:FILE\r\n")
		return nil, cfeErrInvParam
	}
	host, file, ok := strings.Cut(rest[0], ":")
	server := net.ParseIP(host).To4()
	r.say("Loader:elf Filesys:tftp Dev:eth0 File:%s Options:(null)\r\n", rest[0])
	switch {
	case !ok || server == nil || file == "":
		r.say("Could not load %s: Invalid parameter\r\n", rest[0])
		return nil, cfeErrInvParam
	case r.lease == nil:
		// CFE's TFTP needs the interface configured first.
		r.say("Could not load %s: Device not found\r\n", rest[0])
		return nil, cfeErrDevNotFound
	}
	data, err := r.net.fetch(ctx, r.lease, server, file)
	if err != nil {
		r.say("Could not load %s: %v\r\n", rest[0], err)
		return nil, cfeErr
	}
	load, err := r.loadELF(data)
	if err != nil {
		r.say("Could not load %s: %v\r\n", rest[0], err)
		return nil, cfeErrNotELF
	}
	if r.ownClock {
		s, err := boards.IcountShift(boards.MHz(r.clock()))
		if err != nil {
			r.say("Could not start %s: %v\r\n", rest[0], err)
			return nil, cfeErr
		}
		load.icount, load.ownClock = s, true
	}
	r.say("Closing network.\r\nStarting program at 0x%08x\r\n", load.entry)
	return load.romLoad, cfeOK
}

// cfeLoad is an ELF the ROM took, with its entry for the console.
type cfeLoad struct {
	*romLoad
	entry uint64
}

// loadELF checks data is a little-endian MIPS executable (CFE refuses
// anything else), prints its segments as CFE's loader does (address/size
// of what it copies, then of what it zeroes) and takes its embedded
// command line.
func (r *cfeROM) loadELF(data []byte) (*cfeLoad, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil || f.Machine != elf.EM_MIPS || f.Type != elf.ET_EXEC || f.Data != elf.ELFDATA2LSB || f.Class != elf.ELFCLASS32 {
		return nil, errors.New("Not an ELF-format executable")
	}
	var segs []string
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		segs = append(segs, fmt.Sprintf("0x%08x/%d", p.Vaddr, p.Filesz))
		if p.Memsz > p.Filesz {
			segs = append(segs, fmt.Sprintf("0x%08x/%d", p.Vaddr+p.Filesz, p.Memsz-p.Filesz))
		}
	}
	r.say("Loading: %s Entry address is 0x%08x\r\n", strings.Join(segs, " "), f.Entry)
	// A kernel without an area boots with no command line, as it would
	// from CFE.
	cmdline, _ := elfcmdline.Read(data)
	if r.kernelReadsArea {
		cmdline = ""
	}
	if len(cmdline) > maltaCmdline {
		return nil, fmt.Errorf("the kernel command line is %d bytes, QEMU's Malta loader passes %d", len(cmdline), maltaCmdline)
	}
	return &cfeLoad{romLoad: &romLoad{kernel: data, cmdline: strings.TrimSpace(cmdline)}, entry: f.Entry}, nil
}
