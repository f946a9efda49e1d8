package debpkg

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestComponentList: the firmware's sources list takes non-free-firmware
// from each of the host's Debian 12 repositories, signed as the host's are.
func TestComponentList(t *testing.T) {
	for _, name := range []string{"deb822", "oneline"} {
		files, err := hostSourceFiles(filepath.Join("testdata", "sourceslist", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := componentList(files, Release, firmwareComponent)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", "sourceslist", name+".firmware.golden"), got)
	}
}

// TestRaspiFirmware fetches Debian's raspi-firmware into an empty cache
// through the private configuration, from the host's mirror, and finds the
// files a Pi 4 and a Pi 3B+ ask for; the host's own APT state is not
// touched (its lists do not gain non-free-firmware).
func TestRaspiFirmware(t *testing.T) {
	if _, err := exec.LookPath("apt-get"); err != nil {
		needs.Unmet(t, "needs APT")
	}
	hostLists, _ := filepath.Glob("/var/lib/apt/lists/*non-free-firmware*")
	cache := t.TempDir()
	dir, err := RaspiFirmware(context.Background(), cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"start4.elf", "fixup4.dat", "bootcode.bin", "start.elf", "fixup.dat"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.HasPrefix(filepath.Base(dir), "raspi-firmware_") {
		t.Errorf("cached as %s", dir)
	}
	again, err := RaspiFirmware(context.Background(), cache)
	if err != nil || again != dir {
		t.Errorf("a second fetch: %s, %v", again, err)
	}
	if after, _ := filepath.Glob("/var/lib/apt/lists/*non-free-firmware*"); len(after) != len(hostLists) {
		t.Errorf("the host's APT lists changed: %v → %v", hostLists, after)
	}
}
