package serialctl

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bootbench/bootbench/contract/frame"
)

// MarkKind is what a console line says about how far a boot got.
type MarkKind int

const (
	// Firmware is a firmware or bootloader banner: the board started, or
	// one loader chained to the next. One after the kernel has started
	// means the board reset.
	Firmware MarkKind = iota + 1
	// FirmwareError is a boot ROM's error (PXE-E61, PXE-E53, ...).
	FirmwareError
	// Handoff is a bootloader jumping to the kernel it loaded.
	Handoff
	// KernelStart is the kernel's first line ("Linux version ..."). A
	// kernel booted with "quiet" does not print it.
	KernelStart
	KernelPanic
	KernelOops
	KernelBug
)

var markKindNames = map[MarkKind]string{
	Firmware: "firmware", FirmwareError: "firmware-error", Handoff: "handoff",
	KernelStart: "kernel", KernelPanic: "panic", KernelOops: "oops", KernelBug: "bug",
}

func (k MarkKind) String() string { return markKindNames[k] }

// Failure reports whether a mark means the boot went wrong.
func (k MarkKind) Failure() bool {
	return k == FirmwareError || k == KernelPanic || k == KernelOops || k == KernelBug
}

// A Mark is a console line classified: its kind, and what it names (the
// loader and its version, the kernel release, the panic's reason).
type Mark struct {
	Kind MarkKind
	Name string
}

// stageRule recognises one kind of line. name builds the Mark's name from
// the regexp's submatches.
type stageRule struct {
	kind MarkKind
	re   *regexp.Regexp
	name func(m []string) string
}

func literal(s string) func([]string) string { return func([]string) string { return s } }
func group(i int) func([]string) string      { return func(m []string) string { return m[i] } }

// stageRules are matched against the start of a line, after control
// sequences and the kernel's timestamp are taken off. Every pattern is
// tested against a transcript in testdata/.
var stageRules = []stageRule{
	// U-Boot since 2008 numbers its releases by date (2023.01), before by
	// version: the Atheros vendor U-Boot on TP-Link routers is "U-Boot
	// 1.1.4 (Sep  3 2010 - 12:28:13)".
	{Firmware, regexp.MustCompile(`^U-Boot (SPL |TPL )?(\d{4}\.\d{2}\S*|\d+\.\d+\.\d+\S*)`), func(m []string) string { return "U-Boot " + m[1] + m[2] }},
	{Firmware, regexp.MustCompile(`^iPXE (\d+\.\d+\S*)`), func(m []string) string { return "iPXE " + m[1] }},
	{Firmware, regexp.MustCompile(`^iPXE initiali[sz]ing devices`), literal("iPXE")},
	{Firmware, regexp.MustCompile(`^RouterBOOT (backup )?booter (\S+)`), func(m []string) string { return "RouterBOOT " + m[1] + m[2] }},
	{Firmware, regexp.MustCompile(`^CFE version (\S+)`), func(m []string) string { return "CFE " + m[1] }},
	// The Raspberry Pi 4's EEPROM bootloader (and a CM4's BOOTSYS stage
	// before it), named by its build date: the version is a commit hash.
	{Firmware, regexp.MustCompile(`^RPi: (BOOTLOADER|BOOTSYS) release VERSION:(\S+)(.*)`), piBootloader},
	{Firmware, regexp.MustCompile(`^SeaBIOS \(version ([^)\s]+)`), func(m []string) string { return "SeaBIOS " + m[1] }},
	{Firmware, regexp.MustCompile(`^>>Start (PXE|HTTP Boot) over (IPv[46])`), func(m []string) string { return "UEFI " + m[1] + " " + m[2] }},
	{Firmware, regexp.MustCompile(`^(?:Initializing )?Intel\(R\) Boot Agent (\S+ v[\d.]+)`), func(m []string) string { return "Intel Boot Agent " + m[1] }},
	{FirmwareError, regexp.MustCompile(`^(PXE-E[0-9A-F]{2}: .*)`), group(1)},
	{FirmwareError, regexp.MustCompile(`^setting up elf image\.\.\. (kernel .*)`), func(m []string) string { return "RouterBOOT: " + m[1] }},
	{FirmwareError, regexp.MustCompile(`^kernel loading failed`), literal("RouterBOOT: kernel loading failed")},
	{Handoff, regexp.MustCompile(`^Starting kernel \.\.\.`), literal("U-Boot")},
	{Handoff, regexp.MustCompile(`^jumping to kernel code`), literal("RouterBOOT")},
	{Handoff, regexp.MustCompile(`^Starting program at 0x`), literal("CFE")},
	{KernelStart, regexp.MustCompile(`^Linux version (\S+)`), group(1)},
	{KernelPanic, regexp.MustCompile(`^Kernel panic - not syncing:? ?(.*)`), group(1)},
	// x86 "Oops: 0000 [#1] SMP", 6.x "Oops: Oops: 0000 [#1]", ARM
	// "Internal error: Oops: 5 [#1] ARM", MIPS "Oops[#1]:".
	{KernelOops, regexp.MustCompile(`^(?:Internal error: )?(Oops(?::|\[#\d+\]).*)`), group(1)},
	{KernelBug, regexp.MustCompile(`^(?:kernel )?BUG(?::| at) ?(.*)`), group(1)},
}

// piUptime is the uptime in seconds newer Raspberry Pi 4 bootloaders put
// before each line ("  2.40 NETWORK: d8:3a:dd:05:fd:51 wait for link"),
// right-aligned with two decimals.
var piUptime = regexp.MustCompile(`^\s*\d+\.\d\d `)

// kernelStamp is printk's timestamp and, on kernels that print it, the
// caller ("[    1.550410] ", "[  512.079810][ T8305] ").
var kernelStamp = regexp.MustCompile(`\[\s*\d+\.\d+\](\[\s*[TC]\d+\])?\s*`)

// Classify says whether a console line marks a boot stage, and which.
// Result frames are never marks, whatever they carry. A kernel message
// can start mid-line: the kernel does not wait for the bootloader's line
// to end ("http://198.18.0.1/initramfs.cpio... o[    0.000000] Linux
// version ..." in testdata), so the text after a timestamp is tried first.
func Classify(line []byte) (Mark, bool) {
	s := Printable(line)
	if frame.StartsAnyFrame(s) {
		return Mark{}, false
	}
	for _, t := range readings(s) {
		if m, ok := classify(t); ok {
			return m, true
		}
	}
	return Mark{}, false
}

// readings are the texts of a printable console line that the rules are
// tried on, in order: the text after a kernel timestamp, the text after a
// Raspberry Pi bootloader's uptime, the line itself.
func readings(s string) []string {
	var ts []string
	if loc := kernelStamp.FindStringIndex(s); loc != nil {
		ts = append(ts, s[loc[1]:])
	}
	if loc := piUptime.FindStringIndex(s); loc != nil {
		ts = append(ts, s[loc[1]:])
	}
	return append(ts, s)
}

func classify(s string) (Mark, bool) {
	for _, r := range stageRules {
		if m := r.re.FindStringSubmatch(s); m != nil {
			return Mark{Kind: r.kind, Name: strings.TrimSpace(r.name(m))}, true
		}
	}
	return Mark{}, false
}

// piDate reads the build date a Raspberry Pi bootloader banner carries:
// "DATE: Apr 16 2020", "DATE: 2021/11/22", or (2019) the date alone
// after the version.
var piDate = regexp.MustCompile(`(?:DATE: )?(?:([A-Z][a-z]{2}) +(\d{1,2}) (\d{4})|(\d{4})/(\d{2})/(\d{2}))\b`)

var months = map[string]string{"Jan": "01", "Feb": "02", "Mar": "03", "Apr": "04", "May": "05", "Jun": "06",
	"Jul": "07", "Aug": "08", "Sep": "09", "Oct": "10", "Nov": "11", "Dec": "12"}

// piBootloader names a Raspberry Pi bootloader by its build date
// ("RPi bootloader 2020-04-16"), or by its version where it prints no date.
func piBootloader(m []string) string {
	stage := "bootloader"
	if m[1] == "BOOTSYS" {
		stage = "bootsys"
	}
	d := piDate.FindStringSubmatch(m[3])
	switch {
	case d != nil && d[1] != "" && months[d[1]] != "":
		day := d[2]
		if len(day) == 1 {
			day = "0" + day
		}
		return fmt.Sprintf("RPi %s %s-%s-%s", stage, d[3], months[d[1]], day)
	case d != nil && d[4] != "":
		return fmt.Sprintf("RPi %s %s-%s-%s", stage, d[4], d[5], d[6])
	}
	return "RPi " + stage + " " + m[2]
}
