package serialctl

import (
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
	{Firmware, regexp.MustCompile(`^U-Boot (SPL |TPL )?(\d{4}\.\d{2}\S*)`), func(m []string) string { return "U-Boot " + m[1] + m[2] }},
	{Firmware, regexp.MustCompile(`^iPXE (\d+\.\d+\S*)`), func(m []string) string { return "iPXE " + m[1] }},
	{Firmware, regexp.MustCompile(`^iPXE initiali[sz]ing devices`), literal("iPXE")},
	{Firmware, regexp.MustCompile(`^RouterBOOT (backup )?booter (\S+)`), func(m []string) string { return "RouterBOOT " + m[1] + m[2] }},
	{Firmware, regexp.MustCompile(`^CFE version (\S+)`), func(m []string) string { return "CFE " + m[1] }},
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
	if loc := kernelStamp.FindStringIndex(s); loc != nil {
		if m, ok := classify(s[loc[1]:]); ok {
			return m, true
		}
	}
	return classify(s)
}

func classify(s string) (Mark, bool) {
	for _, r := range stageRules {
		if m := r.re.FindStringSubmatch(s); m != nil {
			return Mark{Kind: r.kind, Name: strings.TrimSpace(r.name(m))}, true
		}
	}
	return Mark{}, false
}
