package boards

import (
	"fmt"
	"net"
	"regexp"
	"slices"
)

// RaspberryPi is what a Raspberry Pi's boot ROM and firmware load over
// the network besides the kernel and image bootbench gives every board:
// the firmware itself and the board's device tree. The files the ROM asks
// for, and in which order, are Raspberry Pi's documentation's (boot-net
// and "Raspberry Pi bootloader configuration", TFTP_PREFIX).
type RaspberryPi struct {
	// Firmware are files of Debian's raspi-firmware package
	// (/usr/lib/raspi-firmware), in the order the ROM and the firmware
	// ask for them: start4.elf and fixup4.dat on a Pi 4; bootcode.bin,
	// start.elf and fixup.dat on a Pi 3B+, whose ROM loads bootcode.bin
	// first.
	Firmware []string `yaml:"firmware"`
	// DeviceTree is the board's device tree in Debian's arm64 kernel
	// package, under /usr/lib/linux-image-<version>/:
	// broadcom/bcm2711-rpi-4-b.dtb.
	DeviceTree string `yaml:"device_tree"`
}

// ClockLimits are a model's clock limits, as its maker documents them:
// the lowest clock, the highest it runs at without a raised core voltage
// (Safe), and the highest its firmware takes at all (Max). A clock above
// Safe is served with OverVoltage, and only when the operator allows it.
//
// Step is the operating-point step the board's cpufreq driver reports
// clocks in (0: any clock). Linux's raspberrypi-cpufreq makes its points
// from the firmware's minimum to its maximum, both rounded up to 100 MHz,
// in 100 MHz steps: at arm_freq=2147 cpufreq says 2200, and the run could
// not be verified against the clock it asked for. A clock off the step is
// refused before power-on.
type ClockLimits struct {
	Min         MHz `yaml:"min"`
	Safe        MHz `yaml:"safe"`
	Max         MHz `yaml:"max"`
	OverVoltage int `yaml:"over_voltage"`
	Step        MHz `yaml:"step"`
}

// check refuses limits that contradict each other or the default clock.
func (l ClockLimits) check(name string, def MHz) error {
	switch {
	case l.Min <= 0 || l.Safe < l.Min || l.Max < l.Safe:
		return fmt.Errorf("profile %s: clock_limits need 0 < min <= safe <= max (got %d, %d, %d)", name, l.Min, l.Safe, l.Max)
	case def != 0 && (def < l.Min || def > l.Safe):
		return fmt.Errorf("profile %s: default clock %s is outside clock_limits min..safe (%d..%d)", name, def, l.Min, l.Safe)
	case l.Max > l.Safe && l.OverVoltage <= 0:
		return fmt.Errorf("profile %s: clock_limits: clocks above safe need over_voltage", name)
	case l.Step < 0 || l.Step > 0 && (l.Min%l.Step != 0 || l.Safe%l.Step != 0 || l.Max%l.Step != 0 || def%l.Step != 0):
		return fmt.Errorf("profile %s: clock_limits: min, safe, max and the default clock must be multiples of step %d", name, l.Step)
	}
	return nil
}

// checkRaspberryPi checks what a Raspberry Pi profile needs: its files
// for rpi-netboot, and config-txt clocks only where config.txt is served.
func (p Profile) checkRaspberryPi() error {
	if p.Boot == BootRaspberryPi && (p.RaspberryPi == nil || len(p.RaspberryPi.Firmware) == 0 || p.RaspberryPi.DeviceTree == "") {
		return fmt.Errorf("profile %s: boot method rpi-netboot needs raspberry_pi: firmware and device_tree", p.Name)
	}
	if p.RaspberryPi != nil && p.Boot != BootRaspberryPi {
		return fmt.Errorf("profile %s: raspberry_pi is for boot method rpi-netboot", p.Name)
	}
	if p.ClockMethod == ClockConfigTxt && p.Boot != BootRaspberryPi {
		return fmt.Errorf("profile %s: clock method config-txt needs boot method rpi-netboot, which serves config.txt", p.Name)
	}
	if p.ClockLimits != nil {
		return p.ClockLimits.check(p.Name, p.DefaultClock)
	}
	return nil
}

// checkLimits refuses a clock outside the model's limits (none: any).
func (p Profile) checkLimits(mhz MHz) error {
	l := p.ClockLimits
	switch {
	case l == nil:
		return nil
	case mhz > l.Max:
		return fmt.Errorf("board model %s: %s is above %s, the highest clock its firmware takes", p.Name, mhz, l.Max.Figure())
	case mhz < l.Min:
		return fmt.Errorf("board model %s: %s is below %s, its lowest clock", p.Name, mhz, l.Min.Figure())
	case l.Step > 0 && mhz%l.Step != 0:
		return fmt.Errorf("board model %s: %s is not a multiple of %s, the steps its cpufreq reports clocks in (it would report %d, and the run could not be verified)", p.Name, mhz, l.Step.Figure(), (mhz+l.Step-1)/l.Step*l.Step)
	}
	return nil
}

// CheckOvervoltage refuses a clock above the highest the model runs at
// without a raised core voltage, unless the operator allowed it.
func (p Profile) CheckOvervoltage(mhz MHz, allowed bool) error {
	if l := p.ClockLimits; l != nil && mhz > l.Safe && !allowed {
		return fmt.Errorf("board model %s: %s is above %s, the highest clock without over_voltage; --allow-overvoltage serves it with over_voltage=%d", p.Name, mhz, l.Safe.Figure(), l.OverVoltage)
	}
	return nil
}

// OverVoltage is the over_voltage= a clock is served with: 0 (none) up to
// the safe limit.
func (p Profile) OverVoltage(mhz MHz) int {
	if l := p.ClockLimits; l != nil && mhz > l.Safe {
		return l.OverVoltage
	}
	return 0
}

// serialRE is a Raspberry Pi's serial number as its ROM puts it before
// the files it asks for: 8 hex digits (the last 8 of /proc/cpuinfo's
// Serial).
var serialRE = regexp.MustCompile(`^[0-9a-f]{8}$`)

// raspberryPiOUIs are the IEEE OUIs assigned to Raspberry Pi: the
// Foundation's (Pi 3 and earlier) and Raspberry Pi (Trading) Ltd's.
var raspberryPiOUIs = [][3]byte{{0xb8, 0x27, 0xeb}, {0xdc, 0xa6, 0x32}, {0xe4, 0x5f, 0x01}, {0xd8, 0x3a, 0xdd}, {0x28, 0xcd, 0xc1}, {0x2c, 0xcf, 0x67}}

// RaspberryPiMAC says whether mac is a Raspberry Pi's by its maker's
// OUI: a hint for a board the inventory lacks, never a way to serve one.
func RaspberryPiMAC(mac net.HardwareAddr) bool {
	return len(mac) == 6 && slices.Contains(raspberryPiOUIs, [3]byte{mac[0], mac[1], mac[2]})
}
