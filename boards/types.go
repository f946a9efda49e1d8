package boards

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MHz is a CPU clock setting. 0 means "the board's default": no setting was
// asked for (or, for a clock a board reports, none was reported).
//
// Every text of a clock, and of a list of clocks (Clocks), is made here,
// and read back here (ParseMHz, ParseClocks): the methods differ only in
// how the default is said and how the unit is attached, as the place the
// text appears in reads. Nowhere else formats a clock as "%d MHz".
type MHz int

// String is the clock for progress and log lines: "680 MHz", "default clock".
func (m MHz) String() string { return m.format("default clock", " MHz") }

// Label is the clock as a table cell or chart label: "680 MHz", "default".
func (m MHz) Label() string { return m.format("default", " MHz") }

// Phrase is the clock inside a sentence: "680 MHz", "the default clock".
func (m MHz) Phrase() string { return m.format("the default clock", " MHz") }

// Key is the clock as one word, for key: value formats: "680MHz", "default".
func (m MHz) Key() string { return m.format("default", "MHz") }

// Digits is the clock under a column already headed MHz: "680", "-".
func (m MHz) Digits() string { return m.format("-", "") }

// Or is the clock with the default said as def, for the one place that
// words it its own way: "680 MHz", def.
func (m MHz) Or(def string) string { return m.format(def, " MHz") }

// Figure is the clock as the number it is, the default too: "680 MHz",
// "0 MHz". For messages that quote a figure as given, stored or set
// (a firmware's banner, a profile's limits), where 0 is no default.
func (m MHz) Figure() string { return m.format("0 MHz", " MHz") }

func (m MHz) format(def, unit string) string {
	if m == 0 {
		return def
	}
	return strconv.Itoa(int(m)) + unit
}

// MHzFromKHz is a clock cpufreq reports in kHz, rounded to the MHz.
func MHzFromKHz(khz int) MHz {
	return MHz(math.Round(float64(khz) / 1000))
}

// MHzFromBogoMIPS estimates the clock from the BogoMIPS a board reports
// (/proc/cpuinfo's text) and its profile's BogoMIPS per MHz; 0 when either
// is unknown.
func MHzFromBogoMIPS(bogomips string, perMHz float64) MHz {
	if perMHz <= 0 {
		return 0
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(bogomips), 64)
	if err != nil || v <= 0 {
		return 0
	}
	return MHz(math.Round(v / perMHz))
}

// ParseMHz reads a clock as a user types it: "800" or "800MHz"; "0" is
// the board's default (a clock setting to run at is never 0: ParseClocks).
func ParseMHz(s string) (MHz, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "MHz"), "mhz")
	n, err := strconv.Atoi(strings.TrimSpace(t))
	if err != nil || n < 0 {
		return 0, notAClock(s)
	}
	return MHz(n), nil
}

func notAClock(s string) error { return fmt.Errorf("%q is not a clock in MHz", s) }

// Clocks is a list of clocks: the settings a board offers, or a command
// line asks for, or the clocks a set of runs holds.
type Clocks []MHz

// ParseClocks reads clock settings as a user lists them: "680,800MHz".
// Blank items are skipped; each names a clock, so "0" is refused.
func ParseClocks(s string) (Clocks, error) {
	var cs Clocks
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		m, err := ParseMHz(item)
		if err == nil && m == 0 {
			err = notAClock(item)
		}
		if err != nil {
			return nil, err
		}
		cs = append(cs, m)
	}
	return cs, nil
}

// Joined is the clocks as figures joined by sep under one unit: "680, 800
// MHz" (sep ", "), "600 to 1500 MHz" (" to "), "800 vs 680 MHz" (" vs ");
// the default as 0, as Figure says it.
func (cs Clocks) Joined(sep string) string {
	return cs.join(sep, func(m MHz) string { return strconv.Itoa(int(m)) }) + " MHz"
}

// Digits is the clocks under a column already headed MHz: "680,800", "-"
// for none.
func (cs Clocks) Digits() string {
	if len(cs) == 0 {
		return "-"
	}
	return cs.join(",", func(m MHz) string { return strconv.Itoa(int(m)) })
}

// Labels is each clock as Label says it, joined by ", ": "680 MHz, default".
func (cs Clocks) Labels() string { return cs.join(", ", MHz.Label) }

// Phrases is each clock as Phrase says it, joined by ", ": "680 MHz, the
// default clock".
func (cs Clocks) Phrases() string { return cs.join(", ", MHz.Phrase) }

func (cs Clocks) join(sep string, text func(MHz) string) string {
	s := make([]string, len(cs))
	for i, m := range cs {
		s[i] = text(m)
	}
	return strings.Join(s, sep)
}

// BootMethod is how a board's bootloader gets the kernel and image.
type BootMethod string

// The boot methods bootbench knows. Each names one dialect the netboot
// servers speak (or, for qemu-direct, no network at all).
const (
	BootIPXE        BootMethod = "ipxe"             // iPXE asks by DHCP, runs our script
	BootPXE         BootMethod = "pxe"              // firmware PXE, chainloaded into iPXE
	BootPXELinux    BootMethod = "pxelinux"         // U-Boot's pxe get / pxe boot
	BootUBootDHCP   BootMethod = "uboot-dhcp"       // U-Boot's own DHCP, then boot.scr.uimg
	BootUBootSerial BootMethod = "uboot-serial"     // U-Boot driven over its console
	BootRouterBOOT  BootMethod = "routerboot-bootp" // MikroTik RouterBOOT: BOOTP, one ELF
	BootCFE         BootMethod = "cfe"              // Broadcom CFE driven over its console
	BootQEMUDirect  BootMethod = "qemu-direct"      // QEMU loads the kernel itself
	// BootRaspberryPi is the Raspberry Pi boot ROM's (Pi 3B+) or EEPROM
	// bootloader's (Pi 4) DHCP and TFTP: its firmware, config.txt,
	// cmdline.txt, device tree, kernel and image under <serial>/.
	BootRaspberryPi BootMethod = "rpi-netboot"
)

var bootMethods = []BootMethod{BootIPXE, BootPXE, BootPXELinux, BootUBootDHCP, BootUBootSerial, BootRouterBOOT, BootCFE, BootQEMUDirect, BootRaspberryPi}

// UnmarshalYAML refuses a boot method bootbench does not know.
func (b *BootMethod) UnmarshalYAML(n *yaml.Node) error {
	v, err := oneOf(n, "boot method", bootMethods)
	*b = v
	return err
}

// ClockMethod is how a requested clock reaches the board.
type ClockMethod string

// The clock methods. An empty ClockMethod is a board whose clock cannot be
// set: it runs at its default only.
const (
	ClockCPUFreq    ClockMethod = "cpufreq"     // benchinit sets it through cpufreq (bootbench.clock=)
	ClockCmdline    ClockMethod = "cmdline"     // a kernel parameter from the profile's template
	ClockBootloader ClockMethod = "bootloader"  // typed into the bootloader over the console
	ClockQEMUIcount ClockMethod = "qemu-icount" // QEMU's virtual instruction clock
	ClockManual     ClockMethod = "manual"      // set by the operator (e.g. RouterBOOT's menu)
	ClockConfigTxt  ClockMethod = "config-txt"  // arm_freq= in the config.txt bootbench serves a Raspberry Pi
	// ClockRouterBOOTMenu: chosen in RouterBOOT's setup menu over the
	// console at every boot, with a one-time Ethernet boot beside it.
	ClockRouterBOOTMenu ClockMethod = "routerboot-menu"
	// ClockCFENVRAM: CFE's NVRAM clkfreq, set at its prompt and
	// committed, then a reboot that starts at that clock.
	ClockCFENVRAM ClockMethod = "cfe-nvram"
)

var clockMethods = []ClockMethod{ClockCPUFreq, ClockCmdline, ClockBootloader, ClockQEMUIcount, ClockManual, ClockConfigTxt, ClockRouterBOOTMenu, ClockCFENVRAM}

// SetInFirmware reports whether the clock is set through the board's own
// firmware over its console after power-on (its setup menu, its NVRAM),
// so the firmware announces it and the kernel's BogoMIPS must agree.
func (c ClockMethod) SetInFirmware() bool {
	return c == ClockRouterBOOTMenu || c == ClockCFENVRAM
}

// UnmarshalYAML refuses a clock method bootbench does not know.
func (c *ClockMethod) UnmarshalYAML(n *yaml.Node) error {
	v, err := oneOf(n, "clock method", clockMethods)
	*c = v
	return err
}

// ImageFormat is how the image is wrapped for the board's bootloader.
type ImageFormat string

// The image formats (see initramfs.Wrap).
const (
	FormatCPIO   ImageFormat = "cpio"
	FormatCPIOGz ImageFormat = "cpio.gz"
	FormatCPIOXz ImageFormat = "cpio.xz"
	FormatUImage ImageFormat = "uimage"
	FormatELF    ImageFormat = "elf"
)

var imageFormats = []ImageFormat{FormatCPIO, FormatCPIOGz, FormatCPIOXz, FormatUImage, FormatELF}

// UnmarshalYAML refuses an image format bootbench cannot write.
func (f *ImageFormat) UnmarshalYAML(n *yaml.Node) error {
	v, err := oneOf(n, "image format", imageFormats)
	*f = v
	return err
}

// PowerDriver names how a board is switched on and off.
type PowerDriver string

// The power drivers (see harness/power).
const (
	PowerManual    PowerDriver = "manual"    // the operator, told what to do
	PowerCommand   PowerDriver = "command"   // shell commands: relays, uhubctl, snmpset
	PowerPDUDaemon PowerDriver = "pdudaemon" // a pdudaemon's HTTP API
	PowerTasmota   PowerDriver = "tasmota"   // a Tasmota smart plug's HTTP API
	PowerShelly    PowerDriver = "shelly"    // a Shelly relay's HTTP API
	PowerQEMU      PowerDriver = "qemu"      // a virtual board: QEMU started by bootbench
)

var powerDrivers = []PowerDriver{PowerManual, PowerCommand, PowerPDUDaemon, PowerTasmota, PowerShelly, PowerQEMU}

// UnmarshalYAML refuses a power driver bootbench does not have.
func (d *PowerDriver) UnmarshalYAML(n *yaml.Node) error {
	v, err := oneOf(n, "power driver", powerDrivers)
	*d = v
	return err
}

// oneOf decodes a scalar that must be one of known.
func oneOf[T ~string](n *yaml.Node, what string, known []T) (T, error) {
	var s string
	if err := n.Decode(&s); err != nil {
		return "", err
	}
	for _, k := range known {
		if string(k) == s {
			return k, nil
		}
	}
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = string(k)
	}
	return "", fmt.Errorf("line %d: unknown %s %q (known: %s)", n.Line, what, s, strings.Join(names, ", "))
}
