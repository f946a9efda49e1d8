package kernels

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/internal/cachelock"
	"github.com/bootbench/bootbench/internal/debpkg"
)

// DeviceTree returns the device tree name ("broadcom/bcm2711-rpi-4-b.dtb")
// of the Debian kernel image kernel (as Debian returned it), unpacked from
// the kernel's own package (/usr/lib/linux-image-<version>/<name>) into
// cacheDir/kernels/<arch>/<package>/dtbs/<name>, beside the image: a
// board whose firmware loads the device tree (a Raspberry Pi) gets the one
// its kernel was built with. Unpacked once, under a lock.
func DeviceTree(ctx context.Context, cacheDir, kernel, name string) (string, error) {
	pkgDir := filepath.Dir(filepath.Dir(kernel))
	arch := filepath.Base(filepath.Dir(pkgDir))
	if !strings.HasPrefix(pkgDir, filepath.Join(cacheDir, "kernels")+string(filepath.Separator)) {
		return "", fmt.Errorf("device tree %s: kernel %s is not one of Debian's in the cache", name, kernel)
	}
	if name == "" || filepath.IsAbs(name) || strings.Contains(name, "..") {
		return "", fmt.Errorf("device tree %q: give its path under /usr/lib/linux-image-<version>/", name)
	}
	dest := filepath.Join(pkgDir, "dtbs", name)
	err := cachelock.Once(ctx, dest+".lock", cachelock.Exists(dest), nil, func() error {
		x, done, err := debpkg.Unpack(ctx, cacheDir, arch, filepath.Base(pkgDir), filepath.Dir(dest),
			[]string{"--wildcards", "./usr/lib/linux-image-*/" + name})
		if err != nil {
			return err
		}
		defer done()
		found, _ := filepath.Glob(filepath.Join(x, "usr", "lib", "linux-image-*", name))
		if len(found) != 1 {
			return fmt.Errorf("%s holds no %s", filepath.Base(pkgDir), name)
		}
		return os.Rename(found[0], dest)
	})
	if err != nil {
		return "", fmt.Errorf("device tree %s: %w", name, err)
	}
	return dest, nil
}
