// Package needs says, in one place, what a test does when something it
// needs is missing here: a command, root, a package, hardware. Under
// BOOTBENCH_E2E=1 (make test, CI) the test fails; elsewhere it skips.
package needs

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// E2E reports whether the end-to-end tests were asked for
// (BOOTBENCH_E2E=1): then nothing a test needs may be missing, and no
// test may skip for want of time either.
func E2E() bool { return os.Getenv("BOOTBENCH_E2E") == "1" }

// Unmet ends t because msg, something it needs, is missing. An
// end-to-end test that cannot run must fail loudly in CI: a skip there
// reads as a pass and hides a machine that tests nothing. On a
// developer's machine without the bench's tools it skips, and says how
// to make that a failure.
func Unmet(t testing.TB, msg string) {
	t.Helper()
	if E2E() {
		t.Fatal(msg)
	}
	t.Skip(msg + "; BOOTBENCH_E2E=1 makes this a failure")
}

// Missing returns those of names that are not commands on PATH, in order.
func Missing(names ...string) []string {
	var missing []string
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			missing = append(missing, n)
		}
	}
	return missing
}

// Commands ends t (Unmet) unless every one of names is a command on
// PATH; the message names every one missing.
func Commands(t testing.TB, names ...string) {
	t.Helper()
	missing := Missing(names...)
	if len(missing) == 0 {
		return
	}
	them := "them"
	if len(missing) == 1 {
		them = "it"
	}
	Unmet(t, "missing "+strings.Join(missing, ", ")+" (make deps installs "+them+")")
}

// Root ends t (Unmet) with msg, which says what root is needed for,
// unless the test runs as root.
func Root(t testing.TB, msg string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unmet(t, msg)
	}
}
