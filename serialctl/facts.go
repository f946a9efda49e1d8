package serialctl

import (
	"math"
	"regexp"
	"strconv"

	"github.com/bootbench/bootbench/boards"
)

// clockRule reads the CPU clock a firmware announces in its banner.
type clockRule struct {
	re   *regexp.Regexp // its first group is the figure
	unit float64        // MHz per unit of the figure
}

// clockRules are the banner lines that carry the clock the firmware set,
// one per dialect; each is tested against a published console.
var clockRules = []clockRule{
	// MikroTik RouterBOOT, every version: "CPU frequency: 680 MHz".
	{regexp.MustCompile(`^CPU frequency:\s*(\d+)\s*MHz\b`), 1},
	// Broadcom CFE (WRT54G and its kin): "CPU type 0x29007: 216MHz",
	// the clock it set from NVRAM's clkfreq.
	{regexp.MustCompile(`^CPU type 0x[0-9A-Fa-f]+:\s*(\d+)\s*MHz\b`), 1},
	// Mainline U-Boot on SoCs whose clock code reports it:
	// "CPU:   Freescale i.MX51 rev3.0 at 800 MHz".
	{regexp.MustCompile(`^CPU:\s.*\bat (\d+(?:\.\d+)?)\s*MHz\b`), 1},
	{regexp.MustCompile(`^CPU:\s.*\bat (\d+(?:\.\d+)?)\s*GHz\b`), 1000},
}

// AnnouncedClock reads the CPU clock a firmware banner line announces:
// RouterBOOT's "CPU frequency: 680 MHz", CFE's "CPU type 0x29008:
// 200MHz", U-Boot's "CPU: ... at 800 MHz". The line is taken as a
// console delivers it (control sequences and surrounding space do not
// matter). Firmware that prints no clock (U-Boot 1.1.4 on Atheros, the
// Raspberry Pi 4's bootloader) gives nothing.
func AnnouncedClock(line []byte) (boards.MHz, bool) {
	s := Printable(line)
	for _, r := range clockRules {
		m := r.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil || v <= 0 {
			return 0, false
		}
		return boards.MHz(math.Round(v * r.unit)), true
	}
	return 0, false
}
