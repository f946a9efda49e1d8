package initramfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

// byteOrders are the architectures whose kernels come as ELF files
// (MIPS), with the byte order an image built for them has.
var byteOrders = map[string]binary.ByteOrder{
	"mips": binary.BigEndian, "mips64": binary.BigEndian,
	"mipsle": binary.LittleEndian, "mips64le": binary.LittleEndian,
}

// CheckKernelArch refuses a kernel ELF that cannot run an image built for
// goarch: another byte order (a big-endian kernel starts a little-endian
// init and the board hangs without a word), or another machine. A kernel
// that is no ELF, or an architecture not listed in byteOrders, is not
// judged here. The error wraps ErrBadSpec.
func CheckKernelArch(kernel []byte, goarch string) error {
	want, ok := byteOrders[goarch]
	if !ok {
		return nil
	}
	f, err := elf.NewFile(bytes.NewReader(kernel))
	if err != nil {
		return nil // a compressed kernel or another format: its loader's business
	}
	if f.Machine != elf.EM_MIPS {
		return specError{fmt.Errorf("the kernel is an ELF for %v, the image is for %s (MIPS)", f.Machine, goarch)}
	}
	if f.ByteOrder != want {
		return specError{fmt.Errorf("the kernel is %s MIPS, the image is for %s, which is %s: a kernel of one byte order cannot start an init of the other", orderName(f.ByteOrder), goarch, orderName(want))}
	}
	return nil
}
