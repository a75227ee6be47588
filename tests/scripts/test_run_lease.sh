#!/usr/bin/env bash
# Device leases (.benchgate/leases/SLUG.lock and SLUG.json) against what a
# real machine leaves there: a holder that died but was not reaped (a
# zombie) is gone, not holding the device; a look at the lease (lease
# status, a shared lock) never makes a run refuse; a lease file that is
# not a regular file (FIFO, directory, link) is named with what to do,
# never waited on or followed; an owner record that is not one is replaced
# (never taken for a holder) when the lock is free; a dead writer's
# temporary record is removed.
# Needs git and jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
# a sleep duration of our own (see test_run_lifecycle.sh), so that cleaning
# up never touches another test's processes
nap=$(printf '4.%05d1' $(( ($$ * 7919 + RANDOM) % 100000 )))
sleeper=
trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; pkill -f "sleep $nap" 2>/dev/null; rm -rf "$work"' EXIT
L=.benchgate/leases
# waits up to 5 s for CMD to succeed
wait_for() { for _ in $(seq 100); do "$@" && return 0; sleep 0.05; done; return 1; }
napping() { pgrep -f "sleep $nap" >/dev/null; }
state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
sed -i "s/\"sleep_seconds\": 4.321/\"sleep_seconds\": $nap/" benchmarks/benchmark_registry.json
printf '.benchgate/\nout/\n' >.gitignore
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "a first run"                 test "$(rc_of "$B" run -q life.ok)" = 0

# a holder killed while its parent does not reap it: a zombie answers kill 0,
# but it runs nothing and its lock is gone
bash -c "'$B' run -q life.slow >/dev/null 2>&1 & echo \$! >'$work/zombie'; exec sleep 60" &
sleeper=$!
check "the run to be killed started" sh -c "$(declare -f wait_for napping); nap=$nap; wait_for test -s '$work/zombie' && wait_for napping"
zombie=$(cat "$work/zombie")
check "a running holder: lease status says held" sh -c "'$B' lease status | grep -q 'test-host *held'"
check "a running holder: a second run is refused" test "$(rc_of "$B" run -q life.ok)" = 3
kill -KILL "$zombie"
is_zombie() { [ "$(state_of "$zombie")" = Z ]; }
check "the killed run is a zombie"  wait_for is_zombie
pkill -f "sleep $nap"
id=$(ls -t experiments | grep slow | head -n 1)
check "zombie holder: lease status says stale" sh -c "'$B' lease status | grep -q 'test-host *stale'"
check "zombie holder: experiments says its owner is gone" \
	sh -c "'$B' experiments | grep -q '^$id .*running.*owner is gone'"
check "zombie holder: the next run takes the device" test "$(rc_of "$B" run -q life.ok)" = 0
check "zombie holder: its lease is replaced" grep -q "replaced a lease left by a process that is gone" "$work/err"
kill "$sleeper" && wait "$sleeper" 2>/dev/null
sleeper=
check "zombie holder: abandoned"    test "$(rc_of "$B" experiments abandon "$id" --why "killed in a test")" = 0
check "check passes"                test "$(rc_of "$B" check)" = 0

# a look at the lease never takes it: a run is not refused while another
# process probes the lock file with a shared lock (as lease status once did)
# or while lease status runs over and over
# (the prober is the sleep itself, holding the lock on its fd 9)
(exec 9<"$L/test-host.lock" && flock -s 9 && exec sleep 60) &
prober=$!
wait_for sh -c "! flock -n '$L/test-host.lock' true" || echo "FAIL the probe did not take its shared lock"
check "a shared lock on the lock file: a run is not refused" test "$(rc_of "$B" run -q life.ok --no-repeat)" = 0
kill "$prober" && wait "$prober" 2>/dev/null
(while :; do "$B" lease status >/dev/null; done) &
looper=$!
refused=0
for _ in 1 2 3 4 5 6; do [ "$(rc_of "$B" run -q life.ok --no-repeat -w 0 -r 1)" = 0 ] || refused=$((refused + 1)); done
kill "$looper" && wait "$looper" 2>/dev/null
check "lease status over and over: no run is refused" test "$refused" = 0

# lease files that are not regular files: run stops with exit 4, naming the
# file from the project root and what to do, and writes nothing; it never
# waits on a FIFO and never follows a link (so nothing is made outside the
# project); lease status shows the device as unusable, with the reason
n_exp=$(ls experiments | wc -l)
unusable() { # label file kind
	check "$1: run exits 4"          test "$(rc_of timeout 20 "$B" run -q life.ok)" = 4
	check "$1: run names it"         grep -qF "benchgate: .benchgate/leases/$2: is $3, not a regular file; remove it" "$work/err"
	check "$1: status says unusable" sh -c "timeout 20 '$B' lease status | grep -qF 'unusable .benchgate/leases/$2: is $3'"
	check "$1: no experiment"        test "$(ls experiments | wc -l)" = "$n_exp"
}
mkfifo "$L/test-host.json"
unusable "a FIFO owner record" test-host.json "a FIFO"
rm "$L/test-host.json" "$L/test-host.lock" && mkfifo "$L/test-host.lock"
unusable "a FIFO lock file" test-host.lock "a FIFO"
rm "$L/test-host.lock" && mkdir "$L/test-host.lock"
unusable "a directory lock file" test-host.lock "a directory"
rmdir "$L/test-host.lock" && ln -s ../../../outside "$L/test-host.lock"
unusable "a link lock file" test-host.lock "a link"
check "a link lock file: nothing made where it points" test ! -e "$work/outside"
rm "$L/test-host.lock"
printf '{"device": "test-host", "experiment_id": "x", "pid": 1, "host": "elsewhere", "user": "u", "started": "2001-01-01T00:00:00.000000Z"}' >"$work/record.json"
ln -s "$work/record.json" "$L/test-host.json"
unusable "a link owner record" test-host.json "a link"
rm "$L/test-host.json"
check "regular files again: a run"  test "$(rc_of "$B" run -q life.ok --no-repeat)" = 0
# a leases folder that cannot be made: said from the project root, with what to do
mv "$L" "$work/leases" && : >"$L"
check "leases a file: run exits 4"  test "$(rc_of "$B" run -q life.ok)" = 4
check "leases a file: named from the root, with what to do" \
	grep -qF "benchgate: .benchgate/leases: cannot create directory: Not a directory; the device leases are kept in .benchgate/leases: remove or rename what is in the way" "$work/err"
check "leases a file: no absolute path" sh -c "! grep -qF '$work' '$work/err'"
rm "$L" && mv "$work/leases" "$L"

# an owner record that is not one (not an object, no integer pid in
# 1..INT_MAX, no host, no started time that reads) names no holder: with
# the lock free it is stale, "an unreadable owner record", and the next run
# replaces it, saying so; it is never taken for a live holder (a pid of 64
# bits cut to the shell's, a live pid with no start to compare)
host=$(uname -n)
unreadable() { # label record
	printf '%s' "$2" >"$L/test-host.json"
	check "$1: status says stale"     sh -c "'$B' lease status | grep -qF 'stale    an unreadable owner record; the next run replaces it'"
	check "$1: the next run takes the device" test "$(rc_of "$B" run -q life.ok --no-repeat -w 0 -r 1)" = 0
	check "$1: it says it replaced an unreadable record" \
		grep -qF "benchgate: .benchgate/leases/test-host.json: replaced an unreadable owner record of the device lease" "$work/err"
	check "$1: not as a lease of a gone process" sh -c "! grep -q 'left by a process that is gone' '$work/err'"
}
unreadable "a list" '[1,2]'
unreadable "not JSON" 'test-host is mine'
unreadable "no started time" "{\"pid\": $$, \"host\": \"$host\"}"
unreadable "a started time that does not read" "{\"pid\": $$, \"host\": \"$host\", \"started\": \"yesterday\"}"
# RFC 3339 read strictly: a day that does not exist, an offset beyond a
# day, text after the time (each was read as a time, and a live pid held
# the device for ever)
unreadable "a 30 February" "{\"pid\": $$, \"host\": \"$host\", \"started\": \"2026-02-30T00:00:00.000000Z\"}"
unreadable "an offset of 25 hours" "{\"pid\": $$, \"host\": \"$host\", \"started\": \"2099-01-01T00:00:00+25:00\"}"
unreadable "a day padded with a space" "{\"pid\": $$, \"host\": \"$host\", \"started\": \"2099-01- 1T00:00:00Z\"}"
unreadable "text after the time" "{\"pid\": $$, \"host\": \"$host\", \"started\": \"2099-01-01T00:00:00Z and more\"}"
unreadable "a pid of 64 bits" "{\"pid\": $((4294967296 + $$)), \"host\": \"$host\", \"started\": \"2099-01-01T00:00:00.000000Z\"}"
unreadable "a pid of 0" "{\"pid\": 0, \"host\": \"$host\", \"started\": \"2099-01-01T00:00:00.000000Z\"}"
# ... but the lock is the truth: a held lock is held, whatever its record says
"$B" run -q life.slow >/dev/null 2>&1 &
holder=$!
wait_for napping || echo "FAIL the holding run did not start"
printf '[1,2]' >"$L/test-host.json"
check "held, an unreadable record: status says held" \
	sh -c "'$B' lease status | grep -qF 'held     its owner record is unreadable'"
check "held, an unreadable record: a run is refused" test "$(rc_of "$B" run -q life.ok)" = 3
check "held, an unreadable record: the refusal says so" \
	grep -qF "device 'test-host' is leased by another process (its owner record is unreadable)" "$work/err"
kill -INT "$holder"; wait "$holder"

# the temporary owner record of a run killed while writing it
# (SLUG.json.tmp.PID, PID gone) is removed by the next run that holds the
# lock; nothing else is: a live writer's, another device's, another name
sh -c 'exit 0' &
dead=$!
wait "$dead"
for f in "test-host.json.tmp.$dead" "test-host.json.tmp.$$" "other.json.tmp.$dead" "test-host.json.tmp.${dead}x"; do
	: >"$L/$f"
done
check "temporaries: a run"          test "$(rc_of "$B" run -q life.ok --no-repeat -w 0 -r 1)" = 0
check "temporaries: a dead writer's is removed" test ! -e "$L/test-host.json.tmp.$dead"
check "temporaries: a live writer's stays" test -e "$L/test-host.json.tmp.$$"
check "temporaries: another device's stays" test -e "$L/other.json.tmp.$dead"
check "temporaries: another name stays" test -e "$L/test-host.json.tmp.${dead}x"
rm -f "$L"/*.tmp.*

# a host name that is not UTF-8 (the kernel takes any bytes; set in a UTS
# namespace of the test's own): the lease record and the manifest name it
# as \xNN text, and the run goes on (it crashed writing the record)
inhost=${BENCHGATE_BUILD:?}/tests/programs/inhost
if "$inhost" probe true 2>/dev/null; then
	check "odd host name: a run"        test "$(rc_of "$inhost" "$(printf 'h\377st')" "$B" run -q --json --no-repeat -w 0 -r 1 life.ok)" = 0
	exp=$(jq -r .experiment_id "$work/out")
	check "odd host name: in the manifest" jqe '.execution.host == "h\\xffst"' "experiments/$exp/manifest.json"
	# while a run there holds the device, a look from the same host sees it held
	odd=$(printf 'h\377st')
	"$inhost" "$odd" "$B" run -q --no-repeat life.slow >/dev/null 2>&1 &
	holder=$!
	for _ in $(seq 100); do grep -qF '"h\\xffst"' "$L/test-host.json" 2>/dev/null && break; sleep 0.05; done
	check "odd host name: a held lease is seen held" \
		sh -c "'$inhost' '$odd' '$B' lease status | grep -q '^test-host  *held'"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	pkill -f "sleep $nap" 2>/dev/null
fi
check "check passes at the end"     test "$(rc_of "$B" check)" = 0

echo "$fails failed"
[ "$fails" = 0 ]
