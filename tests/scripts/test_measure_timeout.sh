#!/usr/bin/env bash
# --timeout and SIGINT (and SIGHUP, unless under nohup) kill the whole
# process tree of a run (also a background grandchild), the session is
# blocked (timeout, exit 1) or not stored (interrupt, exit 4), and nothing
# is left running; a SIGKILL of benchgate takes the run with it; a run
# killed by a signal of its own blocks the session, naming the signal.
# Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'pkill -f "bgsleep-$$"; rm -rf "$work"' EXIT
cd "$work" || exit 1
cp "$(command -v sleep)" "$work/bgsleep-$$"
S="$work/bgsleep-$$"
alive() { pgrep -f "bgsleep-$$" >/dev/null; }
# mid_run SIGNAL RUN [benchgate arguments...]: starts benchgate (stdout in
# out, stderr in err), sends SIGNAL once the process "RUN" (a full command
# line) runs, and waits; the exit status is in $rc
mid_run() {
	local sig=$1 run=$2 pid
	shift 2
	"$@" >out 2>err &
	pid=$!
	for _ in $(seq 100); do pgrep -fx "$run" >/dev/null && break; sleep 0.05; done
	kill "-$sig" "$pid"
	wait "$pid" 2>/dev/null
	rc=$?
}
# watch PID SECONDS: a watchdog that SIGKILLs PID after SECONDS (its sleep
# ends with it: killing the subshell alone would leave the sleep running);
# reap PID: waits for PID, its exit status in $rc, and ends the watchdog
watch() {
	( sleep "$2" & s=$!; trap 'kill "$s"; exit 0' TERM; wait "$s" && kill -KILL "$1" ) 2>/dev/null &
	dog=$!
}
reap() {
	wait "$1"
	rc=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
}

check "timeout: exit 1" test "$(rc_of timeout 60 "$B" measure -q -w 0 -r 1 --timeout 0.3 --json --shell -- "$S 30 & $S 31; wait")" = 1
check "timed out recorded" jqe '.runs[0].timed_out == true and .runs[0].signal == 9 and .runs[0].exit_status == null' out
# the timeout counts from where the run's wall time does (after benchgate
# joins it to its cgroup, milliseconds on a busy v1 hierarchy): a run
# killed at 0.3 s never took less (they were recorded at 0.28-0.295 s, and
# runs of 0.297 s killed)
check "timed out: not before its time" jqe '.runs[0].wall_ns >= 300000000' out
check "timeout reason" jqe '.reason | test("smoke run 1 timed out after 0.3 s; its process tree was killed")' out
sleep 0.2
check "no process left after timeout" bash -c "! pgrep -f [b]gsleep-$$"

# SIGINT: the run's tree dies, the session is not stored
mid_run INT "$S 30" "$B" measure -w 0 -r 1 --shell -- "$S 30 & $S 31; wait"
check "interrupt: exit 4" test "$rc" = 4
check "interrupt message" grep -q "interrupted: the session was not stored" err
sleep 0.2
check "no process left after interrupt" bash -c "! pgrep -f [b]gsleep-$$"
check "only the timeout session stored" test "$(rc_of "$B" sessions --json; jq length out)" = 01

# --cleanup runs also after an interruption, but a further SIGINT or SIGTERM
# stops it (it used to be waited for to its end, whatever came), and the
# message says so; the watchdog ends a benchgate that ignores it
"$B" measure -q -w 0 -r 1 --cleanup "$S 120" -- "$S" 30 >out 2>err &
pid=$!
watch "$pid" 30
for _ in $(seq 200); do pgrep -fx "$S 30" >/dev/null && break; sleep 0.05; done
kill -INT "$pid"
for _ in $(seq 200); do pgrep -fx "$S 120" >/dev/null && break; sleep 0.05; done
check "cleanup: runs after the interrupt" pgrep -fx "$S 120"
kill -TERM "$pid"
reap "$pid"
check "cleanup: a second signal ends it, exit 4" test "$rc" = 4
check "cleanup: message says it was interrupted" grep -q "interrupted: the session was not stored; the cleanup command was interrupted too" err
sleep 0.2
check "cleanup: no process left" bash -c "! pgrep -f [b]gsleep-$$"
pkill -f "bgsleep-$$"

# SIGINT between the runs of a quick command: most of the session's time is
# then spent on records between runs, where the signal interrupts no wait;
# it must stop the session all the same, every time (it used to be lost
# there, and the session ran to its end and was stored)
for k in 1 2 3 4 5; do
	rm -f started
	"$B" measure -q -w 0 -r 100000 --shell -- ': > started' >out 2>err &
	pid=$!
	watch "$pid" 120
	for _ in $(seq 400); do [ -e started ] && break; sleep 0.05; done
	sleep "0.0$k"
	kill -INT "$pid"
	reap "$pid"
	check "interrupt between runs ($k): exit 4" test "$rc" = 4
	check "interrupt between runs ($k): message" grep -q "interrupted: the session was not stored" err
done
check "interrupted sessions not stored" test "$(rc_of "$B" sessions --json; jq length out)" = 01

# SIGHUP (the terminal or ssh connection closed) ends the session as SIGINT
# does; under nohup it is ignored and the session completes
mid_run HUP "$S 30" "$B" measure -w 0 -r 1 -- "$S" 30
check "hang-up: exit 4" test "$rc" = 4
check "hang-up message" grep -q "interrupted: the session was not stored" err
sleep 0.2
check "no process left after a hang-up" bash -c "! pgrep -f [b]gsleep-$$"
mid_run HUP "$S 0.6" nohup "$B" measure -q -w 0 -r 1 -- "$S" 0.6
check "hang-up under nohup: ignored, exit 0" test "$rc" = 0

# SIGQUIT (Ctrl-\) ends the session as SIGINT does: it killed benchgate
# (status 131), leaving the run's tree, its outputs' marks and no cleanup
mid_run QUIT "$S 30" "$B" measure -w 0 -r 1 --cleanup ': > cleaned' -- "$S" 30
check "quit: exit 4" test "$rc" = 4
check "quit message" grep -q "interrupted: the session was not stored" err
check "quit: the cleanup ran" test -e cleaned
sleep 0.2
check "no process left after a quit" bash -c "! pgrep -f [b]gsleep-$$"
rm -f cleaned

# benchgate killed outright (SIGKILL cannot be caught): the run's process
# dies with it rather than running on as an orphan
mid_run KILL "$S 30" "$B" measure -w 0 -r 1 -- "$S" 30
sleep 0.2
# (a zombie may stay: its new parent, the init process, may not reap here)
check "no run left after benchgate was killed" bash -c "! ps -eo stat=,args= | awk '\$1 !~ /^Z/' | grep -q '[b]gsleep-$$'"
pkill -f "bgsleep-$$"

# a run killed by a signal (not benchgate's timeout) blocks and says which
check "killed run: exit 1" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --shell -- 'kill -KILL $$')" = 1
check "killed run recorded" jqe '.runs[0].signal == 9 and .runs[0].timed_out == false and .counts.timed == 0' out
check "killed run reason" jqe '.reason == "smoke run 1 was killed by signal 9 (SIGKILL: Killed)"' out

# SIGTSTP (Ctrl-Z, kill -TSTP) suspends the session: the run's process
# group is stopped, then benchgate; SIGCONT goes on with both. The timed
# run that spanned the stop holds it in its wall time: it is marked, kept
# out of the statistics, and another timed run takes its place
stopped() { [ -n "$1" ] && awk '{exit $3 != "T"}' "/proc/$1/stat"; }
rm -f count
"$B" measure -q -w 0 -r 2 --json --shell -- "n=\$(cat count 2>/dev/null || echo 0); echo \$((n + 1)) >count; $S 2" >out 2>err &
pid=$!
watch "$pid" 60
run=
for _ in $(seq 400); do # the first timed run's sleep
	[ "$(cat count 2>/dev/null)" = 2 ] && run=$(pgrep -fx "$S 2") && break
	sleep 0.05
done
kill -TSTP "$pid"
for _ in $(seq 100); do stopped "$pid" && break; sleep 0.05; done
check "suspend: benchgate stopped" stopped "$pid"
check "suspend: the run stopped with it" stopped "$run"
kill -CONT "$pid"
reap "$pid"
check "suspend: exit 0" test "$rc" = 0
check "suspend: the run that spanned it is marked" jqe '[.runs[].suspended] == [false, true, false, false] and (.runs[1].flags | index("suspended"))' out
check "suspend: kept out of the statistics, replaced" jqe '.counts.timed == 3 and .statistics.wall_ns.count == 2' out

# SIGSTOP of benchgate itself (a job scheduler, a debugger), which it cannot
# catch: the run goes on meanwhile, but its wall time ends when benchgate
# is continued. The continue shows the stop: the run that spanned it is
# marked and replaced as for SIGTSTP, and its --timeout (2 s, exceeded by
# the 3 s stop) does not count the stop
# (with a --timeout, and without one, where benchgate waits on nothing else)
sigstop_case() { # LABEL [measure options...]
	local label=$1
	shift
	rm -f count
	"$B" measure -q -w 0 -r 2 "$@" --json --shell -- "n=\$(cat count 2>/dev/null || echo 0); echo \$((n + 1)) >count; $S 1" >out 2>err &
	pid=$!
	watch "$pid" 60
	for _ in $(seq 400); do # the first timed run's sleep
		[ "$(cat count 2>/dev/null)" = 2 ] && pgrep -fx "$S 1" >/dev/null && break
		sleep 0.05
	done
	kill -STOP "$pid"
	sleep 3
	kill -CONT "$pid"
	reap "$pid"
	check "SIGSTOP$label: exit 0, not timed out" test "$rc" = 0
	check "SIGSTOP$label: the run that spanned it is marked" jqe '[.runs[].suspended] == [false, true, false, false] and .runs[1].timed_out == false and .runs[1].wall_ns > 3e9' out
	check "SIGSTOP$label: kept out of the statistics, replaced" jqe '.counts.timed == 3 and .statistics.wall_ns.count == 2 and .statistics.wall_ns.max < 2e9' out
}
sigstop_case ", --timeout 2" --timeout 2
sigstop_case ", no timeout"

# a timed-out run that left a process outside its process group (setsid,
# then its parent exited): without a run cgroup benchgate finds it, adopted
# as subreaper, and kills it with the tree (test_measure_cgroup.sh: with a
# run cgroup, the cgroup's kill reaches it)
if command -v setsid >/dev/null; then
	check "escaped: exit 1" test "$(BENCHGATE_NO_CGROUP=1 rc_of timeout 60 "$B" measure -q -w 0 -r 1 --timeout 1 --json --shell -- "(setsid $S 37 &); $S 38")" = 1
	check "escaped: none left" jqe '.runs[0].left_running == 0 and .runs[0].flags == []' out
	check "escaped: reason" jqe '.reason == "smoke run 1 timed out after 1 s; its process tree was killed"' out
	check "escaped: killed" sh -c "! pgrep -fx '$S 37'"
	pkill -f "bgsleep-$$"
else
	echo "(no setsid here: skipping the timed-out run that left its process group)"
fi

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
