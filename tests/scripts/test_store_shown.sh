#!/usr/bin/env bash
# Texts of a store changed outside benchgate (a start time with an escape
# and a newline, a status with a bell, a tier, curation, parity and
# computer with C0, C1 and bidirectional controls, and HTML's special
# characters) reach no reader raw: `sessions`, `session` (a summary's
# status, parity and cache, a run's phase and flags), `history`, `compare`
# and `key` show the controls as \xNN, and so does the dashboard, whose
# page holds no control byte but newlines between its tags, escapes < & "
# as HTML does, and keeps every other character whole (the page is UTF-8:
# a state's mark, a computer named in another script). Sessions are stored
# the way `benchgate run` stores them (tests/unit/test_seedtool.c), so
# nothing is measured.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
seeded_setup
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1
# no raw control byte (but the newlines that end lines) in a file
no_raw() { ! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$1"); }

seed $G scheduled-profile 0.100 computer="Zürich ✓ 東京" >/dev/null
seed $G scheduled-profile 0.101 >/dev/null
"$SEED" sql "$work/p" "UPDATE sessions SET started_at = 'x' || char(27) || '[31mred' || char(10) || 'line',
	status = 'o' || char(7) || 'k', tier = 'sch' || char(27) || 'ed',
	curation = 'pend' || char(155) || 'x', parity = 'p' || char(27),
	computer = '<b>&amp;\"' || char(8238) || 'x' WHERE id = 2" || exit 1

check "sessions: exit 0"          test "$(rc_of "$B" sessions)" = 0
check "sessions: no raw byte"     no_raw "$work/out"
check "sessions: start shown"     grep -qF 'x\x1b[31mred\x0aline' "$work/out"
check "sessions: status shown"    grep -qF ' o\x07k ' "$work/out"
check "sessions: parity shown"    grep -qF ' p\x1b ' "$work/out"
# session: the summary's status, parity and cache, a run's phase and flags
"$SEED" sql "$work/p" "UPDATE sessions SET document = json_set(document, '\$.status', 'ok' || char(27) || '[2J',
	'\$.parity.kind', 'k' || char(27), '\$.cache', json_object('requested', 'c' || char(27), 'state', 'd' || char(7)))
	WHERE id = 2" "UPDATE runs SET record = json_set(record, '\$.phase', 'p' || char(27),
	'\$.flags', json_array('f' || char(27))) WHERE session_id = 2 AND ordinal = 1" || exit 1
check "session: exit 0"           test "$(rc_of "$B" session 2)" = 0
check "session: no raw byte"      no_raw "$work/out"
check "session: status shown"     grep -qF 'session 2: ok\x1b[2J (' "$work/out"
check "session: parity kind shown" grep -qF '(k\x1b)' "$work/out"
check "session: cache shown"      grep -qF 'c\x1b requested, got d\x07' "$work/out"
check "session: run shown"        grep -qE '^  1 +p\\x1b .* f\\x1b$' "$work/out"
check "history: exit 0"           test "$(rc_of "$B" history $G)" = 0
check "history: no raw byte"      no_raw "$work/out"
check "compare: no raw byte"      test "$(rc_of "$B" compare 2)$(no_raw "$work/out" && echo ok)" = 0ok
check "key: no raw byte"          test "$(rc_of "$B" key 2)$(no_raw "$work/out" && echo ok)" = 0ok

check "dashboard: exit 0"         test "$(rc_of "$B" dashboard --output site)" = 0
page=site/index.html
check "dashboard: no raw byte"    no_raw $page
check "dashboard: start shown"    grep -qF '<td>x\x1b[31mred\x0aline</td>' $page
check "dashboard: tier shown"     grep -qF '<td class="w">sch\x1bed</td>' $page
check "dashboard: curation shown" grep -qF '<td>pend\xc2\x9bx</td>' $page
check "dashboard: why shown"      grep -qF '<td>no: status o\x07k</td>' $page
check "dashboard: page is UTF-8"  iconv -f UTF-8 -t UTF-8 $page -o /dev/null
check "dashboard: marks whole"    grep -qF '<th>✓ Measured</th>' $page
check "dashboard: label whole"    grep -qF '</code> on Zürich ✓ 東京</p>' $page
check "dashboard: HTML escaped, bidi shown" grep -qF '&lt;b&gt;&amp;amp;&quot;\xe2\x80\xaex' $page

echo "$fails failed"
[ "$fails" = 0 ]
