#!/usr/bin/env bash
# Untracked files are part of the source a session ran: a new module not
# yet `git add`ed is imported or compiled as much as a tracked one. A file
# no .gitignore names makes the session dirty; its path and identity
# (SHA-256 of its content, or size and modification time over 1 MiB) enter
# the diff hash after git's diff; the provenance counts and lists them.
# benchgate's own state (the store's folder), measure's --output and
# --export-jsonl files and run's declared outputs are left out. A file the
# runs create is their output, not a change to the source; an edit or a
# removal of a file that was untracked at the start blocks the session.
# Needs git, jq, sha256sum.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
command -v git >/dev/null || { echo "skip: no git"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null
cd "$work" || exit 1
git init -q proj && cd proj || exit 1
git config user.email t@example.invalid && git config user.name t
printf '{"schema_version": 1}\n' >benchgate.json
printf 'one\n' >data.txt
git add . && git commit -qm one

m() { "$B" measure -q -r 1 -w 0 --json "$@"; }
# the hash the provenance documents: git's diff, then "\0untracked\0" and
# each file's path and identity, NUL-ended
hash_of() { # PATH IDENTITY...
	{
		git -c core.abbrev=40 diff HEAD --full-index --no-renames --no-ext-diff --no-textconv \
			--no-color --submodule=diff --ignore-submodules=untracked
		printf '\0untracked\0'
		while [ $# -gt 0 ]; do printf '%s\0%s\0' "$1" "$2"; shift 2; done
	} | sha256sum | cut -d' ' -f1
}
content() { printf 'sha256:%s' "$(sha256sum <"$1" | cut -d' ' -f1)"; }

m -- true >first.json 2>/dev/null; rm first.json
m -- true >"$work/clean.json"
check "clean: the store made the session before nothing dirty" \
	jqe '.provenance.git.dirty == false and .provenance.git.untracked_files == 0 and .provenance.git.untracked == []' "$work/clean.json"
check "every .benchgate folder is left out" jqe '.provenance.git.excluded == [":(top,glob)**/.benchgate/**"]' "$work/clean.json"

# a new module, not yet added
printf 'x = 1\n' >new.py
m -- true >"$work/u1.json"
check "untracked file: dirty" jqe '.provenance.git.dirty == true' "$work/u1.json"
check "... counted and listed" jqe '.provenance.git.untracked_files == 1 and .provenance.git.untracked == ["new.py"]' "$work/u1.json"
check "... the hash as documented" test "$(jq -r .provenance.git.diff_sha256 "$work/u1.json")" = "$(hash_of new.py "$(content new.py)")"
m -- true >"$work/u2.json"
check "same content: same hash" test "$(jq -r .provenance.git.diff_sha256 "$work/u1.json")" = "$(jq -r .provenance.git.diff_sha256 "$work/u2.json")"
printf 'x = 2\n' >new.py
m -- true >"$work/u3.json"
check "another content: another hash" test "$(jq -r .provenance.git.diff_sha256 "$work/u1.json")" != "$(jq -r .provenance.git.diff_sha256 "$work/u3.json")"
"$B" session "$(jq -r .id "$work/u3.json")" >"$work/show"
check "session says so" grep -q '(dirty, diff [0-9a-f]\{64\}, 1 untracked file)' "$work/show"

# with a tracked change too: git's diff first, then the untracked file
printf 'two\n' >data.txt
m -- true >"$work/u4.json"
check "tracked and untracked: the hash as documented" test "$(jq -r .provenance.git.diff_sha256 "$work/u4.json")" = "$(hash_of new.py "$(content new.py)")"
git checkout -q data.txt

# an edit during the session blocks it, naming the file
check "an untracked file edited during the session: blocked (exit 1)" \
	test "$(rc_of m -- sh -c 'echo more >>new.py')" = 1
check "... said so, naming it" jqe '.status == "blocked" and (.reason | contains("(including 1 untracked file: '"'"'new.py'"'"') changed during the session"))' "$work/out"
check "an untracked file removed during the session: blocked" \
	test "$(rc_of m -- sh -c 'rm -f new.py')" = 1
check "... as a change to the source" jqe '.reason | contains("changed during the session")' "$work/out"
printf 'x = 2\n' >new.py

# a file the runs create is their output: the session stays as it started
rm new.py
check "a file the runs create: measured (exit 0)" test "$(rc_of m -- sh -c 'echo r >>made.txt')" = 0
check "... not blocked, still clean" jqe '.status == "ok" and .provenance.git.dirty == false' "$work/out"
m -- true >"$work/next.json"
check "... the next session finds it untracked" jqe '.provenance.git.untracked == ["made.txt"]' "$work/next.json"
rm made.txt

# what .gitignore names is not counted
printf 'ignored.bin\n' >.gitignore && git add .gitignore && git commit -qm ignore
printf 'data' >ignored.bin
m -- true >"$work/ig.json"
check "an ignored file: clean" jqe '.provenance.git.dirty == false and .provenance.git.untracked_files == 0' "$work/ig.json"

# measure's --output and --export-jsonl files, where the session writes,
# from a folder of the project: left out, relative to the project root
mkdir -p sub
(cd sub && m --output o.txt --export-jsonl e.jsonl -- sh -c 'echo y >o.txt') >"$work/o1.json"
(cd sub && m --output o.txt --export-jsonl e.jsonl -- sh -c 'echo y >o.txt') >"$work/o2.json"
check "--output and --export-jsonl files: left out" jqe '.provenance.git.excluded == [":(top,glob)**/.benchgate/**", "sub/o.txt", "sub/e.jsonl"]' "$work/o2.json"
check "... the next session clean" jqe '.provenance.git.dirty == false' "$work/o2.json"
rm -f sub/o.txt sub/e.jsonl
# an --output pattern leaves out what it matches as glob(3) does, '*'
# within a name: not a source file of the same extension in a folder
# below; an --export-jsonl name is a name, not a pattern
git commit -qm "the outputs so far" --allow-empty
mkdir -p src && printf 'x = 1\n' >src/kernel.py && git add src && git commit -qm src
printf 'x = 2\n' >src/kernel.py
m --output '*.py' -- sh -c 'echo "print(1)" >gen.py' >"$work/glob.json"
check "--output '*.py': a source file in a folder below is no output" \
	jqe '.provenance.git.dirty == true and .provenance.git.untracked_files == 0' "$work/glob.json"
git checkout -q src/kernel.py && rm -f gen.py
printf 'kept\n' >'e[1]'
m --export-jsonl 'e*' -- true >"$work/lit.json"
check "--export-jsonl 'e*': a name, not a pattern" \
	jqe '.provenance.git.untracked == ["e*", "e[1]"] or .provenance.git.untracked == ["e[1]"]' "$work/lit.json"
check "... named to git escaped" jqe '.provenance.git.excluded[-1] == "e\\*"' "$work/lit.json"
rm -f 'e[1]' 'e*'
check "an --output outside the project: not named to git" \
	test "$(rc_of m --output "$work/outside.txt" -- sh -c "echo y >'$work/outside.txt'")" = 0
check "... clean, nothing left out for it" jqe '.provenance.git.dirty == false and .provenance.git.excluded == [":(top,glob)**/.benchgate/**"]' "$work/out"

# a file over 1 MiB (a dataset) is not read: its size and modification time
head -c 2000000 /dev/zero >big.dat
touch -d '2026-01-02 03:04:05.123456789 UTC' big.dat
m -- true >"$work/b1.json"
mt=$(stat -c '%Y' big.dat)
check "a large untracked file: by size and modification time" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/b1.json")" = "$(hash_of big.dat "size:2000000 mtime:$mt.123456789")"
rm big.dat

# a budget of 16 MiB of untracked content per reading: beyond it, files
# (a virtual environment kept in the repository) enter by size and time
mkdir venv && for i in $(seq -w 1 17); do head -c 1048576 /dev/zero | tr '\0' "${i#?}" >"venv/f$i"; done
touch -d '2026-01-02 03:04:05.5 UTC' venv/f17
m -- true >"$work/v1.json"
args=()
for i in $(seq -w 1 16); do args+=("venv/f$i" "$(content "venv/f$i")"); done
args+=(venv/f17 "size:1048576 mtime:$(stat -c '%Y' venv/f17).500000000")
check "17 files of 1 MiB: 16 by content, the last by size and time" \
	test "$(jq -r .provenance.git.diff_sha256 "$work/v1.json")" = "$(hash_of "${args[@]}")"
rm -rf venv

# names git would quote, links, a nested repository; a FIFO (git lists no
# such file, and benchgate never opens one)
printf 'a\n' >'sp ace
line.py'
ln -s data.txt link.txt
mkfifo pipe
git init -q nested && printf 'n\n' >nested/n.txt
check "odd names, a link, a FIFO, a nested repository: measured" \
	test "$(rc_of timeout 60 "$B" measure -q -r 1 -w 0 --json -- true)" = 0
cp "$work/out" "$work/odd.json"
check "... counted" jqe '.status == "ok" and .provenance.git.untracked_files == 3' "$work/odd.json"
check "... the hash as documented" test "$(jq -r .provenance.git.diff_sha256 "$work/odd.json")" = \
	"$(hash_of link.txt link:data.txt nested/ directory "sp ace
line.py" "$(content "sp ace
line.py")")"
check "... the name listed as it is" jqe '.provenance.git.untracked[2] == "sp ace\nline.py"' "$work/odd.json"
rm -rf 'sp ace
line.py' link.txt pipe nested

# a name that is not UTF-8: listed with \xNN for its byte, and found again
# at the session's end (a file the runs create does not block it; an edit
# of that file does)
bad=$(printf 'bad\377name')
printf 'x' >"$bad"
check "a name that is not UTF-8: measured beside a file the runs create" test "$(rc_of m -- sh -c 'echo y >made2')" = 0
check "... listed with \\xff"     jqe '.status == "ok" and .provenance.git.untracked == ["bad\\xffname"]' "$work/out"
rm -f made2
check "... an edit of it blocks"   test "$(rc_of m -- sh -c 'printf y >>"$(printf "bad\377name")"')" = 1
# beside a name written the same way (its four characters \xff): each is
# found again as itself, so a session that changes neither is not blocked
printf 'two' >'bad\xffname'
check "two names written alike: not blocked" test "$(rc_of m -- true)" = 0
check "... both listed, written alike" jqe '.provenance.git.untracked_files == 2 and (.provenance.git.untracked | unique | length) == 1' "$work/out"
rm -f "$bad" 'bad\xffname'

# more untracked files than the provenance lists: the session keeps every
# one in memory, so a file the runs create is their output there too, and
# an edit or a removal of a file beyond the listed 100 blocks the session
mkdir many && for i in $(seq 1 120); do echo "$i" >"many/f$i"; done
m -- true >"$work/many.json"
check "120 untracked files: counted, 100 listed" \
	jqe '.provenance.git.untracked_files == 120 and (.provenance.git.untracked | length) == 100' "$work/many.json"
check "... a file the runs create: not a change" test "$(rc_of m -- sh -c 'echo r >many/new')" = 0
check "... the session ok, its provenance that of the start (120 files, the same hash)" \
	jqe --slurpfile a "$work/many.json" \
	'.status == "ok" and .provenance.git.untracked_files == 120 and .provenance.git.diff_sha256 == $a[0].provenance.git.diff_sha256' "$work/out"
rm many/new
# git lists by path: many/f99 last, beyond the 100 the provenance names
check "many/f99 is not listed"     jqe '.provenance.git.untracked | index("many/f99") == null' "$work/many.json"
check "... an edit of it: blocked" test "$(rc_of m -- sh -c 'echo x >>many/f99')" = 1
check "... the reason: the uncommitted changes changed" \
	jqe '.status == "blocked" and (.reason | test("the uncommitted changes to the source \\(including 120 untracked files: .*\\) changed during the session"))' "$work/out"
check "... a removal of another: blocked" test "$(rc_of m -- rm -f many/f98)" = 1
check "... the reason: the uncommitted changes changed" \
	jqe '.status == "blocked" and (.reason | test("uncommitted changes .* changed during the session"))' "$work/out"
rm -rf many

# the project in a folder of the repository: a file beside that folder is
# part of the source, named from the repository's top; a store kept in the
# project's own folder leaves out its files, not the folder; the other
# project's .benchgate folder at the top is benchgate's state too
mkdir -p lab && printf '{"schema_version": 1, "store": "sqlite:bg.sqlite3"}\n' >lab/benchgate.json
git add lab && git commit -qm lab
(cd lab && m -- true >/dev/null 2>&1)
(cd lab && m -- true) >"$work/lab1.json"
check "a store in the project's folder: its files left out" \
	jqe '.provenance.git.excluded == [":(top,glob)**/.benchgate/**", "bg.sqlite3", "bg.sqlite3-journal", "bg.sqlite3-wal", "bg.sqlite3-shm", "leases", "dashboard", "runs-index.lock", "promote.lock", "abandon.lock", "promote-journal"]' "$work/lab1.json"
check "... clean" jqe '.provenance.git.dirty == false' "$work/lab1.json"
# render makes no lock file there (it takes promote's lock only where a
# promotion made one)
(cd lab && "$B" render --output gen.md >/dev/null 2>&1); rm -f lab/gen.md
check "render makes no lock file in the project's folder" test ! -e lab/promote.lock
# benchgate's locks and a promotion's journal, which live there too
: >lab/runs-index.lock; : >lab/promote.lock; : >lab/abandon.lock; mkdir -p lab/promote-journal && : >lab/promote-journal/index.json
(cd lab && m -- true) >"$work/lab1b.json"
check "... its locks and journal left out" jqe '.provenance.git.dirty == false' "$work/lab1b.json"
rm -rf lab/runs-index.lock lab/promote.lock lab/abandon.lock lab/promote-journal
# a store named by an absolute path inside the project: the relative path it names
printf '{"schema_version": 1, "store": "sqlite:%s/lab/db/s.sqlite3"}\n' "$(pwd -P)" >lab/benchgate.json
git add lab && git commit -qm "lab: an absolute store"
(cd lab && m -- true >/dev/null 2>&1)
(cd lab && m -- true) >"$work/lab3.json"
check "a store named by an absolute path inside the project: its files left out" \
	jqe '.provenance.git.excluded[1:] == ["db/s.sqlite3", "db/s.sqlite3-journal", "db/s.sqlite3-wal", "db/s.sqlite3-shm", "db/leases", "db/dashboard", "db/runs-index.lock", "db/promote.lock", "db/abandon.lock", "db/promote-journal"] and .provenance.git.dirty == false' "$work/lab3.json"
# never the folder: a source beside the store is part of the source
printf 'echo v1\n' >lab/db/kernel.sh
git add lab && git commit -qm "lab: a source beside the store"
printf 'echo v2\n' >lab/db/kernel.sh
(cd lab && m -- true) >"$work/lab3b.json"
check "a source edited beside the store: dirty" jqe '.provenance.git.dirty == true' "$work/lab3b.json"
git checkout -q lab/db/kernel.sh && git rm -q lab/db/kernel.sh && git commit -qm "lab: no source beside the store"
rm -rf lab/db
# a store folder whose name holds glob characters: escaped, and its files left out
printf '{"schema_version": 1, "store": "sqlite:st[1]/s.sqlite3"}\n' >lab/benchgate.json
git add lab && git commit -qm "lab: a store folder named st[1]"
(cd lab && m -- true >/dev/null 2>&1)
(cd lab && m -- true) >"$work/lab4.json"
check "a store folder named st[1]: escaped, its files left out" \
	jqe '.provenance.git.excluded[1] == "st\\[1]/s.sqlite3" and .provenance.git.excluded[-1] == "st\\[1]/promote-journal" and .provenance.git.dirty == false' "$work/lab4.json"
rm -rf 'lab/st[1]'
printf '{"schema_version": 1, "store": "sqlite:bg.sqlite3"}\n' >lab/benchgate.json
git add lab && git commit -qm "lab: the store in its folder again"
printf 'y = 1\n' >beside.py
(cd lab && m -- true) >"$work/lab2.json"
check "a file beside the project's folder: dirty, named from the top" jqe '.provenance.git.untracked == ["beside.py"]' "$work/lab2.json"
rm beside.py

# run: the declared outputs are left out (the first run's output does not
# make the second dirty); an untracked file stores the session pending,
# saying which file and what to do
export BENCHGATE_NO_CGROUP=1
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/life"
cd "$work/life" || exit 1
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "run: exit 0"                test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "run again: exit 0"          test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "... its declared output left out, and every runbook's, as a pattern" \
	jqe '.provenance.git.excluded == ["experiments", ":(top,glob)**/.benchgate/**", "out/life.ok.txt", "out/*.txt"]' <("$B" session 2 --json)
printf 'other gate\n' >out/life.other.txt
check "another gate's output in the project: exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "... the source clean" jqe '.provenance.git.dirty == false' <("$B" session 3 --json)
check "... the source clean"        jqe '.provenance.git.dirty == false' <("$B" session 2 --json)
check "... auto-accepted"           jqe '.[1].curation == "auto-accepted"' <("$B" history life.ok --json)
# a runbook whose output template starts with a field ("{id}.json", never
# run here) is not left out as "*.json": an edit of a tracked benchgate.json
# at the top is seen (it was stored clean)
cp benchmarks/benchmark_registry.json "$work/reg.saved"
jq '.runbooks.fail.measure.outputs = ["{id}.json"]' "$work/reg.saved" >benchmarks/benchmark_registry.json
"$B" render >/dev/null && git add -A && git -c user.email=t@t -c user.name=t commit -qm field-output || exit 1
printf ' ' >>benchgate.json
check "a field-first output template: exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "... not left out" jqe '.provenance.git.excluded | index("*.json") == null' <("$B" session 4 --json)
check "... the edited benchgate.json seen: dirty" jqe '.provenance.git.dirty == true' <("$B" session 4 --json)
git checkout -q benchgate.json
cp "$work/reg.saved" benchmarks/benchmark_registry.json && "$B" render >/dev/null &&
	git add -A && git -c user.email=t@t -c user.name=t commit -qm back || exit 1
printf 'x = 1\n' >new.py
check "an untracked file: exit 0"  test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "... pending"                 jqe '.[4].curation == "pending"' <("$B" history life.ok --json)
"$B" compare 5 >"$work/cmp" 2>&1
check "... the reason names the file and the remedy" \
	grep -q "uncommitted changes (diff SHA-256 [0-9a-f]\{12\}; 1 untracked file: 'new.py'): .*name in .gitignore the untracked files that are not source" "$work/cmp"
check "... promotion refused, naming it" \
	bash -c "'$B' promote 5 2>&1 | grep -q \"the working tree was dirty (1 untracked file: 'new.py')\""

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
