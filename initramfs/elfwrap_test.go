package initramfs

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/u-root/mkuimage/cpio"
)

// fakeKernel builds a minimal MIPS kernel ELF: the header, its program
// header table, and one PT_LOAD segment of body at vaddr (with bss extra
// bytes of memory beyond the file), like a vmlinux.
func fakeKernel(t *testing.T, class elf.Class, order binary.ByteOrder, machine elf.Machine, vaddr uint64, body []byte, bss uint64) []byte {
	t.Helper()
	const segOff = 0x1000
	data := elf.ELFDATA2LSB
	if order == binary.BigEndian {
		data = elf.ELFDATA2MSB
	}
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(class), byte(data), byte(elf.EV_CURRENT)}
	var b bytes.Buffer
	var hdr, ph any
	if class == elf.ELFCLASS64 {
		hdr = elf.Header64{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1,
			Entry: vaddr, Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1}
		ph = elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W | elf.PF_X), Off: segOff,
			Vaddr: vaddr, Paddr: vaddr, Filesz: uint64(len(body)), Memsz: uint64(len(body)) + bss, Align: 0x1000}
	} else {
		hdr = elf.Header32{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: 1,
			Entry: uint32(vaddr), Phoff: 52, Ehsize: 52, Phentsize: 32, Phnum: 1}
		ph = elf.Prog32{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_W | elf.PF_X), Off: segOff,
			Vaddr: uint32(vaddr), Paddr: uint32(vaddr), Filesz: uint32(len(body)), Memsz: uint32(uint64(len(body)) + bss), Align: 0x1000}
	}
	if err := binary.Write(&b, order, hdr); err != nil {
		t.Fatal(err)
	}
	if err := binary.Write(&b, order, ph); err != nil {
		t.Fatal(err)
	}
	b.Write(make([]byte, segOff-b.Len()))
	b.Write(body)
	return b.Bytes()
}

func TestWrapELF(t *testing.T) {
	body := bytes.Repeat([]byte("kernel text "), 1000)
	initrd := []byte("070701 pretend this is a cpio archive of odd length")
	tests := []struct {
		class       elf.Class
		order       binary.ByteOrder
		vaddr, bss  uint64
		wantRdStart uint64
	}{
		// end 0x80100000+12000+0x50000 = 0x80152ee0, +1 MiB, rounded to 64 KiB.
		{elf.ELFCLASS32, binary.LittleEndian, 0x80100000, 0x50000, 0x80260000},
		{elf.ELFCLASS32, binary.BigEndian, 0x80100000, 0x50000, 0x80260000},
		{elf.ELFCLASS64, binary.LittleEndian, 0xffffffff80100000, 0x50000, 0xffffffff80260000},
		{elf.ELFCLASS64, binary.BigEndian, 0xffffffff80100000, 0x50000, 0xffffffff80260000},
		// Already aligned end: still 1 MiB clear of it.
		{elf.ELFCLASS32, binary.BigEndian, 0x80000000, 0x100000 - 12000, 0x80200000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v-%v-%#x", tt.class, tt.order, tt.vaddr), func(t *testing.T) {
			kernel := fakeKernel(t, tt.class, tt.order, elf.EM_MIPS, tt.vaddr, body, tt.bss)
			out, cmdline, err := WrapELF(kernel, initrd, ELFOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("nokaslr rd_start=%#x rd_size=%d", tt.wantRdStart, len(initrd)); cmdline != want {
				t.Errorf("cmdline %q, want %q", cmdline, want)
			}
			if !bytes.Equal(out[elfHeaderSize(tt.class):len(kernel)], kernel[elfHeaderSize(tt.class):]) {
				t.Error("the kernel's bytes after the ELF header changed")
			}
			f, err := elf.NewFile(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if f.Class != tt.class || f.ByteOrder != tt.order || f.Machine != elf.EM_MIPS || f.Entry != tt.vaddr {
				t.Errorf("header changed: %+v", f.FileHeader)
			}
			if len(f.Progs) != 2 {
				t.Fatalf("%d program headers, want 2", len(f.Progs))
			}
			k, rd := f.Progs[0], f.Progs[1]
			if k.Vaddr != tt.vaddr || k.Off != 0x1000 || k.Filesz != uint64(len(body)) {
				t.Errorf("kernel segment changed: %+v", k.ProgHeader)
			}
			if rd.Type != elf.PT_LOAD || rd.Vaddr != tt.wantRdStart || rd.Paddr != tt.wantRdStart ||
				rd.Filesz != uint64(len(initrd)) || rd.Memsz != rd.Filesz || rd.Off%rd.Align != rd.Vaddr%rd.Align {
				t.Errorf("initramfs segment %+v", rd.ProgHeader)
			}
			got, err := io.ReadAll(rd.Open())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, initrd) {
				t.Error("initramfs segment does not hold the initramfs")
			}
			if _, err := exec.LookPath("readelf"); err == nil {
				// binutils as a second reader of the headers we wrote.
				p := filepath.Join(t.TempDir(), "k.elf")
				if err := os.WriteFile(p, out, 0o644); err != nil {
					t.Fatal(err)
				}
				msg, err := exec.Command("readelf", "-W", "-l", p).CombinedOutput()
				if err != nil || bytes.Contains(msg, []byte("Warning")) || bytes.Contains(msg, []byte("Error")) {
					t.Errorf("readelf -l: %v\n%s", err, msg)
				}
			}
		})
	}
}

func elfHeaderSize(c elf.Class) int {
	if c == elf.ELFCLASS64 {
		return 64
	}
	return 52
}

func TestWrapELFEmbedCmdline(t *testing.T) {
	area := func(s string) []byte {
		b := make([]byte, imageCmdlineSize)
		copy(b, s)
		return b
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	text := []byte("Kernel CMDLINE: is printed here\x00")
	tests := []struct {
		name    string
		body    []byte
		embed   string
		want    string // written command line, "" for none
		wantErr error
	}{
		{"OpenWrt area", join(text, []byte("CMDLINE:"), area(""), text), "console=ttyS0,115200", "console=ttyS0,115200 nokaslr rd_start=", nil},
		{"area at the end", join(text, []byte("CMDLINE:"), area("")), "quiet", "quiet nokaslr rd_start=", nil},
		{"area already written", join([]byte("CMDLINE:"), area("rootfstype=squashfs"), text), "quiet", "", ErrNoBuiltinCmdline},
		{"only a message", join(text, bytes.Repeat([]byte{0}, 4096)), "quiet", "", ErrNoBuiltinCmdline},
		{"area cut short", join(text, []byte("CMDLINE:"), make([]byte, 100)), "quiet", "", ErrNoBuiltinCmdline},
		{"two areas", join([]byte("CMDLINE:"), area(""), []byte("CMDLINE:"), area("")), "quiet", "", errors.New("more than one")},
		{"too long", join([]byte("CMDLINE:"), area("")), strings.Repeat("x", imageCmdlineSize), "", errors.New("holds")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kernel := fakeKernel(t, elf.ELFCLASS32, binary.BigEndian, elf.EM_MIPS, 0x80060000, tt.body, 0x1000)
			out, cmdline, err := WrapELF(kernel, []byte("initramfs"), ELFOptions{EmbedCmdline: tt.embed})
			switch {
			case tt.wantErr == ErrNoBuiltinCmdline:
				if err != ErrNoBuiltinCmdline || err.Error() != "kernel has no built-in command line we can write: it needs CONFIG_CMDLINE, or a built-in initramfs" {
					t.Fatalf("err = %v, want ErrNoBuiltinCmdline", err)
				}
				// The wrapped ELF is still usable with a bootloader-given command line.
				if out == nil || !strings.HasPrefix(cmdline, "nokaslr rd_start=") {
					t.Errorf("no ELF or cmdline with ErrNoBuiltinCmdline: %d bytes, %q", len(out), cmdline)
				}
				return
			case tt.wantErr != nil:
				if err == nil || !strings.Contains(err.Error(), tt.wantErr.Error()) {
					t.Fatalf("err = %v, want one about %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			i := bytes.Index(out, []byte("CMDLINE:"+tt.embed))
			if i < 0 {
				t.Fatal("command line not written after a CMDLINE: marker")
			}
			i += len("CMDLINE:")
			got := out[i : i+imageCmdlineSize]
			n := bytes.IndexByte(got, 0)
			if want := tt.embed + " " + cmdline; string(got[:n]) != want {
				t.Errorf("area holds %q, want %q", got[:n], want)
			}
			if !strings.HasPrefix(string(got[:n]), tt.want) {
				t.Errorf("area holds %q, want prefix %q", got[:n], tt.want)
			}
			if !bytes.Equal(got[n:], make([]byte, imageCmdlineSize-n)) {
				t.Error("area not zero after the command line")
			}
		})
	}
}

func TestWrapELFRejects(t *testing.T) {
	body := []byte("text")
	tests := []struct {
		name           string
		kernel, initrd []byte
	}{
		{"not ELF", []byte("MZ this is not an ELF file at all, not even close"), []byte("x")},
		{"arm kernel", fakeKernel(t, elf.ELFCLASS32, binary.LittleEndian, elf.EM_ARM, 0xc0008000, body, 0), []byte("x")},
		{"empty initramfs", fakeKernel(t, elf.ELFCLASS32, binary.LittleEndian, elf.EM_MIPS, 0x80100000, body, 0), nil},
		{"past KSEG0", fakeKernel(t, elf.ELFCLASS32, binary.LittleEndian, elf.EM_MIPS, 0x9fd00000, body, 0), make([]byte, 2<<20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := WrapELF(tt.kernel, tt.initrd, ELFOptions{}); err == nil {
				t.Error("WrapELF succeeded")
			}
		})
	}
}

// maltaKernel finds Debian's 4kc-malta kernel where scripts/fetch-kernel.sh
// puts it. It skips the test when there is none (fails under
// BOOTBENCH_E2E=1); the test itself never downloads anything.
func maltaKernel(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("BOOTBENCH_CACHE")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err == nil {
			cache = filepath.Join(dir, "bootbench")
		}
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "kernels", "mipsel", "linux-image-*-4kc-malta", "boot", "vmlinu[xz]-*"))
	if len(matches) == 0 {
		msg := "no Debian 4kc-malta kernel in the cache: run scripts/fetch-kernel.sh mipsel 4kc-malta"
		needs.Unmet(t, msg)
	}
	return matches[len(matches)-1]
}

// TestWrapELFDebianMaltaHasNoCmdlineArea: Debian's kernel is a
// self-decompressing vmlinuz built without CONFIG_CMDLINE; there is nothing
// to write a command line into.
func TestWrapELFDebianMaltaHasNoCmdlineArea(t *testing.T) {
	kernel, err := os.ReadFile(maltaKernel(t))
	if err != nil {
		t.Fatal(err)
	}
	out, cmdline, err := WrapELF(kernel, []byte("initramfs"), ELFOptions{EmbedCmdline: "console=ttyS0"})
	if err != ErrNoBuiltinCmdline || out == nil || cmdline == "" {
		t.Errorf("WrapELF = %d bytes, %q, %v; want the ELF, rd_* and ErrNoBuiltinCmdline", len(out), cmdline, err)
	}
}

// elfinitMarker is what testdata/elfinit prints once it runs as /init.
const elfinitMarker = "BOOTBENCH-ELFINIT-OK"

// TestWrapELFBootsMalta boots Debian's mipsel malta kernel in QEMU from a
// single ELF holding the initramfs, with no -initrd: the kernel must find
// the initramfs through rd_start/rd_size alone, unpack it (also when it is
// xz-compressed) and run /init.
func TestWrapELFBootsMalta(t *testing.T) {
	if testing.Short() && !needs.E2E() {
		t.Skip("boots QEMU; skipped with -short")
	}
	qemu := requireTool(t, "qemu-system-mipsel", "qemu-system-mips")
	kernel, err := os.ReadFile(maltaKernel(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	initBin := filepath.Join(dir, "init")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", initBin, "./testdata/elfinit")
	build.Env = userenv.Environ("GOOS=linux", "GOARCH=mipsle", "GOMIPS=softfloat", "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/elfinit: %v\n%s", err, msg)
	}
	initData, err := os.ReadFile(initBin)
	if err != nil {
		t.Fatal(err)
	}
	archive := newcArchive(t,
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.StaticRecord(initData, cpio.Info{Name: "init", Mode: cpio.S_IFREG | 0o755}),
	)

	for _, format := range []string{"cpio", "cpio.xz"} {
		t.Run(format, func(t *testing.T) {
			initrd, err := Compress(archive, format)
			if err != nil {
				t.Fatal(err)
			}
			wrapped, cmdline, err := WrapELF(kernel, initrd, ELFOptions{})
			if err != nil {
				t.Fatal(err)
			}
			elfPath := filepath.Join(dir, "vmlinux-"+format+".elf")
			if err := os.WriteFile(elfPath, wrapped, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d bytes, %s", format, len(initrd), cmdline)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, qemu, "-accel", "tcg", "-M", "malta", "-m", "256",
				"-nographic", "-no-reboot", "-monitor", "none", "-serial", "stdio", "-net", "none",
				"-kernel", elfPath, "-append", "console=ttyS0 panic=-1 "+cmdline)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			found := ""
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				log.WriteString(line + "\n")
				if l := strings.ToLower(line); strings.Contains(l, "relocat") || strings.Contains(l, "initrd") || strings.Contains(l, "initramfs") || strings.Contains(l, "command line") {
					t.Logf("console: %s", strings.TrimSpace(line))
				}
				if strings.Contains(line, elfinitMarker) {
					found = line
					t.Logf("after %v: %s", time.Since(start).Round(10*time.Millisecond), strings.TrimSpace(line))
					break
				}
			}
			if found != "" {
				// init powers off; give QEMU a moment to exit on its own.
				done := make(chan struct{})
				go func() { io.Copy(io.Discard, stdout); close(done) }()
				select {
				case <-done:
				case <-time.After(20 * time.Second):
					t.Log("QEMU did not power off; stopping it")
					cmd.Process.Kill()
					<-done
				}
			}
			err = cmd.Wait()
			if found == "" {
				t.Fatalf("no %q from /init (qemu: %v, ctx: %v); console:\n%s", elfinitMarker, err, ctx.Err(), log.String())
			}
			if !strings.Contains(found, cmdline) {
				t.Errorf("/init saw a command line without %q: %s", cmdline, found)
			}
			t.Logf("QEMU ran %v in all", time.Since(start).Round(10*time.Millisecond))
		})
	}
}

// TestWrapELFAddedCmdlineArea: a kernel without an area gets one of its
// own segment when asked, and EmbeddedCmdline reads back what was written,
// as the virtual RouterBOOT board's ROM does; a kernel with its own area
// keeps using that one.
func TestWrapELFAddedCmdlineArea(t *testing.T) {
	own := append([]byte("text CMDLINE:"), make([]byte, imageCmdlineSize)...)
	tests := []struct {
		name      string
		body      []byte
		wantProgs int // program headers added
	}{
		{"no area: one added", []byte("a stock kernel's text"), 2},
		{"own area", own, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, class := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
				kernel := fakeKernel(t, class, binary.LittleEndian, elf.EM_MIPS, 0x80100000, tt.body, 0x1000)
				before, _ := elf.NewFile(bytes.NewReader(kernel))
				out, rd, err := WrapELF(kernel, []byte("initramfs"), ELFOptions{EmbedCmdline: "console=ttyS0,115200 bootbench.run=r1", AddCmdlineArea: true})
				if err != nil {
					t.Fatal(err)
				}
				f, err := elf.NewFile(bytes.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(f.Progs) - len(before.Progs); got != tt.wantProgs {
					t.Errorf("%v: %d segments added, want %d", class, got, tt.wantProgs)
				}
				last := f.Progs[len(f.Progs)-1]
				if tt.wantProgs == 2 && last.Vaddr < f.Progs[len(f.Progs)-2].Vaddr+f.Progs[len(f.Progs)-2].Memsz {
					t.Errorf("%v: area segment at %#x overlaps the initramfs", class, last.Vaddr)
				}
				got, err := EmbeddedCmdline(out)
				if want := "console=ttyS0,115200 bootbench.run=r1 " + rd; err != nil || got != want {
					t.Errorf("%v: EmbeddedCmdline = %q, %v; want %q", class, got, err, want)
				}
			}
		})
	}
	if _, err := EmbeddedCmdline(fakeKernel(t, elf.ELFCLASS32, binary.LittleEndian, elf.EM_MIPS, 0x80100000, []byte("no area"), 0)); err != ErrNoBuiltinCmdline {
		t.Errorf("kernel without an area: %v, want ErrNoBuiltinCmdline", err)
	}
}
