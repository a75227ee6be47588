#!/usr/bin/env bash
# What `benchgate dashboard` says on its page must be true of the store and
# the registry: a registry render refuses gets no page; a store holding only
# diagnostic sessions is not called empty; figures read as `history` writes
# them; no session is left out unsaid; which sessions count toward a
# decision's baseline is told and drawn truly (a session of uncommitted
# source pending review, and why); a key's heading is true of
# all its sessions; the page's size is bounded; figures no measurement
# makes (a damaged store) draw no NaN. Sessions are stored with
# BENCHGATE_BUILD/test_seedtool (synthetic figures, decided as run decides).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SEED="${BENCHGATE_BUILD:?}/test_seedtool"
SRC=${BENCHGATE_SOURCE:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fresh() { rm -rf "$work/p"; cp -R "$SRC/tests/cli/trees/mini" "$work/p"; }
page="$work/p/.benchgate/dashboard/index.html"

# a registry that does not render: exit 1 with render's message, no page
fresh
sed -i '0,/"state": "pending"/s//"state": "Pending"/' p/benchmarks/benchmark_registry.json
check "unknown state: exit 1" test "$(rc_of "$B" -C p dashboard)" = 1
check "unknown state: render's message" grep -qF "gate 'bin.cpu.test-box.bin2.warm' has state 'Pending' which is not a known state" "$work/err"
check "unknown state: no page" test ! -e "$page"

# diagnostic sessions only: no gate session with a key, but not "no sessions"
fresh
"$B" -C p measure -w 0 -r 2 -- true >/dev/null 2>&1
check "a diagnostic session stored" test "$("$B" -C p sessions | wc -l)" = 2
check "diagnostic only: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "diagnostic only: not called empty" bash -c "! grep -q 'No sessions are stored' '$page'"
check "diagnostic only: says no gate session has a key" grep -q "No gate sessions with a comparison key are stored yet" "$page"
# an unsupported gate's next step is its reason, as the generated document shows it
check "an unsupported gate says why" grep -qF '<td>CI runner</td><td>The CI runner has no GPU.</td></tr>' "$page"

# the figures read as history writes them: sub-millisecond times in us or
# ns, small peaks in B or KiB (they were "0.100 ms" and "0.0 MiB")
fresh
G=bin.cpu.test-box.bin2.warm
for a in "0.0001 tree=900" "0.0000005 tree=2048" "0.00099999 tree=1048000" "0.25 tree=5000000000"; do
	set -- $a
	"$SEED" seed p $G scheduled-profile "$1" "$2" >/dev/null
done
"$B" -C p dashboard >/dev/null
"$B" -C p history $G | tail -n +2 >"$work/history"
check "four sessions in history" test "$(wc -l <"$work/history")" = 4
while IFS= read -r line; do
	cells=""
	for c in 53 64 75 86; do
		cells="$cells<td class=\"n\">$(printf '%s' "${line:$((c - 1)):10}" | sed 's/ *$//')</td>"
	done
	check "session ${line%% *}: p50, p95, max and tree peak as history writes them" grep -qF "$cells" "$page"
done <"$work/history"
check "a sub-millisecond time in us" grep -qF ">100.0 us<" "$page"
check "a small peak in B" grep -qF ">990 B<" "$page"

# a stored text that is not UTF-8 (a store changed outside benchgate): the
# session stays on the page, the bytes as \xNN, as history shows them (the
# session was left out, and history showed n/a)
fresh
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$SEED" sql p "UPDATE sessions SET started_at = CAST(X'41ff42' AS TEXT), tier = CAST(X'7469ff' AS TEXT) WHERE id = 2"
check "not UTF-8: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "not UTF-8: the session on the page, its texts as \\xNN" \
	grep -qF '<td class="n">2</td><td>A\xffB</td><td class="w">ti\xff</td>' "$page"
check "not UTF-8: history shows the same" bash -c "'$B' -C p history $G | grep -qE '^2 +A.xffB +ti.xff '"
check "not UTF-8: history --json keeps the member" \
	test "$("$B" -C p history $G --json | jq -r '.[1].started_at')" = 'A\xffB'
"$SEED" sql p "UPDATE sessions SET key_id = X'0102' WHERE id = 2"
check "a key id that is not text: exit 4" test "$(rc_of "$B" -C p dashboard)" = 4
check "a key id that is not text: the session named" grep -qF "benchgate: session 2: its stored key id is not text;" "$work/err"
# a key id stored as text that is not UTF-8 (a store changed outside
# benchgate): its sessions are found by their stored bytes, the id shown as \xNN
"$SEED" sql p "UPDATE sessions SET key_id = CAST(X'6bff31' AS TEXT) WHERE id IN (1, 2)"
check "a key id not UTF-8: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "a key id not UTF-8: shown" grep -qF '<p class="muted">key <code>k\xff1</code>' "$page"
check "a key id not UTF-8: one key, both its sessions" \
	test "$(grep -c '<section class="key">' "$page") $(grep -cE '<tr( class="out")?><td class="n">[12]</td><td[ >]' "$page")" = "1 2"

# which sessions count: a parity failure (blocked), an investigate pending
# review and a pr-smoke session do not; a runbook without parity does. The
# table says so (Parity and Counts columns), the plot draws those that do
# not count hollow, off the lines, and its axis spans those that count (the
# blocked 5 s session had stretched it to seconds)
fresh
for p in 0.100 0.101 0.099 0.100 0.100 0.1005; do "$SEED" seed p $G scheduled-profile $p >/dev/null; done
"$SEED" seed p $G scheduled-profile 5.0 parity=fail >/dev/null     # 7 block
"$SEED" seed p $G scheduled-profile 0.150 >/dev/null               # 8 investigate
"$SEED" seed p $G pr-smoke 0.1 >/dev/null                          # 9 pass, pr-smoke
"$SEED" seed p $G scheduled-profile 0.1 parity=none >/dev/null     # 10 pass, no parity declared
"$B" -C p dashboard >/dev/null
check "the old claim is gone" bash -c "! grep -q 'Only parity-qualified' '$page'"
check "the rule: the most recent 20 that count" grep -q "the most recent 20 of them that count toward the key" "$page"
check "the rule: promotion needs parity" grep -q "Promotion additionally needs parity declared and passed" "$page"
check "a Parity column" grep -q "<th>Parity</th>" "$page"
check "parity failed: fail, blocked, does not count" \
	bash -c "grep -o '<tr class=\"out\"><td class=\"n\">7</td>.*</tr>' '$page' | grep -q '<td>fail</td>.*<td>no: blocked</td>'"
check "investigate: pending review" bash -c "grep -o '<tr class=\"out\"><td class=\"n\">8</td>.*</tr>' '$page' | grep -q '<td>no: pending review</td>'"
check "pr-smoke: its tier never counts" bash -c "grep -o '<tr class=\"out\"><td class=\"n\">9</td>.*</tr>' '$page' | grep -q '<td>no: tier pr-smoke</td>'"
check "no parity declared: says so, and counts" \
	bash -c "grep -o '<tr><td class=\"n\">10</td>.*</tr>' '$page' | grep -q '<td>not declared</td>.*<td>yes</td>'"
check "a passing session counts" bash -c "grep -o '<tr><td class=\"n\">1</td>.*</tr>' '$page' | grep -q '<td>pass</td>.*<td>yes</td></tr>'"
check "three hollow p50 markers" test "$(grep -c 'class="marker hollow"><title>session [0-9]*: p50' "$page")" = 3
check "the blocked session's marker says why" grep -q "session 7: p50 5.000 s, block; does not count: blocked (above the axis)" "$page"
check "the p50 line joins the seven that count" \
	test "$(grep -o '<path class="series" stroke="#0969da" d="[^"]*"' "$page" | head -1 | grep -o '[ML]' | wc -l)" = 7
check "the time axis spans those that count: ms, not s" \
	test "$(grep -o 'rotate(-90 12 110)">[^<]*<' "$page" | head -1)" = 'rotate(-90 12 110)">ms<'

# key's table is aligned by characters, its field column as wide as the
# longest name: 'clé' (4 bytes) and a 38-character name keep the values in line
fresh
jq '.comparison_contract.comparison_key = ["clé", "a_very_long_key_field_name_over_twenty", "revision"]' p/benchmarks/profile_matrix.json >"$work/pm" &&
	cp "$work/pm" p/benchmarks/profile_matrix.json
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$B" -C p key 1 >"$work/key.txt"
check "key: the field column as wide as the longest name" grep -qx 'a_very_long_key_field_name_over_twenty null                                         unresolved' "$work/key.txt"
check "key: 'clé' padded by characters" grep -qx "clé$(printf '%35s') null                                         unresolved" "$work/key.txt"

# a key whose fields leave out the gate, the computer and the measure
# object: its sessions are of two gates, two computers and both timings.
# The heading, the notes and the plot title are true of all of them (they
# were the first session's gate and computer, and "Wall time")
fresh
jq '.comparison_contract.comparison_key = ["revision"]' p/benchmarks/profile_matrix.json >"$work/pm" &&
	cp "$work/pm" p/benchmarks/profile_matrix.json
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$SEED" seed p bin.simd.ci.bin1.parity scheduled-profile 0.1 >/dev/null
"$SEED" sql p "UPDATE sessions SET document = json_set(document, '$.timing', 'reported') WHERE id = 2"
check "one key for both" test "$("$B" -C p history --key "$("$B" -C p key 1 --json | jq -r .key_id)" --json | jq length)" = 2
# history of the key names each session's gate where a gate's history names its key
"$B" -C p history --key "$("$B" -C p key 1 --json | jq -r .key_id)" >"$work/hist"
check "history --key: a gate column" grep -qE '^id +started .* decision +gate +curation$' "$work/hist"
check "history --key: session 1's gate" grep -qE "^1 .* $G " "$work/hist"
check "history --key: session 2's gate" grep -qE '^2 .* bin[.]simd[.]ci[.]bin1[.]parity ' "$work/hist"
check "history GATE: the key column" bash -c "'$B' -C p history '$G' | grep -qE '^id +started .* decision +key +curation$'"
check "mixed key: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "mixed key: both gates in the heading" \
	grep -qF "<h3>2 gates: <code>$G</code>, <code>bin.simd.ci.bin1.parity</code></h3>" "$page"
check "mixed key: both computers" grep -qF "on 2 computers: Test box (x86, 16 GB), CI runner</p>" "$page"
check "mixed key: says what the key does not tell apart" \
	grep -qF "This key's fields do not tell apart the gates, the computers or how sessions are timed" "$page"
check "mixed key: not titled wall time" bash -c "! grep -q 'Wall time: p50' '$page'"
check "mixed key: the plot title says mixed" grep -qF "Time (mixed: wall and reported): p50 with p95 and maximum" "$page"
check "mixed key: Gate, Computer and Timing columns" \
	grep -qF "<tr><th>Session</th><th>Gate</th><th>Computer</th><th>Timing</th><th>Started (UTC)</th>" "$page"
check "mixed key: each row its own gate and timing" \
	grep -qF '<td class="n">2</td><td><code>bin.simd.ci.bin1.parity</code></td><td>CI runner</td><td>reported</td>' "$page"
# one gate, one computer, all reported: titled so, no extra columns
"$SEED" sql p "UPDATE sessions SET document = json_set(document, '$.timing', 'reported')"
"$SEED" sql p "DELETE FROM sessions WHERE id = 2"
"$B" -C p dashboard >/dev/null
check "all reported: titled so" grep -qF "Reported time: p50 with p95 and maximum" "$page"
check "all reported: the gate in the heading" grep -qF "<h3><code>$G</code></h3>" "$page"
check "all reported: no Gate column" grep -qF "<tr><th>Session</th><th>Started (UTC)</th>" "$page"

# the page is bounded: a key shows its most recent 100 sessions (it showed
# all 28,672 of a store, 22 MB), says how many it has and where the rest are;
# a plot with nothing to draw is left out; keys past the page's budget for
# keys in full (4 MiB) are one line each, up to 2,000, and the rest counted
double="CREATE TEMP TABLE t AS SELECT * FROM sessions; UPDATE t SET id = id + (SELECT max(id) FROM sessions);
 INSERT INTO sessions SELECT * FROM t ORDER BY id; DROP TABLE t;"
fresh
for p in 0.100 0.101 0.099 0.100 0.100 0.1005; do "$SEED" seed p $G scheduled-profile $p >/dev/null; done
"$SEED" seed p $G scheduled-profile 0.3 parity=fail >/dev/null
for _ in 1 2 3 4 5; do "$SEED" sql p "$double"; done # 224 sessions
"$SEED" sql p "UPDATE sessions SET tree_peak_bytes = NULL, gpu_peak_bytes = NULL"
K=$("$B" -C p key 1 --json | jq -r .key_id)
"$B" -C p dashboard >/dev/null
check "224 sessions: the most recent 100 shown, and where the rest are" \
	grep -qF "The most recent 100 of its 224 sessions are shown; older sessions: <code>benchgate history --key $K</code>" "$page"
check "224 sessions: 100 rows" test "$(grep -c '<tr[^>]*><td class="n">[0-9]*</td><td class="t" title="2026' "$page")" = 100
check "224 sessions: from session 125" grep -qF '<td class="n">125</td>' "$page"
check "224 sessions: not session 124" bash -c "! grep -qF '<td class=\"n\">124</td>' '$page'"
check "224 sessions: 100 plotted" grep -qF "session (oldest to newest, 100)" "$page"
check "no memory measured: no memory plot" bash -c "! grep -q 'Memory: process-tree' '$page'"
# a key without accelerator peaks: the memory plot draws the tree peak
# alone (it kept an empty accelerator series, legend and title)
"$SEED" sql p "UPDATE sessions SET tree_peak_bytes = 1048576"
"$B" -C p dashboard >/dev/null
check "no accelerator: tree peak alone" grep -qF "Memory: process-tree peak</" "$page"
check "no accelerator: no empty series" bash -c "! grep -q 'd=\"\"' '$page'"
check "no accelerator: no legend for it" bash -c "! grep -q '>accelerator<' '$page'"
check "no memory measured: no empty plot either" bash -c "! grep -q 'nothing measured' '$page'"
fresh
for p in 0.100 0.101 0.099 0.100 0.100 0.1005; do "$SEED" seed p $G scheduled-profile $p >/dev/null; done
"$SEED" seed p $G scheduled-profile 0.3 parity=fail >/dev/null
for _ in $(seq 10); do "$SEED" sql p "$double"; done # 7,168 sessions
"$SEED" sql p "UPDATE sessions SET key_id = printf('%064x', id)"
"$B" -C p dashboard >/dev/null
full=$(grep -c '<section class="key">' "$page")
check "7,168 keys: some in full" test "$full" -gt 100
check "7,168 keys: then one line each" grep -qF '<h3 id="more-keys">More keys, one line each</h3>' "$page"
check "7,168 keys: 2,000 lines" test "$(grep -c '^<tr><td><code>0*[0-9a-f]*</code></td><td><code>' "$page")" = 2000
check "7,168 keys: the rest counted" grep -qF -- "$((7168 - full - 2000)) more keys, the least recently measured, are not listed" "$page"
check "7,168 keys: the newest key first" \
	test "$(grep -o 'key <code>[0-9a-f]*</code>' "$page" | head -1)" = "key <code>$(printf '%064x' 7168)</code>"
check "7,168 keys: the page under 6 MB" test "$(stat -c %s "$page")" -lt 6000000

# a session of uncommitted source: run stores it pending whatever it
# decided (docs/decisions.md); the page's rule says so, and its row says why
fresh
for p in 0.100 0.101 0.099 0.100 0.100; do "$SEED" seed p $G scheduled-profile $p >/dev/null; done
dirty=$("$SEED" seed p $G scheduled-profile 0.100 dirty=1 | cut -d' ' -f1)             # pass, uncommitted
"$SEED" sql p "UPDATE sessions SET curation = 'pending' WHERE id = $dirty" || exit 1  # as run stores it
"$B" -C p dashboard >/dev/null
check "the rule: uncommitted source is pending review" \
	grep -q "automatically on pass or no-baseline of committed source, or by a person: an investigate session, and one of uncommitted source, is pending review until accepted" "$page"
check "uncommitted source: pass, pending, says why" \
	bash -c "grep -o '<tr class=\"out\"><td class=\"n\">$dirty</td>.*</tr>' '$page' | grep -q '>pass</td><td>pending</td><td>no: pending review (uncommitted source)</td>'"
"$B" -C p accept "$dirty" --why "the change is a comment" >/dev/null
"$B" -C p dashboard >/dev/null
check "uncommitted source accepted: counts" \
	bash -c "grep -o '<tr><td class=\"n\">$dirty</td>.*</tr>' '$page' | grep -q '<td>accepted</td><td>yes</td>'"

# figures no measurement makes (a store changed outside benchgate: a p50 of
# 1e308 ns, an envelope beyond a double): the page is still written, every
# session listed, and no coordinate is NaN (the axis's span overflowed into
# y="-nan"; the envelope made the page fail)
fresh
for p in 0.100 0.101 0.099 0.100 0.100 0.150; do "$SEED" seed p $G scheduled-profile $p >/dev/null; done
"$SEED" sql p "UPDATE sessions SET wall_p50_ns = 1e308, wall_p95_ns = -1e308 WHERE id = 2" || exit 1
no_nan() { ! grep -Eqi '(^|[^a-z])-?(nan|inf)([^a-z]|$)' "$page"; }
check "absurd figures: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "absurd figures: no NaN or infinity" no_nan
check "absurd figures: every session listed" test "$(grep -c '^<tr[^>]*><td class="n">[0-9]*</td>' "$page")" = 6
"$SEED" sql p "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.metrics[0].centre', 1e300, '\$.metrics[0].low', -1e300) WHERE id = 6" || exit 1
check "absurd envelope: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "absurd envelope: no NaN or infinity" no_nan

# an absurd figure (a store changed outside benchgate): tick labels in
# exponent form, not 190 digits
fresh
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$SEED" sql p "UPDATE sessions SET wall_max_ns = 1e200 WHERE id = 1"
check "absurd figure: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "absurd figure: ticks in exponent form" grep -q 'class="tick" text-anchor="end">1.000e+191<' "$page"
check "absurd figure: no long tick" bash -c "! grep -qE 'class=\"tick\" text-anchor=\"end\">[0-9]{20}' '$page'"

# a noisy baseline's envelope reaches below 0 (centre - 4 x scale): the time
# axis stops at 0 all the same, and so does the band
fresh
for p50 in 0.01 0.1 0.2 0.3 0.4 0.2; do "$SEED" seed p $G scheduled-profile $p50 >/dev/null; done
check "noisy baseline: the envelope is below 0" bash -c "'$B' -C p compare 6 | grep -q 'wall_p50 .* -[0-9]'"
check "noisy baseline: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "noisy baseline: no tick below 0" bash -c "! grep -q 'class=\"tick\" text-anchor=\"end\">-' '$page'"
check "noisy baseline: the axis starts at 0" grep -q 'class="tick" text-anchor="end">0<' "$page"
# a negative time (a store changed outside benchgate; measure stores none):
# below the axis, which still starts at 0
fresh
"$SEED" seed p $G scheduled-profile 0.1 >/dev/null
"$SEED" seed p $G scheduled-profile -0.05 >/dev/null
check "negative time: exit 0" test "$(rc_of "$B" -C p dashboard)" = 0
check "negative time: no tick below 0" bash -c "! grep -q 'class=\"tick\" text-anchor=\"end\">-' '$page'"
check "negative time: below the axis" grep -q "(below the axis)" "$page"

echo "$fails failed"
[ "$fails" = 0 ]
