#!/usr/bin/env bash
# Provenance: git HEAD (full SHA), the dirty flag and the SHA-256 of
# `git -c core.abbrev=40 diff HEAD --full-index --no-renames --no-ext-diff
# --no-textconv --no-color --submodule=diff --ignore-submodules=untracked`
# when dirty, read in the project root (never running the
# user's external diff program or text conversion; a binary file by its
# blob ids; a submodule by the diff of its content), over the whole
# repository, without optional locks (the index is never rewritten); the
# working directory relative to the project root; no absolute home paths.
# Needs git, jq.
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

(cd sub && "$B" measure -q -r 1 --json -- true) >"$work/clean.json"
check "revision is HEAD"   test "$(jq -r .provenance.git.revision "$work/clean.json")" = "$head"
check "clean"              jqe '.provenance.git.dirty == false and .provenance.git.diff_sha256 == null' "$work/clean.json"
check "cwd relative"       test "$(jq -r .provenance.cwd "$work/clean.json")" = sub
check "store at the root"  test -f .benchgate/store.sqlite3

printf 'two\n' >data.txt
gitdiff() {
	git -c core.abbrev=40 diff HEAD --full-index --no-renames --no-ext-diff --no-textconv --no-color \
		--submodule=diff --ignore-submodules=untracked
}
want=$(gitdiff | sha256sum | cut -d' ' -f1)
# the user's own diff program and a text conversion, which must not run
printf '#!/bin/sh\necho ran >>"%s/ext.log"\necho other\n' "$work" >"$work/ext.sh"
chmod +x "$work/ext.sh"
git config diff.external "$work/ext.sh"
git config diff.conv.textconv "$work/ext.sh"
echo '*.txt diff=conv' >.git/info/attributes
"$B" measure -q -r 1 --json -- true >"$work/dirty.json"
check "dirty"              jqe '.provenance.git.dirty == true' "$work/dirty.json"
check "diff sha256"        test "$(jq -r .provenance.git.diff_sha256 "$work/dirty.json")" = "$want"
check "no external diff or textconv ran" test ! -e "$work/ext.log"
git config --unset diff.external
git config --unset diff.conv.textconv
rm .git/info/attributes
check "diff sha256 as git diff shows it" test "$(gitdiff | sha256sum | cut -d' ' -f1)" = "$want"

# a binary file: hashed by its blob ids, so other bytes are another hash
git checkout -q data.txt
head -c 300000 /dev/zero >blob.bin && git add blob.bin && git commit -qm blob
printf '\001' | dd of=blob.bin bs=1 seek=1000 conv=notrunc 2>/dev/null
"$B" measure -q -r 1 --json -- true >"$work/bin1.json"
check "binary: diff sha256" test "$(jq -r .provenance.git.diff_sha256 "$work/bin1.json")" = "$(gitdiff | sha256sum | cut -d' ' -f1)"
check "binary: by its blob id" bash -c "git diff HEAD --full-index | grep -q '^index [0-9a-f]\{40\}\.\.$(git hash-object blob.bin) '"
printf '\002' | dd of=blob.bin bs=1 seek=1000 conv=notrunc 2>/dev/null
"$B" measure -q -r 1 --json -- true >"$work/bin2.json"
check "binary: other bytes, another hash" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/bin1.json")" != "$(jq -r .provenance.git.diff_sha256 "$work/bin2.json")"
git checkout -q blob.bin
printf 'two\n' >data.txt
check "no home paths"      bash -c "! grep -q '\"$HOME/' '$work/dirty.json'"
check "version recorded"   jqe '.provenance.benchgate_version | length > 0' "$work/dirty.json"
check "argv recorded"      jqe '.provenance.argv == ["measure","-q","-r","1","--json","--","true"]' "$work/dirty.json"

# an observer: the repository's index is never rewritten (git status would
# refresh it for a file touched since, taking .git/index.lock from the
# user's own git commands meanwhile), and another git's lock stops nothing
git checkout -q data.txt
touch -d "2020-01-02 03:04:05" data.txt
index=$(sha256sum .git/index)
"$B" measure -q -r 1 --json -- true >"$work/touched.json"
check "touched, same content: clean" jqe '.provenance.git.dirty == false' "$work/touched.json"
check "the index is not rewritten" test "$(sha256sum .git/index)" = "$index"
printf 'three\n' >data.txt
: >.git/index.lock
"$B" measure -q -r 1 --json -- true >"$work/locked.json"
check "while another git holds the index: dirty, hashed" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/locked.json")" = "$(gitdiff | sha256sum | cut -d' ' -f1)"
check "its lock left alone" test -e .git/index.lock -a ! -s .git/index.lock
rm .git/index.lock

# a submodule (the library under test, often): an edit in it is part of the
# diff hash, not the same "Subproject commit X-dirty" for any edit, so an
# edit during the session is seen; files it does not track are not
git checkout -q data.txt
git init -q "$work/lib" && git -C "$work/lib" config user.email t@example.invalid &&
	git -C "$work/lib" config user.name t
echo 'int a;' >"$work/lib/a.c" && git -C "$work/lib" add a.c && git -C "$work/lib" commit -qm lib
git -c protocol.file.allow=always submodule add -q "$work/lib" lib >/dev/null 2>&1 && git commit -qm lib
echo 'int b;' >>lib/a.c
"$B" measure -q -r 1 --json -- true >"$work/sub1.json"
echo 'int c;' >>lib/a.c
"$B" measure -q -r 1 --json -- true >"$work/sub2.json"
check "submodule edited: dirty" jqe '.provenance.git.dirty == true' "$work/sub1.json"
check "submodule: the hash of its content's diff, full ids" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/sub2.json")" = "$(gitdiff | sha256sum | cut -d' ' -f1)"
check "submodule: full ids in its diff" bash -c "$(declare -f gitdiff); gitdiff | grep -q '^index [0-9a-f]\{40\}\.\.[0-9a-f]\{40\} '"
check "submodule: another edit, another hash" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/sub1.json")" != "$(jq -r .provenance.git.diff_sha256 "$work/sub2.json")"
check "submodule: an edit during the session blocks it" \
	test "$(rc_of "$B" measure -q -r 1 --json -- sh -c 'echo "int d;" >>lib/a.c')" = 1
check "submodule: said so" jqe '.status == "blocked" and (.reason | contains("changed during the session"))' "$work/out"
git -C lib checkout -q a.c
echo x >lib/untracked.txt
"$B" measure -q -r 1 --json -- true >"$work/sub3.json"
check "submodule: a file it does not track leaves it clean" jqe '.provenance.git.dirty == false' "$work/sub3.json"

# outside any repository: nulls, not guesses, and nothing to warn of
cd "$work" && mkdir plain && cd plain || exit 1
check "no repository: measured" test "$(rc_of "$B" measure -q -r 1 --json -- true)" = 0
check "no repository: nulls" jqe '.provenance.git == {"revision": null, "dirty": null, "diff_sha256": null, "untracked_files": null, "untracked": null, "excluded": [":(top,glob)**/.benchgate/**"]}' "$work/out"
check "no repository: no warning" test ! -s "$work/err"

# GIT_DIR and the like in benchgate's environment (a git hook sets them)
# do not move its git checks to another repository: the project's is read
cd "$work" && mkdir other && cd other && git init -q . && : >o && git add o &&
	git -c user.email=t@t -c user.name=t commit -qm other || exit 1
other_head=$(git rev-parse HEAD)
cd "$work" && mkdir own && cd own && git init -q . && : >f && git add f &&
	git -c user.email=t@t -c user.name=t commit -qm own || exit 1
check "GIT_DIR set: measured" test "$(GIT_DIR="$work/other/.git" GIT_INDEX_FILE="$work/other/.git/index" rc_of "$B" measure -q -r 1 --json -- true)" = 0
check "GIT_DIR set: the project's revision" jqe --arg h "$(git rev-parse HEAD)" --arg o "$other_head" '.provenance.git.revision == $h and $h != $o and .provenance.git.dirty == false' "$work/out"

# a repository git cannot give a revision of (no commit yet; git not on
# PATH): stored as outside one, but said, in git's words
cd "$work" && mkdir nocommit && cd nocommit && git init -q . || exit 1
check "no commit yet: measured" test "$(rc_of "$B" measure -q -r 1 --json -- true)" = 0
check "no commit yet: nulls" jqe '.provenance.git.revision == null' "$work/out"
check "no commit yet: said" grep -q "^benchgate: this session's provenance lacks the source revision: the project is in a git repository (.*/nocommit/.git), but 'git rev-parse --verify HEAD' failed (fatal: .*); commit the source" "$work/err"
git -c user.email=t@t -c user.name=t commit -qm empty --allow-empty
check "no git on PATH: measured" test "$(PATH=/nonexistent rc_of "$B" measure -q -r 1 --json -- /bin/true)" = 0
check "no git on PATH: said" grep -q "failed ('git': cannot start: No such file or directory); commit the source, put git on PATH" "$work/err"

# a source git cannot read (a filter whose program is missing, as git-lfs
# without git-lfs): measured and stored, but said, since its provenance
# lacks the dirty flag or the diff's hash
cd "$work" && mkdir filtered && cd filtered || exit 1
git init -q . && printf 'one\n' >blob.bin && git add blob.bin && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
git config filter.broken.clean false && git config filter.broken.required true
echo 'blob.bin filter=broken' >.git/info/attributes
printf 'two\n' >blob.bin
check "a status git cannot make: measured (exit 0)" test "$(rc_of "$B" measure -q -r 1 --json -- true)" = 0
check "... the flag null"          jqe '.provenance.git.dirty == null' "$work/out"
check "... said, in git's words" grep -qxF "benchgate: this session's provenance lacks whether the source has uncommitted changes (git status: fatal: blob.bin: clean filter 'broken' failed); make 'git status' and 'git diff HEAD' work in the project (install the program a filter names), as 'benchgate run' requires" "$work/err"

# the source the runs ran is the one the setup left: a module it writes is
# in the provenance, dirty (it was recorded clean: the end check covers
# only the untracked files there at the start), and a tracked file it edits
# is the uncommitted change recorded, not a change during the session
cd "$work" && mkdir setup && cd setup || exit 1
git init -q . && printf 'x\n' >a.txt && git add a.txt && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "a module the setup writes: exit 0" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --setup 'echo "exit 0" >gen.sh' -- sh gen.sh)" = 0
check "... dirty, the module listed"      jqe '.provenance.git.dirty == true and .provenance.git.untracked == ["gen.sh"]' "$work/out"
rm -f gen.sh
check "a tracked file the setup edits: exit 0" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --setup 'echo y >a.txt' -- cat a.txt)" = 0
check "... dirty, its diff hashed"        jqe '.provenance.git.dirty == true and (.provenance.git.diff_sha256 | type) == "string"' "$work/out"

# an output pattern is left out of the check as glob(3) matched it: '**' is
# '*' there, never git's "any depth" (an edited tracked ref/deep/expected.npy
# was hidden by --output '**/*.npy', the tree recorded clean)
mkdir -p ref/deep out && printf A >ref/deep/expected.npy && git add -A && git -c user.email=t@t -c user.name=t commit -qm ref || exit 1
printf B >ref/deep/expected.npy
check "'**' in --output: exit 0"         test "$(rc_of "$B" measure -q -w 0 -r 1 --json --output '**/*.npy' -- sh -c 'echo x >out/r.npy')" = 0
check "... the edited tracked file counts" jqe '.provenance.git.dirty == true' "$work/out"
git checkout -q -- ref
# ... and a name starting with '.' only where a '.' is written there, as
# glob(3) matches: an edited tracked out/.meta.json is not an output of
# 'out/*.json' or 'out/?meta.json' (git's '*' and '?' match a leading '.');
# what the pattern matched is still left out ('*x' matching "x" too)
printf A >out/.meta.json && git add -A && git -c user.email=t@t -c user.name=t commit -qm meta || exit 1
printf B >out/.meta.json
for pat in 'out/*.json' 'out/?meta.json' 'out/**.json' 'o*/*.json'; do
	check "'$pat': exit 0" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --output "$pat" -- sh -c 'echo x >out/xmeta.json')" = 0
	check "... the edited tracked out/.meta.json counts" jqe '.provenance.git.dirty == true and .provenance.git.untracked == []' "$work/out"
done
git checkout -q -- out && git clean -qfd out
check "'*x' leaves out x: exit 0" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --output 'out/*x' -- sh -c 'echo 1 >out/x; echo 2 >out/ax')" = 0
check "... clean"                jqe '.provenance.git.dirty == false' "$work/out"
git clean -qfd out
check "'out/.*.json' leaves out a dot name: exit 0" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --output 'out/.*.json' -- sh -c 'echo x >out/.meta.json')" = 0
check "... clean"                jqe '.provenance.git.dirty == false' "$work/out"

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
