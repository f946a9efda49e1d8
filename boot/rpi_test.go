package boot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
)

// piBoot is a Raspberry Pi 4 board with serial 9ffefdef at address addr,
// its boot at clock mhz as the plan makes it, and files standing in for
// the cache's (firmware, device tree, kernel, image).
func piBoot(t *testing.T, addr string, mhz boards.MHz, allow bool) (boards.Board, *Spec) {
	t.Helper()
	p, err := boards.Get("rpi4b")
	if err != nil {
		t.Fatal(err)
	}
	mac, _ := net.ParseMAC("dc:a6:32:01:36:c2")
	b := boards.Board{Name: "pi1", Profile: p, MAC: mac, Address: netip.MustParseAddr(addr), Serial: "9ffefdef"}
	job := plan.Job{Board: b, Clock: mhz, AllowOvervoltage: allow}
	if err := job.Settle(); err != nil {
		t.Fatal(err)
	}
	pl := plan.New(job)
	dir := t.TempDir()
	files := map[string]string{}
	for _, f := range []string{"start4.elf", "fixup4.dat", "bcm2711-rpi-4-b.dtb", "vmlinuz-6.1.0-57-arm64", "initramfs.cpio.gz"} {
		files[f] = filepath.Join(dir, f)
		os.WriteFile(files[f], []byte("the bytes of "+f), 0o644)
	}
	spec := &Spec{Run: "20261203-160000-0000abcd", Kernel: files["vmlinuz-6.1.0-57-arm64"], Image: files["initramfs.cpio.gz"],
		Cmdline: pl.Cmdline("20261203-160000-0000abcd", nil), RaspberryPi: pl.RaspberryPi,
		RaspberryPiFiles: map[string]string{"start4.elf": files["start4.elf"], "fixup4.dat": files["fixup4.dat"], "bcm2711-rpi-4-b.dtb": files["bcm2711-rpi-4-b.dtb"]}}
	return b, spec
}

// TestRaspberryPiFiles: a Pi is answered as a Pi (no boot file) and gets,
// under its serial, the firmware, config.txt and cmdline.txt of its run
// (testdata/booter/rpi4b-*, -update rewrites), the device tree, kernel and
// image; the same at the root when it asks from its own address, and
// nothing at the root for any other address.
func TestRaspberryPiFiles(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mhz   boards.MHz
		allow bool
	}{
		{"stock", 0, false},
		{"1800", 1800, false},
		{"2000-overvoltage", 2000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, spec := piBoot(t, "198.18.0.10", tt.mhz, tt.allow)
			bt := NewBooter(net.IPv4(198, 18, 0, 1).To4(), net.CIDRMask(24, 32), "http")
			bt.AddBoot(b, spec)
			offer, ok := bt.Plan(netboot.Client{MAC: b.MAC, VendorClass: "PXEClient:Arch:00000:UNDI:002001", HasArch: true})
			if !ok || !offer.RaspberryPi || offer.BootFile != "" || !offer.IP.Equal(net.IPv4(198, 18, 0, 10)) {
				t.Fatalf("Plan = %+v, %v", offer, ok)
			}
			golden(t, filepath.Join("testdata", "booter", "rpi4b-"+tt.name+"-config.txt"), read(t, bt, "9ffefdef/config.txt"))
			golden(t, filepath.Join("testdata", "booter", "rpi4b-"+tt.name+"-cmdline.txt"), read(t, bt, "9ffefdef/cmdline.txt"))
			for name, want := range map[string]string{"start4.elf": "start4.elf", "fixup4.dat": "fixup4.dat", "bcm2711-rpi-4-b.dtb": "bcm2711-rpi-4-b.dtb",
				"vmlinuz": "vmlinuz-6.1.0-57-arm64", "initramfs.cpio": "initramfs.cpio.gz"} {
				if got := string(read(t, bt, "9ffefdef/"+name)); got != "the bytes of "+want {
					t.Errorf("9ffefdef/%s served %q", name, got)
				}
				rc, _, err := bt.OpenFor(net.IPv4(198, 18, 0, 10), name)
				if err != nil {
					t.Errorf("%s at the root for the Pi: %v", name, err)
				} else {
					rc.Close()
				}
				if _, _, err := bt.OpenFor(net.IPv4(198, 18, 0, 11), name); !errors.Is(err, netboot.ErrNotFound) {
					t.Errorf("%s at the root for another address: %v", name, err)
				}
			}
			for _, name := range []string{"9ffefdef/bootsig.bin", "9ffefdef/start.elf", "0000abcd/start4.elf", "9ffefdef/kernel.elf", "9ffefdef/boot.ipxe"} {
				if _, _, err := bt.Open(name); !errors.Is(err, netboot.ErrNotFound) {
					t.Errorf("Open(%q) = %v, want not found", name, err)
				}
			}
		})
	}
}

// TestRaspberryPiTFTP: over TFTP, as the ROM asks: <serial>/start4.elf,
// then (a ROM whose serial folder is missing) start4.elf at the root,
// from the board's address; the events name the board either way.
func TestRaspberryPiTFTP(t *testing.T) {
	spec, server, events := servePi(t, "127.0.0.10", 1500)
	for _, tt := range []struct{ from, name, want string }{
		{"127.0.0.10", "9ffefdef/start4.elf", "the bytes of start4.elf"},
		{"127.0.0.10", "start4.elf", "the bytes of start4.elf"},
		{"127.0.0.10", "config.txt", ConfigTxt(*spec.RaspberryPi)},
		{"127.0.0.11", "start4.elf", ""},
	} {
		got, err := tftpGet(server, tt.from, tt.name)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s from %s served %q", tt.name, tt.from, got)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("%s from %s: %q, %v", tt.name, tt.from, got, err)
		}
		select {
		case e := <-events:
			if tt.want != "" && (e.Kind != "tftp-done" || e.Board != "pi1" || e.File != tt.name) {
				t.Errorf("event %+v", e)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("%s: no event", tt.name)
		}
	}
}

// servePi serves a Pi 4 at address addr (on loopback), booting at mhz, by
// TFTP until the test ends: its spec, the server's address and the
// events, each naming its board.
func servePi(t *testing.T, addr string, mhz boards.MHz) (*Spec, *net.UDPAddr, chan netboot.Event) {
	t.Helper()
	b, spec := piBoot(t, addr, mhz, false)
	bt := NewBooter(net.IPv4(127, 0, 0, 1).To4(), net.CIDRMask(8, 32), "http")
	bt.AddBoot(b, spec)
	events := make(chan netboot.Event, 16)
	srv := netboot.NewTFTPFrom(bt, bt.Report(func(e netboot.Event) { events <- e }))
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(conn)
	t.Cleanup(srv.Shutdown)
	return spec, conn.LocalAddr().(*net.UDPAddr), events
}

// tftpGet reads name from server by TFTP (RFC 1350, 512-byte blocks, as
// the Pi's ROM asks), from a socket on local.
func tftpGet(server *net.UDPAddr, local, name string) (string, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(local)})
	if err != nil {
		return "", err
	}
	defer c.Close()
	rrq := append(append([]byte{0, 1}, name...), 0)
	rrq = append(append(rrq, "octet"...), 0)
	if _, err := c.WriteToUDP(rrq, server); err != nil {
		return "", err
	}
	var out bytes.Buffer
	buf := make([]byte, 600)
	for {
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, peer, err := c.ReadFromUDP(buf)
		if err != nil {
			return "", err
		}
		switch binary.BigEndian.Uint16(buf) {
		case 5:
			return "", errors.New(string(bytes.TrimRight(buf[4:n], "\x00")))
		case 3:
			out.Write(buf[4:n])
			c.WriteToUDP([]byte{0, 4, buf[2], buf[3]}, peer)
			if n-4 < 512 {
				return out.String(), nil
			}
		}
	}
}

// TestConfigTxtCarriesTheClock: the config.txt of two clocks differ in
// arm_freq alone (and over_voltage where one clock needs it).
func TestConfigTxtCarriesTheClock(t *testing.T) {
	_, a := piBoot(t, "198.18.0.10", 1500, false)
	_, b := piBoot(t, "198.18.0.10", 1800, false)
	diff := lineDiff(ConfigTxt(*a.RaspberryPi), ConfigTxt(*b.RaspberryPi))
	if diff != "arm_freq=1500 → arm_freq=1800" {
		t.Errorf("1500 vs 1800: %s", diff)
	}
}

func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var d []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			d = append(d, x+" → "+y)
		}
	}
	return strings.Join(d, "; ")
}

// TestRaspberryPiROMOrder: a Pi 4's boot read as its firmware reads it,
// over TFTP from its address: <serial>/start4.elf, fixup4.dat, config.txt,
// cmdline.txt, then what config.txt names (device_tree=, kernel=,
// initramfs), each found under the serial folder; each transfer's event
// names the file and the board. A transfer is done when the server reads
// its last ACK, which may come after the client has asked for the next
// file, so each event is awaited before the next request, as a ROM that
// waits on nothing else would not.
func TestRaspberryPiROMOrder(t *testing.T) {
	_, server, events := servePi(t, "127.0.0.12", 1800)
	get := func(name string) string {
		got, err := tftpGet(server, "127.0.0.12", "9ffefdef/"+name)
		if err != nil {
			t.Fatalf("9ffefdef/%s: %v", name, err)
		}
		select {
		case e := <-events:
			if e.Kind != "tftp-done" || e.File != "9ffefdef/"+name || e.Board != "pi1" {
				t.Errorf("event %s %s (board %q), want tftp-done of %s", e.Kind, e.File, e.Board, name)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("no event for %s", name)
		}
		return got
	}
	order := []string{"start4.elf", "fixup4.dat", "config.txt", "cmdline.txt"}
	for _, name := range order {
		get(name)
	}
	// What the firmware loads next, as config.txt names it.
	var named []string
	for _, line := range strings.Split(get("config.txt"), "\n") {
		switch k, v, _ := strings.Cut(line, "="); k {
		case "device_tree", "kernel":
			named = append(named, v)
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "initramfs" && f[2] == "followkernel" {
			named = append(named, f[1])
		}
	}
	if strings.Join(named, " ") != "vmlinuz bcm2711-rpi-4-b.dtb initramfs.cpio" {
		t.Fatalf("config.txt names %v", named)
	}
	for _, name := range named {
		if got := get(name); !strings.HasPrefix(got, "the bytes of ") {
			t.Errorf("%s served %q", name, got)
		}
	}
	select {
	case e := <-events:
		t.Errorf("an event no transfer made: %s %s", e.Kind, e.File)
	default:
	}
}

// TestImageNames: the names a board's image arrives under, which start its
// kernel stage: a Pi's under its serial and at the root too.
func TestImageNames(t *testing.T) {
	pi, _ := piBoot(t, "198.18.5.40", 0, false)
	pc, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		b    boards.Board
		want []string
	}{
		{pi, []string{"pi1/initramfs.cpio", "9ffefdef/initramfs.cpio", "initramfs.cpio"}},
		{boards.Board{Name: "pc1", Profile: pc}, []string{"pc1/initramfs.cpio"}},
	} {
		if got := ImageNames(tt.b); !slices.Equal(got, tt.want) {
			t.Errorf("ImageNames(%s) = %v, want %v", tt.b.Name, got, tt.want)
		}
	}
}

// noNet is a network no server may start on: the check before it is what
// is tested.
type noNet struct{}

func (noNet) Interface() string     { return "bench0" }
func (noNet) Addr() netip.Prefix    { return netip.MustParsePrefix("198.18.5.1/24") }
func (noNet) Do(func() error) error { return errors.New("no servers here") }
func (noNet) Go(func()) error       { return errors.New("no servers here") }

// TestProxyNeedsPiAddress: as proxyDHCP, where another server hands out
// the addresses, a Raspberry Pi still needs its address in the inventory
// (its ROM fetches files at the root, served by address); other boards
// do not.
func TestProxyNeedsPiAddress(t *testing.T) {
	pi, spec := piBoot(t, "198.18.5.40", 0, false)
	pi.Address = netip.Addr{}
	nb := &NetBench{Net: noNet{}, Proxy: true}
	bt := NewBooter(net.IPv4(198, 18, 5, 1), net.CIDRMask(24, 32), "")
	bt.AddBoot(pi, spec)
	_, err := nb.Serve(context.Background(), bt, nil)
	if err == nil || !strings.Contains(err.Error(), "board pi1 is a Raspberry Pi with no address") {
		t.Errorf("a Pi with no address under --proxy: %v", err)
	}
	pc, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	bt = NewBooter(net.IPv4(198, 18, 5, 1), net.CIDRMask(24, 32), "")
	bt.AddBoot(boards.Board{Name: "pc1", Profile: pc, MAC: net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20}}, &Spec{Run: "r"})
	if _, err := nb.Serve(context.Background(), bt, nil); err == nil || !strings.Contains(err.Error(), "no servers here") {
		t.Errorf("a PC with no address under --proxy got past the check to the servers? %v", err)
	}
}
