package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBoardsShow: every profile shows, and each says plainly what works on
// it, what does not, and where it has been tested.
func TestBoardsShow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	tests := []struct {
		board string
		want  []string
	}{
		{"rb1100", []string{"NOT SUPPORTED its CPU is 32-bit PowerPC", "gccgo", "works         bootbench import --board rb1100", "nothing runs on the board", "firmware      bench route runs under RouterOS", "image: none                  # keep RouterOS", "/ip firewall filter add chain=forward"}},
		{"rb450", []string{"arch          mips (GOMIPS=softfloat)", "bench speed   supported", "bench dd      supported: in the image's benchinit", "bench route   supported on a bench whose inventory cables two host NICs to the board's routed ports", "bench openssl supported: cross-built from Debian 12's openssl 3.0 source with Debian's mips-linux-gnu compiler", "ram check", "32 MiB", "ONLY ON VIRTUAL BOARDS", "qemu-rb450: its twin", "it differs in the SoC"}},
		{"rb450g", []string{"clocks        680,800 MHz (default 680, applied by routerboot-menu)", "ONLY ON VIRTUAL BOARDS", "qemu-rb450g: its twin", "not 680 and 800, which QEMU cannot make exact"}},
		{"wrt54g-v3", []string{"bench openssl supported: Debian 12's openssl 3.0 for mipsel", "ONLY ON VIRTUAL BOARDS", "qemu-wrt54g: CFE's console dialect end to end"}},
		{"tl-mr3420", []string{"boot          uboot-serial", "NOT SUPPORTED its U-Boot boots a MIPS uImage", "works         image build --arch mips --format uimage", "nothing runs on the board; what stands in", "qemu-arm64: U-Boot"}},
		{"rb750", []string{"ram           32 MiB"}},
		{"rpi4b", []string{"clocks        600 to 1800 MHz (default 1500, applied by config-txt); up to 2100 MHz with --allow-overvoltage (over_voltage=6)", "firmware      start4.elf, fixup4.dat from Debian's raspi-firmware", "broadcom/bcm2711-rpi-4-b.dtb", "ONLY ON VIRTUAL BOARDS"}},
		{"rpi3b-plus", []string{"clocks        600 to 1400 MHz (default 1400, applied by config-txt)\n", "firmware      bootcode.bin, start.elf, fixup.dat"}},
		{"rb750g", []string{"ram           64 MiB"}},
		{"pc-x86_64", []string{"qemu-x86_64: the same iPXE netboot"}},
		{"qemu-mipsel", []string{"tested        a virtual board"}},
		{"qemu-x86_64", []string{"bench dd      supported", "bench route   supported: the board routes between the virtual bench's two host networks"}},
		{"qemu-rb450g", []string{"bench route   supported: the board routes between the virtual bench's two host networks, on two extra e1000 NICs"}},
		{"qemu-rb450", []string{"bench route   not yet on this board"}},
		{"rpi4b-twin", []string{"boot          rpi-netboot", "clocks        1000,500,250 MHz (default 1000, applied by config-txt)", "[-M virt -cpu cortex-a72], boot ROM raspberrypi, MAC dc:a6:32:bb:00:b1", "console       ttyS1 at 115200 baud"}},
	}
	list := bootbench(t, db, "boards", "list")
	for _, tt := range tests {
		t.Run(tt.board, func(t *testing.T) {
			if !strings.Contains(list.stdout, "\n"+tt.board+" ") {
				t.Errorf("boards list lacks %s:\n%s", tt.board, list.stdout)
			}
			r := bootbench(t, db, "boards", "show", tt.board)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("boards show %s lacks %q:\n%s", tt.board, w, r.stdout)
				}
			}
		})
	}
}

// TestBoardsListAgreesWithShow: boards list's CLOCKS column says what
// boards show's clocks line says of every board, in a word.
func TestBoardsListAgreesWithShow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	show := regexp.MustCompile(`(?m)^clocks        (?:one clock, (\d+) MHz, no setting|(one) clock, no setting|(any) setting|(\d+) to (\d+) MHz|([\d,]+) MHz)`)
	lines := strings.Split(strings.TrimSpace(bootbench(t, db, "boards", "list").stdout), "\n")
	col := strings.Index(lines[0], "CLOCKS")
	for _, l := range lines[1:] {
		name := strings.Fields(l)[0]
		listed := strings.Fields(l[col:])[0]
		if strings.HasPrefix(l[col:], listed+" (one)") {
			listed += " (one)"
		}
		m := show.FindStringSubmatch(bootbench(t, db, "boards", "show", name).stdout)
		var want string
		switch {
		case m == nil:
			t.Errorf("boards show %s has no clocks line", name)
			continue
		case m[1] != "":
			want = m[1] + " (one)"
		case m[2] != "":
			want = "one"
		case m[3] != "":
			want = "any"
		case m[4] != "":
			want = m[4] + "-" + m[5]
		default:
			want = m[6]
		}
		if listed != want {
			t.Errorf("%s: boards list says %q, boards show %q", name, listed, m[0])
		}
	}
}
