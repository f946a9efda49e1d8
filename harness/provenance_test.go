package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
	"github.com/bootbench/bootbench/serialctl"
)

// Console lines of published boots (serialctl/testdata/README.md says
// where each comes from), as a board's console sends them.
var (
	// An RB450G's RouterBOOT, its netboot and its kernel.
	rb450gBanner = []string{"RouterBOOT booter 2.41", "", "RouterBoard 450G", "", "CPU frequency: 680 MHz", "Memory size: 256 MB", "",
		"Press any key within 2 seconds to enter setup.."}
	rb450gNetboot = []string{"trying bootp protocol... OK", "Got IP address: 192.168.88.20", "resolved mac address 00:0C:42:12:34:56",
		"transfer started ............................................ transfer ok, time=4.12s", "setting up elf image... OK", "jumping to kernel code"}
	rb450gKernel = "Linux version 2.6.39.4 (openwrt@build) (gcc version 4.5.4 20110808 (prerelease) (Linaro GCC 4.5-2011.08) ) #1 Sat Jan 28 10:21:33 CET 2012"

	// A WRT54G's CFE loading its kernel with boot -elf.
	cfeBoot = []string{"CFE version 1.0.37 for BCM947XX (32bit,SP,LE)", "Build Date: Mon Oct 18 14:27:36 CST 2004 (root@me)",
		"Copyright (C) 2000,2001,2002,2003 Broadcom Corporation.", "", "Initializing Arena", "Initializing Devices.", "",
		"CPU type 0x29007: 200MHz", "Total memory: 16384 KBytes", "", "CFE> boot -elf 192.168.1.2:wrt54g/vmlinux.elf",
		"Loading: 0x80001000/3403776 0x80341000/110592 Entry address is 0x80001000", "Closing network.", "Starting program at 0x80001000",
		"Linux version 7.1.3 (wbx@macbook) (mipsel-freewrt-linux-uclibc-gcc (GCC) 16.1.0, GNU ld (GNU Binutils) 2.46.1) #1 Wed Jul 15 11:24:45 CEST 2026"}

	// An AR7240 TP-Link's U-Boot 1.1.4, which announces no clock.
	ubootBoot = []string{"U-Boot 1.1.4 (Sep  3 2010 - 12:28:13)", "", "AP91 (ar7240) U-boot", "DRAM:", "32 MB",
		"## Transferring control to Linux (at address 80060000) ...", "", "Starting kernel ...", "",
		"[    0.000000] Linux version 3.3.8 (openwrt@build) (gcc version 4.6.3 20120201 (prerelease) (Linaro GCC 4.6-2012.02) ) #1 Sat Mar 23 16:32:46 UTC 2013"}

	// A kernel QEMU loaded itself: no firmware at all.
	directBoot = []string{"[    0.000000] Linux version 6.1.0-50-4kc-malta (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP Debian 6.1.123-1 (2025-01-02)",
		"[    0.000000] printk: bootconsole [uart8250] enabled"}
)

// consoleText joins lines as a console sends them.
func consoleText(parts ...[]string) string {
	var b strings.Builder
	for _, p := range parts {
		for _, l := range p {
			b.WriteString(l + "\r\n")
		}
	}
	return b.String()
}

// rb450gAt is the RB450G's banner with its clock at mhz.
func rb450gAt(mhz string) []string {
	b := append([]string(nil), rb450gBanner...)
	b[4] = "CPU frequency: " + mhz + " MHz"
	return b
}

// TestProvenance reads the firmware that booted a run off its console:
// the last banner and the last clock before the kernel, from where the
// run's boot began ("|" in before|after).
func TestProvenance(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		bootloader    string
		clock         boards.MHz
	}{
		{"routerboot", "", consoleText(rb450gBanner, rb450gNetboot, []string{rb450gKernel}), "RouterBOOT 2.41", 680},
		// Its clock changed in the setup menu, RouterBOOT starts again.
		{"routerboot twice, its clock changed between", "",
			consoleText(rb450gBanner, []string{"x - exit setup"}, rb450gAt("800"), rb450gNetboot, []string{rb450gKernel}), "RouterBOOT 2.41", 800},
		// The board reset after the kernel: the run's firmware is the one
		// that booted its kernel.
		{"a reset after the kernel", "",
			consoleText(rb450gBanner, rb450gNetboot, []string{rb450gKernel, "Kernel panic - not syncing: Attempted to kill init!"}, rb450gAt("600")), "RouterBOOT 2.41", 680},
		{"cfe", "", consoleText(cfeBoot), "CFE 1.0.37", 200},
		{"u-boot 1.1.4", "", consoleText(ubootBoot), "U-Boot 1.1.4", 0},
		{"none", "", consoleText(directBoot), "", 0},
		{"nothing at all", "", "", "", 0},
		// A served board asks to boot after its banner.
		{"served: the banner before the board asked", consoleText(rb450gBanner, rb450gNetboot[:1]),
			consoleText(rb450gNetboot[1:], []string{rb450gKernel}), "RouterBOOT 2.41", 680},
		{"served: the previous run's boot before it", consoleText(cfeBoot, []string{"reboot: Restarting system"}, rb450gAt("800"), rb450gNetboot[:1]),
			consoleText(rb450gNetboot[1:], []string{rb450gKernel}), "RouterBOOT 2.41", 800},
		// Its banner beyond what is looked back at: what was before is
		// an earlier boot's.
		{"served: only an earlier boot before it", consoleText(cfeBoot, []string{"reboot: Restarting system"}),
			consoleText(rb450gNetboot[1:], []string{rb450gKernel}), "", 0},
		// A console open before power-on shows the end of the board's
		// last boot.
		{"powered on after an earlier boot", consoleText(ubootBoot), consoleText(directBoot), "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bootloader, clock := bootFirmware([]byte(tt.before+tt.after), len(tt.before))
			if bootloader != tt.bootloader || clock != tt.clock {
				t.Errorf("%q at %v, want %q at %v", bootloader, clock, tt.bootloader, tt.clock)
			}
		})
	}
}

// TestProvenanceStored: a run is stored with the firmware its console
// showed from its power-on to its kernel, whatever became of it.
func TestProvenanceStored(t *testing.T) {
	const id = "20261130-000000-0000abcd"
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stale := consoleText(ubootBoot) // the board's last boot, before power-on
	r := &run{o: config{Rig: Rig{Store: st}}, rec: &results.Run{ID: id, Board: "rb450g", Bench: "speed",
		Transcript: []byte(stale + consoleText(rb450gBanner, rb450gAt("800"), rb450gNetboot, []string{rb450gKernel}))}}
	r.bootFrom = len(stale)
	r.finish(context.Background(), failf(FailBootTimeout, true, "no hello from the board within 2s"))
	got, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bootloader != "RouterBOOT 2.41" || got.FirmwareClockMHz != 800 {
		t.Errorf("stored %q at %v, want RouterBOOT 2.41 at 800 MHz", got.Bootloader, got.FirmwareClockMHz)
	}
}

// TestProvenanceServed: a served board prints its firmware's banners
// before it asks to boot, so before its run's transcript begins; the run
// is stored with them.
func TestProvenanceServed(t *testing.T) {
	profile, err := boards.Get("pc-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(t, &fakeTarget{}, boards.Profile{})
	target := &fakeTarget{}
	b := boards.Board{Name: "pc1", Profile: profile, MAC: net.HardwareAddr{0x52, 0x54, 0, 0xbb, 5, 0x20},
		Address: netip.MustParseAddr("198.18.5.20"), Baud: 115200}
	bench := &capturingBench{stubBench: stubBench{net.IPv4(198, 18, 5, 1)}, got: make(chan struct{})}
	tapped := make(chan string, 16)
	dones := make(chan *results.Run, 1)
	so := ServeOptions{Bench: bench, Boards: []Served{{Board: b, Target: target}}, Rig: o.Rig, Job: o.Job,
		Console: func(_ string, l serialctl.Line) { tapped <- string(l.Text) },
		Done:    func(rec *results.Run, _ error) { dones <- rec }}
	so.Job.Transport = "http"
	cancelStop, returned := serveUntilServing(t, so, bench)
	target.mu.Lock()
	w := target.w
	target.mu.Unlock()
	// SeaBIOS, then the NIC's iPXE, as a QEMU PC prints them
	// (serialctl/testdata/qemu-x86_64-ipxe.txt).
	banners := []string{"SeaBIOS (version 1.16.2-debian-1.16.2-1)", "iPXE (http://ipxe.org) 00:03.0 CA00 PCI2.10 PnP PMM+06FCB4A0+06F0B4A0 CA00",
		"iPXE 1.0.0+git-20190125.36a4c85-5.1 -- Open Source Network Boot Firmware -- http://ipxe.org"}
	for _, l := range banners {
		fmt.Fprintf(w, "%s\r\n", l)
	}
	for range banners {
		select {
		case <-tapped: // in the console's transcript
		case <-time.After(10 * time.Second):
			t.Fatal("the banners never reached the console")
		}
	}
	if _, ok := bench.bt.Plan(netboot.Client{MAC: b.MAC, VendorClass: "PXEClient:Arch:00000:UNDI:002001", IPXE: true}); !ok {
		t.Fatal("no answer to its boot")
	}
	time.Sleep(200 * time.Millisecond)
	cancelStop() // the run, still netbooting, ends at once
	select {
	case rec := <-dones:
		if rec.Bootloader != "iPXE 1.0.0+git-20190125.36a4c85-5.1" || rec.FirmwareClockMHz != 0 {
			t.Errorf("stored %q at %v, want the iPXE that asked to boot, no clock", rec.Bootloader, rec.FirmwareClockMHz)
		}
		if strings.Contains(string(rec.Transcript), "SeaBIOS") {
			t.Errorf("the run's transcript holds what came before it: %q", rec.Transcript)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no run stored")
	}
	if err := <-returned; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestLookback: a served run looks back at most lookbackBytes, from the
// first whole line there.
func TestLookback(t *testing.T) {
	long := strings.Repeat("x", lookbackBytes) // a line longer than what is looked back at
	banner := consoleText(rb450gBanner, rb450gNetboot[:1])
	after := consoleText(rb450gNetboot[1:])
	tests := []struct {
		name, console, before string
	}{
		{"all of a short console", banner, banner},
		{"from the first whole line", long + "\r\n" + banner, banner},
		{"no whole line", "\r\n" + long, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			con := serialctl.New(io.NopCloser(strings.NewReader(tt.console + after)))
			for range con.Lines() {
			}
			before, transcript := lookback(con, len(tt.console))
			if string(before) != tt.before || string(transcript) != after {
				t.Errorf("looked back at %q, then %q; want %q, then %q", before, transcript, tt.before, after)
			}
		})
	}
}
