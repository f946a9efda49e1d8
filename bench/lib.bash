# Shared by the bench/*.sh scripts that boot or serve: their usage, checks
# and statistics. Sourced, never run (so not a *.sh: bench_test.go runs those).

# bench_init NAME WHY-ROOT "$@": die() names the script; -n REPS (default 3)
# sets reps; -q runs the smallest benchmark on the board (md5 for 0.05 s a
# block size: a check that the script works, whose times are mostly boot) in
# place of the default suite at 0.3 s (a script that boots nothing takes -q
# for its smallest workload: quick=1); the script runs as root (WHY-ROOT says
# why) from the repository root. It sets suite_seconds and suite_algs, and
# suite (the same as bootbench run flags).
bench_init() {
	bench_name=$1 bench_why_root=$2
	shift 2
	reps=3 suite_seconds=0.3 suite_algs= quick=
	local opt OPTIND=1
	while getopts n:q opt; do
		case $opt in
		n) reps=$OPTARG ;;
		q) suite_seconds=0.05 suite_algs=md5 quick=1 ;;
		*) echo "usage: $0 [-n REPS] [-q]" >&2; exit 2 ;;
		esac
	done
	suite=(--seconds "$suite_seconds")
	[ -z "$suite_algs" ] || suite+=(--algs "$suite_algs")
	[[ $reps =~ ^[1-9][0-9]*$ ]] || die "-n wants a positive number of repetitions"
	[ "$(id -u)" = 0 ] || die "run as root: $bench_why_root"
	[ -f cmd/bootbench/main.go ] || die "run from the bootbench repository root"
}

die() { echo "$bench_name: $*" >&2; exit 1; }

# since START END: the seconds between two `date +%s.%N` readings, in secs.
since() { secs=$(awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'); }

# stats DIGITS SECONDS...: "median min max" with DIGITS decimals.
stats() {
	local digits=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v d="$digits" '{ v[NR] = $1 }
		END { f = "%." d "f %." d "f %." d "f"; printf f, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}

# The stages bootbench times every run in (results/stage.go), in order.
stage_names=(image network firmware netboot kernel bench)

# collect_stages VARIANT LOG DB SECS: adds the stage times of the run whose
# progress is in LOG (bootbench results show) to stage_times[VARIANT.STAGE],
# and what the command took besides them (its setup before the run, the
# power-off and the store write after) to stage_times[VARIANT.outside].
declare -A stage_times=()
collect_stages() {
	local v=$1 log=$2 db=$3 total=$4 id st sec sum=0
	id=$(grep -o 'run  *[0-9]\{8\}-[0-9]\{6\}-[0-9a-f]\{8\} on' "$log" | tail -n 1 | awk '{ print $2 }')
	[ -n "$id" ] || die "no run id in $log"
	while read -r st sec; do
		stage_times[$v.$st]+="$sec "
		sum=$(awk -v a="$sum" -v b="$sec" 'BEGIN { print a + b }')
	done < <(bin/bootbench results show "$id" --db "$db" | awk '/^  [a-z]+ +[0-9.]+s$/ { sub(/s$/, "", $2); print $1, $2 }')
	stage_times[$v.outside]+="$(awk -v t="$total" -v s="$sum" 'BEGIN { printf "%.1f", t - s }') "
}

# stage_median VARIANT STAGE: the median of what collect_stages gathered, "-" for none.
stage_median() {
	local vals=${stage_times[$1.$2]:-}
	if [ -z "$vals" ]; then echo -; return; fi
	read -r med _ <<<"$(stats 1 $vals)"
	echo "$med"
}
