package kernels

import (
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/internal/debpkg"
)

// moduleDirs are where the modules an image carries live under
// lib/modules/<version>/kernel of a Debian kernel package for arch: the
// route benchmark's (see package benchmark), and a board's cpufreq driver
// (a Raspberry Pi's, see its profile's kernel_modules). Each must be in
// the package: tar fails on a member it does not find.
func moduleDirs(arch string) []string {
	dirs := []string{"net", "drivers/net", "drivers/virtio", "lib", "crypto", "drivers/cpufreq"}
	if arch == "amd64" {
		dirs = append(dirs, "arch/x86/crypto")
	}
	return dirs
}

// Modules returns the named modules of the Debian kernel image kernel (as
// Debian returned it) and every module they depend on, in an order they
// can be loaded in, as HOST:IMG pairs that put them in dir of an image,
// numbered in that order.
func Modules(ctx context.Context, cacheDir, kernel, dir string, names []string) ([]string, error) {
	pkgDir := filepath.Dir(filepath.Dir(kernel))
	arch := filepath.Base(filepath.Dir(pkgDir))
	modDir, err := debpkg.KernelModules(ctx, cacheDir, arch, filepath.Base(pkgDir), moduleDirs(arch))
	if err != nil {
		return nil, fmt.Errorf("kernel modules for %s: %w", filepath.Base(kernel), err)
	}
	order, err := loadOrder(modDir, names)
	if err != nil {
		return nil, err
	}
	pairs := make([]string, len(order))
	for i, p := range order {
		pairs[i] = fmt.Sprintf("%s:%s/%02d-%s", p, dir, i, filepath.Base(p))
	}
	return pairs, nil
}

// loadOrder finds names under modDir and puts each module after the ones
// its .modinfo depends= names.
func loadOrder(modDir string, names []string) ([]string, error) {
	index := map[string]string{}
	filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".ko") {
			index[modName(filepath.Base(p))] = p
		}
		return nil
	})
	var order []string
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		p, ok := index[modName(name)]
		if !ok {
			return fmt.Errorf("kernel module %s is not in %s (needed by %s)", name, modDir, strings.Join(path, " → "))
		}
		if slices.Contains(order, p) {
			return nil
		}
		if slices.Contains(path, name) {
			return fmt.Errorf("kernel modules depend on each other in a circle: %s", strings.Join(append(path, name), " → "))
		}
		deps, err := moduleDepends(p)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, append(path, name)); err != nil {
				return err
			}
		}
		order = append(order, p)
		return nil
	}
	for _, n := range names {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// modName is a module's name as the kernel and depends= spell it.
func modName(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".ko"), "-", "_")
}

// moduleDepends reads the depends= entry of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", path, err)
	}
	defer f.Close()
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("kernel module %s has no .modinfo", path)
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("kernel module %s: %w", path, err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, "depends="); ok {
			if v == "" {
				return nil, nil
			}
			return strings.Split(v, ","), nil
		}
	}
	return nil, nil
}
