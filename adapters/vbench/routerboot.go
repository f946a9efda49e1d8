package vbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/elfcmdline"
)

// The virtual RouterBOOT board's boot ROM does on the bench network what
// MikroTik's RouterBOOT does when it boots from Ethernet, and nothing more
// (MikroTik's RouterBOOT manual; OpenWrt's MikroTik pages):
//
//   - a plain BOOTP request (RFC 951: no DHCP options, vendor area zero)
//     from the board's MAC, repeated until a reply comes; a reply carrying
//     a DHCP message type (option 53) is not a BOOTP reply and is ignored;
//   - the file the reply names, from siaddr, by TFTP in octet mode with no
//     options: 512-byte blocks, no tsize;
//   - that file must be one ELF; it is loaded (QEMU's -kernel) and started
//     with RouterBOOT's own kernel parameters: console, board and kmac.
//     RouterBOOT also passes mem and HZ; they are left out here, since the
//     Malta kernel finds its memory itself, a virtual board has no clock
//     frequency, and QEMU's Malta loader passes at most 255 bytes of
//     command line (ENVP_ENTRY_SIZE), which the run's own parameters
//     already mostly fill.
//
// Everything else a kernel needs it must carry itself: OpenWrt's MikroTik
// kernels append their built-in CMDLINE: area to what RouterBOOT passes.
// Debian's Malta kernel has no such area, so the ROM reads the ELF's area
// and appends it, as that kernel would. What the ROM prints follows
// RouterBOOT's console.

// routerBOOTROM is one power-on of the ROM.
type routerBOOTROM struct {
	net   *Net
	mac   net.HardwareAddr
	con   romConsole // the board's UART
	ramMB int
	mhz   int // the clock QEMU runs at (0: real time), where the ROM does not set it
	board string
	// flash is the directory of the board's flash, where its settings
	// are kept; settings are them, read at power-on.
	flash    string
	settings rbSettings
	// ownClock: the clock is the menu's cpu frequency, which the ROM
	// announces and starts the kernel at; factoryMHz is its setting
	// from the factory.
	ownClock   bool
	factoryMHz int
	// kernelReadsArea: the kernel appends its own command line area, so
	// the ROM passes only RouterBOOT's parameters.
	kernelReadsArea bool
}

// romLoad is what a ROM hands to the CPU: the kernel (an ELF, for the
// MIPS boards' ROMs), an initramfs where the ROM loaded one, the command
// line, and the clock when the ROM sets it.
type romLoad struct {
	kernel     []byte
	kernelFile string // its name in the boot's directory: kernel.elf when ""
	initrd     []byte
	cmdline    string
	// icount is the -icount shift the ROM's configuration asks for (-1:
	// real time), for a ROM that sets the clock (ownClock); others run
	// on the board's.
	icount   int
	ownClock bool
}

// bootpReply is what a BOOTP server said.
type bootpReply struct {
	yiaddr, siaddr net.IP
	file           string
	serverMAC      net.HardwareAddr
}

func (r *routerBOOTROM) say(format string, args ...any) {
	fmt.Fprintf(r.con, format, args...)
}

// boot runs the ROM until it has an ELF to start, or ctx ends (power off):
// the banner, the setup menu when a key comes in time (starting again
// when its clock changed), then the boot device.
func (r *routerBOOTROM) boot(ctx context.Context) (*romLoad, error) {
	r.settings = factoryRB(r.factoryMHz)
	if err := loadFlash(r.flash, rbFlashFile, &r.settings); err != nil {
		return nil, err
	}
	for {
		r.banner()
		if !r.enterSetup(ctx) {
			break
		}
		err := r.setup(ctx)
		if errors.Is(err, errRestart) {
			r.say("\r\nrebooting...\r\n")
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return r.load(ctx)
}

func (r *routerBOOTROM) banner() {
	r.say("\r\n\r\nRouterBOOT booter virtual (bootbench)\r\n\r\n%s\r\n\r\n", r.board)
	if mhz := r.clock(); mhz > 0 {
		r.say("CPU frequency: %s\r\n", boards.MHz(mhz).Figure())
	}
	r.say("  Memory size: %d MB\r\n\r\n", r.ramMB)
}

// clock is the clock the board runs at (0: QEMU's real time).
func (r *routerBOOTROM) clock() int {
	if r.ownClock {
		return r.settings.CPUMHz
	}
	return r.mhz
}

// load boots from the boot device. The NAND holds no kernel: booting from
// it alone leaves the board there until power-off, as a RouterBOARD with
// an empty NAND; a one-time Ethernet boot goes back to NAND once the
// kernel is loaded.
func (r *routerBOOTROM) load(ctx context.Context) (*romLoad, error) {
	switch r.settings.BootDevice {
	case bootNANDOnly:
		r.say("loading kernel from nand... no kernel found\r\n")
		<-ctx.Done()
		return nil, ctx.Err()
	case bootNANDThenEth:
		r.say("loading kernel from nand... no kernel found\r\n")
	}
	load, err := r.netbootUntilLoaded(ctx)
	if err != nil {
		return nil, err
	}
	if r.settings.BootDevice == bootEthernetOnce {
		r.settings.BootDevice = bootNANDOnly
		if err := saveFlash(r.flash, rbFlashFile, r.settings); err != nil {
			return nil, err
		}
	}
	if r.ownClock {
		s, err := boards.IcountShift(boards.MHz(r.settings.CPUMHz))
		if err != nil {
			return nil, fmt.Errorf("%w: cpu frequency %s: %v", errCannotStart, boards.MHz(r.settings.CPUMHz).Figure(), err)
		}
		load.icount, load.ownClock = s, true
	}
	return load, nil
}

// netbootUntilLoaded netboots until an ELF is loaded; a failed load starts
// over, as RouterBOOT does.
func (r *routerBOOTROM) netbootUntilLoaded(ctx context.Context) (*romLoad, error) {
	for {
		load, err := r.netboot(ctx)
		if err == nil {
			return load, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errCannotStart) {
			return nil, err
		}
		r.say("kernel loading failed: %v\r\n", err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// netboot is one attempt: BOOTP, TFTP, ELF.
func (r *routerBOOTROM) netboot(ctx context.Context) (*romLoad, error) {
	l, err := openLink(r.net, r.mac)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	stop := context.AfterFunc(ctx, func() { l.f.SetReadDeadline(time.Now()) })
	defer stop()

	r.say("trying bootp protocol...")
	rep, err := bootp(ctx, l)
	if err != nil {
		r.say(" failed\r\n")
		return nil, err
	}
	r.say(" OK\r\nGot IP address: %s\r\n", rep.yiaddr)
	l.ip = rep.yiaddr
	mac, err := arpResolve(ctx, l, rep.siaddr)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", rep.siaddr, err)
	}
	r.say("resolved mac address %s\r\n", strings.ToUpper(mac.String()))
	r.say("transfer started ")
	start := time.Now()
	data, err := tftpGet(ctx, l, mac, rep.siaddr, rep.file, func() { r.say(".") })
	if err != nil {
		r.say(" transfer failed\r\n")
		return nil, err
	}
	r.say(" transfer ok, time=%.2fs\r\n", time.Since(start).Seconds())
	r.say("setting up elf image...")
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil || f.Machine != elf.EM_MIPS || f.Type != elf.ET_EXEC {
		r.say(" kernel is not a MIPS ELF executable\r\n")
		return nil, errors.New("not an ELF")
	}
	embedded, err := elfcmdline.Read(data)
	if err != nil || r.kernelReadsArea {
		// An OpenWrt kernel without an area boots with RouterBOOT's
		// parameters alone; one with an area reads it itself.
		embedded = ""
	}
	cmdline := strings.TrimSpace(r.params() + " " + embedded)
	if len(cmdline) > maltaCmdline {
		r.say(" command line of %d bytes\r\n", len(cmdline))
		return nil, fmt.Errorf("%w: the kernel command line is %d bytes, QEMU's Malta loader passes %d (shorten --append or --algs)", errCannotStart, len(cmdline), maltaCmdline)
	}
	r.say(" OK\r\njumping to kernel code\r\n")
	return &romLoad{kernel: data, cmdline: cmdline}, nil
}

// errCannotStart is a load that loading again would not mend.
var errCannotStart = errors.New("cannot start the kernel")

// maltaCmdline is the longest command line QEMU's Malta board passes its
// kernel: one 256-byte environment entry, NUL included.
const maltaCmdline = 255

// params are the kernel parameters RouterBOOT itself passes ("board" is a
// model code on a real RouterBOARD, e.g. 450G).
func (r *routerBOOTROM) params() string {
	return fmt.Sprintf("console=ttyS0,115200 board=virt kmac=%s", r.mac)
}

const (
	bootpServerPort = 67
	bootpClientPort = 68
	bootpLen        = 300 // RFC 951: 236 bytes then a 64-byte vendor area
)

// bootp broadcasts RouterBOOT's BOOTP request until a BOOTP reply to it
// comes, resending every second (the first may go out before the host has
// seen the link come up, and be answered into nothing).
func bootp(ctx context.Context, l *link) (*bootpReply, error) {
	xid := make([]byte, 4)
	rand.Read(xid)
	frame := bootpRequest(l.mac, xid)
	for ctx.Err() == nil {
		if err := l.send(frame); err != nil {
			return nil, err
		}
		var rep *bootpReply
		_, err := l.recv(time.Now().Add(time.Second), func(f []byte) bool {
			rep = parseBOOTPReply(f, xid, l.mac)
			return rep != nil
		})
		if err == nil {
			return rep, nil
		}
		if !errors.Is(err, errTimeout) {
			return nil, err
		}
	}
	return nil, ctx.Err()
}

// bootpRequest is RouterBOOT's request as a broadcast frame: RFC 951's
// fixed fields, the vendor area all zero (no magic cookie, no options).
func bootpRequest(mac net.HardwareAddr, xid []byte) []byte {
	req := make([]byte, bootpLen)
	req[0], req[1], req[2] = 1, 1, 6 // BOOTREQUEST, Ethernet, 6-byte address
	copy(req[4:8], xid)
	copy(req[28:], mac)
	return udpFrame(broadcastMAC, mac, net.IPv4zero, net.IPv4bcast, bootpClientPort, bootpServerPort, req)
}

// parseBOOTPReply reads a BOOTP reply to our request (xid, our MAC), or
// nil. A reply with a DHCP message type is a DHCP server's, not for a BOOTP
// client: RouterBOOT ignores it.
func parseBOOTPReply(f, xid []byte, mac net.HardwareAddr) *bootpReply {
	u, ok := parseUDP(f)
	if !ok || u.dport != bootpClientPort || len(u.payload) < 236 {
		return nil
	}
	p := u.payload
	if p[0] != 2 || !bytes.Equal(p[4:8], xid) || !bytes.Equal(p[28:34], mac) {
		return nil
	}
	if hasDHCPMessageType(p) {
		return nil
	}
	file := p[108:236]
	if i := bytes.IndexByte(file, 0); i >= 0 {
		file = file[:i]
	}
	return &bootpReply{
		yiaddr: net.IP(append([]byte(nil), p[16:20]...)), siaddr: net.IP(append([]byte(nil), p[20:24]...)),
		file: string(file), serverMAC: u.srcMAC,
	}
}

// hasDHCPMessageType looks for option 53 in the vendor area (after the
// RFC 1048 magic cookie).
func hasDHCPMessageType(p []byte) bool {
	if len(p) < 240 || !bytes.Equal(p[236:240], []byte{99, 130, 83, 99}) {
		return false
	}
	for o := p[240:]; len(o) > 0; {
		switch o[0] {
		case 0:
			o = o[1:]
			continue
		case 255:
			return false
		}
		if len(o) < 2 || len(o) < 2+int(o[1]) {
			return false
		}
		if o[0] == 53 {
			return true
		}
		o = o[2+int(o[1]):]
	}
	return false
}

// arpResolve asks who has ip, as RouterBOOT does before it talks to the
// TFTP server.
func arpResolve(ctx context.Context, l *link, ip net.IP) (net.HardwareAddr, error) {
	for try := 0; try < 5 && ctx.Err() == nil; try++ {
		if err := l.send(arpFrame(1, l.mac, l.ip, make(net.HardwareAddr, 6), ip)); err != nil {
			return nil, err
		}
		var mac net.HardwareAddr
		_, err := l.recv(time.Now().Add(time.Second), func(f []byte) bool {
			a, ok := parseARP(f)
			if ok && a.op == 2 && a.spa.Equal(ip) {
				mac = append(net.HardwareAddr(nil), a.sha...)
				return true
			}
			return false
		})
		if err == nil {
			return mac, nil
		}
		if !errors.Is(err, errTimeout) {
			return nil, err
		}
	}
	return nil, errors.New("no ARP reply")
}

// TFTP (RFC 1350) opcodes.
const (
	tftpRRQ   = 1
	tftpDATA  = 3
	tftpACK   = 4
	tftpERROR = 5
	tftpBlock = 512
)

// tftpError is the server's answer of an ERROR packet instead of data.
type tftpError struct {
	code uint16
	msg  string
}

func (e *tftpError) Error() string { return fmt.Sprintf("TFTP error %d: %s", e.code, e.msg) }

// tftpNotFound is RFC 1350's error code 1, "File not found".
const tftpNotFound = 1

// tftpGet fetches file from server in octet mode with no options, so in
// 512-byte blocks: one block, one ACK. A lost packet is sent again after
// a second, up to 8 times. tick is called every 256 blocks (128 KiB).
func tftpGet(ctx context.Context, l *link, mac net.HardwareAddr, server net.IP, file string, tick func()) ([]byte, error) {
	var b [2]byte
	rand.Read(b[:])
	port := 1024 + binary.BigEndian.Uint16(b[:])%30000
	rrq := append([]byte{0, tftpRRQ}, file...)
	rrq = append(append(append(rrq, 0), "octet"...), 0)
	last := udpFrame(mac, l.mac, l.ip, server, port, 69, rrq)
	var data []byte
	var serverPort uint16
	want := uint16(1)
	for tries := 0; tries < 8; {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := l.send(last); err != nil {
			return nil, err
		}
		var u udpPacket
		_, err := l.recv(time.Now().Add(time.Second), func(f []byte) bool {
			p, ok := parseUDP(f)
			if !ok || p.dport != port || !p.src.Equal(server) || len(p.payload) < 4 || (serverPort != 0 && p.sport != serverPort) {
				return false
			}
			u = p
			return true
		})
		if errors.Is(err, errTimeout) {
			tries++
			continue
		}
		if err != nil {
			return nil, err
		}
		op, block := binary.BigEndian.Uint16(u.payload), binary.BigEndian.Uint16(u.payload[2:])
		switch {
		case op == tftpERROR:
			return nil, &tftpError{code: block, msg: string(bytes.TrimRight(u.payload[4:], "\x00"))}
		case op != tftpDATA:
			return nil, fmt.Errorf("TFTP: unexpected opcode %d", op)
		case block != want:
			continue // a duplicate: our ACK is resent on the timeout
		}
		serverPort, tries = u.sport, 0
		data = append(data, u.payload[4:]...)
		last = udpFrame(mac, l.mac, l.ip, server, port, serverPort, []byte{0, tftpACK, byte(block >> 8), byte(block)})
		if want%256 == 0 {
			tick()
		}
		if len(u.payload)-4 < tftpBlock {
			return data, l.send(last)
		}
		want++
	}
	return nil, errors.New("TFTP: no answer")
}
