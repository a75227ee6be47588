#!/usr/bin/env bash
# Provenance: git HEAD (full SHA), the dirty flag and the SHA-256 of
# `git diff HEAD --binary` when dirty, read in the project root; the working
# directory relative to the project root; no absolute home paths. Needs git, jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
command -v git >/dev/null || { echo "skip: no git"; exit 0; }
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null
git init -q proj && cd proj || exit 1
git config user.email t@example.invalid && git config user.name t
printf '{"schema_version": 1}\n' >benchgate.json
printf 'one\n' >data.txt
git add . && git commit -qm one
head=$(git rev-parse HEAD)
mkdir -p sub

(cd sub && "$B" measure -q -r 1 --json -- true) >clean.json
check "revision is HEAD"   test "$(jq -r .provenance.git.revision clean.json)" = "$head"
check "clean"              jqe '.provenance.git.dirty == false and .provenance.git.diff_sha256 == null' clean.json
check "cwd relative"       test "$(jq -r .provenance.cwd clean.json)" = sub
check "store at the root"  test -f .benchgate/store.sqlite3

printf 'two\n' >data.txt
want=$(git diff HEAD --binary | sha256sum | cut -d' ' -f1)
"$B" measure -q -r 1 --json -- true >dirty.json
check "dirty"              jqe '.provenance.git.dirty == true' dirty.json
check "diff sha256"        test "$(jq -r .provenance.git.diff_sha256 dirty.json)" = "$want"
check "no home paths"      bash -c "! grep -q '\"$HOME/' dirty.json"
check "version recorded"   jqe '.provenance.benchgate_version | length > 0' dirty.json
check "argv recorded"      jqe '.provenance.argv == ["measure","-q","-r","1","--json","--","true"]' dirty.json

# outside any repository: nulls, not guesses
cd "$work" && mkdir plain && cd plain || exit 1
"$B" measure -q -r 1 --json -- true >plain.json
check "no repository: nulls" jqe '.provenance.git == {"revision": null, "dirty": null, "diff_sha256": null, "excluded": []}' plain.json

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
