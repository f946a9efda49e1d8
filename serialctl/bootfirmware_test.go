package serialctl

import (
	"os"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// TestBootFirmware reads the published consoles in testdata/ up to their
// kernel: the firmware that booted it is the last banner and the last
// clock announced before it.
func TestBootFirmware(t *testing.T) {
	tests := []struct {
		file       string
		bootloader string
		clock      boards.MHz
	}{
		{"routerboot-rb433.txt", "RouterBOOT 2.20", 300},
		{"routerboot-rb450g-netboot.txt", "RouterBOOT 2.41", 680},
		// A failed load, then the reboot into the newer RouterBOOT.
		{"routerboot-rb600a.txt", "RouterBOOT 7.1rc7", 400},
		{"routerboot-rb3011-backup.txt", "RouterBOOT backup 3.27", 1400},
		{"cfe-wrt54g-boot-elf.txt", "CFE 1.0.37", 200},
		{"uboot-ar7240-tftpboot.txt", "U-Boot 1.1.4", 0},
		{"rpi4-netboot-new.txt", "RPi bootloader 2024-07-30", 0},
		// SeaBIOS, then iPXE from the NIC's ROM, then the iPXE it loaded.
		{"qemu-x86_64-ipxe.txt", "iPXE 1.0.0+git-20190125.36a4c85-5.1", 0},
		{"qemu-mipsel-direct.txt", "", 0}, // QEMU loads the kernel itself
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var f BootFirmware
			kernel := false
			for _, l := range transcriptLines(b) {
				if kernel = f.Line(l); kernel {
					break
				}
			}
			if f.Bootloader != tt.bootloader || f.ClockMHz != tt.clock {
				t.Errorf("%q at %v, want %q at %v", f.Bootloader, f.ClockMHz, tt.bootloader, tt.clock)
			}
			if !kernel && tt.file != "routerboot-rb3011-backup.txt" {
				t.Error("the kernel's start was not seen")
			}
		})
	}
}

// TestBootFirmwareNextBoot: RouterBOOT started again with the clock
// changed in its menu is still the boot's firmware, at the new clock; a
// banner after the kernel started is the next boot's, and its clock is
// its own.
func TestBootFirmwareNextBoot(t *testing.T) {
	var f BootFirmware
	steps := []struct {
		line       string
		kernel     bool
		bootloader string
		clock      boards.MHz
	}{
		{"RouterBOOT booter 2.41", false, "RouterBOOT 2.41", 0},
		{"CPU frequency: 680 MHz", false, "RouterBOOT 2.41", 680},
		{"Press any key within 2 seconds to enter setup..", false, "RouterBOOT 2.41", 680},
		{"RouterBOOT booter 2.41", false, "RouterBOOT 2.41", 680},
		{"CPU frequency: 800 MHz", false, "RouterBOOT 2.41", 800},
		{"jumping to kernel code", true, "RouterBOOT 2.41", 800},
		{"[    0.000000] Linux version 2.6.39.4 (root@build) (gcc version 4.5.4) #1 Mon Jan 1 00:00:00 UTC 2024", true, "RouterBOOT 2.41", 800},
		{"CPU frequency: 600 MHz", false, "RouterBOOT 2.41", 800}, // not a firmware's any more
		{"RouterBOOT booter 2.42", false, "RouterBOOT 2.42", 0},
	}
	for i, st := range steps {
		kernel := f.Line([]byte(st.line + "\r"))
		if kernel != st.kernel || f.Bootloader != st.bootloader || f.ClockMHz != st.clock {
			t.Errorf("line %d %q: kernel %v, %q at %v; want %v, %q at %v", i+1, strings.TrimSpace(st.line), kernel, f.Bootloader, f.ClockMHz, st.kernel, st.bootloader, st.clock)
		}
	}
}
