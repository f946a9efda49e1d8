#!/usr/bin/env bash
# How fast does bootbench's own TFTP server send a file, against the servers
# a bench would otherwise use? curl fetches one 32 MiB file from each of
#
#   A  bootbench tftp        (pin/tftp v3.1.0 with bootbench's handler)
#   B  dnsmasq               (its built-in TFTP server)
#   C  tftpd-hpa             (in.tftpd)
#
# at blksize 512 (what RouterBOOT and old PXE ROMs use) and 1468 (the most an
# Ethernet frame holds, what iPXE and U-Boot ask for), REPS times each,
# interleaved (A B C A B C ...) so that drift on the host hits every server
# alike. All of it runs in a network namespace of its own: each server on
# port 69 of its own address (198.18.0.2-4 on a tap nobody attaches to,
# which in.tftpd needs to resolve its address at all), the transfers over
# the namespace's loopback, nothing on any other network.
#
# Usage, as root from the repository root: bench/tftp-vs-dnsmasq.sh [-n REPS]
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_init tftp-vs-dnsmasq "the namespace and port 69 need it" "$@"
command -v curl >/dev/null || die "curl missing (make deps, or apt-get install curl)"
command -v dnsmasq >/dev/null || die "dnsmasq missing (make deps, or apt-get install dnsmasq-base)"
command -v in.tftpd >/dev/null || die "in.tftpd missing (make deps installs tftpd-hpa with its service disabled)"

size=$((32 << 20))
tmp=$(mktemp -d)
chmod 755 "$tmp" # dnsmasq and in.tftpd drop root before they open files
ns=bb-tftp-$$
pids=()
teardown() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap teardown EXIT
trap 'echo "tftp-vs-dnsmasq: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

echo "building bootbench, writing a $((size >> 20)) MiB file..." >&2
go build -o "$tmp/bootbench" ./cmd/bootbench
mkdir "$tmp/root"
head -c "$size" /dev/urandom >"$tmp/root/blob"
echo ready >"$tmp/root/ready"
chmod -R a+rX "$tmp/root"

ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" tuntap add dev bb0 mode tap
for a in 198.18.0.2 198.18.0.3 198.18.0.4; do ip -n "$ns" addr add "$a/24" dev bb0; done
ip -n "$ns" link set bb0 up

# Each server as its documentation has it serve a directory read-only, in
# the foreground, logging aside.
declare -A addr=([A]=198.18.0.2 [B]=198.18.0.3 [C]=198.18.0.4)
declare -A label=([A]="A bootbench tftp" [B]="B dnsmasq" [C]="C tftpd-hpa")
ip netns exec "$ns" "$tmp/bootbench" tftp --root "$tmp/root" --listen "${addr[A]}:69" >"$tmp/A.log" 2>&1 &
pids+=($!)
ip netns exec "$ns" dnsmasq --no-daemon --conf-file=/dev/null --port=0 --pid-file="$tmp/dnsmasq.pid" \
	--listen-address="${addr[B]}" --bind-interfaces --log-facility="$tmp/B.log" \
	--enable-tftp --tftp-root="$tmp/root" >>"$tmp/B.log" 2>&1 &
pids+=($!)
ip netns exec "$ns" in.tftpd --foreground --listen --address "${addr[C]}:69" --user nobody --secure "$tmp/root" >"$tmp/C.log" 2>&1 &
pids+=($!)

curl_tftp() { # server blksize file: prints curl's seconds; the file lands in $tmp/got
	rm -f "$tmp/got"
	ip netns exec "$ns" curl -sS --max-time 120 --tftp-blksize "$2" -o "$tmp/got" -w '%{time_total}' "tftp://${addr[$1]}/$3"
}
fetch() { # server blksize file -> seconds in secs
	secs=$(curl_tftp "$@") || die "${label[$1]}: curl failed at blksize $2: $(tail -n 3 "$tmp/$1.log")"
}
for v in A B C; do # each server up and serving
	for ((i = 0; ; i++)); do
		curl_tftp "$v" 512 ready >/dev/null 2>&1 && [ -s "$tmp/got" ] && break
		[ $i -lt 50 ] || die "${label[$v]} is not answering: $(tail -n 3 "$tmp/$v.log")"
		sleep 0.1
	done
done

names=(A B C)
blksizes=(512 1468)
declare -A times=()
for ((rep = 1; rep <= reps; rep++)); do
	for bs in "${blksizes[@]}"; do
		for v in "${names[@]}"; do
			fetch "$v" "$bs" blob
			cmp -s "$tmp/got" "$tmp/root/blob" || die "${label[$v]} at blksize $bs sent $(stat -c %s "$tmp/got") bytes that differ from the file"
			times[$v$bs]+="$secs "
			printf 'rep %d/%d  blksize %4d  %-18s %7.3f s\n' "$rep" "$reps" "$bs" "${label[$v]}" "$secs"
		done
	done
done

printf '\n%-7s %-18s %8s %8s %8s %8s %11s\n' blksize server median min max MiB/s "vs dnsmasq"
for bs in "${blksizes[@]}"; do
	read -r base _ <<<"$(stats 3 ${times[B$bs]})"
	for v in "${names[@]}"; do
		read -r med lo hi <<<"$(stats 3 ${times[$v$bs]})"
		awk -v bs="$bs" -v l="${label[$v]}" -v m="$med" -v lo="$lo" -v hi="$hi" -v b="$base" -v size="$size" \
			'BEGIN { printf "%-7d %-18s %8.3f %8.3f %8.3f %8.1f %10.2fx\n", bs, l, m, lo, hi, size / 1048576 / m, m / b }'
	done
done
cat <<EOF

seconds for curl to fetch $((size >> 20)) MiB over loopback in a namespace, $reps rep(s) each;
ratio = median / dnsmasq's median at the same blksize (below 1: faster than dnsmasq).
EOF
