// Package debpkg fetches Debian packages of any architecture into
// bootbench's cache and unpacks them there: kernels for the virtual boards,
// the programs and libraries of a foreign-architecture benchmark
// (openssl, libssl3, libc6) as a sysroot, and source packages, patched,
// for what Debian builds for no architecture a board has. It uses the
// host's APT sources with package lists of its own, one set per
// architecture, and apt-get download plus dpkg-deb -x; for sources, a
// deb-src list made from the host's Debian 12 repositories, and apt-get
// source plus dpkg-source -x. Nothing is installed, and the host's sources,
// lists, dpkg database, architectures and locks are left alone.
//
//	root, err := debpkg.Sysroot(ctx, cache, "arm64", "openssl", "libssl3", "libc6")
//	tree, err := debpkg.Source(ctx, cache, "openssl")
package debpkg

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bootbench/bootbench/internal/cachelock"
)

// Package is one binary package as APT resolves it.
type Package struct {
	Name, Version, Arch string
	Depends             string // Depends and Pre-Depends, comma separated
}

// apt runs APT commands for one architecture against the package lists
// under cacheDir. The options are those of scripts/fetch-kernel.sh: the
// architecture as APT's only one, lists of our own, no locking of the
// host's dpkg (we never install), and downloads as root so APT's sandbox
// user needs no access to the cache.
//
// A source package has no architecture: its apt has arch "" and extra
// options naming its own sources list and caches (sourceAPT).
type apt struct {
	arch  string
	lists string
	extra []string
}

func newAPT(cacheDir, arch string) (*apt, error) {
	for _, c := range []string{"apt-get", "apt-cache", "dpkg-deb"} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("fetch Debian %s packages: %s not found (this needs a Debian host with APT)", arch, c)
		}
	}
	// The kernels' lists directory, shared: one apt-get update serves the
	// kernel and the benchmark of an architecture.
	lists := filepath.Join(cacheDir, "kernels", arch, "lists")
	if err := os.MkdirAll(filepath.Join(lists, "partial"), 0o755); err != nil {
		return nil, fmt.Errorf("package lists: %w", err)
	}
	return &apt{arch: arch, lists: lists}, nil
}

func (a *apt) opts() []string {
	var o []string
	if a.arch != "" {
		o = append(o, "-oAPT::Architecture="+a.arch, "-oAPT::Architectures="+a.arch)
	}
	o = append(o, "-oDir::State::Lists="+a.lists, "-oDebug::NoLocking=1", "-oAPT::Sandbox::User=root")
	return append(o, a.extra...)
}

// what names the lists a for messages: an architecture's, or the sources'.
func (a *apt) what() string {
	if a.arch == "" {
		return Release + " source"
	}
	return a.arch
}

// run runs an APT tool holding the lists' lock: APT's own locking is off
// (Debug::NoLocking, it would lock the host's dpkg), and two bootbench
// processes updating one list at once would each write the other's
// partial files.
func (a *apt) run(ctx context.Context, dir, tool string, args ...string) ([]byte, error) {
	unlock, err := cachelock.Lock(ctx, filepath.Join(a.lists, "bootbench.lock"), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	defer unlock()
	cmd := exec.CommandContext(ctx, tool, append(a.opts(), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, strings.TrimSpace(lastLines(errb.String(), 3)))
	}
	return out.Bytes(), nil
}

// update refreshes the architecture's package lists.
func (a *apt) update(ctx context.Context) error {
	_, err := a.run(ctx, "", "apt-get", "-qq", "update")
	if err != nil {
		return fmt.Errorf("update Debian %s package lists: %w", a.what(), err)
	}
	return nil
}

// show resolves names to the versions APT would download now.
func (a *apt) show(ctx context.Context, names ...string) ([]Package, error) {
	out, err := a.run(ctx, "", "apt-cache", append([]string{"show", "--no-all-versions"}, names...)...)
	if err != nil {
		return nil, err
	}
	pkgs := parseControl(out)
	if len(pkgs) != len(names) {
		return nil, fmt.Errorf("apt-cache show %s: %d records for %d names", strings.Join(names, " "), len(pkgs), len(names))
	}
	return pkgs, nil
}

// Resolve returns the packages names stand for now, updating the lists
// once when they do not know a name (a first use, or a name Debian added).
func Resolve(ctx context.Context, cacheDir, arch string, names ...string) ([]Package, error) {
	a, err := newAPT(cacheDir, arch)
	if err != nil {
		return nil, err
	}
	return a.resolve(ctx, names...)
}

func (a *apt) resolve(ctx context.Context, names ...string) ([]Package, error) {
	pkgs, err := a.show(ctx, names...)
	if err == nil {
		return pkgs, nil
	}
	if err := a.update(ctx); err != nil {
		return nil, err
	}
	pkgs, err = a.show(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("Debian has no %s package named %s for this host's sources: %w", a.arch, strings.Join(names, " or "), err)
	}
	return pkgs, nil
}

// closure resolves names and, level by level, what they depend on.
func (a *apt) closure(ctx context.Context, names []string) ([]Package, error) {
	var all []Package
	seen := map[string]bool{}
	for len(names) > 0 {
		var next []string
		pkgs, err := a.resolve(ctx, names...)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			seen[p.Name] = true
			all = append(all, p)
		}
		for _, p := range pkgs {
			for _, d := range dependencyNames(p.Depends) {
				if !seen[d] {
					seen[d] = true
					next = append(next, d)
				}
			}
		}
		names = next
	}
	return all, nil
}

// dependencyNames reads a Depends field: the first of each group of
// alternatives, without version or architecture qualifiers.
func dependencyNames(depends string) []string {
	var names []string
	for _, d := range strings.Split(depends, ",") {
		alt, _, _ := strings.Cut(d, "|")
		name := strings.Fields(alt)
		if len(name) == 0 {
			continue
		}
		n, _, _ := strings.Cut(name[0], ":")
		names = append(names, n)
	}
	return names
}

// download fetches p's .deb into dir and returns its path. Lists older
// than the archive fail with 404; one update and a new resolution fix that.
func (a *apt) download(ctx context.Context, dir string, p Package) (string, error) {
	if _, err := a.run(ctx, dir, "apt-get", "-qq", "download", p.Name+"="+p.Version); err != nil {
		return "", fmt.Errorf("download Debian package %s %s (%s): %w", p.Name, p.Version, a.arch, err)
	}
	debs, _ := filepath.Glob(filepath.Join(dir, p.Name+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("download Debian package %s: found %d .deb files", p.Name, len(debs))
	}
	return debs[0], nil
}

// Sysroot returns a directory holding the named packages of arch and
// everything they depend on, unpacked together as they would lie on a board
// running Debian (libssl3 needs libatomic1 on some architectures, libc6
// needs libgcc-s1). It is cached by the resolved versions: a second call
// with the same lists is a lookup, and a security update makes a new
// sysroot.
func Sysroot(ctx context.Context, cacheDir, arch string, names ...string) (string, error) {
	a, err := newAPT(cacheDir, arch)
	if err != nil {
		return "", err
	}
	pkgs, err := a.closure(ctx, names)
	if err != nil {
		return "", err
	}
	ids := make([]string, len(pkgs))
	for i, p := range pkgs {
		ids[i] = p.Name + "=" + p.Version
	}
	sort.Strings(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	dest := filepath.Join(cacheDir, "sysroots", arch+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dest, ".complete")); err == nil {
		return dest, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("sysroot: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".dl-")
	if err != nil {
		return "", fmt.Errorf("sysroot: %w", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	for _, p := range pkgs {
		deb, err := a.download(ctx, tmp, p)
		if err != nil {
			return "", err
		}
		if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
			return "", fmt.Errorf("unpack %s: %w: %s", filepath.Base(deb), err, out)
		}
	}
	if err := ldSoConf(root); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), []byte(strings.Join(ids, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	os.RemoveAll(dest) // an interrupted earlier attempt
	if err := os.Rename(root, dest); err != nil {
		return "", fmt.Errorf("sysroot: %w", err)
	}
	return dest, nil
}

// ldSoConf writes the /etc/ld.so.conf a Debian system has (from
// libc-bin, which a sysroot of libraries does not need otherwise): it
// includes the multiarch directories libc6 lists in /etc/ld.so.conf.d,
// where libssl3 and friends live, so a library search in the sysroot
// finds what the board's loader finds.
func ldSoConf(root string) error {
	conf := filepath.Join(root, "etc", "ld.so.conf")
	if _, err := os.Stat(conf); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(root, "etc", "ld.so.conf.d")); err != nil {
		return nil // no libc6 here: nothing to include
	}
	return os.WriteFile(conf, []byte("include /etc/ld.so.conf.d/*.conf\n"), 0o644)
}

// Kernel returns the kernel image of Debian's linux-image-<flavour> for
// arch, unpacked into cacheDir/kernels/<arch>/<versioned package>/boot, the
// layout scripts/fetch-kernel.sh writes too. The metapackage is resolved on
// each call, so Debian's ABI bumps are followed.
func Kernel(ctx context.Context, cacheDir, arch, flavour string) (string, error) {
	a, err := newAPT(cacheDir, arch)
	if err != nil {
		return "", err
	}
	meta, err := a.resolve(ctx, "linux-image-"+flavour)
	if err != nil {
		return "", err
	}
	name := versionedKernel(meta[0].Depends)
	if name == "" {
		return "", fmt.Errorf("Debian's linux-image-%s (%s) names no versioned kernel package in %q", flavour, arch, meta[0].Depends)
	}
	dest := filepath.Join(cacheDir, "kernels", arch, name)
	if k := findKernel(dest); k != "" {
		return k, nil
	}
	// Only boot/ is needed: the image itself, not the modules.
	x, done, err := a.unpack(ctx, name, filepath.Dir(dest), []string{"./boot"})
	if err != nil {
		return "", err
	}
	defer done()
	os.RemoveAll(dest)
	if err := os.Rename(x, dest); err != nil {
		return "", fmt.Errorf("kernel: %w", err)
	}
	if k := findKernel(dest); k != "" {
		return k, nil
	}
	return "", fmt.Errorf("%s holds no boot/vmlinu[xz]-* image", name)
}

func findKernel(dir string) string {
	found, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinu[xz]-*"))
	if len(found) == 0 {
		return ""
	}
	return found[0]
}

// versionedKernel picks linux-image-<abi>-<flavour> out of a metapackage's
// Depends.
func versionedKernel(depends string) string {
	for _, d := range strings.Split(depends, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(d), " ")
		if strings.HasPrefix(name, "linux-image-") && len(name) > len("linux-image-") && name[len("linux-image-")] >= '0' && name[len("linux-image-")] <= '9' {
			return name
		}
	}
	return ""
}

// parseControl reads the Package, Version, Architecture and Depends fields
// of apt-cache show's records (RFC 822 style, blank-line separated).
func parseControl(b []byte) []Package {
	var pkgs []Package
	var cur *Package
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			cur = nil
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		if k == "Package" {
			pkgs = append(pkgs, Package{Name: v})
			cur = &pkgs[len(pkgs)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch k {
		case "Version":
			cur.Version = v
		case "Architecture":
			cur.Arch = v
		case "Depends", "Pre-Depends":
			if cur.Depends != "" {
				v = cur.Depends + ", " + v
			}
			cur.Depends = v
		}
	}
	return pkgs
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// KernelModules unpacks the kernel modules under the given directories of
// lib/modules/<version>/kernel ("net", "drivers/virtio") from the versioned
// kernel package pkg of arch into cacheDir/kernels/<arch>/<pkg>/lib, beside
// the image Kernel unpacked, and returns that lib/modules/<version>
// directory. Debian's kernel image is modular: netfilter and most NIC
// drivers are modules a board's image has to carry.
func KernelModules(ctx context.Context, cacheDir, arch, pkg string, dirs []string) (string, error) {
	dest := filepath.Join(cacheDir, "kernels", arch, pkg)
	if m := modulesDir(dest); m != "" {
		return m, nil
	}
	a, err := newAPT(cacheDir, arch)
	if err != nil {
		return "", err
	}
	members := []string{"--wildcards"}
	for _, d := range dirs {
		members = append(members, "./lib/modules/*/kernel/"+strings.Trim(d, "/")+"/*")
	}
	x, done, err := a.unpack(ctx, pkg, filepath.Dir(dest), members)
	if err != nil {
		return "", err
	}
	defer done()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	// One rename, so a concurrent reader sees all the modules or none.
	if err := os.Rename(filepath.Join(x, "lib"), filepath.Join(dest, "lib")); err != nil && modulesDir(dest) == "" {
		return "", fmt.Errorf("kernel modules: %w", err)
	}
	if m := modulesDir(dest); m != "" {
		return m, nil
	}
	return "", fmt.Errorf("%s holds no lib/modules/<version>/kernel", pkg)
}

func modulesDir(pkgDir string) string {
	found, _ := filepath.Glob(filepath.Join(pkgDir, "lib", "modules", "*", "kernel"))
	if len(found) == 0 {
		return ""
	}
	return filepath.Dir(found[0])
}

// shellWords quotes words for sh.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// Unpack downloads package pkg of arch (a name, or name=version) and
// extracts the members tar names into a temporary directory under parent,
// as unpack does: the caller moves what it needs out of the directory it
// returns, then calls done to remove the rest.
func Unpack(ctx context.Context, cacheDir, arch, pkg, parent string, members []string) (dir string, done func(), err error) {
	a, err := newAPT(cacheDir, arch)
	if err != nil {
		return "", nil, err
	}
	return a.unpack(ctx, pkg, parent, members)
}

// unpack downloads package pkg into a temporary directory under parent
// and extracts the members tar names (with tar's options before them) into
// its x/, which it returns with what removes it all. Beside the cache entry
// it fills, so that entry arrives by one rename.
func (a *apt) unpack(ctx context.Context, pkg, parent string, members []string) (string, func(), error) {
	pkgs, err := a.resolve(ctx, pkg)
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".dl.")
	if err != nil {
		return "", nil, fmt.Errorf("unpack %s: %w", pkg, err)
	}
	done := func() { os.RemoveAll(tmp) }
	deb, err := a.download(ctx, tmp, pkgs[0])
	if err != nil {
		done()
		return "", nil, err
	}
	x := filepath.Join(tmp, "x")
	if err := os.Mkdir(x, 0o755); err != nil {
		done()
		return "", nil, err
	}
	tarCmd := fmt.Sprintf("dpkg-deb --fsys-tarfile %q | tar -x -C %q %s", deb, x, shellWords(members))
	if out, err := exec.CommandContext(ctx, "sh", "-c", tarCmd).CombinedOutput(); err != nil {
		done()
		return "", nil, fmt.Errorf("unpack %s: %w: %s", filepath.Base(deb), err, out)
	}
	return x, done, nil
}
