#!/usr/bin/env bash
# How do the built-in suite's figures compare with openssl's own on the same
# machine? Runs the host's `openssl speed` and `bootbench speed` for the same
# algorithms, one after the other, imports both and prints bootbench's
# comparison (ratio = built-in / openssl; below 1: the Go suite is slower).
#
# Usage, from the repository root: bench/speed-vs-openssl.sh [-s SECONDS] [-a ALG,...]
# (-a: a subset of the algorithms below, as openssl names them)
set -euo pipefail
secs=1
algs=md5,sha1,sha256,sha512,des-ede3,aes-128-cbc,aes-256-cbc,rsa2048
while getopts s:a: opt; do
	case $opt in
	s) secs=$OPTARG ;;
	a) algs=$OPTARG ;;
	*) echo "usage: $0 [-s SECONDS] [-a ALG,...]" >&2; exit 2 ;;
	esac
done
command -v openssl >/dev/null || { echo "speed-vs-openssl: openssl missing (apt-get install openssl)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory build BIN="$tmp/bootbench" >/dev/null  # the binary a user gets
export BOOTBENCH_DB=$tmp/db

# The algorithms both know, named as each wants them.
openssl speed -seconds "$secs" ${algs//,/ } 2>/dev/null >"$tmp/openssl.txt"
"$tmp/bootbench" speed --seconds "$secs" --algs "$algs" >"$tmp/speed.txt" 2>/dev/null

"$tmp/bootbench" import --board openssl --new-board --clock 0 "$tmp/openssl.txt" >/dev/null
"$tmp/bootbench" import --board bootbench-speed --new-board --clock 0 "$tmp/speed.txt" >/dev/null
echo "openssl: $(openssl version)   built-in: $(head -n1 "$tmp/speed.txt")   $(nproc) cores, $secs s per test"
"$tmp/bootbench" results compare --by board --boards openssl,bootbench-speed
