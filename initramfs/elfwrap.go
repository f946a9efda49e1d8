package initramfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/bootbench/bootbench/contract/elfcmdline"
)

// ErrNoBuiltinCmdline is returned by WrapELF when ELFOptions.EmbedCmdline is
// set but the kernel has no command line area in its image that can be
// written.
var ErrNoBuiltinCmdline = elfcmdline.ErrNoArea

// ELFOptions tunes WrapELF.
type ELFOptions struct {
	// EmbedCmdline, when not empty, is written together with the rd_start
	// and rd_size parameters into the kernel's own command line area, for
	// bootloaders that pass no command line we control.
	EmbedCmdline string
	// AddCmdlineArea gives a kernel that has no command line area one: a
	// segment of its own after the initramfs, holding the marker and the
	// area. The kernel does not read it; this is for a loader that reads
	// it on the kernel's behalf, as an OpenWrt kernel would read its own
	// (the virtual RouterBOOT board's ROM, whose Debian kernel has none).
	AddCmdlineArea bool
}

const (
	// elfInitrdAlign aligns the initramfs segment in memory and in the file.
	// The kernel wants rd_start page aligned, and MIPS pages go up to 64 KiB.
	elfInitrdAlign = 0x10000
	// elfInitrdGap is left between the end of the kernel's segments and the
	// initramfs. A self-decompressing kernel (vmlinuz) unpacks the real
	// kernel below its own load address, but the real kernel's bss may
	// reach past it: keep well clear.
	elfInitrdGap = 1 << 20
	// MIPS KSEG0, the unmapped cached window a 32-bit kernel's low memory is
	// seen through; an initramfs beyond it is not addressable that way.
	kseg0End = 0xa0000000
	// OpenWrt's CONFIG_IMAGE_CMDLINE_HACK area (see contract/elfcmdline).
	imageCmdlineMarker = elfcmdline.Marker
	imageCmdlineSize   = elfcmdline.Size
)

// WrapELF returns one ELF holding kernel (a MIPS kernel ELF, 32- or 64-bit,
// either byte order) and initramfs, for bootloaders that load a single ELF
// and no separate initrd (MikroTik RouterBOOT). The initramfs becomes a new
// PT_LOAD segment at a page-aligned address above the kernel's end; cmdline
// is the "rd_start=0x… rd_size=N" parameters that tell the kernel where it
// is (arch/mips/kernel/setup.c), to be appended to the kernel command line,
// preceded by "nokaslr" (see below).
//
// The program header table moves to the end of the file, since there is
// usually no room after the original one for another entry; the original
// table is left in place, unused.
//
// With o.EmbedCmdline set, o.EmbedCmdline + " " + cmdline is also written
// into the kernel image's command line area (OpenWrt's IMAGE_CMDLINE_HACK
// marker followed by its still-empty area). When the kernel has none — a
// stock kernel, or a compressed vmlinuz whose real kernel is packed inside
// it — the wrapped ELF and cmdline are still returned, with
// ErrNoBuiltinCmdline, for bootloaders that do pass a command line.
func WrapELF(kernel, initramfs []byte, o ELFOptions) (out []byte, cmdline string, err error) {
	f, err := elf.NewFile(bytes.NewReader(kernel))
	if err != nil {
		return nil, "", fmt.Errorf("kernel ELF: %w", err)
	}
	if err := checkKernel(f, initramfs); err != nil {
		return nil, "", err
	}
	t, err := readPHTable(kernel, f)
	if err != nil {
		return nil, "", err
	}
	last, err := highestLoad(kernel, f.Progs)
	if err != nil {
		return nil, "", err
	}
	vaddr, paddr, err := initrdAddress(last, uint64(len(initramfs)), t.is64)
	if err != nil {
		return nil, "", err
	}
	// A 32-bit kernel reads rd_start with memparse into a 32-bit unsigned
	// long, so 0x8xxxxxxx needs no sign extension; a 64-bit kernel gets the
	// full CKSEG0 address (0xffffffff8xxxxxxx), which it takes as is.
	//
	// nokaslr: a kernel with CONFIG_RANDOMIZE_BASE (Debian's malta kernel)
	// copies itself, before it looks at rd_start, to a random offset of up to
	// twice its own size above its link address — over the initramfs, which
	// it does not know to avoid. The ELF does not tell how big the real
	// kernel inside a vmlinuz is, so keep the kernel where it was linked. A
	// kernel without KASLR ignores the parameter.
	cmdline = fmt.Sprintf("nokaslr rd_start=%#x rd_size=%d", vaddr, len(initramfs))

	segs := []segment{{off: alignUp(uint64(len(kernel)), elfInitrdAlign), vaddr: vaddr, paddr: paddr, data: initramfs}}
	if o.EmbedCmdline != "" && o.AddCmdlineArea && findCmdlineArea(kernel, f.Progs) < 0 {
		area := append([]byte(imageCmdlineMarker), make([]byte, imageCmdlineSize)...)
		s := segs[0]
		at := alignUp(s.vaddr+uint64(len(s.data)), elfInitrdAlign)
		segs = append(segs, segment{off: alignUp(s.off+uint64(len(s.data)), elfInitrdAlign), vaddr: at, paddr: s.paddr + (at - s.vaddr), data: area})
	}
	out, err = t.withSegments(kernel, segs)
	if err != nil {
		return nil, "", err
	}
	if o.EmbedCmdline != "" {
		progs := f.Progs
		for _, sg := range segs {
			progs = append(progs, &elf.Prog{ProgHeader: elf.ProgHeader{Type: elf.PT_LOAD, Off: sg.off, Filesz: uint64(len(sg.data))}})
		}
		if err := embedCmdline(out, progs, o.EmbedCmdline+" "+cmdline); err != nil {
			return out, cmdline, err
		}
	}
	return out, cmdline, nil
}

// checkKernel says why kernel and initramfs cannot be wrapped, if they
// cannot.
func checkKernel(f *elf.File, initramfs []byte) error {
	if f.Machine != elf.EM_MIPS {
		// rd_start/rd_size are MIPS kernel parameters; other kernels would
		// ignore them and boot without the initramfs.
		return fmt.Errorf("kernel ELF: machine %v: only MIPS kernels take rd_start/rd_size", f.Machine)
	}
	if f.Type != elf.ET_EXEC {
		return fmt.Errorf("kernel ELF: type %v, want an executable", f.Type)
	}
	if len(initramfs) == 0 {
		return errors.New("empty initramfs")
	}
	return nil
}

// phTable is where a kernel ELF's program header table is and how it is laid
// out.
type phTable struct {
	order   binary.ByteOrder
	is64    bool
	phoffAt int // offset of e_phoff in the ELF header
	phnumAt int // offset of e_phnum (e_phentsize sits just before it)
	entsize int // size of one program header
	off     uint64
	num     int
}

// size is the table's length in the file.
func (t phTable) size() uint64 { return uint64(t.num) * uint64(t.entsize) }

func readPHTable(kernel []byte, f *elf.File) (phTable, error) {
	t := phTable{order: f.ByteOrder, is64: f.Class == elf.ELFCLASS64, phoffAt: 0x1c, phnumAt: 0x2c, entsize: 32}
	if t.is64 {
		t.phoffAt, t.phnumAt, t.entsize = 0x20, 0x38, 56
		t.off = t.order.Uint64(kernel[t.phoffAt:])
	} else {
		t.off = uint64(t.order.Uint32(kernel[t.phoffAt:]))
	}
	t.num = int(t.order.Uint16(kernel[t.phnumAt:]))
	if got := int(t.order.Uint16(kernel[t.phnumAt-2:])); got != t.entsize {
		return t, fmt.Errorf("kernel ELF: program header size %d, want %d", got, t.entsize)
	}
	if t.num >= 0xffff { // PN_XNUM: the real count lives in section 0
		return t, errors.New("kernel ELF: too many program headers")
	}
	if t.off > uint64(len(kernel)) || t.size() > uint64(len(kernel))-t.off {
		return t, errors.New("kernel ELF: program header table outside the file")
	}
	return t, nil
}

// highestLoad is the PT_LOAD segment that ends highest in memory.
func highestLoad(kernel []byte, progs []*elf.Prog) (*elf.Prog, error) {
	var last *elf.Prog
	for _, p := range progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Off > uint64(len(kernel)) || p.Filesz > uint64(len(kernel))-p.Off {
			return nil, errors.New("kernel ELF: segment outside the file")
		}
		if last == nil || p.Vaddr+p.Memsz > last.Vaddr+last.Memsz {
			last = p
		}
	}
	if last == nil {
		return nil, errors.New("kernel ELF: no loadable segment")
	}
	return last, nil
}

// initrdAddress is where an initramfs of size bytes goes, virtual and
// physical: page-aligned, well above the kernel's last segment.
func initrdAddress(last *elf.Prog, size uint64, is64 bool) (vaddr, paddr uint64, err error) {
	vaddr = alignUp(last.Vaddr+last.Memsz+elfInitrdGap, elfInitrdAlign)
	// Keep the kernel's virtual-to-physical offset (KSEG0 0x8xxxxxxx ↔ RAM).
	paddr = last.Paddr + (vaddr - last.Vaddr)
	if !is64 {
		if vaddr+size > 1<<32 {
			return 0, 0, fmt.Errorf("initramfs of %d bytes at %#x does not fit a 32-bit address space", size, vaddr)
		}
		if vaddr < kseg0End && vaddr+size > kseg0End {
			return 0, 0, fmt.Errorf("initramfs of %d bytes at %#x runs past the end of KSEG0 (%#x)", size, vaddr, kseg0End)
		}
		paddr &= 0xffffffff
	}
	return vaddr, paddr, nil
}

// withSegments is kernel with segs added and its program header table, one
// PT_LOAD entry longer for each, moved to the end of the file.
func (t phTable) withSegments(kernel []byte, segs []segment) ([]byte, error) {
	end := segs[len(segs)-1]
	newOff := alignUp(end.off+uint64(len(end.data)), 8)
	total := newOff + t.size() + uint64(len(segs)*t.entsize)
	if !t.is64 && total > 1<<32 {
		return nil, errors.New("wrapped ELF would exceed 4 GiB")
	}
	out := make([]byte, total)
	copy(out, kernel)
	copy(out[newOff:], kernel[t.off:t.off+t.size()])
	for i, sg := range segs {
		copy(out[sg.off:], sg.data)
		t.putLoad(out[newOff+t.size()+uint64(i*t.entsize):], sg)
	}
	if t.is64 {
		t.order.PutUint64(out[t.phoffAt:], newOff)
	} else {
		t.order.PutUint32(out[t.phoffAt:], uint32(newOff))
	}
	t.order.PutUint16(out[t.phnumAt:], uint16(t.num+len(segs)))
	return out, nil
}

// putLoad writes the PT_LOAD program header of sg into ph.
func (t phTable) putLoad(ph []byte, sg segment) {
	size := uint64(len(sg.data))
	if !t.is64 {
		putUint32s(t.order, ph, uint32(elf.PT_LOAD), uint32(sg.off), uint32(sg.vaddr), uint32(sg.paddr),
			uint32(size), uint32(size), uint32(elf.PF_R|elf.PF_W), elfInitrdAlign)
		return
	}
	t.order.PutUint32(ph[0:], uint32(elf.PT_LOAD))
	t.order.PutUint32(ph[4:], uint32(elf.PF_R|elf.PF_W))
	t.order.PutUint64(ph[8:], sg.off)
	t.order.PutUint64(ph[16:], sg.vaddr)
	t.order.PutUint64(ph[24:], sg.paddr)
	t.order.PutUint64(ph[32:], size)
	t.order.PutUint64(ph[40:], size)
	t.order.PutUint64(ph[48:], elfInitrdAlign)
}

// segment is one PT_LOAD segment WrapELF adds.
type segment struct {
	off, vaddr, paddr uint64
	data              []byte
}

// embedCmdline writes s into the OpenWrt image command line area of the
// kernel's loadable segments in out. A stock kernel's CONFIG_CMDLINE is a
// string sized to its value, inside a (usually compressed, always stripped)
// image: there is no way to find and grow it reliably, so only the marked
// area is used.
func embedCmdline(out []byte, progs []*elf.Prog, s string) error {
	if bytes.IndexByte([]byte(s), 0) >= 0 {
		return errors.New("embedded command line contains a NUL byte")
	}
	found := findCmdlineArea(out, progs)
	if found == -2 {
		return errors.New("kernel has more than one command line area (CMDLINE: marker)")
	}
	if found < 0 {
		return ErrNoBuiltinCmdline
	}
	if len(s) >= imageCmdlineSize {
		return fmt.Errorf("embedded command line is %d bytes, the kernel's area holds %d", len(s), imageCmdlineSize-1)
	}
	area := out[found : found+imageCmdlineSize]
	clear(area)
	copy(area, s)
	return nil
}

// findCmdlineArea is the file offset of the one still-empty command line
// area in b's loadable segments: -1 when there is none, -2 when there are
// several.
func findCmdlineArea(b []byte, progs []*elf.Prog) int {
	return elfcmdline.Find(b, progs, cmdlineArea)
}

// HasCmdlineArea reports whether kernel, a kernel ELF, has an empty
// command line area of its own that WrapELF can write the command line to.
func HasCmdlineArea(kernel []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(kernel))
	if err != nil {
		return false
	}
	defer f.Close()
	return findCmdlineArea(kernel, f.Progs) >= 0
}

// EmbeddedCmdline reads the command line written into a kernel ELF's
// command line area (see ELFOptions.EmbedCmdline), as an OpenWrt kernel
// reads its own at boot: the text up to the first NUL of the area after the
// CMDLINE: marker. It is "" with no error for an area left empty.
func EmbeddedCmdline(kernel []byte) (string, error) { return elfcmdline.Read(kernel) }

// cmdlineArea reports whether b is the reserved command line area as the
// kernel build leaves it: all zero. The marker may also start a message
// ("CMDLINE: …"), whose text, unlike the area, does not start with zeros;
// an area something else has already written to is not taken either, as it
// cannot be told from such text.
func cmdlineArea(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func putUint32s(order binary.ByteOrder, b []byte, vs ...uint32) {
	for i, v := range vs {
		order.PutUint32(b[4*i:], v)
	}
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }
