#!/usr/bin/env bash
# `benchgate experiments` where a golden case cannot reach: what the verb
# prints goes to a stdout that cannot take it (/dev/full), so the listing
# and the abandon confirmation alike fail with exit 4, never a silent 0
# (the abandon itself is done by then: the manifest and RUNS.md say failed).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
scratch

cp -R "$SRC/tests/cli/trees/mini" p
chmod -R u+w p
# the padded columns end at the last word: no line ends in spaces
check "listing: no trailing spaces" bash -c '"$1" -C p experiments >listing && [ -s listing ] && ! grep -q " $" listing' _ "$B"
check "listing with stdout unwritable: exit 4" test "$(rc_of sh -c "'$B' -C p experiments >/dev/full")" = 4
check "JSON listing with stdout unwritable: exit 4" \
	test "$(rc_of sh -c "'$B' -C p experiments --json >/dev/full")" = 4
# a manifest in Python's json dialect (NaN, 2**70, a lone surrogate), as
# check reads it: listed and repaired; abandon, which writes it back whole,
# names the member benchgate's records cannot hold (exit 3)
cp -R p q
mq=q/experiments/20261101-mini-baseline/manifest.json
sed -i 's/"schema_version": 1,/"schema_version": 1, "loss_floor": NaN, "seed": 1180591620717411303424, "note": "\\ud83d",/' $mq
check "python manifest: check passes" "$B" -C q check
check "python manifest: listed as completed" grep -qx "20261101-mini-baseline  *completed" <("$B" -C q experiments)
sed -i 's/| ok |/| running |/' q/experiments/RUNS.md
check "python manifest: repair, exit 0" test "$(rc_of "$B" -C q experiments repair 20261101-mini-baseline)" = 0
check "python manifest: check passes after repair" "$B" -C q check
sh -c 'exit 0' &
wait
sed -i "s/\"status\": \"completed\"/\"status\": \"running\"/; s/\"execution\": {\"host\": \"test-box\"/\"execution\": {\"pid\": $!, \"host\": \"$(hostname)\"/" $mq
sed -i 's/| ok |/| running |/' q/experiments/RUNS.md
check "python manifest: abandon, exit 3" test "$(rc_of "$B" -C q experiments abandon 20261101-mini-baseline --why gone)" = 3
check "python manifest: abandon names the member" grep -qxF "benchgate: experiments/20261101-mini-baseline/manifest.json: 'loss_floor' is nan, which JSON cannot hold; write a number or null" "$work/err"
check "python manifest: abandon leaves it running" grep -q '"status": "running"' $mq

# RUNS.md read as check reads it: a "\|" in a cell shifts the status
# check reads (flagged, repaired with &#124;); a row that does not start
# "| 20" is no row for check (flagged, rewritten in its place); two rows for
# one id are check's "repeats" (flagged; repair refuses, exit 1)
row_case() { # NAME SED-SCRIPT
	rm -rf r && cp -R p r
	sed -i "$2" r/experiments/RUNS.md
}
row_case pipe 's/| SIMD matches/| SIMD \\| matches/'
check "escaped pipe: check fails" test "$(rc_of "$B" -C r check)" = 1
check "escaped pipe: flagged" grep -q "^20261101-mini-baseline  *completed  experiments/RUNS.md row says '.*': write it from the manifest" <("$B" -C r experiments)
check "escaped pipe: repaired" test "$(rc_of "$B" -C r experiments repair 20261101-mini-baseline)" = 0
check "escaped pipe: written &#124;" grep -qF '| SIMD &#124; matches' r/experiments/RUNS.md
check "escaped pipe: check passes" "$B" -C r check
row_case nospace 's/^| 20261101-mini-baseline |/|20261101-mini-baseline|/'
check "row check does not read: flagged" grep -qF "experiments/RUNS.md has a row for it that check does not read (a row starts '| ' and the id): write it from the manifest with 'benchgate experiments repair 20261101-mini-baseline'" <("$B" -C r experiments)
check "row check does not read: repaired" grep -qF "row was not one check reads" <("$B" -C r experiments repair 20261101-mini-baseline)
check "row check does not read: one row" test "$(grep -c "20261101-mini-baseline" r/experiments/RUNS.md)" = 1
check "row check does not read: check passes" "$B" -C r check
# a draft row check does not read, before the real one: repair rewrites the
# real one (check reads it), never the draft (which made two rows check reads)
row_case draft 's/| ok |/| running |/; /^| 20261101-mini-baseline /i |20261101-mini-baseline| old draft | x | draft | x | x |'
check "draft row first: repaired" grep -qF "row said 'running'; it is written from the manifest now" <("$B" -C r experiments repair 20261101-mini-baseline)
check "draft row first: the draft kept" grep -qxF "|20261101-mini-baseline| old draft | x | draft | x | x |" r/experiments/RUNS.md
check "draft row first: check passes" "$B" -C r check
# abandon (an ended experiment) of a row check does not read says so
row_case nospace2 's/^| 20261101-mini-baseline | \(.*\) | ok |/|20261101-mini-baseline| \1 | running |/'
check "abandon, a row check does not read: said" grep -qF "its RUNS.md row, not one check reads (a row starts '| ' and the id), is written from the manifest now" <("$B" -C r experiments abandon 20261101-mini-baseline --why x)
check "abandon, a row check does not read: check passes" "$B" -C r check
row_case twice '/^| 20261101-mini-baseline |/{p;s/| ok |/| running |/}'
check "two rows: flagged" grep -qF "experiments/RUNS.md has 2 rows for it, and check wants one: remove all but one, then run 'benchgate experiments repair 20261101-mini-baseline'" <("$B" -C r experiments)
check "two rows: JSON" jqe '.[0].row == "repeated" and .[0].rows == 2 and .[0].stale_row' <("$B" -C r experiments --json)
check "two rows: repair refuses (exit 1)" test "$(rc_of "$B" -C r experiments repair 20261101-mini-baseline)" = 1
check "two rows: said" grep -qxF "benchgate: experiments/RUNS.md has 2 rows for experiment 20261101-mini-baseline, and check wants one: remove all but one by hand, then run this again" "$work/err"

# a running experiment started on another host (a CI container with a
# hostname of its own): its process cannot be seen from here, so abandon
# needs the user's word that it stopped (--owner-gone), and the listing says so
rm -rf h && cp -R p h
mh=h/experiments/20261101-mini-baseline/manifest.json
jq '.status = "running" | .execution.pid = 12345 | .execution.host = "ci-runner-7f3a"' $mh >m.tmp && mv m.tmp $mh
sed -i 's/| ok |/| running |/' h/experiments/RUNS.md
check "other host: listed" grep -qF "owner on another host: if it has stopped there, abandon it with 'benchgate experiments abandon 20261101-mini-baseline --why TEXT --owner-gone'" <("$B" -C h experiments)
check "other host: abandon refused (exit 3)" test "$(rc_of "$B" -C h experiments abandon 20261101-mini-baseline --why "CI container died")" = 3
check "other host: said" grep -qxF "benchgate: experiment '20261101-mini-baseline' was started on host ci-runner-7f3a (pid 12345), whose processes benchgate cannot see from here: stop it there, or, if it has stopped (the host rebooted, the container is gone), abandon it with --owner-gone" "$work/err"
check "other host: --owner-gone abandons" test "$(rc_of "$B" -C h experiments abandon 20261101-mini-baseline --why "CI container died" --owner-gone)" = 0
check "other host: failed" jqe '.status == "failed"' $mh
check "--owner-gone without abandon: usage (exit 2)" test "$(rc_of "$B" -C h experiments --owner-gone)" = 2

# abandon of one whose RUNS.md row was never written (killed between the
# first manifest and the first row): the row is added whole, as repair adds
# a missing one (question, setup, the manifest's link), not as n/a cells
rm -rf w && cp -R p w
sh -c 'exit 0' &
wait
mw=w/experiments/20261101-mini-baseline/manifest.json
jq --argjson pid $! --arg host "$(hostname)" '.status = "running" | .execution.pid = $pid | .execution.host = $host | .execution.computer = "Test box" | .parameters.gate = {id: "bin.cpu.x"} | .parameters.tier = "scheduled-profile"' $mw >m.tmp && mv m.tmp $mw
sed -i '/^| 20261101-mini-baseline /d' w/experiments/RUNS.md
# a running experiment's row is judged too (check fails without it): the
# run writes it as it ends, or abandon does
check "no row, running: flagged" grep -qF "experiments/RUNS.md has no row for it, which check fails until the run ends and writes it (if its owner is gone, abandon it)" <("$B" -C w experiments)
check "no row, running: JSON" jqe '.[0].row == "missing" and .[0].row_fix == "run-ends"' <("$B" -C w experiments --json)
check "no row: abandon, exit 0" test "$(rc_of "$B" -C w experiments abandon 20261101-mini-baseline --why "host rebooted")" = 0
check "no row: the row added whole" grep -qxF "| 20261101-mini-baseline | Does the SIMD binning match the reference byte for byte at bins 1 and 2? | Test box; gate bin.cpu.x; tier scheduled-profile | failed | failed: abandoned: host rebooted | [manifest](20261101-mini-baseline/manifest.json) |" w/experiments/RUNS.md

# a planned experiment whose row says another status: written by hand
# (repair writes only an ended one's); a folder whose name is not one line
# of text, which no row can name: renamed
rm -rf v && cp -R p v
mv v/experiments/20261101-mini-baseline/manifest.json m.tmp
jq '.status = "planned"' m.tmp >v/experiments/20261101-mini-baseline/manifest.json
check "planned, row says ok: flagged" grep -qF "experiments/RUNS.md row says 'ok', which check fails: write its row, status 'planned', by hand" <("$B" -C v experiments)
check "planned: repair refuses (exit 1)" test "$(rc_of "$B" -C v experiments repair 20261101-mini-baseline)" = 1
mv v/experiments/20261101-mini-baseline "v/experiments/20261101-mini
baseline"
check "name of two lines: rename" grep -qF "no row can name it (it holds a control character (a newline, tab or escape)), so rename the folder" <("$B" -C v experiments)
check "name of two lines: JSON" jqe '.[0].row_fix == "rename"' <("$B" -C v experiments --json)
# nor a name holding '|' (a cell writes it &#124;) or a space at an end
# (check strips it): repair said it wrote the row, each time one more
mv "v/experiments/20261101-mini
baseline" "v/experiments/20261101-mini|baseline"
check "name with '|': rename" grep -qF "no row can name it (it holds '|', '<' or '&', which a row's cell writes otherwise), so rename the folder" <("$B" -C v experiments)
check "name with '|': repair refuses (exit 1)" test "$(rc_of "$B" -C v experiments repair "20261101-mini|baseline")" = 1
check "... said"                 grep -qF "no RUNS.md row can name it (it holds '|'" "$work/err"
check "... RUNS.md untouched"    test "$(grep -c 'mini&#124;baseline' v/experiments/RUNS.md)" = 0
mv "v/experiments/20261101-mini|baseline" "v/experiments/20261101-mini-baseline$(printf '\302\240')"
check "name ending in a no-break space: repair refuses" test "$(rc_of "$B" -C v experiments repair "20261101-mini-baseline$(printf '\302\240')")" = 1

# a link to an experiment's folder is not an experiment: abandon through
# it marked the real one failed and added a row for the link's name
rm -rf a && cp -R p a
ma=a/experiments/20261101-mini-baseline/manifest.json
jq --arg host "$(hostname)" '.status = "running" | .execution.pid = 999999999 | .execution.host = $host' $ma >m.tmp && mv m.tmp $ma
sed -i 's/| ok |/| running |/' a/experiments/RUNS.md
ln -s 20261101-mini-baseline a/experiments/alias
check "a link: abandon refused (exit 1)" test "$(rc_of "$B" -C a experiments abandon alias --why "host died")" = 1
check "... said"                 grep -qF "'alias' under experiments/ is a link to a folder, not an experiment's own folder" "$work/err"
check "... nothing written"      test "$(jq -r .status $ma)$(grep -c '^| alias' a/experiments/RUNS.md)" = running0
# ... and the listing says what it is, with no repair or abandon to run
check "a link: listed (exit 0)"  test "$(rc_of "$B" -C a experiments)" = 0
check "... as a link, to be removed" grep -qF "alias                                            link       (a link to the folder 20261101-mini-baseline, not an experiment's own folder: nothing to repair or abandon under this name; name the experiment it leads to, or remove the link ('rm experiments/alias'))" "$work/out"
check "... no abandon offered for it" sh -c "! grep -q 'abandon alias' '$work/out'"
check "a link: --json"           jqe '.[] | select(.id == "alias") | .status == "link" and (has("row_fix") | not) and (has("stale_row") | not)' <("$B" -C a experiments --json)
# two abandons at once: one records its reason, the other finds it failed
# (both said they had, and the note, the manifest and its hash disagreed)
rm a/experiments/alias
"$B" -C a experiments abandon 20261101-mini-baseline --why "first reason" >"$work/a1" 2>&1 &
p1=$!
"$B" -C a experiments abandon 20261101-mini-baseline --why "second reason" >"$work/a2" 2>&1
r2=$?
wait $p1
r1=$?
check "two abandons: one exit 0, one exit 1" test "$(printf '%s\n' $r1 $r2 | sort | tr -d '\n')" = 01
kept=$(jq -r .reason a/experiments/20261101-mini-baseline/abandoned.json)
check "... the manifest's reason is the note's" test "$(jq -r .failure_reason $ma)" = "abandoned: $kept"
check "... the note's hash is the manifest's" test "$(jq -r '.outputs[] | select(.artifact | endswith("abandoned.json")) | .sha256' $ma)" = "$(sha256sum a/experiments/20261101-mini-baseline/abandoned.json | cut -c1-64)"
check "... check passes"         "$B" -C a check

# a running experiment whose owner (a process that has exited) is gone
sh -c 'exit 0' &
wait
m=p/experiments/20261101-mini-baseline/manifest.json
jq --argjson pid $! --arg host "$(hostname)" '.status = "running" | .execution.pid = $pid | .execution.host = $host' $m >m.tmp && mv m.tmp $m
sed -i 's/| ok |/| running |/' p/experiments/RUNS.md
check "abandon with stdout unwritable: exit 4" \
	test "$(rc_of sh -c "'$B' -C p experiments abandon 20261101-mini-baseline --why gone >/dev/full")" = 4
check "abandon with stdout unwritable: the manifest says failed" \
	jqe '.status == "failed"' p/experiments/20261101-mini-baseline/manifest.json
check "abandon with stdout unwritable: the row says failed" \
	grep -q '| failed | failed: abandoned: gone |' p/experiments/RUNS.md

echo "$fails failed"
[ "$fails" = 0 ]
