#!/usr/bin/env bash
# bench/phases.sh [BUILD] [N] - validate's phases warm, in one process
# (bench/phases.c), on a copy of the conformance tree; ROUNDS rounds
# (default 3). BUILD is a build folder with libbenchgate.a (default build).
# EVICT_MIB=64 starts every iteration with cold CPU caches (bench/phases.c).
# FRESH=M instead runs M fresh processes of one iteration each and prints
# the medians of their phases: what validate's work costs in a new process
# (first page touches, cold caches and branch predictors) rather than warm.
# Not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
n=${2:-2000}
conformance=${CONFORMANCE:-$root/../shared/conformance}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# link as the program does: the static jansson when it is there (libcrypto
# and SQLite are loaded at run time, when needed)
libs=$(find /usr/lib /usr/local/lib -name libjansson.a 2>/dev/null | head -n 1)
[ -n "$libs" ] || libs=$(pkg-config --libs jansson)
cc -O2 -I"$root/include" -I"$root/src" -o "$work/phases" "$here/phases.c" \
	"$build/libbenchgate.a" $libs -lm -lpthread -ldl
tree=$(ls -d "$conformance"/trees/*/ | head -n 1)
cp -R "$tree" "$work/tree"
chmod -R u+w "$work/tree"
cd "$work/tree"
if [ -n "${FRESH:-}" ]; then
	echo "$FRESH fresh processes, one iteration each (medians):"
	for _ in $(seq "$FRESH"); do "$work/phases" 1; done | awk '
		/ us / { name = $0; sub(/ +[0-9.]+ us.*$/, "", name)
			 n[name]++; t[name, n[name]] = $(NF - 2); f[name, n[name]] = $NF
			 if (!(name in seen)) { seen[name] = 1; order[++k] = name } }
		function med(a, name, m,   i, j, v, x) {
			for (i = 1; i <= m; i++) v[i] = a[name, i]
			for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
			return v[int((m + 1) / 2)] }
		END { printf "%-24s %8s %10s\n", "", "fresh", "faults"
		      for (i = 1; i <= k; i++) { name = order[i]; if (name ~ /^sum/) continue
			printf "%-24s %8.1f us %7d\n", name, med(t, name, n[name]), med(f, name, n[name]) } }'
	exit 0
fi
for r in $(seq "${ROUNDS:-3}"); do
	echo "round $r ($n iterations, medians):"
	"$work/phases" "$n"
done
