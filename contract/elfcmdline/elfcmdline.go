// Package elfcmdline reads and finds the command line area OpenWrt builds
// into a MIPS kernel ELF (CONFIG_IMAGE_CMDLINE_HACK): the host writes a
// command line there when it wraps kernel and image into one ELF
// (initramfs.WrapELF), and a loader reads it as the kernel would (the
// virtual RouterBOOT board's ROM). Standard library only.
package elfcmdline

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
)

const (
	// Marker comes before a zeroed Size-byte area (arch/mips/kernel/head.S:
	// .ascii "CMDLINE:", then __image_cmdline: .fill 0x400); the platform
	// code appends a non-empty string there to the command line (or
	// replaces it when it starts with '-').
	Marker = "CMDLINE:"
	Size   = 0x400
)

// ErrNoArea says a kernel has no command line area that can be written, or
// none written to read.
var ErrNoArea = errors.New("kernel has no built-in command line we can write: it needs CONFIG_CMDLINE, or a built-in initramfs")

// Find is the file offset of the one area after a Marker in b's loadable
// segments that ok accepts: -1 for none, -2 for several.
func Find(b []byte, progs []*elf.Prog, ok func(area []byte) bool) int {
	found := -1
	for _, p := range progs {
		if p.Type != elf.PT_LOAD || p.Off+p.Filesz > uint64(len(b)) {
			continue
		}
		seg := b[p.Off : p.Off+p.Filesz]
		for i := 0; ; {
			j := bytes.Index(seg[i:], []byte(Marker))
			if j < 0 {
				break
			}
			at := i + j + len(Marker)
			i = at
			if at+Size > len(seg) || !ok(seg[at:at+Size]) {
				continue
			}
			if found >= 0 {
				return -2
			}
			found = int(p.Off) + at
		}
	}
	return found
}

// Read reads the command line written into a kernel ELF's area, as an
// OpenWrt kernel reads its own at boot: the text up to the first NUL of the
// area after the marker. It is "" with no error for an area left empty.
func Read(kernel []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(kernel))
	if err != nil {
		return "", fmt.Errorf("kernel ELF: %w", err)
	}
	// An area holds text then NULs to its end; a message that starts
	// with the marker does not end in a NUL 0x400 bytes on.
	written := func(a []byte) bool { return a[len(a)-1] == 0 && (a[0] == 0 || bytes.IndexByte(a, 0) > 0) }
	at := Find(kernel, f.Progs, written)
	switch at {
	case -1:
		return "", ErrNoArea
	case -2:
		return "", errors.New("kernel has more than one command line area (CMDLINE: marker)")
	}
	area := kernel[at : at+Size]
	return string(area[:bytes.IndexByte(area, 0)]), nil
}
