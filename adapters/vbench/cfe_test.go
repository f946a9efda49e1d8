package vbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/elfcmdline"
	"github.com/bootbench/bootbench/netboot"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// fakeCFENet is a bench network that answers as bootbench's servers would:
// one lease, and files by name.
type fakeCFENet struct {
	lease   *cfeLease
	dhcpErr error
	files   map[string][]byte
	fetched []string
}

func (f *fakeCFENet) dhcp(ctx context.Context) (*cfeLease, error) { return f.lease, f.dhcpErr }
func (f *fakeCFENet) close()                                      {}
func (f *fakeCFENet) fetch(ctx context.Context, l *cfeLease, server net.IP, file string) ([]byte, error) {
	f.fetched = append(f.fetched, server.String()+":"+file)
	if b, ok := f.files[file]; ok {
		return b, nil
	}
	return nil, errors.New("TFTP error 1: file not found")
}

// mipsELF is a little-endian MIPS32 executable: one loadable segment of
// code, a bss after it, and (with cmdline) OpenWrt's CMDLINE: area
// holding cmdline.
func mipsELF(t *testing.T, data binary.ByteOrder, cmdline string) []byte {
	t.Helper()
	body := make([]byte, 64)
	if cmdline != "" {
		area := make([]byte, elfcmdline.Size)
		copy(area, cmdline)
		body = append(append(body, elfcmdline.Marker...), area...)
	}
	const hdr, ph = 52, 32
	b := make([]byte, hdr+ph)
	ident := []byte{0x7f, 'E', 'L', 'F', 1, 1, 1}
	if data == binary.BigEndian {
		ident[5] = 2
	}
	copy(b, ident)
	put16, put32 := data.PutUint16, data.PutUint32
	put16(b[16:], 2) // ET_EXEC
	put16(b[18:], 8) // EM_MIPS
	put32(b[20:], 1) // version
	put32(b[24:], 0x80001000)
	put32(b[28:], hdr) // phoff
	put16(b[40:], hdr)
	put16(b[42:], ph)
	put16(b[44:], 1)
	p := b[hdr:]
	put32(p[0:], 1) // PT_LOAD
	put32(p[4:], hdr+ph)
	put32(p[8:], 0x80001000)
	put32(p[12:], 0x80001000)
	put32(p[16:], uint32(len(body)))
	put32(p[20:], uint32(len(body))+4096)
	put32(p[24:], 7)
	return append(b, body...)
}

// console is the bench's end of a fake serial line to a ROM: what the ROM
// printed so far, and keys typed to it.
type console struct {
	t    *testing.T
	conn net.Conn
	out  chan []byte
	seen bytes.Buffer
}

func newConsole(t *testing.T, c net.Conn) *console {
	con := &console{t: t, conn: c, out: make(chan []byte, 4096)}
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := c.Read(buf)
			if n > 0 {
				con.out <- buf[:n]
			}
			if err != nil {
				close(con.out)
				return
			}
		}
	}()
	return con
}

// expect reads the console until want has been printed.
func (c *console) expect(want string) {
	c.t.Helper()
	timeout := time.After(5 * time.Second)
	for !strings.Contains(c.seen.String(), want) {
		select {
		case b, ok := <-c.out:
			if !ok {
				c.t.Fatalf("console closed before %q; it printed:\n%s", want, c.seen.String())
			}
			c.seen.Write(b)
		case <-timeout:
			c.t.Fatalf("no %q on the console; it printed:\n%s", want, c.seen.String())
		}
	}
}

func (c *console) typeKeys(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// startCFE powers a ROM on with a fake network; it returns the console,
// and the channel its boot's end comes on.
func startCFE(t *testing.T, fn *fakeCFENet, autoboot time.Duration) (*console, <-chan *romLoad, context.CancelFunc) {
	return startCFEFlash(t, fn, autoboot, "")
}

// startCFEFlash is startCFE with NVRAM in flash (a directory) and the
// kernel at the clock clkfreq names.
func startCFEFlash(t *testing.T, fn *fakeCFENet, autoboot time.Duration, flash string) (*console, <-chan *romLoad, context.CancelFunc) {
	board, bench := net.Pipe()
	rom := &cfeROM{con: board, net: fn, mac: net.HardwareAddr{0x52, 0x54, 0, 0xbb, 0, 7}, ramMB: 16, autoboot: autoboot, flash: flash, ownClock: flash != ""}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *romLoad, 1)
	go func() {
		load, _ := rom.boot(ctx)
		done <- load
		board.Close()
	}()
	t.Cleanup(func() { cancel(); bench.Close() })
	return newConsole(t, bench), done, cancel
}

var testLease = &cfeLease{ip: net.IPv4(198, 18, 0, 10).To4(), mask: net.IPv4(255, 255, 255, 0).To4()}

// TestCFEDialect: what the virtual CFE prints for each command bootbench
// types at it, or might type by mistake, as the real one answers.
func TestCFEDialect(t *testing.T) {
	kernel := mipsELF(t, binary.LittleEndian, "console=ttyS0,115200 bootbench.run=r1")
	for _, tt := range []struct {
		name  string
		net   fakeCFENet
		typed []string // command lines, each then Enter
		want  []string // in order on the console
	}{
		{"dhcp", fakeCFENet{lease: testLease}, []string{"ifconfig eth0 -auto"}, []string{
			"CFE> ifconfig eth0 -auto\r\n",
			"Device eth0:  hwaddr 52-54-00-BB-00-07, ipaddr 198.18.0.10, mask 255.255.255.0\r\n",
			"        gateway not set, nameserver not set\r\n",
			"*** command status = 0\r\nCFE> ",
		}},
		{"dhcp, switch first", fakeCFENet{lease: testLease}, []string{"ifconfig -auto eth0"}, []string{"ipaddr 198.18.0.10", "*** command status = 0"}},
		{"dhcp with gateway and name server", fakeCFENet{lease: &cfeLease{ip: testLease.ip, mask: testLease.mask, gateway: net.IPv4(198, 18, 0, 1), dns: net.IPv4(198, 18, 0, 1), domain: "bench"}},
			[]string{"ifconfig eth0 -auto"}, []string{"gateway 198.18.0.1, nameserver 198.18.0.1, domain bench\r\n"}},
		{"no DHCP answer", fakeCFENet{dhcpErr: errors.New("no DHCP OFFER")}, []string{"ifconfig eth0 -auto"}, []string{"DHCP failed: no DHCP OFFER", "*** command status = -1"}},
		{"another device", fakeCFENet{lease: testLease}, []string{"ifconfig eth1 -auto"}, []string{"Device not found", "*** command status = -6"}},
		{"unknown command", fakeCFENet{}, []string{"tftpboot 0x80001000 kernel.elf"}, []string{
			"Invalid command: \"tftpboot\"\r\n",
			"Available commands: ifconfig, boot, nvram, reboot\r\n",
			"*** command status = -1\r\n",
		}},
		{"empty line", fakeCFENet{}, []string{"", "bogus"}, []string{"CFE> \r\nCFE> bogus", "Invalid command: \"bogus\""}},
		{"boot before ifconfig", fakeCFENet{files: map[string][]byte{"b/kernel.elf": kernel}}, []string{"boot -elf 198.18.0.1:b/kernel.elf"}, []string{
			"Loader:elf Filesys:tftp Dev:eth0 File:198.18.0.1:b/kernel.elf Options:(null)\r\n",
			"Could not load 198.18.0.1:b/kernel.elf: Device not found\r\n", "*** command status = -6",
		}},
		{"missing file", fakeCFENet{lease: testLease, files: map[string][]byte{}}, []string{"ifconfig eth0 -auto", "boot -elf 198.18.0.1:b/kernel.elf"}, []string{
			"Could not load 198.18.0.1:b/kernel.elf: TFTP error 1: file not found", "*** command status = -1",
		}},
		{"not an ELF", fakeCFENet{lease: testLease, files: map[string][]byte{"b/kernel.elf": []byte("not an ELF at all")}}, []string{"ifconfig eth0 -auto", "boot -elf 198.18.0.1:b/kernel.elf"}, []string{
			"Could not load 198.18.0.1:b/kernel.elf: Not an ELF-format executable", "*** command status = -11",
		}},
		{"big-endian ELF", fakeCFENet{lease: testLease, files: map[string][]byte{"b/kernel.elf": mipsELF(t, binary.BigEndian, "")}}, []string{"ifconfig eth0 -auto", "boot -elf 198.18.0.1:b/kernel.elf"}, []string{
			"Not an ELF-format executable", "*** command status = -11",
		}},
		{"boot without -elf", fakeCFENet{lease: testLease}, []string{"boot 198.18.0.1:b/kernel.elf"}, []string{"*** command status = -8"}},
		{"boot without a host", fakeCFENet{lease: testLease}, []string{"ifconfig eth0 -auto", "boot -elf kernel.elf"}, []string{"Could not load kernel.elf: Invalid parameter", "*** command status = -8"}},
		{"typing mended", fakeCFENet{}, []string{"helq\bp"}, []string{"helq\b \bp\r\n", "Invalid command: \"help\""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fn := tt.net
			con, done, _ := startCFE(t, &fn, time.Minute)
			con.expect("CFE version 1.0.37 for BCM947XX (32bit,SP,LE)\r\n")
			con.typeKeys("\x03")
			con.expect("Automatic startup canceled via Ctrl-C\r\nCFE> ")
			for _, line := range tt.typed {
				con.typeKeys(line + "\r")
			}
			for _, w := range tt.want {
				con.expect(w)
				i := strings.Index(con.seen.String(), w)
				rest := con.seen.String()[i+len(w):]
				con.seen.Reset()
				con.seen.WriteString(rest)
			}
			select {
			case load := <-done:
				t.Fatalf("the ROM ended (load %v) where it should wait at its prompt", load != nil)
			default:
			}
		})
	}
}

// TestCFEBootsELF: ifconfig then boot -elf loads the file CFE was told,
// lists its segments as CFE does and hands the ELF on with the command
// line its CMDLINE: area holds.
func TestCFEBootsELF(t *testing.T) {
	kernel := mipsELF(t, binary.LittleEndian, "console=ttyS0,115200 bootbench.run=r1")
	fn := &fakeCFENet{lease: testLease, files: map[string][]byte{"qemu-wrt54g/kernel.elf": kernel}}
	con, done, _ := startCFE(t, fn, time.Minute)
	con.expect("CFE version")
	con.typeKeys("\x03")
	con.expect("CFE> ")
	con.typeKeys("ifconfig eth0 -auto\r")
	con.expect("*** command status = 0\r\nCFE> ")
	con.typeKeys("boot -elf 198.18.0.1:qemu-wrt54g/kernel.elf\r")
	con.expect("Loading: 0x80001000/1096 0x80001448/4096 Entry address is 0x80001000\r\nClosing network.\r\nStarting program at 0x80001000\r\n")
	select {
	case load := <-done:
		if load == nil || !bytes.Equal(load.kernel, kernel) || load.cmdline != "console=ttyS0,115200 bootbench.run=r1" {
			t.Fatalf("loaded %+v", load)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ROM did not start the program")
	}
	if strings.Join(fn.fetched, ",") != "198.18.0.1:qemu-wrt54g/kernel.elf" {
		t.Errorf("fetched %v", fn.fetched)
	}
}

// TestCFEAutoboot: without Ctrl-C in its window CFE runs its startup
// command, which on a board with no kernel in flash fails to the prompt;
// other keys do not stop it.
func TestCFEAutoboot(t *testing.T) {
	con, _, _ := startCFE(t, &fakeCFENet{}, 200*time.Millisecond)
	con.expect("Initializing Devices.\r\n")
	con.typeKeys(" ")
	con.expect("CMD: [boot -raw -z -addr=0x80001000 -max=0x770000 flash0.os:]\r\n")
	con.expect("*** command status = -6\r\nCFE> ")
	if strings.Contains(con.seen.String(), "canceled") {
		t.Error("a space stopped the autoboot")
	}
}

// TestCFEPowerOff: power-off ends the ROM wherever it waits.
func TestCFEPowerOff(t *testing.T) {
	con, done, cancel := startCFE(t, &fakeCFENet{}, time.Minute)
	con.expect("CFE version")
	con.typeKeys("\x03")
	con.expect("CFE> ")
	cancel()
	select {
	case load := <-done:
		if load != nil {
			t.Fatal("a powered-off ROM loaded something")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the ROM went on after power-off")
	}
}

// TestCFEDHCPFrames: the ROM's DISCOVER and REQUEST are ones bootbench's
// server answers (a DHCP client, not plain BOOTP), and the ROM takes the
// server's OFFER and ACK and keeps what it prints.
func TestCFEDHCPFrames(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0xbb, 0x00, 0x07}
	serverMAC := net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	xid := dhcpv4.TransactionID{1, 2, 3, 4}
	plan := onePlan{mac}
	answer := func(msg *dhcpv4.DHCPv4, kind string) *dhcpv4.DHCPv4 {
		t.Helper()
		u, ok := parseUDP(udpFrame(broadcastMAC, mac, net.IPv4zero, net.IPv4bcast, bootpClientPort, bootpServerPort, msg.ToBytes()))
		if !ok || u.dport != 67 {
			t.Fatalf("request frame: %+v", u)
		}
		req, err := netboot.ParseRequest(u.payload)
		if err != nil {
			t.Fatalf("server cannot read the ROM's request: %v", err)
		}
		resp, ev := netboot.Reply(req, plan)
		if ev.Kind != kind {
			t.Fatalf("server answered %s, want %s", ev.Kind, kind)
		}
		frame := udpFrame(broadcastMAC, serverMAC, net.IPv4(198, 18, 0, 1), net.IPv4bcast, 67, 68, resp.ToBytes())
		got := parseDHCPReply(frame, xid, mac)
		if got == nil {
			t.Fatalf("the ROM ignored the server's %s", kind)
		}
		if parseDHCPReply(frame, dhcpv4.TransactionID{9, 9, 9, 9}, mac) != nil {
			t.Error("the ROM took an answer to another transaction")
		}
		return got
	}
	disc, err := dhcpDiscover(mac, xid)
	if err != nil {
		t.Fatal(err)
	}
	offer := answer(disc, "dhcp-offer")
	req, err := dhcpRequest(mac, xid, offer)
	if err != nil {
		t.Fatal(err)
	}
	lease := leaseOf(answer(req, "dhcp-ack"))
	if !lease.ip.Equal(net.IPv4(198, 18, 0, 10)) || !lease.mask.Equal(net.IPv4(255, 255, 255, 0)) || lease.servers() != "gateway not set, nameserver not set" {
		t.Errorf("lease %+v (%s)", lease, lease.servers())
	}
}

// TestCFENVRAMClock: nvram set, get, commit and reboot as CFE has them; the
// clock clkfreq names is announced on the next start and the kernel runs
// at it; what was set and not committed is gone after a reboot.
func TestCFENVRAMClock(t *testing.T) {
	kernel := mipsELF(t, binary.LittleEndian, "console=ttyS0,115200")
	fn := &fakeCFENet{lease: testLease, files: map[string][]byte{"b/kernel.elf": kernel}}
	con, done, _ := startCFEFlash(t, fn, time.Minute, t.TempDir())
	con.expect("CPU type 0x29008: 1000MHz\r\n")
	con.typeKeys("\x03")
	con.expect("CFE> ")
	for _, c := range []struct{ typed, want string }{
		{"nvram set clkfreq=250", "*** command status = 0\r\nCFE> "},
		{"nvram get clkfreq", "250\r\n*** command status = 0\r\nCFE> "},
		{"nvram commit", "*** command status = 0\r\nCFE> "},
		{"nvram set clkfreq=500", "*** command status = 0\r\nCFE> "},
		{"nvram bogus", "*** command status = -8\r\nCFE> "},
		{"reboot", "CFE version 1.0.37"},
	} {
		con.typeKeys(c.typed + "\r")
		con.expect(c.want)
		con.seen.Reset()
	}
	con.expect("CPU type 0x29008: 250MHz\r\n")
	con.typeKeys("\x03")
	con.expect("CFE> ")
	con.typeKeys("ifconfig eth0 -auto\r")
	con.expect("*** command status = 0\r\nCFE> ")
	con.typeKeys("boot -elf 198.18.0.1:b/kernel.elf\r")
	select {
	case load := <-done:
		if load == nil || !load.ownClock || load.icount != 2 {
			t.Fatalf("loaded %+v, want the kernel at -icount shift 2 (250 MHz)", load)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ROM did not start the program")
	}
}
