package userenv

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/srcgrep"
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
	test := func(path string) bool { return strings.HasSuffix(path, "_test.go") && filepath.Dir(path) != self }
	hits, read, err := srcgrep.Lines(root, test, ownEnv...)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("%s:%d: %s — start it with userenv.Command or userenv.Environ", h.Path, h.Line, h.Text)
	}
	if read < 10 {
		t.Fatalf("checked only %d test files under %s", read, root)
	}
}
