#!/usr/bin/env bash
# bench/validate.sh - `benchgate validate` on the conformance tree against
# /bin/true through the same harness (bench/runstat.c: median wall time of N
# fork+exec runs), in ROUNDS interleaved rounds so that all commands see the
# same machine load. Prints each round and the medians; the target (issue 2)
# is validate <= 2 x /bin/true. Not a test.
#   bench/validate.sh [BENCHGATE...]   (default build/benchgate; ROUNDS=5, N=101)
# Several binaries (e.g. a before and an after build) are measured side by side.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
conformance=${CONFORMANCE:-$root/../shared/conformance}
rounds=${ROUNDS:-5}
n=${N:-101}
[ $# -gt 0 ] || set -- "$root/build/benchgate"
bins=()
for b in "$@"; do
	case "$b" in /*) bins+=("$b") ;; *) bins+=("$(pwd)/$b") ;; esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/runstat" "$here/runstat.c"
tree=$(ls -d "$conformance"/trees/*/ | head -n 1)
cp -R "$tree" "$work/tree"
chmod -R u+w "$work/tree"
cd "$work/tree"
for b in "${bins[@]}"; do
	"$b" validate >/dev/null || { echo "$b validate fails in $tree"; exit 2; }
done
ms() { "$work/runstat" "$n" "$@" | awk '{printf "%.3f", $1 * 1000}'; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "tree $(basename "$tree"), $rounds rounds of $n runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/true.txt"
for i in "${!bins[@]}"; do : >"$work/v$i.txt"; : >"$work/r$i.txt"; done
for r in $(seq "$rounds"); do
	t=$(ms /bin/true)
	echo "$t" >>"$work/true.txt"
	line="round $r: /bin/true $t ms"
	for i in "${!bins[@]}"; do
		v=$(ms "${bins[$i]}" validate)
		echo "$v" >>"$work/v$i.txt"
		awk -v a="$v" -v b="$t" 'BEGIN {printf "%.3f\n", a / b}' >>"$work/r$i.txt"
		line="$line | $(basename "${bins[$i]}") validate $v ms ($(tail -1 "$work/r$i.txt")x)"
	done
	echo "$line"
done
echo "median: /bin/true $(median <"$work/true.txt") ms"
for i in "${!bins[@]}"; do
	echo "        ${bins[$i]} validate $(median <"$work/v$i.txt") ms, median ratio $(median <"$work/r$i.txt") (target <= 2)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
