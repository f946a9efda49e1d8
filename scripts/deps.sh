#!/usr/bin/env bash
# Install what bootbench's demo or tests need on Debian 12, and only what is
# missing. "deps.sh demo": what 'make demo' runs (QEMU for x86 with iPXE's
# NIC ROMs, iproute2, xz, the Go modules, and what building bootbench's
# x86-64 kernel from Debian's linux-source takes). "deps.sh" (or "test"):
# everything 'make test' runs too: the other QEMU boards, the cross
# compilers for the openssl and the kernels bootbench builds, the
# baselines and services the tests start themselves, and Debian's own
# kernels for the boards and comparisons that boot them. Kernels are
# unpacked into the cache, never installed into /boot. No service a
# package would start is left running or enabled.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
case $mode in
demo | test) ;;
*)
	echo "deps: $mode: give demo or test (the default)" >&2
	exit 2
	;;
esac

# go.mod's go line is the one truth about the Go version needed.
need_go=$(awk '$1 == "go" { print $2; exit }' go.mod)
if ! command -v go >/dev/null 2>&1; then
	echo "deps: Go $need_go or newer is required (https://go.dev/dl/); Debian 12's golang package is too old" >&2
	exit 1
fi
have=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n%s\n' "$need_go" "$have" | sort -V | head -n1)" != "$need_go" ]; then
	echo "deps: Go $have found, $need_go or newer is required" >&2
	exit 1
fi

# qemu-system-x86: the virtual PC; ipxe-qemu: the iPXE ROM its NIC boots
# from; qemu-system-arm and u-boot-qemu: the arm64 board and its firmware;
# qemu-system-mips: the MIPS router; u-boot-tools: dumpimage, the oracle
# for our uImage writer; iproute2: network namespaces and the tap; xz-utils:
# the xz encoder that keeps small-board images small; dnsmasq-base and
# openssl: the baselines bench/*.sh measure against (make test runs them).
# The simulated real bench's tests: socat (the USB serial adapter: a pty
# pair), pdudaemon (a real PDU daemon driving the board's power),
# dnsmasq-base (a rival DHCP server on the bench segment; the binary only,
# no host-wide service; also the Raspberry Pi twin's server, set up as
# Raspberry Pi's network boot tutorial sets it up). bench/tftp-vs-dnsmasq.sh: curl (the TFTP client)
# and tftpd-hpa (in.tftpd, a baseline it runs alone in a namespace).
# ovmf: the UEFI PC's firmware, whose own PXE client is chainloaded into
# iPXE from ipxe's binaries (undionly.kpxe, ipxe.efi).
# postgresql: the shared results store's tests start their own throwaway
# cluster with its initdb and server (/usr/lib/postgresql/*/bin), on a unix
# socket in a temporary directory; they never use the package's own
# cluster, which Debian creates on install.
# iperf3: the route benchmark's traffic (client and server in two network
# namespaces); ethtool: turns off the offloads of the direct baseline's
# veth pair, so it carries packets of the size under test. wireguard-tools:
# wg, which configures the host's ends of the wireguard configurations'
# tunnels; wireguard-go: a userspace WireGuard for a host whose kernel has
# none (Debian's has it as a module, and is used where it loads).
# gcc-mips-linux-gnu and libc6-dev-mips-cross: Debian 12 has no openssl
# package for big-endian MIPS (the port ended with Debian 10), so bench
# openssl builds one, static, from Debian's own openssl source with
# Debian's cross compiler and C library (host packages: nothing of another
# architecture is installed); dpkg-dev (dpkg-source unpacks and patches the
# source), perl and make (openssl's Configure and build). qemu-user: its
# qemu-mips runs that program on this host in the tests, and the test of
# the Go runtime correction for MIPS (initramfs/gofix) runs its probe for
# mips, mipsle and mips64le under it without booting a board.
# The kernels bootbench builds from Debian's linux-source
# (internal/kernels): the demo's board, the x86-64 twin, boots one, so the
# demo installs what the kernel's build runs on this host: gcc (also the
# x86-64 kernel's compiler), libc6-dev and make for its host programs
# (Kconfig, fixdep), bc for its timer constants, flex and bison for
# Kconfig's parser, patch for bootbench's patches to that source
# (internal/kernels/patches), libelf-dev for x86's objtool. No libssl-dev:
# those kernels sign no modules. The tests build the others too:
# gcc-mipsel-linux-gnu (with gcc-mips-linux-gnu above) for the big- and
# little-endian Malta kernels (Debian ships no big-endian MIPS kernel).
# chromium: the bench page (serve --http) is tested in a real browser,
# headless, driven from Go over its DevTools pipe.
demo_pkgs=(qemu-system-x86 ipxe-qemu iproute2 xz-utils gcc libc6-dev make bc flex bison patch libelf-dev)
test_pkgs=(qemu-system-arm u-boot-qemu qemu-system-mips u-boot-tools dnsmasq-base openssl socat pdudaemon postgresql curl tftpd-hpa ovmf ipxe iperf3 ethtool wireguard-tools wireguard-go gcc-mips-linux-gnu libc6-dev-mips-cross dpkg-dev perl qemu-user
	gcc-mipsel-linux-gnu chromium)
pkgs=("${demo_pkgs[@]}")
if [ "$mode" = test ]; then
	pkgs+=("${test_pkgs[@]}")
fi
# install_quietly installs packages without leaving a service of theirs
# running or enabled: the tests start their own servers (a PostgreSQL
# cluster, pdudaemon, in.tftpd) in temporary directories and namespaces,
# and nothing here should serve the host's networks or hold its ports.
# policy-rc.d keeps the packages' scripts from starting anything; Debian's
# PostgreSQL is told not to create its own cluster; what the packages
# enabled is disabled again.
install_quietly() {
	local policy=/usr/sbin/policy-rc.d own_policy=
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\n# deps.sh: no service starts while it installs\nexit 101\n' >$policy
		chmod 755 $policy
		own_policy=1
	fi
	if [[ " $* " == *" postgresql "* ]] && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
		mkdir -p /etc/postgresql-common
		echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
	fi
	local status=0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 || status=$?
	[ -z "$own_policy" ] || rm -f $policy
	[ $status = 0 ] || exit $status
	# Only the services of packages installed here: a PostgreSQL (or
	# pdudaemon) the machine had before is its owner's, left as it was.
	local svc
	for svc in tftpd-hpa pdudaemon postgresql; do
		[[ " $* " == *" $svc "* ]] || continue
		if [ -e /etc/init.d/$svc ] || [ -e /lib/systemd/system/$svc.service ]; then
			echo "deps: leaving the $svc service its package installed disabled" >&2
			if [ -d /run/systemd/system ]; then
				systemctl disable --now $svc >&2 || true
			else
				# No systemd running (a container, a chroot): disable
				# both the unit's links and the init script's.
				systemctl disable $svc >&2 2>/dev/null || true
				update-rc.d $svc disable >&2 2>/dev/null || true
			fi
		fi
	done
}

missing=()
for pkg in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}" >&2
	apt-get update -qq
	install_quietly "${missing[@]}"
fi

go mod download
# Debian's kernels: the tests' PC on a real bench and UEFI twin boot
# Debian's amd64 kernel (as does bench/twin-boot.sh's comparison), the
# arm64 twins and the Raspberry Pi twin Debian's arm64 one; the demo's
# twin boots bootbench's own.
if [ "$mode" = test ]; then
	scripts/fetch-kernel.sh amd64 amd64 >/dev/null
	scripts/fetch-kernel.sh arm64 arm64 >/dev/null
	scripts/fetch-kernel.sh mipsel 4kc-malta >/dev/null
fi
