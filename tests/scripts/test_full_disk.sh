#!/usr/bin/env bash
# A file system that is full. The store: storing a session is exit 4 saying
# the file system is full and to free space (after printing what was
# measured, without a session id), as is opening the store where SQLite's
# -shm file cannot grow; neither says the store may be corrupted; once space
# is freed, the store reads and stores as before. `promote` with little
# room: promoted, or exit 4 naming a project-relative file with no file of
# the project changed. `run`: with no room at all it stops as it opens the
# store, before any lease or experiment (the file system named full); a
# manifest that cannot be written leaves no experiment folder behind; a session that cannot be stored, on an experiment that cannot be
# marked failed either, says that it stays running and how to abandon it,
# which works once space is freed. The file system is an 8 MiB tmpfs
# mounted in a mount namespace of the test's own (unshare), so nothing is
# mounted on the machine; skipped where unshare cannot make one. Needs git
# and jq.
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
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
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

# promote, with less and less room: it promotes, or it is exit 4 naming a
# project-relative file, with no file of the project changed
for kib in 0 16 32 40 48 56 64 96; do
	rm -rf "$work/fs/q" "$work/fs/filler"
	cp -R "$BENCHGATE_SOURCE/tests/cli/trees/mini" "$work/fs/q"
	sq=$("$SEED" seed "$work/fs/q" $G release-signoff 0.100 experiment=1 | cut -d' ' -f1)
	(cd "$work/fs/q" && find . -path ./.benchgate -prune -o -type f -exec sha256sum {} + | sort) >"$work/before"
	fill $kib
	rc=$(rc_of "$B" -C "$work/fs/q" promote "$sq")
	rm -f "$work/fs/filler"
	(cd "$work/fs/q" && find . -path ./.benchgate -prune -o -type f -exec sha256sum {} + | sort) >"$work/after"
	if [ "$rc" = 0 ]; then
		check "promote leaving $kib KiB: promoted" grep -q "^promoted as measured" "$work/out"
	else
		check "promote leaving $kib KiB: exit 4" test "$rc" = 4
		check "promote leaving $kib KiB: no space said" grep -q "No space left on device" "$work/err"
		check "promote leaving $kib KiB: no absolute path" test "$(grep -c "$work" "$work/err")" = 0
		check "promote leaving $kib KiB: nothing changed" cmp -s "$work/before" "$work/after"
	fi
	check "promote leaving $kib KiB: validates" test "$(rc_of "$B" -C "$work/fs/q" validate)" = 0
done

# run, on the lifecycle tree (a committed project)
rm -f "$work/fs/filler"
cp -R "$BENCHGATE_SOURCE/tests/cli/trees/lifecycle" "$work/fs/life"
cd "$work/fs/life" || exit 1
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "run with room: exit 0"          test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
# no room at all: the store is opened first (SQLite's -wal and -shm), so
# the run stops before it takes a lease or makes an experiment
fill 0
check "no room at all: exit 4"         test "$(rc_of "$B" run -q --no-repeat life.ok)" = 4
check "no room at all: said"           grep -qF ".benchgate/store.sqlite3: cannot read the schema: disk I/O error (No space left on device): the file system that holds the store is full; free some space there and run it again" "$work/err"
rc_of "$B" lease status >/dev/null
check "no room at all: the lease free" grep -q "^test-host  *free$" "$work/out"
check "no room at all: no experiment"  test "$(ls experiments | grep -c "^2")" = 1
# the store and its state (the leases) on another file system, the
# experiments on this one: the lease is taken, the manifest cannot be
# written, and no folder is left
rm -f "$work/fs/filler"
mkdir -p "$work/elsewhere"
cp benchgate.json "$work/config.kept"
jq --arg s "sqlite:$work/elsewhere/store.sqlite3" '.store = $s' "$work/config.kept" >benchgate.json
fill 0
check "no room for the manifest: exit 4" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 4
check "no room for the manifest: said" grep -q "/manifest.json: cannot write: No space left on device$" "$work/err"
check "no room for the manifest: no folder left" test "$(ls experiments | grep -c "^2")" = 1
rc_of "$B" lease status >/dev/null
check "no room for the manifest: the lease free" grep -q "^test-host  *free$" "$work/out"
rm -f "$work/fs/filler"
cp "$work/config.kept" benchgate.json
fill 40
check "no room to store: exit 4"       test "$(rc_of "$B" run -q --no-repeat life.ok)" = 4
id=$(grep -o "abandon [^ ]* --why" "$work/err" | cut -d' ' -f2)
check "no room to store: the store full" grep -qF "cannot store the session: database or disk is full (No space left on device): $full" "$work/err"
check "no room to store: not marked failed" grep -qF "; experiment $id could not be marked failed either (experiments/$id/error.json: cannot write: No space left on device), and what was measured is not kept: it stays 'running' until you abandon it ('benchgate experiments abandon $id --why TEXT')" "$work/err"
rm -f "$work/fs/filler"
check "space freed: abandon it"        test "$(rc_of "$B" experiments abandon "$id" --why "the disk was full")" = 0
check "space freed: it is abandoned"   test "$(jq -r '.status + " " + .failure_reason' "experiments/$id/manifest.json")" = "failed abandoned: the disk was full"

echo "$fails failure(s)"
[ "$fails" = 0 ]
