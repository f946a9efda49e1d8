package needs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/srcgrep"
)

// ending is a test that records how it was ended, and ends its goroutine
// there as testing's Fatal and Skip do.
type ending struct {
	testing.TB
	how, msg string // "fatal" or "skip" and what it said; "" when it ran on
}

func (e *ending) Helper() {}

func (e *ending) Fatal(args ...any) {
	e.how, e.msg = "fatal", fmt.Sprint(args...)
	runtime.Goexit()
}

func (e *ending) Skip(args ...any) {
	e.how, e.msg = "skip", fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls f with an ending test on a goroutine of its own.
func run(f func(testing.TB)) *ending {
	e := &ending{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(e)
	}()
	<-done
	return e
}

// TestEnds: what is missing fails the test under BOOTBENCH_E2E=1 (and only
// "1"), skips it otherwise saying how to make it a failure, and a test
// that has all it needs runs on.
func TestEnds(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "present"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	rootHow, rootMsg := "", ""
	if os.Geteuid() != 0 {
		rootHow, rootMsg = "skip", "needs root for a namespace; BOOTBENCH_E2E=1 makes this a failure"
	}
	for _, tt := range []struct {
		name, e2e string
		f         func(testing.TB)
		how, msg  string
	}{
		{"unmet e2e", "1", func(t testing.TB) { Unmet(t, "no board") }, "fatal", "no board"},
		{"unmet", "", func(t testing.TB) { Unmet(t, "no board") }, "skip", "no board; BOOTBENCH_E2E=1 makes this a failure"},
		{"unmet e2e=0", "0", func(t testing.TB) { Unmet(t, "no board") }, "skip", "no board; BOOTBENCH_E2E=1 makes this a failure"},
		{"commands present", "1", func(t testing.TB) { Commands(t, "present") }, "", ""},
		{"commands one missing", "", func(t testing.TB) { Commands(t, "present", "absent") }, "skip", "missing absent (make deps installs it); BOOTBENCH_E2E=1 makes this a failure"},
		{"commands missing e2e", "1", func(t testing.TB) { Commands(t, "absent-a", "present", "absent-b") }, "fatal", "missing absent-a, absent-b (make deps installs them)"},
		{"root", "", func(t testing.TB) { Root(t, "needs root for a namespace") }, rootHow, rootMsg},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("BOOTBENCH_E2E", tt.e2e)
			e := run(tt.f)
			if e.how != tt.how || e.msg != tt.msg {
				t.Errorf("ended %q with %q; want %q with %q", e.how, e.msg, tt.how, tt.msg)
			}
		})
	}
}

// readsE2E is a test deciding for itself what BOOTBENCH_E2E means.
var readsE2E = regexp.MustCompile(`(Getenv|LookupEnv)\("BOOTBENCH_E2E"\)`)

// TestOnlyHereReadsE2E: every Go file of the module leaves BOOTBENCH_E2E to
// this package, so the rule cannot drift apart again.
func TestOnlyHereReadsE2E(t *testing.T) {
	others := func(rel string) bool { return !strings.HasPrefix(rel, "internal/testkit/needs/") }
	for _, h := range srcgrep.InModule(t, others, readsE2E) {
		t.Errorf("%s:%d: %s — ask needs.E2E, or end the test with needs.Unmet", h.Path, h.Line, h.Text)
	}
}
