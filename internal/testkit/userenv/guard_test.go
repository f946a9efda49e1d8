package userenv

import (
	"regexp"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/srcgrep"
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
	others := func(rel string) bool {
		return strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, "internal/testkit/userenv/")
	}
	for _, h := range srcgrep.InModule(t, others, ownEnv...) {
		t.Errorf("%s:%d: %s — start it with userenv.Command or userenv.Environ", h.Path, h.Line, h.Text)
	}
}
