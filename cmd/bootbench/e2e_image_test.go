package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// bootbenchIn runs a bootbench binary with env added to ours, in dir.
func bootbenchAt(t *testing.T, bin, dir string, env []string, args ...string) (result, time.Duration) {
	t.Helper()
	cmd := userenv.Command(env, bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return result{code, out.String(), errb.String()}, took
}

var cpioSizeRE = regexp.MustCompile(`: (\d+) bytes \(cpio (\d+)\)`)

// TestImageMipsleSmall: the MIPS router image (u-root's init and benchinit
// as one binary) is at most 1.4 MiB as cpio.xz and 5.25 MiB unpacked (with
// the route benchmark's netlink code, 5.11 MiB: the WRT54G twin's 16 MiB
// then hold kernel, gzipped image, unpacked image and working margin with
// some 0.2 MiB to spare, see initramfs.CheckFit), a build
// from an empty cache gives the same bytes as the shared cache's (built in
// another process, maybe another day, from the same inputs — or now, if
// it has none), and a rebuild of the same inputs takes under 2 s.
func TestImageMipsleSmall(t *testing.T) {
	needs.Commands(t, "go", "xz")
	var outs [][]byte
	caches := []string{testCache, t.TempDir()}
	for i, cache := range caches {
		out := filepath.Join(t.TempDir(), "m.cpio.xz")
		r, took := bootbenchAt(t, bootbenchBin, ".", []string{"BOOTBENCH_CACHE=" + cache}, "image", "build", "--arch", "mipsle", "--format", "cpio.xz", "-o", out)
		if r.code != 0 {
			t.Fatalf("build %d: exit %d: %s", i+1, r.code, r.stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		m := cpioSizeRE.FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("no sizes in %q", r.stderr)
		}
		unpacked, _ := strconv.Atoi(m[2])
		t.Logf("build %d (cache %s): cpio.xz %d bytes, cpio %d bytes, %.1fs", i+1, cache, len(b), unpacked, took.Seconds())
		const xzLimit, cpioLimit = 14 << 20 / 10, 21 << 20 / 4 // 1.4 MiB, 5.25 MiB
		if len(b) > xzLimit || unpacked > cpioLimit {
			t.Errorf("mipsle image: %d bytes xz (limit %d), %d unpacked (limit %d)", len(b), xzLimit, unpacked, cpioLimit)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("a build from an empty cache differs from the shared cache's")
	}
	out := filepath.Join(t.TempDir(), "again.cpio.xz")
	r, took := bootbenchAt(t, bootbenchBin, ".", []string{"BOOTBENCH_CACHE=" + caches[0]}, "image", "build", "--arch", "mipsle", "--format", "cpio.xz", "-o", out)
	if r.code != 0 || !strings.Contains(r.stderr, "cached") {
		t.Fatalf("rebuild: exit %d: %s", r.code, r.stderr)
	}
	t.Logf("rebuild: %.2fs", took.Seconds())
	if took > 2*time.Second {
		t.Errorf("rebuild of the same inputs took %s, want < 2s", took)
	}
}

// TestStandaloneBinary: the release tarball (make release), unpacked into
// an empty directory on a host without Go, builds images from the
// prebuilt set beside the binary, runs the x86-64 twin and the RB450G
// twin, and serves a board (serve --once on the simulated bench). Where
// the host lacks the compiler of a twin's kernel, run says in one line
// which Debian packages to install, and stores nothing.
func TestStandaloneBinary(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	bin := filepath.Join(t.TempDir(), "bootbench")
	if out, err := userenv.Command(nil, "make", "-C", root, "release", "BIN="+bin, "RELEASE_DIR="+dist, "RELEASE_ARCH=amd64,mipsle,mips").CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	tarballs, _ := filepath.Glob(filepath.Join(dist, "bootbench-linux-*.tar.gz"))
	if len(tarballs) != 1 {
		t.Fatalf("make release made %v, want one bootbench-linux-ARCH.tar.gz", tarballs)
	}
	empty := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tarballs[0], "-C", empty).CombinedOutput(); err != nil {
		t.Fatalf("unpack the release: %v\n%s", err, out)
	}
	lone := filepath.Join(empty, "bootbench", "bootbench")
	checkStatic(t, lone)
	// The cache starts empty but for the kernels the machine already has
	// (make deps' Debian kernels, bootbench's built ones): fetching and
	// building them is debpkg's and TestBuiltBoots' business.
	cache := t.TempDir()
	if err := os.Symlink(filepath.Join(sharedCacheRoot(), "kernels"), filepath.Join(cache, "kernels")); err != nil {
		t.Fatal(err)
	}
	env := []string{"BOOTBENCH_CACHE=" + cache, "BOOTBENCH_DB=" + filepath.Join(empty, "results.db"), "BOOTBENCH_SRC=", "PATH=" + pathWithoutGo()}
	for _, arch := range []string{"amd64", "mipsle"} {
		r, _ := bootbenchAt(t, lone, empty, env, "image", "build", "--arch", arch, "--format", "cpio.xz", "-o", arch+".cpio.xz")
		if r.code != 0 {
			t.Fatalf("image build --arch %s from the release: exit %d: %s", arch, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "from the prebuilt set") {
			t.Errorf("image build --arch %s did not say it used the prebuilt set: %s", arch, r.stderr)
		}
	}
	for _, board := range []string{"qemu-x86_64", "qemu-rb450g"} {
		r, _ := bootbenchAt(t, lone, empty, env, "run", "--board", board, "--seconds", "0.1", "--algs", "md5")
		if r.code != 0 {
			t.Fatalf("run --board %s from the release: exit %d\n%s", board, r.code, r.stderr)
		}
	}
	if ok := okRunsOf(t, filepath.Join(empty, "results.db")); ok["qemu-x86_64"] != 1 || ok["qemu-rb450g"] != 1 {
		t.Fatalf("ok runs stored from the release: %v, want one of qemu-x86_64 and of qemu-rb450g", ok)
	}
	lackingCompiler(t, lone, empty)
	serveOnceStandalone(t, lone, empty, env)
}

// lackingCompiler runs the release's run --board qemu-rb450g on a host
// whose cache has no kernel built and that lacks the big-endian MIPS
// compiler: one line naming the package to install, exit 2, nothing
// stored.
func lackingCompiler(t *testing.T, lone, dir string) {
	t.Helper()
	bare := t.TempDir()
	bin := filepath.Join(bare, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range filepath.SplitList(pathWithoutGo()) {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "mips-linux-gnu-") {
				continue
			}
			os.Symlink(filepath.Join(d, e.Name()), filepath.Join(bin, e.Name())) // the first on PATH wins, as for a shell
		}
	}
	db := filepath.Join(bare, "results.db")
	env := []string{"BOOTBENCH_CACHE=" + filepath.Join(bare, "cache"), "BOOTBENCH_DB=" + db, "BOOTBENCH_SRC=", "PATH=" + bin}
	r, _ := bootbenchAt(t, lone, dir, env, "run", "--board", "qemu-rb450g")
	oneLine(t, r, 2, "board qemu-rb450g: bootbench's big-endian Malta kernel is not built on this host yet, and building it (once, some minutes) needs Debian packages gcc-mips-linux-gnu: apt-get install -y gcc-mips-linux-gnu")
	if _, err := os.Stat(db); err == nil {
		t.Errorf("run without the compiler created the store %s", db)
	}
}

// checkStatic fails t for a dynamically linked binary.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v)", bin, p.Type)
		}
	}
}

// sharedCacheRoot is the user's cache, whose kernels the tests share.
func sharedCacheRoot() string {
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		if target, err := os.Readlink(filepath.Join(d, "kernels")); err == nil {
			return filepath.Dir(target)
		}
		return d
	}
	c, _ := os.UserCacheDir()
	return filepath.Join(c, "bootbench")
}

// serveOnceStandalone runs the copied binary's serve --once on the
// simulated bench: the board someone switches on gets its image from the
// prebuilt set, and its run is stored.
func serveOnceStandalone(t *testing.T, lone, dir string, env []string) {
	t.Helper()
	if missing := needs.Missing("socat", "dnsmasq"); len(missing) > 0 {
		needs.Unmet(t, "the simulated bench needs "+strings.Join(missing, ", ")+" (make deps installs them)")
	}
	s := newSimBench(t, true)
	inv := s.inventory(s.commandPower())
	// serve runs the board's job from the inventory: a short one, as
	// run's --seconds 0.1 above (the whole table took three minutes).
	f, err := os.OpenFile(inv, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "    job: {seconds: 0.1, algs: [md5, sha256]}")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "served.db")
	cmd := userenv.Command(env, "ip", "netns", "exec", s.ns, lone, "serve", "--db", db, "--inventory", inv, "--once", "pc1")
	cmd.Dir = dir
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, 2*time.Minute, "serve to start", func() bool { return strings.Contains(out.String(), "serving ") }, &out, &errb)
	powerOn(t, s)
	wait := make(chan error, 1)
	go func() { wait <- cmd.Wait() }()
	select {
	case err := <-wait:
		if err != nil {
			t.Fatalf("serve --once without source or Go: %v\n%s\n%s", err, out.String(), errb.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("serve --once without source or Go did not return:\n%s\n%s", out.String(), errb.String())
	}
	if n := okRunsOf(t, db)["pc1"]; n != 1 {
		t.Errorf("pc1 has %d ok runs after serve --once without source or Go, want 1", n)
	}
}

// pathWithoutGo is PATH less every directory holding a go command.
func pathWithoutGo() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}
