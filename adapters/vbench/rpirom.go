package vbench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// The virtual Raspberry Pi 4's boot ROM does on the bench network what the
// Pi 4's EEPROM bootloader and its firmware (start4.elf) do when they boot
// from the network, and nothing more. The facts come from Raspberry Pi's
// documentation: "Raspberry Pi 4 bootloader configuration" (bcm2711-
// bootloader: TFTP_PREFIX, PXE_OPTION43, DHCP_OPTION97, DHCP_REQ_TIMEOUT),
// "Network booting" (boot-net: the DHCP request, option 43, the TFTP
// exchange) and config.txt's pages (see rpiconfig.go):
//
//   - DHCP DISCOVER from the board's MAC with option 60
//     "PXEClient:Arch:00000:UNDI:002001", 93 (architecture 0), 94 (UNDI
//     1.2.1), 97 (client GUID: the fourcc "RPi4", board revision, the MAC's
//     low 4 bytes, serial) and a parameter request list asking for 43,
//     60, 67, 128-135 and 66, as boot-net's capture shows it;
//   - only an offer whose option 43 holds "Raspberry Pi Boot" is taken
//     (PXE_OPTION43's default); others are ignored and the DISCOVER sent
//     again, every second (DHCP_REQ_TIMEOUT, here 1000 ms: its default is
//     4000), for as long as the board is on (BOOT_ORDER 0xf2: network,
//     then restart);
//   - REQUEST, ACK; the TFTP server is option 66 when given, else siaddr,
//     else (a proxy's offer: dnsmasq's in the tutorial's setup sends
//     neither) the offer's server identifier; TFTP_IP is not set;
//   - TFTP in octet mode, 512-byte blocks (boot-net's capture): first
//     <serial>/start4.elf; if neither start4.elf nor start.elf is in the
//     serial's directory, the prefix is cleared and start4.elf is asked
//     for at the root (TFTP_PREFIX=0, the default); every later file uses
//     the prefix so decided;
//   - then fixup4.dat (start4.elf's matched pair, config.txt "Boot
//     options": start_file/fixup_file), config.txt, the command line
//     (cmdline.txt unless cmdline= names another), the device tree
//     (bcm2711-rpi-4-b.dtb unless device_tree=), the kernel (kernel=;
//     kernel8.img with arm_64bit=1) and the initramfs (initramfs <file>
//     followkernel).
//
// What the twin does not do: run start4.elf on a VideoCore (it checks the
// firmware files are there and runs only the kernel), read overlays, or
// follow the bootloader settings a Pi leaves at their defaults here
// (TFTP_IP, a static address, TFTP_PREFIX 1 and 2, HTTP boot).

// piROM is one power-on of the Pi 4's bootloader.
type piROM struct {
	con      io.Writer // the board's UART (BOOT_UART=1, uart_2ndstage=1)
	net      *tapNet
	mac      net.HardwareAddr
	serial   string // 8 lower-case hex digits
	revision uint32 // the board revision code, from its RAM
	ramMB    int
}

// piLoad is what the firmware fetched and read.
type piLoad struct {
	config  piConfig
	kernel  []byte
	initrd  []byte
	cmdline string
}

func (r *piROM) say(format string, args ...any) {
	fmt.Fprintf(r.con, format+"\r\n", args...)
}

// piBoardRevisions are the Pi 4 Model B's revision codes by RAM size
// (documentation: "Raspberry Pi revision codes": new-style codes, memory
// size in bits 20-22, type 0x11, revision 1.1; 8 GB boards are 1.4).
var piBoardRevisions = map[int]uint32{1024: 0xa03111, 2048: 0xb03111, 4096: 0xc03111, 8192: 0xd03114}

// newPiROM is the ROM of a Pi 4 with ramMB of RAM.
func newPiROM(con io.Writer, n *tapNet, serial string, ramMB int) (*piROM, error) {
	rev, ok := piBoardRevisions[ramMB]
	if !ok {
		return nil, fmt.Errorf("a Raspberry Pi 4 has 1024, 2048, 4096 or 8192 MiB of RAM, not %d", ramMB)
	}
	return &piROM{con: con, net: n, mac: n.mac, serial: serial, revision: rev, ramMB: ramMB}, nil
}

// boot runs the bootloader until it has a kernel to start, or ctx ends
// (power off). A failed network boot starts over, as BOOT_ORDER's
// restart (0xf) makes the real one do; a clock the twin cannot make
// does not.
func (r *piROM) boot(ctx context.Context) (*romLoad, error) {
	defer r.net.close()
	r.say("")
	r.say("RPi: BOOTLOADER release VERSION:bootbench-twin BOOTMODE: 0x00000006 part: 0 %#08x", r.revision)
	r.say("Raspberry Pi 4 Model B - %dGB", r.ramMB/1024)
	r.say("Boot mode: NETWORK (02) order f2")
	r.say("NET_BOOT: %s wait for link TFTP: 0.0.0.0", r.mac)
	for {
		load, err := r.netboot(ctx)
		if err == nil {
			return r.start(load)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, errCannotStart) {
			return nil, err
		}
		r.say("NET_BOOT: failed: %v", err)
		r.say("Boot mode: RESTART (0f) order f2")
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// start hands the kernel to the CPU: QEMU's virt machine, on the virtual
// clock arm_freq names, with the command line's console on virt's UART.
func (r *piROM) start(load *piLoad) (*romLoad, error) {
	icount := -1
	if mhz := load.config.ArmFreq; mhz != 0 {
		s, err := boards.IcountShift(boards.MHz(mhz))
		if err != nil {
			r.say("MESS: arm_freq=%d: the twin's CPU clock is QEMU's instruction count, which makes 1000 MHz halved (1000, 500, 250, ...), not %d", mhz, mhz)
			return nil, fmt.Errorf("%w: config.txt asks for arm_freq=%d, a clock the twin cannot make (%v)", errCannotStart, mhz, err)
		}
		icount = s
		r.say("MESS: arm_freq=%d: -icount shift=%d", mhz, s)
	} else {
		r.say("MESS: no arm_freq in config.txt: the twin runs on the host's clock, not the Pi 4's default 1500 MHz")
	}
	cmdline := virtConsole(load.cmdline)
	r.say("MESS: Kernel relocated to 0x200000")
	r.say("MESS: Starting the kernel: %s", cmdline)
	return &romLoad{kernel: load.kernel, kernelFile: "kernel.img", initrd: load.initrd, cmdline: cmdline, icount: icount, ownClock: true}, nil
}

// netboot is one network boot: DHCP, then the files.
func (r *piROM) netboot(ctx context.Context) (*piLoad, error) {
	l, done, err := r.net.attach(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	lease, err := r.dhcp(ctx, l)
	if err != nil {
		return nil, err
	}
	l.ip = lease.ip
	r.say("NET %s %s gw 0.0.0.0 tftp %s", lease.ip, lease.mask, lease.tftp)
	mac, err := arpResolve(ctx, l, lease.tftp)
	if err != nil {
		return nil, fmt.Errorf("ARP %s: %w", lease.tftp, err)
	}
	r.say("ARP %s %s", lease.tftp, mac)
	f := &piFetcher{rom: r, ctx: ctx, l: l, mac: mac, server: lease.tftp}
	return f.fetchAll()
}

// piLease is what the bootloader keeps of the DHCP exchange.
type piLease struct {
	ip, mask, tftp net.IP
}

// piDHCPRetry is how often the bootloader sends its DISCOVER or REQUEST
// again while nothing it takes answers (DHCP_REQ_TIMEOUT).
const piDHCPRetry = time.Second

// dhcp runs DISCOVER, offers, REQUEST, ACK. The address may come from
// one server and the boot server from another, a proxy DHCP server (the
// setup Raspberry Pi's network boot tutorial makes: the home router gives
// the address, dnsmasq with dhcp-range=...,proxy the PXE options); or
// both from one.
func (r *piROM) dhcp(ctx context.Context, l *link) (*piLease, error) {
	var xid [4]byte
	rand.Read(xid[:])
	addr, boot, err := r.discover(ctx, l, xid)
	if err != nil {
		return nil, err
	}
	// A proxy server's ACK gives no address: the ROM waits for the
	// address's server's.
	ack, err := exchange(ctx, l, piRequest(r.mac, r.guid(), xid, addr), xid, dhcpv4.MessageTypeAck,
		func(m *dhcpv4.DHCPv4) bool { return !m.YourIPAddr.IsUnspecified() })
	if err != nil {
		return nil, err
	}
	r.say("DHCP src: %s", ack.ServerIdentifier())
	r.say("YI_ADDR %s", ack.YourIPAddr)
	r.say("SI_ADDR %s", boot.siaddr)
	lease := &piLease{ip: ack.YourIPAddr.To4(), mask: net.IP(ack.SubnetMask()).To4(), tftp: boot.siaddr}
	if lease.tftp.IsUnspecified() {
		// dnsmasq's proxy offer, in the tutorial's setup, has siaddr
		// 0.0.0.0 and no option 66: its server (option 54) serves TFTP.
		lease.tftp = boot.serverID
	}
	if boot.tftpName != "" {
		ip := net.ParseIP(boot.tftpName).To4()
		if ip == nil {
			return nil, fmt.Errorf("option 66 %q is not an IPv4 address", boot.tftpName)
		}
		lease.tftp = ip
	}
	if lease.mask == nil {
		lease.mask = net.IP(lease.ip.DefaultMask())
	}
	return lease, nil
}

// discover broadcasts the DISCOVER until it has an offer of an address
// and an offer for a Pi (option 43 with "Raspberry Pi Boot"), one reply
// or two. Offers for a Pi from nobody else are what it waits for: a
// network without one gets asked again and again, as a Pi's does.
func (r *piROM) discover(ctx context.Context, l *link, xid [4]byte) (addr, boot *piReply, err error) {
	frame := udpFrame(broadcastMAC, l.mac, net.IPv4zero, net.IPv4bcast, bootpClientPort, bootpServerPort, piDiscover(r.mac, r.guid(), xid))
	ignored := map[string]bool{}
	for ctx.Err() == nil {
		if err := l.send(frame); err != nil {
			return nil, nil, err
		}
		_, err := l.recv(time.Now().Add(piDHCPRetry), func(f []byte) bool {
			got := parsePiReply(f, xid, l.mac)
			if got == nil || got.msgType != dhcpMsgOffer {
				return false
			}
			if !got.yiaddr.IsUnspecified() && addr == nil {
				addr = got
			}
			if got.forPi() {
				boot = got
			} else if !ignored[got.serverID.String()] {
				r.say("DHCP: offer from %s has no option 43 \"%s\"", got.serverID, piOption43)
				ignored[got.serverID.String()] = true
			}
			return addr != nil && boot != nil
		})
		if err == nil {
			return addr, boot, nil
		}
		if !errors.Is(err, errTimeout) {
			return nil, nil, err
		}
	}
	return nil, nil, ctx.Err()
}

// guid is the bootloader's client GUID, option 97's 16 bytes
// (DHCP_OPTION97's default format): the fourcc RPi4 (0x34695052, little
// endian), the board revision, the MAC's 4 least significant bytes and
// the serial number, each 4 bytes. The documentation gives the byte
// order of the fourcc only; the revision and serial are written in the
// same (little-endian) order, the MAC's bytes as on the wire.
func (r *piROM) guid() [16]byte {
	var g [16]byte
	binary.LittleEndian.PutUint32(g[0:], 0x34695052)
	binary.LittleEndian.PutUint32(g[4:], r.revision)
	copy(g[8:12], r.mac[2:6])
	var serial uint32
	fmt.Sscanf(r.serial, "%08x", &serial)
	binary.LittleEndian.PutUint32(g[12:], serial)
	return g
}

// piOption43 is the string the bootloader looks for in option 43
// (PXE_OPTION43's default), what dnsmasq's pxe-service=0,"Raspberry Pi
// Boot" sends as the PXE boot menu's entry.
const piOption43 = "Raspberry Pi Boot"
