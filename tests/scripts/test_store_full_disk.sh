#!/usr/bin/env bash
# A store on a file system that is full: storing a session is exit 4 saying
# the file system is full and to free space (after printing what was
# measured, without a session id), as is opening the store where SQLite's
# -shm file cannot grow; neither says the store may be corrupted. Once space
# is freed, the store reads and stores as before. The file system is an
# 8 MiB tmpfs mounted in a mount namespace of the test's own (unshare), so
# nothing is mounted on the machine; skipped where unshare cannot make one.
set -u
if [ -z "${BG_TEST_IN_NAMESPACE:-}" ]; then
	if ! unshare --mount --propagation private true 2>/dev/null; then
		echo "skipped: unshare cannot make a mount namespace here (it needs root)"
		exit 0
	fi
	exec unshare --mount --propagation private env BG_TEST_IN_NAMESPACE=1 bash "$0" "$@"
fi
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
seeded_setup
mkdir "$work/fs"
mount -t tmpfs -o size=8m tmpfs "$work/fs" || { echo "cannot mount a tmpfs in the namespace"; exit 1; }
trap 'cd / && umount "$work/fs"; rm -rf "$work"' EXIT
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/fs/p"
cd "$work/fs/p" || exit 1
s=$("$SEED" seed "$work/fs/p" $G scheduled-profile 0.100 | cut -d' ' -f1)
check "a session stored before" test -n "$s"
# fill the file system, leaving room to leave KIB KiB free
fill() {
	rm -f "$work/fs/filler"
	local avail
	avail=$(df -k --output=avail "$work/fs" | tail -n 1)
	dd if=/dev/zero of="$work/fs/filler" bs=1k count=$((avail - $1)) 2>/dev/null
}
full="the file system that holds the store is full; free some space there and run it again"

# room to open the store (its -shm), not to store a session
fill 40
check "no room to store: exit 4"      test "$(rc_of "$B" measure -w 0 -r 2 -- true)" = 4
check "no room to store: said"        grep -qF "cannot store the session: database or disk is full (No space left on device): $full" "$work/err"
check "no room to store: measured"    grep -q "^session: ok (1 smoke, 0 warmup, 2 timed runs)" "$work/out"
check "no room to store: not blamed on the store" test "$(grep -c "corrupted\|writable" "$work/err")" = 0

# no room at all: SQLite's -shm file cannot grow, even to read
fill 0
for v in sessions "session $s" "measure -q -w 0 -r 1 -- true"; do
	check "full: $v exit 4"            test "$(rc_of "$B" $v)" = 4
	check "full: $v said"              grep -qF "(No space left on device): $full" "$work/err"
done

# space freed: as before
rm -f "$work/fs/filler"
check "space freed: sessions"         test "$(rc_of "$B" sessions)" = 0
check "space freed: one session"      test "$(grep -c "^[0-9]" "$work/out")" = 1
check "space freed: stores again"     test "$(rc_of "$B" measure -q -w 0 -r 2 -- true)" = 0
rc_of "$B" sessions >/dev/null
check "space freed: two sessions"     test "$(grep -c "^[0-9]" "$work/out")" = 2

echo "$fails failure(s)"
[ "$fails" = 0 ]
