package debpkg

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bootbench/bootbench/internal/cachelock"
)

// RaspiFirmwarePackage is Debian's package of the Raspberry Pi firmware:
// bootcode.bin, start*.elf and fixup*.dat under /usr/lib/raspi-firmware.
// It is in the non-free-firmware component, which a host need not enable.
const RaspiFirmwarePackage = "raspi-firmware"

// firmwareComponent is the Debian component raspi-firmware is in.
const firmwareComponent = "non-free-firmware"

// firmwareAPT is APT with a configuration of bootbench's own for the
// non-free-firmware component of the host's Debian 12 repositories (the
// mirror and keyring the host already trusts): its own sources list,
// lists and archive cache under the cache directory. The host's sources,
// lists and dpkg state are only read, never written.
func firmwareAPT(cacheDir string) (*apt, error) {
	for _, c := range []string{"apt-get", "apt-cache", "dpkg-deb"} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("fetch Debian's %s: %s not found (this needs a Debian host with APT)", RaspiFirmwarePackage, c)
		}
	}
	files, err := hostSourceFiles("/")
	if err != nil {
		return nil, err
	}
	list, err := componentList(files, Release, firmwareComponent)
	if err != nil {
		return nil, err
	}
	// The package is Architecture: all; arm64 keeps APT from asking for
	// the host's foreign architectures' lists.
	return privateAPT(filepath.Join(cacheDir, "firmware", "apt"), "arm64", list)
}

// RaspiFirmware returns the directory holding Debian's Raspberry Pi
// firmware files (usr/lib/raspi-firmware of the package), unpacked under
// cacheDir/firmware/raspi-firmware_<version>, never installed. The
// version APT resolves now is used; one already unpacked is a lookup, and
// two bootbench processes wanting it at once unpack it once.
func RaspiFirmware(ctx context.Context, cacheDir string) (string, error) {
	a, err := firmwareAPT(cacheDir)
	if err != nil {
		return "", err
	}
	pkgs, err := a.resolve(ctx, RaspiFirmwarePackage)
	if err != nil {
		return "", err
	}
	dest := filepath.Join(cacheDir, "firmware", RaspiFirmwarePackage+"_"+pkgs[0].Version)
	done := filepath.Join(dest, ".complete")
	err = cachelock.Once(ctx, dest+".lock", cachelock.Exists(done), nil, func() error {
		x, cleanup, err := a.unpack(ctx, RaspiFirmwarePackage+"="+pkgs[0].Version, filepath.Dir(dest), []string{"./usr/lib/raspi-firmware"})
		if err != nil {
			return err
		}
		defer cleanup()
		files := filepath.Join(x, "usr", "lib", "raspi-firmware")
		if err := os.WriteFile(filepath.Join(files, ".complete"), []byte(pkgs[0].Version+"\n"), 0o644); err != nil {
			return fmt.Errorf("%s: %w", RaspiFirmwarePackage, err)
		}
		os.RemoveAll(dest) // an interrupted earlier attempt
		return os.Rename(files, dest)
	})
	if err != nil {
		return "", fmt.Errorf("fetch Debian's %s: %w", RaspiFirmwarePackage, err)
	}
	return dest, nil
}
