package serialctl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// TestAnnouncedClock: the banner lines of published consoles that carry
// the clock the firmware set, and lines next to them that do not.
func TestAnnouncedClock(t *testing.T) {
	tests := []struct {
		line string
		want boards.MHz // 0: no clock announced
	}{
		// RouterBOOT (MikroTik forum posts in testdata/: RB433, RB3011, RB600A).
		{"CPU frequency: 300 MHz\r", 300},
		{"CPU frequency: 1400 MHz", 1400},
		{"  CPU frequency: 680 MHz  ", 680},
		// CFE: WRT54G v2.2 (pop.fsck.pl "WRT-54G", original firmware boot
		// log) and a WRT54G3G (linksysinfo.org forum).
		{"CPU type 0x29007: 216MHz", 216},
		{"CPU type 0x29007: 200MHz", 200},
		{"CPU type 0x29008: 200 MHz", 200},
		// U-Boot 2014.07 on an i.MX51 (u-boot list, 2015-09-15).
		{"CPU: Freescale i.MX51 rev3.0 at 800 MHz", 800},
		{"CPU:   Freescale i.MX6Q rev1.2 at 792MHz", 792},
		{"CPU:   Foo SoC at 1.2 GHz", 1200},
		// Control bytes as a console delivers them.
		{"\x1b[0mCPU frequency: 800 MHz\x1b[0m", 800},

		// Not a clock the firmware set.
		{"f - cpu frequency", 0},         // RouterBOOT's setup menu item
		{"CPU frequency: MHz", 0},        // no figure
		{"Memory size: 64 MB", 0},        // RouterBOOT's next line
		{"CPU revision is: 00029006", 0}, // the kernel's
		{"CPU: ARMv7 Processor [410fc051] revision 1 (ARMv7), cr=10c53c7d", 0},
		{"/system routerboard settings set cpu-frequency=800MHz", 0},
		{"Clocks: CPU frequency: 0 MHz", 0},
		{"CPU frequency: 0 MHz", 0},
		{"U-Boot 1.1.4 (Sep 3 2010 - 12:28:13)", 0},
		{"", 0},
	}
	for _, tt := range tests {
		got, ok := AnnouncedClock([]byte(tt.line))
		if ok != (tt.want != 0) || got != tt.want {
			t.Errorf("AnnouncedClock(%q) = %v, %v; want %v", tt.line, got, ok, tt.want)
		}
	}
}

// TestFactsTranscripts reads the facts of every line of every transcript
// in testdata/ (clock announced, BogoMIPS, netboot steps) and compares
// them with the golden <name>.facts: a pattern that starts matching the
// wrong lines shows up here, as Classify's do in the .marks.
func TestFactsTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for i, l := range transcriptLines(b) {
				if mhz, ok := AnnouncedClock(l); ok {
					fmt.Fprintf(&got, "%d: clock %d\n", i+1, mhz)
				}
				if bm, ok := BogoMIPS(l); ok {
					fmt.Fprintf(&got, "%d: bogomips %s\n", i+1, bm)
				}
				if st, ok := Netboot(l); ok {
					fmt.Fprintf(&got, "%d: netboot %s %s\n", i+1, st.Kind, st.Text)
				}
			}
			golden := strings.TrimSuffix(f, ".txt") + ".facts"
			if *update {
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got.String() != string(want) {
				t.Errorf("facts differ from %s:\ngot:\n%swant:\n%s", golden, got.String(), want)
			}
		})
	}
}

// lineOf is the first line of a transcript in testdata/ that contains
// part, so that no line of the table tests is made up for the test.
func lineOf(t *testing.T, file, part string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range transcriptLines(b) {
		if bytes.Contains(l, []byte(part)) {
			return l
		}
	}
	t.Fatalf("no line with %q in %s", part, file)
	return nil
}

func TestBogoMIPS(t *testing.T) {
	tests := []struct {
		file, line, want string // want "": none
	}{
		{"routerboot-rb450g-netboot.txt", "Calibrating delay loop", "452.19"},
		{"cfe-wrt54g-boot-elf.txt", "Calibrating delay loop", "198.65"},
		{"uboot-ar7240-tftpboot.txt", "Calibrating delay loop", "265.42"}, // after a kernel timestamp
		{"rpi4-netboot-new.txt", "Calibrating delay loop (skipped)", "108.00"},
		{"uboot-ar7240-tftpboot.txt", "Clocks: CPU:400.000MHz", ""},
	}
	for _, tt := range tests {
		got, ok := BogoMIPS(lineOf(t, tt.file, tt.line))
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: BogoMIPS(%q) = %q, %v; want %q", tt.file, tt.line, got, ok, tt.want)
		}
	}
	// Lines not in a transcript: /proc/cpuinfo as the OpenWrt wiki's
	// recipe page quotes it (TL-MR3420), x86's lower case, and the SMP sum.
	for line, want := range map[string]string{
		"BogoMIPS		: 266.24": "266.24",
		"bogomips	: 4800.00": "4800.00",
		"BogoMIPS	: 108.00":  "108.00",
		"[    0.142000] smp: Total of 4 processors activated (432.00 BogoMIPS).": "",
		"SMP: Total of 4 processors activated (432.00 BogoMIPS).":                "",
	} {
		got, ok := BogoMIPS([]byte(line))
		if ok != (want != "") || got != want {
			t.Errorf("BogoMIPS(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

func TestNetboot(t *testing.T) {
	tests := []struct {
		file, line string
		want       NetbootKind // 0: not a netboot line
	}{
		{"routerboot-rb450g-netboot.txt", "trying bootp protocol", NetStep},
		{"routerboot-rb450g-netboot.txt", "Got IP address", NetStep},
		{"routerboot-rb450g-netboot.txt", "resolved mac address", NetStep},
		{"routerboot-rb450g-netboot.txt", "transfer started", NetLoaded},
		{"routerboot-rb450g-netboot-failed.txt", "trying bootp protocol", NetFailed},
		{"routerboot-rb450g-netboot-failed.txt", "loading kernel from nand", NetLocal},
		{"routerboot-rb3011-backup.txt", "trying bootp protocol", NetFailed}, // "…" as the forum shows it
		{"routerboot-rb600a.txt", "loading kernel... OK", NetLocal},
		{"routerboot-rb450g-netboot.txt", "setting up elf image", 0},
		{"cfe-wrt54g-boot-elf.txt", "ipaddr 192.168.1.30", NetStep},
		{"cfe-wrt54g-boot-elf.txt", "Loader:elf Filesys:tftp", NetStep},
		{"cfe-wrt54g-boot-elf.txt", "Entry address is", NetLoaded},
		{"cfe-wrt160n.txt", "Filesys:raw Dev:flash0.os", NetLocal},
		{"cfe-wrt54g-boot-elf.txt", "command status = 0", 0},
		{"uboot-ar7240-tftpboot.txt", "TFTP from server", NetStep},
		{"uboot-ar7240-tftpboot.txt", "Filename", NetStep},
		{"uboot-ar7240-tftpboot.txt", "Bytes transferred", NetLoaded},
		{"uboot-ar7240-tftpboot.txt", "Loading: ####", 0},
		{"qemu-arm64-uboot.txt", "BOOTP broadcast 1", NetStep},
		{"qemu-arm64-uboot.txt", "DHCP client bound", NetStep},
		{"qemu-x86_64-ipxe.txt", "Configuring (net0", NetStep},
		{"qemu-x86_64-ipxe.txt", "tftp://198.18.0.1/boot.ipxe", NetLoaded},
		{"qemu-x86_64-ipxe.txt", "initramfs.cpio... o", NetStep}, // cut by the kernel's first line
		{"rpi4-netboot-old.txt", "NET_BOOT: dc:a6:32", NetStep},
		{"rpi4-netboot-old.txt", "YI_ADDR", NetStep},
		{"rpi4-netboot-old.txt", "TFTP_GET", NetStep},
		{"rpi4-netboot-old.txt", "pieeprom.sig not found", NetMissing},
		{"rpi4-netboot-old.txt", "Read b8045c1d/start4.elf", NetLoaded},
		{"rpi4-netboot-old.txt", "TFTP: complete", 0},
		{"rpi4-netboot-new.txt", "NETWORK: d8:3a:dd", NetStep}, // after the uptime
		{"rpi4-netboot-new.txt", "TFTP: 1: File not found", NetMissing},
		{"rpi4-netboot-new.txt", "Read e4c9f0aa/start4.elf", NetLoaded},
	}
	for _, tt := range tests {
		got, ok := Netboot(lineOf(t, tt.file, tt.line))
		if ok != (tt.want != 0) || got.Kind != tt.want {
			t.Errorf("%s: Netboot(%q) = %+v, %v; want %v", tt.file, tt.line, got, ok, tt.want)
		}
	}
	// Lines the transcripts do not have, in the wordings the firmware's
	// documentation and published consoles give.
	for line, want := range map[string]NetbootKind{
		"transfer started ...... transfer failed":                                           NetFailed, // RouterBOOT
		"transfer started .......":                                                          NetStep,   // cut
		"Could not load 192.168.1.2:vmlinux.elf: Timeout occured":                           NetFailed, // CFE
		"TFTP error: 'File not found' (1)":                                                  NetMissing,
		"TFTP error: 'Access violation' (2)":                                                NetFailed,
		"ARP Retry count exceeded; starting again":                                          NetFailed,
		"http://198.18.0.1/vmlinuz... No such file or directory (http://ipxe.org/2d12618e)": NetFailed,
		"NETBOOT init failed":                                                               NetFailed, // Raspberry Pi 4, 2021
		"NET_BOOT: failed: no offer":                                                        NetFailed, // the rpi4b-twin's ROM
		"trying bootp protocol......":                                                       NetStep,   // cut while it tries
	} {
		got, ok := Netboot([]byte(line))
		if ok != (want != 0) || got.Kind != want {
			t.Errorf("Netboot(%q) = %+v, %v; want %v", line, got, ok, want)
		}
	}
	if st, _ := Netboot([]byte("trying bootp protocol.................................... failed")); st.Text != "trying bootp protocol... failed" {
		t.Errorf("dots not shortened: %q", st.Text)
	}
}

func TestLoader(t *testing.T) {
	for _, tt := range []struct{ file, line, name, version string }{
		{"routerboot-rb433.txt", "RouterBOOT booter", "RouterBOOT", "2.20"},
		{"routerboot-rb3011-backup.txt", "RouterBOOT backup", "RouterBOOT backup", "3.27"},
		{"cfe-wrt54g-boot-elf.txt", "CFE version", "CFE", "1.0.37"},
		{"uboot-ar7240-tftpboot.txt", "U-Boot 1.1.4", "U-Boot", "1.1.4"},
		{"qemu-arm64-uboot.txt", "U-Boot 2023.01", "U-Boot", "2023.01+dfsg-2+deb12u3"},
		{"rpi4-netboot-old.txt", "RPi: BOOTLOADER", "RPi bootloader", "2021-02-16"},
		{"rpi4-netboot-new.txt", "RPi: BOOTLOADER", "RPi bootloader", "2024-07-30"},
		{"qemu-x86_64-ipxe.txt", "iPXE initialising", "iPXE", ""},
		{"intel-boot-agent.txt", "Intel(R) Boot Agent", "Intel Boot Agent GE", "v1.2.30"},
	} {
		m, ok := Classify(lineOf(t, tt.file, tt.line))
		name, version := m.Loader()
		if !ok || m.Kind != Firmware || name != tt.name || version != tt.version {
			t.Errorf("%s %q: %+v, Loader() = %q, %q; want %q, %q", tt.file, tt.line, m, name, version, tt.name, tt.version)
		}
	}
}
