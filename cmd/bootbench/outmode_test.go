package main

import (
	"os"
	"path/filepath"
	"testing"
)

// underUmask runs bootbench with umask mask, as a user's shell would.
func underUmask(mask string) []string {
	return []string{"sh", "-c", `umask "$0" && exec "$@"`, mask}
}

// TestOutputFilesRespectUmask: the files results export -o and image
// build -o write get the mode the user's umask gives a new file, and a
// file written over keeps its own mode: never wider than the user made it.
func TestOutputFilesRespectUmask(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	if r := (invocation{args: []string{"import", "--board", "rb450", "--clock", "300", "--db", db, rb450Fixture}}).run(t); r.code != 0 {
		t.Fatalf("import: %s", r.stderr)
	}
	export := func(out string) []string {
		return []string{"results", "export", "--format", "csv", "--db", db, "-o", out}
	}
	image := func(out string) []string {
		return []string{"image", "build", "--arch", "amd64", "--format", "cpio.gz", "-o", out}
	}
	tests := []struct {
		name     string
		args     func(out string) []string
		umask    string
		existing os.FileMode // 0: no file there before
		want     os.FileMode
	}{
		{"export, new file, umask 077", export, "077", 0, 0o600},
		{"export, new file, umask 027", export, "027", 0, 0o640},
		{"export, new file, umask 022", export, "022", 0, 0o644},
		{"export over a 0600 file, umask 022", export, "022", 0o600, 0o600},
		{"export over a 0640 file, umask 077", export, "077", 0o640, 0o640},
		{"image, new file, umask 077", image, "077", 0, 0o600},
		{"image over a 0600 file, umask 022", image, "022", 0o600, 0o600},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", string(rune('a'+i)))
			os.MkdirAll(filepath.Dir(out), 0o755)
			if tt.existing != 0 {
				if err := os.WriteFile(out, []byte("old\n"), tt.existing); err != nil {
					t.Fatal(err)
				}
				os.Chmod(out, tt.existing) // whatever the test's own umask
			}
			r := invocation{args: tt.args(out), prefix: underUmask(tt.umask)}.run(t)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != tt.want {
				t.Errorf("mode %04o, want %04o", got, tt.want)
			}
			if fi.Size() <= 4 {
				t.Errorf("%s holds %d bytes: not written", out, fi.Size())
			}
		})
	}
}
