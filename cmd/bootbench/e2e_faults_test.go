package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// startIn starts bootbench in the bench host's namespace of s, as
// s.run does, without waiting for it.
func (s *simBench) startIn(db string, args ...string) (*exec.Cmd, *lockedBuffer, *lockedBuffer) {
	t := s.t
	t.Helper()
	env := []string{"BOOTBENCH_DB=" + db, "BOOTBENCH_CACHE=" + cacheOf(t)}
	cmd := userenv.Command(env, "nsenter", append([]string{"--net=/run/netns/" + s.ns, bootbenchBin}, args...)...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

// lockFileOf is the UUCP lock file of the adapter's device.
func (s *simBench) lockFileOf(dev string) string {
	return filepath.Join("/run/lock", "LCK.."+strings.ReplaceAll(strings.TrimPrefix(dev, "/dev/"), "/", "_"))
}

// lockHolder is the pid a UUCP lock file names ("%10d\n"), 0 when there
// is no such file.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// boardRunning reports whether the board's QEMU is running.
func (s *simBench) boardRunning() bool {
	b, err := os.ReadFile(filepath.Join(s.dir, "qemu.pid"))
	if err != nil {
		return false
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid > 0 && running(pid)
}

// TestE2EAdapterPulled is the board's USB serial adapter pulled out while
// the board runs its benchmark (the socat pty pair killed): the run ends
// within the grace a lost console has, stored failed with that reason;
// the board is switched off (its power switch's off ran), its console
// lock and the bench address bootbench added are gone, nothing is left
// running.
func TestE2EAdapterPulled(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	s := newSimBench(t, false)
	inv := s.inventory(s.commandPower())
	before := s.addrs()
	db := filepath.Join(t.TempDir(), "results.db")
	cmd, stdout, stderr := s.startIn(db, "run", "--inventory", inv, "--board", "pc1", "--algs", "md5,sha256", "--seconds", "0.5",
		"--retries", "0", "--run-timeout", "150s")
	waitFor(t, 3*time.Minute, "the board to report", func() bool { return strings.Contains(stderr.String(), "board up: ") }, stdout, stderr)
	dev, err := filepath.EvalSymlinks(s.tty)
	if err != nil {
		t.Fatal(err)
	}
	pulled := time.Now()
	s.socat.Process.Kill() // the adapter, out of its socket
	s.socat.Wait()
	// udev removes a pulled adapter's device links; a killed socat leaves
	// its link, whose pty number the next pty opened on this host (another
	// test's adapter) takes, and the link would lead to that board's console.
	if err := os.Remove(s.tty); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd, 4*time.Minute)
	took := time.Since(pulled)
	t.Logf("the run:\n%s%s", stdout.String(), stderr.String())
	id := runIDRE.FindStringSubmatch(stderr.String())[1]
	lines := errorLines(stderr.String())
	want := "bootbench: run " + id + " failed: console-lost: console " + s.tty + " (" + dev + ") lost: hung up at the bench stage, and not back within 15s: was its adapter unplugged?"
	if code != 1 || len(lines) != 1 || lines[0] != want {
		t.Errorf("exit %d, said %q; want exit 1 and %q", code, lines, want)
	}
	if took > 45*time.Second {
		t.Errorf("the run ended %v after the adapter was pulled; want it within the console's grace", took.Round(time.Second))
	}
	runs := storedRuns(t, db)
	if len(runs) != 1 || runs[0].Status != "failed" || !strings.HasPrefix(runs[0].Reason, "console-lost: console "+s.tty) || len(runs[0].Metrics) != 0 {
		t.Errorf("stored: %+v", runs)
	}
	if show := bootbench(t, db, "results", "show", id, "--transcript"); !strings.Contains(show.stdout, "[bootbench: console "+s.tty+" ("+dev+") lost: hung up]") {
		t.Errorf("the transcript does not mark the loss:\n%s", show.stdout)
	}
	if s.boardRunning() {
		t.Error("the board is still on: its power switch's off did not run")
	}
	// The pty the pulled adapter freed may be another test's adapter by
	// now, locked by that test's bootbench: only a lock of this run's
	// bootbench is one left behind.
	if pid := lockHolder(s.lockFileOf(dev)); pid == cmd.Process.Pid {
		t.Errorf("console lock %s of the run's bootbench (pid %d) left behind", s.lockFileOf(dev), pid)
	}
	if after := s.addrs(); after != before {
		t.Errorf("bench0's addresses: %q before, %q after", before, after)
	}
	assertNothingLeft(t, stderr.String())
}

// TestE2EKilledMidRun is bootbench killed with SIGKILL while the board
// runs, which leaves everything a run set up in place: the next command
// finds it, removes it, says what it removed, and runs.
func TestE2EKilledMidRun(t *testing.T) {
	requireSimBench(t)
	parallelE2E(t)
	t.Run("virtual board", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "results.db")
		cmd, stdout, stderr := startBootbench(t, []string{"BOOTBENCH_DB=" + db}, append([]string{"run"}, quickSuite...)...)
		waitFor(t, 3*time.Minute, "the boot to start", func() bool { return strings.Contains(stderr.String(), "] kernel   booting ") }, stdout, stderr)
		m := namespaceRE.FindStringSubmatch(stderr.String())
		if m == nil {
			t.Fatalf("no namespace in the progress:\n%s", stderr.String())
		}
		ns := m[1]
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err != nil {
			t.Fatalf("the killed run left no namespace %s to clean (%v): the test kills too late", ns, err)
		}
		r := bootbench(t, db, append([]string{"run"}, quickSuite...)...)
		t.Logf("the next run:\n%s%s", r.stdout, r.stderr)
		if r.code != 0 || !strings.Contains(r.stderr, "removed namespace "+ns+" left by a bootbench that was killed") {
			t.Fatalf("the next run: exit %d; want it to say it removed namespace %s, and run", r.code, ns)
		}
		if len(storedRuns(t, db)) != 1 {
			t.Errorf("stored %d runs, want the second run's", len(storedRuns(t, db)))
		}
		assertNothingLeft(t, stdout.String()+stderr.String()+r.stderr)
	})
	t.Run("board on a real bench", func(t *testing.T) {
		s := newSimBench(t, false)
		inv := s.inventory(s.commandPower())
		before := s.addrs()
		db := filepath.Join(t.TempDir(), "results.db")
		args := append([]string{"run", "--inventory", inv, "--board", "pc1"}, quickSuite...)
		cmd, stdout, stderr := s.startIn(db, args...)
		waitFor(t, 3*time.Minute, "the board to be on", func() bool { return strings.Contains(stderr.String(), "firmware SeaBIOS") }, stdout, stderr)
		dev, err := filepath.EvalSymlinks(s.tty)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// What the kill left: the board on, the console's lock, the
		// bench address bootbench added.
		if !s.boardRunning() || s.addrs() == before {
			t.Fatalf("the killed run left the board on %v, bench0's addresses %q (before %q): the test kills too late", s.boardRunning(), s.addrs(), before)
		}
		lock := s.lockFileOf(dev)
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("the killed run left no console lock %s: %v", lock, err)
		}

		r := s.run(db, args...)
		t.Logf("the next run:\n%s%s", r.stdout, r.stderr)
		for _, want := range []string{
			"[   setup] console  removed " + lock + " of pid " + strconv.Itoa(cmd.Process.Pid) + ", which is gone, left by a bootbench that was killed",
			"[   setup] power    pc1 switched off: a bootbench that was killed had left it on (its switch: command " + strconv.Quote(filepath.Join(s.dir, "on.sh")) + ")",
			"[   setup] network  removed bench address bench0 " + simBenchNet + " left by a bootbench that was killed",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the next run does not say %q", want)
			}
		}
		assertOneOK(t, db, r)
		if after := s.addrs(); after != before {
			t.Errorf("bench0's addresses: %q before, %q after", before, after)
		}
		s.assertBoardOff()
		assertNothingLeft(t, r.stderr)
	})
}
