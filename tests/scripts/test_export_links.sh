#!/usr/bin/env bash
# measure --export-jsonl through a symbolic link: the atomic writer writes
# the file the link leads to (its temporary file beside that one), so the
# check made before measuring (export_check) looks there too: a link to
# nothing is exit 4 before anything runs or is stored, never after; a link
# to a file in another folder writes that file, its permissions kept, the
# link kept; a link into a folder this user may not write (not as root) is
# refused before measuring. Measured with BENCHGATE_NO_CGROUP set (no run
# cgroup: nothing shared with other tests). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
seeded_setup
export BENCHGATE_NO_CGROUP=1
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1
stored() { "$B" sessions --json 2>/dev/null | jq length; }

# ---- a link to nothing: refused before the command runs
ln -s nowhere/runs.jsonl dangling.jsonl
check "dangling: exit 4"        test "$(rc_of "$B" measure -q -r 1 -w 0 --export-jsonl dangling.jsonl -- touch ran)" = 4
check "dangling: said"          grep -qF "dangling.jsonl: cannot write: it is a symbolic link to nothing; make it lead to a file, or remove it" "$work/err"
check "dangling: nothing ran"   test ! -e ran
check "dangling: nothing stored" test "$(stored)" = 0
check "dangling: link kept"     test -L dangling.jsonl

# ---- the machine lease's lock file, also through a link: refused before
# measuring (exit 2), as render --output refuses a lease
: >"$work/machine.lock"
ln -s "$work/machine.lock" lease-link.jsonl
check "machine lease: exit 2"   test "$(BENCHGATE_MACHINE_LOCK="$work/machine.lock" rc_of "$B" measure -q -r 1 -w 0 --export-jsonl lease-link.jsonl -- touch ran)" = 2
check "machine lease: said"     grep -qF "argument --export-jsonl: 'lease-link.jsonl' is the machine lease; choose another file" "$work/err"
check "machine lease: nothing ran" test ! -e ran
check "machine lease: kept"     test ! -s "$work/machine.lock"
rm lease-link.jsonl

# ---- benchgate's own files by their names, there or not yet: a link to
# nothing that leads to the store's -journal, the store before the first
# session made it, the locks of RUNS.md and of promotions (a lock replaced
# by a new file locks nothing); exit 2 before anything runs
ln -s "$work/p/.benchgate/store.sqlite3-journal" journal-link.jsonl
for e in journal-link.jsonl .benchgate/store.sqlite3 .benchgate/runs-index.lock .benchgate/promote.lock; do
	check "own file '$e': exit 2" test "$(rc_of "$B" measure -q -r 1 -w 0 --export-jsonl "$e" -- touch ran)" = 2
	check "... nothing ran"     test ! -e ran
done
check "... said"                grep -qF "argument --export-jsonl: '.benchgate/promote.lock' is the lock of promotions; choose another file" "$work/err"
check "... no store made"       test ! -e .benchgate
rm journal-link.jsonl

# ---- a benchgate.json that benchgate would read from here: in a folder
# of a project without one, one written in a folder above made every later
# verb read it as its configuration
mkdir -p "$work/noconf/sub" && (cd "$work/noconf" && git init -q)
(cd "$work/noconf/sub" && exec "$B" measure -q -r 1 -w 0 --export-jsonl ../benchgate.json -- touch ran) >"$work/out" 2>"$work/err"
check "config above: exit 2"    test "$?" = 2
check "config above: said"      grep -qF "'../benchgate.json' is a benchgate.json that benchgate would read from here" "$work/err"
check "config above: not made"  test ! -e "$work/noconf/benchgate.json"
rm -rf "$work/noconf"

# ---- a file an --output pattern matches, however spelled: refused before
# measuring (./o/r.txt, olink/r.txt and an absolute name replaced the
# output the session had just proved with the export)
mkdir o && ln -s o olink
for e in o/r.txt ./o/r.txt olink/r.txt "$work/p/o//r.txt"; do
	check "output '$e': exit 2" test "$(rc_of "$B" measure -q -r 1 -w 0 --output 'o/*.txt' --export-jsonl "$e" -- sh -c 'echo data >o/r.txt; touch ran')" = 2
	check "... nothing ran"     test ! -e ran
done
check "... said"                grep -qF "is a file --output names" "$work/err"
rm -rf o olink

# ---- a link to a file in another folder: that file written, the link kept
mkdir elsewhere
echo old >elsewhere/runs.jsonl
chmod 600 elsewhere/runs.jsonl
ln -s elsewhere/runs.jsonl linked.jsonl
check "linked: exit 0"          test "$(rc_of "$B" measure -q -r 1 -w 0 --export-jsonl linked.jsonl -- true)" = 0
check "linked: link kept"       test -L linked.jsonl
check "linked: target written"  jqe -s 'length >= 1 and all(.[]; .session_id == 1)' elsewhere/runs.jsonl
check "linked: mode kept"       test "$(stat -c %a elsewhere/runs.jsonl)" = 600
check "linked: no temporary"    test -z "$(ls elsewhere | grep -v '^runs.jsonl$')"

# ---- a link into a folder this user may not write: refused before measuring
if [ "$(id -u)" != 0 ]; then
	mkdir ro
	echo old >ro/runs.jsonl
	chmod 555 ro
	ln -s ro/runs.jsonl into-ro.jsonl
	n0=$(stored)
	check "read-only: exit 4"       test "$(rc_of "$B" measure -q -r 1 -w 0 --export-jsonl into-ro.jsonl -- touch ran)" = 4
	check "read-only: names its folder" grep -qF "'into-ro.jsonl': cannot write the runs: its folder '$(cd "$work/p/ro" && pwd -P)' cannot be written to" "$work/err"
	check "read-only: nothing ran"  test ! -e ran
	check "read-only: nothing stored" test "$(stored)" = "$n0"
else
	echo "skipped: as root every folder may be written (the read-only case)"
fi

echo "$fails failure(s)"
[ "$fails" = 0 ]
