package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the bootbench binary the way a user does, against
// the default virtual board: our DHCP/TFTP/HTTP on a tap in a network
// namespace, QEMU with SeaBIOS and iPXE, a Debian kernel, the real image.
// With BOOTBENCH_E2E=1 (make test, CI) a missing prerequisite fails them.

var bootbenchBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bootbench-e2e-")
	if err != nil {
		panic(err)
	}
	bootbenchBin = filepath.Join(dir, "bootbench")
	out, err := exec.Command("go", "build", "-o", bootbenchBin, ".").CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// requireBench fails (BOOTBENCH_E2E=1) or skips when the virtual bench
// cannot run here.
func requireBench(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (network namespaces and taps)")
	}
	for _, c := range []string{"qemu-system-x86_64", "ip", "go", "dpkg-deb", "apt-get"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing = append(missing, "/dev/net/tun")
	}
	if _, err := os.Stat("/usr/lib/ipxe/qemu/pxe-virtio.rom"); err != nil {
		missing = append(missing, "ipxe-qemu's NIC ROMs")
	}
	if len(missing) == 0 {
		return
	}
	msg := "end-to-end prerequisites missing: " + strings.Join(missing, ", ") + " (make deps installs them)"
	if os.Getenv("BOOTBENCH_E2E") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg + "; set BOOTBENCH_E2E=1 to make this a failure")
}

type result struct {
	code           int
	stdout, stderr string
}

func bootbench(t *testing.T, db string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bootbenchBin, args...)
	cmd.Env = append(os.Environ(), "BOOTBENCH_DB="+db)
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

var runIDRE = regexp.MustCompile(`run\s+(\d{8}-\d{6}-[0-9a-f]{8}) on`)

// assertNothingLeft checks that a run left no namespace, QEMU or run
// directory behind.
func assertNothingLeft(t *testing.T, runID string) {
	t.Helper()
	ns := "bootbench-" + runID[len(runID)-8:]
	if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
		t.Errorf("network namespace %s left behind", ns)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(runID)) {
			t.Errorf("process left behind: %s", bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	cache, _ := os.UserCacheDir()
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		cache = filepath.Dir(d + "/x")
	} else {
		cache = filepath.Join(cache, "bootbench")
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "run-"+runID+"-*")); len(left) > 0 {
		t.Errorf("run directory left behind: %v", left)
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

func export(t *testing.T, db string) exported {
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

func TestE2ERunStoresResult(t *testing.T) {
	requireBench(t)
	db := filepath.Join(t.TempDir(), "results.db")
	r := bootbench(t, db, "run", "--seconds", "0.1")
	if r.code != 0 {
		t.Fatalf("bootbench run: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	m := runIDRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no run id in progress output:\n%s", r.stderr)
	}
	id := m[1]
	for _, stage := range []string{"image ", "dhcp-offer to 52:54:00:bb:00:01", "tftp     boot.ipxe", "http     vmlinuz", "board up: amd64", "stored   run " + id + ": ok"} {
		if !strings.Contains(r.stderr, stage) {
			t.Errorf("progress output lacks %q:\n%s", stage, r.stderr)
		}
	}
	if n := strings.Count(r.stdout, " B/s"); n < 5 {
		t.Errorf("result table has %d metrics, want >= 5:\n%s", n, r.stdout)
	}

	e := export(t, db)
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
	show := bootbench(t, db, "results", "show", id, "--transcript")
	for _, want := range []string{"Next server: 198.18.0.1", "tftp://198.18.0.1/boot.ipxe... ok", "http://198.18.0.1/vmlinuz... ok", "Welcome to u-root"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	assertNothingLeft(t, id)
}

func TestE2EFailedBoot(t *testing.T) {
	requireBench(t)
	tests := []struct {
		name   string
		args   []string
		reason string
	}{
		// The kernel finds no init: it panics and, with panic=-1 and QEMU's
		// -no-reboot, the board powers off without a word from us.
		{"broken command line", []string{"--append", "rdinit=/nonexistent"}, "the board powered off before its hello"},
		// The board is fine but slower than we allow.
		{"boot timeout", []string{"--boot-timeout", "5s"}, "no hello from the board within 5s"},
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
			e := export(t, db)
			if len(e.Runs) != 1 || e.Runs[0].Status != "failed" || !strings.Contains(e.Runs[0].Reason, tt.reason) || len(e.Runs[0].Metrics) != 0 {
				t.Fatalf("stored run: %+v", e.Runs)
			}
			show := bootbench(t, db, "results", "show", e.Runs[0].ID, "--transcript")
			if !strings.Contains(show.stdout, "iPXE") {
				t.Errorf("failed run's transcript was not kept:\n%s", show.stdout)
			}
			assertNothingLeft(t, e.Runs[0].ID)
		})
	}
}

// TestE2EInterrupt sends SIGINT in the middle of a boot and checks that
// everything the run started is gone.
func TestE2EInterrupt(t *testing.T) {
	requireBench(t)
	db := filepath.Join(t.TempDir(), "results.db")
	cmd := exec.Command(bootbenchBin, "run", "--seconds", "0.1")
	cmd.Env = append(os.Environ(), "BOOTBENCH_DB="+db)
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
		if strings.Contains(line, "booting vmlinuz") {
			break
		}
	}
	if id == "" || !strings.Contains(seen.String(), "booting vmlinuz") {
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
	assertNothingLeft(t, id)
	e := export(t, db)
	if len(e.Runs) != 1 || e.Runs[0].Status != "interrupted" || len(e.Runs[0].Metrics) != 0 {
		t.Errorf("stored run after SIGINT: %+v", e.Runs)
	}
}
