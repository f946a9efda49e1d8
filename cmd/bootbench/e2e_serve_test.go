package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// serveInventory writes an inventory of the given boards on s's bench,
// each with a quick job.
func serveInventory(s *simBench, boards map[string]*simBench, addrs map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bench: {interface: %s, address: %s}\nboards:\n", s.iface, simBenchNet)
	for name, bd := range boards {
		fmt.Fprintf(&b, "  %s:\n    profile: pc-x86_64\n    mac: %q\n    address: %s\n    console: %s\n    power: %s\n    job: {seconds: 0.1, algs: [md5, sha256]}\n",
			name, bd.mac, addrs[name], bd.tty, bd.commandPower())
	}
	path := filepath.Join(s.dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// startServe runs bootbench serve in the bench host's namespace.
func startServe(t *testing.T, s *simBench, db string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := userenv.Command([]string{"BOOTBENCH_CACHE=" + cacheOf(t)}, "ip", append([]string{"netns", "exec", s.ns, bootbenchBin, "serve", "--db", db}, args...)...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, 2*time.Minute, "serve to start", func() bool { return strings.Contains(out.String(), "serving ") }, &out, &errb)
	return cmd, &out, &errb
}

// waitFor waits until cond holds; logs are bootbench's stdout and stderr,
// and an error or panic on stderr ends the wait at once.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, stdout, stderr *lockedBuffer) {
	t.Helper()
	logs := []*lockedBuffer{stdout, stderr}
	deadline := time.Now().Add(limit)
	for !cond() {
		dead := strings.Contains(stderr.String(), "panic:") || strings.Contains(stderr.String(), "bootbench: ")
		if dead || time.Now().After(deadline) {
			var l []string
			for _, b := range logs {
				l = append(l, b.String())
			}
			t.Fatalf("waited %v for %s:\n%s", limit, what, strings.Join(l, "\n---\n"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func powerOn(t *testing.T, b *simBench) {
	t.Helper()
	if out, err := exec.Command(filepath.Join(b.dir, "on.sh")).CombinedOutput(); err != nil {
		t.Fatalf("power on %s: %v\n%s", b.mac, err, out)
	}
}

func okRunsOf(t *testing.T, db string) map[string]int {
	ok := map[string]int{}
	for _, r := range storedRuns(t, db) {
		if r.Status == "ok" && len(r.Metrics) > 0 {
			ok[r.Board]++
		}
	}
	return ok
}

// TestE2EServe: the bench daemon with two boards a person powers on, a
// stranger on the segment, Ctrl-C, and serve --once.
func TestE2EServe(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSwitchedBench(t, false)
	pc2 := s.addBoard(1, "52:54:00:bb:05:21")
	stranger := s.addBoard(2, "52:54:00:bb:05:99")
	inv := serveInventory(s, map[string]*simBench{"pc1": s, "pc2": pc2}, map[string]string{"pc1": simBoardIP, "pc2": "198.18.5.21"})
	db := filepath.Join(t.TempDir(), "results.db")
	before := s.addrs()

	cmd, out, errb := startServe(t, s, db, "--inventory", inv, "--log", "json")
	powerOn(t, s)
	powerOn(t, pc2)
	powerOn(t, stranger)
	waitFor(t, 4*time.Minute, "a result from both boards", func() bool {
		ok := okRunsOf(t, db)
		return ok["pc1"] >= 1 && ok["pc2"] >= 1
	}, out, errb)
	waitFor(t, time.Minute, "the stranger's hint", func() bool { return strings.Contains(out.String(), "52:54:00:bb:05:99 asked to boot") }, out, errb)

	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after Ctrl-C: %v\n%s", err, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve did not stop within a minute of Ctrl-C:\n%s", out.String())
	}

	var hints int
	for _, line := range strings.Split(out.String(), "\n") {
		var ev struct{ Event, Detail string }
		json.Unmarshal([]byte(line), &ev)
		if strings.Contains(ev.Detail, "52:54:00:bb:05:99") && ev.Event == "note" {
			hints++
			if !strings.Contains(ev.Detail, `mac: "52:54:00:bb:05:99"`) || !strings.Contains(ev.Detail, "profile: pc-x86_64") || !strings.Contains(ev.Detail, "Intel x86PC") {
				t.Errorf("the hint is not a paste-ready entry:\n%s", ev.Detail)
			}
		}
		if strings.Contains(ev.Detail, "to 52:54:00:bb:05:99") {
			t.Errorf("the stranger got an answer: %s", line)
		}
	}
	if hints != 1 {
		t.Errorf("%d hints about the stranger, want 1:\n%s", hints, out.String())
	}
	// Two boards booted, and a stranger asked: the segment was probed
	// for another DHCP server once, when serve started.
	if n := strings.Count(out.String(), "for another DHCP server"); n != 1 {
		t.Errorf("%d rival probes, want 1 for the session:\n%s", n, out.String())
	}
	for _, r := range storedRuns(t, db) {
		if r.Board != "pc1" && r.Board != "pc2" {
			t.Errorf("a run for %s", r.Board)
		}
	}
	if after := s.addrs(); after != before {
		t.Errorf("bench0's addresses: %q before, %q after", before, after)
	}
	s.assertBoardOff()
	pc2.assertBoardOff()
	assertNothingLeft(t, out.String())

	// serve --once: the next boot of pc1, one result, exit 0.
	n := okRunsOf(t, db)["pc1"]
	once, _, onceErr := startServe(t, s, db, "--inventory", inv, "--once", "pc1")
	powerOn(t, s)
	wait := make(chan error, 1)
	go func() { wait <- once.Wait() }()
	select {
	case err := <-wait:
		if err != nil {
			t.Fatalf("serve --once: %v\n%s", err, onceErr.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("serve --once did not return:\n%s", onceErr.String())
	}
	if got := okRunsOf(t, db)["pc1"]; got != n+1 {
		t.Errorf("pc1 has %d ok runs after --once, want %d", got, n+1)
	}
}
