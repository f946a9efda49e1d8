// Package srcgrep finds lines in the module's Go files, for the tests
// that hold every package to a rule a pattern can see (no test builds
// its own environment, no test reads BOOTBENCH_E2E itself).
package srcgrep

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Hit is one line that matched.
type Hit struct {
	Path string // relative to the root searched
	Line int    // counted from 1
	Text string // without surrounding space
}

// Lines returns the lines that match any of patterns in the Go files below
// root that want accepts (given each file's path), and how many files it
// read; testdata and hidden folders are not the module's code and are left
// out.
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
		if !strings.HasSuffix(path, ".go") || !want(path) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		rel, _ := filepath.Rel(root, path)
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
