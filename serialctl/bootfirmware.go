package serialctl

import (
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// BootFirmware is what a boot's firmware said of itself on the console,
// gathered line by line (Line): its banner and the CPU clock it
// announced. A firmware may start again before any kernel runs — RouterBOOT
// reboots itself once its clock is changed in its menu, printing its
// banner and the new clock again; U-Boot chains to iPXE — so the last
// banner and the last clock before the kernel are the ones that booted
// it. A banner after the kernel started is the next boot's.
type BootFirmware struct {
	// Bootloader is the last banner's loader, name and version in one
	// text as Classify names it: "RouterBOOT 2.20", "CFE 1.0.37",
	// "U-Boot 1.1.4", "RPi bootloader 2024-07-30"; "" before any.
	Bootloader string
	// ClockMHz is the last clock a firmware announced (AnnouncedClock);
	// 0 before any. A later loader that announces none (iPXE after
	// U-Boot) leaves it: the clock is the one the first set.
	ClockMHz boards.MHz

	kernel bool // the kernel has started: a banner now starts the next boot
}

// Line reads one console line, as a Console delivers it, and says whether
// it is the kernel starting (a loader's handoff, or the kernel's first
// line): the boot's firmware has said all it will.
func (f *BootFirmware) Line(text []byte) (kernel bool) {
	if m, ok := Classify(text); ok {
		switch m.Kind {
		case Firmware:
			if f.kernel {
				*f = BootFirmware{} // the board started again
			}
			name, version := m.Loader()
			f.Bootloader = strings.TrimSpace(name + " " + version)
			return false
		case Handoff, KernelStart:
			f.kernel = true
			return true
		}
	}
	if mhz, ok := AnnouncedClock(text); ok && !f.kernel {
		f.ClockMHz = mhz
	}
	return false
}
