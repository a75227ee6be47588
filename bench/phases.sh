#!/usr/bin/env bash
# bench/phases.sh [BUILD] [N] - validate's phases warm, in one process
# (bench/phases.c), on a copy of the conformance tree; ROUNDS rounds
# (default 3). BUILD is a build folder with libbenchgate.a (default build).
# EVICT_MIB=64 starts every iteration with cold CPU caches (bench/phases.c).
# Not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-2000}
conformance=${CONFORMANCE:-$root/../shared/conformance}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# link as the program does: the static archives when all are there
libs=""
for a in jansson sqlite3 crypto; do
	f=$(find /usr/lib /usr/local/lib -name "lib$a.a" 2>/dev/null | head -n 1)
	[ -n "$f" ] || { libs=$(pkg-config --libs jansson sqlite3 libcrypto); break; }
	libs="$libs $f"
done
cc -O2 -I"$root/include" -I"$root/src" -o "$work/phases" "$here/phases.c" \
	"$build/libbenchgate.a" $libs -lm -lpthread -ldl
tree=$(ls -d "$conformance"/trees/*/ | head -n 1)
cp -R "$tree" "$work/tree"
chmod -R u+w "$work/tree"
cd "$work/tree"
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r ($n iterations, medians):"
	"$work/phases" "$n"
done
