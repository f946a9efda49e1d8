#!/usr/bin/env bash
# How fast does bootbench's own TFTP server send a file, against the servers
# a bench would otherwise use? Each of
#
#   A  bootbench tftp        (pin/tftp v3.2.0, patched, with bootbench's handler)
#   B  dnsmasq               (its built-in TFTP server)
#   C  tftpd-hpa             (in.tftpd)
#
# sends 32 MiB in each case:
#
#   512, 1468      curl fetches one file at blksize 512 (what RouterBOOT and
#                  old PXE ROMs use; 512 asks for no option at all) and 1468
#                  (the most an Ethernet frame holds, what iPXE and U-Boot ask for)
#   512busy,       512 and 1468 on a busy host: two CPU-bound processes (a
#   1468busy       shell loop each) run beside the servers and curl for the
#                  whole case, started and stopped by this script, as on a
#                  bench host that serves boards while it builds or runs other
#                  work (on two cores, the servers get a share of them only)
#   512x8, 1468x8  eight curls at once, an eighth each: eight boards fed at once
#   512w16         bench/tftpget asks for windowsize 16 (RFC 7440, U-Boot's
#                  tftpwindowsize) at blksize 512, which curl cannot; dnsmasq
#                  and tftpd-hpa ignore the option and send a block at a time
#   512w1          the same client without the option, bootbench only: what
#                  the window's gain is measured against
#
# REPS times each, interleaved (A B C A B C ...) so that drift on the host
# hits every server alike. All of it runs in a network namespace of its own:
# each server on port 69 of its own address (198.18.0.2-4 on a tap nobody
# attaches to, which in.tftpd needs to resolve its address at all), the
# transfers over the namespace's loopback, nothing on any other network.
#
# -q sends 4 MiB instead of 32 (x8: 512 KiB each): a check that the script
# works, as CI runs it.
#
# Usage, as root from the repository root: bench/tftp-vs-dnsmasq.sh [-n REPS] [-q]
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_init tftp-vs-dnsmasq "the namespace and port 69 need it" "$@"
command -v curl >/dev/null || die "curl missing (make deps, or apt-get install curl)"
command -v dnsmasq >/dev/null || die "dnsmasq missing (make deps, or apt-get install dnsmasq-base)"
command -v in.tftpd >/dev/null || die "in.tftpd missing (make deps installs tftpd-hpa with its service disabled)"

size=$((32 << 20))
[ -z "$quick" ] || size=$((4 << 20))
tmp=$(mktemp -d)
chmod 755 "$tmp" # dnsmasq and in.tftpd drop root before they open files
ns=bb-tftp-$$
pids=()
hogs=()
busy_on() { # two CPU-bound processes, a loop in a shell each, beside the servers
	local i
	for ((i = 0; i < 2; i++)); do
		sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	sleep 0.5 # running before the first server's transfer starts, as for the others
}
busy_off() {
	local p
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
	hogs=()
}
teardown() {
	busy_off
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap teardown EXIT
trap 'echo "tftp-vs-dnsmasq: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

echo "building bootbench and tftpget, writing the files..." >&2
go build -o "$tmp/bootbench" ./cmd/bootbench
go build -o "$tmp/tftpget" ./bench/tftpget
mkdir "$tmp/root"
head -c "$size" /dev/urandom >"$tmp/root/blob"
head -c "$((size / 8))" /dev/urandom >"$tmp/root/part"
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


curl_tftp() { # server blksize file [out]: prints curl's seconds; the file lands in out ($tmp/got)
	local out=${4:-$tmp/got}
	rm -f "$out"
	ip netns exec "$ns" curl -sS --max-time 120 --tftp-blksize "$2" -o "$out" -w '%{time_total}' "tftp://${addr[$1]}/$3"
}
same() { # got file server case: dies unless got holds the file
	cmp -s "$1" "$tmp/root/$2" || die "${label[$3]} at $4 sent $(stat -c %s "$1") bytes that differ from the file"
}
fetch() { # server blksize: the whole file by curl, its seconds in secs
	secs=$(curl_tftp "$1" "$2" blob) || die "${label[$1]}: curl failed at blksize $2: $(tail -n 3 "$tmp/$1.log")"
	same "$tmp/got" blob "$1" "blksize $2"
}
fetch8() { # server blksize: eight curls at once, an eighth of the size each; the seconds until the last ends in secs
	local t0 i ps=()
	t0=$(date +%s.%N)
	for ((i = 0; i < 8; i++)); do
		curl_tftp "$1" "$2" part "$tmp/got$i" >/dev/null &
		ps+=($!)
	done
	for i in "${!ps[@]}"; do
		wait "${ps[$i]}" || die "${label[$1]}: curl $i of 8 failed at blksize $2: $(tail -n 3 "$tmp/$1.log")"
	done
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
	for ((i = 0; i < 8; i++)); do same "$tmp/got$i" part "$1" "blksize $2 (transfer $i of 8)"; done
}
fetchw() { # server windowsize: the whole file by tftpget at blksize 512, its seconds in secs
	rm -f "$tmp/got"
	secs=$(ip netns exec "$ns" "$tmp/tftpget" -blksize 512 -windowsize "$2" -o "$tmp/got" "${addr[$1]}:69" blob) ||
		die "${label[$1]}: tftpget failed at windowsize $2: $(tail -n 3 "$tmp/$1.log")"
	same "$tmp/got" blob "$1" "windowsize $2"
}
for v in A B C; do # each server up and serving
	for ((i = 0; ; i++)); do
		curl_tftp "$v" 512 ready >/dev/null 2>&1 && [ -s "$tmp/got" ] && break
		[ $i -lt 50 ] || die "${label[$v]} is not answering: $(tail -n 3 "$tmp/$v.log")"
		sleep 0.1
	done
done

cases=(512 1468 512busy 1468busy 512x8 1468x8 512w16 512w1)
declare -A servers=([512w1]=A) # the other cases: A B C
declare -A times=()
for ((rep = 1; rep <= reps; rep++)); do
	for c in "${cases[@]}"; do
		[[ $c != *busy ]] || busy_on
		for v in ${servers[$c]:-A B C}; do
			case $c in
			*busy) fetch "$v" "${c%busy}" ;;
			*x8) fetch8 "$v" "${c%x8}" ;;
			*w*) fetchw "$v" "${c#*w}" ;;
			*) fetch "$v" "$c" ;;
			esac
			times[$v$c]+="$secs "
			printf 'rep %d/%d  %-8s  %-18s %7.3f s\n' "$rep" "$reps" "$c" "${label[$v]}" "$secs"
		done
		busy_off
	done
done

printf '\n%-9s %-18s %8s %8s %8s %8s %10s\n' case server median min max MiB/s "x dnsmasq"
for c in "${cases[@]}"; do
	base=-
	[ -z "${times[B$c]:-}" ] || read -r base _ _ <<<"$(stats 3 ${times[B$c]})"
	for v in ${servers[$c]:-A B C}; do
		read -r med lo hi <<<"$(stats 3 ${times[$v$c]})"
		awk -v c="$c" -v l="${label[$v]}" -v m="$med" -v lo="$lo" -v hi="$hi" -v b="$base" -v size="$size" \
			'BEGIN { printf "%-9s %-18s %8.3f %8.3f %8.3f %8.1f %10s\n", c, l, m, lo, hi, size / 1048576 / m, b == "-" ? "-" : sprintf("%.2fx", b / m) }'
	done
done
read -r w16 _ _ <<<"$(stats 3 ${times[A512w16]})"
read -r w1 _ _ <<<"$(stats 3 ${times[A512w1]})"
read -r plain _ _ <<<"$(stats 3 ${times[A512]})"
awk -v w16="$w16" -v w1="$w1" -v plain="$plain" 'BEGIN {
	printf "\nwindowsize 16 at blksize 512, A bootbench tftp: %.2fx the throughput of 512w1, %.2fx that of 512 (curl)\n", w1 / w16, plain / w16 }'
cat <<EOF

seconds to fetch $((size >> 20)) MiB over loopback in a namespace (x8: eight transfers of
$((size >> 13)) KiB at once, until the last ends; busy: two CPU-bound processes ran beside
the servers), $reps rep(s) each; x dnsmasq is dnsmasq's median over the server's in the same
case, its throughput against dnsmasq's (above 1: faster).
EOF
