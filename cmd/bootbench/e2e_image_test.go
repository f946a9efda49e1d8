package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
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

// TestStandaloneBinary: 'make build' gives a static binary which, copied
// into an empty directory with no source tree and no Go on PATH, builds an
// amd64 and a mipsle image from the prebuilt set and runs the demo board.
func TestStandaloneBinary(t *testing.T) {
	requireBench(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bootbench")
	if out, err := userenv.Command(nil, "make", "-C", root, "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("make build gave a dynamically linked binary (%v)", p.Type)
		}
	}
	f.Close()

	// The set is made in the source tree, into the cache the copied
	// binary will use; the bases themselves come from the shared image
	// cache, so they are built once across runs.
	cache := t.TempDir()
	set := filepath.Join(cache, "images", "prebuilt")
	r, _ := bootbenchAt(t, bin, root, nil, "image", "prebuild", "--arch", "amd64,mipsle", "-o", set)
	if r.code != 0 {
		t.Fatalf("prebuild: exit %d: %s", r.code, r.stderr)
	}
	// Kernels the machine already fetched (make deps) stand in for a
	// cache that has run before; fetching them is debpkg's business.
	shared, _ := os.UserCacheDir()
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		shared = d
	} else {
		shared = filepath.Join(shared, "bootbench")
	}
	if err := os.Symlink(filepath.Join(shared, "kernels"), filepath.Join(cache, "kernels")); err != nil {
		t.Fatal(err)
	}

	empty := t.TempDir()
	lone := filepath.Join(empty, "bootbench")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"BOOTBENCH_CACHE=" + cache, "BOOTBENCH_DB=" + filepath.Join(empty, "results.db"), "BOOTBENCH_SRC=", "PATH=" + pathWithoutGo()}
	for _, arch := range []string{"amd64", "mipsle"} {
		r, _ := bootbenchAt(t, lone, empty, env, "image", "build", "--arch", arch, "--format", "cpio.xz", "-o", arch+".cpio.xz")
		if r.code != 0 {
			t.Fatalf("image build --arch %s without source or Go: exit %d: %s", arch, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "from the prebuilt set") {
			t.Errorf("image build --arch %s did not say it used the prebuilt set: %s", arch, r.stderr)
		}
	}
	r, _ = bootbenchAt(t, lone, empty, env, "run", "--seconds", "0.1", "--algs", "md5,sha256")
	if r.code != 0 {
		t.Fatalf("run without source or Go: exit %d\n%s", r.code, r.stderr)
	}
	e, _ := bootbenchAt(t, lone, empty, env, "results", "export", "--format", "json")
	var ex exported
	if err := json.Unmarshal([]byte(e.stdout), &ex); err != nil || len(ex.Runs) != 1 || ex.Runs[0].Status != "ok" || len(ex.Runs[0].Metrics) == 0 {
		t.Fatalf("stored: %v %s", err, e.stdout)
	}
	serveOnceStandalone(t, lone, empty, env)
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
