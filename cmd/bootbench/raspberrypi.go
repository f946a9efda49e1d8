package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/internal/debpkg"
	"github.com/bootbench/bootbench/internal/kernels"
	"github.com/bootbench/bootbench/plan"
)

// raspberryPiFiles are a Raspberry Pi boot's firmware (Debian's
// raspi-firmware) and device tree (from the package of the kernel it
// boots, else of the profile's Debian kernel), in the cache, by the name
// the firmware asks for each.
func raspberryPiFiles(ctx context.Context, src, kernel string, rp plan.RaspberryPi) (map[string]string, error) {
	dir, err := debpkg.RaspiFirmware(ctx, cacheDir())
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, name := range rp.Firmware {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("Debian's %s has no %s", debpkg.RaspiFirmwarePackage, name)
		}
		files[name] = p
	}
	dtb, err := kernels.DeviceTree(ctx, cacheDir(), kernel, rp.DeviceTree)
	if err != nil && rp.Kernel.Flavour != "" {
		// A kernel of the board's own: the device tree of the profile's.
		var debian string
		if debian, err = kernels.Debian(ctx, cacheDir(), src, rp.Kernel.DebianArch, rp.Kernel.Flavour); err == nil {
			dtb, err = kernels.DeviceTree(ctx, cacheDir(), debian, rp.DeviceTree)
		}
	}
	if err != nil {
		return nil, err
	}
	files[filepath.Base(rp.DeviceTree)] = dtb
	return files, nil
}
