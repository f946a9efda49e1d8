// Package benchmark is the one registry of the benchmarks bootbench runs:
// their names, what each puts in the image, and what it needs of the
// bench. run, the inventory, image build and --help all read it, so a
// name is spelled once. Each benchmark is one file that registers itself
// (speed.go, dd.go, openssl.go, route.go); the board's side of each is
// cmd/benchinit's.
//
//	benchmark.Register(benchmark.Benchmark{Name: "dd", Help: "...", Image: benchmark.Image{Command: true}})
//	bm, err := benchmark.Lookup("dd")
//
// It imports nothing of bootbench: board facts (the inventory) read it.
package benchmark

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Benchmark is one benchmark as the host knows it.
type Benchmark struct {
	Name string
	// Help says in a few words what it measures, for --help.
	Help  string
	Image Image
	// HostNetworks is a benchmark the host drives through networks on
	// either side of the board (route): only a run that has them can
	// run it, never a board serve answers.
	HostNetworks bool
	// Algorithms are the names --algs may give, so that a typo is
	// refused on the host before a board boots; nil where the host
	// cannot know them.
	Algorithms []string
	// Output is the format the board's output is parsed as (one of
	// results/parse's Formats: "openssl", "dd"), so that it is read as
	// what it is, not guessed; "" for a benchmark whose figures the
	// host measures itself (route).
	Output string
}

// Image is what a benchmark puts in the image.
type Image struct {
	// BuiltIn is a benchmark built into benchinit: no command of its
	// own may be given.
	BuiltIn bool
	// Command is a program the image builder adds (openssl): a name
	// without one needs its command given (image build --bench-cmd).
	Command bool
	// KernelModules are modules of the board's kernel the image carries,
	// with what they depend on.
	KernelModules []string
}

var (
	mu     sync.RWMutex
	byName = map[string]Benchmark{}
)

// Register adds b; a second benchmark of the same name is a programming
// error.
func Register(b Benchmark) {
	mu.Lock()
	defer mu.Unlock()
	if b.Name == "" || strings.ContainsAny(b.Name, " ,=") {
		panic(fmt.Sprintf("benchmark: bad name %q", b.Name))
	}
	if _, ok := byName[b.Name]; ok {
		panic("benchmark: " + b.Name + " registered twice")
	}
	byName[b.Name] = b
}

// Unregister removes a benchmark, for tests that register a toy one.
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	delete(byName, name)
}

// Lookup finds a benchmark by name; the error lists the known ones.
func Lookup(name string) (Benchmark, error) {
	mu.RLock()
	b, ok := byName[name]
	mu.RUnlock()
	if !ok {
		return Benchmark{}, fmt.Errorf("unknown benchmark %q (%s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// Names lists the benchmarks, speed first (the default), then by name.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == Speed) != (names[j] == Speed) {
			return names[i] == Speed
		}
		return names[i] < names[j]
	})
	return names
}

// Served lists the benchmarks a board can run by itself, as an inventory
// job that serve answers: those the host need not drive.
func Served() []string {
	return slices.DeleteFunc(Names(), func(n string) bool {
		b, _ := Lookup(n)
		return b.HostNetworks
	})
}

// Help is one line per benchmark, for a flag's usage: "speed (...), ...".
func Help() string {
	var parts []string
	for _, n := range Names() {
		b, _ := Lookup(n)
		parts = append(parts, n+" ("+b.Help+")")
	}
	return strings.Join(parts, ", ")
}
