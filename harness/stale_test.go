package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestSweepStale(t *testing.T) {
	cache := t.TempDir()
	// A process that has certainly exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid

	const ns = "bootbench-sweeptst"
	haveNS := false
	if os.Geteuid() == 0 {
		if err := exec.Command("ip", "netns", "add", ns).Run(); err == nil {
			haveNS = true
			t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		}
	}
	mk := func(name, owner string) string {
		d := filepath.Join(cache, name)
		os.MkdirAll(d, 0o755)
		if owner != "" {
			os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o644)
		}
		return d
	}
	killed := mk("run-a", strconv.Itoa(deadPID)+" "+ns+"\n")
	running := mk("run-b", strconv.Itoa(os.Getpid())+" bootbench-stillrun\n")
	settingUp := mk("run-c", "")
	foreign := mk("run-d", strconv.Itoa(deadPID)+" somebody-elses-ns\n")

	swept := sweepStale(cache)
	if _, err := os.Stat(killed); err == nil {
		t.Error("directory of a killed run kept")
	}
	for _, d := range []string{running, settingUp, foreign} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(d), err)
		}
	}
	if haveNS {
		if len(swept) != 1 || swept[0] != ns {
			t.Errorf("swept %v, want [%s]", swept, ns)
		}
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Error("namespace of a killed run kept")
		}
	}
}
