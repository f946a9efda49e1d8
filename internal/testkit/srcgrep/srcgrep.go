// Package srcgrep finds lines in the module's Go files, for the tests
// that hold every package to a rule a pattern can see (no test builds
// its own environment, no test reads BOOTBENCH_E2E itself).
package srcgrep

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Hit is one line that matched.
type Hit struct {
	Path string // relative to the root searched, with slashes
	Line int    // counted from 1
	Text string // without surrounding space
}

// InModule returns the lines that match any of patterns in the module's
// Go files that want accepts (given each file's path from the module's
// root, with slashes). It fails t when the module cannot be read, or when
// want accepted fewer than ten files: a guard that reads nothing would
// pass for nothing.
func InModule(t testing.TB, want func(rel string) bool, patterns ...*regexp.Regexp) []Hit {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	hits, read, err := Lines(root, want, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if read < 10 {
		t.Fatalf("checked only %d Go files under %s", read, root)
	}
	return hits
}

// moduleRoot is the nearest folder at or above this one with a go.mod: a
// test runs in its package's folder.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod at or above the test's folder")
		}
		dir = up
	}
}

// Lines returns the lines that match any of patterns in the Go files below
// root that want accepts (given each file's path from root, with slashes),
// and how many files it read; testdata and hidden folders are not the
// module's code and are left out.
func Lines(root string, want func(path string) bool, patterns ...*regexp.Regexp) (hits []Hit, read int, err error) {
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(path, ".go") || !want(rel) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		for i, line := range strings.Split(string(b), "\n") {
			for _, re := range patterns {
				if re.MatchString(line) {
					hits = append(hits, Hit{rel, i + 1, strings.TrimSpace(line)})
					break
				}
			}
		}
		return nil
	})
	return hits, read, err
}
