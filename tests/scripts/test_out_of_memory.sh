#!/usr/bin/env bash
# Memory that runs out while benchgate reads the store is exit 4 saying
# "out of memory", whatever the limit: never a crash, and never a store
# called corrupted (which tells a person to restore a backup). The store
# holds a session whose command is 40 MB of JSON, read through jansson,
# under address-space limits from 50 to 170 MB. jansson 2.14 crashed in its
# lexer, or called the JSON invalid, when one of its allocations failed;
# benchgate now gives jansson its own allocator, which stops the program
# with that message. Skipped under AddressSanitizer (which cannot run under
# an address-space limit).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
seeded_setup
if ldd "$B" 2>/dev/null | grep -q libasan; then
	echo "skipped: an address-space limit and AddressSanitizer do not mix"
	exit 0
fi
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1
s=$(seed $G scheduled-profile 0.100)
"$SEED" sql "$work/p" \
	"UPDATE sessions SET command = '[\"' || replace(hex(zeroblob(20000000)), '0', 'a') || '\"]' WHERE id = $s" || exit 1
check "the whole command is read without a limit" test "$(rc_of "$B" sessions)" = 0
check "...and listed"                             grep -q "^$s .* aaaaaaaa" "$work/out"
for kib in 50000 70000 90000 100000 110000 120000 140000 170000; do
	check "limit $kib KiB: exit 4" \
		test "$(rc_of sh -c "ulimit -v $kib; exec \"\$0\" sessions" "$B")" = 4
	check "limit $kib KiB: out of memory" \
		grep -q "^benchgate: out of memory (allocating [0-9]* bytes)$" "$work/err"
	check "limit $kib KiB: not called corrupted" \
		test "$(grep -c "corrupted\|backup" "$work/err")" = 0
done

echo "$fails failure(s)"
[ "$fails" = 0 ]
