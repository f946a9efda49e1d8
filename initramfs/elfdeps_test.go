package initramfs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fakeELF describes a minimal dynamic ELF file: enough headers, program
// headers and sections for debug/elf to read its interpreter and dynamic
// strings, for any architecture, without a cross toolchain.
type fakeELF struct {
	arch    string // GOARCH: machine, class and byte order
	interp  string
	needed  []string
	soname  string
	rpath   string
	runpath string
}

func (e fakeELF) bytes() []byte {
	tg := elfTargets[e.arch]
	is64 := tg.class == elf.ELFCLASS64
	dynstr := []byte{0}
	str := func(s string) uint64 {
		off := len(dynstr)
		dynstr = append(append(dynstr, s...), 0)
		return uint64(off)
	}
	type dyn struct {
		tag elf.DynTag
		val uint64
	}
	var dyns []dyn
	for _, n := range e.needed {
		dyns = append(dyns, dyn{elf.DT_NEEDED, str(n)})
	}
	for _, d := range []struct {
		tag elf.DynTag
		s   string
	}{{elf.DT_SONAME, e.soname}, {elf.DT_RPATH, e.rpath}, {elf.DT_RUNPATH, e.runpath}} {
		if d.s != "" {
			dyns = append(dyns, dyn{d.tag, str(d.s)})
		}
	}
	dyns = append(dyns, dyn{elf.DT_NULL, 0})
	shstr := []byte("\x00.interp\x00.dynstr\x00.dynamic\x00.shstrtab\x00")
	interp := []byte{}
	if e.interp != "" {
		interp = append([]byte(e.interp), 0)
	}

	ehsize, phsize, shsize, dynsize := 52, 32, 40, 8
	if is64 {
		ehsize, phsize, shsize, dynsize = 64, 56, 64, 16
	}
	nph := 1
	if e.interp != "" {
		nph = 2
	}
	offInterp := ehsize + nph*phsize
	offDynstr := offInterp + len(interp)
	offDyn := (offDynstr + len(dynstr) + 7) &^ 7
	offShstr := offDyn + len(dyns)*dynsize
	offSh := (offShstr + len(shstr) + 7) &^ 7

	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, tg.order, v) }
	pad := func(to int) { b.Write(make([]byte, to-b.Len())) }
	var ident [elf.EI_NIDENT]byte
	copy(ident[:], elf.ELFMAG)
	ident[elf.EI_CLASS] = byte(tg.class)
	ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	if tg.order == binary.BigEndian {
		ident[elf.EI_DATA] = byte(elf.ELFDATA2MSB)
	}
	ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	type prog struct {
		typ      elf.ProgType
		off, len int
	}
	progs := []prog{{elf.PT_DYNAMIC, offDyn, len(dyns) * dynsize}}
	if e.interp != "" {
		progs = append([]prog{{elf.PT_INTERP, offInterp, len(interp)}}, progs...)
	}
	type sect struct {
		name, typ, link uint32
		off, len        int
	}
	sects := []sect{{}, {1, uint32(elf.SHT_PROGBITS), 0, offInterp, len(interp)},
		{9, uint32(elf.SHT_STRTAB), 0, offDynstr, len(dynstr)},
		{17, uint32(elf.SHT_DYNAMIC), 2, offDyn, len(dyns) * dynsize},
		{26, uint32(elf.SHT_STRTAB), 0, offShstr, len(shstr)}}
	if is64 {
		w(elf.Header64{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(tg.machine), Version: 1,
			Phoff: uint64(ehsize), Shoff: uint64(offSh), Ehsize: uint16(ehsize), Phentsize: uint16(phsize),
			Phnum: uint16(nph), Shentsize: uint16(shsize), Shnum: uint16(len(sects)), Shstrndx: 4})
		for _, p := range progs {
			w(elf.Prog64{Type: uint32(p.typ), Off: uint64(p.off), Filesz: uint64(p.len), Memsz: uint64(p.len), Align: 1})
		}
	} else {
		w(elf.Header32{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(tg.machine), Version: 1,
			Phoff: uint32(ehsize), Shoff: uint32(offSh), Ehsize: uint16(ehsize), Phentsize: uint16(phsize),
			Phnum: uint16(nph), Shentsize: uint16(shsize), Shnum: uint16(len(sects)), Shstrndx: 4})
		for _, p := range progs {
			w(elf.Prog32{Type: uint32(p.typ), Off: uint32(p.off), Filesz: uint32(p.len), Memsz: uint32(p.len), Align: 1})
		}
	}
	b.Write(interp)
	b.Write(dynstr)
	pad(offDyn)
	for _, d := range dyns {
		if is64 {
			w(elf.Dyn64{Tag: int64(d.tag), Val: d.val})
		} else {
			w(elf.Dyn32{Tag: int32(d.tag), Val: uint32(d.val)})
		}
	}
	b.Write(shstr)
	pad(offSh)
	for _, s := range sects {
		if is64 {
			w(elf.Section64{Name: s.name, Type: s.typ, Link: s.link, Off: uint64(s.off), Size: uint64(s.len), Addralign: 1})
		} else {
			w(elf.Section32{Name: s.name, Type: s.typ, Link: s.link, Off: uint32(s.off), Size: uint32(s.len), Addralign: 1})
		}
	}
	return b.Bytes()
}

// tree writes files under root: a value that is a fakeELF becomes that
// ELF, a string starting with "->" a symlink, any other string the file's
// text.
func tree(t *testing.T, root string, files map[string]any) {
	t.Helper()
	for name, v := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch v := v.(type) {
		case fakeELF:
			err = os.WriteFile(p, v.bytes(), 0o755)
		case string:
			if target, ok := strings.CutPrefix(v, "->"); ok {
				err = os.Symlink(target, p)
			} else {
				err = os.WriteFile(p, []byte(v), 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolveELF(t *testing.T) {
	const interp = "/lib64/ld-linux-x86-64.so.2"
	ld := fakeELF{arch: "amd64", soname: "ld-linux-x86-64.so.2"}
	libc := fakeELF{arch: "amd64", soname: "libc.so.6", needed: []string{"ld-linux-x86-64.so.2"}}
	tests := []struct {
		name  string
		files map[string]any
		bin   string
		want  []string
		err   string
	}{{
		name: "default dirs, interpreter symlink with an absolute target inside the sysroot",
		files: map[string]any{
			"usr/bin/prog":               fakeELF{arch: "amd64", interp: interp, needed: []string{"libc.so.6"}},
			"lib64/ld-linux-x86-64.so.2": "->/lib/ld-2.31.so",
			"lib/ld-2.31.so":             ld,
			"lib/libc.so.6":              libc,
		},
		bin: "usr/bin/prog",
		// libc's DT_NEEDED on the loader is the loader: no second copy.
		want: []string{interp, "/lib/libc.so.6"},
	}, {
		name: "ld.so.conf include globs, multiarch dirs before the defaults",
		files: map[string]any{
			"etc/ld.so.conf":                          "# comment\ninclude /etc/ld.so.conf.d/*.conf\n",
			"etc/ld.so.conf.d/x86_64-linux-gnu.conf":  "/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n",
			"usr/bin/prog":                            fakeELF{arch: "amd64", interp: interp, needed: []string{"libcrypto.so.3", "libc.so.6"}},
			"lib64/ld-linux-x86-64.so.2":              ld,
			"usr/lib/x86_64-linux-gnu/libcrypto.so.3": fakeELF{arch: "amd64", needed: []string{"libz.so.1", "libc.so.6"}},
			"lib/x86_64-linux-gnu/libc.so.6":          libc,
			"lib/libc.so.6":                           "not this one: the configured dir comes first",
			"usr/lib/libz.so.1":                       fakeELF{arch: "amd64", needed: []string{"libc.so.6"}},
		},
		bin:  "usr/bin/prog",
		want: []string{interp, "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/libz.so.1", "/lib/x86_64-linux-gnu/libc.so.6"},
	}, {
		name: "RUNPATH with $ORIGIN, and a directory symlink",
		files: map[string]any{
			"opt/app/bin/prog":               fakeELF{arch: "amd64", interp: interp, needed: []string{"libapp.so"}, runpath: "$ORIGIN/../lib"},
			"opt/app/lib/libapp.so":          fakeELF{arch: "amd64", needed: []string{"libc.so.6"}},
			"lib64":                          "->usr/lib64",
			"usr/lib64/ld-linux-x86-64.so.2": ld,
			"usr/lib64/libc.so.6":            libc,
		},
		bin:  "opt/app/bin/prog",
		want: []string{interp, "/opt/app/lib/libapp.so", "/lib64/libc.so.6"},
	}, {
		name: "RPATH of the binary serves its libraries' needs too",
		files: map[string]any{
			"usr/bin/prog":               fakeELF{arch: "amd64", interp: interp, needed: []string{"liba.so"}, rpath: "/opt/x"},
			"opt/x/liba.so":              fakeELF{arch: "amd64", needed: []string{"libb.so"}},
			"opt/x/libb.so":              fakeELF{arch: "amd64"},
			"lib64/ld-linux-x86-64.so.2": ld,
		},
		bin:  "usr/bin/prog",
		want: []string{interp, "/opt/x/liba.so", "/opt/x/libb.so"},
	}, {
		name: "musl: its loader is libc, and its path file",
		files: map[string]any{
			"usr/bin/openssl":                  fakeELF{arch: "mipsle", interp: "/lib/ld-musl-mipsel-sf.so.1", needed: []string{"libcrypto.so.3", "libc.so"}},
			"lib/ld-musl-mipsel-sf.so.1":       "->libc.so",
			"lib/libc.so":                      fakeELF{arch: "mipsle"},
			"etc/ld-musl-mipsel-sf.path":       "/usr/local/ssl/lib\n",
			"usr/local/ssl/lib/libcrypto.so.3": fakeELF{arch: "mipsle", needed: []string{"libc.so"}},
		},
		bin:  "usr/bin/openssl",
		want: []string{"/lib/ld-musl-mipsel-sf.so.1", "/usr/local/ssl/lib/libcrypto.so.3"},
	}, {
		name:  "static binary",
		files: map[string]any{"bin/prog": fakeELF{arch: "arm64"}},
		bin:   "bin/prog",
	}, {
		name:  "not ELF",
		files: map[string]any{"bin/run.sh": "#!/bin/sh\n"},
		bin:   "bin/run.sh",
	}, {
		name: "missing library",
		files: map[string]any{
			"usr/bin/openssl":            fakeELF{arch: "amd64", interp: interp, needed: []string{"libcrypto.so.3"}},
			"lib64/ld-linux-x86-64.so.2": ld,
		},
		bin: "usr/bin/openssl",
		err: "libcrypto.so.3 (needed by SYSROOT/usr/bin/openssl) not found in sysroot SYSROOT",
	}, {
		name:  "missing interpreter",
		files: map[string]any{"usr/bin/prog": fakeELF{arch: "amd64", interp: interp}},
		bin:   "usr/bin/prog",
		err:   "interpreter " + interp + " (needed by SYSROOT/usr/bin/prog) not found in sysroot SYSROOT",
	}, {
		name: "a symlink loop",
		files: map[string]any{
			"usr/bin/prog": fakeELF{arch: "amd64", interp: "/lib/ld.so"},
			"lib/ld.so":    "->/lib/ld.so",
		},
		bin: "usr/bin/prog",
		err: "not found in sysroot",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tree(t, root, tt.files)
			got, err := ResolveELF(root, filepath.Join(root, tt.bin))
			if tt.err != "" {
				want := strings.ReplaceAll(tt.err, "SYSROOT", root)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("err = %v, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
			for _, p := range got {
				hp, err := SysrootPath(root, p)
				if err != nil || !strings.HasPrefix(hp, root+string(filepath.Separator)) {
					t.Errorf("SysrootPath(%s) = %s, %v: want a file inside the sysroot", p, hp, err)
				}
			}
		})
	}
}

// TestResolveELFHost resolves the host's openssl against the host's root
// and compares with what the host's own loader lists.
func TestResolveELFHost(t *testing.T) {
	bin, err := exec.LookPath("openssl")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("no openssl on this host")
	}
	got, err := ResolveELF("/", bin)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		t.Skipf("ldd: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "linux-vdso") || strings.HasPrefix(f[0], "linux-gate") {
			continue
		}
		name := filepath.Base(f[0])
		if !slices.ContainsFunc(got, func(p string) bool { return filepath.Base(p) == name }) {
			t.Errorf("ResolveELF lacks %s (ldd: %s); got %q", name, strings.TrimSpace(l), got)
		}
	}
}

func TestElfInfo(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]any{
		"dyn":    fakeELF{arch: "mips", interp: "/lib/ld.so.1", needed: []string{"libc.so.6"}},
		"lib":    fakeELF{arch: "mips", needed: []string{"libc.so.6"}},
		"static": fakeELF{arch: "mips"},
		"script": "#!/bin/sh\n",
	})
	tests := []struct {
		file, arch     string
		isELF, dynamic bool
		err            string
	}{
		{"dyn", "mips", true, true, ""},
		{"lib", "mips", true, true, ""},
		{"static", "mips", true, false, ""},
		{"script", "mips", false, false, ""},
		{"dyn", "mipsle", true, false, "ELF for EM_MIPS (ELFCLASS32, big-endian), not for mipsle"},
		{"static", "amd64", true, false, "not for amd64"},
	}
	for _, tt := range tests {
		isELF, dynamic, err := elfInfo(filepath.Join(root, tt.file), tt.arch)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s for %s: err %v, want %q", tt.file, tt.arch, err, tt.err)
			}
			continue
		}
		if err != nil || isELF != tt.isELF || dynamic != tt.dynamic {
			t.Errorf("%s for %s: %v %v %v, want %v %v", tt.file, tt.arch, isELF, dynamic, err, tt.isELF, tt.dynamic)
		}
	}
}
