#!/usr/bin/env bash
# What does bootbench's own netboot cost, against the classic way of serving
# the same boot with dnsmasq? Boots the default virtual board (qemu-x86_64)
# REPS times each way, interleaved (A B C A B C ...) so that drift on the host
# hits every variant alike:
#
#   A  bootbench run                    kernel+image by HTTP (the default)
#   B  dnsmasq DHCP + built-in TFTP     same kernel, image and iPXE script,
#                                       QEMU started the way bootbench starts it
#   C  bootbench run --transport tftp   like for like with B
#
# Usage, as root from the repository root: bench/netboot-vs-dnsmasq.sh [-n REPS] [-q]
# (-q: md5 alone for 0.05 s on the board, to check the script, not for figures)
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_init netboot-vs-dnsmasq "namespaces and tap devices need it" "$@"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
if ! command -v dnsmasq >/dev/null; then
	# dnsmasq-base is the binary alone; the dnsmasq package would also
	# enable a host-wide DNS/DHCP service, which has no business here.
	apt-get update -qq && apt-get install -y -qq dnsmasq-base >/dev/null
fi

tmp=$(mktemp -d)
chmod 755 "$tmp" # dnsmasq drops root before it opens TFTP files
ns= qemu= dnsmasq=
teardown() { # the dnsmasq variant's processes first: a namespace outlives `ip netns del` while they run
	[ -z "$qemu" ] || kill -KILL "$qemu" 2>/dev/null || true
	[ -z "$dnsmasq" ] || kill "$dnsmasq" 2>/dev/null || true
	[ -z "$qemu" ] || wait "$qemu" 2>/dev/null || true
	[ -z "$dnsmasq" ] || wait "$dnsmasq" 2>/dev/null || true
	[ -z "$ns" ] || ip netns del "$ns" 2>/dev/null || true
	qemu= dnsmasq= ns=
}
trap 'teardown; rm -rf "$tmp"' EXIT
# bootbench runs in the foreground and gets Ctrl-C itself, cleaning up its own.
trap 'echo "netboot-vs-dnsmasq: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

echo "building bootbench, warming the image cache, fetching the kernel..." >&2
make --no-print-directory build >/dev/null  # the binary a user gets
bin/bootbench image build --arch amd64 -o "$tmp/initramfs.cpio"
kernel=$(scripts/fetch-kernel.sh amd64)
mkdir "$tmp/tftp"
cp "$kernel" "$tmp/tftp/vmlinuz"
cp "$tmp/initramfs.cpio" "$tmp/tftp/initramfs.cpio"
chmod -R a+rX "$tmp/tftp"
printf '\xf8\x03' >"$tmp/sercon-port" # SeaBIOS's console on COM1 (0x3f8), as bootbench sets it

# A and C: bootbench's own clock is the whole command, setup and store write included.
# --kernel pins the kernel B serves: Debian's, which A and C boot too (the
# board's own default is bootbench's x86-64 kernel, bench/twin-boot.sh).
# The boot functions run in this shell, not in $(...), so that the EXIT trap
# sees what they started; they leave their time in secs.
boot_bootbench() { # LOG [run flags...]; exits on failure
	local log=$1 t0=$EPOCHREALTIME rc=0
	shift
	bin/bootbench run --db "$tmp/db" "${suite[@]}" --kernel "$kernel" "$@" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { tail -n 20 "$log" >&2; die "bootbench run $* failed (exit $rc)"; }
	since "$t0" "$EPOCHREALTIME"
}

# B: the namespace and tap exactly as bootbench makes them (vbench),
# then dnsmasq configured as a careful user would for iPXE, and QEMU as
# bootbench starts it, with the console in a file.
#
# Mirrored from bootbench's two iPXE boot-speed tricks:
#  - option 175.176 = 1 (no-pxedhcp): iPXE then does not wait for ProxyDHCP
#    offers. dnsmasq sends it forced, as encap:175,176,1b.
#  - the IPv6 side: bootbench answers router solicitations with a bare RA
#    (lifetime 0, no prefix), so iPXE need not wait out IPv6 configuration
#    (~55 s of wall time
#    under TCG when nobody answers). dnsmasq cannot send an RA without a prefix: it answers only
#    for a --dhcp-range built on a global IPv6 address of the interface. So
#    the tap also gets 2001:2::1/64 (RFC 5180 benchmarking range, the IPv6
#    sibling of 198.18.0.0/15; it never leaves the namespace), advertised
#    ra-only (SLAAC, no DHCPv6) with router lifetime 0 (--ra-param ...,0,0).
#    What is not mirrored: the RA carries that prefix, so the board also gets
#    an IPv6 address, and dnsmasq sends periodic unsolicited RAs as well.
boot_dnsmasq() { # times namespace creation to the done frame; exits on failure
	local id log=$tmp/serial.log t0 cmdline
	id=$(date -u +%Y%m%d-%H%M%S)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
	cmdline="console=ttyS0,115200 panic=-1 quiet loglevel=1 bootbench.run=$id bootbench.bench=speed bootbench.seconds=$suite_seconds${suite_algs:+ bootbench.algs=$suite_algs}"
	# The script bootbench serves with --transport tftp (harness.IPXEScript).
	printf '#!ipxe\necho bootbench: run %s loading from 198.18.0.1 by tftp\nkernel tftp://198.18.0.1/vmlinuz %s\ninitrd tftp://198.18.0.1/initramfs.cpio\nboot\n' \
		"$id" "$cmdline" >"$tmp/tftp/boot.ipxe"
	rm -f "$log" "$tmp/leases"

	t0=$EPOCHREALTIME
	ns=bench-dnsmasq-${id: -8}
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 # as bootbench: link-local usable at once
	ip -n "$ns" tuntap add dev bbtap0 mode tap
	ip -n "$ns" addr add 198.18.0.1/24 dev bbtap0
	ip -n "$ns" addr add 2001:2::1/64 dev bbtap0 nodad
	ip -n "$ns" link set bbtap0 up
	ip netns exec "$ns" dnsmasq --no-daemon --conf-file=/dev/null --port=0 \
		--bind-interfaces --interface=bbtap0 --log-facility=- \
		--pid-file="$tmp/dnsmasq.pid" --dhcp-leasefile="$tmp/leases" \
		--dhcp-range=198.18.0.10,198.18.0.10,255.255.255.0 \
		--dhcp-host=52:54:00:bb:00:01,198.18.0.10 --dhcp-boot=boot.ipxe \
		--dhcp-option-force=encap:175,176,1b \
		--enable-ra --dhcp-range=::,constructor:bbtap0,ra-only --ra-param=bbtap0,0,0 \
		--enable-tftp --tftp-root="$tmp/tftp" 2>"$tmp/dnsmasq.log" &
	dnsmasq=$!
	local t_on=$EPOCHREALTIME t_loaded= t_hello=
	ip netns exec "$ns" qemu-system-x86_64 -accel tcg -m 512 -display none -vga none -no-reboot \
		-serial "file:$log" -netdev tap,id=n0,ifname=bbtap0,script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:bb:00:01 -icount shift=0,sleep=off \
		-fw_cfg name=etc/sercon-port,file="$tmp/sercon-port" -M pc -cpu qemu64 -boot n \
		2>"$tmp/qemu.log" &
	qemu=$!

	local frame="@BB2 $id [0-9]* done {" why=
	until grep -aq "$frame" "$log" 2>/dev/null; do
		# The stage marks, as bootbench times its own boots: the image
		# served (dnsmasq logs the finished transfer; the kernel stage
		# starts), the board said hello.
		[ -n "$t_loaded" ] || ! grep -aq 'sent .*/initramfs\.cpio to' "$tmp/dnsmasq.log" 2>/dev/null || t_loaded=$EPOCHREALTIME
		[ -n "$t_hello" ] || ! grep -aq "@BB2 $id [0-9]* hello" "$log" 2>/dev/null || t_hello=$EPOCHREALTIME
		if ! kill -0 "$dnsmasq" 2>/dev/null; then why="dnsmasq exited: $(tail -n 3 "$tmp/dnsmasq.log")"; fi
		# QEMU may power off right after the frame: look once more before judging.
		if ! kill -0 "$qemu" 2>/dev/null && ! grep -aq "$frame" "$log"; then why="board powered off without a done frame"; fi
		# As long as bootbench gives the same boot (the profile's boot and run timeouts, 180 s + 600 s):
		# a busy host stretches the suite, and a variant that gives up sooner is no comparison.
		if awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a > 780) }'; then why="no done frame within 780 s"; fi
		if [ -n "$why" ]; then
			teardown
			tail -c 1500 "$log" >&2 2>/dev/null || true
			die "dnsmasq variant: $why"
		fi
		sleep 0.1
	done
	local t1=$EPOCHREALTIME
	grep -aq "$frame.*\"exit\":0[,}]" "$log" || { teardown; die "dnsmasq variant: benchmark exited non-zero: $(grep -a "$frame" "$log")"; }
	teardown
	[ -n "$t_loaded" ] || t_loaded=$t_hello
	[ -n "$t_hello" ] || die "dnsmasq variant: no hello frame"
	since "$t0" "$t_on"; stage_times[B.setup]+="$secs "
	since "$t_on" "$t_loaded"; stage_times[B.load]+="$secs "
	since "$t_loaded" "$t_hello"; stage_times[B.kernel]+="$secs "
	since "$t_hello" "$t1"; stage_times[B.bench]+="$secs "
	since "$t0" "$t1"
}

# bootbench_stages VARIANT LOG SECS: a bootbench run's stages, grouped as
# the dnsmasq variant's are seen: bootbench's own setup, store write and
# power-off (image, network, and the time outside the stages), power-on to
# the image loaded (firmware, netboot), the kernel, the benchmark.
bootbench_stages() {
	local v=$1 st
	collect_stages "$v.raw" "$2" "$tmp/db" "$3"
	local -A last=()
	for st in "${stage_names[@]}" outside; do
		last[$st]=$(awk '{ print $NF }' <<<"${stage_times[$v.raw.$st]:-0}")
	done
	stage_times[$v.setup]+="$(awk -v a="${last[image]}" -v b="${last[network]}" -v c="${last[outside]}" 'BEGIN { print a + b + c }') "
	stage_times[$v.load]+="$(awk -v a="${last[firmware]}" -v b="${last[netboot]}" 'BEGIN { print a + b }') "
	stage_times[$v.kernel]+="${last[kernel]} "
	stage_times[$v.bench]+="${last[bench]} "
}

names=(A B C)
declare -A label=([A]="A bootbench (HTTP)" [B]="B dnsmasq (TFTP)" [C]="C bootbench --transport tftp")
declare -A times=()
for ((rep = 1; rep <= reps; rep++)); do
	for v in "${names[@]}"; do
		case $v in
		A) boot_bootbench "$tmp/A.log" ;;
		B) boot_dnsmasq ;;
		C) boot_bootbench "$tmp/C.log" --transport tftp ;;
		esac
		times[$v]+="$secs "
		[ "$v" = B ] || bootbench_stages "$v" "$tmp/$v.log" "$secs"
		printf 'rep %d/%d  %-30s %7.2f s\n' "$rep" "$reps" "${label[$v]}" "$secs"
	done
done

read -r base _ <<<"$(stats 2 ${times[B]})"
printf '\n%-30s %8s %8s %8s %11s\n' variant median min max "vs dnsmasq"
for v in "${names[@]}"; do
	read -r med lo hi <<<"$(stats 2 ${times[$v]})"
	printf '%-30s %8.2f %8.2f %8.2f %10.2fx\n' "${label[$v]}" "$med" "$lo" "$hi" "$(awk -v m="$med" -v b="$base" 'BEGIN { print m / b }')"
done

# Per stage, as both ways can be seen: what differs is bootbench's.
printf '\n%-34s %9s %9s %9s %9s\n' "stage (median s)" A B C "A / B"
declare -A stage_label=([setup]="setup, store, power-off" [load]="power-on to image loaded" [kernel]="kernel to hello" [bench]="benchmark to done")
for st in setup load kernel bench; do
	a=$(stage_median A "$st") b=$(stage_median B "$st") c=$(stage_median C "$st")
	printf '%-34s %9s %9s %9s %8.2fx\n' "${stage_label[$st]}" "$a" "$b" "$c" "$(awk -v a="$a" -v b="$b" 'BEGIN { print (b > 0 ? a / b : 0) }')"
done

cat <<EOF

seconds over $reps rep(s); ratio = median / dnsmasq's median (below 1: faster than dnsmasq).
A and C: bootbench's whole command, its own setup included (image cache check,
staging, namespace, servers) and the result's store write after power-off.
B: from namespace creation to the done frame on the console (setup included,
QEMU's exit and any storing not).
Stages: A and C as bootbench times them (results show: setup = image, network
and the command outside its stages); B from dnsmasq's log and the console log as they are
written (the image's transfer done, the hello frame), to 0.1 s.
EOF
