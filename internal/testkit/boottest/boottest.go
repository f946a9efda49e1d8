// Package boottest holds what tests of booting share: a board of any
// boot method on a test bench, and a minimal MIPS kernel ELF.
package boottest

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// Board is a board of boot method m on the bench at 198.18.0.0/24.
func Board(name string, m boards.BootMethod, mac string) boards.Board {
	hw, _ := net.ParseMAC(mac)
	p := boards.Profile{Name: "test-" + string(m), Boot: m, Console: "ttyS0", Baud: 115200}
	if m == boards.BootRouterBOOT {
		p.Virtual = &boards.Virtual{AddCmdlineArea: true}
	}
	return boards.Board{Name: name, Profile: p, MAC: hw, Address: netip.MustParseAddr("198.18.0.10")}
}

// MIPSKernel writes a minimal 32-bit little-endian MIPS kernel ELF: one
// loadable segment, no command line area (as Debian's Malta kernel).
func MIPSKernel(t testing.TB, dir string) string {
	t.Helper()
	return MIPSKernelOrder(t, dir, binary.LittleEndian)
}

// MIPSKernelOrder is MIPSKernel in byte order le: big-endian for the
// kernel of a MikroTik RouterBOARD.
func MIPSKernelOrder(t testing.TB, dir string, le binary.ByteOrder) string {
	t.Helper()
	body := []byte("kernel text")
	var b bytes.Buffer
	data := byte(elf.ELFDATA2LSB)
	if le == binary.BigEndian {
		data = byte(elf.ELFDATA2MSB)
	}
	h := make([]byte, 52)
	copy(h, []byte{0x7f, 'E', 'L', 'F', 1, data, 1})
	le.PutUint16(h[16:], uint16(elf.ET_EXEC))
	le.PutUint16(h[18:], uint16(elf.EM_MIPS))
	le.PutUint32(h[20:], 1)
	le.PutUint32(h[24:], 0x80100000) // entry
	le.PutUint32(h[28:], 52)         // phoff
	le.PutUint16(h[40:], 52)
	le.PutUint16(h[42:], 32)
	le.PutUint16(h[44:], 1)
	b.Write(h)
	ph := make([]byte, 32)
	for i, v := range []uint32{uint32(elf.PT_LOAD), 84, 0x80100000, 0x00100000, uint32(len(body)), uint32(len(body)), uint32(elf.PF_R | elf.PF_X), 0x1000} {
		le.PutUint32(ph[4*i:], v)
	}
	b.Write(ph)
	b.Write(body)
	path := filepath.Join(dir, "vmlinux")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
