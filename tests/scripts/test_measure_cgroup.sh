#!/usr/bin/env bash
# The cgroup peak: where benchgate can make a cgroup v1 memory cgroup under
# its own (root on a cgroup v1 memory hierarchy, as on this project's
# machines), every run gets an exact cgroup_peak_bytes, also a run too
# short for the sampler, unless the smoke run took under 20 ms (then only
# the smoke run has one); the run cgroup is removed after each run, a
# process the run leaves behind is moved back and keeps running, and the
# cgroup of a benchgate that died is removed by the next session that
# finds it empty.
# BENCHGATE_NO_CGROUP=1 turns it off. Where no such cgroup can be made,
# cgroup_peak_bytes is null and memory_source_note says why. The test
# creates no cgroup itself except the stale ones it plants, which benchgate
# must remove, and one with a memory limit to run benchgate in (the trap
# removes both). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
P=${BENCHGATE_BUILD:?}/tests/programs
work=$(mktemp -d)
base=
stale=
busy=
limited=
cleanup() {
	[ -n "$stale" ] && [ -d "$stale" ] && rmdir "$stale"
	pkill -f "sleep 7.5" 2>/dev/null
	[ -n "$busy" ] && [ -d "$busy" ] && { sleep 0.2; rmdir "$busy"; }
	[ -n "$limited" ] && [ -d "$limited" ] && rmdir "$limited"
	pkill -f "sleep 7.25" 2>/dev/null
	pkill -f "cgsleep-$$" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
MiB=1048576

# can a run cgroup be made here? (the same test benchgate makes, done by hand)
path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ {print $5}' /proc/self/mountinfo | head -n 1)
if [ -n "$path" ] && [ -n "$mnt" ] && [ -w "$mnt$path" ] && [ "$(id -u)" = 0 ]; then
	base=$mnt${path%/}
fi
# run cgroups left by a benchgate that is gone (benchgate-PID-N): those of a
# benchgate still running (another test's, meanwhile) are not ours to count
left() {
	local d p n=0
	for d in "$base"/benchgate-*; do
		[ -d "$d" ] || continue
		p=${d##*/benchgate-}
		kill -0 "${p%%-*}" 2>/dev/null || n=$((n + 1))
	done
	echo "$n"
}

if [ -z "$base" ]; then
	echo "(no writable cgroup v1 memory hierarchy here: checking the fallback; skipping the timeout"
	echo " of a run that left its process group, which only a run cgroup reaches)"
	"$B" measure -q -w 0 -r 2 --json -- "$P/memtree" 1 8 0 >none.json
	check "fallback: session ok"     test "$(jq -r .status none.json)" = ok
	check "fallback: peaks null"     jqe '[.runs[].cgroup_peak_bytes] == [null, null, null]' none.json
	check "fallback: note says why"  jqe '.memory_source_note | test("cgroup_peak_bytes is null")' none.json
	echo "$fails failed"
	[ "$fails" = 0 ]
	exit
fi

# a stale run cgroup of a benchgate that is gone (a pid that is not running)
dead=$((4194304 - 7))
while kill -0 "$dead" 2>/dev/null; do dead=$((dead - 1)); done
stale=$base/benchgate-$dead-3
mkdir "$stale" || exit 1

# two processes of 48 MiB each, held for no time: too short for the sampler
"$B" measure -q -w 0 -r 3 --sample-interval 1000 --json -- "$P/memtree" 2 48 0 >cg.json
check "session ok"                 test "$(jq -r .status cg.json)" = ok
check "every run has a cgroup peak" jqe '[.runs[].cgroup_peak_bytes | numbers] | length == 4' cg.json
check "peak holds both processes"  jqe "[.runs[].cgroup_peak_bytes] | all(. >= 96 * $MiB and . <= 128 * $MiB)" cg.json
check "the sampler missed them"    jqe '[.runs[] | select(.tree_samples == 0)] | length >= 1' cg.json
check "statistics over timed runs" jqe ".statistics.cgroup_peak_bytes.count == 3 and .statistics.cgroup_peak_bytes.p50 >= 96 * $MiB" cg.json
check "note says what it is"       jqe '.memory_source_note | startswith("cgroup_peak_bytes: memory.max_usage_in_bytes")' cg.json
check "summary line"               sh -c "'$B' session \$(jq .id cg.json) | grep -q '^  cgroup peak '"
check "the stale cgroup is gone"   test ! -d "$stale"
check "no run cgroup left"         test "$(left)" = 0

# a run that leaves a process running: it is moved back, keeps running, and the cgroup goes
"$B" measure -q -w 0 -r 1 --shell --json -- 'sleep 7.25 >/dev/null 2>&1 & exit 0' >bg.json
check "background: session ok"     test "$(jq -r .status bg.json)" = ok
check "background: cgroup removed" test "$(left)" = 0
check "background: still running"  pgrep -f "sleep 7.25"
check "background: in our cgroup"  sh -c "grep -q \"\$(pgrep -f 'sleep 7.25' | head -n 1)\" '$base/cgroup.procs'"
pkill -f "sleep 7.25"

# a timeout kills every process of the run's cgroup, also one that left the
# run's process group (setsid, then its parent exited): nothing is left,
# and the record says so
if command -v setsid >/dev/null; then
	cp "$(command -v sleep)" "$work/cgsleep-$$"
	Z=$work/cgsleep-$$
	"$B" measure -q -w 0 -r 1 --timeout 1 --json --shell -- "(setsid $Z 37 &); $Z 38" >esc.json 2>esc.err
	check "escaped: blocked"           test "$(jq -r .status esc.json)" = blocked
	check "escaped: reason"            jqe '.reason == "smoke run 1 timed out after 1 s; its process tree was killed"' esc.json
	check "escaped: none left running" jqe '.runs[0].left_running == 0' esc.json
	check "escaped: killed"            sh -c "! pgrep -f '[c]gsleep-$$ 37'"
	check "escaped: cgroup removed"    test "$(left)" = 0
	pkill -f "cgsleep-$$"
else
	echo "(no setsid here: skipping the timeout of a run that left its process group)"
fi

# a run that leaves a process outside its process group and exits: its
# cgroup still holds it, so it is counted as left running (and keeps
# running); the runs take 50 ms, so that the timed run has a cgroup too
"$B" measure -q -w 0 -r 1 --shell --json -- 'setsid sleep 7.25 >/dev/null 2>&1 & sleep 0.05; exit 0' >bg2.json
check "setsid background: counted" jqe '[.runs[].left_running] == [1, 1]' bg2.json
pkill -f "sleep 7.25"

# a run sees the limit benchgate's own cgroup had (a JVM sizes its heap by it)
limited=$base/bgtest-limited-$$
mkdir "$limited" && echo $((768 * MiB)) >"$limited/memory.limit_in_bytes" || exit 1
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" measure -q -w 0 -r 1 --shell --json -- "$3"' sh "$limited" "$B" \
	'cat "'"$mnt"'$(awk -F: '"'"'$2 ~ /(^|,)memory(,|$)/ {print $3}'"'"' /proc/self/cgroup)/memory.limit_in_bytes" >>limit.txt; sleep 0.03' >lim.json
check "limit: session ok"          test "$(jq -r .status lim.json)" = ok
check "limit: the run saw 768 MiB" test "$(sort -u limit.txt)" = $((768 * MiB))
check "limit: in its own cgroup"   jqe '[.runs[].cgroup_peak_bytes | numbers] | length == 2' lim.json
# a run the OOM killer ends at that limit: the reason says so, and what to do
# (memtree holds 900 MiB for 300 ms: the smoke run takes well over 20 ms)
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" measure -q -w 0 -r 1 --json -- "$3/memtree" 1 900 300' sh "$limited" "$B" "$P" >oom.json
check "out of memory: blocked"     test "$(jq -r .status oom.json)" = blocked
check "out of memory: said, with the limit" \
	jqe --arg l "$((768 * MiB))" '.reason == "smoke run 1 was killed by signal 9 (SIGKILL: Killed): the kernel'"'"'s OOM killer ended it, its memory cgroup'"'"'s limit (\($l) bytes, benchgate'"'"'s own) reached; give it more memory, or measure it on less data"' oom.json
rmdir "$limited" && limited=

# a stale cgroup with a process still in it is left alone until it is empty
busy=$base/benchgate-$dead-5
mkdir "$busy" || exit 1
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 7.5' sh "$busy" &
for _ in $(seq 50); do [ -n "$(cat "$busy/cgroup.procs")" ] && break; sleep 0.05; done
"$B" measure -q -w 0 -r 1 --json -- true >/dev/null
check "busy stale: left alone"     test -n "$(cat "$busy/cgroup.procs")"
pkill -f "sleep 7.5"
wait 2>/dev/null
"$B" measure -q -w 0 -r 1 --json -- true >/dev/null
check "busy stale: gone once empty" test ! -d "$busy"

# runs under 20 ms: only the smoke run gets a cgroup (its cost, a few tenths
# of a millisecond a run, would dominate such a session, and the kernel's
# charge batching makes its figure coarse at that scale)
"$B" measure -q -w 1 -r 3 --json -- true >short.json
check "short: smoke run only"      jqe '[.runs[].cgroup_peak_bytes | numbers] | length == 1' short.json
check "short: the smoke run's"     jqe '.runs[0].cgroup_peak_bytes | numbers' short.json
check "short: statistics null"     jqe '.statistics.cgroup_peak_bytes == null' short.json
check "short: note says why"       jqe '.memory_source_note | test("of the smoke run only, which took [0-9.]+ ms: no run cgroup is made for runs under 20 ms")' short.json
check "short: none left"           test "$(left)" = 0

# turned off
BENCHGATE_NO_CGROUP=1 "$B" measure -q -w 0 -r 1 --json -- "$P/memtree" 1 8 0 >off.json
check "off: peaks null"            jqe '[.runs[].cgroup_peak_bytes] == [null, null]' off.json
check "off: note"                  jqe '.memory_source_note | startswith("BENCHGATE_NO_CGROUP is set")' off.json
check "off: no summary line"       sh -c "! '$B' session \$(jq .id off.json) | grep -q 'cgroup peak'"
check "none left at the end"       test "$(left)" = 0

echo "$fails failed"
[ "$fails" = 0 ]
