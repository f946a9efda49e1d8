#!/usr/bin/env bash
# Fetch a Debian kernel for a virtual board into the bootbench cache without
# installing it: apt-get download + dpkg-deb -x. Prints the kernel image path.
#
#   scripts/fetch-kernel.sh amd64            # linux-image-amd64
#   scripts/fetch-kernel.sh arm64            # linux-image-arm64
#   scripts/fetch-kernel.sh mipsel 4kc-malta # linux-image-4kc-malta
#
# The metapackage is resolved on every call (Debian moves the ABI number), so
# the cache keeps one directory per versioned package.
set -euo pipefail
arch=${1:?usage: fetch-kernel.sh DEBIAN_ARCH [FLAVOUR]}
flavour=${2:-$arch}
cache=${BOOTBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bootbench}/kernels/$arch
mkdir -p "$cache/lists/partial"
# One APT at a time on these lists, the lock bootbench's own fetches take
# (internal/debpkg), held until the script ends.
exec 9>"$cache/lists/bootbench.lock"
flock 9
o=(-oAPT::Architecture="$arch" -oAPT::Architectures="$arch" -oDir::State::Lists="$cache/lists" -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)

meta=linux-image-$flavour
resolve() { apt-cache "${o[@]}" depends "$meta" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
pkg=$(resolve || true)
if [ -z "$pkg" ]; then
	echo "fetch-kernel: updating package lists for $arch" >&2
	apt-get "${o[@]}" -qq update >&2
	pkg=$(resolve)
fi
[ -n "$pkg" ] || { echo "fetch-kernel: cannot resolve $meta for $arch" >&2; exit 1; }

dest=$cache/$pkg
if [ ! -d "$dest/boot" ]; then
	tmp=$(mktemp -d "$cache/.dl.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "fetch-kernel: downloading $pkg" >&2
	(cd "$tmp" && apt-get "${o[@]}" -qq download "$pkg" >&2)
	mkdir -p "$tmp/x"
	# Only boot/ is needed: the image itself, not the modules.
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/x" ./boot
	rm -rf "$dest"
	mv "$tmp/x" "$dest"
fi
ls "$dest"/boot/vmlinu[xz]-* | head -n 1
