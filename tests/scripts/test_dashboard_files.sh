#!/usr/bin/env bash
# Where `benchgate dashboard` writes and what a failure leaves: a project
# folder whose name is not UTF-8 still gets its page; a page that cannot be
# written (the file size limit, with SIGXFSZ ignored) is exit 4 with the
# page's path in the message, and leaves neither a temporary file nor the
# folders made for it; a folder that cannot be made (a file or a dangling
# link in its way) is exit 4, named relative to the project root with what
# to do; --output is tidied ("./x//y/" is x/y).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

odd=$(printf 'proj\377')
cp -R "$SRC/tests/cli/trees/mini" "$odd"
check "a project folder named in Latin-1: exit 0" test "$(rc_of "$B" -C "$odd" dashboard)" = 0
check "a project folder named in Latin-1: the page written" test -s "$odd/.benchgate/dashboard/index.html"

cp -R "$SRC/tests/cli/trees/mini" p
# the reference for "nothing else left": newer than every copied file,
# whatever order cp copied them in
touch p/benchgate.json
# stderr through a pipe: the size limit would stop a write to a file too
(cd p && bash -c "trap '' XFSZ; ulimit -f 0; exec '$B' dashboard --output new/a/b" 2>&1) | cat >"$work/err"
rc=${PIPESTATUS[0]}
check "a page that cannot be written: exit 4" test "$rc" = 4
check "a page that cannot be written: its path named" \
	grep -qF "benchgate: new/a/b/index.html: cannot write: File too large" "$work/err"
check "a page that cannot be written: no folder left" test ! -e p/new
check "a page that cannot be written: nothing else left" \
	test "$(cd p && find . -newer benchgate.json -not -path './.benchgate*' | grep -v '^\.$' | wc -l)" = 0

check "a folder that cannot be made: exit 4" test "$(rc_of "$B" -C p dashboard --output benchgate.json/sub)" = 4
check "a folder that cannot be made: named from the root, with what to do" \
	test "$(cat "$work/err")" = "benchgate: benchgate.json/sub: cannot create directory: Not a directory; choose another --output"
ln -s nowhere p/dangling
check "a dangling link as the folder: exit 4" test "$(rc_of "$B" -C p dashboard --output dangling)" = 4
check "a dangling link as the folder: said so, in the kernel's words" \
	test "$(cat "$work/err")" = "benchgate: dangling: cannot create directory: Not a directory (a symbolic link to nothing); choose another --output"
mkdir p/docs/sub
check "a folder that cannot be made, from a subfolder: named from the root" \
	test "$(cd p/docs/sub && rc_of "$B" dashboard --output benchgate.json/x/y)" = 4
check "... the root's name for it" grep -qxF "benchgate: benchgate.json/x: cannot create directory: Not a directory; choose another --output" "$work/err"
mkdir -p p/.benchgate && touch p/.benchgate/dashboard
check "the default folder that cannot be made: exit 4" test "$(rc_of "$B" -C p dashboard)" = 4
check "the default folder that cannot be made: what to do" test "$(cat "$work/err")" = \
	"benchgate: .benchgate/dashboard: cannot create directory: Not a directory; remove what is in its way, or choose another folder with --output"
rm -f p/.benchgate/dashboard
check "--output ./x//y/: the path shown tidied" test "$("$B" -C p dashboard --output ./x//y/)" = x/y/index.html
check "--output ./x//y/: written there" test -s p/x/y/index.html
check "--output .: the root's index.html" test "$("$B" -C p dashboard --output .)" = index.html

# a folder refused past a "..": none of the folders made for it left, and
# never one that was there (experiments/new would read as an experiment
# killed as it was created; keep, empty, was removed in its place)
mkdir p/own && echo '<html>own</html>' >p/own/index.html
check "--output experiments/new/../../own, another's page: exit 2" \
	test "$(rc_of "$B" -C p dashboard --output experiments/new/../../own)" = 2
check "... experiments/new not left" test ! -e p/experiments/new
check "... the page kept" grep -qx '<html>own</html>' p/own/index.html
mkdir p/keep p/keep/index.html p/keep/index.html/x
check "--output new/../keep, a folder in the page's place: exit 4" \
	test "$(rc_of "$B" -C p dashboard --output new/../keep)" = 4
check "... new not left, keep kept" test ! -e p/new -a -d p/keep/index.html/x

# a store kept at the project root shares its folder with the project:
# only benchgate's leases and promotion journal are refused there
cp -R "$SRC/tests/cli/trees/mini" rootstore
jq '.store = "sqlite:bench.sqlite3"' rootstore/benchgate.json >rootstore/b.json && mv rootstore/b.json rootstore/benchgate.json
check "store at the root, --output site: written" test "$("$B" -C rootstore dashboard --output site)" = site/index.html
check "store at the root, --output leases/x: exit 2" test "$(rc_of "$B" -C rootstore dashboard --output leases/x)" = 2
check "... said" test "$(cat "$work/err")" = \
	"benchgate: leases/x is benchgate's leases folder or inside it (beside its store): choose another --output"
check "store at the root, --output promote-journal: exit 2" \
	test "$(rc_of "$B" -C rootstore dashboard --output promote-journal)" = 2
check "... nothing made" test ! -e rootstore/leases -a ! -e rootstore/promote-journal

# a page that cannot be read is not replaced: whose it is cannot be told
as=()
if [ "$(id -u)" = 0 ]; then
	chmod a+x "$work" && chmod -R a+rwX p
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
chmod 000 p/own/index.html
check "an unreadable index.html: exit 2" test "$(rc_of "${as[@]}" "$B" -C p dashboard --output own)" = 2
check "... said, with what to do" test "$(cat "$work/err")" = \
	"benchgate: own/index.html is there and cannot be read (Permission denied), so it cannot be told whether benchgate wrote it; the dashboard never replaces another file: remove it, or choose another --output"
chmod 644 p/own/index.html
check "... the page kept" grep -qx '<html>own</html>' p/own/index.html

echo "$fails failed"
[ "$fails" = 0 ]
