#!/usr/bin/env bash
# Benchmark of the registry verbs (not a test). Times `validate`, `next` and
# `render` on the conformance tree and on synthetic projects of 10,000 and
# 100,000 gates (each gate names two retained measurements: one imported
# through an evidence index, one additional), reporting the median wall time
# and the largest peak RSS, with /bin/true through the same harness as the
# floor. Prints a Markdown table.
#   bench/registry.sh [BENCHGATE] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${1:-$root/build/benchgate}
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
runs=${2:-11}
conformance=${CONFORMANCE:-$root/../shared/conformance}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/runstat" "$here/runstat.c"

row() { # label dir runs cmd...
	local label=$1 dir=$2 n=$3
	shift 3
	local out
	out=$(cd "$dir" && "$work/runstat" "$n" "$@")
	printf '| %s | %s | %.1f ms | %.1f MiB |\n' "$label" "$*" \
		"$(echo "$out" | awk '{print $1 * 1000}')" "$(echo "$out" | awk '{print $2 / 1024}')"
}

echo "benchgate $("$bin" --version | cut -d' ' -f2), $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| project | command | median wall | peak RSS |"
echo "|---|---|---|---|"
if [ -d "$conformance/trees" ]; then
	tree=$(ls -d "$conformance"/trees/*/ | head -n 1)
	cp -R "$tree" "$work/corpus"
	row "corpus" "$work/corpus" "$runs" /bin/true
	row "corpus" "$work/corpus" "$runs" "$bin" validate
	row "corpus" "$work/corpus" "$runs" "$bin" next
	row "corpus" "$work/corpus" "$runs" "$bin" render --output "$work/corpus-render.md"
fi
for n in 10000 100000; do
	awk -v n=$n -v dir="$work/g$n" -f "$here/gen-registry.awk"
	"$bin" -C "$work/g$n" render >/dev/null
	k=$runs
	[ "$n" -ge 100000 ] && k=5
	row "$n gates" "$work/g$n" "$k" "$bin" validate
	row "$n gates" "$work/g$n" "$k" "$bin" next
	row "$n gates" "$work/g$n" "$k" "$bin" render --output "$work/g$n-render.md"
done
