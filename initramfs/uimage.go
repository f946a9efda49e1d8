package initramfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
)

// U-Boot legacy image format (include/image.h in U-Boot): a 64-byte
// big-endian header followed by the data.
const (
	uimageMagic      = 0x27051956
	uimageHeaderSize = 64
	uimageNameLen    = 32
	uimageOSLinux    = 5 // IH_OS_LINUX
)

// IH_ARCH_* values, keyed by GOARCH.
var uimageArches = map[string]uint8{
	"arm":      2,  // IH_ARCH_ARM
	"386":      3,  // IH_ARCH_I386, mkimage's "x86"
	"mips":     5,  // IH_ARCH_MIPS
	"mipsle":   5,  // the header does not record endianness
	"mips64":   6,  // IH_ARCH_MIPS64
	"mips64le": 6,  //
	"ppc64le":  7,  // IH_ARCH_PPC, mkimage's "powerpc"
	"arm64":    22, // IH_ARCH_ARM64
	"amd64":    24, // IH_ARCH_X86_64
	"riscv64":  26, // IH_ARCH_RISCV
	"s390x":    9,  // IH_ARCH_S390
}

// IH_TYPE_* values.
var uimageTypes = map[string]uint8{
	"kernel":  2, // IH_TYPE_KERNEL
	"ramdisk": 3, // IH_TYPE_RAMDISK
	"script":  6, // IH_TYPE_SCRIPT
}

// IH_COMP_* values. Legacy images have no xz entry.
var uimageComps = map[string]uint8{
	"none":  0,
	"gzip":  1,
	"bzip2": 2,
	"lzma":  3,
	"lzo":   4,
	"lz4":   5,
	"zstd":  6,
}

// UImageOptions describes the header of a legacy U-Boot image.
type UImageOptions struct {
	// Arch is a GOARCH (amd64, 386, arm, arm64, mips, mipsle, mips64,
	// mips64le, riscv64, ppc64le).
	Arch string
	// Type is "ramdisk", "script" or "kernel".
	Type string
	// Compression says how U-Boot must decompress the data before use:
	// "none" (the default), "gzip", "bzip2", "lzma", "lzo", "lz4", "zstd".
	// A compressed initramfs (cpio.gz, cpio.xz) is still "none": U-Boot
	// hands a ramdisk to the kernel as is and the kernel unpacks it.
	Compression string
	// Name is stored in the header, at most 32 bytes.
	Name string
	// Load and Entry are the load address and entry point. For a ramdisk,
	// Load 0 tells U-Boot to use the ramdisk where it already is.
	Load, Entry uint32
	// Time is the creation time in Unix seconds; zero keeps images
	// reproducible.
	Time uint32
}

// UImageHeader is a decoded legacy image header.
type UImageHeader struct {
	HeaderCRC, Time, Size, Load, Entry, DataCRC uint32
	OS, Arch, Type, Compression                 uint8
	Name                                        string
}

// UImage wraps data in a legacy U-Boot image header (what `mkimage -O linux`
// writes). For Type "script", data is the script text and the image holds
// what mkimage -T script writes for a single file: a table of big-endian
// 32-bit lengths (one entry) ended by a zero entry, then the script.
func UImage(data []byte, o UImageOptions) ([]byte, error) {
	arch, ok := uimageArches[o.Arch]
	if !ok {
		return nil, fmt.Errorf("uimage: unknown arch %q (supported: %s)", o.Arch, keys(uimageArches))
	}
	typ, ok := uimageTypes[o.Type]
	if !ok {
		return nil, fmt.Errorf("uimage: unknown image type %q (supported: %s)", o.Type, keys(uimageTypes))
	}
	if o.Compression == "" {
		o.Compression = "none"
	}
	comp, ok := uimageComps[o.Compression]
	if !ok {
		if o.Compression == "xz" {
			return nil, errors.New(`uimage: legacy images have no xz compression; a cpio.xz ramdisk is "none", the kernel decompresses it`)
		}
		return nil, fmt.Errorf("uimage: unknown compression %q (supported: %s)", o.Compression, keys(uimageComps))
	}
	if len(o.Name) > uimageNameLen {
		return nil, fmt.Errorf("uimage: name %q is longer than %d bytes", o.Name, uimageNameLen)
	}
	if o.Type == "script" {
		script := make([]byte, 8, 8+len(data))
		binary.BigEndian.PutUint32(script, uint32(len(data)))
		data = append(script, data...)
	}
	if uint64(len(data)) > 0xffffffff {
		return nil, fmt.Errorf("uimage: %d bytes of data do not fit the header's 32-bit size", len(data))
	}

	out := make([]byte, uimageHeaderSize+len(data))
	h := out[:uimageHeaderSize]
	binary.BigEndian.PutUint32(h[0:], uimageMagic)
	binary.BigEndian.PutUint32(h[8:], o.Time)
	binary.BigEndian.PutUint32(h[12:], uint32(len(data)))
	binary.BigEndian.PutUint32(h[16:], o.Load)
	binary.BigEndian.PutUint32(h[20:], o.Entry)
	binary.BigEndian.PutUint32(h[24:], crc32.ChecksumIEEE(data))
	h[28], h[29], h[30], h[31] = uimageOSLinux, arch, typ, comp
	copy(h[32:], o.Name)
	// The header CRC is computed with its own field zero, as U-Boot checks it.
	binary.BigEndian.PutUint32(h[4:], crc32.ChecksumIEEE(h))
	copy(out[uimageHeaderSize:], data)
	return out, nil
}

// UBootScript returns a U-Boot script image holding script, byte for byte
// what `mkimage -A arm64 -O linux -T script -C none -d script.txt` writes
// with its timestamp at zero. U-Boot's source command checks the type and
// the CRCs, not the architecture, so one image serves every board.
func UBootScript(script string) ([]byte, error) {
	return UImage([]byte(script), UImageOptions{Arch: "arm64", Type: "script", Compression: "none"})
}

// ParseUImage decodes a legacy U-Boot image and checks its magic and both
// CRCs, as U-Boot does before using it. It returns the header and the data
// (for a script image, the data includes the length table).
func ParseUImage(b []byte) (UImageHeader, []byte, error) {
	var h UImageHeader
	if len(b) < uimageHeaderSize {
		return h, nil, fmt.Errorf("uimage: %d bytes, shorter than the %d-byte header", len(b), uimageHeaderSize)
	}
	if m := binary.BigEndian.Uint32(b); m != uimageMagic {
		return h, nil, fmt.Errorf("uimage: bad magic %#08x", m)
	}
	hdr := make([]byte, uimageHeaderSize)
	copy(hdr, b)
	h.HeaderCRC = binary.BigEndian.Uint32(hdr[4:])
	binary.BigEndian.PutUint32(hdr[4:], 0)
	if c := crc32.ChecksumIEEE(hdr); c != h.HeaderCRC {
		return h, nil, fmt.Errorf("uimage: header CRC %#08x, want %#08x", c, h.HeaderCRC)
	}
	h.Time = binary.BigEndian.Uint32(b[8:])
	h.Size = binary.BigEndian.Uint32(b[12:])
	h.Load = binary.BigEndian.Uint32(b[16:])
	h.Entry = binary.BigEndian.Uint32(b[20:])
	h.DataCRC = binary.BigEndian.Uint32(b[24:])
	h.OS, h.Arch, h.Type, h.Compression = b[28], b[29], b[30], b[31]
	h.Name = strings.TrimRight(string(b[32:uimageHeaderSize]), "\x00")
	if i := strings.IndexByte(h.Name, 0); i >= 0 {
		h.Name = h.Name[:i]
	}
	if uint64(len(b)-uimageHeaderSize) < uint64(h.Size) {
		return h, nil, fmt.Errorf("uimage: header says %d bytes of data, file has %d", h.Size, len(b)-uimageHeaderSize)
	}
	data := b[uimageHeaderSize : uimageHeaderSize+int(h.Size)]
	if c := crc32.ChecksumIEEE(data); c != h.DataCRC {
		return h, nil, fmt.Errorf("uimage: data CRC %#08x, want %#08x", c, h.DataCRC)
	}
	return h, data, nil
}

func keys(m map[string]uint8) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
