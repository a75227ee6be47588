#!/usr/bin/env bash
# What a run leaves when it cannot finish its records, and how benchgate
# brings them back in line (docs/lifecycle.md §7 and §8):
# - the final RUNS.md row write fails (RUNS.md replaced by a folder while
#   the run ran): run says the session is stored and how to repair the row;
#   `experiments` flags the row, `experiments repair` writes it from the
#   manifest, and `check` passes again;
# - an empty (0-byte) RUNS.md gets the table's header before the first row;
# - the temporary files of a benchgate killed between naming and renaming
#   one (RUNS.md.tmp.PID, ID/manifest.json.tmp.PID, ...) are removed by the
#   next run and by abandon when PID no longer runs, and nothing else is;
# - abandon of an experiment whose session was stored before benchgate was
#   killed names that session and how to reject it.
# On tests/cli/trees/lifecycle, as test_run_lifecycle.sh.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
scratch

cp -R "$SRC/tests/cli/trees/lifecycle" p
cd p || exit 1
# life.ok's command replaces RUNS.md by a folder (once), as a person or a
# script could while the run measures
jq '.runbooks.ok.command = "test -d experiments/RUNS.md || (mv experiments/RUNS.md runs.saved && mkdir experiments/RUNS.md); printf hello > out/{id}.txt"' \
	benchmarks/benchmark_registry.json >r.tmp && mv r.tmp benchmarks/benchmark_registry.json
printf '.benchgate/\nout/\nruns.saved\n' >.gitignore
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1

# 1. the row cannot be written at the end: exit 4, and the message says
#    the session is stored and how to repair the row
check "row write fails: exit 4" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 4
id=$(ls experiments | grep -v '^RUNS.md$' | head -n 1)
check "row write fails: the I/O error is said" grep -qF "experiments/RUNS.md: cannot write" "$work/err"
check "row write fails: the stored session is named" grep -qF "session 1 is stored" "$work/err"
check "row write fails: the repair is named" \
	grep -qF "once experiments/RUNS.md can be written, run 'benchgate experiments repair $id'" "$work/err"
check "row write fails: the manifest says completed" jqe '.status == "completed"' "experiments/$id/manifest.json"
rmdir experiments/RUNS.md && mv runs.saved experiments/RUNS.md
check "stale row: check fails" test "$(rc_of "$B" check)" = 1
check "stale row: experiments flags it" \
	grep -qF "experiments/RUNS.md row says 'running': write it from the manifest with 'benchgate experiments repair $id'" \
	<("$B" experiments)
check "stale row: experiments --json flags it" \
	jqe '.[0].stale_row == true and .[0].row_status == "running"' <("$B" experiments --json)
cp "experiments/$id/manifest.json" "$work/manifest.before"
check "repair: exit 0" test "$(rc_of "$B" experiments repair "$id")" = 0
check "repair: says what it did" grep -qF "its experiments/RUNS.md row said 'running'; it is written from the manifest now" "$work/out"
check "repair: the row says ok with the session's result" \
	grep -qE "^\| $id \| .* \| ok \| p50 .*; decision no-baseline \|" experiments/RUNS.md
check "repair: the manifest is not changed" cmp -s "experiments/$id/manifest.json" "$work/manifest.before"
check "repair: check passes" test "$(rc_of "$B" check)" = 0
check "repair: experiments flags nothing" bash -c '! "$1" experiments | grep -q repair' _ "$B"
check "repair again: nothing to repair, exit 0" test "$(rc_of "$B" experiments repair "$id")" = 0
check "repair again: says so" grep -qF "already agrees with its manifest; nothing to repair" "$work/out"

# 1b. the first row cannot be written (RUNS.md beyond the file size limit):
#    the run is recorded failed in its manifest and note, and the message
#    says so and names the repair, not that it "stays running"
cp -R "$SRC/tests/cli/trees/lifecycle" "$work/big" && (cd "$work/big" && "$B" render >/dev/null &&
	awk 'BEGIN { for (i = 0; i < 300000; i++) print "pad" }' >>experiments/RUNS.md &&
	git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init) || exit 1
check "first row fails: exit 4" test "$(cd "$work/big" && rc_of bash -c 'trap "" XFSZ; ulimit -f 1000; exec "$1" run -q --no-repeat life.ok' _ "$B")" = 4
bid=$(ls "$work/big/experiments" | grep -v '^RUNS.md$' | head -n 1)
check "first row fails: the manifest says failed" jqe '.status == "failed"' "$work/big/experiments/$bid/manifest.json"
check "first row fails: said so, with the repair" grep -qF "experiment $bid's manifest says failed (error.json keeps what happened), but its experiments/RUNS.md row could not be written" "$work/err"
check "first row fails: not 'stays running'" sh -c "! grep -q \"stays 'running'\" '$work/err'"

# 6. an empty RUNS.md is taken for an absent one: the header comes first
cd "$work" || exit 1
cp -R "$SRC/tests/cli/trees/lifecycle" p2
cd p2 || exit 1
printf '.benchgate/\nout/\n' >.gitignore
: >experiments/RUNS.md
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "empty RUNS.md: run exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "empty RUNS.md: the header is written first" \
	bash -c 'head -n 1 experiments/RUNS.md | grep -qx "# Profiling run registry" && grep -q "^| id | hypothesis |" experiments/RUNS.md'

# 2. leftovers of a writer killed between naming and renaming (a pid that
#    has exited), beside ones that must stay: a live writer's, a name that
#    is not exactly benchgate's, a folder of that name
sh -c 'exit 0' &
dead=$!
wait
id=$(ls experiments | grep -v '^RUNS.md$' | head -n 1)
for f in experiments/RUNS.md.tmp.$dead "experiments/$id/manifest.json.tmp.$dead" "experiments/$id/runs.jsonl.tmp.$dead" \
	"experiments/$id/session.json.tmp.$dead" "experiments/$id/runs.jsonl.tmp.$$" "experiments/$id/runs.jsonl.tmp.0$dead" \
	"experiments/$id/notes.txt.tmp.$dead" experiments/RUNS.md.tmp.$$; do
	: >"$f"
done
mkdir "experiments/$id/error.json.tmp.$dead"
check "leftovers: run exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
for f in experiments/RUNS.md.tmp.$dead "experiments/$id/manifest.json.tmp.$dead" "experiments/$id/runs.jsonl.tmp.$dead" \
	"experiments/$id/session.json.tmp.$dead"; do
	check "leftovers: run removes $f" test ! -e "$f"
done
for f in "experiments/$id/runs.jsonl.tmp.$$" "experiments/$id/runs.jsonl.tmp.0$dead" "experiments/$id/notes.txt.tmp.$dead" \
	experiments/RUNS.md.tmp.$$; do
	check "leftovers: run keeps $f" test -f "$f"
done
check "leftovers: run keeps a folder of that name" test -d "experiments/$id/error.json.tmp.$dead"
rm -r experiments/RUNS.md.tmp.$$ "experiments/$id/runs.jsonl.tmp.$$" "experiments/$id/runs.jsonl.tmp.0$dead" \
	"experiments/$id/notes.txt.tmp.$dead" "experiments/$id/error.json.tmp.$dead"

# 3. every file benchgate replaces atomically: the next writer of it removes
#    what a killed one left beside it (a killed render or promote left the
#    generated document's, which every later session counted untracked)
gen=docs/_generated/benchmark_coverage.md
: >"$gen.tmp.$dead"
: >"$gen.tmp.$$"
check "leftovers: render exit 0" test "$(rc_of "$B" render)" = 0
check "leftovers: render removes its document's" test ! -e "$gen.tmp.$dead"
check "leftovers: render keeps a live writer's" test -f "$gen.tmp.$$"
rm -f "$gen.tmp.$$"

# 5. benchgate killed after the session was stored, before the manifest's
#    last write (as after SIGKILL there): the manifest running, its owner
#    gone, the row running; abandon names the stored session and how to
#    reject it (and rejects nothing), and removes the experiment's leftovers
id=$(ls experiments | grep -v '^RUNS.md$' | tail -n 1)
m=experiments/$id/manifest.json
jq --argjson pid "$dead" '.status = "running" | .execution.pid = $pid | del(.session_id, .decision, .key_id, .timestamps.finished)' \
	"$m" >m.tmp && mv m.tmp "$m"
sed -i "s/^\(| $id | .* | \)ok | [^|]* |/\1running | in progress |/" experiments/RUNS.md
: >"experiments/$id/runs.jsonl.tmp.$dead"
: >experiments/RUNS.md.tmp.$dead
sid=$("$B" sessions --json | jq --arg id "$id" '.[] | select(.experiment_id == $id) | .id')
# a session of the same experiment id stored before this manifest was made
# is another's (projects sharing a store each number their experiments):
# not named
cp "$m" "$work/m.keep"; cp experiments/RUNS.md "$work/runs.keep"
jq '.timestamps.created = "2999-01-01T00:00:00.000000Z"' "$work/m.keep" >"$m"
check "another's session: abandon exit 0" test "$(rc_of "$B" experiments abandon "$id" --why "killed in a test")" = 0
check "another's session: not named" sh -c "! grep -q 'of this experiment was stored' '$work/out'"
cp "$work/m.keep" "$m"; cp "$work/runs.keep" experiments/RUNS.md
: >"experiments/$id/runs.jsonl.tmp.$dead"
: >experiments/RUNS.md.tmp.$dead
check "stored session: abandon exit 0" test "$(rc_of "$B" experiments abandon "$id" --why "killed in a test")" = 0
check "stored session: abandon names it and the way to reject it" \
	grep -qF "session $sid of this experiment was stored before benchgate stopped (decision no-baseline, auto-accepted) and counts in its key's baseline; if it should not, reject it: 'benchgate reject $sid --why TEXT'" "$work/out"
check "stored session: not rejected" jqe --argjson sid "$sid" '.[] | select(.id == $sid) | .curation == "auto-accepted"' <("$B" history life.ok --json)
check "stored session: abandon removes the experiment's leftovers" \
	test ! -e "experiments/$id/runs.jsonl.tmp.$dead" -a ! -e experiments/RUNS.md.tmp.$dead
check "stored session: check passes" test "$(rc_of "$B" check)" = 0

# a '|' written into a cell by hand: the row is rewritten whole from the
# manifest (repair kept its cells by place: the setup and the manifest's
# link were lost, the result written twice, and check passed)
id=$(ls experiments | grep -v '^RUNS.md$' | sort | tail -n 1)
sed -i "s/^| $id | \([^|]*\) |/| $id | \1 | more |/" experiments/RUNS.md
check "a '|' in a cell: repair exit 0" test "$(rc_of "$B" experiments repair "$id")" = 0
check "... the manifest's link kept" grep -qF "| [manifest]($id/manifest.json) |" experiments/RUNS.md
check "... the setup kept"            grep -q "^| $id | .* | Test host; gate life.ok; tier scheduled-profile.* | failed | " experiments/RUNS.md
check "... six cells"                 test "$(grep "^| $id |" experiments/RUNS.md | tr -cd '|' | wc -c)" = 7
check "... check passes"              test "$(rc_of "$B" check)" = 0
# a byte order mark before the table (an editor on Windows): a new row
# goes into the table, before the section after it (it went to the end)
{ printf '\357\273\277'; cat experiments/RUNS.md; printf '\n## Notes\n\nkept by hand\n'; } >r.tmp && mv r.tmp experiments/RUNS.md
git add -A && git -c user.email=t@t -c user.name=t commit -qm notes || exit 1
check "BOM: run exit 0"               test "$(rc_of "$B" run -q --no-repeat life.ok)" -le 1
check "BOM: the notes stay last"      test "$(tail -n 1 experiments/RUNS.md)" = "kept by hand"
check "BOM: the row in the table"     test "$(grep -n '^| 20' experiments/RUNS.md | tail -n 1 | cut -d: -f1)" -lt "$(grep -n '^## Notes' experiments/RUNS.md | cut -d: -f1)"

echo "$fails failed"
[ "$fails" = 0 ]
