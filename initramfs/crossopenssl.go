package initramfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/internal/cachelock"
	"github.com/bootbench/bootbench/internal/debpkg"
)

// crossTarget is how openssl is built for a target Debian 12 has no
// openssl package for: Debian's own source and cross toolchain, a static
// program (the image then needs no libc of a port Debian dropped).
type crossTarget struct {
	Name      string   // the port, for messages: "mips"
	Triplet   string   // the cross toolchain's prefix, without the dash
	Configure string   // openssl's Configure target
	Flags     []string // what Debian's own target for the port adds (20-debian.conf in debian/patches)
	// Toolchain are the host packages with the cross compiler and the
	// target's C library; their versions are inputs of the build.
	Toolchain []string
}

// crossTargets are the GOARCHes whose openssl is cross-built. Big-endian
// MIPS: Debian dropped the port after Debian 10, but Debian 12 still ships
// a compiler and C library for it. Its o32 hard-float ABI is that of
// Debian's mipsel openssl too: on an FPU-less core (the routers') the
// kernel's FPU emulator serves the few float instructions openssl speed
// runs to print its figures.
var crossTargets = map[string]crossTarget{
	"mips": {
		Name: "mips", Triplet: "mips-linux-gnu", Configure: "linux-mips32",
		Flags:     []string{"-DB_ENDIAN"},
		Toolchain: []string{"gcc-mips-linux-gnu", "binutils-mips-linux-gnu", "libc6-dev-mips-cross"},
	},
}

// CrossOpenSSL says whether bench openssl for spec's target is cross-built
// from Debian's source, and with which toolchain ("mips-linux-gnu").
func CrossOpenSSL(spec Spec) (triplet string, ok bool) {
	t, ok := crossTargets[spec.Arch]
	return t.Triplet, ok
}

// configureArgs are openssl's Configure arguments: the target, the same
// directories as Debian's package (so the built-in paths match), one static
// program with the legacy provider built in (no-module: a static program
// loads no modules, and DES lives in that provider), no tests, and the
// optimisation of Debian's builds, so figures compare with Debian's
// openssl on the other architectures.
func (t crossTarget) configureArgs() []string {
	args := []string{t.Configure, "--cross-compile-prefix=" + t.Triplet + "-",
		"--prefix=/usr", "--openssldir=/usr/lib/ssl", "--libdir=lib",
		"no-shared", "no-module", "no-tests", "-static", "-O2"}
	return append(args, t.Flags...)
}

// makeTargets builds the libraries and the openssl program only: no
// tests, manual pages or engines.
var makeTargets = []string{"build_programs"}

// crossRecipe is everything that decides the built program's bytes.
type crossRecipe struct {
	Source    string // openssl=<Debian version>
	Compiler  string // the compiler's --version line
	Toolchain string // the toolchain packages' versions, as dpkg knows them
	Configure []string
	Make      []string
}

// digest names the build in the cache: a change of any input (a Debian
// security update of the source or the toolchain, a flag) builds anew.
func (r crossRecipe) digest() string {
	h := sha256.New()
	fmt.Fprintf(h, "bootbench-cross-openssl v1\n%s\n%s\n%s\n%q\n%q\n", r.Source, r.Compiler, r.Toolchain, r.Configure, r.Make)
	return hex.EncodeToString(h.Sum(nil))
}

// crossTools checks that the programs the build runs are on PATH, naming
// the packages that bring them (scripts/deps.sh installs them).
func (t crossTarget) crossTools() error {
	need := map[string]string{t.Triplet + "-gcc": strings.Join(t.Toolchain, " "), t.Triplet + "-strip": "binutils-" + t.Triplet, "perl": "perl", "make": "make"}
	for _, tool := range []string{t.Triplet + "-gcc", t.Triplet + "-strip", "perl", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("bench openssl for %s is built from Debian's source with %s, which is not installed (apt-get install %s, or make deps)", t.Name, tool, need[tool])
		}
	}
	return nil
}

// recipe reads the toolchain's versions for the build of src.
func (t crossTarget) recipe(ctx context.Context, src *debpkg.SourceTree) (crossRecipe, error) {
	out, err := exec.CommandContext(ctx, t.Triplet+"-gcc", "--version").Output()
	if err != nil {
		return crossRecipe{}, fmt.Errorf("%s-gcc --version: %w", t.Triplet, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	// Without dpkg (a toolchain of another origin) the compiler's own
	// version line is the compiler input.
	pkgs, _ := exec.CommandContext(ctx, "dpkg-query", append([]string{"-W", "-f", "${Package}=${Version}\n"}, t.Toolchain...)...).Output()
	return crossRecipe{
		Source: src.Name + "=" + src.Version, Compiler: first, Toolchain: strings.TrimSpace(string(pkgs)),
		Configure: t.configureArgs(), Make: makeTargets,
	}, nil
}

// crossOpenSSL returns the static openssl for spec's target, built from
// Debian 12's openssl source with Debian's cross compiler into the cache
// beside the images (root/openssl/<port>-<version>-<digest>/openssl); a
// second call with the same inputs is a lookup.
func crossOpenSSL(ctx context.Context, spec Spec, cacheDir string, say func(string)) (string, error) {
	t := crossTargets[spec.Arch]
	if err := t.crossTools(); err != nil {
		return "", specError{err}
	}
	root := filepath.Dir(cacheDir)
	src, err := debpkg.Source(ctx, root, "openssl")
	if err != nil {
		return "", fmt.Errorf("fetch Debian's openssl source for %s: %w", t.Name, err)
	}
	for _, s := range src.Skipped {
		say("Debian's openssl source " + s + ": taking " + src.Version)
	}
	r, err := t.recipe(ctx, src)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(root, "openssl", t.Name+"-"+src.Version+"-"+r.digest()[:16], "openssl")
	// Under a lock: another bootbench building the same openssl would
	// take the cores this build needs, and one that waited finds it built.
	waiting := func() { say("waiting for another bootbench building openssl for " + t.Name) }
	err = cachelock.Once(ctx, filepath.Dir(dest)+".lock", cachelock.Exists(dest), waiting, func() error {
		say(fmt.Sprintf("building openssl %s for %s from Debian's source (a few minutes, once)", upstreamVersion(src.Version), t.Name))
		start := time.Now()
		if err := t.build(ctx, src, r, dest); err != nil {
			return err
		}
		st, err := os.Stat(dest)
		if err != nil {
			return err
		}
		say(fmt.Sprintf("built openssl %s for %s in %s: static, stripped, %.1f MiB", upstreamVersion(src.Version), t.Name, time.Since(start).Round(time.Second), float64(st.Size())/(1<<20)))
		return nil
	})
	if err != nil {
		return "", err
	}
	return dest, nil
}

// upstreamVersion is a Debian version without its epoch and revision:
// 3.0.20 of 3.0.20-1~deb12u2.
func upstreamVersion(v string) string {
	if _, rest, ok := strings.Cut(v, ":"); ok {
		v = rest
	}
	if i := strings.LastIndex(v, "-"); i >= 0 {
		v = v[:i]
	}
	return v
}

// crossBuildError is a build that ran and failed: no bad input.
type crossBuildError struct{ error }

func (e crossBuildError) Unwrap() error { return e.error }

// build copies src's tree to a build directory beside dest, configures,
// compiles and strips openssl there, and moves the program to dest. The
// build log stays beside dest when a step fails.
func (t crossTarget) build(ctx context.Context, src *debpkg.SourceTree, r crossRecipe, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Dir(dest)), ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "openssl-"+upstreamVersion(src.Version))
	if out, err := exec.CommandContext(ctx, "cp", "-a", src.Dir, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("copy Debian's openssl source: %w: %s", err, out)
	}
	epoch, err := changelogEpoch(filepath.Join(dir, "debian", "changelog"))
	if err != nil {
		return err
	}
	logPath := dest + ".log"
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	env := buildEnv(tmp, epoch)
	for _, step := range t.steps(r) {
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, log, log
		if err := cmd.Run(); err != nil {
			return crossBuildError{fmt.Errorf("build openssl for %s: %s: %w (log: %s)", t.Name, strings.Join(step, " "), err, logPath)}
		}
	}
	if err := checkNoBuildPath(filepath.Join(dir, "openssl.stripped"), tmp); err != nil {
		return crossBuildError{err}
	}
	if err := os.Rename(filepath.Join(dir, "openssl.stripped"), dest); err != nil {
		return err
	}
	log.Close()
	os.Remove(logPath)
	return nil
}

// steps are the build's commands, run in the source tree.
func (t crossTarget) steps(r crossRecipe) [][]string {
	jobs := "-j" + strconv.Itoa(min(runtime.NumCPU(), 2))
	return [][]string{
		append([]string{"perl", "./Configure"}, r.Configure...),
		append([]string{"make", jobs}, r.Make...),
		{t.Triplet + "-strip", "--strip-all", "-o", "openssl.stripped", "apps/openssl"},
	}
}

// buildEnv is the build's whole environment: the caller's CC, CFLAGS,
// CROSS_COMPILE and the like would change the bytes without changing the
// digest, so only PATH passes. SOURCE_DATE_EPOCH fixes the "built on" date
// openssl version -a prints; the locale and zone fix the tools' output.
func buildEnv(home string, epoch int64) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LC_ALL=C", "TZ=UTC", "SOURCE_DATE_EPOCH=" + strconv.FormatInt(epoch, 10)}
}

// checkNoBuildPath refuses a program that holds the build directory's
// path: openssl compiles with paths relative to its tree, so none should
// be there, and one would make two builds in two places differ. (A
// -ffile-prefix-map flag is no help here: openssl version -a prints the
// compiler flags, so the flag itself would put the path in the program.)
func checkNoBuildPath(bin, buildDir string) error {
	b, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	if bytes.Contains(b, []byte(buildDir)) {
		return fmt.Errorf("the openssl built holds its build directory's path %s: it would differ from a build elsewhere", buildDir)
	}
	return nil
}

// changelogEpoch is the time of the newest debian/changelog entry, in
// seconds since 1970: SOURCE_DATE_EPOCH as dpkg-buildpackage sets it.
func changelogEpoch(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, " -- ") {
			continue
		}
		_, date, ok := strings.Cut(line, ">  ")
		if !ok {
			break
		}
		// RFC 5322 dates: the day of the month may have one digit.
		date = strings.TrimSpace(date)
		t, err := time.Parse(time.RFC1123Z, date)
		if err != nil {
			t, err = time.Parse("Mon, 2 Jan 2006 15:04:05 -0700", date)
		}
		if err != nil {
			return 0, fmt.Errorf("%s: the newest entry's date: %w", path, err)
		}
		return t.Unix(), nil
	}
	return 0, errors.New(path + ": no entry's trailer line ( -- name <address>  date)")
}
