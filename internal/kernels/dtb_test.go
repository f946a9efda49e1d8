package kernels

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestDeviceTree unpacks the Raspberry Pi device trees from Debian's arm64
// kernel package beside the kernel, in an empty cache: a flattened device
// tree (magic d00dfeed) for each Pi profile's name, once; the Pi's
// cpufreq modules from the same package; and refuses a
// kernel that is not Debian's in the cache, or a name that leaves the
// package's directory.
func TestDeviceTree(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		needs.Unmet(t, "needs APT")
	}
	ctx := context.Background()
	cache := t.TempDir()
	kernel, err := Debian(ctx, cache, "", "arm64", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"broadcom/bcm2711-rpi-4-b.dtb", "broadcom/bcm2837-rpi-3-b-plus.dtb"} {
		dtb, err := DeviceTree(ctx, cache, kernel, name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dtb)
		if err != nil || !bytes.HasPrefix(b, []byte{0xd0, 0x0d, 0xfe, 0xed}) {
			t.Errorf("%s: %v, starts % x", dtb, err, b[:min(4, len(b))])
		}
		if filepath.Dir(filepath.Dir(filepath.Dir(dtb))) != filepath.Dir(filepath.Dir(kernel)) {
			t.Errorf("%s is not beside %s", dtb, kernel)
		}
		if again, err := DeviceTree(ctx, cache, kernel, name); again != dtb || err != nil {
			t.Errorf("again: %s, %v", again, err)
		}
	}
	// The Pi's cpufreq driver, a module of the same package (the arm64
	// package has no arch/x86 modules to unpack, as the amd64 one has).
	mods, err := Modules(ctx, cache, kernel, "lib/modules/bootbench", []string{"cpufreq-dt", "raspberrypi-cpufreq", "cpufreq_userspace"})
	if err != nil || len(mods) != 3 || !strings.HasSuffix(mods[1], ":lib/modules/bootbench/01-raspberrypi-cpufreq.ko") {
		t.Errorf("the Pi's cpufreq modules: %v, %v", mods, err)
	}
	if _, err := DeviceTree(ctx, cache, "/srv/kernels/Image", "broadcom/bcm2711-rpi-4-b.dtb"); err == nil || !strings.Contains(err.Error(), "not one of Debian's") {
		t.Errorf("a kernel outside the cache: %v", err)
	}
	if _, err := DeviceTree(ctx, cache, kernel, "../../../etc/passwd"); err == nil {
		t.Error("a name that leaves the package was taken")
	}
}
