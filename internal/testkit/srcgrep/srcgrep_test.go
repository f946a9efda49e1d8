package srcgrep

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestLines: matching lines of the Go files wanted, numbered from 1 and
// trimmed, once however many patterns match; testdata, hidden folders,
// other files and the files want refuses are not read.
func TestLines(t *testing.T) {
	root := t.TempDir()
	for path, text := range map[string]string{
		"a.go":            "package a\n\tos.Getenv(\"X\")  \n",
		"b/b_test.go":     "package b\n\n\tos.Getenv(\"X\") // Y\n",
		"b/skip.go":       "os.Getenv(\"X\")\n",
		"b/testdata/t.go": "os.Getenv(\"X\")\n",
		".git/hooks/h.go": "os.Getenv(\"X\")\n",
		"notes.txt":       "os.Getenv(\"X\")\n",
		"c/c.go":          "package c\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := func(rel string) bool { return rel != "b/skip.go" }
	hits, read, err := Lines(root, want, regexp.MustCompile(`Getenv\("X"\)`), regexp.MustCompile(`// Y`))
	if err != nil {
		t.Fatal(err)
	}
	wantHits := []Hit{
		{"a.go", 2, `os.Getenv("X")`},
		{"b/b_test.go", 3, `os.Getenv("X") // Y`},
	}
	if !reflect.DeepEqual(hits, wantHits) || read != 3 {
		t.Errorf("Lines = %+v, read %d; want %+v, read 3", hits, read, wantHits)
	}
}

// TestInModule finds the module's root from this package's folder, and the
// module's files by their paths from there (TestLines checks the rest).
func TestInModule(t *testing.T) {
	internal := func(rel string) bool { return strings.HasPrefix(rel, "internal/") }
	var paths []string
	for _, h := range InModule(t, internal, regexp.MustCompile(`^package srcgrep$`)) {
		paths = append(paths, h.Path)
	}
	want := []string{"internal/testkit/srcgrep/srcgrep.go", "internal/testkit/srcgrep/srcgrep_test.go"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("InModule found package srcgrep in %q; want %q", paths, want)
	}
}
