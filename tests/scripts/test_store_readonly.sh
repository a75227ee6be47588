#!/usr/bin/env bash
# A store this user may read but not write (a shared store another user
# owns, a read-only copy): the verbs that only read it (sessions, session,
# history, compare, key, dashboard) work, whether its
# folder may be written or not, and make no -wal or -shm file beside it (one
# made by a reader is the reader's, and would stop the owner writing); a
# session still in the -wal is read through it (a -wal without its -shm is
# exit 4, saying what to do); the dashboard's default
# folder there is refused saying to choose another with --output; a verb
# that writes (accept)
# is exit 4 naming the store and what may not be written, and `run` is
# refused so before it runs anything (as it is for a store path that is a
# folder). Sessions are
# stored the way `benchgate run` stores them (tests/unit/test_seedtool.c),
# so nothing is measured. Root may write any file: as root, the readers run
# as nobody, and a mode without the others' write bit keeps them from
# writing; as another user the reader is the owner, so the owner's write
# bit goes too (and the owner's own writes come before). Needs jq, and the sqlite3 program for the old-schema and -wal
# cases (skipped without).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
seeded_setup
as=()
# the modes of a folder and a file that the reader may read, not write
dir_ro=555 file_ro=444
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || { echo "skipped: as root this test needs setpriv to read as nobody"; exit 0; }
	chmod a+rx "$work"
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	dir_ro=755 file_ro=644
fi
# the project, its sessions and the reader's output folder, all writable
# by the owner still (what a case changes as the owner comes before lock)
fresh() {
	chmod -R u+w "$work/p" 2>/dev/null
	rm -rf "$work/p" "$work/dash"
	cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
	for _ in 1 2 3; do seed $G release-signoff 0.100 experiment=1 >/dev/null; done
	mkdir "$work/dash"
	chmod -R a+rX "$work/p"
	chmod a+rwx "$work/dash"
}
# the store made read-only: $1 = the mode of .benchgate, $2 = the mode of the store (path: $3)
lock() {
	chmod "$1" "$work/p/.benchgate"
	chmod "$2" "$work/p/.benchgate/${3:-store.sqlite3}"
}
bg() { rc_of "${as[@]}" "$B" -C "$work/p" "$@"; }
nothing_beside() { ! ls "$work/p/.benchgate" | grep -q -- '-wal$\|-shm$'; }
reads() {
	local what=$1
	check "$what: sessions"          test "$(bg sessions)" = 0
	check "$what: three listed"      test "$(grep -c './bin/work' "$work/out")" = 3
	check "$what: session 2"         test "$(bg session 2)" = 0
	check "$what: history"           test "$(bg history $G)" = 0
	check "$what: history rows"      test "$(grep -c release-signoff "$work/out")" = 3
	check "$what: compare 3"         test "$(bg compare 3)" = 0
	check "$what: key 1"             test "$(bg key 1)" = 0
	check "$what: dashboard"         test "$(bg dashboard --output "$work/dash")" = 0
	check "$what: dashboard written" test -s "$work/dash/index.html"
	check "$what: no -wal or -shm"   nothing_beside
}

# ---- a store whose folder may not be written: the file read as it is
fresh
lock $dir_ro 444
reads "folder read-only"
check "folder read-only: accept exit 4"  test "$(bg accept 3 --why 'looks right')" = 4
check "folder read-only: names the file" grep -q "benchgate: .benchgate/store.sqlite3: cannot write the store: Permission denied (the file); run this as a user who may write the store" "$work/err"
# promote reads the store but keeps its lock and journal beside it: said so,
# the lock named from the project root
check "folder read-only: promote exit 4" test "$(bg promote 3)" = 4
check "folder read-only: promote says why" grep -q "benchgate: .benchgate/promote.lock: cannot lock: Permission denied; promote keeps its lock and journal in the store's folder: run it as a user who may write there" "$work/err"
# the dashboard's default folder is in the store's folder: a reader who may
# not write there is told to choose another, not to remove something
check "folder read-only: dashboard exit 4" test "$(bg dashboard)" = 4
check "folder read-only: dashboard, what to do" test "$(cat "$work/err")" = \
	"benchgate: .benchgate/dashboard: cannot create directory: Permission denied; choose another folder with --output"
chmod u+w "$work/p/.benchgate" && mkdir -m 555 "$work/p/.benchgate/dashboard" && chmod "$dir_ro" "$work/p/.benchgate"
check "folder read-only: dashboard folder there, exit 4" test "$(bg dashboard)" = 4
check "folder read-only: dashboard folder there, what to do" test "$(cat "$work/err")" = \
	"benchgate: .benchgate/dashboard/index.html: cannot write: Permission denied; to write the page elsewhere, use --output DIR"
chmod u+w "$work/p/.benchgate" && rmdir "$work/p/.benchgate/dashboard" && chmod "$dir_ro" "$work/p/.benchgate"
# the file writable, its folder not: SQLite could not make its -wal there
chmod 666 "$work/p/.benchgate/store.sqlite3"
reads "file writable, folder not"
check "file writable: accept exit 4"       test "$(bg accept 3 --why 'looks right')" = 4
check "file writable: names the folder" grep -q "cannot write the store: Permission denied (its folder '.benchgate', where SQLite keeps the -wal and -shm files)" "$work/err"

# ---- a store in a folder anyone may write: nothing made there all the same
fresh
lock 777 444
reads "folder writable"
check "folder writable: accept exit 4"     test "$(bg accept 3 --why 'looks right')" = 4
check "folder writable: says why"          grep -q "cannot write the store: Permission denied (the file)" "$work/err"
check "folder writable: still no -wal"     nothing_beside

# ---- a schema older than this benchgate's cannot be upgraded by a reader
fresh
if command -v sqlite3 >/dev/null; then
	sqlite3 "$work/p/.benchgate/store.sqlite3" "DELETE FROM schema_migrations WHERE version >= 2"
	lock $dir_ro $file_ro
	check "old schema: exit 4"       test "$(bg sessions)" = 4
	check "old schema: says so"      grep -q "store schema version 1 is older than this benchgate reads (2; it writes 4), and this user may not write the store to upgrade it" "$work/err"
	check "old schema: no -wal"      nothing_beside

	# ---- version 2 (before migration 3, which adds indexes only): read
	# as it is, without them, and left as it was
	fresh
	sqlite3 "$work/p/.benchgate/store.sqlite3" "DROP TABLE decision_notes; DROP INDEX sessions_gate_id;
		DROP INDEX sessions_baseline; DELETE FROM schema_migrations WHERE version >= 3"
	lock $dir_ro $file_ro
	reads "version 2"
	check "version 2: compare --last" test "$(bg compare --last $G)" = 0
	check "version 2: not upgraded"  test "$(sqlite3 -readonly "file:$work/p/.benchgate/store.sqlite3?immutable=1" \
		"SELECT max(version) FROM schema_migrations")" = 2

	# ---- version 3 (before migration 4, the table of decisions' notes):
	# the notes read from the decision documents instead, and left as it was
	fresh
	sqlite3 "$work/p/.benchgate/store.sqlite3" "DROP TABLE decision_notes; DELETE FROM schema_migrations WHERE version = 4;
		UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.conditions',
			json_array('smt off here, on in 2 of the 2 baseline sessions that record it')) WHERE id = 3;
		UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.conditions', json('[]')) WHERE id = 2"
	lock $dir_ro $file_ro
	reads "version 3"
	check "version 3: history notes"  test "$(bg history $G)" = 0
	check "version 3: under session 3" test "$(grep -A1 '^3 ' "$work/out" | tail -1)" = \
		"      note: smt off here, on in 2 of the 2 baseline sessions that record it"
	check "version 3: no other"       test "$(grep -c 'note:' "$work/out")" = 1
	check "version 3: dashboard notes" grep -q '<td colspan="10">note: smt off here' "$work/dash/index.html"
	check "version 3: not upgraded"  test "$(sqlite3 -readonly "file:$work/p/.benchgate/store.sqlite3?immutable=1" \
		"SELECT max(version) FROM schema_migrations")" = 3

	# ---- the owner's last session still in the -wal (another connection
	# kept it from being checkpointed): read through the -wal and -shm the
	# owner made, which the reader may not write
	fresh
	mkfifo "$work/fifo"
	sqlite3 -readonly "$work/p/.benchgate/store.sqlite3" <"$work/fifo" >/dev/null &
	holder=$!
	exec 7>"$work/fifo"
	echo "SELECT count(*) FROM sessions;" >&7
	sleep 0.5
	seed $G release-signoff 0.100 experiment=1 >/dev/null
	chmod a+r "$work/p/.benchgate/"*
	lock $dir_ro $file_ro
	check "wal: the -wal holds the session" test -s "$work/p/.benchgate/store.sqlite3-wal"
	check "wal: sessions"            test "$(bg sessions)" = 0
	check "wal: four listed"         test "$(grep -c './bin/work' "$work/out")" = 4
	check "wal: session 4"           test "$(bg session 4)" = 0
	exec 7>&-
	wait "$holder"
	# the -wal without its -shm (a copy that left out the -shm): SQLite
	# cannot read the -wal then, and reading the file alone would lose the
	# session in it; said so, with what to do
	chmod u+w "$work/p/.benchgate" && rm -f "$work/p/.benchgate/store.sqlite3-shm" && chmod "$dir_ro" "$work/p/.benchgate"
	check "wal without -shm: the -wal still there" test -s "$work/p/.benchgate/store.sqlite3-wal"
	check "wal without -shm: exit 4" test "$(bg sessions)" = 4
	check "wal without -shm: what to do" grep -qF "benchgate: .benchgate/store.sqlite3: cannot read the store: its -wal file holds sessions not yet in the store file, and its -shm file, through which they are read, is not there; run any verb that reads it" "$work/err"
else
	echo "skipped: the old schema and -wal cases need the sqlite3 program"
fi

# ---- an empty file read-only: benchgate makes a store whole (docs/measure.md),
# so one of 0 bytes was truncated: exit 4 as for a user who may write it, never
# "no sessions stored yet"
fresh
: >"$work/p/.benchgate/store.sqlite3"
lock $dir_ro $file_ro
check "empty store: exit 4"      test "$(bg sessions)" = 4
check "empty store: says what to do" grep -qF "benchgate: .benchgate/store.sqlite3: the store is an empty file (0 bytes): it was truncated" "$work/err"
check "empty store: still empty" test ! -s "$work/p/.benchgate/store.sqlite3"

# ---- a store path with bytes a SQLite URI reads ('?', '%', '#', a space)
fresh
mv "$work/p/.benchgate/store.sqlite3" "$work/p/.benchgate/a?b%41 #c.sqlite3"
jq '. + {store: "sqlite:.benchgate/a?b%41 #c.sqlite3"}' "$work/p/benchgate.json" >"$work/cfg" && cat "$work/cfg" >"$work/p/benchgate.json"
lock $dir_ro 444 "a?b%41 #c.sqlite3"
check "odd name: sessions"       test "$(bg sessions)" = 0
check "odd name: three listed"   test "$(grep -c './bin/work' "$work/out")" = 3

# ---- run: a store it may not write stops it before anything runs (no
# experiment reserved, no RUNS.md row), not after the session. Measured
# without a run cgroup (BENCHGATE_NO_CGROUP): nothing shared with other tests.
if command -v git >/dev/null; then
	chmod -R u+w "$work/p" 2>/dev/null
	rm -rf "$work/p"
	cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
	(cd "$work/p" && "$B" render >/dev/null && git init -q . && git add -A &&
		git -c user.email=t@t -c user.name=t commit -qm init) || exit 1
	export BENCHGATE_NO_CGROUP=1
	# the reader is not the repository's owner: git must still answer it
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
	check "run: the owner stores a session" test "$(rc_of "$B" -C "$work/p" run -q --no-repeat life.ok)" = 0
	chmod -R a+rwX "$work/p"
	chmod 444 "$work/p/.benchgate/store.sqlite3"
	ls "$work/p/experiments" >"$work/exps.before"
	cp "$work/p/experiments/RUNS.md" "$work/runs.before"
	# HOME: nobody's is not there
	check "run: refused, exit 4"     test "$(HOME="$work" bg run -q --no-repeat life.ok)" = 4
	check "run: names the store"     grep -q "benchgate: .benchgate/store.sqlite3: cannot write the store: Permission denied (the file)" "$work/err"
	check "run: no experiment made"  bash -c "ls '$work/p/experiments' | cmp -s - '$work/exps.before'"
	check "run: RUNS.md unchanged"   cmp -s "$work/p/experiments/RUNS.md" "$work/runs.before"
	# a store path that no writer can open (a folder there) stops it as early
	chmod 755 "$work/p/.benchgate"
	rm -f "$work/p/.benchgate/store.sqlite3"*
	mkdir "$work/p/.benchgate/store.sqlite3"
	check "run: a folder for the store, exit 4" test "$(rc_of "$B" -C "$work/p" run -q --no-repeat life.ok)" = 4
	check "run: says it is not a file" grep -q "benchgate: .benchgate/store.sqlite3: cannot open the store: a folder, not a file; name a file in 'store' of benchgate.json" "$work/err"
	check "run: still no experiment"   bash -c "ls '$work/p/experiments' | cmp -s - '$work/exps.before'"
	check "run: RUNS.md still unchanged" cmp -s "$work/p/experiments/RUNS.md" "$work/runs.before"
	# a store that cannot be opened (not a database) stops it as early: the
	# runbook ran whole before the store was opened
	rmdir "$work/p/.benchgate/store.sqlite3"
	echo 'not a database' >"$work/p/.benchgate/store.sqlite3"
	check "run: a store not a database, exit 4" test "$(rc_of "$B" -C "$work/p" run -q --no-repeat life.ok)" = 4
	check "... named, before anything ran" sh -c "grep -q '^benchgate: .benchgate/store.sqlite3: ' '$work/err' && ! grep -q 'what was measured is kept' '$work/err'"
	check "... no experiment"         bash -c "ls '$work/p/experiments' | cmp -s - '$work/exps.before'"
	check "... RUNS.md unchanged"     cmp -s "$work/p/experiments/RUNS.md" "$work/runs.before"
else
	echo "skipped: the run case needs git"
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
