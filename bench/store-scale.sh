#!/usr/bin/env bash
# Do the reading commands stay bounded as a store grows for years? Builds a
# store of N runs and one of N/10 (the baseline) from the same real capture, then runs each reading command once on each and prints its time
# and peak memory side by side, with their ratio: a command that reads only
# what it is asked for costs about the same on both (1x), one that loads the
# whole store costs about 10x.
#
# The stores: rb450g at 680 and at 800 MHz, C runs each (C = min(5000,
# N/20), the same in both stores, so the comparison pools the same number
# of runs whatever the store's size); the rest rb450 at 300 MHz. Every run
# is the RB450 openssl 0.9.8k capture the tests use (104 metrics), each file
# with a line of its own so none is refused as imported already. Imports go
# in batches of files, one `bootbench import` each; the import rate is the
# bigger store's, over its import commands only (each checks the store
# where it writes, as import does).
#
# Peak memory is /usr/bin/time's maximum resident set size, bootbench's
# alone: a PostgreSQL server's own memory is not in it.
#
# The stores are SQLite files (-e sqlite, the default) or two databases of a
# throwaway PostgreSQL cluster (-e postgres), started as
# bench/store-sqlite-vs-postgres.sh starts it (bench/pg.bash) and stopped on
# exit; each is filled by import, as the SQLite files are.
#
# Usage, from the repository root: bench/store-scale.sh [-b BOOTBENCH] [-e sqlite|postgres] N
# (N a multiple of 20, at least 200; -b measures another build instead of
# building this tree's).
set -euo pipefail

die() { echo "store-scale: $*" >&2; exit 1; }
. "$(dirname "$0")/pg.bash"
usage() { echo "usage: $0 [-b BOOTBENCH] [-e sqlite|postgres] N" >&2; exit 2; }
bb= engine=sqlite
while getopts b:e: opt; do
	case $opt in
	b) bb=$OPTARG ;;
	e) engine=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || usage
case $engine in
sqlite) ;;
postgres) pg_find ;;
*) die "-e wants sqlite or postgres" ;;
esac
n=$1
[[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -ge 200 ] && [ $((n % 20)) = 0 ] || die "N wants a multiple of 20, at least 200"
[ -f cmd/bootbench/main.go ] || die "run from the bootbench repository root"
[ -x /usr/bin/time ] || die "no /usr/bin/time (apt-get install time)"
capture=cmd/bootbench/testdata/openssl-0.9.8k-rb450-300mhz.txt

tmp=$(mktemp -d)
cleanup() {
	pg_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "$bb" ]; then
	echo "building bootbench..." >&2
	make --no-print-directory build BIN="$tmp/bootbench" >/dev/null # the binary a user gets
	bb=$tmp/bootbench
fi
[ -x "$bb" ] || die "$bb is not an executable"

# store[NAME]: where the store NAME (small, big) is.
declare -A store
for name in small big; do
	store[$name]=$tmp/$name.db
done
if [ "$engine" = postgres ]; then
	echo "starting PostgreSQL..." >&2
	pg_start "$tmp"
	for name in small big; do
		pg_createdb "$name"
		store[$name]=$(pg_url "$name")
	done
fi

small=$((n / 10))
per=$((n / 20))
[ "$per" -le 5000 ] || per=5000
# Files a command: fewer, larger commands for a larger store, as a lab
# importing a backlog would (and at most 20,000 files parsed in memory at
# once).
batch=$((n / 10))
[ "$batch" -ge 5000 ] || batch=5000
[ "$batch" -le 20000 ] || batch=20000

echo "writing $n captures..." >&2
mkdir "$tmp/in"
awk -v n="$n" -v dir="$tmp/in" 'NR == FNR { body = body $0 "\n"; next } END {
	for (i = 1; i <= n; i++) { f = dir "/" i ".txt"; printf "# capture %d\n%s", i, body > f; close(f) }
}' "$capture" /dev/null

now() { date +%s.%N; }
# import_range DB BOARD CLOCK FROM TO: imports captures FROM..TO, a batch
# of files per command, adding its seconds to import_s.
import_s=0
import_range() {
	local db=$1 board=$2 clock=$3 from=$4 to=$5 start files
	while [ "$from" -le "$to" ]; do
		local last=$((from + batch - 1))
		[ "$last" -le "$to" ] || last=$to
		mapfile -t files < <(seq "$from" "$last" | sed "s|.*|$tmp/in/&.txt|")
		start=$(now)
		"$bb" import --board "$board" --clock "$clock" --db "$db" "${files[@]}" >/dev/null
		import_s=$(awk -v a="$import_s" -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", a + e - s }')
		from=$((last + 1))
	done
}
# build DB RUNS: the store described above.
build() {
	import_s=0
	import_range "$1" rb450g 680 1 "$per"
	import_range "$1" rb450g 800 $((per + 1)) $((2 * per))
	import_range "$1" rb450 300 $((2 * per + 1)) "$2"
}
echo "building a store of $small runs..." >&2
build "${store[small]}" "$small"
echo "building a store of $n runs..." >&2
build "${store[big]}" "$n"
big_import=$import_s

# measure NAME DB CMD...: runs the command, its output to a file, and
# records "seconds peak-MB" as result[NAME.DB].
declare -A result
measure() {
	local name=$1 db=$2
	shift 2
	# A build without the command's flags (-b) gets "-", not figures.
	if ! /usr/bin/time -f '%e %M' -o "$tmp/time" "$bb" "$@" --db "${store[$db]}" >"$tmp/out" 2>"$tmp/err"; then
		echo "$name on the $db store failed: $(tail -n 1 "$tmp/err")" >&2
		result[$name.$db]="- -"
		return
	fi
	read -r secs kb < <(tail -n 1 "$tmp/time")
	result[$name.$db]="$secs $((kb / 1024))"
}
commands=(
	"results list|results list"
	"results list --board rb450g|results list --board rb450g"
	"results list --limit 0 --board rb450g|results list --limit 0 --board rb450g"
	"results compare --by clock --board rb450g|results compare --by clock --board rb450g"
	"results export --format json|results export --format json"
	"results export --format csv|results export --format csv"
)
for c in "${commands[@]}"; do
	name=${c%%|*}
	read -ra argv <<<"${c#*|}"
	for db in small big; do # the same command on both before the next
		measure "$name" "$db" "${argv[@]}"
	done
done

if [ "$engine" = postgres ]; then
	what="$(pg_version), throwaway cluster, default settings, on a unix socket"
else
	what="SQLite (modernc.org/sqlite) in WAL mode"
fi
echo "$("$bb" version 2>/dev/null | head -n1); $what; $(nproc) cores"
echo "stores of $small and $n runs; rb450g at 680 and 800 MHz $per runs each, the rest rb450 at 300 MHz"
echo
echo "import of $n openssl speed outputs, $batch files a command: $big_import s, $(awk -v n="$n" -v s="$big_import" 'BEGIN { printf "%.0f", n / s }') runs/s"
echo
printf '%-44s %8s %8s %8s %8s %7s %7s\n' command "s@$small" "MB@$small" "s@$n" "MB@$n" "s ratio" "MB ratio"
for c in "${commands[@]}"; do
	name=${c%%|*}
	read -r s1 m1 <<<"${result[$name.small]}"
	read -r s2 m2 <<<"${result[$name.big]}"
	awk -v name="$name" -v s1="$s1" -v m1="$m1" -v s2="$s2" -v m2="$m2" 'BEGIN {
		if (s1 == "-" || s2 == "-") { printf "%-44s %8s %8s %8s %8s %7s %7s\n", name, s1, m1, s2, m2, "-", "-"; exit }
		rs = s1 > 0 ? sprintf("%.1fx", s2 / s1) : "-"
		rm = m1 > 0 ? sprintf("%.1fx", m2 / m1) : "-"
		printf "%-44s %8.2f %8d %8.2f %8d %7s %7s\n", name, s1, m1, s2, m2, rs, rm
	}'
done
