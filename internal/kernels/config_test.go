package kernels

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckConfig(t *testing.T) {
	dotConfig := filepath.Join(t.TempDir(), ".config")
	os.WriteFile(dotConfig, []byte("CONFIG_MIPS_MALTA=y\nCONFIG_HZ=250\n# CONFIG_MODULES is not set\nCONFIG_VT=y\n"), 0o644)
	tests := []struct {
		fragment string
		lost     []string // what the error names; none: no error
	}{
		{"CONFIG_MIPS_MALTA=y\n# CONFIG_MODULES is not set\n", nil},
		// An option that is not even listed is off: its menu is.
		{"# CONFIG_USB_SUPPORT is not set\n# comment\n\nCONFIG_HZ=250", nil},
		{"CONFIG_E1000=y\n# CONFIG_VT is not set\nCONFIG_HZ=100", []string{
			"CONFIG_E1000=y (came out not set)", "CONFIG_VT=not set (came out y)", "CONFIG_HZ=100 (came out 250)"}},
	}
	for _, tt := range tests {
		err := checkConfig(dotConfig, tt.fragment)
		if len(tt.lost) == 0 {
			if err != nil {
				t.Errorf("%q: %v", tt.fragment, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: no error", tt.fragment)
			continue
		}
		for _, l := range tt.lost {
			if !strings.Contains(err.Error(), l) {
				t.Errorf("%q: error %q does not name %s", tt.fragment, err, l)
			}
		}
	}
}

// Every variant's fragment is one the kernel's make can read: each line a
// comment, blank, or an option, and each option set once, so no later
// line silently undoes an earlier one; a MIPS variant's picks its byte
// order.
func TestVariantConfigs(t *testing.T) {
	for _, v := range Variants {
		cfg, err := specs[v].config()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(cfg, "\n") {
			sym, _, ok := configLine(line)
			if !ok {
				if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
					t.Errorf("%s: not an option: %q", v, line)
				}
				continue
			}
			if seen[sym] {
				t.Errorf("%s: %s set twice", v, sym)
			}
			seen[sym] = true
		}
		if specs[v].arch == "mips" && (!seen["CONFIG_CPU_BIG_ENDIAN"] || !seen["CONFIG_CPU_LITTLE_ENDIAN"]) {
			t.Errorf("%s: the byte order is not chosen", v)
		}
	}
}

func TestDigestSeparatesParts(t *testing.T) {
	if digest("ab", "c") == digest("a", "bc") {
		t.Error("digest runs its parts together")
	}
	if digest("x") != digest("x") || len(digest("x")) != 16 {
		t.Error("digest is not a stable 16-digit name")
	}
}

func TestBuildEnv(t *testing.T) {
	got := buildEnv([]string{"PATH=/usr/bin", "MAKEFLAGS=-j8 --jobserver-auth=3,4", "MAKELEVEL=1", "KCONFIG_CONFIG=other", "KBUILD_OUTPUT=/elsewhere", "LC_ALL=de_DE.UTF-8", "HOME=/h"})
	want := []string{"PATH=/usr/bin", "HOME=/h", "LC_ALL=C", "KBUILD_BUILD_USER=bootbench", "KBUILD_BUILD_HOST=bootbench"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("buildEnv:\n got %q\nwant %q", got, want)
	}
}
