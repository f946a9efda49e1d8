// Package layers writes down the module's layers, lowest first, for the
// test that keeps every import pointing down (or across, within a layer).
// The folders are the layers:
//
//	contracts  facts and formats both sides agree on: contract/ (the
//	           board↔host contract: frames, kernel command line, the
//	           OpenWrt ELF command line area and wiki recipe), boards,
//	           benchmark, speed, results/parse
//	actions    what can be done, each alone: netboot, serialctl,
//	           harness/power, initramfs, plan, results, internal/
//	           (internal/testkit: what only tests import)
//	boot       what a board gets when it netboots, and the servers
//	harness    one run's state machine, through interfaces only
//	adapters   adapters/: the concrete benches (vbench, benchnic), the
//	           host sides of benchmarks (route, routenet) and the bench
//	           page (benchpage), which shows the harness's events
//	rig        a board readied to run on its bench, for commands and tests
//	commands   cmd/*: flags and wiring; bench, the measurements' scripts;
//	           scripts, the repository's own tools
//
// A package is placed by the longest entry of Layers that is its path
// or a folder above it, so results/gate sits with results.
package layers

// Layer is a rank: a package may import packages of its own layer or
// lower ones.
type Layer int

const (
	Contracts Layer = iota
	Actions
	Boot
	Harness
	Adapters
	Rig
	Commands
)

var names = [...]string{"contracts", "actions", "boot", "harness", "adapters", "rig", "commands"}

func (l Layer) String() string { return names[l] }

// Layers places the module's packages, by path inside the module.
var Layers = map[string]Layer{
	"contract":        Contracts,
	"boards":          Contracts,
	"benchmark":       Contracts,
	"speed":           Contracts,
	"results/parse":   Contracts,
	"internal/redact": Contracts, // credentials out of messages, logs and stored text; boards quotes inventory URLs

	"netboot":       Actions,
	"serialctl":     Actions,
	"harness/power": Actions,
	"initramfs":     Actions,
	"plan":          Actions,
	"results":       Actions,
	"internal":      Actions,

	"boot":     Boot,
	"harness":  Harness,
	"adapters": Adapters,
	"rig":      Rig,

	"cmd":     Commands,
	"bench":   Commands, // the measurements' scripts, run by their test
	"scripts": Commands, // the repository's own tools (testsummary: make test's report)
}

// Of is the layer of the package at path (inside the module); ok is false
// for a package no entry places.
func Of(path string) (l Layer, ok bool) {
	for p := path; ; {
		if l, ok := Layers[p]; ok {
			return l, true
		}
		i := lastSlash(p)
		if i < 0 {
			return 0, false
		}
		p = p[:i]
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
