#!/usr/bin/env bash
# bench/allclose.sh - `measure --parity allclose` on big arrays: benchgate's
# own peak RSS (which every later run inherits until it execs) and the wall
# time of a session of one smoke and one timed run (two comparisons) that
# copies a reference of MIB MiB to its output, for uint8 and float32 arrays
# in C order and a Fortran-ordered output against a C-ordered reference.
# Several builds (a before and an after) run interleaved, ROUNDS rounds,
# medians; the figures are for comparing builds in one run, not absolutes.
#   bench/allclose.sh [BENCHGATE...]   (default build/benchgate; MIB=48, ROUNDS=3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build/benchgate"
bins=()
for b in "$@"; do
	case "$b" in /*) bins+=("$b") ;; *) bins+=("$(pwd)/$b") ;; esac
done
mib=${MIB:-48}
rounds=${ROUNDS:-3}
npywrite=$root/build/tests/programs/npywrite
[ -x "$npywrite" ] || { echo "no $npywrite; build first (make)"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/runstat" "$here/runstat.c"
cd "$work"
bytes=$((mib * 1048576))
cols=8192
"$npywrite" u1.npy '|u1' "$((bytes / cols)),$cols" -Z "$bytes"
"$npywrite" u1f.npy '|u1' "$((bytes / cols)),$cols" -F -Z "$bytes"
"$npywrite" f4.npy '<f4' "$((bytes / 4 / cols)),$cols" -Z "$bytes"
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "$mib MiB arrays, $rounds rounds, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "u1 u1" "f4 f4" "u1 u1f"; do
	set -- $c
	ref=$1.npy out=$2.npy
	for i in "${!bins[@]}"; do : >"t$i"; : >"m$i"; done
	for r in $(seq "$rounds"); do
		for i in "${!bins[@]}"; do
			rm -rf .benchgate
			BENCHGATE_NO_CGROUP=1 "$work/runstat" 1 "${bins[$i]}" measure -q -w 0 -r 1 --output out.npy \
				--parity "allclose:$ref" -- cp "$out" out.npy >"line" 2>/dev/null
			awk '{printf "%.3f\n", $1}' line >>"t$i"
			awk '{printf "%.1f\n", $2 / 1024}' line >>"m$i"
		done
	done
	for i in "${!bins[@]}"; do
		printf '%-8s vs %-8s %s: %7.3f s, peak RSS %7.1f MiB\n' "$out" "$ref" "${bins[$i]}" \
			"$(median <"t$i")" "$(median <"m$i")"
	done
done
