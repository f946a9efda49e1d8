package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// outsideTree runs a copy of the binary outside the source tree, as a
// user with a release binary and no prebuilt set would: its cache holds
// the kernels (fetching them is no part of these tests) and no images.
func outsideTree(t *testing.T, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bootbench")
	data, err := os.ReadFile(bootbenchBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(testCache, "kernels"), filepath.Join(cache, "kernels")); err != nil {
		t.Fatal(err)
	}
	env := []string{"BOOTBENCH_CACHE=" + cache, "BOOTBENCH_DB=" + filepath.Join(dir, "r.db"), "BOOTBENCH_SRC=", "BOOTBENCH_PREBUILT="}
	cmd := userenv.Command(env, bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.db")); err == nil {
		t.Errorf("%v created the results store", args)
	}
	return result{code, out.String(), errb.String()}
}

// TestSetupFailuresOutsideTree: outside the source tree with no prebuilt
// set, a board model whose RAM check needs an image gets the inventory
// hint every model gets, not an image error; and a board that has no
// image to boot is a setup failure, one line and exit 2, as README says.
func TestSetupFailuresOutsideTree(t *testing.T) {
	oneLine(t, outsideTree(t, "run", "--board", "wrt54g-v3"), 2,
		"wrt54g-v3 is a board model, not a board on this bench: add a board with profile: wrt54g-v3 to bench.yaml")
	oneLine(t, outsideTree(t, "run", "--board", "qemu-x86_64", "--boot-timeout", "1s", "--retries", "0"), 2,
		"run: image for qemu-x86_64: cannot build the amd64 image: no bootbench source tree")
}

// TestConsoleMissingPort: a console that is not there is a setup
// failure: one line naming it, exit 2.
func TestConsoleMissingPort(t *testing.T) {
	inv, _ := markerBench(t)
	oneLine(t, bootbench(t, emptyStore(t), "console", "pc1", "--inventory", inv), 2, "no console "+filepath.Join(filepath.Dir(inv), "ttyUSB-none"))
}
