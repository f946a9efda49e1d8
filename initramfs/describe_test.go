package initramfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDescribeKeepsItsFindings: a second look at the same cached image
// reads what the first found; a changed file is looked at again.
func TestDescribeKeepsItsFindings(t *testing.T) {
	p := filepath.Join(t.TempDir(), "initramfs-x.cpio")
	if err := os.WriteFile(p, []byte("an image, as far as describe can tell"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := describe(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(describedPath(p)); err != nil {
		t.Fatalf("no description kept: %v", err)
	}
	again, err := describe(p)
	if err != nil || *again != *first {
		t.Fatalf("again: %+v, %v; want %+v", again, err, first)
	}
	// A description of another file (its size and time differ) is not taken.
	os.WriteFile(describedPath(p), []byte(describedVersion+" 37 0 x 1\n"), 0o644)
	st, _ := os.Stat(p)
	if _, ok := describedBefore(p, st); ok {
		t.Error("a description of another file was taken")
	}

	if err := os.WriteFile(p, []byte("another image, of another size"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Now(), time.Now().Add(time.Second))
	changed, err := describe(p)
	if err != nil || changed.Digest == first.Digest || changed.Size != 30 {
		t.Errorf("changed file: %+v, %v", changed, err)
	}
}
