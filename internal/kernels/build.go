package kernels

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bootbench/bootbench/internal/cachelock"

	"github.com/bootbench/bootbench/internal/debpkg"
)

// Variant is a kernel bootbench builds itself, from Debian's Linux source,
// for a virtual board Debian ships no kernel for, or none that boots as
// fast as a twin should.
type Variant string

const (
	// MaltaBE is QEMU's Malta (qemu-system-mips -M malta -cpu 24Kc) in
	// big-endian mode: the virtual twin of MikroTik's Atheros
	// RouterBOARDs, whose 24Kc cores run big-endian. Debian has no
	// big-endian MIPS port, so no kernel for it.
	MaltaBE Variant = "malta-be"
	// MaltaLE is the same board little-endian (qemu-system-mipsel),
	// built from the same configuration, so the two differ only in byte
	// order.
	MaltaLE Variant = "malta-le"
	// PC is QEMU's x86-64 PC (-M pc), the x86-64 twin's kernel: Debian
	// has one, but its 8 MB XZ image takes seconds to unpack and its
	// boot log seconds to print under TCG; this one is small, LZ4
	// compressed and has what the twin and its benchmarks need built in.
	PC Variant = "x86-64-pc"
)

// Variants are the kernels Built builds.
var Variants = []Variant{MaltaBE, MaltaLE, PC}

// variantSpec is how a Variant is built.
type variantSpec struct {
	what     string   // for messages: "big-endian Malta"
	arch     string   // the kernel's ARCH
	cross    string   // CROSS_COMPILE, the Debian cross compiler's prefix
	compiler string   // the Debian package that has it
	configs  []string // fragments under config/, applied in order
	endian   string   // the lines that pick the byte order
	// target is what make builds, image the file of it that is kept,
	// relative to the build directory; "" for both is vmlinux.
	target, image string
	// headers are include files the build needs, with the Debian
	// package that has each (x86's objtool is built against libelf).
	headers [][2]string
}

var specs = map[Variant]variantSpec{
	MaltaBE: {
		what: "big-endian Malta", arch: "mips", cross: "mips-linux-gnu-", compiler: "gcc-mips-linux-gnu",
		configs: []string{"malta.config", "router.config"},
		endian:  "CONFIG_CPU_BIG_ENDIAN=y\n# CONFIG_CPU_LITTLE_ENDIAN is not set\n",
	},
	MaltaLE: {
		what: "little-endian Malta", arch: "mips", cross: "mipsel-linux-gnu-", compiler: "gcc-mipsel-linux-gnu",
		configs: []string{"malta.config", "router.config"},
		endian:  "CONFIG_CPU_LITTLE_ENDIAN=y\n# CONFIG_CPU_BIG_ENDIAN is not set\n",
	},
	// Debian's native gcc for amd64 is also x86_64-linux-gnu-gcc.
	PC: {
		what: "x86-64 PC", arch: "x86_64", cross: "x86_64-linux-gnu-", compiler: "gcc",
		configs: []string{"twin.config", "pc.config", "router.config"},
		target:  "bzImage", image: "arch/x86/boot/bzImage",
		headers: [][2]string{{"/usr/include/gelf.h", "libelf-dev"}},
	},
}

// makeTarget is what make builds for the variant.
func (spec variantSpec) makeTarget() string {
	if spec.target == "" {
		return "vmlinux"
	}
	return spec.target
}

// imagePath is the built image, relative to the build directory.
func (spec variantSpec) imagePath() string {
	if spec.image == "" {
		return "vmlinux"
	}
	return spec.image
}

//go:embed config/*.config
var configFS embed.FS

// patchFS holds bootbench's patches to the kernel source, applied in name
// order (malta-hpt: a boot option that skips Malta's RTC
// calibration, which costs a minute per boot on a virtual clock).
//
//go:embed patches/*.patch
var patchFS embed.FS

// sourcePackage is Debian 12's kernel source: Debian's patches on the
// 6.1 long-term series its own kernels are built from. It is
// architecture-independent, so any architecture's package lists carry
// it; sourceListsArch's are the ones the Malta board's Debian kernel
// already fetched.
const (
	sourcePackage   = "linux-source-6.1"
	sourceTarball   = "./usr/src/linux-source-6.1.tar.xz"
	sourceListsArch = "mipsel"
)

// Built returns the kernel image of variant v (vmlinux, bzImage, Image), building it the first time: from
// Debian's linux-source package, unpacked into the cache once, with
// bootbench's configuration and Debian's cross compiler. A build is kept
// under a digest of the configuration, the source package's version and
// the compiler's, so a second call is a lookup and a change of any of them
// builds anew. say, when not nil, hears what takes time.
func Built(ctx context.Context, cacheDir string, v Variant, say func(string)) (string, error) {
	spec, ok := specs[v]
	if !ok {
		return "", fmt.Errorf("no kernel variant %q (there are %v)", v, Variants)
	}
	if say == nil {
		say = func(string) {}
	}
	if err := buildTools(spec); err != nil {
		return "", err
	}
	src, err := debpkg.Resolve(ctx, cacheDir, sourceListsArch, sourcePackage)
	if err != nil {
		return "", fmt.Errorf("kernel source: %w", err)
	}
	config, err := spec.config()
	if err != nil {
		return "", err
	}
	gcc, err := compilerVersion(ctx, spec.cross+"gcc")
	if err != nil {
		return "", err
	}
	patches, err := patchSet()
	if err != nil {
		return "", err
	}
	dest := filepath.Join(cacheDir, "kernels", "built", string(v)+"-"+digest(config, src[0].Version, gcc, patches.text))
	image := filepath.Join(dest, filepath.Base(spec.imagePath()))
	// One build at a time per variant and cache: the build takes every
	// core, and the source tree and its patched copy are shared.
	waiting := func() { say("waiting for another bootbench building the " + spec.what + " kernel") }
	err = cachelock.Once(ctx, dest+".lock", cachelock.Exists(image), waiting, func() error {
		tree, err := sourceTree(ctx, cacheDir, src[0], say)
		if err != nil {
			return err
		}
		if tree, err = patchedTree(ctx, tree, patches); err != nil {
			return err
		}
		say(fmt.Sprintf("building the %s kernel from %s %s (some minutes, once)", spec.what, sourcePackage, src[0].Version))
		start := time.Now()
		if err := build(ctx, spec, tree, dest, config); err != nil {
			return fmt.Errorf("build the %s kernel: %w", spec.what, err)
		}
		say(fmt.Sprintf("built the %s kernel in %s", spec.what, time.Since(start).Round(time.Second)))
		return nil
	})
	if err != nil {
		return "", err
	}
	return image, nil
}

// buildTools reports, all at once, the programs and headers a kernel
// build needs that this host lacks, with the Debian packages that have
// them.
func buildTools(spec variantSpec) error {
	need := [][2]string{
		{spec.cross + "gcc", spec.compiler}, {"gcc", "gcc"}, {"make", "make"},
		{"bc", "bc"}, {"flex", "flex"}, {"bison", "bison"}, {"xz", "xz-utils"}, {"patch", "patch"},
	}
	var missing []string
	for _, n := range need {
		if _, err := exec.LookPath(n[0]); err != nil && !slices.Contains(missing, n[1]) {
			missing = append(missing, n[1])
		}
	}
	for _, h := range spec.headers {
		if _, err := os.Stat(h[0]); err != nil && !slices.Contains(missing, h[1]) {
			missing = append(missing, h[1])
		}
	}
	if len(missing) > 0 {
		return &MissingTools{Kernel: spec.what, Packages: missing}
	}
	return nil
}

// MissingTools is a kernel that is not built yet on a host that lacks
// what building it takes: Debian packages, named so that one apt-get
// line installs them.
type MissingTools struct {
	Kernel   string   // "big-endian Malta"
	Packages []string // Debian packages, in the order they were missed
}

func (e *MissingTools) Error() string {
	pkgs := strings.Join(e.Packages, " ")
	return fmt.Sprintf("bootbench's %s kernel is not built on this host yet, and building it (once, some minutes) needs Debian packages %s: apt-get install -y %s", e.Kernel, pkgs, pkgs)
}

// config is the variant's configuration fragment: its files in order,
// then the byte order.
func (spec variantSpec) config() (string, error) {
	var b strings.Builder
	for _, name := range spec.configs {
		f, err := configFS.ReadFile("config/" + name)
		if err != nil {
			return "", err
		}
		b.Write(f)
		b.WriteString("\n")
	}
	b.WriteString(spec.endian)
	return b.String(), nil
}

// compilerVersion is the first line of gcc --version, which names the
// Debian package version ("mips-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0").
func compilerVersion(ctx context.Context, gcc string) (string, error) {
	out, err := exec.CommandContext(ctx, gcc, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", gcc, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line, nil
}

func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// sourceTree returns the kernel source of Debian package src, unpacked
// under cacheDir/kernels/src once: the .deb holds the tree as a tarball,
// which is unpacked and dropped.
func sourceTree(ctx context.Context, cacheDir string, src debpkg.Package, say func(string)) (string, error) {
	tree := filepath.Join(cacheDir, "kernels", "src", src.Name+"_"+src.Version)
	// Under a lock: both variants unpack the same source, a gigabyte.
	err := cachelock.Once(ctx, tree+".lock", cachelock.Exists(filepath.Join(tree, "Makefile")), nil, func() error { return unpackTree(ctx, cacheDir, src, tree, say) })
	if err != nil {
		return "", err
	}
	return tree, nil
}

// unpackTree unpacks Debian's kernel source package src into tree.
func unpackTree(ctx context.Context, cacheDir string, src debpkg.Package, tree string, say func(string)) error {
	say(fmt.Sprintf("unpacking %s %s into the cache (once)", src.Name, src.Version))
	x, done, err := debpkg.Unpack(ctx, cacheDir, sourceListsArch, src.Name+"="+src.Version, filepath.Dir(tree), []string{sourceTarball})
	if err != nil {
		return fmt.Errorf("kernel source: %w", err)
	}
	defer done()
	tarball := filepath.Join(x, sourceTarball)
	if out, err := exec.CommandContext(ctx, "tar", "-xJf", tarball, "-C", x).CombinedOutput(); err != nil {
		return fmt.Errorf("unpack %s: %w: %s", filepath.Base(tarball), err, out)
	}
	os.Remove(tarball)
	unpacked := filepath.Join(x, strings.TrimSuffix(filepath.Base(tarball), ".tar.xz"))
	// One rename: a tree in the cache is a whole one.
	if err := os.Rename(unpacked, tree); err != nil {
		return fmt.Errorf("kernel source: %w", err)
	}
	return nil
}

// build configures and builds the variant's image from tree into a directory beside
// dest and moves the image and its .config there when it is done, so
// dest holds a whole build or none. The source tree is never written to
// (make O=): one tree serves every variant.
func build(ctx context.Context, spec variantSpec, tree, dest, fragment string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	out, err := os.MkdirTemp(filepath.Dir(dest), ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	mk := maker{ctx: ctx, spec: spec, tree: tree, out: out}
	if err := mk.configure(fragment); err != nil {
		return err
	}
	if err := mk.run("-j"+fmt.Sprint(runtime.NumCPU()), spec.makeTarget()); err != nil {
		return err
	}
	return keep(out, dest, spec.imagePath())
}

// keep moves the image (image, relative to out) and the configuration it
// was built with from the build directory out to dest, as dest/<its base
// name> and dest/config.
func keep(out, dest, image string) error {
	final := filepath.Join(out, "keep")
	if err := os.Mkdir(final, 0o755); err != nil {
		return err
	}
	moves := [][2]string{{image, filepath.Base(image)}, {".config", "config"}}
	for _, m := range moves {
		if err := os.Rename(filepath.Join(out, m[0]), filepath.Join(final, m[1])); err != nil {
			return err
		}
	}
	os.RemoveAll(dest) // an interrupted earlier attempt's
	return os.Rename(final, dest)
}

// maker runs the kernel's make for one variant, out of tree.
type maker struct {
	ctx       context.Context
	spec      variantSpec
	tree, out string
}

// configure makes the kernel's smallest configuration, tinyconfig, applies
// fragment on top (a later line in .config overrides an earlier one) and
// lets olddefconfig settle what follows from it. Then it checks that every
// line of the fragment survived: Kconfig drops an option whose
// dependencies are off without a word.
func (mk maker) configure(fragment string) error {
	if err := mk.run("tinyconfig"); err != nil {
		return err
	}
	dotConfig := filepath.Join(mk.out, ".config")
	f, err := os.OpenFile(dotConfig, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n" + fragment)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := mk.run("olddefconfig"); err != nil {
		return err
	}
	return checkConfig(dotConfig, fragment)
}

// run runs make with the variant's ARCH and CROSS_COMPILE; its output goes
// to build.log in the build directory, whose end an error carries.
func (mk maker) run(targets ...string) error {
	args := append([]string{"-C", mk.tree, "O=" + mk.out, "ARCH=" + mk.spec.arch, "CROSS_COMPILE=" + mk.spec.cross}, targets...)
	cmd := exec.CommandContext(mk.ctx, "make", args...)
	cmd.Env = buildEnv(os.Environ())
	logPath := filepath.Join(mk.out, "build.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make %s: %w:\n%s", strings.Join(targets, " "), err, tail(logPath, 15))
	}
	return nil
}

// buildEnv is env without what would steer the kernel's make from
// outside: an enclosing make's jobserver and flags (make test runs the
// tests under make) and Kbuild's and Kconfig's variables (another
// configuration file, another output directory). The build's identity,
// which uname -v and the boot log show, is bootbench's, not the building
// machine's user and host name.
func buildEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "MAKEFLAGS", k == "MFLAGS", k == "GNUMAKEFLAGS", k == "MAKELEVEL", k == "MAKEOVERRIDES",
			strings.HasPrefix(k, "KBUILD_"), strings.HasPrefix(k, "KCONFIG_"), k == "LC_ALL":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "KBUILD_BUILD_USER=bootbench", "KBUILD_BUILD_HOST=bootbench")
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkConfig reports the lines of fragment that the final .config at path
// does not carry: an option set that came out otherwise, or an option
// turned off that came out on.
func checkConfig(path, fragment string) error {
	have, err := readConfig(path)
	if err != nil {
		return err
	}
	var lost []string
	for _, line := range strings.Split(fragment, "\n") {
		sym, val, ok := configLine(line)
		got := have[sym]
		if got == "" {
			got = "n" // not even listed: its menu is off
		}
		if ok && got != val {
			lost = append(lost, fmt.Sprintf("%s=%s (came out %s)", sym, orNotSet(val), orNotSet(got)))
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("the kernel configuration did not take (their dependencies are off?): %s", strings.Join(lost, ", "))
	}
	return nil
}

// readConfig reads a .config into symbol → value, "n" for an option
// that is not set.
func readConfig(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sym, val, ok := configLine(sc.Text()); ok {
			cfg[sym] = val
		}
	}
	return cfg, sc.Err()
}

// configLine reads "CONFIG_X=v" and "# CONFIG_X is not set" (as "n").
func configLine(line string) (sym, val string, ok bool) {
	line = strings.TrimSpace(line)
	if s, found := strings.CutPrefix(line, "# "); found {
		sym, found = strings.CutSuffix(s, " is not set")
		return sym, "n", found && strings.HasPrefix(sym, "CONFIG_")
	}
	sym, val, ok = strings.Cut(line, "=")
	return sym, val, ok && strings.HasPrefix(sym, "CONFIG_")
}

func orNotSet(v string) string {
	if v == "n" {
		return "not set"
	}
	return v
}
