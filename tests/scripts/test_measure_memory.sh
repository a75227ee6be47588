#!/usr/bin/env bash
# The memory figures are true: a child and a grandchild each holding 100 MiB
# of touched memory at the same time give a process-tree peak within 5% of
# 200 MiB while the largest single process is about 100 MiB; a run after a
# larger run reports its own smaller peak (ru_maxrss is per run). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
P=${BENCHGATE_BUILD:?}/tests/programs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
MiB=1048576

"$B" measure -q -w 0 -r 2 --json -- "$P/memtree" 2 100 300 >tree.json
check "tree session ok" test "$(jq -r .status tree.json)" = ok
for i in 0 1 2; do
	check "run $i: tree peak within 5% of 200 MiB" \
		jqe ".runs[$i] | .tree_peak_bytes >= 0.95 * 200 * $MiB and .tree_peak_bytes <= 1.05 * 200 * $MiB" tree.json
	check "run $i: largest process about 100 MiB" \
		jqe ".runs[$i] | .max_rss_bytes >= 100 * $MiB and .max_rss_bytes <= 110 * $MiB" tree.json
	check "run $i: sampled" jqe ".runs[$i].tree_samples >= 10" tree.json
done
[ "$fails" = 0 ] || jq -c '[.runs[] | {phase, tree_peak_bytes, tree_samples, max_rss_bytes}]' tree.json
check "tree statistics" jqe ".statistics.tree_peak_bytes.count == 2 and .statistics.tree_peak_bytes.p50 >= 190 * $MiB" tree.json

# per run, not a lifetime maximum: a small run right after the big ones in the same process
# is measured by its own session; within one session, prepare makes nothing grow either
"$B" measure -q -w 0 -r 1 --json -- "$P/memtree" 1 120 100 >big.json
"$B" measure -q -w 0 -r 1 --json -- "$P/memtree" 1 10 100 >small.json
check "big run about 120 MiB" jqe ".runs[1].max_rss_bytes >= 120 * $MiB" big.json
check "small run below 20 MiB" jqe ".runs[1].max_rss_bytes < 20 * $MiB and .runs[1].tree_peak_bytes < 20 * $MiB" small.json
# the same within one session: alternate sizes with --shell and a counter file
echo 0 >n
"$B" measure -q -w 0 -r 3 --shell --json -- \
	'i=$(cat n); echo $((i+1)) >n; if [ $((i % 2)) = 0 ]; then exec '"$P"'/memtree 1 120 100; else exec '"$P"'/memtree 1 10 100; fi' >alt.json
check "alternating: big, small, big, small" \
	jqe "[.runs[].max_rss_bytes] | (.[0] > 110 * $MiB) and (.[1] < 20 * $MiB) and (.[2] > 110 * $MiB) and (.[3] < 20 * $MiB)" alt.json
check "alternating tree peaks follow" \
	jqe "[.runs[].tree_peak_bytes] | (.[0] > 110 * $MiB) and (.[1] < 20 * $MiB)" alt.json

# a small program's ru_maxrss is benchgate's own peak, which the run
# inherits until it execs: each run records that floor, the figure is never
# below it, and the summary says the figure is not the program's
check "small program: exit 0" test "$(rc_of "$B" measure -w 0 -r 3 --json -- true)" = 0
check "small program: each run's floor, never above its peak" \
	jqe '[.runs[] | .max_rss_floor_bytes > 0 and .max_rss_bytes >= .max_rss_floor_bytes] | all' "$work/out"
check "small program: the summary says whose peak it is" \
	sh -c '"$1" session "$(jq .id "$2")" | grep -q "^              at most benchgate'"'"'s own peak at spawn (.*), which a run inherits until it execs: not the program'"'"'s peak (see tree peak)$"' _ "$B" "$work/out"
check "a large program: no such line" \
	sh -c '! "$1" measure -w 0 -r 1 -- "$2/memtree" 1 120 100 | grep -q "inherits until it execs"' _ "$B" "$P"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
