// Package kernels finds the Debian kernels boards boot when their inventory
// names none: unpacked from Debian's packages into the cache (by
// scripts/fetch-kernel.sh), never installed into the host's /boot. For the
// boards Debian has no kernel for (big-endian MIPS), and for the x86-64
// twin, whose boots Debian's large kernel slows by seconds under
// emulation, Built builds one from Debian's own Linux source with
// bootbench's configuration (config/).
package kernels

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bootbench/bootbench/internal/debpkg"
)

// Debian returns a Debian kernel image from the cache
// (cacheDir/kernels/<debianArch>/linux-image-*-<flavour>/boot/vmlinu[xz]-*),
// fetching it with debpkg when the cache has none. Kernels are unpacked from
// the .deb, never installed. source is unused: the fetch needs no source
// tree, so a bootbench binary on its own can run the virtual boards.
func Debian(ctx context.Context, cacheDir, source, debianArch, flavour string) (string, error) {
	if k := cachedKernel(cacheDir, debianArch, flavour); k != "" {
		return k, nil
	}
	k, err := debpkg.Kernel(ctx, cacheDir, debianArch, flavour)
	if err != nil {
		return "", fmt.Errorf("fetch Debian %s kernel: %w", flavour, err)
	}
	return k, nil
}

func cachedKernel(cacheDir, debianArch, flavour string) string {
	pat := filepath.Join(cacheDir, "kernels", debianArch, "linux-image-*-"+flavour, "boot", "vmlinu[xz]-*")
	found, _ := filepath.Glob(pat)
	if len(found) == 0 {
		return ""
	}
	// Newest ABI first: linux-image-6.1.0-57 sorts after -9 only numerically.
	sort.Slice(found, func(i, j int) bool { return versionLess(found[j], found[i]) })
	return found[0]
}

// versionLess compares strings with runs of digits compared as numbers.
func versionLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da != "" && db != "" {
			if len(strings.TrimLeft(da, "0")) != len(strings.TrimLeft(db, "0")) {
				return len(strings.TrimLeft(da, "0")) < len(strings.TrimLeft(db, "0"))
			}
			if da != db {
				return strings.TrimLeft(da, "0") < strings.TrimLeft(db, "0")
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
