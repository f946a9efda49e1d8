package layers

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/bootbench/bootbench"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list reads go list -json -deps for every package of the module.
func list(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

func inModule(path string) (string, bool) {
	if path == module {
		return "", true
	}
	return strings.CutPrefix(path, module+"/")
}

// TestImportsPointDown: no package imports one on a higher layer, and
// every package has a place in Layers.
func TestImportsPointDown(t *testing.T) {
	for _, p := range list(t) {
		path, _ := inModule(p.ImportPath)
		from, ok := Of(path)
		if !ok {
			t.Errorf("package %s has no layer: place it in Layers (and in the README's Layout)", path)
			continue
		}
		for _, imp := range p.Imports {
			ipath, ok := inModule(imp)
			if !ok {
				continue
			}
			to, ok := Of(ipath)
			if ok && to > from {
				t.Errorf("%s (%s) imports %s (%s), a higher layer", path, from, ipath, to)
			}
		}
	}
}

// TestHarnessKnowsNoBench keeps the harness free of the concrete benches
// and the benchmarks' host sides (adapters/) and of the rig that wires
// them: a real bench's boards must be runnable with the same code, and a
// benchmark is a plug-in.
func TestHarnessKnowsNoBench(t *testing.T) {
	for _, p := range list(t) {
		path, _ := inModule(p.ImportPath)
		if path != "harness" && !strings.HasPrefix(path, "harness/") && path != "boot" {
			continue
		}
		for _, dep := range p.Deps {
			d, ok := inModule(dep)
			if !ok {
				continue
			}
			for _, banned := range forbiddenForHarness {
				if d == banned || strings.HasPrefix(d, banned+"/") {
					t.Errorf("%s depends on %s", path, d)
				}
			}
		}
	}
}

// forbiddenForHarness are the folders the harness must not depend on.
var forbiddenForHarness = []string{"adapters", "rig"}

// TestTestkitOnlyForTests: no package but a test (or another of the kit)
// imports internal/testkit, so the kit's folder holds only what tests
// share and the program links none of it.
func TestTestkitOnlyForTests(t *testing.T) {
	const kit = "internal/testkit"
	for _, p := range list(t) {
		path, _ := inModule(p.ImportPath)
		if strings.HasPrefix(path, kit+"/") {
			continue
		}
		for _, imp := range p.Imports {
			if ipath, ok := inModule(imp); ok && strings.HasPrefix(ipath, kit+"/") {
				t.Errorf("%s imports %s: test scaffolding is for tests only", path, ipath)
			}
		}
	}
}

// TestBootAndHarnessLinkNoDatabase keeps the run's record apart from its
// store: the harness saves a run through results.Saver, so neither boot
// nor the harness links a database driver (nor database/sql); only
// results/store does, and what opens one. results/store itself is the
// check's witness: a driver there must be seen, or the check sees nothing.
func TestBootAndHarnessLinkNoDatabase(t *testing.T) {
	drivers := map[string][]string{}
	for _, p := range list(t) {
		path, _ := inModule(p.ImportPath)
		for _, dep := range p.Deps {
			if isDatabase(dep) {
				drivers[path] = append(drivers[path], dep)
			}
		}
	}
	for _, path := range []string{"boot", "harness"} {
		if d := drivers[path]; len(d) > 0 {
			t.Errorf("%s depends on %s: it must know no more of a store than results.Saver", path, strings.Join(d, ", "))
		}
	}
	var pgx, sqlite bool
	for _, d := range drivers["results/store"] {
		pgx = pgx || strings.Contains(d, "/pgx/")
		sqlite = sqlite || strings.Contains(d, "sqlite")
	}
	if !pgx || !sqlite {
		t.Errorf("results/store's drivers not seen among its dependencies (pgx %v, sqlite %v): the check above cannot fail", pgx, sqlite)
	}
}

// isDatabase says whether a package is a database driver or database/sql.
func isDatabase(path string) bool {
	return path == "database/sql" || strings.HasPrefix(path, "database/sql/") ||
		strings.Contains(path, "/pgx/") || strings.Contains(path, "sqlite")
}

// TestOf places packages by the longest entry above them.
func TestOf(t *testing.T) {
	for path, want := range map[string]Layer{
		"results/gate": Actions, "results/parse": Contracts, "adapters/vbench": Adapters, "rig": Rig,
		"cmd/bootbench/internal/nocache": Commands, "contract/frame": Contracts,
		"internal/testkit/frametest": Actions, "internal/redact": Contracts, "internal/kernels": Actions,
	} {
		if got, ok := Of(path); !ok || got != want {
			t.Errorf("Of(%s) = %v, %v; want %v", path, got, ok, want)
		}
	}
	if _, ok := Of("nowhere"); ok {
		t.Error("an unplaced package has a layer")
	}
}
