// Package layers writes down the module's layers, lowest first, for the
// test that keeps every import pointing down (or across, within a layer):
//
//	contracts  facts and formats both sides agree on: boards, benchmark,
//	           speed, results/parse, internal/frame, internal/bootparam
//	actions    what can be done, each alone: netboot, serialctl,
//	           harness/power, initramfs, plan, results, internal/*
//	boot       what a board gets when it netboots, and the servers
//	harness    one run's state machine, through interfaces only
//	adapters   the concrete benches (vbench, internal/benchnic), the
//	           host sides of benchmarks (internal/route) and the bench
//	           page (internal/benchpage), which shows the harness's events
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
	Commands
)

var names = [...]string{"contracts", "actions", "boot", "harness", "adapters", "commands"}

func (l Layer) String() string { return names[l] }

// Layers places the module's packages, by path inside the module.
var Layers = map[string]Layer{
	"boards":               Contracts,
	"benchmark":            Contracts,
	"speed":                Contracts,
	"results/parse":        Contracts,
	"internal/frame":       Contracts,
	"internal/bootparam":   Contracts,
	"internal/elfcmdline":  Contracts, // the OpenWrt ELF command line area, read by the image builder and the virtual RouterBOOT
	"internal/owner":       Contracts,
	"internal/junitxsd":    Contracts,
	"internal/openwrtwiki": Contracts, // the OpenWrt wiki recipe's /proc/cpuinfo lines, chosen on the board, printed by the export
	"internal/nftnl":       Contracts, // nf_tables messages in raw netlink, for the board side of the route benchmark
	"internal/redact":      Contracts, // credentials out of messages, logs and stored text; boards quotes inventory URLs

	"netboot":              Actions,
	"serialctl":            Actions,
	"harness/power":        Actions,
	"initramfs":            Actions,
	"plan":                 Actions,
	"results":              Actions,
	"internal/cachelock":   Actions, // one build of a shared cache entry at a time
	"internal/debpkg":      Actions,
	"internal/kernels":     Actions,
	"internal/pgtest":      Actions,
	"internal/layers":      Actions,
	"internal/userenv":     Actions, // a user's environment for the programs tests start
	"internal/needs":       Actions, // what a test does when something it needs is missing: fail under BOOTBENCH_E2E=1, else skip
	"internal/srcgrep":     Actions, // lines of the module's Go files, for the tests that hold every package to a rule
	"internal/quietseg":    Actions, // bench segments found with no other DHCP server minutes ago
	"internal/dnsmasqtest": Actions, // dnsmasq as a Raspberry Pi user runs it, for the Pi twin\'s tests

	"boot": Boot,

	"harness": Harness,

	"vbench":             Adapters,
	"internal/benchnic":  Adapters,
	"internal/route":     Adapters, // the route benchmark's host side, a harness.HostDriver
	"internal/routenet":  Adapters, // the route benchmark's two host networks, virtual or a real bench's NICs
	"internal/benchpage": Adapters, // serve's bench page, a view of the harness's events and the consoles

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
