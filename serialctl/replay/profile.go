package replay

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// families are the firmware a boot method's boards print on their
// console, by the first word of the firmware's name (serialctl's Loader):
// a PC shows its BIOS or UEFI and its NIC's ROM before iPXE.
var families = map[boards.BootMethod][]string{
	boards.BootRouterBOOT:  {"RouterBOOT"},
	boards.BootCFE:         {"CFE"},
	boards.BootUBootDHCP:   {"U-Boot"},
	boards.BootUBootSerial: {"U-Boot"},
	boards.BootPXELinux:    {"U-Boot"},
	boards.BootRaspberryPi: {"RPi"},
	boards.BootIPXE:        {"SeaBIOS", "UEFI", "Intel", "iPXE"},
	boards.BootPXE:         {"SeaBIOS", "UEFI", "Intel", "iPXE"},
	boards.BootQEMUDirect:  {"SeaBIOS"},
}

// knownFamily says whether name's family is one a boot method has: a
// firmware bootbench knows nothing of is no evidence either way.
func knownFamily(f string) bool {
	for _, fs := range families {
		if slices.Contains(fs, f) {
			return true
		}
	}
	return false
}

func family(loader string) string {
	f, _, _ := strings.Cut(loader, " ")
	return f
}

// checkLoader holds a firmware's banner to the profile's boot method.
func (w *walker) checkLoader(n int, loader string) {
	p := w.r.profile
	f := family(loader)
	if p == nil || !knownFamily(f) || slices.Contains(families[p.Boot], f) {
		return
	}
	w.problem(n, ProblemBootloader, "%s is on the console, but board model %s boots by %s (%s)", loader, p.Name, p.Boot, strings.Join(families[p.Boot], ", "))
}

// offered are the clocks the profile says its boards run at: its
// settings, or its one default clock.
func offered(p *boards.Profile) boards.Clocks {
	if len(p.Clocks) > 0 {
		return p.Clocks
	}
	if p.DefaultClock > 0 {
		return boards.Clocks{p.DefaultClock}
	}
	return nil
}

// checkClock holds the clock a firmware announced to the profile's
// clocks, by the rule run holds a requested clock to (Profile.CheckClock).
// A profile that names no clock at all has nothing to hold it to.
func (w *walker) checkClock(n int, mhz boards.MHz) {
	p := w.r.profile
	if p == nil || len(offered(p)) == 0 && p.ClockLimits == nil {
		return
	}
	if err := p.CheckClock(mhz); err != nil {
		w.problem(n, ProblemClock, "the firmware announced %s: %v", mhz, err)
	}
}

// checkBogoMIPS says what BogoMIPS mean for the clock, and holds them to
// it by boards.ClockAgrees, the rule a live run's clock is checked by
// (BogoMIPS as a source, with its tolerance): against the clock the
// firmware announced, or, where it announced none, against the profile's
// clocks. It returns the fact's text and the clock the BogoMIPS imply (0
// where the profile knows no BogoMIPS per MHz).
func (w *walker) checkBogoMIPS(n int, bm string, announced boards.MHz) (string, boards.MHz) {
	p := w.r.profile
	text := bm + " BogoMIPS"
	if p == nil || p.BogoMIPSPerMHz <= 0 {
		if v, err := strconv.ParseFloat(bm, 64); err == nil && announced > 0 {
			text += fmt.Sprintf(": %.3f per MHz at the announced %s", v/float64(announced), announced)
		}
		return text, 0
	}
	implied := boards.MHzFromBogoMIPS(bm, p.BogoMIPSPerMHz)
	text += fmt.Sprintf(": %s at %s's %g per MHz", implied, p.Name, p.BogoMIPSPerMHz)
	switch cs := offered(p); {
	case announced > 0 && boards.ClockAgrees(boards.FromBogoMIPS, implied, announced):
		text += fmt.Sprintf(", agrees with the announced %s", announced)
	case announced > 0:
		w.problem(n, ProblemBogoMIPS, "%s BogoMIPS say %s at %s's %g per MHz, not the %s the firmware announced (more than %.0f%% off)",
			bm, implied, p.Name, p.BogoMIPSPerMHz, announced, 100*boards.FromBogoMIPS.Tolerance())
	case len(cs) > 0:
		for _, c := range cs {
			if boards.ClockAgrees(boards.FromBogoMIPS, implied, c) {
				return text + fmt.Sprintf(", %s's %s setting", p.Name, c), implied
			}
		}
		w.problem(n, ProblemBogoMIPS, "%s BogoMIPS say %s at %s's %g per MHz, not a clock board model %s runs at (%s)", bm, implied, p.Name, p.BogoMIPSPerMHz, p.Name, cs.Joined(", "))
	}
	return text, implied
}
