#!/usr/bin/env bash
# The store file another program's SQLite database, a store reached
# through a symbolic link, a store name at the system's limit:
# - a database with a table schema_migrations that is not benchgate's
#   (golang-migrate's, Rails', with a timestamp for a version) is refused,
#   exit 4, by a verb that reads and one that writes, and left byte for
#   byte as it was (no WAL mode, no benchgate table); so is one whose only
#   table's name looks like SQLite's own (SQLiteCache);
# - benchgate's own store with a table dropped (runs, curations,
#   decision_notes) is said to be a damaged benchgate store, naming it;
# - a database with no table at all is no store yet to a verb that reads it
#   (left as it is) and becomes one for a verb that writes;
# - through a link, a reader who may not write reads the sessions still in
#   the owner's -wal beside the file the link leads to, and one who may
#   write the file but not the folder the link leads to is told so;
# - a store name too long for the temporary name it is made under is
#   refused, saying the most it may be.
# Needs python3 (its sqlite3 module); the link cases as root need setpriv.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v python3 >/dev/null || { echo "skipped: this test needs python3"; exit 0; }
export BENCHGATE_NO_CGROUP=1
scratch
sql() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()' "$@"; }
mode() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("pragma journal_mode").fetchone()[0])' "$1"; }

fresh() { # NAME SQL: a project whose store is a database made by SQL
	rm -rf "$1" && mkdir -p "$1/.benchgate" && echo '{}' >"$1/benchgate.json"
	sql "$1/.benchgate/store.sqlite3" "$2"
	cp "$1/.benchgate/store.sqlite3" "$1.orig"
}
unchanged() { cmp -s "$1/.benchgate/store.sqlite3" "$1.orig" && [ "$(mode "$1/.benchgate/store.sqlite3")" = delete ] &&
	[ ! -e "$1/.benchgate/store.sqlite3-wal" ]; }

fresh g "CREATE TABLE schema_migrations (version uint64, dirty bool); INSERT INTO schema_migrations VALUES (1, 0);
	CREATE TABLE sessions (id INTEGER PRIMARY KEY, token TEXT NOT NULL);"
check "migration tool's table: sessions refused (exit 4)" test "$(rc_of "$B" -C g sessions)" = 4
check "migration tool's table: said" grep -qF "not a benchgate store (a table 'schema_migrations' of another program's" "$work/err"
check "migration tool's table: measure refused (exit 4)" test "$(rc_of "$B" -C g measure -q -r 1 -w 0 -- true)" = 4
check "migration tool's table: left as it was" unchanged g
fresh t "CREATE TABLE schema_migrations (version varchar PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20230101120000');"
check "timestamp version: refused as another program's" test "$(rc_of "$B" -C t sessions)" = 4
check "timestamp version: not 'upgrade benchgate'" grep -qF "not a benchgate store" "$work/err"
check "timestamp version: left as it was" unchanged t
fresh c "CREATE TABLE SQLiteCache (k TEXT PRIMARY KEY, v BLOB);"
check "a table named SQLite...: refused (exit 4)" test "$(rc_of "$B" -C c sessions)" = 4
check "a table named SQLite...: left as it was" unchanged c
fresh e "pragma user_version = 7;"
check "no table: no sessions yet (exit 0)" test "$(rc_of "$B" -C e sessions)" = 0
check "no table: a reader leaves it as it was" unchanged e
check "no table: measure makes it a store" test "$(rc_of "$B" -C e measure -q -r 1 -w 0 -- true)" = 0
check "no table: the session is stored" jqe 'length == 1' <("$B" -C e sessions --json)

# benchgate's own store with a table dropped: said to be damaged, naming
# the table, not another program's (nor a bare SQL error later)
mkdir -p d && echo '{}' >d/benchgate.json
check "damaged: a session stored" test "$(rc_of "$B" -C d measure -q -r 1 -w 0 -- true)" = 0
cp d/.benchgate/store.sqlite3 d.orig
for t in runs curations decision_notes; do
	cp d.orig d/.benchgate/store.sqlite3 && rm -f d/.benchgate/store.sqlite3-*
	sql d/.benchgate/store.sqlite3 "DROP TABLE $t;"
	check "damaged, no $t: sessions refused (exit 4)" test "$(rc_of "$B" -C d sessions)" = 4
	check "damaged, no $t: said" grep -qF "a damaged benchgate store: its table '$t' is missing" "$work/err"
	check "damaged, no $t: measure refused (exit 4)" test "$(rc_of "$B" -C d measure -q -r 1 -w 0 -- true)" = 4
done
# another program's schema_migrations of benchgate's very shape, with no
# table of benchgate's whole (its own sessions): not called damaged
fresh h "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT);
	INSERT INTO schema_migrations VALUES (1, 'x'), (2, 'y');
	CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
	CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER, expires_at TEXT);"
check "benchgate's shape, another program's tables: refused (exit 4)" test "$(rc_of "$B" -C h sessions)" = 4
check "... said to be another program's" grep -qF "not a benchgate store" "$work/err"
check "... left as it was" unchanged h
# a newer benchgate's store without a table this one's migrations made: newer, not damaged
cp d.orig d/.benchgate/store.sqlite3 && rm -f d/.benchgate/store.sqlite3-*
sql d/.benchgate/store.sqlite3 "DROP TABLE decision_notes; INSERT INTO schema_migrations VALUES (5, '2099-01-01T00:00:00Z');"
check "newer, a table gone: refused (exit 4)" test "$(rc_of "$B" -C d sessions)" = 4
check "... said to be newer" grep -qF "store schema version 5 is newer than this benchgate knows" "$work/err"

# a store file name too long to be made beside its temporary name: said
# so, with the most it may be (one of that length is made)
mkdir -p n && long=$(printf 's%.0s' $(seq 240))
printf '{"store": "sqlite:%s"}\n' "$long" >n/benchgate.json
check "a long store name: measure refused (exit 4)" test "$(rc_of "$B" -C n measure -q -r 1 -w 0 -- true)" = 4
check "a long store name: the most said" grep -qF "its file name is 240 bytes" "$work/err"
printf '{"store": "sqlite:%s"}\n' "${long:0:232}" >n/benchgate.json
check "a store name of the most: made" test "$(rc_of "$B" -C n measure -q -r 1 -w 0 -- true)" = 0

# through a link, as a reader who may not write
as=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null || { echo "skipped the link cases: as root they need setpriv"; exit $((fails > 0)); }
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups env BENCHGATE_MACHINE_LOCK="$work/nobody.lock")
	chmod 755 "$work"
fi
mkdir -p shared l/.benchgate && echo '{}' >l/benchgate.json
check "link: a session stored" test "$(rc_of "$B" -C l measure -q -r 1 -w 0 -- true)" = 0
mv l/.benchgate/store.sqlite3 shared/
ln -s "$work/shared/store.sqlite3" l/.benchgate/store.sqlite3
# a writer's session still in the -wal (a writer killed, or one still at work)
python3 -c 'import sqlite3, sys, os
c = sqlite3.connect(sys.argv[1]); c.execute("pragma wal_autocheckpoint=0")
c.execute("insert into sessions (started_at, kind, status, command, timed_runs, document) select started_at, kind, status, command, timed_runs, document from sessions where id = 1")
c.commit(); os._exit(0)' "$work/shared/store.sqlite3"
check "link: the -wal holds a session" test -s shared/store.sqlite3-wal
if [ ${#as[@]} -gt 0 ]; then
	chmod -R a+rX "$work"
	chmod 755 shared && chmod 644 shared/store.sqlite3*
	check "link, reader: sessions (exit 0)" test "$(rc_of "${as[@]}" "$B" -C l sessions --json)" = 0
	check "link, reader: the session in the -wal too" jqe 'length == 2' "$work/out"
	# the file writable, the folder it lies in not: told so, as without a link
	chmod 666 shared/store.sqlite3 && chmod -R a+rwX l
	check "link, file writable, folder not: measure refused (exit 4)" \
		test "$(rc_of "${as[@]}" "$B" -C l measure -q -r 1 -w 0 -- true)" = 4
	check "link, file writable, folder not: the folder named" grep -qF "its folder '" "$work/err"
	check "link, file writable, folder not: sessions read (exit 0)" \
		test "$(rc_of "${as[@]}" "$B" -C l sessions --json)" = 0
fi
exit $((fails > 0))
