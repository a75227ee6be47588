#!/usr/bin/env bash
# libcrypto and SQLite are loaded when first needed (src/core/dynlib.h), not
# linked: the program names neither as NEEDED, validate works without them,
# and a library that cannot be loaded gives an error naming it and the
# Debian package, before anything is measured or written. A file that is
# not a shared object, first on LD_LIBRARY_PATH, stands in for a broken or
# missing library. Needs readelf (binutils) and jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
S=${BENCHGATE_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# neither as a shared library the loader maps at start-up, nor linked in
needed=$(readelf -d "$B" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
nm "$B" >"$work/syms" 2>/dev/null
check "libcrypto not linked" bash -c "! grep -q libcrypto <<<'$needed'"
check "SQLite not linked"    bash -c "! grep -q libsqlite3 <<<'$needed'"
check "no libcrypto code (its start-up hook)" bash -c "! grep -qw OPENSSL_cpuid_setup '$work/syms'"
check "no SQLite code"       bash -c "! grep -qw sqlite3_open_v2 '$work/syms'"

mkdir broken-sqlite broken-crypto
: >broken-sqlite/libsqlite3.so.0
: >broken-crypto/libcrypto.so.3
cp -R "$S/tests/cli/trees/mini" proj && chmod -R u+w proj
cd proj || exit 1
printf 'out\n' >out.txt
sha=$(sha256sum out.txt | cut -c1-64)

# a verb that neither hashes nor stores needs neither library
check "validate without either library" env LD_LIBRARY_PATH="$work/broken-sqlite:$work/broken-crypto" "$B" validate

# no store: exit 4 before any run, nothing written
check "broken SQLite: exit 4" test "$(LD_LIBRARY_PATH="$work/broken-sqlite" rc_of "$B" measure -q -r 1 -- touch ran)" = 4
check "names the library and the package" grep -q "benchgate: cannot load libsqlite3.so.0: .*; install Debian's libsqlite3-0" "$work/err"
check "nothing ran" test ! -e ran
check "no store created" test ! -e .benchgate/store.sqlite3

# no libcrypto: outputs cannot be hashed, so nothing runs (exit 4) and nothing is stored
check "broken libcrypto: exit 4" test "$(LD_LIBRARY_PATH="$work/broken-crypto" rc_of "$B" measure -q -r 1 --output out.txt --parity "sha256:$sha" -- touch ran)" = 4
check "names libcrypto and the package" grep -q "benchgate: cannot load libcrypto.so.3: .*; install Debian's libssl3" "$work/err"
check "nothing ran" test ! -e ran
"$B" sessions --json >"$work/sessions.json"
check "no session stored" jqe 'length == 0' "$work/sessions.json"

# run: refused before any experiment is written (exit 4, not a preflight refusal)
cp -R "$S/tests/cli/trees/lifecycle" "$work/life" && chmod -R u+w "$work/life"
(
	cd "$work/life" || exit 1
	"$B" render >/dev/null
	git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init
) || exit 1
cp "$work/life/experiments/RUNS.md" "$work/runs-before.md"
check "run, broken libcrypto: exit 4" test "$(cd "$work/life" && LD_LIBRARY_PATH="$work/broken-crypto" rc_of "$B" run -q life.ok --tier pr-smoke --question 'does it run?')" = 4
check "run names libcrypto" grep -q "benchgate: cannot load libcrypto.so.3: .*; install Debian's libssl3" "$work/err"
check "run wrote no experiment" test "$(ls "$work/life/experiments")" = RUNS.md
check "RUNS.md unchanged" cmp -s "$work/runs-before.md" "$work/life/experiments/RUNS.md"
# promote: its artifact checks hash, so it stops with exit 4 rather than call them mismatched
check "run with both libraries" test "$(cd "$work/life" && rc_of "$B" run -q life.ok --tier pr-smoke --question 'does it run?')" = 0
check "promote, broken libcrypto: exit 4" test "$(cd "$work/life" && LD_LIBRARY_PATH="$work/broken-crypto" rc_of "$B" promote 1)" = 4
check "promote names libcrypto" grep -q "benchgate: cannot load libcrypto.so.3" "$work/err"

# with both, the same session passes (the libraries really are loaded on demand)
check "with both: ok" test "$(rc_of "$B" measure -q -r 1 --json --output out.txt --parity "sha256:$sha" -- touch out.txt)" = 0
check "the digest checked" jqe --arg s "$sha" '.status == "ok" and .runs[0].parity.sha256 == $s and .runs[0].parity.result == "pass"' "$work/out"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
