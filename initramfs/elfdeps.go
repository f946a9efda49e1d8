package initramfs

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// ResolveELF lists what the dynamic loader needs to run the ELF file at
// path (a host path) when sysroot is the board's root: the interpreter
// (PT_INTERP) and every DT_NEEDED library, recursively. The names are
// absolute paths inside sysroot, exactly as the loader opens them, so the
// image must hold each at that path; read them with SysrootPath, which
// resolves symlinks inside sysroot rather than on the host. A static binary,
// or a file that is not ELF, needs nothing.
//
// Libraries are searched as glibc's loader does, less its cache: the
// needing object's DT_RPATH (when it has no DT_RUNPATH) and the main
// binary's, then its DT_RUNPATH, with $ORIGIN expanded; then the
// directories of sysroot's /etc/ld.so.conf (following include globs) or,
// for a musl interpreter, /etc/ld-musl-ARCH.path; then /lib, /usr/lib,
// /lib64 and /usr/lib64. A library found nowhere is an error naming it, the
// binary that needs it and the sysroot.
func ResolveELF(sysroot, path string) ([]string, error) {
	r := &resolver{sysroot: filepath.Clean(sysroot), have: map[string]bool{}, provided: map[string]bool{}}
	if err := r.walk(path, r.originOf(path), nil); err != nil {
		return nil, err
	}
	return r.files, nil
}

type resolver struct {
	sysroot  string
	files    []string        // in the order found
	have     map[string]bool // files already listed
	provided map[string]bool // DT_NEEDED names already satisfied
	musl     bool            // the interpreter is musl's, which is also its libc
	confDirs []string        // nil until read
}

// originOf is $ORIGIN for a host file: its directory as the board sees it
// when the file lies inside the sysroot, else "" (a binary added from
// elsewhere lands at a path of its own choosing, so $ORIGIN paths in it
// cannot name sysroot directories).
func (r *resolver) originOf(host string) string {
	abs, err := filepath.Abs(host)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(r.sysroot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return path.Dir("/" + filepath.ToSlash(rel))
}

// walk adds the interpreter and libraries that the ELF object at host needs.
// inherited are the DT_RPATH directories of the objects that loaded it,
// which glibc searches too.
func (r *resolver) walk(host, origin string, inherited []string) error {
	file, err := os.Open(host)
	if err != nil {
		return err
	}
	defer file.Close()
	f, err := elf.NewFile(file)
	if err != nil {
		return nil // not ELF: a script or data file needs no loader
	}
	if err := r.addInterp(host, f); err != nil {
		return err
	}
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return fmt.Errorf("read %s's libraries: %w", host, err)
	}
	if len(needed) == 0 {
		return nil
	}
	dirs, inherited := r.searchDirs(f, origin, inherited)
	for _, name := range needed {
		if r.provided[name] || (r.musl && muslReserved.MatchString(name)) {
			continue
		}
		found := r.find(name, dirs)
		if found == "" {
			return fmt.Errorf("%s (needed by %s) not found in sysroot %s", name, host, r.sysroot)
		}
		r.provided[name] = true
		r.add(found)
		hp, _ := SysrootPath(r.sysroot, found)
		if err := r.walk(hp, path.Dir(found), inherited); err != nil {
			return err
		}
	}
	return nil
}

// addInterp adds the interpreter (PT_INTERP) of the ELF object f at host.
func (r *resolver) addInterp(host string, f *elf.File) error {
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(p.Open())
		if err != nil {
			return fmt.Errorf("read %s's interpreter: %w", host, err)
		}
		interp := strings.TrimRight(string(b), "\x00")
		hostInterp, err := SysrootPath(r.sysroot, interp)
		if err != nil {
			return fmt.Errorf("interpreter %s (needed by %s) not found in sysroot %s", interp, host, r.sysroot)
		}
		r.add(interp)
		r.provided[path.Base(interp)] = true
		if strings.HasPrefix(path.Base(interp), "ld-musl-") {
			r.musl = true
			r.readMuslPath(path.Base(interp))
		}
		// The interpreter's soname (libc.so.6 asks for ld-linux-x86-64.so.2)
		// is satisfied by the interpreter already loaded, not by a second copy.
		if fi, err := elf.Open(hostInterp); err == nil {
			if sonames, _ := fi.DynString(elf.DT_SONAME); len(sonames) > 0 {
				r.provided[sonames[0]] = true
			}
			fi.Close()
		}
	}
	return nil
}

// searchDirs are the directories the loader searches for f's libraries, in
// order, and the DT_RPATH directories the libraries inherit.
func (r *resolver) searchDirs(f *elf.File, origin string, inherited []string) (dirs, passOn []string) {
	rpath, _ := f.DynString(elf.DT_RPATH)
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	if len(runpath) == 0 {
		passOn = append(append([]string(nil), expandOrigin(rpath, origin)...), inherited...)
		dirs = append(dirs, passOn...)
	} // else DT_RUNPATH turns the inherited DT_RPATH search off
	dirs = append(dirs, expandOrigin(runpath, origin)...)
	dirs = append(dirs, r.systemDirs()...)
	return dirs, passOn
}

// find is the path on the board of the library name in the first of dirs
// that has it as a regular file in the sysroot; "" when none has.
func (r *resolver) find(name string, dirs []string) string {
	for _, d := range dirs {
		p := path.Join(d, name)
		if strings.Contains(name, "/") {
			p = path.Clean("/" + name) // a path, not a name: no search
		}
		if hp, err := SysrootPath(r.sysroot, p); err == nil {
			if st, err := os.Stat(hp); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// muslReserved are the names musl's loader answers with itself: its libc is
// also libpthread, libm, librt and so on.
var muslReserved = regexp.MustCompile(`^lib(c|pthread|rt|m|dl|util|xnet)\.so(\..*)?$`)

func (r *resolver) add(p string) {
	if !r.have[p] {
		r.have[p] = true
		r.files = append(r.files, p)
	}
}

func expandOrigin(list []string, origin string) []string {
	var out []string
	for _, l := range list {
		for _, d := range strings.Split(l, ":") {
			if strings.Contains(d, "$ORIGIN") || strings.Contains(d, "${ORIGIN}") {
				if origin == "" {
					continue
				}
				d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
			}
			if d != "" && strings.HasPrefix(d, "/") {
				out = append(out, path.Clean(d))
			}
		}
	}
	return out
}

// systemDirs are the sysroot's configured library directories followed by
// the loader's built-in ones.
func (r *resolver) systemDirs() []string {
	if r.confDirs == nil {
		r.confDirs = []string{}
		r.readLdSoConf("/etc/ld.so.conf", 0)
	}
	return append(append([]string(nil), r.confDirs...), "/lib", "/usr/lib", "/lib64", "/usr/lib64")
}

// readLdSoConf reads an ld.so.conf inside the sysroot: one directory a line,
// "include GLOB" for more files, # comments, and hwcap lines that do not
// name directories.
func (r *resolver) readLdSoConf(name string, depth int) {
	if depth > 8 {
		return // an include cycle
	}
	hp, err := SysrootPath(r.sysroot, name)
	if err != nil {
		return
	}
	f, err := os.Open(hp)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		switch {
		case line == "", strings.HasPrefix(line, "hwcap "):
		case strings.HasPrefix(line, "include "):
			pat := strings.TrimSpace(strings.TrimPrefix(line, "include "))
			if !strings.HasPrefix(pat, "/") {
				pat = path.Join(path.Dir(name), pat)
			}
			matches, _ := filepath.Glob(filepath.Join(r.sysroot, filepath.FromSlash(pat)))
			for _, m := range matches { // Glob sorts, as ldconfig does
				rel, _ := filepath.Rel(r.sysroot, m)
				r.readLdSoConf("/"+filepath.ToSlash(rel), depth+1)
			}
		default:
			for _, d := range strings.FieldsFunc(line, func(c rune) bool { return c == ':' || c == ',' || c == ' ' || c == '\t' }) {
				if strings.HasPrefix(d, "/") {
					r.confDirs = append(r.confDirs, path.Clean(d))
				}
			}
		}
	}
}

// readMuslPath reads musl's search path file, /etc/ld-musl-ARCH.path: its
// directories replace musl's defaults.
func (r *resolver) readMuslPath(interp string) {
	arch := strings.TrimSuffix(strings.TrimPrefix(interp, "ld-musl-"), ".so.1")
	hp, err := SysrootPath(r.sysroot, "/etc/ld-musl-"+arch+".path")
	if err != nil {
		return
	}
	b, err := os.ReadFile(hp)
	if err != nil {
		return
	}
	r.confDirs = []string{}
	for _, d := range strings.FieldsFunc(string(b), func(c rune) bool { return c == ':' || c == '\n' }) {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "/") {
			r.confDirs = append(r.confDirs, path.Clean(d))
		}
	}
}

// SysrootPath is the host file behind the absolute path p as seen inside
// sysroot: every symlink on the way is followed with its absolute targets
// taken relative to sysroot, as they would be on the board, so a sysroot
// copied off a device works without chroot. It fails when p does not exist.
func SysrootPath(sysroot, p string) (string, error) {
	sysroot = filepath.Clean(sysroot)
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s: not an absolute path", p)
	}
	done := "/" // resolved so far, inside the sysroot, with no symlinks
	todo := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = path.Dir(done)
			continue
		}
		next := path.Join(done, c)
		host := filepath.Join(sysroot, filepath.FromSlash(next))
		st, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("%s: too many symlinks in sysroot %s", p, sysroot)
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			done = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return filepath.Join(sysroot, filepath.FromSlash(done)), nil
}

// elfTarget is how a binary for a GOARCH looks in its ELF header.
type elfTarget struct {
	machine elf.Machine
	class   elf.Class
	order   binary.ByteOrder
}

var elfTargets = map[string]elfTarget{
	"amd64":    {elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian},
	"386":      {elf.EM_386, elf.ELFCLASS32, binary.LittleEndian},
	"arm64":    {elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian},
	"arm":      {elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian},
	"mips":     {elf.EM_MIPS, elf.ELFCLASS32, binary.BigEndian},
	"mipsle":   {elf.EM_MIPS, elf.ELFCLASS32, binary.LittleEndian},
	"mips64":   {elf.EM_MIPS, elf.ELFCLASS64, binary.BigEndian},
	"mips64le": {elf.EM_MIPS, elf.ELFCLASS64, binary.LittleEndian},
	"riscv64":  {elf.EM_RISCV, elf.ELFCLASS64, binary.LittleEndian},
	"ppc64le":  {elf.EM_PPC64, elf.ELFCLASS64, binary.LittleEndian},
	"s390x":    {elf.EM_S390, elf.ELFCLASS64, binary.BigEndian},
}

// elfInfo says whether the file at host is ELF, whether it is for arch, and
// whether it needs a loader. A file that is not ELF is neither wrong nor
// dynamic: scripts and data go into the image as they are.
func elfInfo(host, arch string) (isELF, dynamic bool, err error) {
	f, err := elf.Open(host)
	if err != nil {
		return false, false, nil
	}
	defer f.Close()
	want := elfTargets[arch]
	if f.Machine != want.machine || f.Class != want.class || f.ByteOrder != want.order {
		return true, false, fmt.Errorf("%s is ELF for %s (%s, %s), not for %s", host, f.Machine, f.Class, orderName(f.ByteOrder), arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true, true, nil
		}
	}
	// A static PIE has a dynamic section but needs nothing; a shared
	// library has no interpreter but needs its libraries.
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return true, false, fmt.Errorf("read %s's libraries: %w", host, err)
	}
	return true, len(needed) > 0, nil
}

func orderName(o binary.ByteOrder) string {
	if o == binary.BigEndian {
		return "big-endian"
	}
	return "little-endian"
}
