#!/usr/bin/env bash
# A run the machine slept through (suspend to RAM or disk: the boot clock
# goes on, the monotonic clock stops) ran partly on a machine coming back,
# with cold caches and clocks: it is flagged `slept` with the time slept,
# kept out of the statistics, and another timed run takes its place, as
# for a suspension of the session. The sleep is played by a preloaded
# stand-in (tests/preload/fake_boottime.c) that moves CLOCK_BOOTTIME ahead
# once a file exists. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
shim=${BENCHGATE_BUILD:?}/tests/preload/libfake_boottime.so
[ -f "$shim" ] || { echo "no $shim: build the tests first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# (a sanitizer build wants its runtime first among the preloaded libraries)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# the first timed run makes the file: the machine "slept" during it
slept() { # [environment...]
	rm -f flag seen
	env FAKE_SLEEP_FILE="$work/flag" LD_PRELOAD="$shim" "$@" "$B" measure -w 0 -r 2 --json -- \
		sh -c '[ -e seen ] && [ ! -e flag ] && touch flag; touch seen; sleep 0.05' >"$work/out" 2>"$work/err"
	printf '%s' $?
}
check "slept: measured (exit 0)"   test "$(slept)" = 0
check "... the run flagged, with the time slept" \
	jqe '[.runs[] | select(.flags | index("slept")) | .ordinal] == [2] and (.runs[1].slept_seconds | . > 29.9 and . < 31)' out
check "... the others not"         jqe '[.runs[] | .slept_seconds] | .[0] == 0 and .[2] == 0 and .[3] == 0' out
check "... another timed run took its place" jqe '.counts.timed == 3 and .statistics.wall_ns.count == 2' out
check "... status ok"              jqe '.status == "ok"' out
"$B" session "$(jq -r .id out)" >"$work/show"
check "... the summary says so" grep -qF "  slept       runs 2 spanned a system sleep (suspend)" "$work/show"

check "no sleep: measured"         test "$(slept FAKE_SLEEP_FILE=/nonexistent)" = 0
check "... nothing flagged"        jqe '[.runs[].flags[]] | index("slept") | not' out
check "... two timed runs"         jqe '.counts.timed == 2 and ([.runs[].slept_seconds] | all(. == 0))' out

check "a jump under 0.1 s: measured" test "$(slept FAKE_SLEEP_SECONDS=0.05)" = 0
check "... not a sleep"            jqe '([.runs[].flags[]] | index("slept") | not) and .counts.timed == 2' out
check "a jump of 0.2 s: a sleep"   test "$(slept FAKE_SLEEP_SECONDS=0.2)" = 0
check "... flagged"                jqe '[.runs[] | select(.flags | index("slept")) | .slept_seconds | . > 0.19 and . < 0.3] == [true]' out

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
