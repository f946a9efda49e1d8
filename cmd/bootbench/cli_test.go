package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIErrors checks bad input gives exit 2 and one line saying what to do,
// and --help teaches, without any board or root.
func TestCLIErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	tests := []struct {
		args     []string
		code     int
		inStderr string
		inStdout string
	}{
		{[]string{}, 2, "no command given", ""},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{[]string{"run", "--board", "rb9999"}, 2, `unknown board "rb9999" (known: pc-x86_64, qemu-arm64, qemu-mipsel, qemu-x86_64, rb1100, rb450`, ""},
		{[]string{"run", "--clock", "680"}, 2, "no clock setting 680 MHz", ""},
		{[]string{"run", "--reps", "0"}, 2, "--reps must be at least 1", ""},
		{[]string{"run", "--transport", "nfs"}, 2, "--transport must be http or tftp", ""},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined: -bogus", ""},
		{[]string{"results", "show", "nope"}, 2, `no run "nope"`, ""},
		{[]string{"results", "export", "--format", "yaml"}, 2, `unknown format "yaml"`, ""},
		{[]string{"image", "build", "--arch", "sparc"}, 2, "unknown arch", ""},
		{[]string{"run", "--help"}, 0, "", "Netboots the board"},
		{[]string{"boards", "list"}, 0, "", "qemu-x86_64"},
		{[]string{"results", "list"}, 0, "", "RUN"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.inStderr) || !strings.Contains(r.stdout, tt.inStdout) {
				t.Errorf("stderr %q stdout %q; want %q / %q", r.stderr, r.stdout, tt.inStderr, tt.inStdout)
			}
			// Bad input is one line; only a bare "bootbench" also shows the usage.
			if tt.code == 2 && len(tt.args) > 0 {
				if n := strings.Count(strings.TrimSpace(r.stderr), "\n") + 1; n != 1 {
					t.Errorf("error is %d lines, want one:\n%s", n, r.stderr)
				}
			}
		})
	}
}
