#!/usr/bin/env bash
# What do the twins' own kernels and command lines save a twin's boot,
# against Debian's kernel as Debian boots it? Boots each twin REPS times each
# way, interleaved (A B A B ...) so that drift on the host hits both alike:
#
#   qemu-x86_64  A  run --kernel DEBIAN           Debian's amd64 kernel
#                B  run                           bootbench's x86-64 kernel
#   qemu-arm64   A  run --append                  Debian's arm64 kernel with
#                   cryptomgr.notests=0           its crypto self-tests, as
#                                                 Debian boots it
#                B  run                           the same kernel with the
#                                                 twin's command line
#                                                 (cryptomgr.notests)
#
# Same firmware, netboot and image; only the kernel or its command line
# differs. A warm-up run of each comes first and is not counted (it builds
# the image and bootbench's kernel, and fetches Debian's, once). Prints per
# board the medians of the run's own stages (bootbench results show):
# firmware, netboot, kernel, and their sum, power-on to the benchmark's
# hello, with B's ratio to A.
#
# Usage, as root from the repository root: bench/twin-boot.sh [-n REPS] [-q]
# (-q: md5 alone for 0.05 s on the board, to check the script, not for figures)
set -euo pipefail

. "$(dirname "$0")/lib.bash"
bench_init twin-boot "namespaces and tap devices need it" "$@"
for c in qemu-system-x86_64 ip; do command -v $c >/dev/null || die "$c missing (make deps installs it)"; done

tmp=$(mktemp -d /tmp/twin-boot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# bootbench runs in the foreground and gets Ctrl-C itself, cleaning up its own.
trap 'echo "twin-boot: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

# The arm64 twins boot Debian's arm64 kernel: a kernel of bootbench's took
# 1.6 s to the hello but some 14 minutes to build on two cores, for the few
# boots of them make test has.
for c in qemu-system-aarch64; do command -v $c >/dev/null || die "$c missing (make deps installs it)"; done
boards=(qemu-x86_64 qemu-arm64)
declare -A debian_arch=([qemu-x86_64]=amd64 [qemu-arm64]=arm64)
declare -A label=([qemu-x86_64.A]="A Debian's kernel" [qemu-x86_64.B]="B bootbench's kernel"
	[qemu-arm64.A]="A Debian's, self-tests" [qemu-arm64.B]="B Debian's, notests")

echo "building bootbench, fetching Debian's kernel..." >&2
make --no-print-directory build >/dev/null # the binary a user gets
declare -A debian=()
for b in "${boards[@]}"; do
	debian[$b]=$(scripts/fetch-kernel.sh "${debian_arch[$b]}")
done

run_variant() { # BOARD VARIANT LOG; leaves the time in secs, exits on failure
	local board=$1 v=$2 log=$3 t0=$EPOCHREALTIME rc=0 kernel=()
	case $board.$v in
	qemu-x86_64.A) kernel=(--kernel "${debian[$board]}") ;;
	qemu-arm64.A) kernel=(--append cryptomgr.notests=0) ;; # a later parameter wins
	esac
	bin/bootbench run --db "$tmp/db" --board "$board" "${suite[@]}" "${kernel[@]}" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { tail -n 20 "$log" >&2; die "bootbench run --board $board ${kernel[*]} failed (exit $rc)"; }
	since "$t0" "$EPOCHREALTIME"
}

# hello_stage KEY LOG: adds the run's power-on to hello (its firmware,
# netboot and kernel stages) to stage_times[KEY.hello].
hello_stage() {
	local id
	id=$(grep -o 'run  *[0-9]\{8\}-[0-9]\{6\}-[0-9a-f]\{8\} on' "$2" | tail -n 1 | awk '{ print $2 }')
	stage_times[$1.hello]+="$(bin/bootbench results show "$id" --db "$tmp/db" |
		awk '/^  (firmware|netboot|kernel) +[0-9.]+s$/ { sub(/s$/, "", $2); s += $2 } END { printf "%.1f", s }') "
}

echo "warm-up: one run of each, not counted (builds bootbench's kernel the first time)..." >&2
for b in "${boards[@]}"; do
	for v in A B; do
		echo "  $b ${label[$b.$v]}" >&2
		run_variant "$b" "$v" "$tmp/warm.log"
	done
done

for ((rep = 1; rep <= reps; rep++)); do
	for b in "${boards[@]}"; do
		for v in A B; do
			run_variant "$b" "$v" "$tmp/$v.log"
			collect_stages "$b.$v" "$tmp/$v.log" "$tmp/db" "$secs"
			hello_stage "$b.$v" "$tmp/$v.log"
			printf 'rep %d/%d  %-12s %-22s %7.2f s\n' "$rep" "$reps" "$b" "${label[$b.$v]}" "$secs"
		done
	done
done

printf '\n%-12s %-22s %9s %9s %9s %16s %7s\n' board "kernel (median s)" firmware netboot kernel "power-on->hello" "B / A"
for b in "${boards[@]}"; do
	base=$(stage_median "$b.A" hello)
	for v in A B; do
		hello=$(stage_median "$b.$v" hello)
		printf '%-12s %-22s %9s %9s %9s %16s %6.2fx\n' "$b" "${label[$b.$v]}" \
			"$(stage_median "$b.$v" firmware)" "$(stage_median "$b.$v" netboot)" "$(stage_median "$b.$v" kernel)" \
			"$hello" "$(awk -v h="$hello" -v a="$base" 'BEGIN { print h / a }')"
	done
done

cat <<EOF

medians over $reps rep(s), interleaved, after a warm-up run of each; the
stages are the run's own timings (bootbench results show): firmware from
power-on until the bootloader asks for its boot file, netboot its fetching
the kernel and image, kernel until the benchmark's hello; power-on->hello
is their sum. Debian's kernels: $(for b in "${boards[@]}"; do printf '%s ' "$(basename "${debian[$b]}")"; done)
EOF
