package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"

	"github.com/bootbench/bootbench/internal/testkit/pgtest"
)

// The end-to-end tests run the bootbench binary the way a user does, against
// the default virtual board: our DHCP/TFTP/HTTP on a tap in a network
// namespace, QEMU with SeaBIOS and iPXE, a Debian kernel, the real image.
// With BOOTBENCH_E2E=1 (make test, CI) a missing prerequisite fails them.

var (
	bootbenchBin string
	// testCache is the cache every bootbench the tests start uses: its
	// images and kernels are the user's cache's (they are expensive to
	// make), everything a run creates there is the tests' own, so
	// assertNothingLeft can tell what a run left behind.
	testCache string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bootbench-e2e-")
	if err != nil {
		panic(err)
	}
	code := 1
	defer func() {
		pgtest.StopShared()
		os.RemoveAll(dir)
		os.Exit(code)
	}()
	// The binary a user gets: make build, in a user's environment.
	bootbenchBin = filepath.Join(dir, "bootbench")
	out, err := userenv.Command(nil, "make", "-C", "../..", "--no-print-directory", "build", "BIN="+bootbenchBin).CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		return
	}
	if testCache, err = shareCache(filepath.Join(dir, "cache")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	os.Setenv("BOOTBENCH_CACHE", testCache)
	// No inventory but the ones the tests write, and no spool but the
	// tests' own.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	os.Unsetenv("BOOTBENCH_INVENTORY")
	code = m.Run()
}

// sharedCache are the parts of the cache that are expensive to make and
// that every bootbench shares: images, Debian kernels and sysroots, Debian
// source packages and the openssl built from them, and Debian's Raspberry
// Pi firmware.
var sharedCache = []string{"images", "kernels", "sysroots", "prebuilt", "sources", "openssl", "firmware"}

// shareCache makes a cache at dir whose shared parts are the user's.
func shareCache(dir string) (string, error) {
	user := os.Getenv("BOOTBENCH_CACHE")
	if user == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		user = filepath.Join(c, "bootbench")
	}
	return shareCacheOf(user, dir)
}

// shareCacheOf makes a cache at dir whose shared parts are those of the
// cache at user.
func shareCacheOf(user, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, sub := range sharedCache {
		if err := os.MkdirAll(filepath.Join(user, sub), 0o755); err != nil {
			return "", err
		}
		if err := os.Symlink(filepath.Join(user, sub), filepath.Join(dir, sub)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ownCaches are the caches of the tests that run in parallel
// (parallelE2E), by top-level test name.
var ownCaches sync.Map

// parallelE2E runs t beside the other tests that call it, with a cache of
// its own whose shared parts are testCache's: what a run leaves behind
// (QEMU's directory, a bench address, a process) is then the test's own
// to find. Boots under TCG take a core each, and most of make test's time
// is such boots, one after another.
func parallelE2E(t *testing.T) {
	t.Helper()
	t.Parallel()
	cache, err := shareCacheOf(testCache, filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	ownCaches.Store(t.Name(), cache)
}

// cacheOf is the cache the bootbench t starts uses.
func cacheOf(t *testing.T) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	if c, ok := ownCaches.Load(top); ok {
		return c.(string)
	}
	return testCache
}

// requireBench fails (BOOTBENCH_E2E=1) or skips when the virtual bench
// cannot run here.
func requireBench(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (network namespaces and taps)")
	}
	missing = append(missing, needs.Missing("qemu-system-x86_64", "ip", "go", "dpkg-deb", "apt-get")...)
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing = append(missing, "/dev/net/tun")
	}
	if _, err := os.Stat("/usr/lib/ipxe/qemu/pxe-virtio.rom"); err != nil {
		missing = append(missing, "ipxe-qemu's NIC ROMs")
	}
	if len(missing) == 0 {
		return
	}
	needs.Unmet(t, "end-to-end prerequisites missing: "+strings.Join(missing, ", ")+" (make deps installs them)")
}

type result struct {
	code           int
	stdout, stderr string
}

func bootbench(t *testing.T, db string, args ...string) result {
	t.Helper()
	return bootbenchIn(t, "", db, args...)
}

// bootbenchIn runs bootbench in network namespace ns ("": this one), as a
// user on a bench host whose bench NIC is in that namespace would.
func bootbenchIn(t *testing.T, ns, db string, args ...string) result {
	t.Helper()
	env := []string{"BOOTBENCH_DB=" + db, "BOOTBENCH_CACHE=" + cacheOf(t)}
	cmd := userenv.Command(env, bootbenchBin, args...)
	if ns != "" {
		// nsenter, not ip netns exec: the bench host is another host's
		// network, not another filesystem, and the namespaces a run
		// makes must be the host's (ip netns exec gives each run a
		// mount namespace of its own).
		cmd = userenv.Command(env, "nsenter", append([]string{"--net=/run/netns/" + ns, bootbenchBin}, args...)...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run bootbench: %v", err)
	}
	return result{code, out.String(), errb.String()}
}

// quickSuite is the smallest benchmark that still gives each test what it
// checks (12 metrics, two algorithms): for boots that need a result, not
// particular figures.
var quickSuite = []string{"--algs", "md5,sha256", "--seconds", "0.05"}

var runIDRE = regexp.MustCompile(`run\s+(\d{8}-\d{6}-[0-9a-f]{8}) on`)

var namespaceRE = regexp.MustCompile(`namespace (bootbench-(?:rt-)?[0-9a-f]{8})`)

// assertNothingLeft checks that a bootbench left nothing behind: no
// namespace (the one its progress named), no process that uses the test
// cache (QEMU), and nothing in the cache but images, kernels and what is
// kept for the next command.
func assertNothingLeft(t *testing.T, stderr string) {
	t.Helper()
	for _, m := range namespaceRE.FindAllStringSubmatch(stderr, -1) {
		if _, err := os.Stat(filepath.Join("/run/netns", m[1])); err == nil {
			t.Errorf("network namespace %s left behind", m[1])
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(cacheOf(t))) {
			t.Errorf("process left behind: %s", bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	ents, _ := os.ReadDir(cacheOf(t))
	for _, e := range ents {
		// quiet: the segments heard with no other DHCP server, kept on
		// purpose for the next command (internal/quietseg); flash: the
		// twins' firmware settings, kept as a board's flash keeps them.
		if !slices.Contains(sharedCache, e.Name()) && e.Name() != "quiet" && e.Name() != "flash" {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
}

type exported struct {
	Runs []struct {
		ID       string `json:"id"`
		Board    string `json:"board"`
		ClockMHz int    `json:"clock_mhz"`
		Status   string `json:"status"`
		Reason   string `json:"reason"`
		Metrics  []struct {
			Name  string  `json:"name"`
			Unit  string  `json:"unit"`
			Value float64 `json:"value"`
		} `json:"metrics"`
	} `json:"runs"`
}

func exportJSON(t *testing.T, db string) exported {
	t.Helper()
	r := bootbench(t, db, "results", "export", "--format", "json")
	if r.code != 0 {
		t.Fatalf("export: exit %d: %s", r.code, r.stderr)
	}
	var e exported
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil {
		t.Fatalf("export is not JSON: %v\n%s", err, r.stdout)
	}
	return e
}

// TestE2EDemo is the README's first command as a newcomer runs it: in a
// clean copy of the repository, in a user's environment (no GOROOT or other
// go test settings), with an image cache of its own so the image is built
// with the Go toolchain on PATH, `make demo`, then the export it suggests.
func TestE2EDemo(t *testing.T) {
	requireBench(t)
	parallelE2E(t)
	clone := cleanCopy(t)
	cache := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(filepath.Join(cache, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"kernels", "sysroots"} {
		if err := os.Symlink(filepath.Join(testCache, sub), filepath.Join(cache, sub)); err != nil {
			t.Fatal(err)
		}
	}
	// The store is where a user's is: under XDG_DATA_HOME.
	env := []string{"BOOTBENCH_CACHE=" + cache, "BOOTBENCH_DB=", "XDG_DATA_HOME=" + filepath.Join(t.TempDir(), "data")}
	demo := userenv.Command(env, "make", "demo")
	demo.Dir = clone
	var stdout, stderr bytes.Buffer
	demo.Stdout, demo.Stderr = &stdout, &stderr
	if err := demo.Run(); err != nil {
		t.Fatalf("make demo: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	progress := stderr.String()
	m := runIDRE.FindStringSubmatch(progress)
	if m == nil {
		t.Fatalf("no run id in progress output:\n%s", progress)
	}
	id := m[1]
	// The image cache started empty: the base image was built here, with
	// the go command a user's PATH finds.
	if built, _ := filepath.Glob(filepath.Join(cache, "images", "base-amd64-*.cpio")); len(built) != 1 {
		t.Errorf("no amd64 base image built into the empty image cache: %v", built)
	}
	for _, stage := range []string{"image    building init and benchinit (one binary) for amd64", "dhcp-offer to 52:54:00:bb:00:01", "tftp     qemu-x86_64/boot.ipxe", "http     qemu-x86_64/vmlinuz", "board up: amd64", "stored   run " + id + ": ok"} {
		if !strings.Contains(progress, stage) {
			t.Errorf("progress output lacks %q:\n%s", stage, progress)
		}
	}
	if n := strings.Count(stdout.String(), " B/s"); n < 5 {
		t.Errorf("result table has %d metrics, want >= 5:\n%s", n, stdout.String())
	}

	exp := userenv.Command(env, "bin/bootbench", "results", "export", "--format", "json")
	exp.Dir = clone
	out, err := exp.Output()
	var e exported
	if err != nil || json.Unmarshal(out, &e) != nil {
		t.Fatalf("bin/bootbench results export --format json: %v\n%s", err, out)
	}
	if len(e.Runs) != 1 || e.Runs[0].ID != id || e.Runs[0].Status != "ok" || e.Runs[0].Board != "qemu-x86_64" || e.Runs[0].ClockMHz != 1000 {
		t.Fatalf("export: %+v", e)
	}
	got := map[string]float64{}
	for _, m := range e.Runs[0].Metrics {
		got[m.Name] = m.Value
	}
	for _, name := range []string{"md5@1024", "sha1@1024", "sha256@1024", "sha512@1024", "aes-128-cbc@1024"} {
		if got[name] <= 0 {
			t.Errorf("metric %s = %v, want a positive figure", name, got[name])
		}
	}

	// The transcript shows iPXE fetching from our own server's address.
	show := userenv.Command(env, "bin/bootbench", "results", "show", id, "--transcript")
	show.Dir = clone
	transcript, _ := show.Output()
	for _, want := range []string{"Next server: 198.18.0.1", "tftp://198.18.0.1/qemu-x86_64/boot.ipxe... ok", "http://198.18.0.1/qemu-x86_64/vmlinuz... ok", "Welcome to u-root"} {
		if !bytes.Contains(transcript, []byte(want)) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	assertNothingLeft(t, progress)
}

// cleanCopy is what a clone of the repository holds, as the working tree
// has it now: the files git tracks or would track, and nothing built.
func cleanCopy(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the repository's files (git ls-files): %v", err)
	}
	dst := filepath.Join(t.TempDir(), "bootbench")
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			link, _ := os.Readlink(src)
			err = os.Symlink(link, to)
		} else {
			var b []byte
			if b, err = os.ReadFile(src); err == nil {
				err = os.WriteFile(to, b, fi.Mode().Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestE2EFailedBoot(t *testing.T) {
	requireBench(t)
	tests := []struct {
		name   string
		args   []string
		reason string
	}{
		// The kernel finds no init: it panics and, with panic=-1 and QEMU's
		// -no-reboot, the board powers off without a word from us; the
		// console said why.
		{"broken command line", []string{"--append", "rdinit=/nonexistent"}, "kernel-panic: "},
		// The board is fine but slower than we allow: it says hello some
		// 2 s after power-on.
		{"boot timeout", []string{"--boot-timeout", "1s"}, "no hello from the board within 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "results.db")
			start := time.Now()
			r := bootbench(t, db, append([]string{"run", "--seconds", "0.1", "--retries", "0"}, tt.args...)...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
			}
			if d := time.Since(start); d > 3*time.Minute {
				t.Errorf("failure took %v", d)
			}
			var errLines []string
			for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
				if strings.HasPrefix(l, "bootbench: ") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !strings.Contains(errLines[0], tt.reason) {
				t.Errorf("want one error line with %q, got %q", tt.reason, errLines)
			}
			e := exportJSON(t, db)
			if len(e.Runs) != 1 || e.Runs[0].Status != "failed" || !strings.Contains(e.Runs[0].Reason, tt.reason) || len(e.Runs[0].Metrics) != 0 {
				t.Fatalf("stored run: %+v", e.Runs)
			}
			show := bootbench(t, db, "results", "show", e.Runs[0].ID, "--transcript")
			if !strings.Contains(show.stdout, "iPXE") {
				t.Errorf("failed run's transcript was not kept:\n%s", show.stdout)
			}
			assertNothingLeft(t, r.stderr)
		})
	}
}

// TestE2EInterrupt sends SIGINT in the middle of a boot and checks that
// everything the run started is gone.
func TestE2EInterrupt(t *testing.T) {
	requireBench(t)
	db := filepath.Join(t.TempDir(), "results.db")
	cmd := userenv.Command([]string{"BOOTBENCH_DB=" + db}, bootbenchBin, "run", "--seconds", "0.1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if m := runIDRE.FindStringSubmatch(line); m != nil {
			id = m[1]
		}
		// The board has loaded kernel and image and is booting: the
		// middle of a boot, with every server and QEMU running.
		if strings.Contains(line, "] kernel   booting ") {
			break
		}
	}
	if id == "" || !strings.Contains(seen.String(), "] kernel   booting ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the boot never got going:\n%s", seen.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Errorf("exit after SIGINT: %v, want status 130", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("bootbench did not stop within 30s of SIGINT")
	}
	assertNothingLeft(t, seen.String())
	e := exportJSON(t, db)
	if len(e.Runs) != 1 || e.Runs[0].Status != "interrupted" || len(e.Runs[0].Metrics) != 0 {
		t.Errorf("stored run after SIGINT: %+v", e.Runs)
	}
}
