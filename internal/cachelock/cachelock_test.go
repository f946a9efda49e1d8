package cachelock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestOnceBuildsOnce: of two processes that want the same entry at once,
// one builds it and the other finds it built. The builders are separate
// processes, as two bootbench runs are: flock is per open file, so this
// holds within one process too, but across processes is what matters.
func TestOnceBuildsOnce(t *testing.T) {
	if os.Getenv("CACHELOCK_CHILD") != "" {
		child()
		return
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestOnceBuildsOnce$")
		cmd.Env = []string{"CACHELOCK_CHILD=" + dir}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "builds"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "built\n"); n != 1 {
		t.Fatalf("the entry was built %d times, want once:\n%s", n, b)
	}
	if entry, _ := os.ReadFile(filepath.Join(dir, "entry")); string(entry) != "whole" {
		t.Fatalf("entry = %q", entry)
	}
}

// child builds dir/entry slowly, logging each build to dir/builds.
func child() {
	dir := os.Getenv("CACHELOCK_CHILD")
	entry := filepath.Join(dir, "entry")
	err := Once(context.Background(), entry+".lock",
		func() bool { _, err := os.Stat(entry); return err == nil },
		nil,
		func() error {
			log, err := os.OpenFile(filepath.Join(dir, "builds"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer log.Close()
			time.Sleep(500 * time.Millisecond) // long enough for the other to arrive
			log.WriteString("built\n")
			return os.WriteFile(entry, []byte("whole"), 0o644)
		})
	if err != nil {
		os.Exit(1)
	}
}

func TestLockWaitsAndEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	unlock, err := Lock(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Another open file description is another holder, as another
	// process would be.
	var waited atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path, func() { waited.Add(1) }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Lock while held: %v, want the context's end", err)
	}
	if waited.Load() != 1 {
		t.Fatalf("waiting called %d times, want 1", waited.Load())
	}
	unlock()
	unlock2, err := Lock(context.Background(), path, func() { t.Error("waited for a free lock") })
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

func TestOnceReportsBuildError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	boom := errors.New("boom")
	if err := Once(context.Background(), path, func() bool { return false }, nil, func() error { return boom }); err != boom {
		t.Fatalf("Once = %v, want the build's error", err)
	}
}
