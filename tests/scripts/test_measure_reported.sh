#!/usr/bin/env bash
# benchgate measure --timing reported: the $BENCHGATE_RESULT file each run
# writes becomes the session's timing and metrics; a missing, malformed or
# inconsistent file blocks the session and never yields a number. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export TMPDIR=$work/tmp
mkdir "$TMPDIR"

check "bad --timing"        test "$(rc_of "$B" measure --timing wall -- true)" = 2
check "bad --timing named"  grep -q "'process' or 'reported'" err

# a command that reports three samples and two metrics per run; the run
# number (from a counter file) varies the samples
cat >report.sh <<'SH'
#!/bin/sh
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
printf '{"samples_seconds": [0.010, 0.01%s, 0.030], "metrics": {"logical_resident_bytes": 1024, "gflops": %s}}\n' \
	"$n" "$n.5" >"$BENCHGATE_RESULT"
SH
chmod +x report.sh
BENCHGATE_RESULT=/dev/null check "reported session" test "$(rc_of "$B" measure -q -w 1 -r 3 --timing reported --json -- ./report.sh)" = 0
cp out s.json
check "status ok"           test "$(jq -r .status s.json)" = ok
check "timing recorded"     jqe '.timing == "reported" and .options.timing == "reported"' s.json
check "samples pooled"      test "$(jq .statistics.reported_ns.count s.json)" = 9
check "reported p50"        jqe '.statistics.reported_ns.p50 > 1.39e7 and .statistics.reported_ns.p50 < 1.41e7' s.json
check "reported min, max"   jqe '.statistics.reported_ns.min > 0.99e7 and .statistics.reported_ns.max > 2.99e7' s.json
check "wall kept apart"     test "$(jq .statistics.wall_ns.count s.json)" = 3
check "each run's samples"  test "$(jq -c '.runs[4].reported.samples_seconds' s.json)" = "[0.01,0.015,0.03]"
check "warmup read too"     jqe '.runs[1].reported.metrics.gflops == 2.5' s.json
check "metric median"       jqe '.metrics.gflops == 4.5 and .statistics.metrics.gflops.count == 3' s.json
check "a count stays an integer" test "$(jq -c .metrics.logical_resident_bytes s.json)" = 1024
check "no result file kept" jqe '[.runs[].result_file] | all(. == null)' s.json
check "temporary folder removed" test -z "$(ls "$TMPDIR")"
check "summary"             test "$(rc_of "$B" session 1)" = 0
check "summary: reported"   grep -q "reported .*(9 samples)" out
check "summary: metric"     grep -q "metric      gflops: p50 4.5" out
check "sessions --json"     test "$(rc_of "$B" sessions --json)" = 0
check "stored timing: the reported one" jqe '.[0].wall_p50_ns > 1.39e7 and .[0].wall_p50_ns < 1.41e7' out

# process timing (the default) has no reported statistics
check "process session"     test "$(rc_of "$B" measure -q -r 1 --json -- true)" = 0
check "process: null"       jqe '.timing == "process" and .statistics.reported_ns == null and (has("metrics") | not)' out
# nor passes a BENCHGATE_RESULT of the caller's on to the command
check "process: the caller's BENCHGATE_RESULT, exit 0" \
	test "$(BENCHGATE_RESULT="$PWD/outer.json" rc_of "$B" measure -q -r 1 -w 0 --shell -- 'printf %s "${BENCHGATE_RESULT-unset}" >seen.txt')" = 0
check "process: the caller's BENCHGATE_RESULT not passed" test "$(cat seen.txt)" = unset

# every way a result can fail blocks the session (exit 1), with a reason
blocked() { # NAME REASON-PATTERN SCRIPT-BODY: the smoke run blocks, so no timing
	printf '#!/bin/sh\n%s\n' "$3" >cmd.sh
	chmod +x cmd.sh
	rm -f count
	check "$1: blocked"       test "$(rc_of "$B" measure -q -w 0 -r 2 --timing reported --json -- ./cmd.sh)" = 1
	check "$1: reason"        jqe --arg p "$2" '.status == "blocked" and (.reason | test($p))' out
	case $2 in smoke*) check "$1: no timing" jqe '.statistics.reported_ns == null and .counts.timed == 0' out ;; esac
}
blocked "no file"        'smoke run 1: the command wrote no \$BENCHGATE_RESULT file' 'exit 0'
blocked "not JSON"       'smoke run 1: \$BENCHGATE_RESULT:1:[0-9]+: ' 'printf "{\"samples_seconds\": [1,]}" >"$BENCHGATE_RESULT"'
blocked "not an object"  'top level must be a JSON object' 'echo "[1]" >"$BENCHGATE_RESULT"'
blocked "no samples"     "'samples_seconds' must be a non-empty list" 'echo "{\"samples_seconds\": []}" >"$BENCHGATE_RESULT"'
blocked "negative"       'samples_seconds\[1\] must be a number of seconds from 0 to 1e9' 'echo "{\"samples_seconds\": [1, -0.5]}" >"$BENCHGATE_RESULT"'
blocked "a string"       'samples_seconds\[0\]' 'echo "{\"samples_seconds\": [\"1\"]}" >"$BENCHGATE_RESULT"'
blocked "unknown field"  "no field 'sample_seconds'" 'echo "{\"sample_seconds\": [1]}" >"$BENCHGATE_RESULT"'
blocked "bad metric"     "metric 'x' must be a finite number" 'echo "{\"samples_seconds\": [1], \"metrics\": {\"x\": \"big\"}}" >"$BENCHGATE_RESULT"'
blocked "repeated key"   "\\\$BENCHGATE_RESULT:1:[0-9]+: invalid JSON: duplicate object key near '\"samples_seconds\"'" 'echo "{\"samples_seconds\": [1], \"samples_seconds\": [2]}" >"$BENCHGATE_RESULT"'
blocked "metrics a list" "'metrics' must be an object" 'echo "{\"samples_seconds\": [1], \"metrics\": [1]}" >"$BENCHGATE_RESULT"'
blocked "timed run fails" 'timed run 2 \(#3\): the command wrote no' \
	'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count; [ $n -lt 3 ] && echo "{\"samples_seconds\": [1]}" >"$BENCHGATE_RESULT"; exit 0'
blocked "metric missing" "metric 'm' was reported by 1 of 2 timed runs \\(not by timed run 2 \\(#3\\)\\); every run must report the same metrics" \
	'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count; if [ $n = 2 ]; then echo "{\"samples_seconds\": [1], \"metrics\": {\"m\": 1}}"; else echo "{\"samples_seconds\": [1]}"; fi >"$BENCHGATE_RESULT"'
check "the runs before the block still count, not the one that blocked" \
	jqe '.statistics.reported_ns.count == 1 and .statistics.wall_ns.count == 1 and .statistics.metrics.m.count == 1' out
blocked "metric added" "metric 'k' was reported by 1 of 2 timed runs \\(by timed run 2 \\(#3\\), not by the 1 before it\\); every run must report the same metrics" \
	'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count; if [ $n = 3 ]; then echo "{\"samples_seconds\": [5], \"metrics\": {\"k\": 1}}"; else echo "{\"samples_seconds\": [1]}"; fi >"$BENCHGATE_RESULT"'
check "metric added: the run that added it counts in nothing" \
	jqe '.statistics.reported_ns.count == 1 and .statistics.reported_ns.max < 2e9 and (.metrics | length) == 0' out
check "temporary folders removed" test -z "$(ls "$TMPDIR")"

# a timed run that reports samples but fails parity is not in the timing:
# run 4 (the second timed run) reports 5 s and a metric of 99, and writes a
# wrong output
cat >badout.sh <<'SH'
#!/bin/sh
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
if [ $n = 4 ]; then s=5; m=99; echo bye >o.txt; else s=0.01; m=1; echo hello >o.txt; fi
echo "{\"samples_seconds\": [$s], \"metrics\": {\"m\": $m}}" >"$BENCHGATE_RESULT"
SH
chmod +x badout.sh
rm -f count
good=$(printf 'hello\n' | sha256sum | cut -d' ' -f1)
check "parity fails: exit 1" test "$(rc_of "$B" measure -q -w 1 -r 3 --timing reported --json --output o.txt --parity "sha256:$good" -- ./badout.sh)" = 1
check "parity fails: its samples left out" jqe '.counts.timed == 2 and .statistics.reported_ns.count == 1 and .statistics.reported_ns.max < 1e9' out
check "parity fails: its metric left out" jqe '.statistics.metrics.m.count == 1 and .metrics.m == 1' out
rm -f count o.txt badout.sh

# a failing run is blocked for its exit status, not for the missing file
printf '#!/bin/sh\nexit 3\n' >fail.sh
chmod +x fail.sh
check "failing run"         test "$(rc_of "$B" measure -q -r 1 --timing reported --json -- ./fail.sh)" = 1
check "failing run: reason" jqe '.reason == "smoke run 1 exited with status 3"' out

# no folder for the result files: an I/O failure (exit 4), named
check "TMPDIR unusable"     test "$(TMPDIR=$work/none rc_of "$B" measure -q -r 1 --timing reported -- ./report.sh)" = 4
check "TMPDIR named"        grep -qxF "benchgate: '$work/none' (\$TMPDIR): cannot make a folder for \$BENCHGATE_RESULT there: No such file or directory; set TMPDIR to a folder you may write" err

# a relative TMPDIR still gives an absolute $BENCHGATE_RESULT: the program
# may change its directory before it writes the file
mkdir -p reltmp
check "relative TMPDIR"     test "$(TMPDIR=reltmp rc_of "$B" measure -q -r 1 -w 0 --timing reported -- sh -c 'cd / && echo "{\"samples_seconds\": [0.1]}" >"$BENCHGATE_RESULT"')" = 0
check "relative TMPDIR: removed" test -z "$(ls reltmp)"
rmdir reltmp

# what the command makes at $BENCHGATE_RESULT that is not a file blocks the
# session without being read: a FIFO was opened and waited on for ever
# (--timeout did not help), a link to /dev/zero read up to 256 MiB
check "a FIFO: blocked, not waited on" test "$(timeout 20 sh -c "'$B' measure -q -w 0 -r 1 --timing reported --json -- sh -c 'mkfifo \"\$BENCHGATE_RESULT\"' >out 2>err; echo \$?")" = 1
check "a FIFO: the reason" jqe '.reason == "smoke run 1: $BENCHGATE_RESULT: not a regular file (a FIFO); the command must write its result as a file at that path"' out
check "a device: blocked"  test "$(rc_of "$B" measure -q -w 0 -r 1 --timing reported --json -- sh -c 'ln -s /dev/zero "$BENCHGATE_RESULT"')" = 1
check "a device: the reason" jqe '.reason | endswith("not a regular file (a device or socket); the command must write its result as a file at that path")' out
# the temporary folder goes with everything the runs left in it (a copy, a
# folder, a link, whose target stays)
: >kept
check "leftovers: session ok" test "$(rc_of "$B" measure -q -w 0 -r 2 --timing reported -- sh -c 'd=$(dirname "$BENCHGATE_RESULT"); echo "{\"samples_seconds\": [0.1]}" >"$BENCHGATE_RESULT"; cp "$BENCHGATE_RESULT" "$BENCHGATE_RESULT.bak"; mkdir -p "$d/sub"; : >"$d/sub/x"; ln -sf "$PWD/kept" "$d/link"')" = 0
check "leftovers: folder removed" test -z "$(ls "$TMPDIR")"
check "leftovers: a link's target kept" test -f kept
rm -f kept

# nothing is read from a run that failed: its exit status blocks it, and
# its record holds no samples and no second reason
check "a failed run's file: blocked (exit 1)" test "$(rc_of "$B" measure -q -w 0 -r 1 --timing reported --json -- sh -c 'echo "{\"samples_seconds\": [0.001], \"metrics\": {\"m\": 5}}" >"$BENCHGATE_RESULT"; exit 2')" = 1
check "... not read" jqe '.runs[0].reported == null and .runs[0].reported_error == null and (.reason | test("exited with status 2"))' out
check "a failed run, no file: no second reason" test "$(rc_of "$B" measure -q -w 0 -r 1 --timing reported --json -- sh -c 'exit 2')" = 1
check "... reported_error null" jqe '.runs[0].reported_error == null' out

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
