package serialctl

import (
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
