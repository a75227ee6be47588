#!/usr/bin/env bash
# benchgate measure / sessions / session: exit statuses, usage errors, the
# JSON document, the store, JSON Lines export, --env and redaction (of
# secrets and home paths), --shell, --prepare/--setup/--cleanup, adaptive
# counts. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# usage errors: exit 2
check "no command"          test "$(rc_of "$B" measure)" = 2
check "no command after --" test "$(rc_of "$B" measure --)" = 2
check "zero runs"           test "$(rc_of "$B" measure -r 0 -- true)" = 2
check "negative warmups"    test "$(rc_of "$B" measure -w -1 -- true)" = 2
check "bad timeout"         test "$(rc_of "$B" measure --timeout 0 -- true)" = 2
check "hex timeout"         test "$(rc_of "$B" measure --timeout 0x10 -- true)" = 2   # not Python's float()
check "timeout 1__0: no number" test "$(rc_of "$B" measure --timeout 1__0 -- true)" = 2
check "hex rtol"            test "$(rc_of "$B" measure --output x --parity allclose:r.npy,rtol=0x1p-3 -- true)" = 2
check "unknown option"      test "$(rc_of "$B" measure --frobnicate -- true)" = 2
check "bad parity"          test "$(rc_of "$B" measure --output x --parity md5:00 -- true)" = 2
check "short sha256"        test "$(rc_of "$B" measure --output x --parity sha256:abc -- true)" = 2
check "parity twice"        test "$(rc_of "$B" measure --output x --parity-command true --parity sha256:$(printf '0%.0s' {1..64}) -- true)" = 2
check "parity without output" test "$(rc_of "$B" measure --parity sha256:$(printf '0%.0s' {1..64}) -- true)" = 2
check "runs with adaptive"  test "$(rc_of "$B" measure -r 3 --min-runs 2 -- true)" = 2
check "max below min"       test "$(rc_of "$B" measure --min-runs 5 --max-runs 2 -- true)" = 2
check "bad interval"        test "$(rc_of "$B" measure --sample-interval 0 -- true)" = 2
check "sessions --last 0"   test "$(rc_of "$B" sessions --last 0)" = 2
check "session no id"       test "$(rc_of "$B" session)" = 2
check "session bad id"      test "$(rc_of "$B" session abc)" = 2
check "no store created by usage errors" test ! -e .benchgate

# reading before anything was stored creates nothing
check "sessions empty"      test "$(rc_of "$B" sessions)" = 0
check "sessions empty json" test "$(rc_of "$B" sessions --json; cat out)" = "0[]"
check "session 1 missing"   test "$(rc_of "$B" session 1)" = 1
check "still no store"      test ! -e .benchgate

# a command that cannot start: exit 4, named
check "cannot start"        test "$(rc_of "$B" measure -- ./no-such-program)" = 4
check "cannot start named"  grep -q "no-such-program" err

# a plain session, JSON on stdout
export BG_TEST_VISIBLE=hello BG_TEST_TOKEN=hunter2
check "measure true"        test "$(rc_of "$B" measure -q -r 4 -w 2 --json --env BG_TEST_VISIBLE --env BG_TEST_TOKEN --export-jsonl runs.jsonl -- true)" = 0

cp out s1.json
check "status ok"           test "$(jq -r .status s1.json)" = ok
check "id 1"                test "$(jq -r .id s1.json)" = 1
check "counts"              test "$(jq -c '[.counts.smoke,.counts.warmup,.counts.timed]' s1.json)" = "[1,2,4]"
check "phases"              test "$(jq -c '[.runs[].phase]' s1.json)" = '["smoke","warmup","warmup","timed","timed","timed","timed"]'
check "ordinals"            test "$(jq -c '[.runs[].ordinal]' s1.json)" = '[1,2,3,4,5,6,7]'
check "rfc3339 start"       jqe '.runs[0].started_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$")' s1.json
check "wall stats count"    test "$(jq .statistics.wall_ns.count s1.json)" = 4
check "p50 between min max" jqe '.statistics.wall_ns | .min <= .p50 and .p50 <= .p95 and .p95 <= .max' s1.json
check "first timed flagged" jqe '.runs[3].flags | index("first_timed")' s1.json
check "no gpu: null"        jqe '.runs[0].gpu_process_peak_bytes == null and .statistics.gpu_process_peak_bytes == null' s1.json
check "parity none"         jqe '.parity.kind == "none" and .parity.result == null and .runs[0].parity == null' s1.json
check "memory source"       jqe '.memory_source == "sampled" and .runs[0].tree_peak_source == "sampled"' s1.json
check "env value recorded"  test "$(jq -r .provenance.environment.BG_TEST_VISIBLE s1.json)" = hello
check "secret redacted"     test "$(jq -r .provenance.environment.BG_TEST_TOKEN s1.json)" = "<redacted>"
check "other env name only" jqe '.provenance.environment | has("PATH") and .PATH == null' s1.json
check "no secret anywhere"  bash -c '! grep -rq hunter2 .benchgate runs.jsonl s1.json'
check "cwd relative"        test "$(jq -r .provenance.cwd s1.json)" = .
check "host facts"          jqe '.provenance.host.logical_cores >= 1 and (.provenance.host.kernel_release | length) > 0' s1.json
check "jsonl lines"         test "$(wc -l <runs.jsonl)" = 7
check "jsonl schema"        test "$(jq -s '[.[] | select(.schema_version == 1 and .session_id == 1)] | length' runs.jsonl)" = 7
check "store created"       test -f .benchgate/store.sqlite3

# sessions and session
check "sessions lists one"  test "$(rc_of "$B" sessions)" = 0
check "sessions row"        grep -q "^1 .* ok .* true" out
check "session 1 text"      test "$(rc_of "$B" session 1)" = 0
check "session shows runs"  test "$(grep -cE '^  [0-9]+ +timed ' out)" = 4
check "session json"        test "$(rc_of "$B" session 1 --json)" = 0
check "session json runs"   test "$(jq '.runs | length' out)" = 7
check "session json = measure json" jqe --slurpfile m s1.json '(del(.runs) == ($m[0] | del(.runs))) and .id > 0' out
check "session json: the same bytes as measure json" cmp -s out s1.json

# a blocked session: exit 1, stored, summary says why
check "false blocks"        test "$(rc_of "$B" measure -q -- false)" = 1
check "blocked reason"      grep -q "blocked: smoke run 1 exited with status 1" err
check "blocked stored"      test "$(rc_of "$B" sessions --json; jq -r '.[1].status' out)" = "0blocked"
check "sessions --last 1"   test "$(rc_of "$B" sessions --last 1 --json; jq -c '[.[].id]' out)" = "0[2]"
check "sessions json: the table's columns" jqe '.[0] | has("finished_at") and .kind == "diagnostic" and has("memory_source") and has("parity_kind") and has("diff_sha256") and (.benchgate_version | length) > 0' out

# --shell, --prepare, --setup, --cleanup
check "shell + hooks"       test "$(rc_of "$B" measure -q -r 3 -w 1 --shell --setup 'echo s >>log' --prepare 'echo p >>log' --cleanup 'echo c >>log' --json -- 'echo x >>log' '&&' true)" = 0
check "hook order"          test "$(tr -d '\n' <log)" = "spxpxpxpxpxc"
check "failing prepare"     test "$(rc_of "$B" measure -q --prepare false -- true)" = 1
check "failing setup"       test "$(rc_of "$B" measure -q --setup 'exit 3' -- true)" = 1
check "setup reason"        grep -q "setup command exited with status 3" err
# a hook killed by a signal says so: the shell's 128 + N is no exit status
# it chose (a shell that exits 137 itself is told apart)
check "setup killed"        test "$(rc_of "$B" measure -q --setup 'kill -KILL $$' -- true)" = 1
check "setup killed reason" grep -q "setup command was killed by signal 9 (SIGKILL: Killed)" err
check "setup exits 137"     test "$(rc_of "$B" measure -q --setup 'exit 137' -- true)" = 1
check "setup 137 reason"    grep -q "setup command exited with status 137" err
check "prepare killed"      test "$(rc_of "$B" measure -q --prepare 'kill -TERM $$' -- true)" = 1
check "prepare killed reason" grep -q "prepare command was killed by signal 15 (SIGTERM: Terminated) before run 1" err
# a failing cleanup leaves the timings alone but is shown and recorded
check "failing cleanup: exit 0" test "$(rc_of "$B" measure -w 0 -r 1 --cleanup 'exit 5' -- true)" = 0
check "failing cleanup shown" grep -q "the cleanup command exited with status 5" out
check "failing cleanup recorded" test "$("$B" session "$("$B" sessions --json | jq '.[-1].id')" --json | jq -c '[.cleanup_exit_status, .cleanup_signal]')" = "[5,null]"
check "killed cleanup: exit 0" test "$(rc_of "$B" measure -w 0 -r 1 --cleanup 'kill -KILL $$' -- true)" = 0
check "killed cleanup shown" grep -q "the cleanup command was killed by signal 9 (SIGKILL: Killed)" out
check "killed cleanup recorded" test "$("$B" session "$("$B" sessions --json | jq '.[-1].id')" --json | jq -c '[.cleanup_exit_status, .cleanup_signal]')" = "[137,9]"

# adaptive count: at least --min-runs, at most --max-runs
check "adaptive min"        test "$(rc_of "$B" measure -q -w 0 --min-runs 4 --min-time 0 --json -- true; jq .counts.timed out)" = "04"
check "adaptive max"        test "$(rc_of "$B" measure -q -w 0 --min-runs 2 --max-runs 5 --min-time 100 --json -- true; jq .counts.timed out)" = "05"
# the default minimum (3) follows a smaller --max-runs given alone
check "--max-runs 1 alone"  test "$(rc_of "$B" measure -q -w 0 --max-runs 1 --json -- true; jq -c '[.counts.timed, .options.min_runs, .options.max_runs]' out)" = "0[1,1,1]"
check "--max-runs 2 alone"  test "$(rc_of "$B" measure -q -w 0 --max-runs 2 --min-time 100 --json -- true; jq .counts.timed out)" = "02"

# a store that cannot work fails before anything is measured, without leaking the URL
mkdir pg && printf '{"schema_version": 1, "store": "postgresql://u:pw@host/db"}\n' >pg/benchgate.json
check "postgres store: exit 4" test "$(rc_of "$B" -C pg measure -q -- sh -c 'touch ran')" = 4
check "nothing ran"         test ! -e pg/ran -a ! -e ran
check "no password shown"   bash -c "! grep -q pw err"
check "sessions: exit 4"    test "$(rc_of "$B" -C pg sessions)" = 4

# outliers beyond p50 + 10 x MAD are flagged and kept
echo 0 >k
check "outlier session"     test "$(rc_of "$B" measure -q -w 0 -r 7 --shell --json -- 'i=$(cat k); echo $((i+1)) >k; if [ $i = 4 ]; then sleep 0.4; else sleep 0.02; fi')" = 0
# (on a loaded machine another run can be an outlier too: run 5 must be among them)
check "outlier flagged"     jqe '(.outliers | index(5)) and (.runs[4].flags | index("outlier")) and .statistics.wall_ns.count == 7' out
check "summary names it"    test "$(rc_of "$B" session "$(jq .id out)"; grep -cE 'outliers +runs ([0-9]+, )*5(, [0-9]+)* beyond' out)" = 01
# the timed run that blocks a session enters no statistic, and is judged by
# none: never an outlier, however slow (it was flagged, listed and printed)
echo 0 >k
check "blocking run: blocked" test "$(rc_of "$B" measure -q -w 0 -r 5 --shell --json -- 'i=$(cat k); echo $((i+1)) >k; if [ $i = 3 ]; then sleep 0.4; exit 1; fi')" = 1
check "blocking run: not an outlier" jqe '.status == "blocked" and .statistics.wall_ns.count == 2 and (.outliers | index(4) | not) and (.runs[3].flags | index("outlier") | not)' out
check "blocking run: summary" test "$(rc_of "$B" session "$(jq .id out)"; grep -cE 'outliers +runs ([0-9]+, )*4(, [0-9]+)* beyond' out)" = 00

# no progress line when stderr is not a terminal
check "no progress off tty" test "$(rc_of "$B" measure -r 2 -- true; grep -c 'run 1 of' err)" = "00"

# on a terminal (script(1) gives one): a progress line on stderr, colour unless NO_COLOR
if command -v script >/dev/null; then
	script -qec "$B measure -r 2 -- true" /dev/null >tty.out 2>&1
	check "progress on a tty"   grep -q "timed  run 1 of 2" <(sed 's/\x1b\[[0-9;]*[mK]//g' tty.out)
	check "colour on a tty"     grep -q $'\x1b\\[36m' tty.out
	NO_COLOR=1 script -qec "$B measure -r 2 -- true" /dev/null >tty.out 2>&1
	check "NO_COLOR honoured"   bash -c "! grep -q $'\x1b\\[36m' tty.out"
	script -qec "$B measure -q -r 2 -- true" /dev/null >tty.out 2>&1
	check "--quiet: no progress" bash -c "! grep -q 'run 1 of' tty.out"
fi

# a non-regular export target is written into, never replaced
mkfifo fifo
timeout 10 cat fifo >fifo.out &
check "export into a fifo"  test "$(rc_of "$B" measure -q -r 1 --export-jsonl fifo -- true)" = 0
wait
check "fifo still a fifo"   test -p fifo
check "fifo got 3 lines"    test "$(wc -l <fifo.out)" = 3
# ... but one no process reads is never waited on (it hung for ever after
# the session was stored, saying nothing)
n0=$("$B" sessions --json | jq length)
check "fifo, no reader: exit 4" test "$(rc_of timeout 20 "$B" measure -q -r 1 --export-jsonl fifo -- true)" = 4
check "... said, the session named" grep -qF "'fifo': cannot write the runs: no process reads this FIFO; start its reader first (session $((n0 + 1)) is stored" err
# a name the file system takes, whose temporary name it does not: refused
# before anything runs (exit 4 once the session was stored)
long=$(printf 'x%.0s' $(seq 250)).json
check "export, a 255-byte name: exit 2" test "$(rc_of "$B" measure -q -r 1 --export-jsonl "$long" -- touch ran-long)" = 2
check "... said"            grep -qF "its name is 255 bytes, and benchgate writes it through a temporary file named after it: give --export-jsonl a name of at most" err
check "... nothing ran"     test ! -e ran-long

# an export target that cannot be written fails (exit 4) before anything
# runs or is stored, and leaves nothing behind
mkdir exd
n0=$("$B" sessions --json | jq length)
check "export to a folder: exit 4" test "$(rc_of "$B" measure -q -r 1 -w 0 --json --export-jsonl exd -- touch ran-exd)" = 4
check "export to a folder: said" grep -qF "'exd': cannot write the runs there: it is a folder; give --export-jsonl a file name" err
check "export to a folder: nothing ran" test ! -e ran-exd -a ! -s out
check "export to a folder: nothing stored" test "$("$B" sessions --json | jq length)" = "$n0"
check "export, no folder: exit 4" test "$(rc_of "$B" measure -q -r 1 --export-jsonl nodir/runs.jsonl -- touch ran-exd)" = 4
check "export, no folder: said" grep -qF "'nodir/runs.jsonl': cannot write the runs: its folder 'nodir' does not exist" err
check "export, no folder: nothing made" test ! -e nodir -a ! -e ran-exd
check "export, empty name: exit 2" test "$(rc_of "$B" measure -q -r 1 --export-jsonl '' -- true)" = 2
if [ "$(id -u)" != 0 ]; then
	chmod 555 exd
	check "export, read-only folder: exit 4" test "$(rc_of "$B" measure -q -r 1 --export-jsonl exd/runs.jsonl -- touch ran-exd)" = 4
	check "export, read-only folder: said" grep -qF "its folder 'exd' cannot be written to" err
	check "export, read-only folder: nothing made" test -z "$(ls exd)" -a ! -e ran-exd
	chmod 755 exd
fi
rmdir exd

# the gate verbs refuse a measure session, saying what it is
check "repeat: not a gate session" test "$(rc_of "$B" repeat 1)" = 1
check "repeat: says why"    grep -q "session 1 is not a gate session (a diagnostic 'benchgate measure' session); repeat runs gates: 'benchgate run GATE'" err

# nothing written holds a home directory or a secret argument: $HOME is "~",
# another home "~NAME", secret option values "<redacted>" (the run itself
# gets the real arguments)
fh="$work/home/ann"
mkdir -p "$fh/bin"
printf '#!/bin/sh\nprintf x > "$1"\n' >"$fh/bin/w"
chmod +x "$fh/bin/w"
check "home paths measured" test "$(HOME=$fh BG_TEST_DATA=$fh/d rc_of "$B" measure -q -r 1 -w 0 --json --env BG_TEST_DATA \
	--output "$fh/o.txt" --export-jsonl runs2.jsonl -- "$fh/bin/w" "$fh/o.txt" --api-key=hunter3 --password hunter4)" = 0
cp out s2.json
check "the run got the real path" test "$(cat "$fh/o.txt")" = x
check "command scrubbed"    test "$(jq -c .command s2.json)" = '["~/bin/w","~/o.txt","--api-key=<redacted>","--password","<redacted>"]'
check "env value scrubbed"  test "$(jq -r .provenance.environment.BG_TEST_DATA s2.json)" = "~/d"
check "outputs scrubbed"    test "$(jq -r '.runs[0].outputs[0].path' s2.json)" = "~/o.txt"
check "no home path written" bash -c '! grep -aqi -e /home/ -e /users/ .benchgate/store.sqlite3 runs2.jsonl s2.json'
check "no secret argument written" bash -c '! grep -aq -e hunter3 -e hunter4 .benchgate/store.sqlite3 runs2.jsonl s2.json'
check "sessions shows it scrubbed" bash -c "'$B' sessions | grep -qF '~/bin/w ~/o.txt --api-key=<redacted> --password'"
# secrets inside an argument too: a URL's password (or its token, with no
# user name), a header whose name looks secret, "Bearer X", a query token,
# PASSWD=; a single-letter option ("-p s3cr3t") is too ambiguous and kept.
# What is written scrubs to itself: measuring the written command again
# stores it unchanged.
check "secret forms measured" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --export-jsonl runs3.jsonl -- /bin/echo \
	-H 'Authorization: Bearer hunter5' https://user:hunter6@example.com/repo.git https://hunter7@github.com/x \
	-p s3cr3t PASSWD=hunter8 '--header=X-Api-Key: hunter9' 'Cookie: a=crumb1' 'bearer crumb2 done' \
	'https://h/q?x=1&access_token=crumb3')" = 0
cp out s3.json
check "secret forms scrubbed" test "$(jq -c .command s3.json)" = '["/bin/echo","-H","Authorization: <redacted>","https://user:<redacted>@example.com/repo.git","https://<redacted>@github.com/x","-p","s3cr3t","PASSWD=<redacted>","--header=X-Api-Key: <redacted>","Cookie: <redacted>","bearer <redacted> done","https://h/q?x=1&access_token=<redacted>"]'
check "secret forms: stored so" test "$("$B" session "$(jq .id s3.json)" --json | jq -c .command)" = "$(jq -c .command s3.json)"
check "secret forms: argv too" jqe '.provenance.argv | index("https://user:<redacted>@example.com/repo.git")' s3.json
check "secret forms: exported" test -s runs3.jsonl
check "secret forms: none written" bash -c '! grep -aq -e hunter5 -e hunter6 -e hunter7 -e hunter8 -e hunter9 -e crumb .benchgate/store.sqlite3 runs3.jsonl s3.json'
check "secret forms: shown scrubbed" bash -c "'$B' sessions | grep -qF \"/bin/echo -H 'Authorization: <redacted>' https://user:<redacted>@example.com/repo.git\""
mapfile -t scrubbed < <(jq -r '.command[]' s3.json)
check "secret forms: scrub to themselves" test "$(rc_of "$B" measure -q -w 0 -r 1 --json -- "${scrubbed[@]}"; jq -c .command out)" = "0$(jq -c .command s3.json)"

# a run that leaves a process running: counted on every run, flagged, shown
# in the summary, and left running; one whose leftover ends at once is not
# left running
nap=$(printf '3.%05d7' $(( ($$ * 7919 + RANDOM) % 100000 )))
check "leftover measured"   test "$(rc_of "$B" measure -w 0 -r 2 --json -- sh -c "sleep $nap & exit 0")" = 0
check "leftover counted"    test "$(jq -c '[.runs[] | .left_running]' out)" = "[1,1,1]"
check "leftover flagged"    jqe '[.runs[] | .flags | index("left_running")] | all' out
check "leftover still runs" pgrep -f "sleep $nap"
pkill -f "sleep $nap"
check "leftover summary"    test "$(rc_of "$B" measure -q -w 0 -r 1 -- sh -c "sleep $nap & exit 0"; grep -c '^  leftovers   runs 1, 2 left processes running after they exited' out)" = 01
pkill -f "sleep $nap"
check "quick leftover clean" test "$(rc_of "$B" measure -q -w 0 -r 2 --json -- sh -c 'true & exit 0'; jq -c '[.runs[] | .left_running]' out)" = "0[0,0,0]"
check "clean: no summary line" bash -c "'$B' session \$(jq .id out) | grep -vq leftovers"
# a prepare command that leaves a process running: each run it began is
# counted and flagged (the process ran beside it), the summary says so; one
# whose leftover ends at once, and a session without --prepare, are not
check "prepare leftover measured" test "$(rc_of "$B" measure -w 0 -r 2 --json --prepare "sleep $nap & true" -- true)" = 0
check "prepare leftover counted" test "$(jq -c '[.runs[] | .prepare_left_running]' out)" = "[1,1,1]"
check "prepare leftover flagged" jqe '[.runs[] | .flags | index("prepare_left_running")] | all' out
check "prepare leftover said" bash -c "'$B' session \$(jq .id out) | grep -qF '  prepare     runs 1, 2, 3 began while processes their prepare command started still ran'"
pkill -f "sleep $nap"
check "prepare leftover ends at once" test "$(rc_of "$B" measure -w 0 -r 1 --json --prepare 'true & true' -- true; jq -c '[.runs[] | .prepare_left_running]' out)" = "0[0,0]"
check "prepare ends at once: no line" bash -c "! '$B' session \$(jq .id out) | grep -q '^  prepare '"
check "no prepare: null" test "$(rc_of "$B" measure -w 0 -r 1 --json -- true; jq -c '[.runs[] | .prepare_left_running]' out)" = "0[null,null]"
check "timeout 1_0 and ١: Python's float()" test "$(rc_of "$B" measure -q -w 0 -r 1 --timeout 1_0 -- true)$(rc_of "$B" measure -q -w 0 -r 1 --timeout '١' -- true)" = 00
# a process that outlives the run's own and ends within the grace: counted
# (outlived_by) and flagged; one that writes an output then blocks the
# session, since the run's time does not hold that work; an output written
# before the run's own process ended does not
check "outlived: measured" test "$(rc_of "$B" measure -w 0 -r 2 --json -- sh -c '(sleep 0.02) & exit 0')" = 0
check "outlived: counted and flagged" jqe '[.runs[] | .outlived_by == 1 and .left_running == 0 and (.flags | index("outlived"))] | all' out
check "outlived, output written after: blocked" test "$(rc_of "$B" measure -w 0 -r 2 --json --output late.txt -- sh -c '(sleep 0.05; date > late.txt) & exit 0')" = 1
check "outlived, output written after: said" jqe '.reason | test("its output .late.txt. was written after the run.s own process ended")' out
check "outlived, output written before: ok" test "$(rc_of "$B" measure -w 0 -r 3 --json --output early.txt -- sh -c 'date > early.txt; (sleep 0.02) & exit 0')" = 0

# the source changed during the session (an edit, a commit): blocked, since
# the revision and diff recorded at the start do not describe every run
mkdir repo && cd repo || exit 1
git init -q . && echo a >t.txt && git add t.txt && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "edit mid-session blocks" test "$(rc_of "$B" measure -q -w 0 -r 2 -- sh -c 'echo b >>t.txt')" = 1
check "edit: says why"      grep -q "blocked: the uncommitted changes to the source changed during the session" "$work/err"
check "dirty, left alone: ok" test "$(rc_of "$B" measure -q -w 0 -r 2 -- true)" = 0
check "commit mid-session blocks" test "$(rc_of "$B" measure -q -w 0 -r 1 -- git -c user.email=t@t -c user.name=t commit -q --allow-empty -m x)" = 1
check "commit: says why"    grep -q "blocked: the source revision changed from [0-9a-f]\{12\} to [0-9a-f]\{12\} during the session" "$work/err"
cd "$work" || exit 1

# one timed run is "1 timed run", "(1 run)"
check "one run: summary"    test "$(rc_of "$B" measure -w 0 -r 1 -- true)" = 0
check "one run: counts"     grep -q "(1 smoke, 0 warmup, 1 timed run)$" out
check "one run: statistics" grep -q "^  time .*(1 run)$" out

# a store that fails once the session is measured (a full disk: a file size
# limit, SIGXFSZ ignored): exit 4, and what was measured is printed all the
# same, without a session id
mkdir full && cd full || exit 1
"$B" measure -q -w 0 -r 1 -- true >/dev/null
size=$(($(wc -c <.benchgate/store.sqlite3) / 1024 + 4))
full() { (trap '' XFSZ; ulimit -f "$size"; "$B" "$@"); }
check "full store: exit 4"  test "$(rc_of full measure -q -w 0 -r 200 -- true)" = 4
check "full store: says so" grep -q "cannot store the session: .*; what was measured is printed above, without a session id$" "$work/err"
check "full store: figures printed" grep -q "^session: ok (1 smoke, 0 warmup, 200 timed runs)$" "$work/out"
# (through a pipe: the size limit holds for the output file too)
full measure -q -w 0 -r 200 --json -- true 2>/dev/null | cat >"$work/out"
check "full store: --json" test "$(jq -r '[.status, has("id"), (.runs | length)] | @tsv' "$work/out")" = "$(printf 'ok\tfalse\t201')"
check "full store: one session stored" test "$("$B" sessions | wc -l)" = 2
cd "$work" || exit 1

# short options as argparse reads them: flags joined before the last option
# (-qw0: -q -w 0), and -x=VALUE
check "joined short options: exit 0" test "$(rc_of "$B" measure -qw0 -r1 --json -- true)" = 0
check "joined short options: read" jqe '.counts.warmup == 0 and .counts.timed == 1' "$work/out"
check "-w=0: exit 0" test "$(rc_of "$B" measure -q -w=0 -r=1 --json -- true)" = 0
check "-w=0: read" jqe '.counts.warmup == 0 and .counts.timed == 1' "$work/out"
check "-qz: an unknown option in it (exit 2)" test "$(rc_of "$B" measure -qz -- true)" = 2

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
