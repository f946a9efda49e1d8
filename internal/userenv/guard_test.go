package userenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ownEnv are the ways a test could hand a program go test's environment,
// or build one of its own, instead of asking this package.
var ownEnv = []*regexp.Regexp{
	regexp.MustCompile(`os\.Environ\(\)`),
	regexp.MustCompile(`exec\.Command(Context)?\([^)]*bootbenchBin`),
	regexp.MustCompile(`exec\.Command(Context)?\(\s*"make"`),
}

// TestNoTestBuildsItsOwnEnvironment: every test of the module that starts
// bootbench, make or a bench script does it through this package.
func TestNoTestBuildsItsOwnEnvironment(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == self {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for _, re := range ownEnv {
				if re.MatchString(line) {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d: %s — start it with userenv.Command or userenv.Environ", rel, i+1, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d test files under %s", checked, root)
	}
}
