// Package initramfs builds the image a board boots: u-root's init, with
// cmd/benchinit as its uinit, as a newc cpio archive. An image may also carry
// an external benchmark (openssl, or any program added with its libraries)
// that benchinit runs as described by /etc/bootbench/bench.json.
//
//	img, err := initramfs.Build(ctx, initramfs.Spec{Arch: "amd64", Source: src}, cacheDir)
//
// Builds need the Go toolchain and the bootbench module source (Spec.Source):
// u-root's init and benchinit are compiled for the target architecture. The
// result is cached by a digest of every input, so a second build of the same
// inputs is a file lookup.
package initramfs

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/contract/bootparam"
)

// Module is the import path of the bootbench module.
const Module = "github.com/bootbench/bootbench"

// Spec is everything that decides the image's bytes, plus where to report
// progress.
type Spec struct {
	Arch   string // GOARCH
	GOARM  string // for arm: "5" (default), "6" or "7"
	GOMIPS string // for mips/mipsle: "softfloat" (default) or "hardfloat"
	Source string // directory of the bootbench module

	// Bench is the benchmark the image carries: "speed" (the default),
	// built into benchinit; "openssl", the host's openssl and its libraries
	// unless BenchCmd is given; or any other name, which needs BenchCmd.
	Bench string
	// BenchCmd is the command benchinit runs for Bench, as words split
	// like a shell would split them but with no shell on the board:
	// quotes group, nothing expands. The first word is an absolute path
	// that Add puts in the image; {seconds} stands for the run's
	// bootbench.seconds.
	BenchCmd string
	// Add lists "HOST:IMG" files to put in the image. Symlinks on the host
	// are followed: IMG holds the bytes. Dynamic ELF files bring their
	// interpreter and libraries from Sysroot.
	Add []string
	// Sysroot is the board's root for dynamic ELF files' interpreter and
	// libraries, which go into the image at their path inside it. Empty
	// means "/" when Arch is the host's, and an error for a dynamic file
	// otherwise: the host's libraries cannot run on another architecture.
	Sysroot string

	// Prebuilt is the directory of a prebuilt image set, used when there is
	// no source tree (Source empty) or no Go toolchain; empty means
	// PrebuiltDir(cacheDir). It is no input: the set's images are.
	Prebuilt string

	// Progress, when set, is told each step of a build. It is no input.
	Progress func(step string)
}

// Image is a built (or cached) initramfs.
type Image struct {
	Path     string // the cpio archive
	Size     int64
	GzipSize int64  // what it would take compressed, for the fit on small boards
	Digest   string // sha256 of the cpio, hex
	Cached   bool
	// Prebuilt names the bootbench build that made the prebuilt base image
	// this one was made from; empty when it was built from the source.
	Prebuilt string
	Took     time.Duration
}

// Arches lists the architectures an image can be built for.
var Arches = []string{"amd64", "386", "arm64", "arm", "mips", "mipsle", "mips64", "mips64le", "riscv64", "ppc64le", "s390x"}

// DefaultGOARM is ARMv5: a GOARM=7 binary dies on the ARMv5 cores of many
// routers and NAS boxes (Kirkwood, Orion), and the benchmarks are integer
// code whose speed GOARM barely changes (it picks the floating point unit
// and the atomics). Pass 6 or 7 to build for those cores on purpose.
const DefaultGOARM = "5"

// DefaultGOMIPS is softfloat: router kernels have no FPU emulation, and a
// hardfloat binary on an FPU-less MIPS core dies on its first float.
const DefaultGOMIPS = "softfloat"

// OpenSSLArgs are the arguments benchinit gives openssl for --bench openssl:
// the run's algorithms (run --algs, as openssl speed names them; by default
// OpenSSLAlgs), for {seconds} each. OpenSSL 3 also gets its legacy provider
// loaded, after "speed" (see openSSLLegacy).
var OpenSSLArgs = []string{"speed", "-seconds", bootparam.SecondsToken, bootparam.AlgsToken}

// OpenSSLAlgs are the algorithms the board comparisons use: the OpenWrt
// wiki table's.
var OpenSSLAlgs = []string{"md5", "sha1", "sha256", "sha512", "des", "des-ede3", "aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "rsa2048", "dsa2048"}

// pinnedEnv holds every per-architecture level Go reads from the
// environment, at Go's defaults: the digest does not cover the caller's
// environment, and a host with GOAMD64=v3 set must not make images that
// fault on an older board.
var pinnedEnv = []string{"GOAMD64=v1", "GO386=sse2", "GOARM64=v8.0", "GOMIPS64=hardfloat", "GOPPC64=power8", "GORISCV64=rva20u64"}

func (s Spec) env() []string {
	env := []string{"GOOS=linux", "GOARCH=" + s.Arch, "CGO_ENABLED=0"}
	env = append(env, pinnedEnv...)
	if s.GOARM != "" {
		env = append(env, "GOARM="+s.GOARM)
	}
	if s.GOMIPS != "" {
		env = append(env, "GOMIPS="+s.GOMIPS)
	}
	return env
}

// normalize fills in the defaults, so that a spec and its spelled-out
// equivalent share a digest, and rejects what cannot be built.
func (s Spec) normalize() (Spec, error) {
	if !slices.Contains(Arches, s.Arch) {
		if s.Arch == "ppc" || s.Arch == "powerpc" || s.Arch == "ppc32" {
			return s, fmt.Errorf("arch %q: Go has no 32-bit PowerPC port, so no Go init can run on such a board", s.Arch)
		}
		return s, fmt.Errorf("unknown arch %q (supported: %s)", s.Arch, strings.Join(Arches, ", "))
	}
	switch {
	case s.Arch == "arm":
		if s.GOARM == "" {
			s.GOARM = DefaultGOARM
		}
		if s.GOARM != "5" && s.GOARM != "6" && s.GOARM != "7" {
			return s, fmt.Errorf("GOARM %q: want 5, 6 or 7", s.GOARM)
		}
	case s.GOARM != "":
		return s, fmt.Errorf("GOARM applies to arm, not %s", s.Arch)
	}
	switch {
	case s.Arch == "mips" || s.Arch == "mipsle":
		if s.GOMIPS == "" {
			s.GOMIPS = DefaultGOMIPS
		}
		if s.GOMIPS != "softfloat" && s.GOMIPS != "hardfloat" {
			return s, fmt.Errorf("GOMIPS %q: want softfloat or hardfloat", s.GOMIPS)
		}
	case s.GOMIPS != "":
		return s, fmt.Errorf("GOMIPS applies to mips and mipsle, not %s", s.Arch)
	}
	if s.Bench == "" {
		s.Bench = benchmark.Speed
	}
	bm, err := benchmark.Lookup(s.Bench)
	if bm.Image.BuiltIn && s.BenchCmd != "" {
		return s, fmt.Errorf("a bench command needs a bench name of its own: %q is built into benchinit", s.Bench)
	}
	if err != nil && s.BenchCmd == "" {
		return s, fmt.Errorf("bench %q is not built in (%s): give its command (--bench-cmd)", s.Bench, strings.Join(benchmark.Names(), ", "))
	}
	return s, nil
}

// addedFile is one file the image holds beyond u-root's init and benchinit.
type addedFile struct {
	img  string // path in the image, relative: "bin/openssl"
	host string // the regular file on the host holding its bytes
	mode os.FileMode
	sum  [sha256.Size]byte
}

// contents is what a spec adds to the base image, gathered before the
// digest because the added files' bytes are inputs.
type contents struct {
	files []addedFile // sorted by img
	bench []byte      // bench.json, nil for the built-in suite
	libs  int         // how many of files are interpreters and libraries
}

// gather resolves Add, the openssl for Bench "openssl" (the host's for the
// host's architecture, Debian's for any other, built from Debian's source
// where Debian has no package), and the libraries of every dynamic ELF
// file among them.
func gather(ctx context.Context, s Spec, cacheDir string) (*contents, error) {
	g := &gatherer{s: s, byImg: map[string]*addedFile{}}
	for _, a := range s.Add {
		host, img, ok := strings.Cut(a, ":")
		img = path.Clean("/" + img)[1:]
		if !ok || host == "" || img == "" {
			return nil, fmt.Errorf("add %q: want HOST:IMG", a)
		}
		if err := g.addELF(host, img); err != nil {
			return nil, err
		}
	}
	argv, err := g.benchArgv(ctx, cacheDir)
	if err != nil {
		return nil, err
	}
	c := &contents{libs: g.libs}
	if argv != nil {
		if c.bench, err = benchJSON(s.Bench, argv); err != nil {
			return nil, err
		}
		if g.byImg[benchSpecImg] != nil {
			return nil, fmt.Errorf("%s is where the image describes its benchmark: add something else there", bootparam.BenchSpecPath)
		}
	}
	for _, f := range g.byImg {
		c.files = append(c.files, *f)
	}
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].img < c.files[j].img })
	return c, nil
}

// gatherer collects the files a spec adds, by their path in the image.
type gatherer struct {
	s     Spec
	byImg map[string]*addedFile
	libs  int // how many of the files are interpreters and libraries
}

// add puts the regular file host at img, once.
func (g *gatherer) add(host, img string, lib bool) error {
	st, err := os.Stat(host)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", host)
	}
	if prev, ok := g.byImg[img]; ok {
		if prev.host == host {
			return nil
		}
		return fmt.Errorf("both %s and %s would be /%s in the image", prev.host, host, img)
	}
	b, err := os.ReadFile(host)
	if err != nil {
		return err
	}
	g.byImg[img] = &addedFile{img: img, host: host, mode: st.Mode().Perm(), sum: sha256.Sum256(b)}
	if lib {
		g.libs++
	}
	return nil
}

// addELF adds host at img and, if it is dynamic, what it loads.
func (g *gatherer) addELF(host, img string) error {
	real, err := filepath.EvalSymlinks(host)
	if err != nil {
		return fmt.Errorf("add %s: %w", host, err)
	}
	if err := g.add(real, img, false); err != nil {
		return fmt.Errorf("add %s: %w", host, err)
	}
	_, dynamic, err := elfInfo(real, g.s.Arch)
	if err != nil || !dynamic {
		return err
	}
	sysroot := g.s.Sysroot
	if sysroot == "" {
		if g.s.Arch != runtime.GOARCH || runtime.GOOS != "linux" {
			return fmt.Errorf("%s is dynamically linked: its %s interpreter and libraries need a sysroot to come from (--sysroot DIR; the host's are %s/%s)", host, g.s.Arch, runtime.GOOS, runtime.GOARCH)
		}
		sysroot = "/"
	}
	libs, err := ResolveELF(sysroot, real)
	if err != nil {
		return err
	}
	for _, l := range libs {
		hp, err := SysrootPath(sysroot, l)
		if err != nil {
			return fmt.Errorf("%s (needed by %s): %w", l, host, err)
		}
		if err := g.add(hp, strings.TrimPrefix(l, "/"), true); err != nil {
			return err
		}
	}
	return nil
}

// benchArgv is the command an external benchmark runs as, adding the
// openssl it runs for Bench "openssl"; nil for the built-in suite.
func (g *gatherer) benchArgv(ctx context.Context, cacheDir string) ([]string, error) {
	s := g.s
	switch {
	case s.BenchCmd != "":
		argv, err := SplitWords(s.BenchCmd)
		if err != nil {
			return nil, fmt.Errorf("bench command: %w", err)
		}
		if len(argv) > 0 && strings.HasPrefix(argv[0], "/") && g.byImg[path.Clean(argv[0])[1:]] == nil {
			return nil, fmt.Errorf("bench command runs %s, which nothing added puts in the image (add HOST:%s)", argv[0], argv[0])
		}
		return argv, nil
	case s.Bench == benchmark.OpenSSL && s.Sysroot != "" && s.Sysroot != "/":
		return nil, fmt.Errorf("bench openssl brings its own openssl and libraries (the host's, or Debian's for another architecture): to use one from %s, add it and give its command (--add %s/usr/bin/openssl:/bin/openssl --bench-cmd \"/bin/openssl speed -seconds {seconds} md5 ...\")", s.Sysroot, s.Sysroot)
	case s.Bench == benchmark.OpenSSL && s.Arch == runtime.GOARCH && runtime.GOOS == "linux":
		return g.hostOpenSSL(ctx)
	case s.Bench == benchmark.OpenSSL && crossTargets[s.Arch].Triplet != "":
		return g.crossOpenSSL(ctx, cacheDir)
	case s.Bench == benchmark.OpenSSL:
		return g.debianOpenSSL(ctx, cacheDir)
	}
	return nil, nil
}

// hostOpenSSL adds the host's openssl and returns its command.
func (g *gatherer) hostOpenSSL(ctx context.Context) ([]string, error) {
	bin, err := exec.LookPath("openssl")
	if err != nil {
		return nil, fmt.Errorf("bench openssl: no openssl on this host: %w", err)
	}
	if err := g.addELF(bin, "bin/openssl"); err != nil {
		return nil, err
	}
	pre, err := openSSLLegacy(ctx, bin, g.addELF)
	if err != nil {
		return nil, err
	}
	// Options go after the "speed" subcommand.
	return append(append([]string{"/bin/openssl", OpenSSLArgs[0]}, pre...), OpenSSLArgs[1:]...), nil
}

// debianOpenSSL adds Debian's openssl for another architecture, with its
// libraries from the same sysroot, and returns its command.
func (g *gatherer) debianOpenSSL(ctx context.Context, cacheDir string) ([]string, error) {
	sysroot, bin, legacy, err := debianOpenSSL(ctx, g.s, cacheDir)
	if err != nil {
		return nil, err
	}
	g.s.Sysroot = sysroot // addELF resolves libraries in it
	if err := g.addELF(bin, "bin/openssl"); err != nil {
		return nil, err
	}
	var pre []string
	if legacy != "" {
		rel, _ := filepath.Rel(sysroot, legacy)
		if err := g.addELF(legacy, filepath.ToSlash(rel)); err != nil {
			return nil, err
		}
		pre = []string{"-provider", "legacy", "-provider", "default"}
	}
	return append(append([]string{"/bin/openssl", OpenSSLArgs[0]}, pre...), OpenSSLArgs[1:]...), nil
}

// crossOpenSSL adds the static openssl built from Debian's source for a
// target Debian has no openssl package for, and returns its command: the
// same as Debian's openssl gets, its legacy provider being built in.
func (g *gatherer) crossOpenSSL(ctx context.Context, cacheDir string) ([]string, error) {
	say := g.s.Progress
	if say == nil {
		say = func(string) {}
	}
	bin, err := crossOpenSSL(ctx, g.s, cacheDir, say)
	if err != nil {
		return nil, err
	}
	if err := g.addELF(bin, "bin/openssl"); err != nil {
		return nil, err
	}
	pre := []string{"-provider", "legacy", "-provider", "default"}
	return append(append([]string{"/bin/openssl", OpenSSLArgs[0]}, pre...), OpenSSLArgs[1:]...), nil
}

// benchJSON is bench.json, the image's description of its benchmark.
func benchJSON(name string, argv []string) ([]byte, error) {
	spec := bootparam.BenchSpec{Name: name, Argv: argv}
	if name == benchmark.OpenSSL {
		spec.DefaultAlgs = OpenSSLAlgs
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var benchSpecImg = strings.TrimPrefix(bootparam.BenchSpecPath, "/")

// openSSLLegacy handles OpenSSL 3, which moved DES (the "des" in
// OpenSSLArgs) into its legacy provider: the provider module goes into the
// image at the path the library looks for it, and openssl is told to load
// it (naming any provider drops the default one, hence both). OpenSSL 1.x
// has DES built in and needs neither; an OpenSSL 3 without the module just
// reports no DES figures, as it does on the host.
func openSSLLegacy(ctx context.Context, bin string, addELF func(host, img string) error) ([]string, error) {
	out, err := exec.CommandContext(ctx, bin, "version", "-m").Output()
	if err != nil {
		return nil, nil // 1.x has no -m
	}
	_, dir, ok := strings.Cut(string(out), "MODULESDIR: \"")
	if !ok {
		return nil, nil
	}
	dir, _, _ = strings.Cut(dir, "\"")
	legacy := filepath.Join(dir, "legacy.so")
	if _, err := os.Stat(legacy); err != nil || !filepath.IsAbs(dir) {
		return nil, nil
	}
	if err := addELF(legacy, strings.TrimPrefix(filepath.ToSlash(legacy), "/")); err != nil {
		return nil, err
	}
	return []string{"-provider", "legacy", "-provider", "default"}, nil
}

// SplitWords splits a command line into words: blanks separate them,
// single quotes keep everything up to the next one, double quotes keep
// everything but backslash escapes of " and \, and a backslash outside
// quotes keeps the next character. Nothing is expanded: the board runs the
// words with no shell.
func SplitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated \" quote")
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	return words, nil
}

// ErrBadSpec is matched (errors.Is) by every error Build returns about its
// inputs — an unknown arch, a missing file, a library not in the sysroot —
// as opposed to a build that failed, so a command line can tell the two
// apart.
var ErrBadSpec = errors.New("bad image spec")

type specError struct{ error }

func (e specError) Is(target error) bool { return target == ErrBadSpec }
func (e specError) Unwrap() error        { return e.error }

// Check says, without building anything, whether spec can be built: its
// arch, its float and ARM levels, its benchmark. Its error is ErrBadSpec.
func (s Spec) Check() error {
	if _, err := s.normalize(); err != nil {
		return specError{err}
	}
	return nil
}

// Build returns the image for spec: the base image of its target (u-root's
// init and benchinit, from the cache, built from Spec.Source, or from a
// prebuilt set) with the benchmark and libraries spec adds. Images are
// cached by their inputs, so a second build of the same inputs is a lookup.
func Build(ctx context.Context, spec Spec, cacheDir string) (*Image, error) {
	start := time.Now()
	spec, err := spec.normalize()
	if err != nil {
		return nil, specError{err}
	}
	say := spec.Progress
	if say == nil {
		say = func(string) {}
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	c, err := gather(ctx, spec, cacheDir)
	if err != nil {
		if errors.Is(err, ErrBadSpec) {
			return nil, err
		}
		var ee *exec.Error
		var be crossBuildError
		if errors.As(err, &ee) || errors.As(err, &be) || strings.Contains(err.Error(), "fetch Debian") {
			return nil, err // a failed download or build is no bad input
		}
		return nil, specError{err}
	}
	if len(c.files) > 0 {
		say(fmt.Sprintf("resolving libraries (%d files: %d added, %d libraries)", len(c.files), len(c.files)-c.libs, c.libs))
	}
	base, err := baseImage(ctx, spec, cacheDir, say)
	if err != nil {
		return nil, err
	}
	if len(c.files) == 0 && c.bench == nil {
		base.Took = time.Since(start)
		return base, nil
	}
	key := imageDigest(base, spec, c)
	out := filepath.Join(cacheDir, fmt.Sprintf("initramfs-%s-%s.cpio", spec.variant(), key[:16]))
	if _, err := os.Stat(out); err != nil {
		say(fmt.Sprintf("adding %d files to the base image", len(c.files)))
		if err := compose(base.Path, c, out); err != nil {
			return nil, err
		}
		base.Cached = false
	}
	img, err := describe(out)
	if err != nil {
		return nil, err
	}
	img.Cached, img.Prebuilt, img.Took = base.Cached, base.Prebuilt, time.Since(start)
	return img, nil
}

// CheckFit refuses an image that cannot boot in ramBytes of RAM. While the
// kernel unpacks the initramfs, the image as loaded (imageBytes: compressed,
// or the plain cpio) and its unpacked copy in the root filesystem
// (unpackedBytes) are both in memory next to the kernel (kernelBytes, its
// size in memory). The loaded image is freed afterwards, but the peak is
// what must fit. On top the board needs room to work (workingMargin).
// A zero size is not counted: the error says what was left out.
func CheckFit(ramBytes, kernelBytes, imageBytes, unpackedBytes int64) error {
	if ramBytes <= 0 {
		return nil
	}
	margin := workingMargin(ramBytes)
	need := kernelBytes + imageBytes + unpackedBytes + margin
	if need <= ramBytes {
		return nil
	}
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	kernel := "kernel " + mib(kernelBytes)
	if kernelBytes == 0 {
		kernel = "kernel not counted"
	}
	room := ramBytes - kernelBytes - margin
	fits := fmt.Sprintf("with this kernel the image and its unpacked copy together must stay within %s", mib(max(room, 0)))
	if room <= 0 {
		fits = "the kernel and margin alone do not fit"
	}
	return fmt.Errorf("image does not fit in %s of RAM: %s + image %s + unpacked %s + working margin %s = %s; %s, or the board needs %s",
		mib(ramBytes), kernel, mib(imageBytes), mib(unpackedBytes), mib(margin), mib(need), fits, mib(minRAM(kernelBytes+imageBytes+unpackedBytes)))
}

// The working margin is what a board needs beyond the kernel and the image
// (loaded and unpacked): 3 MiB, plus a 32nd of RAM for what scales with it
// (the page structures take 0.8 % of a 32-bit board's RAM, 1.6 % of a
// 64-bit one's, and the kernel sizes its hash tables by RAM). The 3 MiB
// hold the Go runtime and the suite's buffers, the kernel's own
// allocations and, on QEMU's Malta, the first MiB below the kernel. It is
// measured, on the WRT54G's twin (qemu-wrt54g: bootbench's Malta kernel,
// 5.4 MiB in memory, the mipsle image, 1.7 MiB gzipped and 5.0 MiB
// unpacked, 12.1 MiB together): at 16 MiB, 3.9 MiB left, it booted and
// stored its result; at 15 MiB, 2.9 MiB left, the kernel deadlocked on
// memory. So the board needs between 2.9 and 3.9 MiB beyond those, and the
// margin there is 3.5 MiB. (It was 8 MiB plus an eighth of RAM, 10 MiB at
// 16 MiB, reasoned and not measured: it refused a board that boots.)
func workingMargin(ramBytes int64) int64 { return 3<<20 + ramBytes/32 }

// minRAM is the least RAM whose margin leaves room for used bytes:
// used + 3 MiB + ram/32 <= ram, rounded up to a whole MiB.
func minRAM(used int64) int64 {
	ram := ((used+3<<20)*32 + 30) / 31
	return (ram + 1<<20 - 1) &^ (1<<20 - 1)
}

func describe(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	if img, ok := describedBefore(path, st); ok {
		return img, nil
	}
	h := sha256.New()
	cw := &countWriter{}
	zw, _ := gzip.NewWriterLevel(cw, gzip.BestCompression)
	n, err := io.Copy(io.MultiWriter(h, zw), f)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	zw.Close()
	img := &Image{Path: path, Size: n, GzipSize: cw.n, Digest: hex.EncodeToString(h.Sum(nil))}
	if n == st.Size() {
		noteDescribed(img, st)
	}
	return img, nil
}

// A cached image never changes once renamed into place, so what describe
// found (the digest, and the gzip size, whose best compression of a 5 MiB
// image takes a second or more) is kept beside it, for the same file:
// a cached run then reads the image once, to serve it.
const describedVersion = "bootbench-describe v1"

func describedPath(path string) string { return path + ".sum" }

// describedBefore is what describe found for path when it was the file
// st says it is now (same size, same modification time).
func describedBefore(path string, st os.FileInfo) (*Image, bool) {
	b, err := os.ReadFile(describedPath(path))
	if err != nil {
		return nil, false
	}
	var size, mtime, gz int64
	var digest string
	if _, err := fmt.Sscanf(string(b), describedVersion+" %d %d %64s %d\n", &size, &mtime, &digest, &gz); err != nil ||
		size != st.Size() || mtime != st.ModTime().UnixNano() || len(digest) != 64 {
		return nil, false
	}
	return &Image{Path: path, Size: size, GzipSize: gz, Digest: digest}, true
}

// noteDescribed keeps img's description beside it; a cache that cannot be
// written is only slower.
func noteDescribed(img *Image, st os.FileInfo) {
	p := describedPath(img.Path)
	tmp := p + ".tmp" + strconv.Itoa(os.Getpid())
	line := fmt.Sprintf("%s %d %d %s %d\n", describedVersion, st.Size(), st.ModTime().UnixNano(), img.Digest, img.GzipSize)
	if os.WriteFile(tmp, []byte(line), 0o644) != nil || os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// FindSource locates the bootbench module: $BOOTBENCH_SRC, else the first
// directory at or above the working directory, or the executable's, whose
// go.mod declares the module.
func FindSource() (string, error) {
	if s := os.Getenv("BOOTBENCH_SRC"); s != "" {
		return s, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			b, err := os.ReadFile(filepath.Join(d, "go.mod"))
			if err == nil && strings.HasPrefix(string(b), "module "+Module+"\n") {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", errors.New("cannot find the bootbench source to build the image from: run from the source tree or set BOOTBENCH_SRC")
}
