#!/usr/bin/env bash
# What does the real-bench path cost next to the virtual board? Runs the same
# image on the same emulated PC REPS times each way, interleaved (A B A B ...)
# so drift on the host hits both alike, and prints medians and the ratio:
#
#   A  bootbench run --board qemu-x86_64          the virtual bench: bootbench makes
#                                                 the namespace, tap and QEMU itself
#   B  bootbench run --inventory bench.yaml       a simulated real bench: a tap bench0
#      --board pc1                                bootbench did not create, a socat pty
#                                                 pair as the USB serial adapter, and a
#                                                 `command` power switch starting QEMU
#
# B's PC is A's machine (same QEMU options, NIC ROM, kernel, image, and the
# same -icount shift=0 virtual clock), so what differs is the bench path:
# the inventory, the rival-DHCP probe, the serial adapter and the power
# switch. Both timings are bootbench's whole command, store write included.
#
# Usage, as root from the repository root: bench/realbench-vs-virtual.sh [-n REPS] [-q]
# (-q: md5 alone for 0.05 s on the board, to check the script, not for figures)
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_init realbench-vs-virtual "namespaces and tap devices need it" "$@"
for c in qemu-system-x86_64 socat ip; do command -v $c >/dev/null || die "$c missing (make deps installs it)"; done

tmp=$(mktemp -d /tmp/realbench.XXXXXX)
ns=realbench-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
socat_pid=
teardown() {
	[ ! -x "$tmp/off.sh" ] || "$tmp/off.sh" || true
	[ -z "$socat_pid" ] || kill "$socat_pid" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap teardown EXIT
trap 'echo "realbench-vs-virtual: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

echo "building bootbench, warming the image cache, fetching the kernel..." >&2
make --no-print-directory build >/dev/null  # the binary a user gets
bin/bootbench image build --arch amd64 -o "$tmp/warm.cpio" >/dev/null
kernel=$(scripts/fetch-kernel.sh amd64)

# The bench host: a namespace with an interface bootbench did not create.
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" tuntap add dev bench0 mode tap
ip -n "$ns" link set bench0 up
# The USB serial adapter: a pty pair that exists before the board is powered.
socat "PTY,link=$tmp/ttyUSB0,raw,echo=0" "PTY,link=$tmp/board-uart,raw,echo=0" &
socat_pid=$!
for _ in $(seq 100); do [ -e "$tmp/ttyUSB0" ] && [ -e "$tmp/board-uart" ] && break; sleep 0.05; done
[ -e "$tmp/ttyUSB0" ] || die "socat made no pty pair"
printf '\xf8\x03' >"$tmp/sercon-port" # SeaBIOS's console on COM1, as the virtual PC has it
# The power switch.
cat >"$tmp/on.sh" <<EOF
#!/bin/sh
exec ip netns exec $ns qemu-system-x86_64 -accel tcg -M pc -cpu qemu64 -m 512 -display none -vga none \\
  -netdev tap,id=n0,ifname=bench0,script=no,downscript=no -device virtio-net-pci,netdev=n0,mac=52:54:00:bb:05:20 \\
  -chardev tty,id=s0,path=$tmp/board-uart -serial chardev:s0 -boot n -icount shift=0,sleep=off \\
  -fw_cfg name=etc/sercon-port,file=$tmp/sercon-port -daemonize -pidfile $tmp/qemu.pid
EOF
cat >"$tmp/off.sh" <<EOF
#!/bin/sh
[ -f $tmp/qemu.pid ] || exit 0
pid=\$(cat $tmp/qemu.pid); kill "\$pid" 2>/dev/null
# Gone once exited, zombie or not (init may reap it only seconds later):
# its tap and pty are closed, as a board's are once its power is cut.
running() { [ -n "\$pid" ] && [ -e /proc/\$pid ] && ! grep -q '^State:[[:space:]]*Z' /proc/\$pid/status 2>/dev/null; }
for i in \$(seq 50); do running || break; sleep 0.1; done
kill -9 "\$pid" 2>/dev/null; rm -f $tmp/qemu.pid
EOF
chmod +x "$tmp/on.sh" "$tmp/off.sh"
cat >"$tmp/bench.yaml" <<EOF
bench: {interface: bench0, address: 198.18.5.1/24}
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:bb:05:20"
    address: 198.18.5.20
    console: $tmp/ttyUSB0
    power: {driver: command, on: "$tmp/on.sh", off: "$tmp/off.sh"}
EOF

run_variant() { # LOG NETNS [run flags...]; leaves the time in secs, exits on failure
	local log=$1 where=$2 t0=$EPOCHREALTIME rc=0
	shift 2
	if [ -n "$where" ]; then
		ip netns exec "$where" bin/bootbench run --db "$tmp/db" "${suite[@]}" --kernel "$kernel" "$@" >"$log" 2>&1 || rc=$?
	else
		bin/bootbench run --db "$tmp/db" "${suite[@]}" --kernel "$kernel" "$@" >"$log" 2>&1 || rc=$?
	fi
	[ "$rc" = 0 ] || { tail -n 20 "$log" >&2; die "bootbench run $* failed (exit $rc)"; }
	since "$t0" "$EPOCHREALTIME"
}

names=(A B)
declare -A label=([A]="A virtual qemu-x86_64" [B]="B simulated bench, pc1")
declare -A times=()
probes= # B's rival-DHCP probe lines, per invocation
for ((rep = 1; rep <= reps; rep++)); do
	for v in "${names[@]}"; do
		case $v in
		A) run_variant "$tmp/A.log" "" --board qemu-x86_64 ;;
		B) run_variant "$tmp/B.log" "$ns" --inventory "$tmp/bench.yaml" --board pc1 ;;
		esac
		times[$v]+="$secs "
		collect_stages "$v" "$tmp/$v.log" "$tmp/db" "$secs"
		[ "$v" = A ] || probes+="$(grep -c 'for another DHCP server' "$tmp/$v.log") "
		printf 'rep %d/%d  %-26s %7.2f s\n' "$rep" "$reps" "${label[$v]}" "$secs"
	done
done
# Both must have run the same image.
digests=$(bin/bootbench results export --format json --db "$tmp/db" | grep -o '"image_digest": *"[^"]*"' | sort -u | wc -l)
[ "$digests" = 1 ] || die "the variants ran different images"

read -r base _ <<<"$(stats 2 ${times[A]})"
printf '\n%-26s %8s %8s %8s %11s\n' variant median min max "vs virtual"
for v in "${names[@]}"; do
	read -r med lo hi <<<"$(stats 2 ${times[$v]})"
	printf '%-26s %8.2f %8.2f %8.2f %10.2fx\n' "${label[$v]}" "$med" "$lo" "$hi" "$(awk -v m="$med" -v b="$base" 'BEGIN { print m / b }')"
done

# Where B's extra time goes: each stage's median, and the difference.
printf '\n%-34s %9s %9s %9s\n' "stage (median s)" A B "B - A"
for st in "${stage_names[@]}" outside; do
	a=$(stage_median A "$st") b=$(stage_median B "$st")
	d=-
	[ "$a" = - ] || [ "$b" = - ] || d=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.1f", b - a }')
	name=$st
	[ "$st" != outside ] || name="outside the stages"
	printf '%-34s %9s %9s %9s\n' "$name" "$a" "$b" "$d"
done
echo
echo "rival-DHCP probe lines in B's log, per invocation: $probes"

cat <<EOF

seconds from 'bootbench run' to stored result over $reps rep(s), interleaved;
ratio = median / the virtual board's median. The stages are the run's own
timings (bootbench results show); "outside the stages" is the rest of the
command: its setup before the run (inventory, image check, bench network),
the power-off and the store write. B's rival-DHCP probe runs once per
command while it checks the image. Its first command on the segment awaits
the verdict before power-on (in B's network stage); the later ones, within
10 minutes of a quiet verdict, switch the board on at once and would end
the run if a server answered.
EOF
