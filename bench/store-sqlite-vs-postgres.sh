#!/usr/bin/env bash
# What does a shared PostgreSQL store cost against the SQLite file a bench
# keeps by default? On one host, both stores on the same filesystem:
#
#   import   one `bootbench import` of N openssl speed outputs (the RB450
#            capture, each file with a line of its own, 104 metrics) into an
#            empty store: runs/s
#   push     R runs from a SQLite store to an empty PostgreSQL one with
#            `bootbench results push`: runs/s
#   compare  `bootbench results compare --by clock` over R runs of one
#            board (R/2 at each of two clocks), the whole command: median of K
#
# PostgreSQL is a throwaway cluster the script starts with Debian's initdb and
# pg_ctl (as the postgres user when run as root), listening only on a unix
# socket in a temporary directory, with the package's default settings
# (fsync on, as SQLite syncs its WAL on every commit), stopped on exit
# (bench/pg.bash).
#
# Usage, from the repository root: bench/store-sqlite-vs-postgres.sh [-i N] [-r R] [-k K]
set -euo pipefail

die() { echo "store-sqlite-vs-postgres: $*" >&2; exit 1; }
. "$(dirname "$0")/pg.bash"
imports=1000 runs=10000 reps=5
while getopts i:r:k: opt; do
	case $opt in
	i) imports=$OPTARG ;;
	r) runs=$OPTARG ;;
	k) reps=$OPTARG ;;
	*) echo "usage: $0 [-i IMPORTS] [-r RUNS] [-k REPS]" >&2; exit 2 ;;
	esac
done
for n in "$imports" "$runs" "$reps"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "-i, -r and -k want positive numbers"
done
[ $((runs % 2)) = 0 ] || die "-r wants an even number of runs (half at each clock)"
[ -f cmd/bootbench/main.go ] || die "run from the bootbench repository root"
pg_find

tmp=$(mktemp -d)
cleanup() {
	pg_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n / s }'; }

echo "building bootbench, starting PostgreSQL, writing $((imports > runs ? imports : runs)) captures..." >&2
make --no-print-directory build BIN="$tmp/bootbench" >/dev/null  # the binary a user gets
bb=$tmp/bootbench
pg_start "$tmp"
for db in imports compare; do
	pg_createdb "$db"
done

mkdir "$tmp/in"
for i in $(seq 1 $((imports > runs ? imports : runs))); do
	{ echo "# capture $i"; cat cmd/bootbench/testdata/openssl-0.9.8k-rb450-300mhz.txt; } >"$tmp/in/$i.txt"
done
captures() { mapfile -t files < <(seq "$1" "$2" | sed "s|.*|$tmp/in/&.txt|"); }

# import: one invocation of all N files, into each kind of store.
declare -A import_s
for store in sqlite postgres; do
	db=$tmp/imports.db
	[ $store = sqlite ] || db=$(pg_url imports)
	captures 1 "$imports"
	start=$(now)
	"$bb" import --board rb450 --clock 300 --db "$db" "${files[@]}" >/dev/null
	import_s[$store]=$(since "$start")
	echo "imported $imports into $store in ${import_s[$store]} s" >&2
done

# The comparison's store: R runs at two clocks in SQLite, pushed to PostgreSQL.
echo "filling a SQLite store with $runs runs..." >&2
half=$((runs / 2))
captures 1 "$half"
"$bb" import --board rb450g --clock 680 --db "$tmp/compare.db" "${files[@]}" >/dev/null
captures $((half + 1)) "$runs"
"$bb" import --board rb450g --clock 800 --db "$tmp/compare.db" "${files[@]}" >/dev/null
start=$(now)
"$bb" results push --db "$tmp/compare.db" --to "$(pg_url compare)" >/dev/null
push_s=$(since "$start")

declare -A cmp_times
for k in $(seq 1 "$reps"); do
	for store in sqlite postgres; do # interleaved, so drift hits both alike
		db=$tmp/compare.db
		[ $store = sqlite ] || db=$(pg_url compare)
		start=$(now)
		"$bb" results compare --by clock --board rb450g --db "$db" >"$tmp/compare-$store.txt"
		cmp_times[$store]+="$(since "$start") "
	done
done
cmp -s "$tmp/compare-sqlite.txt" "$tmp/compare-postgres.txt" || die "the two stores compare differently"
stats() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%8.3f %8.3f %8.3f", m, v[1], v[NR] }'; }

echo "$(pg_version), throwaway cluster, default settings; SQLite (modernc.org/sqlite) in WAL mode; $(nproc) cores"
echo
echo "import of $imports openssl speed outputs, one bootbench import"
printf '%-10s %9s %9s\n' store seconds runs/s
for store in sqlite postgres; do
	printf '%-10s %9.3f %9s\n' "$store" "${import_s[$store]}" "$(rate "$imports" "${import_s[$store]}")"
done
echo
echo "results push of $runs runs, SQLite to PostgreSQL: $push_s s, $(rate "$runs" "$push_s") runs/s"
echo
echo "results compare --by clock over $runs runs ($half at each of 2 clocks), $reps times"
printf '%-10s %8s %8s %8s\n' store median min max
for store in sqlite postgres; do
	printf '%-10s %s\n' "$store" "$(stats "${cmp_times[$store]}")"
done
