#!/usr/bin/env bash
# bench/experiments.sh - `benchgate experiments` (the listing) and `check` on
# a project of N ended experiments, each with its RUNS.md row (a copy of the
# mini tree's experiment, renamed), for one or more binaries side by side:
# median wall time of RUNS runs each (bench/runstat.c) and the ratio of each
# listing to check, which reads the same manifests and rows. The listing
# once read RUNS.md again for every experiment (quadratic); it reads it
# once, as check does. Not a test.
#   bench/experiments.sh [N] [BENCHGATE...]   (default 3000, build/benchgate; RUNS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
n=${1:-3000}
shift || true
[ $# -gt 0 ] || set -- "$root/build/benchgate"
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/runstat" "$here/runstat.c"
cp -R "$root/tests/cli/trees/mini" "$work/p"
cd "$work/p/experiments"
manifest=$(cat 20261101-mini-baseline/manifest.json)
row=$(grep '^| 20261101-mini-baseline ' RUNS.md)
for i in $(seq 1 "$n"); do
	id=$(printf '20261101-mini-x%06d' "$i")
	mkdir "$id"
	printf '%s\n' "${manifest//20261101-mini-baseline/$id}" >"$id/manifest.json"
	printf '%s\n' "${row//20261101-mini-baseline/$id}" >>RUNS.md
done
cd "$work/p"
echo "$((n + 1)) experiments, $runs runs each, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| binary | experiments | check | ratio |"
echo "|---|---|---|---|"
for b in "$@"; do
	case "$b" in /*) ;; *) b="$root/$b" ;; esac
	"$b" check >/dev/null || { echo "$b check fails on the generated project"; exit 2; }
	l=$("$work/runstat" "$runs" "$b" experiments | awk '{print $1 * 1000}')
	c=$("$work/runstat" "$runs" "$b" check | awk '{print $1 * 1000}')
	printf '| %s | %.1f ms | %.1f ms | %.2f |\n' "$b" "$l" "$c" "$(awk -v a="$l" -v b="$c" 'BEGIN {print a / b}')"
done
