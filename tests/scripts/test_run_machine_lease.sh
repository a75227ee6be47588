#!/usr/bin/env bash
# The machine lease: runs of two projects on one machine (two checkouts, two
# users, two CI runners) never measure at once. A run of one project is
# refused while another project's run measures, naming it and writing
# nothing; `lease status` shows who holds the machine; any user's run can
# take the lock file another user's run made; a lock file others cannot
# write is named with the remedy; a session whose machine lock file was
# removed meanwhile is blocked; `measure` holds the machine shared: diagnostic
# sessions measure beside each other, a run waits for them, and one that
# starts beside a run says so; `run --wait S` (and `repeat --wait S`) waits
# for the machine. The lock is this test's own
# (BENCHGATE_MACHINE_LOCK), never the machine's /run/lock one.
# Needs git and jq; the other-user checks need root and setpriv.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
chmod 755 "$work" # another user's run reads its project and the lock here
# a sleep duration of our own (see test_run_lifecycle.sh)
nap=$(printf '4.%05d1' $(( ($$ * 7919 + RANDOM) % 100000 )))
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; pkill -f "sleep $nap" 2>/dev/null; rm -rf "$work"' EXIT
export BENCHGATE_MACHINE_LOCK="$work/machine.lock"
wait_for() { for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }
wait_for_long() { for _ in $(seq 600); do "$@" && return 0; sleep 0.05; done; return 1; }
# (the sleep itself: a `measure -- sleep NAP` holds the words in its own
# command line, before it has taken the machine lease)
napping() { pgrep -f "^sleep $nap" >/dev/null; }

project() { # DIR: a committed copy of the lifecycle tree
	cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$1"
	(cd "$1" && sed -i "s/\"sleep_seconds\": 4.321/\"sleep_seconds\": $nap/" benchmarks/benchmark_registry.json &&
		printf '.benchgate/\nout/\n' >.gitignore && "$B" render >/dev/null &&
		git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init)
}
project "$work/p" && project "$work/q" || exit 1

# p measures; q, a project of its own with its own device lease, must wait
(cd "$work/p" && exec "$B" run -q life.slow >"$work/p.out" 2>"$work/p.err") &
holder=$!
check "p's run is measuring"       wait_for napping
p_id=$(ls "$work/p/experiments" | grep slow)
cd "$work/q" || exit 1
check "q's run is refused (exit 3)" test "$(rc_of "$B" run -q life.ok)" = 3
check "the refusal names p's run and project" \
	grep -qF "this machine is leased by experiment $p_id of the project at $work/p (pid $holder on " "$work/err"
check "the refusal says why and what to do" \
	grep -qF "one run measures at a time on a machine, whatever its project; wait for it to finish or see 'benchgate lease status' (the lock: $work/machine.lock)" "$work/err"
check "q's refused run wrote no experiment" sh -c "! ls experiments | grep -q life-ok"
check "q's refused run left q's device lease free" sh -c "'$B' lease status | grep -q '^test-host *free'"
check "q's refused run stored no session" sh -c "'$B' sessions --json | jq -e 'length == 0'"
check "lease status in q shows p holding the machine" \
	sh -c "'$B' lease status | grep -qF 'machine                      held     experiment $p_id of the project at $work/p'"
"$B" lease status --json >"$work/status.json"
check "lease status --json: the machine first, then q's devices" \
	jqe --arg p "$work/p" --arg lock "$work/machine.lock" --arg id "$p_id" \
	'.[0].scope == "machine" and .[0].device == null and .[0].state == "held" and .[0].lock == $lock
	 and .[0].owner.project == $p and .[0].owner.experiment_id == $id and .[0].owner.device == "test-host"
	 and (.[1:] | all(.scope == "project"))' "$work/status.json"
# a diagnostic session takes no lease: it measures, and says it disturbs p's run
check "measure meanwhile in q: measured (exit 0)" test "$(rc_of "$B" measure -q -w 0 -r 1 -- true)" = 0
check "... saying that it and p's run disturb each other" \
	grep -qF "benchgate: this machine is leased by experiment $p_id of the project at $work/p (pid $holder on " "$work/err"
check "... and why it matters" grep -qF "a run measures meanwhile, and this session and that run disturb each other's timings" "$work/err"
wait "$holder"
check "p's run finished (exit 0)"  test $? = 0
holder=
cd "$work/p" || exit 1
check "p's session held the machine throughout" \
	sh -c "'$B' session \$('$B' sessions --json | jq '.[0].id') --json | jq -e '.lease.held_throughout == true and .lease.machine_held_throughout == true'"
cd "$work/q" || exit 1
check "once p is done, q runs"     test "$(rc_of "$B" run -q life.ok)" = 0
check "and measure says nothing of a lease" test "$(rc_of "$B" measure -q -w 0 -r 1 -- true)$(cat "$work/err")" = 0
check "lease status: the machine is free" sh -c "'$B' lease status | grep -q '^machine *free *(lock $work/machine.lock)'"
check "the lock file is empty once released" test ! -s "$work/machine.lock"
check "any user may lock it"       test "$(stat -c %a "$work/machine.lock")" = 666

# another user's run takes the lock file this user's run made
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$work/nohome")
	cp -R "$work/q" "$work/r" && rm -rf "$work/r/.benchgate" "$work/r/experiments"/2* &&
		sed -i '/^| 2/d' "$work/r/experiments/RUNS.md" && chown -R 65534:65534 "$work/r"
	cd "$work/r" || exit 1
	check "another user's run takes the same lock" test "$(rc_of "${as[@]}" "$B" run -q life.ok)" = 0
	chmod 644 "$work/machine.lock"
	check "a lock file others cannot write: exit 4" test "$(rc_of "${as[@]}" "$B" run -q life.ok)" = 4
	check "... naming its maker and the remedy" \
		grep -qF "$work/machine.lock: cannot open the machine lease: Permission denied; user root made it and it must be a file every user of benchgate on this machine can write: ask them (or root) to run 'chmod 666 $work/machine.lock'" "$work/err"
	# lease status says so too: unusable with the run's words, never free
	check "... lease status: unusable" test "$(rc_of "${as[@]}" "$B" lease status --json)" = 0
	check "... lease status: the run's reason" jqe --arg p "$work/machine.lock" \
		'.[] | select(.scope == "machine") | .state == "unusable" and (.reason | startswith($p + ": cannot open the machine lease: Permission denied; user root made it"))' "$work/out"
	# a device lease file of another user that this one cannot write
	rm -f .benchgate/leases/test-host.lock && : >.benchgate/leases/test-host.lock && chown 0:0 .benchgate/leases/test-host.lock && chmod 644 .benchgate/leases/test-host.lock
	check "a device lease others cannot write: status unusable" test "$(rc_of "${as[@]}" "$B" lease status --json)" = 0
	check "... with the run's words" jqe '.[] | select(.device == "test-host") | .state == "unusable" and (.reason | startswith(".benchgate/leases/test-host.lock: cannot open: Permission denied"))' "$work/out"
	rm -f .benchgate/leases/test-host.lock
	chmod 666 "$work/machine.lock"
	# a machine lease whose folder is not there: unusable, as a run finds it
	check "a lock in no folder: status unusable" test "$(BENCHGATE_MACHINE_LOCK="$work/none/machine.lock" rc_of "$B" lease status --json)" = 0
	check "... saying so" jqe '.[] | select(.scope == "machine") | .state == "unusable" and (.reason | contains("No such file or directory"))' "$work/out"
else
	echo "skipped: the other-user checks need root and setpriv"
fi

# --wait: a run waits for the machine instead of refusing; gives up after
# the time it was given; an interruption meanwhile starts nothing
cd "$work/p" || exit 1
(exec "$B" run -q life.slow >/dev/null 2>&1) &
holder=$!
check "p measures once more"       wait_for napping
p_id=$(ls -t experiments | grep slow | head -n 1)
cd "$work/q" || exit 1
before=$(ls experiments | wc -l)
check "--wait 0.5: refused after it (exit 3)" test "$(rc_of "$B" run -q --wait 0.5 life.ok)" = 3
check "... saying it waited" grep -qF "this machine is leased by experiment $p_id of the project at $work/p" "$work/err"
check "... and how long" grep -qF "; gave up after waiting 0.5 s (--wait)" "$work/err"
"$B" run -q --wait 60 life.ok >"$work/w.out" 2>"$work/w.err" &
waiter=$!
check "--wait 60: says it waits" wait_for grep -qF "benchgate: waiting up to 60 s (--wait): this machine is leased by experiment $p_id" "$work/w.err"
kill -INT "$waiter"
wait "$waiter"
check "--wait interrupted: exit 4" test $? = 4
check "... nothing was started" grep -qF "interrupted while waiting for the lease; nothing was started" "$work/w.err"
check "... nothing written" test "$(ls experiments | wc -l)" = "$before"
"$B" run -q --wait 60 life.ok >"$work/w.out" 2>"$work/w.err" &
waiter=$!
# the source edited while it waits: the session is of uncommitted source
# (pending, the manifest dirty), as its own reading says; it was decided
# clean (auto-accepted, the manifest clean) from the reading before the wait
check "--wait 60: waits again"     wait_for grep -qF "benchgate: waiting up to 60 s (--wait)" "$work/w.err"
echo '# edited during the wait' >>.gitignore
wait "$holder"
holder=
wait "$waiter"
check "--wait 60: runs once p's run is done (exit 0)" test $? = 0
check "... its session recorded" grep -q "^key: .* manifest: experiments/" "$work/w.out"
w_id=$(ls -t experiments | grep "life-ok" | head -n 1)
check "... edited meanwhile: pending" test "$("$B" history --json life.ok | jq -r 'max_by(.id).curation')" = pending
check "... edited meanwhile: the manifest dirty" jqe '.code.dirty == true and (.code.diff_sha256 | type) == "string"' "experiments/$w_id/manifest.json"
git checkout -q .gitignore

# repeat --wait passes the wait on to its run: it waits for p's run too
sid=$("$B" sessions --json | jq '[.[] | select(.gate_id == "life.ok")] | max_by(.id).id')
cd "$work/p" || exit 1
(exec "$B" run -q life.slow >/dev/null 2>&1) &
holder=$!
check "p measures a third time"    wait_for napping
cd "$work/q" || exit 1
check "repeat without --wait: refused (exit 3)" test "$(rc_of "$B" repeat "$sid")" = 3
"$B" repeat "$sid" --wait 60 >"$work/w.out" 2>"$work/w.err" &
waiter=$!
check "repeat --wait 60: says it waits" wait_for grep -qF "benchgate: waiting up to 60 s (--wait): this machine is leased by" "$work/w.err"
wait "$holder"
holder=
wait "$waiter"
check "repeat --wait 60: runs once p's run is done" test $? -le 1
check "... two more sessions" test "$("$B" sessions --json | jq "[.[] | select(.gate_id == \"life.ok\" and .id > $sid)] | length")" = 2

# a diagnostic session holds the machine shared: another measures beside
# it, a run waits (refused, nothing written), and runs once it is done
cd "$work/q" || exit 1
(exec "$B" measure -q -w 0 -r 1 -- sleep "$nap" >/dev/null 2>"$work/m.err") &
holder=$!
check "a diagnostic session measures" wait_for napping
check "lease status: the machine is shared" \
	sh -c "'$B' lease status | grep -qF \"machine                      shared   diagnostic sessions ('benchgate measure') are measuring; a run started now is refused (exit 3), or with --wait waits for them\""
check "another diagnostic session measures beside it" test "$(rc_of "$B" measure -q -w 0 -r 1 -- true)" = 0
check "... and says nothing of a lease" test ! -s "$work/err"
before=$(ls experiments | wc -l)
check "a run waits for it: refused (exit 3)" test "$(rc_of "$B" run -q life.ok)" = 3
check "... saying why" grep -qF "this machine is measuring a diagnostic session ('benchgate measure'), which shares the machine lease with other diagnostic sessions but not with a run, so that neither disturbs the other's timings" "$work/err"
check "... nothing written" test "$(ls experiments | wc -l)" = "$before"
pkill -f "sleep $nap"
wait "$holder"
holder=
check "once it is done, the run runs" test "$(rc_of "$B" run -q life.ok)" = 0

# the lock file removed while held: another run can take a new one, so the
# holder's session is blocked
cd "$work/p" || exit 1
(exec "$B" run -q life.slow >"$work/p.out" 2>"$work/p.err") &
holder=$!
check "p measures again"           wait_for napping
rm -f "$work/machine.lock"
wait "$holder"
check "a session whose machine lock was removed is blocked (exit 1)" test $? = 1
holder=
check "... saying why"             grep -qF "the machine lease was not held for the whole session" "$work/p.out" "$work/p.err"

# ... and with --times, the next session takes the machine lease anew: it
# never measures without one (another project's run was let in beside it)
n0=$(ls experiments | grep -c slow)
(exec "$B" run -q life.slow --times 2 >"$work/p.out" 2>"$work/p.err") &
holder=$!
check "--times 2: the first session measures" wait_for napping
rm -f "$work/machine.lock"
slow_started() { [ "$(ls experiments | grep -c slow)" -ge $((n0 + 2)) ] && napping; }
check "--times 2: the second session measures" wait_for_long slow_started
check "... holding the machine lease anew" sh -c "'$B' lease status | grep -q '^machine *held'"
check "... so another project's run is refused (exit 3)" test "$(cd "$work/q" && rc_of "$B" run -q life.ok)" = 3
wait "$holder"
check "--times 2: exit 1 (the first session blocked)" test $? = 1
holder=
check "... the second held the machine throughout" \
	sh -c "'$B' session \$('$B' sessions --json | jq '.[-1].id') --json | jq -e '.lease.machine_held_throughout == true and .decision != \"block\"'"

# BENCHGATE_MACHINE_LOCK must be one path for every run: not a relative one
check "a relative BENCHGATE_MACHINE_LOCK: exit 3" \
	test "$(BENCHGATE_MACHINE_LOCK=m.lock rc_of "$B" run -q life.ok)" = 3
check "... said so"                grep -qF "BENCHGATE_MACHINE_LOCK ('m.lock') must be an absolute path" "$work/err"
check "lease status too"           test "$(BENCHGATE_MACHINE_LOCK=m.lock rc_of "$B" lease status)" = 3
check "measure, a diagnostic, measures without it" test "$(BENCHGATE_MACHINE_LOCK=m.lock rc_of "$B" measure -q -w 0 -r 1 -- true)" = 0
check "... and says so, not that a run holds it" \
	grep -qxF "benchgate: BENCHGATE_MACHINE_LOCK ('m.lock') must be an absolute path: every run on this machine must name the same file; this session measures without it, so a run may start beside it" "$work/err"
check "check passes in p"          test "$(rc_of "$B" check)" = 0
[ "$fails" = 0 ]
