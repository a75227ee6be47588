#!/usr/bin/env bash
# What `benchgate dashboard` says on its page must be true of the store and
# the registry: a registry render refuses gets no page; a store holding only
# diagnostic sessions is not called empty; figures read as `history` writes
# them; no session is left out unsaid. Sessions are stored with
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
	grep -qF '<tr><td class="n">2</td><td>A\xffB</td><td>ti\xff</td>' "$page"
check "not UTF-8: history shows the same" bash -c "'$B' -C p history $G | grep -qE '^2 +A.xffB +ti.xff '"
check "not UTF-8: history --json keeps the member" \
	test "$("$B" -C p history $G --json | jq -r '.[1].started_at')" = 'A\xffB'
"$SEED" sql p "UPDATE sessions SET key_id = X'0102' WHERE id = 2"
check "a key id that is not text: exit 4" test "$(rc_of "$B" -C p dashboard)" = 4
check "a key id that is not text: the session named" grep -qF "benchgate: session 2: its stored key id is not text;" "$work/err"

echo "$fails failed"
[ "$fails" = 0 ]
