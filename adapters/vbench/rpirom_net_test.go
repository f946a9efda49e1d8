package vbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/dnsmasqtest"
)

// piFiles are a Pi's boot files, stand-ins but for their names: what a
// user copies into the TFTP root, config.txt as such a user writes it.
var piFiles = map[string]string{
	"start4.elf":          "stand-in for the VideoCore firmware",
	"fixup4.dat":          "stand-in for its memory split",
	"bcm2711-rpi-4-b.dtb": "stand-in for the Pi 4's device tree",
	"vmlinuz":             "stand-in for an arm64 kernel",
	"initrd.img":          "stand-in for an initramfs",
	"cmdline.txt":         "console=serial0,115200 console=tty1 rdinit=/init\n",
}

const piConfigTxt = `# as on a Pi's boot partition
arm_64bit=1
enable_uart=1
[pi3]
arm_freq=1200
[pi4]
kernel=vmlinuz
initramfs initrd.img followkernel
arm_freq=%s
[all]
`

// writePiRoot fills a TFTP root: under dir/<serial>/ when serial is set,
// else at its top, with config.txt asking for armFreq.
func writePiRoot(t *testing.T, serial, armFreq string) string {
	t.Helper()
	root := t.TempDir()
	// dnsmasq serves files as its own user: the tutorial makes the root
	// chmod 777, and its parent must let that user through.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, serial)
	os.MkdirAll(dir, 0o755)
	for name, text := range piFiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := strings.Replace(piConfigTxt, "%s", armFreq, 1)
	if err := os.WriteFile(filepath.Join(dir, "config.txt"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPiROMWithDnsmasq boots the twin's ROM (not the kernel) against
// dnsmasq as Raspberry Pi's network boot tutorial sets it up, beside a
// home router's DHCP: the ROM takes its address from the router and its
// boot server from dnsmasq's proxy offer, and dnsmasq's log shows the
// files in the ROM's order, under the serial's directory or, without
// one, at the root after the two misses there.
func TestPiROMWithDnsmasq(t *testing.T) {
	dnsmasqtest.Require(t)
	n := piNet(t)
	order := []string{"start4.elf", "fixup4.dat", "config.txt", "cmdline.txt", "bcm2711-rpi-4-b.dtb", "vmlinuz", "initrd.img"}
	prefixed := func(p string) []string {
		var out []string
		for _, f := range order {
			out = append(out, p+f)
		}
		return out
	}
	tests := []struct {
		name, dir string
		want      []string
	}{
		{"serial's directory", "bb0004b1", prefixed("bb0004b1/")},
		{"no directory: the root", "", append([]string{"bb0004b1/start4.elf (not found)", "bb0004b1/start.elf (not found)"}, prefixed("")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dnsmasqtest.StartRouter(t, n.Name, n.Tap, "198.18.0.10", "198.18.0.10")
			pi := dnsmasqtest.StartPi(t, n.Name, n.Tap, "198.18.0.255", writePiRoot(t, tt.dir, "500"))
			var con bytes.Buffer
			load, err := bootPiROM(t, n, &con, 30*time.Second)
			if err != nil {
				t.Fatalf("%v\nconsole:\n%s\ndnsmasq:\n%s", err, con.String(), pi.Contents())
			}
			got, err := pi.WaitTFTP(len(tt.want), 5*time.Second)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("dnsmasq served, in order:\n%s\nwant:\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), err)
			}
			if string(load.kernel) != piFiles["vmlinuz"] || string(load.initrd) != piFiles["initrd.img"] {
				t.Errorf("loaded kernel %q, initramfs %q", load.kernel, load.initrd)
			}
			if load.cmdline != "console=ttyAMA0,115200 console=tty1 rdinit=/init" || !load.ownClock || load.icount != 1 {
				t.Errorf("starts %q with -icount shift %d (set: %v); want the console on ttyAMA0 and shift 1 for arm_freq=500", load.cmdline, load.icount, load.ownClock)
			}
			for _, line := range []string{"Boot mode: NETWORK", "has no option 43", "YI_ADDR 198.18.0.10", "TFTP_GET: dc:a6:32:bb:00:b1 198.18.0.1 " + tt.want[0], "arm_freq=500: -icount shift=1"} {
				if !strings.Contains(con.String(), strings.TrimSuffix(line, " (not found)")) {
					t.Errorf("console lacks %q:\n%s", line, con.String())
				}
			}
		})
	}
}

// TestPiROMRefusesClock: arm_freq=1500, a Pi 4's own default, is no
// clock QEMU's instruction count makes: the board's console says so and
// the board stops there, before any kernel starts, as a powered-off one.
func TestPiROMRefusesClock(t *testing.T) {
	dnsmasqtest.Require(t)
	n := piNet(t)
	dnsmasqtest.StartRouter(t, n.Name, n.Tap, "198.18.0.10", "198.18.0.10")
	pi := dnsmasqtest.StartPi(t, n.Name, n.Tap, "198.18.0.255", writePiRoot(t, "bb0004b1", "1500"))
	mac, _ := net.ParseMAC("dc:a6:32:bb:00:b1")
	b := NewBoard(n, Machine{Binary: "qemu-system-aarch64", MAC: mac, Memory: 1024}, t.TempDir())
	b.ROM, b.Name, b.Serial = "raspberrypi", "rpi4b-twin", "bb0004b1"
	ctx := context.Background()
	con, err := b.Console(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Off(ctx)
	if err := b.On(ctx); err != nil {
		t.Fatal(err)
	}
	// A board that never says why ends the read when its console closes.
	stop := time.AfterFunc(30*time.Second, func() { con.Close() })
	defer stop.Stop()
	var text []byte
	sc := bufio.NewScanner(con)
	for !bytes.Contains(text, []byte("bootbench: virtual board:")) && sc.Scan() {
		text = append(append(text, sc.Bytes()...), '\n')
	}
	for _, want := range []string{
		"MESS: arm_freq=1500: the twin's CPU clock is QEMU's instruction count, which makes 1000 MHz halved (1000, 500, 250, ...), not 1500",
		"bootbench: virtual board: cannot start the kernel: config.txt asks for arm_freq=1500, a clock the twin cannot make",
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("console lacks %q:\n%s\ndnsmasq:\n%s", want, text, pi.Contents())
		}
	}
	for deadline := time.Now().Add(5 * time.Second); !b.PoweredOff(ctx); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the board goes on after refusing its clock")
		}
	}
	if b.guest() != nil {
		t.Error("QEMU was started")
	}
}

// TestPiROMKeepsAsking: with only a home router's DHCP, the ROM takes no
// offer and keeps sending its DISCOVER, as a Pi does.
func TestPiROMKeepsAsking(t *testing.T) {
	dnsmasqtest.Require(t)
	n := piNet(t)
	router := dnsmasqtest.StartRouter(t, n.Name, n.Tap, "198.18.0.10", "198.18.0.10")
	var con bytes.Buffer
	_, err := bootPiROM(t, n, &con, 3500*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("boot: %v; want it still asking when the power goes", err)
	}
	if d := strings.Count(router.Contents(), "DHCPDISCOVER(bbtap0) dc:a6:32:bb:00:b1"); d < 3 {
		t.Errorf("%d DISCOVERs in 3.5 s, want one a second:\n%s", d, router.Contents())
	}
	if !strings.Contains(con.String(), "DHCP: offer from 198.18.0.1 has no option 43 \"Raspberry Pi Boot\"") || strings.Contains(con.String(), "TFTP_GET") {
		t.Errorf("console:\n%s", con.String())
	}
}

// piNet is a virtual bench network for the test.
func piNet(t *testing.T) *Net {
	t.Helper()
	n, err := NewNet(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// bootPiROM powers the rpi4b-twin's ROM on for at most d.
func bootPiROM(t *testing.T, n *Net, con *bytes.Buffer, d time.Duration) (*romLoad, error) {
	t.Helper()
	mac, _ := net.ParseMAC("dc:a6:32:bb:00:b1")
	rom, err := newPiROM(con, &tapNet{n: n, mac: mac}, "bb0004b1", 1024)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return rom.boot(ctx)
}
