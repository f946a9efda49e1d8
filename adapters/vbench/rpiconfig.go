package vbench

import (
	"fmt"
	"strconv"
	"strings"
)

// piConfig is what a Raspberry Pi 4's firmware takes from config.txt for
// loading Linux, read as the firmware reads it (Raspberry Pi
// documentation, "config.txt": "What is config.txt?", "Conditional
// filters", "Boot options", "Overclocking"):
//
//   - one setting a line, name=value; a line starting with # is a comment;
//   - initramfs has its own syntax, "initramfs <file> <address>", the
//     address a number or followkernel;
//   - a setting given twice: the later line wins;
//   - [section] lines are conditional filters: [all] applies to every
//     board and resets the others, [none] to none; a model filter to the
//     models its table lists ([pi4]: Model 4B, Pi 400, CM4, CM4S), so
//     [pi4] and [board-type=0x11] apply to a Pi 4B and [pi3], [pi400],
//     [cm4] ... do not; [0x<serial>] to the board with that serial;
//     filters of different types combine, one of the same type replaces
//     the last. Filters on things the twin has none of (a monitor's EDID,
//     GPIO levels, the tryboot flag) do not match; [HDMI:n] only selects
//     the port the HDMI settings that follow are for, so it applies.
type piConfig struct {
	Kernel     string // kernel=; "" for the default
	Arm64      bool   // arm_64bit=1
	Initramfs  string // initramfs <file> followkernel; "" for none
	DeviceTree string // device_tree=; "" for the board's own
	Cmdline    string // cmdline=; "" for cmdline.txt
	ArmFreq    int    // arm_freq= in MHz; 0 when not set
}

// Defaults a Pi 4 loads by when config.txt names nothing else (Raspberry
// Pi documentation: config.txt "Boot options" for kernel, arm_64bit and
// cmdline; "Device Trees" for the board's own tree).
const (
	piKernel32   = "kernel7l.img"
	piKernel64   = "kernel8.img"
	piCmdline    = "cmdline.txt"
	piDeviceTree = "bcm2711-rpi-4-b.dtb"
	// piBoardType is the Pi 4B's type in its revision code (documentation:
	// "Raspberry Pi revision codes", type 0x11), for [board-type=].
	piBoardType = 0x11
)

// KernelFile is the kernel the firmware loads.
func (c piConfig) KernelFile() string {
	switch {
	case c.Kernel != "":
		return c.Kernel
	case c.Arm64:
		return piKernel64
	}
	return piKernel32
}

// DeviceTreeFile is the device tree the firmware loads.
func (c piConfig) DeviceTreeFile() string {
	if c.DeviceTree != "" {
		return c.DeviceTree
	}
	return piDeviceTree
}

// CmdlineFile is the file the firmware reads the command line from.
func (c piConfig) CmdlineFile() string {
	if c.Cmdline != "" {
		return c.Cmdline
	}
	return piCmdline
}

// filterKind is a type of conditional filter: one of a kind replaces the
// last, kinds combine.
type filterKind int

const (
	filterModel filterKind = iota
	filterSerial
	filterOther
)

// sections tracks which conditional filters are in force while reading.
type sections struct {
	serial string
	none   bool
	match  map[filterKind]bool
}

// applies says whether the lines read now apply to this board.
func (s *sections) applies() bool {
	if s.none {
		return false
	}
	for _, m := range s.match {
		if !m {
			return false
		}
	}
	return true
}

// enter reads a [filter] line.
func (s *sections) enter(filter string) {
	f := strings.ToLower(strings.TrimSpace(filter))
	switch {
	case f == "all":
		s.none, s.match = false, map[filterKind]bool{}
	case f == "none":
		s.none = true
	case strings.HasPrefix(f, "0x"):
		n, err := strconv.ParseUint(f[2:], 16, 64)
		want, _ := strconv.ParseUint(s.serial, 16, 64)
		s.match[filterSerial] = err == nil && n == want
	case strings.HasPrefix(f, "board-type="):
		n, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(f, "board-type="), "0x"), 16, 64)
		s.match[filterModel] = err == nil && n == piBoardType
	case strings.HasPrefix(f, "pi") || strings.HasPrefix(f, "cm"):
		s.match[filterModel] = f == "pi4"
	case strings.HasPrefix(f, "hdmi:"):
		// Selects a port for the HDMI settings below; no condition.
	default: // EDID=, gpioN=, tryboot: nothing of the twin's matches
		s.match[filterOther] = false
	}
}

// parsePiConfig reads config.txt for the Pi 4 with serial.
func parsePiConfig(text, serial string) (piConfig, error) {
	var c piConfig
	s := &sections{serial: serial, match: map[filterKind]bool{}}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			s.enter(line[1 : len(line)-1])
			continue
		}
		if !s.applies() {
			continue
		}
		if err := c.set(line); err != nil {
			return c, fmt.Errorf("config.txt line %d: %w", i+1, err)
		}
	}
	return c, nil
}

// set takes one setting line; settings the twin has no use for are
// passed over, as the firmware passes over ones it does not know.
func (c *piConfig) set(line string) error {
	if f := strings.Fields(line); len(f) > 0 && f[0] == "initramfs" {
		if len(f) < 2 {
			return fmt.Errorf("initramfs without a file")
		}
		if len(f) > 2 && f[2] != "followkernel" && f[2] != "0" {
			return fmt.Errorf("initramfs at address %s: the twin loads it after the kernel only (followkernel)", f[2])
		}
		c.Initramfs = f[1]
		return nil
	}
	name, value, ok := strings.Cut(line, "=")
	if !ok {
		return nil
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch name {
	case "kernel":
		c.Kernel = value
	case "arm_64bit":
		c.Arm64 = value != "" && value != "0"
	case "device_tree":
		c.DeviceTree = value
	case "cmdline":
		c.Cmdline = value
	case "arm_freq":
		mhz, err := strconv.Atoi(value)
		if err != nil || mhz <= 0 {
			return fmt.Errorf("arm_freq=%s is not a clock in MHz", value)
		}
		c.ArmFreq = mhz
	}
	return nil
}

// parseCmdline is the kernel command line from cmdline.txt as the
// firmware passes it: its first line, without the line's end
// (documentation, "Kernel command line (cmdline.txt)": one line).
func parseCmdline(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(line)
}

// virtConsole maps the consoles a Pi's command line names to the UART of
// QEMU's virt machine. On a Pi, serial0 names whichever UART is on GPIO
// 14/15 (Raspberry Pi documentation, "Configure UARTs": ttyS0, the mini
// UART, on a Pi 4 whose PL011 drives Bluetooth; config.txt's enable_uart
// with console=serial0 makes it the console), and start.elf writes that
// device's name into the command line Linux gets; Debian's kernel, whose
// device tree calls the mini UART serial1, names it ttyS1 (as Debian's
// raspi-firmware package writes it). On virt the one UART is a PL011,
// ttyAMA0. The bench's serial line is that UART in all these cases.
func virtConsole(cmdline string) string {
	f := strings.Fields(cmdline)
	for i, p := range f {
		dev, opts, _ := strings.Cut(strings.TrimPrefix(p, "console="), ",")
		if !strings.HasPrefix(p, "console=") || (dev != "serial0" && dev != "ttyS0" && dev != "ttyS1") {
			continue
		}
		f[i] = "console=ttyAMA0"
		if opts != "" {
			f[i] += "," + opts
		}
	}
	return strings.Join(f, " ")
}
