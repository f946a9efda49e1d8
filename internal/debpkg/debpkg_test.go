package debpkg

import (
	"reflect"
	"testing"
)

// apt-cache show output as APT 2.6 prints it (fields trimmed to the ones
// read, plus neighbours that must be skipped).
const showOutput = `Package: linux-image-4kc-malta
Source: linux-signed-mipsel (6.1.158+1)
Version: 6.1.158-1
Installed-Size: 14
Depends: linux-image-6.1.0-50-4kc-malta (= 6.1.158-1)
Architecture: mipsel
Description: Linux for 4Kc-based Malta boards (meta-package)

Package: libssl3
Version: 3.0.22-1~deb12u2
Architecture: arm64
Pre-Depends: multiarch-support
Depends: libc6 (>= 2.34)
Description: Secure Sockets Layer toolkit - shared libraries
 This package is part of the OpenSSL project's implementation of the SSL
 Version: not a field, a continuation line

`

func TestParseControl(t *testing.T) {
	got := parseControl([]byte(showOutput))
	want := []Package{
		{Name: "linux-image-4kc-malta", Version: "6.1.158-1", Arch: "mipsel", Depends: "linux-image-6.1.0-50-4kc-malta (= 6.1.158-1)"},
		{Name: "libssl3", Version: "3.0.22-1~deb12u2", Arch: "arm64", Depends: "multiarch-support, libc6 (>= 2.34)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseControl:\n got %+v\nwant %+v", got, want)
	}
}

func TestVersionedKernel(t *testing.T) {
	tests := []struct{ depends, want string }{
		{"linux-image-6.1.0-50-4kc-malta (= 6.1.158-1)", "linux-image-6.1.0-50-4kc-malta"},
		{"initramfs-tools, linux-image-6.1.0-57-amd64 (= 6.1.162-1)", "linux-image-6.1.0-57-amd64"},
		{"linux-image-amd64-signed-template", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := versionedKernel(tt.depends); got != tt.want {
			t.Errorf("versionedKernel(%q) = %q, want %q", tt.depends, got, tt.want)
		}
	}
}

func TestDependencyNames(t *testing.T) {
	tests := []struct {
		depends string
		want    []string
	}{
		{"libatomic1 (>= 4.8), libc6 (>= 2.34)", []string{"libatomic1", "libc6"}},
		{"libgcc-s1, gcc-12-base (= 12.2.0-14)", []string{"libgcc-s1", "gcc-12-base"}},
		{"debconf (>= 0.5) | debconf-2.0, perl:any", []string{"debconf", "perl"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := dependencyNames(tt.depends); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("dependencyNames(%q) = %q, want %q", tt.depends, got, tt.want)
		}
	}
}
