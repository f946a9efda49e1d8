package userenv

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	goVars := map[string]bool{"GOROOT": true, "GOPATH": true, "GOFLAGS": true, "CC": true}
	for _, tt := range []struct {
		name    string
		in, out []string
	}{{
		name: "go test's settings and its PATH entry go",
		in:   []string{"HOME=/home/u", "GOROOT=/usr/local/go", "GOPATH=/home/u/go", "GOFLAGS=-mod=mod", "PATH=/usr/local/go/bin:/usr/local/go/bin:/usr/bin", "BOOTBENCH_DB=x"},
		out:  []string{"HOME=/home/u", "PATH=/usr/local/go/bin:/usr/bin", "BOOTBENCH_DB=x"},
	}, {
		name: "a PATH that does not start with GOROOT/bin is the user's",
		in:   []string{"GOROOT=/opt/go", "PATH=/usr/bin:/opt/go/bin"},
		out:  []string{"PATH=/usr/bin:/opt/go/bin"},
	}, {
		name: "no GOROOT: PATH untouched",
		in:   []string{"PATH=/usr/local/go/bin:/usr/bin", "CC=gcc"},
		out:  []string{"PATH=/usr/local/go/bin:/usr/bin"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, goVars); !slices.Equal(got, tt.out) {
				t.Errorf("Clean:\n got %q\nwant %q", got, tt.out)
			}
		})
	}
}

// Under go test, the environment has GOROOT; the user's has not, and what
// the environment hands a child shows it.
func TestEnvironHasNoGoSettings(t *testing.T) {
	if os.Getenv("GOROOT") == "" {
		t.Log("GOROOT is not set in this test's environment (not run by go test?)")
	}
	out, err := Command([]string{"BOOTBENCH_X=1", "HOME=/nowhere"}, "env").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "GOROOT" || k == "GOPATH" || k == "GOFLAGS" || k == "GOCACHE" || k == "GOMODCACHE" || k == "GOTOOLCHAIN" {
			t.Errorf("child environment has %s", kv)
		}
	}
	if !slices.Contains(env, "BOOTBENCH_X=1") || !slices.Contains(env, "HOME=/nowhere") || slices.Contains(env, "HOME="+os.Getenv("HOME")) && os.Getenv("HOME") != "/nowhere" {
		t.Errorf("extra settings not applied once: %q", env)
	}
	if _, err := exec.LookPath("go"); err == nil {
		// The go on the user's PATH still answers, and its GOROOT is its own.
		cmd := Command(nil, "go", "env", "GOROOT")
		if b, err := cmd.Output(); err != nil || strings.TrimSpace(string(b)) == "" {
			t.Errorf("go env GOROOT in the user environment: %q, %v", b, err)
		}
	}
}
