// Package userenv gives the tests that start bootbench (or make, or a bench
// script) the environment a user's login shell has, not the one go test
// hands its test binaries.
//
// go test exports the go command's own settings into every test binary's
// environment — GOROOT, GOPATH, GOFLAGS, GOCACHE, GOMODCACHE, GOTOOLCHAIN and
// the rest of `go env` — and puts $GOROOT/bin first on PATH. A user's shell
// has none of that, and a bootbench that only works with it (one that finds
// its Go toolchain through GOROOT, say) fails on the user's first command
// while every test passes. Every test that starts a program a user would
// start takes its environment from here, and no test builds its own.
package userenv

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// goSettings are the names `go env` knows, read once from the go command
// on PATH. Without a go command there is nothing it could have exported.
var goSettings = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	out, err := exec.Command("go", "env", "-json").Output()
	if err != nil {
		return names
	}
	var env map[string]any
	if json.Unmarshal(out, &env) == nil {
		for k := range env {
			names[k] = true
		}
	}
	return names
})

// Environ is this process's environment as a user's shell would have it
// (see Clean), with extra ("KEY=value") set on top, replacing any earlier
// value of the same key.
func Environ(extra ...string) []string {
	env := Clean(os.Environ(), goSettings())
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, kv)
	}
	return env
}

// Clean removes from env every variable named in goVars and the
// $GOROOT/bin that go test put first on PATH, leaving PATH otherwise as
// given.
func Clean(env []string, goVars map[string]bool) []string {
	var goroot string
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "GOROOT" {
			goroot = v
		}
		if !goVars[k] && k != "GOROOT" {
			out = append(out, kv)
		}
	}
	if goroot == "" {
		return out
	}
	for i, kv := range out {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			first, rest, _ := strings.Cut(path, string(os.PathListSeparator))
			if filepath.Clean(first) == filepath.Join(goroot, "bin") {
				out[i] = "PATH=" + rest
			}
		}
	}
	return out
}

// Command is exec.Command with the user's environment, extra set on top.
func Command(extra []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = Environ(extra...)
	return cmd
}
