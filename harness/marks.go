package harness

import (
	"bytes"
	"regexp"
)

// What a console line says about the boot.
type markKind int

const (
	markBanner markKind = iota + 1 // a bootloader or firmware announced itself
	markKernel                     // the kernel started
	markPanic                      // the kernel panicked
	markOops                       // the kernel hit an Oops or BUG and went on
)

type mark struct {
	kind markKind
	name string
}

var banners = []struct {
	name string
	re   *regexp.Regexp
}{
	{"U-Boot", regexp.MustCompile(`^U-Boot (SPL )?\d{4}\.\d{2}`)},
	{"iPXE", regexp.MustCompile(`^iPXE (\d|initialising)`)},
	{"RouterBOOT", regexp.MustCompile(`RouterBOOT (backup )?booter`)},
	{"CFE", regexp.MustCompile(`^CFE version`)},
	{"SeaBIOS", regexp.MustCompile(`SeaBIOS \(version`)}, // after a terminal reset (ESC c)
	{"PXE ROM", regexp.MustCompile(`>>Start PXE over IPv4|^PXE-E[0-9A-F]{2}|Intel\(R\) Boot Agent`)},
}

var (
	kernelRE = regexp.MustCompile(`Linux version \d`)
	panicRE  = regexp.MustCompile(`Kernel panic - not syncing`)
	oopsRE   = regexp.MustCompile(`(Internal error: )?Oops[: ]|BUG: `)
)

// classify reads one console line. Kernel lines carry a "[   1.234] "
// timestamp prefix; bootloader banners start their line.
func classify(line []byte) (mark, bool) {
	text := bytes.TrimSpace(line)
	if i := bytes.IndexByte(text, ']'); len(text) > 0 && text[0] == '[' && i > 0 {
		kernelText := bytes.TrimSpace(text[i+1:])
		switch {
		case kernelRE.Match(kernelText):
			return mark{markKernel, "Linux"}, true
		case panicRE.Match(kernelText):
			return mark{markPanic, "panic"}, true
		case oopsRE.Match(kernelText):
			return mark{markOops, "oops"}, true
		}
	}
	switch {
	case kernelRE.Match(text) && bytes.HasPrefix(text, []byte("Linux version")):
		return mark{markKernel, "Linux"}, true
	case panicRE.Match(text):
		return mark{markPanic, "panic"}, true
	}
	for _, b := range banners {
		if b.re.Match(text) {
			return mark{markBanner, b.name}, true
		}
	}
	return mark{}, false
}
