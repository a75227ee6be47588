#!/usr/bin/env bash
# Each decision reaches the store and `compare`: no-baseline (fewer than five
# accepted sessions), pass, investigate (exit 0, or 1 with --fail-on
# investigate), block (exit 1); a diagnostic `measure` session has no
# decision (exit 1). Then curation: accept/reject with who and why, an
# accepted investigate session joins the baseline, a rejected one never does,
# a blocked one cannot be accepted; `key` and `history`; a store damaged
# from outside (values of the wrong type, JSON that does not parse, a
# decision no one made). Sessions are stored
# the way `benchgate run` stores them (tests/unit/test_seedtool.c). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
SEED="${BENCHGATE_BUILD:?}/test_seedtool"
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1
G=bin.cpu.test-box.bin2.warm
seed() { "$SEED" seed "$work/p" "$@" | cut -d' ' -f1; }

# no project store yet
check "compare without store: 1" test "$(rc_of "$B" compare 1)" = 1
check "says nothing stored"      grep -q "no sessions stored yet" "$work/err"

# 1. no-baseline: the first four sessions
for i in 1 2 3 4; do s=$(seed $G scheduled-profile 0.100); done
check "no-baseline: exit 0"       test "$(rc_of "$B" compare "$s")" = 0
check "no-baseline: says so"      grep -q "decision: NO-BASELINE" "$work/out"
check "no-baseline: reason"       grep -q "3 accepted sessions of this key; no threshold applies before 5" "$work/out"
s5=$(seed $G scheduled-profile 0.101)
check "fifth: still no-baseline"  test "$(rc_of "$B" compare --json "$s5")" = 0
check "fifth: json decision"      test "$(jq -r .decision "$work/out")" = no-baseline

# 2. pass: five accepted sessions exist now
s6=$(seed $G release-signoff 0.1005)
check "pass: exit 0"              test "$(rc_of "$B" compare "$s6")" = 0
check "pass: says so"             grep -q "decision: PASS" "$work/out"
check "pass: metric table"        grep -q "^wall_p50 " "$work/out"
check "pass: baseline ids"        grep -q "baseline: 5 sessions: 5, 4, 3, 2, 1" "$work/out"
check "pass: --fail-on investigate still 0" test "$(rc_of "$B" compare --fail-on investigate "$s6")" = 0
check "pass: json metrics"        test "$("$B" compare --json "$s6" | jq '.metrics | length')" = 4
check "pass: json curation"       test "$("$B" compare --json "$s6" | jq -r .curation)" = auto-accepted

# 3. investigate: far slower
s7=$(seed $G scheduled-profile 0.150)
check "investigate: exit 0"       test "$(rc_of "$B" compare "$s7")" = 0
check "investigate: says so"      grep -q "decision: INVESTIGATE" "$work/out"
check "investigate: outside"      grep -q "OUTSIDE" "$work/out"
check "investigate: direction"    grep -q "slower-or-larger" "$work/out"
check "investigate: pending"      grep -q "curation: pending" "$work/out"
check "investigate --fail-on: 1"  test "$(rc_of "$B" compare --fail-on investigate "$s7")" = 1
check "--fail-on twice: the last" test "$(rc_of "$B" compare --fail-on investigate --fail-on block "$s7")$(rc_of "$B" compare --fail-on block --fail-on investigate "$s7")" = 01
# --fail-on unaccepted: exit 1 until a person accepts it (below)
check "unaccepted, pending: 1"    test "$(rc_of "$B" compare --fail-on unaccepted "$s7")" = 1
check "unaccepted: says what to do" grep -qF "benchgate: session $s7 (investigate) is pending, not accepted: review it ('benchgate compare $s7') and accept it ('benchgate accept $s7 --why TEXT'), or run the gate again" "$work/err"
check "unaccepted: still printed" grep -q "decision: INVESTIGATE" "$work/out"
check "unaccepted, pass: 0"       test "$(rc_of "$B" compare --fail-on unaccepted "$s6")" = 0
check "unaccepted, --json pass: 0" test "$(rc_of "$B" compare --json --fail-on unaccepted "$s6")" = 0
check "--last GATE is the latest" test "$("$B" compare --last $G --json | jq .session)" = "$s7"
check "json deviation > 4"        test "$("$B" compare --json "$s7" | jq '[.metrics[] | select(.metric=="wall_p50") | .deviation > 4] | .[0]')" = true
# faster is investigate too (either direction)
s8=$(seed $G scheduled-profile 0.050)
check "faster: investigate"       test "$("$B" compare --json "$s8" | jq -r '.decision + " " + ([.metrics[] | select(.outside)][0].direction)')" = "investigate faster-or-smaller"

# 4. block: parity failure, lease, a failed run
s9=$(seed $G scheduled-profile 0.100 parity=fail)
check "block: exit 1"             test "$(rc_of "$B" compare "$s9")" = 1
check "block: says so"            grep -q "decision: BLOCK" "$work/out"
check "block: reason"             grep -q "parity failed" "$work/out"
check "block: curation rejected"  grep -q "curation: rejected" "$work/out"
s10=$(seed $G scheduled-profile 0.100 lease=0 status=blocked "reason=run 3 exited with status 1")
check "block: two reasons"        test "$("$B" compare --json "$s10" | jq '.reasons | length')" = 2

# a diagnostic session has no decision
"$B" measure -q -r 1 -w 0 -- true >/dev/null 2>&1
d=$("$B" sessions --json | jq '.[-1].id')
check "measure session: compare 1" test "$(rc_of "$B" compare "$d")" = 1
check "measure session: message"   grep -q "has no decision: it is a diagnostic session" "$work/err"
check "measure session: key 1"     test "$(rc_of "$B" key "$d")" = 1
check "measure session: accept 1"  test "$(rc_of "$B" accept "$d" --why x)" = 1

# unknown session, unknown gate
check "unknown session: 1"        test "$(rc_of "$B" compare 999)" = 1
check "unknown session message"   grep -q "no session with id 999" "$work/err"
check "unknown gate: 1"           test "$(rc_of "$B" compare --last no.such.gate)" = 1
check "unknown gate: said"        grep -qxF "benchgate: unknown gate 'no.such.gate': no session is stored for it and the registry has no such gate; see 'benchgate list'" "$work/err"
check "mistyped gate: 1"          test "$(rc_of "$B" compare --last bin.cpu.test-box.bin2.wram)" = 1
check "mistyped gate: the gate it is a slip for" grep -qF "(did you mean '$G'?)" "$work/err"
check "gate without sessions: 1"  test "$(rc_of "$B" compare --last bin.simd.test-box.bin2.cold)" = 1
check "gate without sessions: run it" grep -qF "gate 'bin.simd.test-box.bin2.cold' has no stored session; run it with 'benchgate run bin.simd.test-box.bin2.cold'" "$work/err"

# curation
check "accept blocked: 1"         test "$(rc_of "$B" accept "$s9" --why "looks fine")" = 1
check "accept blocked: reason"    grep -q "is blocked and cannot be accepted" "$work/err"
check "accept investigate"        test "$(rc_of env USER=ana "$B" accept "$s7" --why "new allocator, expected")" = 0
check "accept: who and why"       grep -q "session $s7 accepted by ana: new allocator, expected" "$work/out"
check "accept: it counts now"      grep -qx "it now counts in the baseline of its key" "$work/out"
check "unaccepted, accepted: 0"   test "$(rc_of "$B" compare --fail-on unaccepted "$s7")" = 0
check "compare shows curation"    test "$("$B" compare --json "$s7" | jq -r '.curation + "|" + .curated_by + "|" + .curation_why')" = "accepted|ana|new allocator, expected"
# a reason must read back as meant: one line, printable, not blank
check "why: newline refused"      test "$(rc_of "$B" accept "$s8" --why $'ok\n4  forged row')" = 2
check "why: newline message"      grep -q "must be one line of text: it holds a control character" "$work/err"
check "why: escape refused"       test "$(rc_of "$B" accept "$s8" --why $'ok \e[2J')" = 2
check "why: carriage return refused" test "$(rc_of "$B" accept "$s8" --why $'\r')" = 2
check "why: no-break spaces blank" test "$(rc_of "$B" accept "$s8" --why $'\xc2\xa0\xe3\x80\x80')" = 2
check "why: blank message"        grep -q "it is blank" "$work/err"
check "why: not UTF-8"            test "$(rc_of "$B" accept "$s8" --why $'caf\xe9')" = 2
check "why: nothing stored"       test "$("$B" compare --json "$s8" | jq -r .curation)" = pending
check "who: control bytes masked" test "$(rc_of env USER=$'ev\e[1mil' "$B" reject "$s8" --why "probe")" = 0
check "who: stored masked"        test "$("$B" compare --json "$s8" | jq -r .curated_by)" = "ev?[1mil"
check "who: not UTF-8, masked"    test "$(rc_of env USER=$'jos\xe9' "$B" reject "$s8" --why "probe")" = 0
check "who: stored as ASCII"      test "$("$B" compare --json "$s8" | jq -r .curated_by)" = "jos?"
long_user=$(printf 'é%.0s' $(seq 200)) # 400 bytes: cut at 255, never inside a character
check "who: long name cut"        test "$(rc_of env USER="$long_user" "$B" reject "$s8" --why "probe")" = 0
check "who: cut whole characters" test "$("$B" compare --json "$s8" | jq -r .curated_by)" = "$(printf 'é%.0s' $(seq 127))"
check "reject investigate"        test "$(rc_of env USER=bo "$B" reject "$s8" --why "thermal throttling")" = 0
check "unaccepted, rejected: 1"   test "$(rc_of "$B" compare --fail-on unaccepted "$s8")" = 1
check "unaccepted, rejected: who" grep -qF "benchgate: session $s8 (investigate) was rejected by bo: run the gate again" "$work/err"
check "unaccepted, block: 1"      test "$(rc_of "$B" compare --fail-on unaccepted "$s9")" = 1
check "unaccepted, block: says what to do" test "$(cat "$work/err")" = "benchgate: session $s9 is blocked and cannot be accepted: fix what blocked it ('benchgate compare $s9' says why), then run the gate again"
check "unaccepted, block, --json: said too" test "$(rc_of "$B" compare --json --fail-on unaccepted "$s9")$(cat "$work/err")" = "1benchgate: session $s9 is blocked and cannot be accepted: fix what blocked it ('benchgate compare $s9' says why), then run the gate again"
# a session of a tier no baseline is made of: accepted, and told it does not count
sd=$(seed io.cpu.ci.bin4 diagnostic 0.300)
check "accept diagnostic"         test "$(rc_of "$B" accept "$sd" --why "a probe")" = 0
check "accept diagnostic: no count" grep -qx "it does not count in a baseline even so: its tier is diagnostic, and only scheduled-profile and release-signoff sessions do" "$work/out"
s11=$(seed $G scheduled-profile 0.100)
check "accepted joins baseline"   test "$("$B" compare --json "$s11" | jq -c '.baseline[:2]')" = "[$s7,$s6]"
check "rejected never does"       test "$("$B" compare --json "$s11" | jq "[.baseline[] | select(. == $s8 or . == $s9)] | length")" = 0
# s9 and s10 were decided while s7 and s8 were still pending
check "pending never does"        bash -c "'$B' compare --json $s10 | jq -e '(.baseline | length) >= 5 and ([.baseline[] | select(. == $s7 or . == $s8)] | length) == 0'"

# key
check "key: exit 0"               test "$(rc_of "$B" key "$s6")" = 0
check "key: gate field"           grep -q "^gate .*\"$G\" .*context: gate" "$work/out"
check "key: revision"             grep -q "^revision .*context: revision" "$work/out"
# a long value is cut by characters, never inside a UTF-8 sequence
s_utf=$(seed bin.cpu.test-box.bin1.warm scheduled-profile 0.1 computer="$(printf 'a%.0s' $(seq 39))éééé")
check "key: long UTF-8 value"     test "$(rc_of "$B" key "$s_utf")" = 0
check "key: output is UTF-8"      iconv -f UTF-8 -t UTF-8 "$work/out"
check "key: cut after 41 characters" grep -q "^computer .*\"$(printf 'a%.0s' $(seq 39))é\.\.\. " "$work/out"
check "key --json fields"         test "$("$B" key --json "$s6" | jq -r '[.fields[].field] | join(",")')" = "gate,computer,revision"
check "same key for all"          test "$("$B" key --json "$s6" | jq -r .key_id | grep -cx '[0-9a-f]\{64\}')$("$B" key --json "$s6" | jq -r .key_id)" = "1$("$B" key --json "$s7" | jq -r .key_id)"
# a different revision is a different key: no-baseline again
s12=$(seed $G scheduled-profile 0.100 revision=1111111111111111111111111111111111111111)
check "new revision, new key"     test "$("$B" compare --json "$s12" | jq -r .decision)" = no-baseline
check "new key id differs"        test "$("$B" key --json "$s12" | jq -r .key_id)" != "$("$B" key --json "$s6" | jq -r .key_id)"

# history
check "history: exit 0"           test "$(rc_of "$B" history $G)" = 0
check "history: every session"    test "$(grep -c "scheduled-profile\|release-signoff" "$work/out")" = 12
check "history: curation shown"   grep -q "accepted by ana" "$work/out"
K=$("$B" key --json "$s6" | jq -r .key_id)
check "history --key"             test "$("$B" history --key "$K" --json | jq length)" = 11
check "history --key, 8 digits"   test "$("$B" history --key "${K:0:8}" --json | jq length)" = 11
check "history --last 3"          test "$("$B" history --key "$K" --last 3 --json | jq -c 'map(.id)')" = "$("$B" history --key "$K" --json | jq -c '.[-3:] | map(.id)')"
check "history GATE --last 1"     test "$("$B" history $G --last 1 --json | jq -c 'map(.id)')" = "$("$B" history $G --json | jq -c '.[-1:] | map(.id)')"
check "history --last: table"     test "$("$B" history $G --last 2 | wc -l)" = 3
check "history --key, 8 digits: one key" test "$("$B" history --key "${K:0:8}" --json | jq -r '[.[].key_id] | unique | .[]')" = "$K"
check "history --key, not hex: 2" test "$(rc_of "$B" history --key "KEY-1")" = 2
check "history --key, 3 digits: 2" test "$(rc_of "$B" history --key "${K:0:3}")" = 2
# a prefix that two stored keys begin with (in a copy of the store, their ids changed from outside):
# exit 1, naming both in the order of their first sessions; one digit more names one
cp -R "$work/p" "$work/q"
K12=$("$B" key --json "$s12" | jq -r .key_id)
"$SEED" sql "$work/q" "UPDATE sessions SET key_id = 'abcd2' || substr(key_id, 6) WHERE key_id = '$K12'" \
	"UPDATE sessions SET key_id = 'abcd1' || substr(key_id, 6) WHERE key_id = '$K'"
check "history --key, two keys: 1" test "$(rc_of "$B" -C "$work/q" history --key abcd)" = 1
check "history --key, two keys named" grep -qxF "benchgate: key 'abcd' is ambiguous: it begins abcd1${K:5:7}... and abcd2${K12:5:7}...; give more of its digits" "$work/err"
check "history --key, one more digit" test "$("$B" -C "$work/q" history --key abcd1 --json | jq length)" = 11
check "history --key, no such key: 1" test "$(rc_of "$B" -C "$work/q" history --key abce)" = 1
check "history --key, no such key said" grep -qxF "benchgate: unknown key 'abce': no stored session has a key that begins so; a session's key is shown by 'benchgate key SESSION' and 'benchgate history GATE'" "$work/err"
check "history --key, no such key, --json: 1" test "$(rc_of "$B" -C "$work/q" history --json --key "${K12:0:60}ffff")" = 1
check "history --key, 64 digits, none" grep -qF "unknown key '${K12:0:60}ffff': no stored session has this key;" "$work/err"
check "history --json fields"     test "$("$B" history --json $G | jq -r '.[0] | [.decision, .curation, .tier] | join(",")')" = "no-baseline,auto-accepted,scheduled-profile"
check "history: no timing note"   bash -c "! grep -q 'timing reported' '$work/out'"
# a gate the registry does not have: with sessions (a gate since removed)
# they are listed; without, a mistyped id is a usage error, not "no sessions"
cp -R "$work/p" "$work/r"
sed -i "s/\"$G\"/\"$G.renamed\"/" "$work/r/benchmarks/benchmark_registry.json"
check "history of a removed gate: exit 0" test "$(rc_of "$B" -C "$work/r" history $G)" = 0
check "history of a removed gate: every session" test "$(grep -c "scheduled-profile\|release-signoff" "$work/out")" = 12
check "history of an unknown gate: 2" test "$(rc_of "$B" history $G.typo)" = 2
check "history of an unknown gate: says so" grep -qxF "benchgate: unknown gate '$G.typo': no session is stored for it and the registry has no such gate; see 'benchgate list'" "$work/err"
check "history of a mistyped gate: 2" test "$(rc_of "$B" history bin.cpu.test-box.bin2.wram)" = 2
check "history of a mistyped gate: the gate it is a slip for" grep -qF "has no such gate (did you mean '$G'?); see 'benchgate list'" "$work/err"
check "history --json of an unknown gate: 2, nothing printed" bash -c "test \"\$('$B' history --json $G.typo 2>/dev/null; echo \$?)\" = 2"
check "history of a registered gate without sessions: 0" test "$(rc_of "$B" history bin.simd.test-box.bin2.cold)" = 0
check "history of a registered gate without sessions: says so" grep -qxF "no sessions stored for gate 'bin.simd.test-box.bin2.cold'" "$work/out"
# a gate without sessions where the registry cannot be read: a gate never
# run and a mistyped id read the same, so the registry's own error (1
# malformed, 4 unreadable) says so, for history and compare --last alike;
# a gate with sessions is still read without the registry
printf '{' >"$work/r/benchmarks/benchmark_registry.json"
why="no session is stored for gate '$G.typo', and without the registry it cannot be told whether that is a gate never run or a mistyped id: fix the registry ('benchgate validate' says what is wrong) and run this again"
check "history, registry malformed: 1" test "$(rc_of "$B" -C "$work/r" history $G.typo)" = 1
check "history, registry malformed: nothing printed" test ! -s "$work/out"
check "history, registry malformed: says why" grep -qxF "benchgate: benchmarks/benchmark_registry.json:1:2: invalid JSON: string or '}' expected near end of file; $why" "$work/err"
check "compare --last, registry malformed: 1" test "$(rc_of "$B" -C "$work/r" compare --last $G.typo)" = 1
check "compare --last, registry malformed: says why" grep -qxF "benchgate: benchmarks/benchmark_registry.json:1:2: invalid JSON: string or '}' expected near end of file; $why" "$work/err"
check "history, registry malformed, gate with sessions: 0" test "$(rc_of "$B" -C "$work/r" history $G)" = 0
rm "$work/r/benchmarks/benchmark_registry.json"
check "history, registry missing: 4" test "$(rc_of "$B" -C "$work/r" history $G.typo)" = 4
check "history, registry missing: says why" grep -qxF "benchgate: benchmarks/benchmark_registry.json: cannot read: No such file or directory ('registry.path' of benchgate.json names it, relative to the project's folder '$work/r'); $why" "$work/err"
check "compare --last, registry missing: 4" test "$(rc_of "$B" -C "$work/r" compare --last $G.typo)" = 4
check "compare --last, registry missing, gate with sessions: 0" test "$(rc_of "$B" -C "$work/r" compare --last $G)" = 0
# sessions the program timed itself (their p50 is its own samples): history
# and sessions say which under their tables (they said nothing)
note23="timing reported: p50, p95 and max of sessions 2, 3 are the program's own samples, not process wall time"
"$SEED" sql "$work/p" "UPDATE sessions SET document = json_set(document, '\$.timing', 'reported') WHERE id IN (2, 3)" || exit 1
check "reported: history says which"  test "$("$B" history $G | tail -1)" = "$note23"
check "reported: sessions says which" test "$("$B" sessions | tail -1)" = "$note23"
check "reported: none listed, no note" bash -c "! '$B' sessions --last 2 | grep -q 'timing reported'"
"$SEED" sql "$work/p" "UPDATE sessions SET document = json_set(document, '\$.timing', 'reported')" || exit 1
check "reported: all of them"         test "$("$B" history $G | tail -1)" = \
	"timing reported: p50, p95 and max are the program's own samples, not process wall time"
"$SEED" sql "$work/p" "UPDATE sessions SET document = json_remove(document, '\$.timing')" || exit 1
# a session of uncommitted source that run stored pending (whatever it
# decided): history says why it waits, as the dashboard does
sd=$(seed $G scheduled-profile 0.100 dirty=1)
sp=$(seed $G scheduled-profile 0.100)   # committed source, pending as an investigate one is
"$SEED" sql "$work/p" "UPDATE sessions SET curation = 'pending' WHERE id IN ($sd, $sp)" || exit 1
check "uncommitted: history says why" test "$("$B" history $G | grep "^$sd " | grep -o 'pending.*')" = "pending (uncommitted source)"
check "committed: no source note"     test "$("$B" history $G | grep "^$sp " | grep -o 'pending.*')" = "pending"
"$SEED" sql "$work/p" "DELETE FROM sessions WHERE id IN ($sd, $sp)" || exit 1
check "history unknown gate"      test "$(rc_of "$B" history nope)" = 2
check "history unknown message"   grep -q "unknown gate 'nope'" "$work/err"
# key: a value longer than 44 characters is cut in the table, never in --json
long="A computer label much longer than forty-four characters, on purpose"
s13=$(seed bin.cpu.test-box.bin1.warm scheduled-profile 0.100 computer="$long")
check "key: long value cut"       test "$(rc_of "$B" key "$s13"; grep -c '"A computer label much longer than forty-...' "$work/out")" = 01
check "key: the cut is said"      grep -q "(values longer than 44 characters are cut; --json shows them whole)" "$work/out"
check "key --json: whole value"   test "$("$B" key --json "$s13" | jq -r '.fields[] | select(.field == "computer") | .value')" = "$long"

# a store damaged outside benchgate: values of the wrong type show as n/a
# (never "(null)", never a crash); JSON that does not parse is refused
# with exit 4, naming the session
sql() { "$SEED" sql "$work/p" "$@"; }
sql "UPDATE sessions SET decision_doc = json_remove(json_set(decision_doc, '\$.reasons', json_array(7)), '\$.decision') WHERE id = $s10" \
    "UPDATE sessions SET key_id = NULL WHERE id = $s10" || exit 1
# (its decision taken out of the document: the session and it disagree)
check "damaged decision: exit 4"  test "$(rc_of "$B" compare "$s10")" = 4
check "damaged decision: told"    grep -qF "(the session says 'block' but it holds no decision document that names one)" "$work/err"
sql "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.decision', 'block', '\$.reasons', json_array(7, 'ok')), key = json_set(key, '\$.fields[0].source', 5, '\$.fields[1].field', json('null')) WHERE id = $s10" || exit 1
check "wrong types: compare 1"    test "$(rc_of "$B" compare "$s10")" = 1
check "wrong types: n/a reason"   grep -q "^  - n/a$" "$work/out"
check "wrong types: key n/a"      test "$(rc_of "$B" key "$s10")" = 0
check "wrong types: no (null)"    test "$(cat "$work/out" "$work/err" | grep -c '(null)')" = 0
check "wrong types: source n/a"   grep -q "^gate .* n/a$" "$work/out"
# a metric entry without a name (it crashed compare): its figures as numbers
sql "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.metrics[0].metric', 5) WHERE id = $s7" || exit 1
check "nameless metric: compare 0" test "$(rc_of "$B" compare "$s7")" = 0
check "nameless metric: n/a row"  grep -q "^n/a  *0.15000000000000002 0.1  *0.096 " "$work/out"
sql "UPDATE sessions SET started_at = 5, status = x'00' WHERE id = $s7" || exit 1
check "wrong types: sessions 0"   test "$(rc_of "$B" sessions)" = 0
check "wrong types: sessions n/a" test "$(grep -c "^$s7 .*(null)" "$work/out")$(grep -c "^$s7  *5  *n/a " "$work/out")" = 01
sql "UPDATE runs SET record = json_remove(record, '\$.phase') WHERE session_id = $s10 AND ordinal = 1" || exit 1
check "run without phase: 0"      test "$(rc_of "$B" session "$s10")" = 0
check "run without phase: ?"      grep -q "^  1    ? " "$work/out"
# a store truncated (a disk that filled, a copy cut short): every reader and
# writer says it is corrupted and to restore it, never to check permissions
cp .benchgate/store.sqlite3 "$work/whole.sqlite3"
head -c 8192 "$work/whole.sqlite3" >.benchgate/store.sqlite3
for v in sessions "history $G" "compare 1" "key 1" "accept 1 --why x" dashboard; do
	check "truncated: $v exit 4"    test "$(rc_of "$B" $v)" = 4
	check "truncated: $v says so"   grep -qF "benchgate: .benchgate/store.sqlite3: cannot read the schema: database disk image is malformed; the store is corrupted (truncated or changed outside benchgate): restore it from a backup" "$work/err"
done
cp "$work/whole.sqlite3" .benchgate/store.sqlite3
# another process holding the store for writing (a benchgate stopped with
# Ctrl-Z while it stored): a writer gives up after the 10 s busy timeout
# saying so, not "check that the store is writable"; readers go on (WAL)
if command -v sqlite3 >/dev/null; then
	mkfifo "$work/hold"
	sqlite3 .benchgate/store.sqlite3 <"$work/hold" >/dev/null &
	holder=$!
	exec 8>"$work/hold"
	echo "BEGIN IMMEDIATE;" >&8
	sleep 0.5
	check "store held: sessions read"  test "$(rc_of "$B" sessions)" = 0
	check "store held: accept exit 4"  test "$(rc_of "$B" accept 1 --why "looks right")" = 4
	check "store held: said so"        grep -qF "benchgate: .benchgate/store.sqlite3: cannot start the curation transaction: database is locked: another process has held it for writing for 10 s" "$work/err"
	exec 8>&-
	wait "$holder"
else
	echo "skipped: the held-store case needs the sqlite3 program"
fi
sql "UPDATE sessions SET decision_doc = '{\"decision\": ' WHERE id = $s10" || exit 1
check "unparsable: compare 4"     test "$(rc_of "$B" compare "$s10")" = 4
check "unparsable: named"         grep -q "session $s10: the stored decision is not valid JSON" "$work/err"
check "unparsable: history 0"     test "$(rc_of "$B" history $G)" = 0   # it reads the decision column only

# the table's figures: a negative low bound in the unit of its size, and
# bytes fine enough to show a 1% envelope of a 1 MiB peak
G3=bin.simd.test-box.bin2.cold
for v in 0.05 0.1 0.15 0.2 0.08; do seed $G3 scheduled-profile $v tree=1000000 >/dev/null; done
s13=$(seed $G3 scheduled-profile 0.1 tree=1000000)
check "compare: negative low in ms" grep -q "^wall_p50 .* -196.52 ms " <("$B" compare "$s13")
check "compare: bytes to the KiB"   grep -q "^tree_peak_bytes  *1.049 MiB  *1.049 MiB  *1.007 MiB  *1.091 MiB " <("$B" compare "$s13")

# stored text reaches the terminal with its control bytes (C0, DEL, C1) as
# \xNN, and a command word holding one as the shell's $'...': an escape
# sequence or a newline from a command line, a measured program, a
# registry or a user name neither drives the terminal nor forges a line
has_ctl() { LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' "$work/out"; }
"$B" measure -q -r 1 -w 0 -- printf $'\e[2J%s\'\\' $'x\ny' >/dev/null 2>&1
check "sessions: words as \$'...'"  grep -qF "printf \$'\\x1b[2J%s\\'\\\\' \$'x\\x0ay'" <("$B" sessions --last 1)
"$B" measure -q -r 1 -w 0 -- printf "it's %s" 'a b' >/dev/null 2>&1
check "sessions: a ' as \$'...'"   grep -qF "printf \$'it\\'s %s' 'a b'" <("$B" sessions --last 1)
d2=$("$B" sessions --json | jq '.[-2].id')
check "session: no control byte"  test "$(rc_of "$B" session "$d2"; has_ctl && echo ctl)" = 0
sed -i 's/"id": "bin.cpu.test-box.bin1.warm"/"id": "bin.cpu\\u001b[31m.bin1\\nwarm"/' benchmarks/benchmark_registry.json
Gc=$'bin.cpu\e[31m.bin1\nwarm'
sc=$(seed "$Gc" scheduled-profile 0.1 status=blocked reason=$'run 1 wrote \e[2J\nforged' computer=$'box\xc2\x9b1m')
check "compare: controls shown"   test "$(rc_of "$B" compare "$sc")" = 1
check "compare: no control byte"  test "$(has_ctl && echo ctl)" = ""
check "compare: gate as \\xNN"   grep -qF 'gate bin.cpu\x1b[31m.bin1\x0awarm  tier' "$work/out"
check "compare: reason one line"  grep -qF '  - run 1 wrote \x1b[2J\x0aforged' "$work/out"
check "key: no control byte"      test "$(rc_of "$B" key "$sc"; has_ctl && echo ctl)" = 0
check "key: C1 as \\xNN"          grep -qF '"box\xc2\x9b1m"' "$work/out"
check "reject: user with a C1"    test "$(rc_of env USER=$'ana\xc2\x9b2J' "$B" reject "$sc" --why probe)" = 0
check "history: no control byte"  test "$(rc_of "$B" history "$Gc"; has_ctl && echo ctl)" = 0
check "history: user's C1 as ?"   grep -qF 'rejected by ana?2J at ' "$work/out"
# a decision's note quotes what the machine reported (a process's name on the GPU)
sql "INSERT INTO decision_notes VALUES ($sc, json_array('other processes used the GPU (4242 (' || char(27) || '[2J))'))" || exit 1
check "history: note, no control byte" test "$(rc_of "$B" history "$Gc"; has_ctl && echo ctl)" = 0
check "history: note's ESC as \\xNN"  grep -qF '      note: other processes used the GPU (4242 (\x1b[2J))' "$work/out"
check "promote: no control byte"  test "$(rc_of "$B" promote "$sc"; has_ctl && echo ctl)" = 1
check "promote: gate as \\xNN"   grep -qF 'gate bin.cpu\x1b[31m.bin1\x0awarm  tier' "$work/out"
# and in a message: a gate session stored without its decision
sql "UPDATE sessions SET decision = NULL, decision_doc = NULL, key = NULL WHERE id = $sc" || exit 1
for v in compare key; do
	check "$v undecided: gate as \\xNN" test "$(rc_of "$B" $v "$sc"; cp "$work/err" "$work/out"; has_ctl && echo ctl)" = 1
	check "$v undecided: message"  grep -qF "of gate 'bin.cpu\x1b[31m.bin1\x0awarm' stored without" "$work/err"
done

# a decision no one made (a store changed outside benchgate) never passes:
# compare exited 0 on it and accept took it into the baseline; now exit 4
sw=$(seed $G scheduled-profile 0.100)
sql "UPDATE sessions SET decision = 'weird', decision_doc = json_set(decision_doc, '\$.decision', 'weird') WHERE id = $sw" || exit 1
check "unknown decision: compare 4"     test "$(rc_of "$B" compare "$sw")" = 4
check "unknown decision: named"         grep -qF "session $sw: the stored decision is not one benchgate made ('weird' is none of pass, investigate, block, no-baseline); the store is corrupted" "$work/err"
check "unknown decision: --fail-on 4"   test "$(rc_of "$B" compare --fail-on investigate "$sw")" = 4
check "unknown decision: --last 4"      test "$(rc_of "$B" compare --last $G)" = 4
check "unknown decision: accept 4"      test "$(rc_of "$B" accept "$sw" --why "looks fine")" = 4
check "unknown decision: not curated"   test "$("$B" history --json $G | jq -r ".[] | select(.id == $sw) | .curation")" = auto-accepted
check "unknown decision: promote 4"     test "$(rc_of "$B" promote "$sw")" = 4
check "unknown decision: history 0"     test "$(rc_of "$B" history $G)" = 0   # a listing shows it as stored
# the session and its document naming two decisions: which one is true is unknown
sql "UPDATE sessions SET decision = 'block', decision_doc = json_set(decision_doc, '\$.decision', 'pass') WHERE id = $sw" || exit 1
check "two decisions: compare 4"        test "$(rc_of "$B" compare "$sw")" = 4
check "two decisions: said"             grep -qF "(the session says 'block' but its decision document 'pass')" "$work/err"
# ... nor is one accepted into the baseline: accept took a pending
# 'investigate' whose document says block
sql "UPDATE sessions SET decision = 'investigate', curation = 'pending', decision_doc = json_set(decision_doc, '\$.decision', 'block') WHERE id = $sw" || exit 1
check "two decisions: accept 4"         test "$(rc_of "$B" accept "$sw" --why "looks fine")" = 4
check "two decisions: accept said"      grep -qF "(the session says 'investigate' but its decision document 'block')" "$work/err"
check "two decisions: still pending"    test "$("$B" history --json $G | jq -r ".[] | select(.id == $sw) | .curation")" = pending
# one of the two missing, or a document that is no object: changed by hand
# as well (compare said "stored without a decision", exit 1, while accept
# curated it and run counted it)
sql "UPDATE sessions SET decision = 'pass', curation = 'pending', decision_doc = '[]' WHERE id = $sw" || exit 1
check "decision, no document: compare 4" test "$(rc_of "$B" compare "$sw")" = 4
check "... said"                        grep -qF "(the session says 'pass' but it holds no decision document that names one)" "$work/err"
check "... accept 4"                    test "$(rc_of "$B" accept "$sw" --why "looks fine")" = 4
sql "UPDATE sessions SET decision = NULL, decision_doc = json_object('decision', 'investigate') WHERE id = $sw" || exit 1
check "document, no decision: compare 4" test "$(rc_of "$B" compare "$sw")" = 4
check "... said"                        grep -qF "(the session names no decision but its decision document 'investigate')" "$work/err"
# and a session accepted, its document changed to name another decision,
# counts in no baseline: the next session's leaves it out
sm=$(seed $G scheduled-profile 0.100)
sql "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.decision', 'investigate') WHERE id = $sm" || exit 1
sn=$(seed $G scheduled-profile 0.100)
check "two decisions: in no baseline"   jqe --argjson m "$sm" '(.baseline | length) > 0 and ([.baseline[] | if type == "object" then .id else . end] | index($m)) == null' <("$B" compare --json "$sn")

# --fail-on unaccepted of a session of uncommitted source: running again
# from the same tree would be pending again; it says to commit first
sd=$(seed $G scheduled-profile 0.1 dirty=1)
"$SEED" sql "$work/p" "UPDATE sessions SET curation = 'pending' WHERE id = $sd" || exit 1
check "unaccepted, dirty: 1"      test "$(rc_of "$B" compare --fail-on unaccepted "$sd")" = 1
check "unaccepted, dirty: commit first" grep -qF "is pending, not accepted: it ran on uncommitted source; commit, then run the gate again, or review it ('benchgate compare $sd')" "$work/err"

# a session whose document was damaged outside benchgate (not JSON, or JSON
# that is not an object) is read by accept and reject as compare reads it,
# before anything is written: exit 4 with compare's message, the curation
# and its log unchanged (accept took it into the baseline, and every run of
# the gate then failed reading the baseline)
for bad in '{bad' '[1,2]'; do
	sb=$(seed $G scheduled-profile 0.100)
	sql "UPDATE sessions SET curation = 'pending', decision = 'investigate', decision_doc = json_set(decision_doc, '\$.decision', 'investigate') WHERE id = $sb" || exit 1
	before=$("$B" compare --json "$sb" | jq -c '[.curation, .curated_by, .curation_why]')
	# the document kept in reason meanwhile, to read the verdict after
	sql "UPDATE sessions SET reason = document, document = '$bad' WHERE id = $sb" || exit 1
	check "damaged document $bad: compare 4" test "$(rc_of "$B" compare "$sb")" = 4
	cp "$work/err" "$work/compare.err"
	for v in accept reject; do
		check "damaged document $bad: $v 4"   test "$(rc_of "$B" $v "$sb" --why "looks fine")" = 4
		check "damaged document $bad: $v says as compare" cmp -s "$work/err" "$work/compare.err"
		check "damaged document $bad: $v prints nothing" test ! -s "$work/out"
	done
	sql "UPDATE sessions SET document = reason, reason = NULL WHERE id = $sb" || exit 1
	check "damaged document $bad: nothing written" test "$("$B" compare --json "$sb" | jq -c '[.curation, .curated_by, .curation_why]')" = "$before"
	check "damaged document $bad: pending" test "${before%%,*}" = '["pending"'
	sql "DELETE FROM sessions WHERE id = $sb" || exit 1
done
check "damaged document: named" grep -qxF "benchgate: .benchgate/store.sqlite3: cannot read the decision: session $sb: the stored document is not a JSON object; the store is corrupted: restore it from a backup" "$work/compare.err"

# accepting a session older than its key's baseline window (20): it
# counts in no later decision, and accept says so rather than "it now counts"
rm -rf "$work/w" && cp -R "$work/p" "$work/w"
sw=$("$SEED" seed "$work/w" $G scheduled-profile 0.150 | cut -d' ' -f1)
"$SEED" sql "$work/w" "UPDATE sessions SET curation = 'pending', decision = 'investigate', decision_doc = json_set(decision_doc, '\$.decision', 'investigate') WHERE id = $sw" || exit 1
for i in $(seq 21); do "$SEED" seed "$work/w" $G scheduled-profile 0.100 >/dev/null; done
check "accept beyond the window: exit 0" test "$(rc_of "$B" -C "$work/w" accept "$sw" --why "new allocator, expected")" = 0
check "accept beyond the window: said" grep -qxF "it counts in no later decision even so: at least 20 newer sessions of its key count, and a baseline is the most recent 20 of them (the window)" "$work/out"
# within the window it counts, as before
sw2=$("$SEED" seed "$work/w" $G scheduled-profile 0.150 | cut -d' ' -f1)
"$SEED" sql "$work/w" "UPDATE sessions SET curation = 'pending', decision = 'investigate', decision_doc = json_set(decision_doc, '\$.decision', 'investigate') WHERE id = $sw2" || exit 1
check "accept within the window: counts" sh -c '"$1" -C "$2" accept "$3" --why "expected" | grep -q "^it now counts in the baseline of its key"' _ "$B" "$work/w" "$sw2"

# a person whose user name is benchgate: their curation shows who, when
# and why, as anyone's (benchgate's own, of a decision, shows none)
sb=$("$SEED" seed "$work/w" $G scheduled-profile 0.100 | cut -d' ' -f1)
check "user benchgate: reject, exit 0" test "$(USER=benchgate rc_of "$B" -C "$work/w" reject "$sb" --why "thermal throttling on this run")" = 0
check "user benchgate: compare shows who and why" sh -c '"$1" -C "$2" compare "$3" | grep -q "^curation: rejected by benchgate at .*: thermal throttling on this run$"' _ "$B" "$work/w" "$sb"
sa=$("$SEED" seed "$work/w" $G scheduled-profile 0.100 | cut -d' ' -f1)
check "benchgate's own: none shown" sh -c '"$1" -C "$2" compare "$3" | grep -qx "curation: auto-accepted"' _ "$B" "$work/w" "$sa"

# a figure stored as an infinity (changed outside benchgate) is null in the
# listing, never a member dropped from it
sql "UPDATE sessions SET wall_p50_ns = 9e999 WHERE id = $s6" || exit 1
check "infinite figure: listed"   test "$(rc_of "$B" sessions --json)" = 0
check "infinite figure: null"     jqe --argjson i "$s6" '.[] | select(.id == $i) | has("wall_p50_ns") and .wall_p50_ns == null' "$work/out"
# a key or a command stored as valid JSON of the wrong kind: corrupted, as
# one that does not parse (key said "no comparison key ... run the gate
# again", and sessions listed the command as a string)
sk=$(seed $G scheduled-profile 0.100)
sql "UPDATE sessions SET key = '[1]' WHERE id = $sk" || exit 1
check "key an array: key 4"        test "$(rc_of "$B" key "$sk")" = 4
check "key an array: said"         grep -qF "session $sk: the stored key is not an object; the store is corrupted" "$work/err"
sql "UPDATE sessions SET key = NULL, decision = NULL, decision_doc = NULL, command = '\"just a string\"' WHERE id = $sk" || exit 1
check "command a string: sessions 4" test "$(rc_of "$B" sessions --json)" = 4
check "command a string: said"     grep -qF "session $sk: the stored command is not an array; the store is corrupted" "$work/err"
sql "DELETE FROM sessions WHERE id = $sk" || exit 1

echo "$fails failed"
[ "$fails" = 0 ]
