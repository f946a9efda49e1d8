package kernels

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bootbench/bootbench/internal/cachelock"
)

// patches are bootbench's patches to the kernel source, in the order they
// apply, and their text, which the build's digest covers.
type patches struct {
	names []string
	text  string
}

func patchSet() (patches, error) {
	names, err := fs.Glob(patchFS, "patches/*.patch")
	if err != nil {
		return patches{}, err
	}
	sort.Strings(names)
	var all strings.Builder
	for _, n := range names {
		b, err := patchFS.ReadFile(n)
		if err != nil {
			return patches{}, err
		}
		fmt.Fprintf(&all, "%s\n%s", n, b)
	}
	return patches{names: names, text: all.String()}, nil
}

// patchedTree returns tree with ps applied: a copy of tree made of hard
// links (seconds, and no second gigabyte), kept beside it under the
// patches' digest, in which patch replaces each file it changes by a new
// one, so the unpacked source stays Debian's.
func patchedTree(ctx context.Context, tree string, ps patches) (string, error) {
	if len(ps.names) == 0 {
		return tree, nil
	}
	out := tree + "+bootbench-" + digest(ps.text)
	// Under a lock: both variants' builds patch the same tree, and tmp is
	// one name.
	err := cachelock.Once(ctx, out+".lock", cachelock.Exists(filepath.Join(out, "Makefile")), nil, func() error { return patchTree(ctx, tree, out, ps) })
	if err != nil {
		return "", err
	}
	return out, nil
}

// patchTree makes out: a hard-linked copy of tree with ps applied.
func patchTree(ctx context.Context, tree, out string, ps patches) error {
	tmp := out + ".tmp"
	os.RemoveAll(tmp)
	if b, err := exec.CommandContext(ctx, "cp", "-al", tree, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the kernel source for patching: %w: %s", err, b)
	}
	for _, n := range ps.names {
		text, _ := patchFS.ReadFile(n)
		cmd := exec.CommandContext(ctx, "patch", "-p1", "--forward", "--no-backup-if-mismatch", "-d", tmp)
		cmd.Stdin = strings.NewReader(string(text))
		if b, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("kernel source: %s does not apply: %w: %s", n, err, strings.TrimSpace(string(b)))
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("kernel source: %w", err)
	}
	return nil
}
