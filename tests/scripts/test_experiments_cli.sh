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
