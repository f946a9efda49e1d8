package owner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// zombie starts a process that exits at once and is never waited for: it
// stays in the process table, state Z, until the test reaps it.
func zombie(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return pid
		}
	}
	t.Fatalf("process %d never became a zombie", pid)
	return 0
}

func TestAlive(t *testing.T) {
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	reaped := exec.Command("true")
	if err := reaped.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{"this process", os.Getpid(), true},
		{"a running child", sleeper.Process.Pid, true},
		{"init (not ours: EPERM)", 1, true},
		{"a zombie (killed, not yet reaped)", zombie(t), false},
		{"a reaped process", reaped.Process.Pid, false},
	}
	for _, tt := range tests {
		if got := Alive(tt.pid); got != tt.want {
			t.Errorf("Alive(%s, pid %d) = %v, want %v", tt.name, tt.pid, got, tt.want)
		}
	}
}

// TestOrphansOfZombie: a bootbench killed with SIGKILL whose parent has
// not reaped it yet left its directory behind: the next one sweeps it.
func TestOrphansOfZombie(t *testing.T) {
	base := t.TempDir()
	dead := filepath.Join(base, "run-dead")
	live := filepath.Join(base, "run-live")
	for _, d := range []string{dead, live} {
		os.Mkdir(d, 0o755)
	}
	os.WriteFile(filepath.Join(dead, file), []byte(strconv.Itoa(zombie(t))+" ns-dead\n"), 0o644)
	if err := Claim(live, "ns-live"); err != nil {
		t.Fatal(err)
	}
	got := Orphans(filepath.Join(base, "run-*"))
	if len(got) != 1 || got[0].Dir != dead || got[0].Note != "ns-dead" {
		t.Errorf("Orphans = %+v, want only %s (its owner is a zombie)", got, dead)
	}
}
