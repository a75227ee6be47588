#!/usr/bin/env bash
# benchgate run: the decision's Block reasons that come from the runbook (a
# memory peak over the floor, a cold claim whose eviction failed: another
# process maps the file), a verified cold claim that does not block, a cold
# claim no eviction could meet (a file on tmpfs: refused), and the computer detection rules
# device_contains (CPU model) and computer_equals_ignoring_case (host name).
# Needs jq and git.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
bin=${BENCHGATE:?}
src=${BENCHGATE_SOURCE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
shm=""
mapper=""
trap '[ -z "$mapper" ] || kill "$mapper" 2>/dev/null; rm -rf "$work"; [ -n "$shm" ] && rm -f "$shm"' EXIT
cp -R "$src/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
"$bin" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
cp benchmarks/benchmark_registry.json "$work/registry.json"
cp benchgate.json "$work/benchgate.json"
# with_registry JQ-FILTER: the registry edited from its original, its document rendered
with_registry() { jq "$1" "$work/registry.json" >benchmarks/benchmark_registry.json && "$bin" render >/dev/null; }
reasons() { jqe --arg want "$1" '.decision.decision == "block" and any(.decision.reasons[]; contains($want))' "$work/out"; }

with_registry '.runbooks.ok.measure.memory_floor_bytes = 1'
check "memory floor: blocks (exit 1)" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 1
check "memory floor: the reason" reasons "over the memory floor of 1 bytes"
with_registry '.runbooks.ok.measure.memory_floor_bytes = 1e12'
check "a floor above the peak: no block" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 0
check "a floor above the peak: no baseline yet" jqe '.decision.decision == "no-baseline"' "$work/out"
# a sampled tree under the floor is the figure: a larger single-process
# peak (benchgate's own, which a small program inherits until it execs) is
# not taken over it
with_registry '.runbooks.ok.measure.memory_floor_bytes = 1e12 | .runbooks.ok.measure.sample_interval_ms = 1 | .runbooks.ok.command = "sleep 0.05; printf hello > out/{id}.txt"'
"$bin" run -q --no-repeat --json life.ok >"$work/peaks.json"
tree=$(jq '.session.statistics.tree_peak_bytes.max // 0' "$work/peaks.json")
rss=$(jq '.session.statistics.max_rss_bytes.max // 0' "$work/peaks.json")
if [ "$tree" -gt 0 ] && [ "$rss" -gt "$tree" ]; then
	with_registry ".runbooks.ok.measure.memory_floor_bytes = $(((tree + rss) / 2)) | .runbooks.ok.measure.sample_interval_ms = 1 | .runbooks.ok.command = \"sleep 0.05; printf hello > out/{id}.txt\""
	check "tree under the floor, RSS over it: no block" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 0
else
	echo "skip: the tree peak ($tree) is not under the single-process peak ($rss) here"
fi

if [ "$(stat -f -c %T .)" != tmpfs ]; then
	with_registry '.runbooks.ok.measure.cache = {"state": "cold", "evict": ["data/input.txt"]}'
	check "cold, evicted: not blocked" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 0
	check "cold, evicted: the session is cold" jqe '.session.cache == {"requested": "cold", "state": "cold", "remote": []}' "$work/out"
	# the same file on a network file system (statfs says NFS, through a
	# preloaded stand-in): cold here, and the decision says what that means
	check "cold on NFS: not blocked" test "$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		FAKE_FS_PATH=input.txt FAKE_FS_TYPE=0x6969 LD_PRELOAD="${BENCHGATE_BUILD:?}/tests/preload/libfake_statfs.so" \
		rc_of "$bin" run -q --no-repeat --json life.ok)" = 0
	check "cold on NFS: recorded" jqe '.session.cache.remote == [{"path": "data/input.txt", "filesystem": "nfs"}]' "$work/out"
	check "cold on NFS: the decision notes it" jqe '.decision.conditions | index("'"'"'data/input.txt'"'"' is on nfs: evicting it dropped this machine'"'"'s copy only, and a file server'"'"'s cache (or the file system'"'"'s daemon) may still hold it, so the cold runs may not have read it from disk") != null' "$work/out"
else
	echo "skip: $work is on tmpfs, where pages cannot be dropped"
fi
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	shm=$(mktemp /dev/shm/benchgate-test-XXXXXX)
	echo data >"$shm"
	with_registry ".runbooks.ok.measure.cache = {\"state\": \"cold\", \"evict\": [\"$shm\"]}"
	# no run there can be cold: refused before the experiment is written
	before=$(ls experiments | wc -l)
	check "cold on tmpfs: refused (exit 3)" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 3
	check "cold on tmpfs: nothing written" test "$(ls experiments | wc -l)" = "$before"
else
	echo "skip: no tmpfs /dev/shm for the impossible cold claim"
fi
# a cold claim the eviction cannot verify: a process keeps the input mapped
if [ "$(stat -f -c %T .)" != tmpfs ]; then
	with_registry '.runbooks.ok.measure.cache = {"state": "cold", "evict": ["data/input.txt"]}'
	"${BENCHGATE_BUILD:?}/tests/programs/mapfile" data/input.txt 60 >"$work/mapped" &
	mapper=$!
	for _ in $(seq 100); do [ -s "$work/mapped" ] && break; sleep 0.05; done
	check "cold, but mapped elsewhere: blocks" test "$(rc_of "$bin" run -q --no-repeat --json life.ok)" = 1
	check "cold, but mapped elsewhere: the session's reason" reasons "the session is blocked: smoke run 1 was not cold: 'data/input.txt' stayed 100.0% resident after its eviction; process $mapper (mapfile) maps it"
	kill "$mapper" && wait "$mapper" 2>/dev/null
	mapper=
fi
cp "$work/registry.json" benchmarks/benchmark_registry.json && "$bin" render >/dev/null

# computer detection: the rule that matches is named in a refusal
cpu=$("$bin" measure -q --json -- true 2>/dev/null | jq -r '.provenance.host.cpu_model // empty')
if [ -n "$cpu" ]; then
	part=${cpu:1:8}
	jq --arg p "$part" '.computer_rules = [{"device_contains": $p, "computer": "Test host"}]' "$work/benchgate.json" >benchgate.json
	check "device_contains: the CPU model matches" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 0
	check "device_contains: another computer's gate refused" test "$(rc_of "$bin" run -q life.other)" = 3
	check "device_contains: the refusal names the rule" grep -qF "this machine is 'Test host' (CPU model '$cpu' contains '$part')" "$work/err"
else
	echo "skip: no CPU model in the provenance"
fi
jq '.computer_rules = [{"device_contains": "no such device 4cbd1e", "computer": "Test host"}]' "$work/benchgate.json" >benchgate.json
check "no rule matches: refused" test "$(rc_of "$bin" run -q life.ok)" = 3
check "no rule matches: said" grep -qF "this machine matches no computer rule of benchgate.json" "$work/err"
check "no rule matches: a diagnostic runs" test "$(rc_of "$bin" run -q --tier diagnostic life.ok)" = 0
host=$(uname -n)
upper=$(printf '%s' "$host" | tr '[:lower:]' '[:upper:]')
jq --arg h "$upper" '.computer_rules = [{"computer_equals_ignoring_case": $h, "computer": "Some other box"}]' "$work/benchgate.json" >benchgate.json
check "host name: the other computer's gate runs" test "$(rc_of "$bin" run -q --no-repeat life.other)" = 0
check "host name: this computer's gate refused" test "$(rc_of "$bin" run -q life.ok)" = 3
check "host name: the refusal names the rule" grep -qF "this machine is 'Some other box' (host name '$host' is '$upper')" "$work/err"
cp "$work/benchgate.json" benchgate.json

# a store that fails once the session is measured (here the command itself
# overwrites it): exit 4, and the measured session is kept in the failed
# experiment's error.json, never lost
with_registry '.runbooks.ok.command = "printf hello > out/{id}.txt; printf junk > .benchgate/store.sqlite3"'
check "store fails after measuring: exit 4" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 4
check "store fails after measuring: says where the session is" \
	grep -q "file is not a database .*; what was measured is kept in experiments/[^ ]*/error.json (\"session\"), not stored$" "$work/err"
exp=$(ls -t experiments | grep -v RUNS.md | head -n 1)
check "store fails after measuring: the session in error.json" \
	jqe '.session.status == "ok" and (.session.runs | length) == (.session.counts.smoke + .session.counts.warmup + .session.counts.timed) and (.session.statistics | length) > 0' "experiments/$exp/error.json"
check "store fails after measuring: the experiment failed" jqe '.status == "failed"' "experiments/$exp/manifest.json"
rm -f .benchgate/store.sqlite3*
with_registry '.'

# a command that removes its own experiment folder: the failure is still
# recorded (the folder made again with a failed manifest and error.json,
# the RUNS.md row failed), never left "running"
with_registry '.runbooks.ok.command = "printf hello > out/{id}.txt; rm -rf \"$(ls -td experiments/2026*/ | head -n 1)\""'
check "folder removed by its command: exit 4" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 4
exp=$(grep -o "experiments/[^/']*/runs" "$work/err" | head -n 1 | cut -d/ -f2)
check "folder removed by its command: the experiment named" test -n "$exp"
check "folder removed by its command: manifest failed" jqe '.status == "failed"' "experiments/$exp/manifest.json"
check "folder removed by its command: error.json" test -s "experiments/$exp/error.json"
check "folder removed by its command: RUNS.md row failed" grep -q "^| $exp | .* | failed | " experiments/RUNS.md
with_registry '.'

# a gate id too long for a folder name (255 bytes): the experiment id is
# cut, with the start of the id's SHA-256, and the run goes on
long=life.ok.$(printf 'x%.0s' $(seq 300))
with_registry '(.gates[] | select(.id == "life.ok") | .id) = "'"$long"'" | .runbooks.ok.command = "printf hello > out/long.txt" | .runbooks.ok.measure.outputs = ["out/long.txt"]'
check "a long gate id: runs (exit 0)" test "$(rc_of "$bin" run -q --no-repeat --json "$long")" = 0
exp=$(jq -r .experiment_id "$work/out")
check "a long gate id: the experiment id is cut, with a hash" \
	sh -c "echo '$exp' | grep -Eqx '[0-9]{8}-life-ok-x{174}-[0-9a-f]{8}'"
check "a long gate id: its folder and manifest" jqe --arg g "$long" --arg e "$exp" '.parameters.gate.id == $g and .experiment_id == $e' "experiments/$exp/manifest.json"
check "a long gate id: a second run, a second id" test "$(rc_of "$bin" run -q --no-repeat --json "$long")" = 0
check "a long gate id: -2 after the hash" test "$(jq -r .experiment_id "$work/out")" = "$exp-2"
with_registry '.'

# a failed run's stderr is shown: its last 10 lines, control bytes as \xNN
with_registry '.runbooks.fail.command = "seq 1 50 >&2; printf \"tab\\tbell\\a\\n\" >&2; exit 1"'
check "failed run: blocked (exit 1)" test "$(rc_of "$bin" run -q --no-repeat life.fail)" = 1
check "failed run: the last 10 lines" grep -q "^stderr of smoke run 1 (the last 10 lines of experiments/.*/runs/run-001.stderr):$" "$work/out"
check "failed run: from line 42" test "$(grep "^  | " "$work/out" | head -n 1)" = "  | 42"
check "failed run: the last line shown" grep -qxF '  | tab\x09bell\x07' "$work/out"
# a failed timed run's stderr is named as the reason names the run
with_registry '.runbooks.fail.command = "n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count; if [ $n -ge 3 ]; then echo boom >&2; exit 1; fi"'
rm -f count
check "failed timed run: blocked (exit 1)" test "$(rc_of "$bin" run -q --no-repeat -w 0 -r 3 life.fail)" = 1
check "failed timed run: the reason's name" grep -q "reason      timed run 2 (#3) exited with status 1" "$work/out"
check "failed timed run: the stderr's heading, the same" grep -q "^stderr of timed run 2 (#3) (1 line of experiments/.*/runs/run-003.stderr):$" "$work/out"
rm -f count
with_registry '.runbooks.fail.command = "seq 1 50 >&2; printf \"tab\\tbell\\a\\n\" >&2; exit 1"'
sid=$(jq -r '.session_id' <("$bin" run -q --no-repeat --json life.fail))
check "session of a failed run, from a subfolder: the same lines" \
	bash -c 'cd docs && "$1" session "$2" | grep -c "^  | " | grep -qx 10' _ "$bin" "$sid"
# a store shared by projects: the folder here that the session names is
# another project's experiment (its manifest names another session)
cap=$(jq -r '.runs[0].stderr' <("$bin" session "$sid" --json))
exp=${cap%/runs/*}
cp "$exp/manifest.json" "$work/manifest.json"
jq '.session_id = 999' "$work/manifest.json" >"$exp/manifest.json"
check "session whose capture is another's: exit 0" test "$(rc_of "$bin" session "$sid")" = 0
check "session whose capture is another's: said" grep -qxF "stderr of smoke run 1: not shown: $cap cannot be told to be this session's: $exp/manifest.json names session 999 (projects that share a store number their experiments each on their own)" "$work/out"
check "session whose capture is another's: no lines" test "$(grep -c "^  | " "$work/out")" = 0
# a manifest in Python's json dialect (a NaN), which check reads: shown
sed 's/"schema_version": 1,/"schema_version": 1, "loss_floor": NaN,/' "$work/manifest.json" >"$exp/manifest.json"
check "session, a NaN in the manifest: stderr shown" \
	bash -c '"$1" session "$2" | grep -c "^  | " | grep -qx 10' _ "$bin" "$sid"
cp "$work/manifest.json" "$exp/manifest.json"
rm "$cap"
check "session whose capture is gone: exit 0" test "$(rc_of "$bin" session "$sid")" = 0
check "session whose capture is gone: no stderr lines" test "$(grep -c "^stderr of\|^  | " "$work/out")" = 0
with_registry '.'

# an eviction target that is not there, or holds no data: refused before
# anything is written (exit 3), as no step of the run makes it
: >data/empty.bin
for t in data/missing.bin data/empty.bin; do
	before=$(ls experiments | wc -l)
	with_registry ".runbooks.ok.measure.cache = {\"state\": \"cold\", \"evict\": [\"$t\"]}"
	check "evict $t: refused (exit 3)" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 3
	check "evict $t: said, naming the runbook" grep -qF "runbook 'ok', measure.cache.evict '$t': " "$work/err"
	check "evict $t: no experiment written" test "$(ls experiments | wc -l)" = "$before"
done
rm data/empty.bin
with_registry '.'

# a declared output's folder that cannot be made (a link to nothing, as a
# scratch folder not mounted): recorded failed, never left running
ln -s "$work/nowhere" gone
with_registry '.runbooks.ok.measure.outputs = ["gone/{id}.txt"] | .runbooks.ok.command = "printf hi > gone/{id}.txt"'
check "output folder cannot be made: exit 4" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 4
check "output folder cannot be made: said" grep -qF "the folder of the runbook's declared output 'gone/life.ok.txt' cannot be made" "$work/err"
gexp=$(ls -t experiments | grep -- '-life-ok' | head -n 1)
check "output folder cannot be made: recorded failed" jqe '.status == "failed"' "experiments/$gexp/manifest.json"
check "output folder cannot be made: its row too" grep -q "^| $gexp | .* | failed | " experiments/RUNS.md
rm gone
# the folder of a pattern whose last name alone has wildcards is made first
with_registry '.runbooks.ok.measure.outputs = ["deep/{id}/x/*.bin"] | .runbooks.ok.command = "printf hello > deep/{id}/x/a.bin"'
check "a pattern's folder: made, exit 0" test "$(rc_of "$bin" run -q --no-repeat life.ok)" = 0
rm -rf deep
with_registry '.'

check "check passes after every experiment" "$bin" check
[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
echo "run blocks: all checks passed"
