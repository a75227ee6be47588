#!/usr/bin/env bash
# A store removed while a session runs: measure says the session is not
# stored (exit 4, what was measured printed) instead of storing it into
# the removed file, reporting it stored, and giving its id again to the
# next session in a new store.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$SRC/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1
check "a first session stored" test "$(rc_of "$B" measure -q -w 0 -r 1 -- true)" = 0
# the run waits for the store's removal
"$B" measure -q -w 0 -r 1 -- sh -c 'while [ -e .benchgate/store.sqlite3 ]; do sleep 0.01; done' >"$work/o" 2>"$work/e" &
pid=$!
for _ in $(seq 500); do [ -e .benchgate/store.sqlite3-wal ] && break; sleep 0.01; done
sleep 0.2
rm -f .benchgate/store.sqlite3 .benchgate/store.sqlite3-wal .benchgate/store.sqlite3-shm
wait "$pid"
check "store removed meanwhile: exit 4" test $? = 4
check "... said, the session not stored" grep -qF "benchgate: .benchgate/store.sqlite3: the store was removed or replaced after it was opened; the session is not stored in it: put the store back (or keep the new one) and run again; what was measured is printed above, without a session id" "$work/e"
check "... what was measured printed" grep -q "^session: ok" "$work/o"
[ "$fails" = 0 ]
