package kernels

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeModule writes a minimal ELF64 relocatable file, as a kernel module
// is one, whose .modinfo names its dependencies.
func writeModule(t *testing.T, path, depends string) {
	t.Helper()
	modinfo := []byte("license=GPL\x00depends=" + depends + "\x00name=x\x00")
	shstrtab := []byte("\x00.modinfo\x00.shstrtab\x00")
	const ehsize, shentsize = 64, 64
	var b bytes.Buffer
	le := binary.LittleEndian
	dataOff := uint64(ehsize)
	strOff := dataOff + uint64(len(modinfo))
	shOff := (strOff + uint64(len(shstrtab)) + 7) &^ 7
	// ELF header.
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	b.Write(make([]byte, 8))
	for _, v := range []any{uint16(1), uint16(62), uint32(1), uint64(0), uint64(0), shOff, uint32(0),
		uint16(ehsize), uint16(0), uint16(0), uint16(shentsize), uint16(3), uint16(2)} {
		binary.Write(&b, le, v)
	}
	b.Write(modinfo)
	b.Write(shstrtab)
	b.Write(make([]byte, int(shOff)-b.Len()))
	section := func(name, typ uint32, off, size uint64) {
		for _, v := range []any{name, typ, uint64(0), uint64(0), off, size, uint32(0), uint32(0), uint64(1), uint64(0)} {
			binary.Write(&b, le, v)
		}
	}
	section(0, 0, 0, 0)
	section(1, 1, dataOff, uint64(len(modinfo)))  // .modinfo, PROGBITS
	section(10, 3, strOff, uint64(len(shstrtab))) // .shstrtab, STRTAB
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOrder(t *testing.T) {
	dir := t.TempDir()
	mods := map[string]string{
		"net/netfilter/nft_ct.ko":       "nf_tables,nf_conntrack",
		"net/netfilter/nf_tables.ko":    "nfnetlink,libcrc32c",
		"net/netfilter/nf_conntrack.ko": "nf_defrag_ipv4,libcrc32c",
		"net/netfilter/nfnetlink.ko":    "",
		"net/ipv4/nf_defrag_ipv4.ko":    "",
		"lib/libcrc32c.ko":              "",
		"drivers/net/virtio_net.ko":     "net_failover",
		"drivers/net/net_failover.ko":   "failover",
		"net/core/failover.ko":          "",
		"drivers/misc/loop-a.ko":        "loop_b",
		"drivers/misc/loop-b.ko":        "loop_a",
	}
	for p, deps := range mods {
		writeModule(t, filepath.Join(dir, "kernel", p), deps)
	}
	got, err := loadOrder(dir, []string{"virtio_net", "nft_ct", "nf_tables"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, modName(filepath.Base(p)))
	}
	// Every module once, each after what it depends on.
	want := []string{"failover", "net_failover", "virtio_net", "nfnetlink", "libcrc32c", "nf_tables", "nf_defrag_ipv4", "nf_conntrack", "nft_ct"}
	if !slices.Equal(names, want) {
		t.Errorf("load order %v, want %v", names, want)
	}
	if _, err := loadOrder(dir, []string{"nf_nat"}); err == nil || !strings.Contains(err.Error(), "nf_nat is not in") {
		t.Errorf("missing module: %v", err)
	}
	// A module file named with a dash is found by its name with an
	// underscore, and a circle is an error, not a hang.
	if _, err := loadOrder(dir, []string{"loop_a"}); err == nil || !strings.Contains(err.Error(), "circle") {
		t.Errorf("circular dependencies: %v", err)
	}
}
