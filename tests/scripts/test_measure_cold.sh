#!/usr/bin/env bash
# --evict makes a file cold honestly and says so per run: a 64 MiB file read
# by the command is below 1% resident before every run, and so are the files
# of a folder named to --evict; a file whose pages
# cannot be dropped (tmpfs: the pages are the file) is refused before any
# run; one another process maps blocks the session, naming that process;
# a benchgate.json benchgate read (mapped) is evicted as any file.
# Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
shm=""
mapper=""
trap '[ -z "$mapper" ] || kill "$mapper" 2>/dev/null; rm -rf "$work"; [ -n "$shm" ] && rm -f "$shm"' EXIT
cd "$work" || exit 1

if [ "$(stat -f -c %T .)" = tmpfs ]; then
	echo "skip: $work is on tmpfs, where pages cannot be dropped"
	exit 0
fi
head -c $((64 * 1024 * 1024)) /dev/urandom >source.bin
cat source.bin >/dev/null # warm
check "cold session ok"  test "$(rc_of "$B" measure -q -w 1 -r 3 --json --evict source.bin -- cat source.bin)" = 0
check "cold every run"   jqe '[.runs[].cache.state] == ["cold","cold","cold","cold","cold"]' out
check "below 1% resident" jqe '[.runs[].cache.files[0].resident_fraction] | all(. < 0.01)' out
check "file named"       jqe '.runs[0].cache.files[0].path == "source.bin"' out
check "session cold"     jqe '.cache == {"requested":"cold","state":"cold","remote":[]}' out
check "missing evict file: exit 4" test "$(rc_of "$B" measure -q --evict nope.bin -- true)" = 4
check "missing file named" grep -q "nope.bin" err
# a folder (a dataset of many files): every file under it, one fraction
mkdir -p adir/sub
head -c $((16 * 1024 * 1024)) /dev/urandom >adir/a.bin
head -c $((8 * 1024 * 1024)) /dev/urandom >adir/sub/b.bin
cat adir/a.bin adir/sub/b.bin >/dev/null # warm
check "a folder: cold session" \
	test "$(rc_of "$B" measure -q -w 0 -r 2 --json --evict adir -- sh -c 'cat adir/a.bin adir/sub/b.bin >/dev/null')" = 0
check "a folder: cold every run" jqe '[.runs[].cache.state] == ["cold","cold","cold"] and .cache.state == "cold"' out
check "a folder: named, below 1% resident" \
	jqe '[.runs[].cache.files[0]] | all(.path == "adir" and .resident_fraction < 0.01)' out
# nothing to evict is no evidence of a cold run (a mistyped dataset
# folder): refused before anything is stored, exit 3
mkdir empty
: >empty.bin
before=$("$B" sessions --json 2>/dev/null | jq length 2>/dev/null || echo 0)
check "an empty folder: refused (exit 3)" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --evict empty -- true)" = 3
check "an empty folder: said" grep -qF "'empty': a folder with no data in it (no file, or only empty ones): there is nothing to evict, so no run can be shown cold by it; name the data the command reads" err
check "an empty file: refused (exit 3)" test "$(rc_of "$B" measure -q -w 0 -r 1 --evict empty.bin -- true)" = 3
check "an empty file: said" grep -qF "'empty.bin': an empty file: there is nothing to evict" err
check "empty: nothing stored" test "$("$B" sessions --json 2>/dev/null | jq length 2>/dev/null || echo 0)" = "$before"
# a file the command removes: the next eviction names it and the run it
# was to precede, and says nothing of the session is kept (exit 4)
head -c 5000 /dev/urandom >victim
check "a removed file: exit 4" test "$(rc_of "$B" measure -q -w 0 -r 2 --evict victim -- rm victim)" = 4
check "a removed file: the run named, nothing stored" grep -qF "'victim': cannot open the file to evict: No such file or directory (evicting it before timed run 1 (#2); nothing of the session is stored)" err
mkfifo adir/pipe
check "a FIFO in it: exit 4, not a wait" test "$(rc_of timeout 20 "$B" measure -q --evict adir -- true)" = 4
check "a FIFO in it: said plainly" grep -q "adir/pipe: cannot read: not a regular file or a folder" err
rm adir/pipe
mkfifo fifo
check "a FIFO to evict: exit 4, not a wait" test "$(rc_of timeout 20 "$B" measure -q --evict fifo -- true)" = 4
check "a FIFO: said plainly" grep -q "'fifo': not a regular file or a folder" err

# a file another process maps (a notebook holding the dataset): its pages
# stay; the session is blocked, naming the process, not just "not cold"
map_file() { # FILE: a process that maps FILE, its pid in $mapper
	rm -f mapped.txt
	"${BENCHGATE_BUILD:?}/tests/programs/mapfile" "$1" 60 >mapped.txt &
	mapper=$!
	for _ in $(seq 100); do [ -s mapped.txt ] && break; sleep 0.05; done
}
unmap_file() { kill "$mapper" && wait "$mapper" 2>/dev/null; mapper=; }
map_file source.bin
check "a mapped file: blocked (exit 1)" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --evict source.bin -- true)" = 1
check "a mapped file: the reason names it and the process that maps it" \
	jqe --arg pid "$mapper" '.reason | startswith("smoke run 1 was not cold: '"'source.bin'"' stayed ") and contains("% resident after its eviction; process \($pid) (mapfile) maps it, and pages a process maps cannot be dropped: close the file there (or end that process), or measure warm")' out
unmap_file
# in a folder: the reason names the file of it that the process maps
map_file adir/sub/b.bin
check "a mapped file in a folder: blocked (exit 1)" test "$(rc_of "$B" measure -q -w 0 -r 1 --json --evict adir -- true)" = 1
check "a mapped file in a folder: named with its process" \
	jqe --arg pid "$mapper" '.reason | contains("% resident after its eviction; process \($pid) (mapfile) maps '"'adir/sub/b.bin'"' in it,")' out
unmap_file
check "unmapped again: cold"       test "$(rc_of "$B" measure -q -w 0 -r 1 --evict source.bin -- true)" = 0

if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	shm=$(mktemp /dev/shm/benchgate-test-XXXXXX)
	head -c $((1024 * 1024)) /dev/zero >"$shm"
	# its pages are the file: refused before any run, not measured to be blocked
	before=$("$B" sessions --json | jq length)
	check "tmpfs: refused (exit 3)" test "$(rc_of "$B" measure -q -w 0 -r 2 --json --evict "$shm" -- true)" = 3
	check "tmpfs: said why and what to do" grep -qF "'$shm': is on a memory file system (tmpfs), whose pages are the file itself: they cannot be evicted, so no run of it can be cold; keep it on a disk to measure it cold, or measure it warm (no eviction)" err
	check "tmpfs: nothing stored" test "$("$B" sessions --json | jq length)" = "$before"
	ln -s "$shm" shm-link
	check "tmpfs through a link: refused too" test "$(rc_of "$B" measure -q -w 0 -r 2 --evict shm-link -- true)" = 3
else
	echo "skip: no tmpfs /dev/shm for the first-process case"
fi

# a file benchgate itself read whole (a benchgate.json of 32 KiB or more is
# mapped to be read): released before the runs, never still mapped by
# benchgate where an eviction cannot drop it
mkdir -p big && (
	cd big || exit 1
	{
		printf '{"schema_version": 1, "module_labels": {'
		for i in $(seq 1000); do printf '"mod%05d": "%040d", ' "$i" 0; done
		printf '"last": "x"}}\n'
	} >benchgate.json
	[ "$(stat -c %s benchgate.json)" -ge 32768 ] || { echo "benchgate.json too small"; exit 1; }
	cat benchgate.json >/dev/null # warm
	check "a big benchgate.json evicted: cold session" \
		test "$(rc_of "$B" measure -q -w 0 -r 1 --json --evict benchgate.json -- cat benchgate.json)" = 0
	check "... cold" jqe '.cache.state == "cold"' "$work/out"
	[ "$fails" = 0 ]
) || fails=$((fails + 1))

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
