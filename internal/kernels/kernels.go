// Package kernels finds the Debian kernels boards boot when their inventory
// names none: unpacked from Debian's packages into the cache (by
// scripts/fetch-kernel.sh), never installed into the host's /boot.
package kernels

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Debian returns a Debian kernel image from the cache
// (cacheDir/kernels/<debianArch>/linux-image-*-<flavour>/boot/vmlinu[xz]-*),
// fetching it with scripts/fetch-kernel.sh from the source tree when the cache
// has none. Kernels are unpacked from the .deb, never installed.
func Debian(ctx context.Context, cacheDir, source, debianArch, flavour string) (string, error) {
	if k := cachedKernel(cacheDir, debianArch, flavour); k != "" {
		return k, nil
	}
	script := filepath.Join(source, "scripts", "fetch-kernel.sh")
	cmd := exec.CommandContext(ctx, script, debianArch, flavour)
	cmd.Env = append(os.Environ(), "BOOTBENCH_CACHE="+cacheDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("fetch Debian %s kernel (%s): %w", flavour, script, err)
	}
	k := strings.TrimSpace(string(out))
	if _, err := os.Stat(k); err != nil {
		return "", fmt.Errorf("fetch Debian %s kernel: %q: %w", flavour, k, err)
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
