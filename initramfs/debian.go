package initramfs

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/bootbench/bootbench/internal/debpkg"
)

// DebianArch is the Debian architecture whose programs run on spec's
// target, or an error naming what to do where Debian 12 has none.
// arm with GOARM 7 is armhf (ARMv7, hard float); GOARM 5 and 6 are armel
// (ARMv5TE, soft float), which also runs on the newer cores.
func DebianArch(spec Spec) (string, error) {
	switch spec.Arch {
	case "amd64", "arm64", "s390x":
		return spec.Arch, nil
	case "386":
		return "i386", nil
	case "arm":
		if spec.GOARM == "7" {
			return "armhf", nil
		}
		return "armel", nil
	case "mipsle":
		return "mipsel", nil
	case "mips64le":
		return "mips64el", nil
	case "ppc64le":
		return "ppc64el", nil
	case "mips":
		// bench openssl builds one from Debian's source (crossTargets).
		return "", fmt.Errorf("Debian dropped big-endian MIPS after Debian 10, so it has no %s packages to take openssl from", spec.Arch)
	case "riscv64":
		return "", fmt.Errorf("Debian 12 has no riscv64 packages (it joins in Debian 13): build an image with an openssl made for the board with bootbench image build --add, --sysroot and --bench-cmd")
	}
	return "", fmt.Errorf("no Debian architecture for %s: build an image with an openssl made for the board with bootbench image build --add, --sysroot and --bench-cmd", spec.Arch)
}

// archAliases are Debian's names for targets, accepted by ParseArch so
// that --arch armhf means what a Debian user means by it.
var archAliases = map[string]Spec{
	"i386":     {Arch: "386"},
	"armhf":    {Arch: "arm", GOARM: "7"},
	"armel":    {Arch: "arm", GOARM: "5"},
	"mipsel":   {Arch: "mipsle"},
	"mips64el": {Arch: "mips64le"},
	"ppc64el":  {Arch: "ppc64le"},
}

// ParseArch reads a target as a user names it: a GOARCH or a Debian
// architecture. It returns the GOARCH and, for armhf and armel, the GOARM
// that goes with it ("" otherwise).
func ParseArch(name string) (arch, goarm string) {
	if s, ok := archAliases[name]; ok {
		return s.Arch, s.GOARM
	}
	return name, ""
}

// debianOpenSSL fetches Debian's openssl, libssl3 and libc6 for spec's
// target into a sysroot in the cache and returns it, with the openssl
// program and OpenSSL 3's legacy provider (for DES) inside it.
func debianOpenSSL(ctx context.Context, spec Spec, cacheDir string) (sysroot, bin, legacy string, err error) {
	arch, err := DebianArch(spec)
	if err != nil {
		return "", "", "", specError{err}
	}
	// cacheDir is the image cache; packages live beside it, with the kernels.
	sysroot, err = debpkg.Sysroot(ctx, filepath.Dir(cacheDir), arch, "openssl", "libssl3", "libc6")
	if err != nil {
		return "", "", "", fmt.Errorf("fetch Debian's openssl for %s: %w", arch, err)
	}
	mods, _ := filepath.Glob(filepath.Join(sysroot, "usr/lib/*/ossl-modules/legacy.so"))
	if len(mods) == 1 {
		legacy = mods[0]
	}
	return sysroot, filepath.Join(sysroot, "usr/bin/openssl"), legacy, nil
}
