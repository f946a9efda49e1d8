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
	mk := func(name, owner string) string {
		d := filepath.Join(cache, name)
		os.MkdirAll(d, 0o755)
		if owner != "" {
			os.WriteFile(filepath.Join(d, "owner"), []byte(owner), 0o644)
		}
		return d
	}
	killed := mk("run-a", strconv.Itoa(dead.Process.Pid)+" \n")
	running := mk("run-b", strconv.Itoa(os.Getpid())+" \n")
	settingUp := mk("run-c", "")
	notARun := mk("images", strconv.Itoa(dead.Process.Pid)+" \n")

	sweepStale(cache)
	if _, err := os.Stat(killed); err == nil {
		t.Error("directory of a killed run kept")
	}
	for _, d := range []string{running, settingUp, notARun} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(d), err)
		}
	}
}
