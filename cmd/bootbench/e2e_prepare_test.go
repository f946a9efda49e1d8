package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestBoardsPrepare: boards prepare builds (or finds) what the twins boot,
// bootbench's own kernels among them, into the cache a run reads, and
// says one line per board; prepared again, it builds nothing.
func TestBoardsPrepare(t *testing.T) {
	needs.Commands(t, "go", "make", "gcc", "mips-linux-gnu-gcc")
	parallelE2E(t)
	db := emptyStore(t)
	twins := []string{"qemu-x86_64", "qemu-rb450g"}
	first := bootbench(t, db, append([]string{"boards", "prepare"}, twins...)...)
	if first.code != 0 {
		t.Fatalf("boards prepare: exit %d\n%s", first.code, first.stderr)
	}
	ready := regexp.MustCompile(`(?m)^(qemu-[a-z0-9_]+): ready in [0-9.]+(ms|s|m[0-9.]+s): kernel (bzImage|vmlinux), speed image [0-9.]+ MiB$`)
	got := ready.FindAllStringSubmatch(first.stdout, -1)
	if len(got) != len(twins) || got[0][1] != twins[0] || got[1][1] != twins[1] {
		t.Fatalf("boards prepare said:\n%s\nwant a ready line for each of %v, in order", first.stdout, twins)
	}
	cache := cacheOf(t)
	for _, k := range []string{"x86-64-pc-*/bzImage", "malta-be-*/vmlinux"} {
		if found, _ := filepath.Glob(filepath.Join(cache, "kernels", "built", k)); len(found) == 0 {
			t.Errorf("no kernels/built/%s in the cache after boards prepare", k)
		}
	}
	again := bootbench(t, db, append([]string{"boards", "prepare"}, twins...)...)
	if again.code != 0 || len(ready.FindAllString(again.stdout, -1)) != len(twins) {
		t.Fatalf("boards prepare again: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	for _, word := range []string{"building", "unpacking", "waiting"} {
		if strings.Contains(again.stderr, word) {
			t.Errorf("boards prepare again said %q: it should find everything built:\n%s", word, again.stderr)
		}
	}
	if runs := storedRuns(t, db); len(runs) != 0 {
		t.Errorf("boards prepare stored %d runs", len(runs))
	}
}
