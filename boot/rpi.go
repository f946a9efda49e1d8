package boot

import (
	"fmt"
	"io"
	"net"
	"path"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
)

// A Raspberry Pi's files. Its boot ROM (Pi 3B+: bootcode.bin first) or
// EEPROM bootloader (Pi 4) asks for <serial>/start4.elf (start.elf) and,
// when that is found, for every later file under <serial>/; when it is
// not, for every file at the root (Raspberry Pi's documentation: boot-net,
// and TFTP_PREFIX in "Raspberry Pi bootloader configuration"). The
// firmware then reads fixup4.dat (fixup.dat), config.txt, cmdline.txt,
// and the device tree, kernel and initramfs config.txt names
// (config.txt's boot options: kernel=, device_tree=, initramfs).
// bootbench serves the board's files under its serial and, for the
// fallback, at the root to the board's own address.
const (
	piConfigTxt  = "config.txt"
	piCmdlineTxt = "cmdline.txt"
	piKernel     = "vmlinuz"
	piInitramfs  = "initramfs.cpio"
)

// raspberryPi is whether b netboots as a Raspberry Pi.
func raspberryPi(b boards.Board) bool { return b.Profile.Boot == boards.BootRaspberryPi }

// SerialKey is the folder a Raspberry Pi's ROM asks for its files in:
// its serial number.
func SerialKey(b boards.Board) Key { return Key(b.Serial) }

// ImageNames are the names board b fetches its image under, as transfer
// events name them: <board>/initramfs.cpio, and for a Raspberry Pi the
// same under its serial and at the root (its ROM's fallback). When one of
// them has arrived, the board's kernel is starting.
func ImageNames(b boards.Board) []string {
	names := []string{KeyOf(b).File(piInitramfs)}
	if raspberryPi(b) {
		names = append(names, SerialKey(b).File(piInitramfs), piInitramfs)
	}
	return names
}

// ConfigTxt is the config.txt bootbench serves a Raspberry Pi for a run:
// 64-bit mode for Debian's arm64 kernel (arm_64bit; "64-bit kernels may
// be uncompressed image files", as Debian's is), the primary UART on GPIO
// 14/15 (enable_uart=1, which also fixes the core clock the mini UART's
// baud rate derives from), the run's clock (arm_freq, over_voltage where
// the profile says the clock needs it), and the kernel, device tree and
// initramfs to load (initramfs … followkernel: in memory after the
// kernel). Options from Raspberry Pi's documentation: config.txt "Boot
// options" and "Overclocking options". Not upstream_kernel=1, which
// Debian's raspi-firmware writes: it sets os_prefix to "upstream/", and
// the firmware would first look for the kernel and device tree there; the
// device tree is named here by its upstream name anyway.
// It holds nothing of the run but its clock (the run id travels on
// cmdline.txt), so two runs' files differ exactly where their clocks do.
func ConfigTxt(rp plan.RaspberryPi) string {
	lines := []string{
		"arm_64bit=1",
		"enable_uart=1",
	}
	if rp.ArmFreq != 0 {
		lines = append(lines, fmt.Sprintf("arm_freq=%d", rp.ArmFreq))
	}
	if rp.OverVoltage != 0 {
		lines = append(lines, fmt.Sprintf("over_voltage=%d", rp.OverVoltage))
	}
	lines = append(lines,
		"kernel="+piKernel,
		"device_tree="+path.Base(rp.DeviceTree),
		"initramfs "+piInitramfs+" followkernel",
	)
	return strings.Join(lines, "\n") + "\n"
}

// CmdlineTxt is the cmdline.txt a Raspberry Pi's firmware passes the
// kernel: the run's command line, on one line.
func CmdlineTxt(cmdline string) string { return cmdline + "\n" }

// openRaspberryPi is a Raspberry Pi's file of its current boot: made
// from the spec (config.txt, cmdline.txt) or from the cache (firmware,
// device tree, kernel, image).
func openRaspberryPi(spec *Spec, file string) (io.ReadCloser, int64, error) {
	rp := spec.RaspberryPi
	if rp == nil {
		return nil, 0, netboot.ErrNotFound
	}
	switch file {
	case piConfigTxt:
		return netboot.Memory([]byte(ConfigTxt(*rp)))
	case piCmdlineTxt:
		return netboot.Memory([]byte(CmdlineTxt(spec.Cmdline)))
	case piKernel:
		return openCached(spec.Kernel)
	case piInitramfs:
		return openCached(spec.Image)
	}
	if p, ok := spec.RaspberryPiFiles[file]; ok {
		return openCached(p)
	}
	return nil, 0, netboot.ErrNotFound
}

// OpenFor implements netboot.FilesFor: a name without a folder is a
// Raspberry Pi's that asks from its address (its ROM found no serial
// folder); any other name is Open's.
func (bt *Booter) OpenFor(client net.IP, name string) (io.ReadCloser, int64, error) {
	if strings.Contains(name, "/") {
		return bt.Open(name)
	}
	e := bt.byAddress(client)
	if e == nil || !raspberryPi(e.board) {
		return nil, 0, netboot.ErrNotFound
	}
	return bt.Open(SerialKey(e.board).File(name))
}

// byAddress is the board whose fixed address is ip, or nil.
func (bt *Booter) byAddress(ip net.IP) *bootBoard {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, e := range bt.byMAC {
		if a := addrIP(e.board.Address); a != nil && a.Equal(ip) {
			return e
		}
	}
	return nil
}
