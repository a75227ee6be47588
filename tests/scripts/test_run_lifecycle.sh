#!/usr/bin/env bash
# benchgate run: fail-closed preflight refusals, a completed and a failed
# experiment, the lease race, a removed lock file, SIGINT mid-run, SIGKILL
# then abandon; `check` passes after each, and nothing written holds the
# scratch path or $HOME.
set -u
# the machine lease of the tests' runs is their own (tests/run-all sets it),
# never this machine's /run/lock/benchgate-machine.lock
: "${BENCHGATE_MACHINE_LOCK:?run the tests through tests/run-all, or set BENCHGATE_MACHINE_LOCK to a file of your own}"
bin=${BENCHGATE:?}
src=${BENCHGATE_SOURCE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
work=$(mktemp -d)
# a sleep duration of our own, so that cleaning up never touches another test's processes;
# it ends in 1, because the command gets the gate's number as Python prints it
# (4.100000 becomes "sleep 4.1", which "pgrep -f 'sleep 4.100000'" never finds)
nap=$(printf '4.%05d1' $(( ($$ * 7919 + RANDOM) % 100000 )))
shm=""
trap 'pkill -f "sleep $nap" 2>/dev/null; rm -rf "$work"; [ -z "$shm" ] || rm -f "$shm"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
jqe() { local out; out=$(jq -e "$@") || return 1; [ -n "$out" ]; } # as in checks.sh
expect_rc() { # want label cmd...
	local want=$1 label=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	local rc=$?
	[ "$rc" = "$want" ] || { fail "$label: exit $rc, expected $want"; sed 's/^/    /' "$work/out" "$work/err" | head -20; }
}
mentions() { grep -qF -- "$2" "$work/err" "$work/out" || fail "$1: output does not mention '$2'"; }

cp -R "$src/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
sed -i "s/\"sleep_seconds\": 4.321/\"sleep_seconds\": $nap/" benchmarks/benchmark_registry.json
"$bin" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
run() { "$bin" run -q "$@"; }
check_ok() { "$bin" check >"$work/check" 2>&1 || { fail "check after $1"; sed 's/^/    /' "$work/check"; }; }

# preflight refusals: exit 3, a reason, nothing written
expect_rc 3 "missing environment" run life.env
mentions "missing environment" "required environment variable 'LIFECYCLE_TEST_NEEDED' is not set"
expect_rc 3 "other computer" run life.other
mentions "other computer" "gate 'life.other' is for 'Some other box'"
mentions "other computer: why this machine is the one it is" "(Linux on $(uname -m), one of the rule's machine_in: x86_64, aarch64, riscv64, ppc64le, s390x, armv7l, i686)"
expect_rc 3 "unsupported" run life.unsupported
mentions "unsupported" "not on this platform"
expect_rc 3 "no question" run life.noq
mentions "no question" "falsifiable question"
expect_rc 3 "blank question" run life.noq --question " 	 "
mentions "blank question" "falsifiable question"
# nothing in it shows (a zero-width space, a Hangul filler): as blank
expect_rc 3 "invisible question" run life.noq --question "$(printf '\342\200\213 \343\205\244')"
mentions "invisible question" "falsifiable question"
# a question goes into the manifest, the session and RUNS.md: one line of
# UTF-8 text (bytes that are not UTF-8 crashed the run once it measured)
expect_rc 2 "question not UTF-8" run life.ok --question "$(printf 'bad \377 byte')"
mentions "question not UTF-8" "--question must be one line of text: it is not valid UTF-8"
expect_rc 2 "question of two lines" run life.ok --question "$(printf 'two\nlines')"
mentions "question of two lines" "--question must be one line of text: it holds a control character"
sed -i 's/"priority": 3,/"priority": 9,/' benchmarks/benchmark_registry.json
expect_rc 3 "invalid registry" run life.ok
mentions "invalid registry" "the registry does not validate"
git checkout -q benchmarks/benchmark_registry.json
expect_rc 3 "private path" run life.ok --question "Is /Home/someone/data.h5 slower?"
mentions "private path" "the question holds an absolute private path ('Is /Home/someone/data.h5 slower?')"
mv data/input.txt data/moved.txt
expect_rc 3 "missing input" run life.ok
mentions "missing input" "declared input 'data/input.txt'"
mentions "missing input: why" "cannot be hashed (No such file or directory)"
mv data/moved.txt data/input.txt
# a measure object the engine would not honour (a typo, a quoted number) is
# refused before anything is written, not ignored
cp benchmarks/benchmark_registry.json "$work/registry.json"
bad_measure() { # label jq-filter text [run options]
	local label=$1 filter=$2 text=$3
	shift 3
	jq "$filter" "$work/registry.json" >benchmarks/benchmark_registry.json && "$bin" render >/dev/null
	expect_rc 3 "$label" run life.ok "$@"
	mentions "$label" "$text"
}
bad_measure "measure: a typo" '.runbooks.ok.measure.repetition = 3' "measure has no field 'repetition'"
bad_measure "measure: no runs" '.runbooks.ok.measure.repetitions = 0' "measure.repetitions must be an integer >= 1"
bad_measure "measure: a typo's worth of runs" '.runbooks.ok.measure.repetitions = 100000001' "measure.repetitions must be an integer >= 1 and <= 100000000"
bad_measure "measure: a typo's worth of warmups" '.runbooks.ok.measure.warmups = 1000000000' "measure.warmups must be an integer >= 0 and <= 100000000"
# ... also when -w, -r or --timeout would replace the bad value
bad_measure "measure: quoted runs, -r given" '.runbooks.ok.measure.repetitions = "5"' "measure.repetitions must be an integer >= 1" -r 1
bad_measure "measure: no runs, -r given" '.runbooks.ok.measure.repetitions = 0' "measure.repetitions must be an integer >= 1" -r 1
bad_measure "measure: negative warmups, -w given" '.runbooks.ok.measure.warmups = -1' "measure.warmups must be an integer >= 0" -w 0
bad_measure "measure: quoted timeout, --timeout given" '.runbooks.ok.measure.timeout_seconds = "60"' "measure.timeout_seconds must be a number of seconds > 0" --timeout 30
bad_measure "measure: a timeout past 1e9 s" '.runbooks.ok.measure.timeout_seconds = 1e10' "measure.timeout_seconds must be a number of seconds > 0 and <= 1e9"
bad_measure "measure: no sample interval" '.runbooks.ok.measure.sample_interval_ms = 0' "measure.sample_interval_ms must be an integer of milliseconds >= 1 and <= 100000000"
bad_measure "measure: quoted sample interval" '.runbooks.ok.measure.sample_interval_ms = "5"' "measure.sample_interval_ms must be an integer of milliseconds >= 1"
bad_measure "measure: quoted floor" '.runbooks.ok.measure.memory_floor_bytes = "6GiB"' "measure.memory_floor_bytes must be a number"
bad_measure "measure: a number" '.runbooks.ok.measure = 5' "runbook 'ok': 'measure' must be an object"
bad_measure "parity: no outputs" '.runbooks.ok.measure |= del(.outputs)' "runbook 'ok': parity needs measure.outputs"
bad_measure "deterministic: no outputs" '.runbooks.ok.measure |= (del(.outputs) | del(.parity) | .deterministic = true)' "runbook 'ok': deterministic needs measure.outputs (the files compared run by run)"
bad_measure "measure: one output" '.runbooks.ok.measure.outputs = "out/x.txt"' "measure.outputs must be a list of paths"
bad_measure "parity: a string" '.runbooks.ok.measure.parity = "sha256"' "measure.parity must be {\"kind\": \"sha256\""
bad_measure "parity: no kind" '.runbooks.ok.measure.parity |= del(.kind)' "measure.parity needs a \"kind\""
bad_measure "parity: unknown kind" '.runbooks.ok.measure.parity.kind = "md5"' "measure.parity has an unknown kind 'md5'"
bad_measure "parity: short digest" '.runbooks.ok.measure.parity.expected = "2cf24dba"' "measure.parity.expected must be a SHA-256 of 64 hexadecimal digits"
bad_measure "parity: a typo" '.runbooks.ok.measure.parity.expceted = "x"' "measure.parity of kind 'sha256' has no field 'expceted' (its fields: kind, expected)"
bad_measure "parity: quoted rtol" '.runbooks.ok.measure.parity = {"kind": "allclose", "reference": "r.npy", "rtol": "1e-5"}' "measure.parity.rtol must be a number >= 0"
bad_measure "parity: negative atol" '.runbooks.ok.measure.parity = {"kind": "allclose", "reference": "r.npy", "atol": -1}' "measure.parity.atol must be a number >= 0"
bad_measure "parity: no reference" '.runbooks.ok.measure.parity = {"kind": "allclose"}' "measure.parity.reference must name the reference .npy file"
bad_measure "parity: empty command" '.runbooks.ok.measure.parity = {"kind": "command", "command": ""}' "measure.parity.command must be a nonempty command"
bad_measure "environment: one name" '.runbooks.ok.required_environment = "HOME"' "required_environment must be a list of variable names"
bad_measure "environment: an assignment" '.runbooks.ok.required_environment = ["HOME", "CUDA_VISIBLE_DEVICES=0"]' "required_environment[1] 'CUDA_VISIBLE_DEVICES=0' is not a variable name"
bad_measure "environment: an empty name" '.runbooks.ok.required_environment = [""]' "required_environment[0] '' is not a variable name"
bad_measure "question: a number" '.runbooks.ok.question = 42' "runbook 'ok': question must be a text"
bad_measure "inputs: an object" '.runbooks.ok.inputs = {"path": "data/input.txt"}' "inputs must be a list of {\"dataset_id\": ID, \"path\": PATH}"
bad_measure "inputs: a path" '.runbooks.ok.inputs = ["data/input.txt"]' "inputs[0] must be an object"
bad_measure "inputs: a typo" '.runbooks.ok.inputs[0].sha = "x"' "inputs[0] has no field 'sha' (its fields: dataset_id, path)"
bad_measure "inputs: numeric id" '.runbooks.ok.inputs[0].dataset_id = 7' "inputs[0].dataset_id must be a string"
bad_measure "inputs: no path" '.runbooks.ok.inputs[0] |= del(.path)' "inputs[0] needs a \"path\" (a nonempty string)"
bad_measure "cache: cold, nothing evicted" '.runbooks.ok.measure.cache = {"state": "cold"}' "measure.cache.state \"cold\" needs measure.cache.evict"
bad_measure "cache: warm, evicted" '.runbooks.ok.measure.cache = {"state": "warm", "evict": ["data/input.txt"]}' "measure.cache.evict makes every run cold, but measure.cache.state is 'warm'"
bad_measure "command: unknown field" '.runbooks.ok.command = "printf hello > out/{idd}.txt"' "template 'printf hello > out/{idd}.txt': gate 'life.ok' has no field 'idd'"
bad_measure "outputs: unknown field" '.runbooks.ok.measure.outputs = ["out/{nope}.txt"]' "gate 'life.ok' has no field 'nope'"
bad_measure "question: unknown field" '.runbooks.ok.question = "Is {gate} fast?"' "template 'Is {gate} fast?': gate 'life.ok' has no field 'gate'"
bad_measure "inputs: unknown field" '.runbooks.ok.inputs[0].path = "data/{dataset}.txt"' "gate 'life.ok' has no field 'dataset'"
bad_measure "thresholds: a typo" '.thresholds = [{"gate": "life.ok", "K": 3}]' "thresholds[0] has no field 'K'"
bad_measure "thresholds: k 0" '.thresholds = [{"key": "x", "k": 0}]' "thresholds[0].k must be a number > 0"
bad_measure "thresholds: a window below the minimum" '.thresholds = [{"gate": "life.ok", "window": 3}]' "thresholds[0].window 3 is below the comparison contract's minimum of 5 accepted sessions"
# an entry that could match nothing would be ignored without a word: a key
# prefix (what history shows), a gate the registry does not have
bad_measure "thresholds: a key prefix" '.thresholds = [{"key": "0123abcd", "k": 2}]' "thresholds[0].key '0123abcd' is not a comparison key id: give all 64 lower-case hexadecimal digits, as 'benchgate key SESSION' prints them"
bad_measure "thresholds: an unknown gate" '.thresholds = [{"gate": "life.ok", "k": 2}, {"gate": "life.okk", "k": 2}]' "thresholds[1].gate 'life.okk' names no gate of the registry"
# a file to make cold on a memory file system (through a link, as a dataset
# moved to /dev/shm): refused before anything is written, not measured only
# to be blocked
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	shm=$(mktemp /dev/shm/benchgate-test-XXXXXX)
	printf 'data\n' >"$shm" && ln -s "$shm" data/in-memory.bin
	before=$(ls experiments | wc -l)
	bad_measure "cache: evict a tmpfs file" '.runbooks.ok.measure.cache = {"state": "cold", "evict": ["data/in-memory.bin"]}' \
		"runbook 'ok', measure.cache.evict 'data/in-memory.bin': is on a memory file system (tmpfs), whose pages are the file itself: they cannot be evicted, so no run of it can be cold"
	[ "$(ls experiments | wc -l)" = "$before" ] || fail "cache: evict a tmpfs file: an experiment was written"
	rm -f "$shm" data/in-memory.bin
fi
cp "$work/registry.json" benchmarks/benchmark_registry.json && "$bin" render >/dev/null
# the comparison key comes from the profile matrix: a broken one is refused,
# never replaced by the default key fields
cp benchmarks/profile_matrix.json "$work/profile.json"
bad_profile() { # label jq-filter text
	jq "$2" "$work/profile.json" >benchmarks/profile_matrix.json
	expect_rc 3 "$1" run life.ok
	mentions "$1" "$3"
}
printf '{"comparison_contract": {"comparison_key": [,]}}' >benchmarks/profile_matrix.json
expect_rc 3 "profile: not JSON" run life.ok
mentions "profile: not JSON" "benchmarks/profile_matrix.json:1:45: invalid JSON"
mentions "profile: not JSON" "'run' takes the comparison key from it"
bad_profile "profile: a list" '[.]' "the profile matrix must be a JSON object"
bad_profile "profile: no contract" 'del(.comparison_contract)' "'comparison_contract' is missing"
bad_profile "profile: key a string" '.comparison_contract.comparison_key = "gate"' "comparison_key must be a nonempty list of field names"
bad_profile "profile: key empty" '.comparison_contract.comparison_key = []' "comparison_key must be a nonempty list of field names"
bad_profile "profile: key a number" '.comparison_contract.comparison_key += [3]' "comparison_key[8] must be a field name"
bad_profile "profile: key twice" '.comparison_contract.comparison_key += ["gate"]' "comparison_key names 'gate' twice"
bad_profile "profile: quoted minimum" '.comparison_contract.minimum_accepted_sessions_before_hard_threshold = "5"' "minimum_accepted_sessions_before_hard_threshold must be a whole number >= 0"
bad_profile "profile: fractional minimum" '.comparison_contract.minimum_accepted_sessions_before_hard_threshold = 2.5' "must be a whole number >= 0"
cp "$work/profile.json" benchmarks/profile_matrix.json
git diff --quiet || fail "the registry or the document was not restored"
[ "$(ls experiments)" = "RUNS.md" ] || fail "a refused preflight wrote an experiment: $(ls experiments)"
git diff --quiet experiments/RUNS.md || fail "a refused preflight changed RUNS.md"
# a merge left its conflict in RUNS.md: refused, the file kept as it is
cp experiments/RUNS.md "$work/runs.md"
printf '<<<<<<< HEAD\n| a | b | c | d | e | f |\n=======\n| g | h | i | j | k | l |\n>>>>>>> topic\n' >>experiments/RUNS.md
line=$(grep -n '^<<<<<<< HEAD$' experiments/RUNS.md | cut -d: -f1)
cp experiments/RUNS.md "$work/conflicted.md"
expect_rc 3 "RUNS.md with a merge conflict" run life.ok
mentions "RUNS.md with a merge conflict" "experiments/RUNS.md:$line: a merge conflict marker: resolve the conflict (keep both sides' rows, one experiment a row) and commit it before running"
cmp -s experiments/RUNS.md "$work/conflicted.md" || fail "RUNS.md with a merge conflict: it was changed"
[ "$(ls experiments)" = "RUNS.md" ] || fail "RUNS.md with a merge conflict: an experiment was written"
cp "$work/runs.md" experiments/RUNS.md
# a '|' in a cell must not shift the columns `check` reads (it splits at every '|')
LIFECYCLE_TEST_NEEDED=1 expect_rc 0 "environment set" run life.env --question "Does true|false stay true?"
grep -q "| Does true&#124;false stay true? |" experiments/RUNS.md || fail "a '|' in the question is not written as &#124;"
check_ok "a '|' in the question"

# a diagnostic session may run on another computer, and says so
expect_rc 0 "diagnostic elsewhere" run life.other --tier diagnostic
check_ok "diagnostic"

# completed and failed experiments
expect_rc 0 "ok" run life.ok
id=$(ls -t experiments | grep ok | head -n 1)
grep -q '"status": "completed"' "experiments/$id/manifest.json" || fail "ok: manifest not completed"
grep -q "^| $id | .* | ok | p50 " experiments/RUNS.md || fail "ok: RUNS.md row"
[ -s "experiments/$id/runs.jsonl" ] || fail "ok: no runs.jsonl"
check_ok "a completed experiment"
expect_rc 1 "fail" run life.fail
id=$(ls -t experiments | grep fail | head -n 1)
grep -q '"status": "failed"' "experiments/$id/manifest.json" || fail "fail: manifest not failed"
grep -q "^| $id | .* | failed | blocked: " experiments/RUNS.md || fail "fail: RUNS.md row"
grep -q "failing" "experiments/$id/runs/run-001.stderr" || fail "fail: stderr not captured"
# ...and shown: why the command failed is on the screen
mentions "fail: stderr shown" "stderr of smoke run 1 (1 line of experiments/$id/runs/run-001.stderr):"
mentions "fail: its line" "  | failing"
check_ok "a failed experiment"

# the lease race: two runs on one device, exactly one proceeds
"$bin" run -q life.slow >"$work/a.out" 2>"$work/a.err" &
pa=$!
"$bin" run -q life.slow >"$work/b.out" 2>"$work/b.err" &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
if [ "$ra:$rb" = "0:3" ]; then loser=b; elif [ "$ra:$rb" = "3:0" ]; then loser=a; else
	fail "lease race: exits $ra and $rb, expected one 0 and one 3"; sed 's/^/    a: /' "$work/a.err"; loser=b; fi
grep -q "device 'test-host' is leased by experiment 20" "$work/$loser.err" || { fail "lease race: the refusal does not name the owner"; cat "$work/$loser.err"; }
check_ok "the lease race"

# the lock file removed while its holder runs: the device is still in use, so
# a second run is refused, and the holder's session is blocked (its lease no
# longer excludes anyone)
"$bin" run -q life.slow >"$work/a.out" 2>"$work/a.err" &
pa=$!
for _ in $(seq 50); do pgrep -f "sleep $nap" >/dev/null && break; sleep 0.1; done
rm -f .benchgate/leases/test-host.lock
"$bin" lease status | grep -q "test-host *held" || { fail "removed lock: lease status does not say held"; "$bin" lease status; }
expect_rc 3 "removed lock: a second run" run life.slow
mentions "removed lock: a second run" "whose lock file was removed while it ran"
wait $pa; ra=$?
[ "$ra" = 1 ] || { fail "removed lock: the holder exits $ra, expected 1 (blocked)"; cat "$work/a.err"; }
id=$(ls -t experiments | grep slow | head -n 1)
grep -q '"failure_reason": "the device lease was not held for the whole session"' "experiments/$id/manifest.json" ||
	fail "removed lock: the holder's session is not blocked for its lease"
"$bin" lease status | grep -q "test-host *free" || { fail "removed lock: lease not free afterwards"; "$bin" lease status; }
check_ok "a removed lock file"
# an owner record whose pid now names a process younger than the record (the
# pid was reused) is stale, not held
sleep "$nap" &
ps=$!
owner() { printf '{"device": "spare", "experiment_id": "x", "pid": %d, "host": "%s", "user": "u", "started": "%s"}' \
	"$ps" "$(uname -n)" "$1" >.benchgate/leases/spare.json; }
owner 2001-01-01T00:00:00.000000Z
"$bin" lease status | grep -q "spare *stale" || { fail "reused pid: lease status does not say stale"; "$bin" lease status; }
owner 2099-01-01T00:00:00.000000Z
"$bin" lease status | grep -q "spare *held" || { fail "live owner without a lock: lease status does not say held"; "$bin" lease status; }
kill "$ps"; wait "$ps" 2>/dev/null
"$bin" lease status | grep -q "spare *stale" || { fail "dead owner without a lock: lease status does not say stale"; "$bin" lease status; }
rm -f .benchgate/leases/spare.json

# SIGINT mid-run: the tree dies, the experiment fails as interrupted, the lease is free
"$bin" run -q life.slow >"$work/i.out" 2>"$work/i.err" &
pi=$!
for _ in $(seq 50); do pgrep -f "sleep $nap" >/dev/null && break; sleep 0.1; done
kill -INT $pi
wait $pi; ri=$?
[ "$ri" = 4 ] || fail "SIGINT: exit $ri, expected 4"
sleep 0.2
pgrep -f "sleep $nap" >/dev/null && fail "SIGINT: the run's child survived"
id=$(ls -t experiments | grep slow | head -n 1)
grep -q '"failure_reason": "interrupted"' "experiments/$id/manifest.json" || fail "SIGINT: not recorded as interrupted"
grep -q "^| $id | .* | failed | failed: interrupted" experiments/RUNS.md || fail "SIGINT: RUNS.md row"
"$bin" lease status | grep -q "test-host *free" || { fail "SIGINT: lease not released"; "$bin" lease status; }
check_ok "an interrupted experiment"

# repeat passes an interruption on to its run, waits for it, and starts no other
sid=$("$bin" sessions --json | jq '[.[] | select(.gate_id == "life.slow")][0].id')
"$bin" repeat "$sid" >"$work/r.out" 2>"$work/r.err" &
pr=$!
for _ in $(seq 50); do pgrep -f "sleep $nap" >/dev/null && break; sleep 0.1; done
kill -TERM $pr
wait $pr; rr=$?
[ "$rr" = 4 ] || { fail "repeat interrupted: exit $rr, expected 4"; cat "$work/r.err"; }
pgrep -f "sleep $nap" >/dev/null && fail "repeat interrupted: the run's child survived"
grep -q "run 2 of 2" "$work/r.err" && fail "repeat interrupted: a second run started"
id=$(ls -t experiments | grep slow | head -n 1)
grep -q '"failure_reason": "interrupted"' "experiments/$id/manifest.json" || fail "repeat interrupted: the run is not recorded as interrupted"
"$bin" lease status | grep -q "test-host *free" || { fail "repeat interrupted: lease not released"; "$bin" lease status; }
check_ok "an interrupted repeat"

# repeat killed where it cannot pass a signal on (SIGKILL): its run stops
# as on a SIGTERM (the kernel sends it), records the experiment, frees the lease
"$bin" repeat "$sid" >"$work/r.out" 2>"$work/r.err" &
pr=$!
for _ in $(seq 50); do pgrep -f "sleep $nap" >/dev/null && break; sleep 0.1; done
kill -KILL $pr
wait $pr 2>/dev/null
for _ in $(seq 100); do "$bin" lease status | grep -q "test-host *free" && break; sleep 0.1; done
"$bin" lease status | grep -q "test-host *free" || { fail "repeat killed: its run still holds the lease"; "$bin" lease status; }
pgrep -f "sleep $nap" >/dev/null && fail "repeat killed: the run's child survived"
id=$(ls -t experiments | grep slow | head -n 1)
grep -q '"failure_reason": "interrupted"' "experiments/$id/manifest.json" || fail "repeat killed: the run is not recorded as interrupted"
check_ok "a killed repeat"

# Ctrl-C reaches the whole process group, git too: a git the signal
# stopped is the interruption, exit 4, never a refusal (exit 3). A git
# that sleeps on its Nth call, run in a group of its own
realgit=$(command -v git)
mkdir "$work/gitbin"
cat >"$work/gitbin/git" <<EOF
#!/bin/sh
n=\$(cat "$work/git-calls" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n >"$work/git-calls"
[ "\$n" = "\$(cat "$work/git-slow")" ] && { touch "$work/git-slowed"; sleep 5; }
exec "$realgit" "\$@"
EOF
chmod +x "$work/gitbin/git"
ctrl_c() { # N label cmd...: Ctrl-C while the Nth git call runs
	local n=$1 label=$2
	shift 2
	rm -f "$work/git-calls" "$work/git-slowed"
	echo "$n" >"$work/git-slow"
	PATH="$work/gitbin:$PATH" setsid "$@" >"$work/out" 2>"$work/err" &
	local pc=$!
	for _ in $(seq 100); do [ -e "$work/git-slowed" ] && break; sleep 0.05; done
	[ -e "$work/git-slowed" ] || fail "$label: git was never called $n times"
	kill -INT -- "-$pc"
	wait $pc
	local rc=$?
	[ "$rc" = 4 ] || { fail "$label: exit $rc, expected 4"; sed 's/^/    /' "$work/out" "$work/err" | head -20; }
}
before=$(ls experiments | grep -c ok)
ctrl_c 1 "Ctrl-C in the preflight's git" "$bin" run -q life.ok -r 1 -w 0
mentions "Ctrl-C in the preflight's git" "interrupted before the experiment started; nothing was recorded"
[ "$(ls experiments | grep -c ok)" = "$before" ] || fail "Ctrl-C in the preflight's git: an experiment was made"
# the first session's git calls are 1 and 2 (the preflight's), 3 to 6 (the
# session's, at its start and its end); 7 is the second session's preflight
ctrl_c 7 "Ctrl-C between sessions" "$bin" run -q life.ok -r 1 -w 0 --times 2
mentions "Ctrl-C between sessions" "interrupted before the experiment started; nothing was recorded (session 2 of 2); the sessions made are stored"
[ "$(ls experiments | grep -c ok)" = "$((before + 1))" ] || fail "Ctrl-C between sessions: not one experiment made"
ctrl_c 1 "Ctrl-C in repeat's run's git" "$bin" repeat "$sid"
mentions "Ctrl-C in repeat's run's git" "interrupted before the experiment started"
"$bin" lease status | grep -q "test-host *free" || { fail "Ctrl-C in git: lease not released"; "$bin" lease status; }
check_ok "Ctrl-C in git"

# SIGKILL of benchgate: the manifest stays running; abandon marks it failed
"$bin" run -q life.slow >"$work/k.out" 2>"$work/k.err" &
pk=$!
for _ in $(seq 50); do pgrep -f "sleep $nap" >/dev/null && break; sleep 0.1; done
kill -KILL $pk
wait $pk 2>/dev/null
pkill -f "sleep $nap"
id=$(ls -t experiments | grep slow | head -n 1)
grep -q '"status": "running"' "experiments/$id/manifest.json" || fail "SIGKILL: manifest not running"
"$bin" experiments | grep -q "^$id .*running.*owner is gone" || { fail "SIGKILL: experiments does not show a dead owner"; "$bin" experiments; }
# the dead owner's pid taken by a process started later (a reboot, a busy
# container): still gone, and abandon is not refused (1.5 s later: /proc
# tells a process's start to within a second)
sleep 1.5
sleep "$nap" &
ps=$!
jq --argjson p "$ps" '.execution.pid = $p' "experiments/$id/manifest.json" >"$work/m.json" &&
	cp "$work/m.json" "experiments/$id/manifest.json"
"$bin" experiments | grep -q "^$id .*running.*owner is gone" || { fail "reused pid: experiments takes it for the owner"; "$bin" experiments; }
kill "$ps"; wait "$ps" 2>/dev/null
"$bin" lease status | grep -q "test-host *stale" || { fail "SIGKILL: lease not stale"; "$bin" lease status; }
expect_rc 2 "abandon without why" "$bin" experiments abandon "$id"
expect_rc 2 "abandon with a private path" "$bin" experiments abandon "$id" --why "logs in /home/someone/x"
mentions "abandon with a private path" "the reason holds an absolute private path"
# a SIGTERM while abandon waits for the RUNS.md lock ends the wait before
# the manifest is written (the lock is taken first): the two never disagree,
# and Ctrl-C is not ignored while another process holds the lock
flock .benchgate/runs-index.lock sleep 1 &
pl=$!
sleep 0.2
"$bin" experiments abandon "$id" --why "benchgate was killed in a test" >"$work/out" 2>"$work/err" &
pa=$!
sleep 0.3
kill -TERM $pa
wait $pa
rc_abandon=$?
wait $pl
grep -q '"failure_reason": "abandoned: benchgate was killed in a test"' "experiments/$id/manifest.json" &&
	! grep -q "^| $id | .* | failed | failed: abandoned: benchgate was killed in a test" experiments/RUNS.md &&
	fail "abandon stopped by SIGTERM: the manifest is failed but its RUNS.md row is not"
# (it ends as SIGTERM ends a program, before the lock's holder is done)
[ "$rc_abandon" = 143 ] || fail "abandon stopped by SIGTERM while waiting: exit $rc_abandon, not ended by the signal"
grep -q '"status": "running"' "experiments/$id/manifest.json" ||
	fail "abandon stopped by SIGTERM while waiting: the manifest was written"
# a SIGHUP it ignores (nohup) does not end the wait: the hang-up passes unnoticed
flock .benchgate/runs-index.lock sleep 1 &
pl=$!
sleep 0.2
(trap '' HUP; exec "$bin" experiments abandon "$id" --why "benchgate was killed in a test") >"$work/out" 2>"$work/err" &
pa=$!
sleep 0.3
kill -HUP $pa
wait $pa
rc_abandon=$?
wait $pl
[ "$rc_abandon" = 0 ] || { fail "abandon under nohup: a SIGHUP ended its wait (exit $rc_abandon)"; cat "$work/err"; }
grep -q '"status": "running"' "experiments/$id/manifest.json" &&
	expect_rc 0 "abandon" "$bin" experiments abandon "$id" --why "benchgate was killed in a test"
grep -q '"failure_reason": "abandoned: benchgate was killed in a test"' "experiments/$id/manifest.json" || fail "abandon: reason"
expect_rc 1 "abandon twice" "$bin" experiments abandon "$id" --why again
# the row's write lost (benchgate killed between the manifest and the row):
# abandon brings the row in line with the failed manifest
sed -i "s/^| $id | \(.*\) | failed | failed: abandoned: /| $id | \1 | running | failed: abandoned: /" experiments/RUNS.md
grep -q "^| $id | .* | running | " experiments/RUNS.md || fail "lost row: the test could not make the row running"
expect_rc 0 "lost row: abandon" "$bin" experiments abandon "$id" --why again
mentions "lost row: abandon" "its RUNS.md row, still 'running' (a write lost when benchgate was killed), now says failed"
grep -q "^| $id | .* | failed | failed: abandoned: benchgate was killed in a test" experiments/RUNS.md || fail "lost row: the row is not failed"
expect_rc 1 "lost row: abandon again" "$bin" experiments abandon "$id" --why again
check_ok "an abandoned experiment"
expect_rc 0 "after a stale lease" run life.ok
mentions "after a stale lease" "replaced a lease left by a process that is gone, which ran experiment $id; if that experiment still says running, abandon it ('benchgate experiments abandon $id --why TEXT')"
# the killed benchgate's run cgroup (where it could make one) was removed by that run's session
[ -z "$(find /sys/fs/cgroup -maxdepth 6 -name "benchgate-$pk-*" 2>/dev/null)" ] || fail "SIGKILL: a run cgroup of the killed benchgate is left"

# benchgate's own records do not make the source dirty
id=$(ls -t experiments | grep ok | head -n 1)
grep -q '"dirty": false' "experiments/$id/manifest.json" || fail "the experiments folder made the source dirty"
echo "an uncommitted change" >>data/input.txt
expect_rc 0 "dirty source" run life.ok
id=$(ls -t experiments | grep ok | head -n 1)
grep -q '"dirty": true' "experiments/$id/manifest.json" || fail "an uncommitted change was not seen as dirty"
grep -q '"diff_sha256": "[0-9a-f]\{64\}"' "experiments/$id/manifest.json" || fail "the dirty diff has no SHA-256"
# ... and such a session is decided, but does not join the baseline by itself
mentions "dirty source" "the source has uncommitted changes (diff SHA-256 "
mentions "dirty source" "not counted toward the baseline unless a person accepts it"
"$bin" history life.ok --json >"$work/hist" || fail "dirty source: history"
jqe '.[-1] | select(.curation == "pending" and .git_dirty == true and .decision != "block")' "$work/hist" ||
	{ fail "dirty source: not stored pending"; jq -c '.[-1] | {curation, git_dirty, decision}' "$work/hist"; }
jqe '[.[] | select(.git_dirty == false and .decision != "block") | .curation] | all(. != "pending")' "$work/hist" ||
	fail "dirty source: a clean session is pending"
git checkout -q data/input.txt

# benchgate's locks stay in its state folder: nothing hidden beside RUNS.md
hidden=$(ls -A experiments | grep '^\.' || true)
[ -z "$hidden" ] || fail "files beside RUNS.md that git would show: $hidden"

# timing "reported": the command's own samples time the session, each run's
# file is kept beside its captured output, its metrics reach the session
bad_measure "measure: bad timing" '.runbooks.ok.measure.timing = "wall"' 'measure.timing must be "process" or "reported"'
printf '%s\n' '#!/bin/sh' 'printf hello > "out/$1.txt"' \
	'echo "{\"samples_seconds\": [0.25, 0.5, 0.75], \"metrics\": {\"logical_resident_bytes\": 4096}}" >"$BENCHGATE_RESULT"' >report.sh
jq '.runbooks.ok.measure.timing = "reported" | .runbooks.ok.command = "sh report.sh {id}"' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add report.sh benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm reported || exit 1
expect_rc 0 "reported timing" run life.ok
id=$(ls -t experiments | grep ok | head -n 1)
for n in 001 002 005; do
	[ -s "experiments/$id/runs/run-$n.result.json" ] || fail "reported timing: run $n's result file was not kept"
done
grep -q "^| $id | .* | ok | reported p50 500" experiments/RUNS.md || fail "reported timing: RUNS.md row: $(grep "$id" experiments/RUNS.md)"
sid=$("$bin" sessions --json | jq 'max_by(.id).id')
"$bin" session "$sid" --json >"$work/reported.json" || fail "reported timing: session $sid"
jqe '.timing == "reported" and .statistics.reported_ns.count == 9 and .metrics.logical_resident_bytes == 4096' \
	"$work/reported.json" >/dev/null || fail "reported timing: the session's timing or metrics"
jqe --arg id "$id" '.runs[0].result_file == "experiments/\($id)/runs/run-001.result.json"' "$work/reported.json" >/dev/null ||
	fail "reported timing: the run record does not name its file relative to the root"
check_ok "a reported-timing experiment"

# a gate's value reaches the command as one word, whatever it holds: no
# shell expansion, no injection (the command template is the registry's,
# the values are data)
note='it'"'"'s $(touch pwned1); `touch pwned2` "quoted" {x} * ?'
jq --arg note "$note" '.runbooks.quote = (.runbooks.ok + {command: "printf %s {note} > out/quote.txt",
      measure: {warmups: 0, repetitions: 1, outputs: ["out/quote.txt"]}})
    | .gates += [(.gates[0] + {id: "life.quote", runbook: "quote", note: $note})]' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm quote || exit 1
expect_rc 0 "quoted value" run life.quote
[ "$(cat out/quote.txt)" = "$note" ] || fail "quoted value: the command got '$(cat out/quote.txt)'"
[ ! -e pwned1 ] && [ ! -e pwned2 ] || fail "quoted value: a gate's value was run as shell code"
check_ok "a quoted value"

# the runbook's memory sample interval is the session's (runs shorter than
# the default 5 ms then get a process-tree peak)
jq '.runbooks.ok.measure.sample_interval_ms = 2' "$work/registry.json" >benchmarks/benchmark_registry.json &&
	"$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm interval || exit 1
expect_rc 0 "sample interval" run life.ok -w 0 -r 1
sid=$("$bin" sessions --json | jq 'max_by(.id).id')
"$bin" session "$sid" --json >"$work/interval.json" || fail "sample interval: session $sid"
jqe '.options.sample_interval_ms == 2' "$work/interval.json" >/dev/null || fail "sample interval: not the session's"
check_ok "a sample interval"

# a run's captured output is kept to 1 MiB, and the cut is marked
jq '.runbooks.ok.command = "head -c 1500000 /dev/zero | tr \"\\\\0\" x; printf hello > out/{id}.txt"' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm loud || exit 1
expect_rc 0 "loud output" run life.ok -w 0 -r 1
id=$(ls -t experiments | grep ok | head -n 1)
cap="experiments/$id/runs/run-001.stdout"
[ "$(head -c 1048576 "$cap" | tr -d x | wc -c)" = 0 ] || fail "loud output: the first MiB is not the run's output"
[ "$(tail -c +1048577 "$cap")" = "$(printf '\n[benchgate: truncated at 1048576 bytes; the run wrote 1500000]')" ] ||
	fail "loud output: the capture is not cut at 1 MiB and marked: $(tail -c 80 "$cap")"
check_ok "a truncated capture"

# a run that writes 50 MB: benchgate keeps the first MiB as it goes and
# discards the rest, so the capture never holds more (looked at while each
# run waits, after writing, for the test's go), and the cut is marked
jq '.runbooks.ok.command = "head -c 50000000 /dev/zero | tr \"\\\\0\" y; : > out/printed; while [ ! -e out/go ]; do sleep 0.05; done; rm -f out/go out/printed; printf hello > out/{id}.txt"' \
	"$work/registry.json" >benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm chatty || exit 1
rm -f out/go out/printed
timeout 120 "$bin" run -q life.ok -w 0 -r 1 >"$work/out" 2>"$work/err" &
pc=$!
for n in 001 002; do
	for _ in $(seq 1200); do [ -e out/printed ] && break; sleep 0.05; done
	[ -e out/printed ] || { fail "chatty output: run $n did not get to its pause"; break; }
	id=$(ls -t experiments | grep ok | head -n 1)
	size=$(stat -c %s "experiments/$id/runs/run-$n.stdout")
	[ "$size" -le 1048576 ] || fail "chatty output: run $n's capture held $size bytes during the run"
	touch out/go
	for _ in $(seq 1200); do [ -e out/go ] || break; sleep 0.05; done
done
wait "$pc"
rc=$?
[ "$rc" = 0 ] || { fail "chatty output: exit $rc, expected 0"; sed 's/^/    /' "$work/err" | head -5; }
for n in 001 002; do
	cap="experiments/$id/runs/run-$n.stdout"
	[ "$(head -c 1048576 "$cap" | tr -d y | wc -c)" = 0 ] || fail "chatty output: run $n's first MiB is not the run's output"
	[ "$(tail -c +1048577 "$cap")" = "$(printf '\n[benchgate: truncated at 1048576 bytes; the run wrote 50000000]')" ] ||
		fail "chatty output: run $n's capture is not cut at 1 MiB and marked: $(tail -c 80 "$cap")"
done
rm -f out/go out/printed
check_ok "a chatty run"

# a declared input that changes during the session: its SHA-256 (and the
# key) describe the file before the first run, so the session is blocked
jq '.runbooks.ok.command = "printf hello > out/{id}.txt; touch data/input.txt"' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm touch || exit 1
expect_rc 1 "input changed" run life.ok -w 0 -r 1
mentions "input changed" "declared input 'data/input.txt' changed during the session"
check_ok "an input changed mid-session"
git checkout -q data/input.txt 2>/dev/null

# format specifications in the command and the outputs, as str.format_map
# applies them (the padded text one shell word); one Python raises on is a
# refusal before anything runs
jq '.runbooks.ok.command = "printf hello > out/{id:*>9}-{priority:03d}.txt" |
	.runbooks.ok.measure.outputs = ["out/{id:*>9}-{priority:03d}.txt"]' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm spec || exit 1
expect_rc 0 "format specification" run life.ok -w 0 -r 1 --no-repeat
[ -f "out/**life.ok-003.txt" ] || fail "format specification: the run did not write out/**life.ok-003.txt"
jq '.runbooks.ok.command = "printf hello > out/{id:d}.txt"' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm spec-bad || exit 1
expect_rc 3 "format specification refused" run life.ok -w 0 -r 1 --no-repeat
mentions "format specification refused" "'{id:d}': unknown format code 'd' for a string"
check_ok "format specifications"
# a field inside the template's own quotes gets its text, as outside them:
# "{x}", '{x}' and {x} each pass the gate's title as it is
jq '.gates[0].title = "a b \"q\" it'"'"'s $HOME" |
	.runbooks.ok.command = "printf hello > out/{id}.txt; printf %s \"{title}\" >q1.txt; printf %s '"'"'{title}'"'"' >q2.txt; printf %s {title} >q3.txt"' \
	"$work/registry.json" >benchmarks/benchmark_registry.json && "$bin" render >/dev/null
printf 'q1.txt\nq2.txt\nq3.txt\n' >>.git/info/exclude
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm quoted || exit 1
expect_rc 0 "a field in quotes" run life.ok -w 0 -r 1 --no-repeat
for q in q1 q2 q3; do
	[ "$(cat $q.txt)" = 'a b "q" it'"'"'s $HOME' ] || fail "a field in quotes: $q.txt holds '$(cat $q.txt)'"
done
rm -f q1.txt q2.txt q3.txt
# a command longer than Linux passes in one argument to sh -c can never
# start: refused before anything is written (exit 3), not a failed experiment
before=$(ls experiments | wc -l)
jq '.runbooks.ok.command = "printf hello > out/{id}.txt; : {id:>140000}"' "$work/registry.json" \
	>benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm long || exit 1
expect_rc 3 "command too long" run life.ok -w 0 -r 1 --no-repeat
mentions "command too long" "runbook 'ok': the command of gate 'life.ok' is 140036 bytes once its fields are replaced, and Linux passes at most $(( $(getconf PAGESIZE) * 32 - 1 )) bytes in one argument to /bin/sh -c"
[ "$(ls experiments | wc -l)" = "$before" ] || fail "command too long: an experiment was written"
cp "$work/registry.json" benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm restore || exit 1

# a declared input that is a folder (a dataset of many files, as Zarr): its
# SHA-256 is that of the sha256sum listing of its files, and a file changed
# or added in it during the session blocks the session
mkdir -p "$work/dirin" && cd "$work/dirin" || exit 1
cp -R "$src/tests/cli/trees/lifecycle/." .
rm data/input.txt && mkdir -p data/input.txt/sub
printf 'a\n' >data/input.txt/c0 && printf 'b\n' >data/input.txt/sub/c1 && printf 'x' >'data/input.txt/a b'
# names sha256sum escapes (a backslash, a carriage return) are listed as it lists them
printf 'y' >'data/input.txt/back\slash' && printf 'z' >"data/input.txt/$(printf 'car\rriage')"
"$bin" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
expect_rc 0 "folder input: a session" "$bin" run -q --no-repeat --json -w 0 -r 1 life.ok
want=$(cd data/input.txt && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sed 's|  ./|  |' |
	sha256sum | cut -c1-64)
id=$(jq -r .experiment_id "$work/out")
jqe --arg want "$want" '.inputs[0].sha256 == $want' "experiments/$id/manifest.json" ||
	fail "folder input: the SHA-256 is not that of its files' listing"
jqe --arg want "$want" '.session.context.source_identity == [$want]' "$work/out" ||
	fail "folder input: the key does not name it"
for change in "echo more >>data/input.txt/sub/c1" "touch data/input.txt/sub/new"; do
	jq --arg c "printf hello > out/{id}.txt; $change" '.runbooks.ok.command = $c' \
		"$src/tests/cli/trees/lifecycle/benchmarks/benchmark_registry.json" >benchmarks/benchmark_registry.json &&
		"$bin" render >/dev/null
	git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm change || exit 1
	expect_rc 1 "folder input, $change" "$bin" run -q --no-repeat -w 0 -r 1 life.ok
	mentions "folder input, $change" "declared input 'data/input.txt' changed during the session"
done
# what a listing of files cannot name: refused before anything runs
before=$(ls experiments | wc -l)
ln -s ../../data data/input.txt/loop
expect_rc 3 "folder input: a link to a folder" "$bin" run -q -w 0 -r 1 life.ok
mentions "folder input: a link to a folder" "declared input 'data/input.txt' cannot be hashed (data/input.txt/loop: cannot read: a link to a folder (declare the folder it leads to instead)); make it readable regular files and folders (no link to nothing, no pipe or device), or declare another path"
# a loop of links is said as one, not as "a link to nothing"
rm data/input.txt/loop && ln -s loop2 data/input.txt/loop && ln -s loop data/input.txt/loop2
expect_rc 3 "folder input: a loop of links" "$bin" run -q -w 0 -r 1 life.ok
mentions "folder input: a loop of links" ": cannot read: a loop of links); make it readable"
rm data/input.txt/loop data/input.txt/loop2
[ "$(ls experiments | wc -l)" = "$before" ] || fail "folder input: a refused run wrote an experiment"
cd "$work/p" || exit 1

# nothing written holds the scratch folder or the home directory
if grep -rqF -e "$work" -e "$HOME/" experiments; then fail "an absolute path was written: $(grep -rlF -e "$work" -e "$HOME/" experiments | head -3)"; fi
# ... nor what a run printed: its captured output holds a home written as
# in the session document (a traceback's file names were committed as
# printed), and the manifest's SHA-256 is of what is kept
jq --arg c 'printf hello > out/{id}.txt; printf "Traceback: File /%s/ana/proj/k.py\n" home >&2' '.runbooks.ok.command = $c' \
	"$work/registry.json" >benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm capture || exit 1
expect_rc 0 "a home in the capture: a session" "$bin" run -q --no-repeat -w 0 -r 1 life.ok
id=$(ls -t experiments | grep ok | head -n 1)
grep -qxF "Traceback: File ~ana/proj/k.py" "experiments/$id/runs/run-001.stderr" || fail "a home in the capture: not written as ~ana"
if grep -rqi "/home/ana" experiments; then fail "a home in the capture: kept"; fi
check_ok "a home in the capture"
cp "$work/registry.json" benchmarks/benchmark_registry.json && "$bin" render >/dev/null
git add benchmarks docs && git -c user.email=t@t -c user.name=t commit -qm restore || exit 1
# a repository that names commits with SHA-256: check needs a 40-digit
# revision, so run refuses before writing anything
cp -R "$src/tests/cli/trees/lifecycle" "$work/sha256"
cd "$work/sha256" || exit 1
"$bin" render >/dev/null
if git init -q --object-format=sha256 . 2>/dev/null; then
	git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
	expect_rc 3 "SHA-256 repository" run life.ok
	mentions "SHA-256 repository" "the repository names its commits with SHA-256"
	[ "$(ls experiments)" = "RUNS.md" ] || fail "SHA-256 repository: an experiment was written"
fi
# git that cannot be started, or that refuses the repository (owned by
# another user): what git says, not "no repository"; exit 3, nothing written
mkdir -p "$work/nogit"
cd "$work/p" || exit 1
before=$(ls experiments | wc -l)
expect_rc 3 "git missing" env PATH="$work/nogit" "$bin" run life.ok
mentions "git missing" "the source revision of the project at '.' cannot be read: 'git': cannot start: No such file or directory; install git, or put it on PATH"
[ "$(ls experiments | wc -l)" = "$before" ] || fail "git missing: an experiment was written"
# uncommitted changes that git cannot diff (a clean filter it cannot run, as
# git-lfs's where git-lfs is not installed): refused before anything runs,
# with git's words, not a session blocked at its end for want of the hash
printf 'one\n' >blob.bin
git add blob.bin && git -c user.email=t@t -c user.name=t commit -qm blob || exit 1
echo '*.bin filter=broken' >.git/info/attributes
git config filter.broken.clean false && git config filter.broken.required true
# the same size: git status must read the content, through the filter
printf 'two\n' >blob.bin
expect_rc 3 "a status git cannot make" "$bin" run life.ok
mentions "a status git cannot make" "whether the project at '.' has uncommitted changes cannot be read (git status: fatal: blob.bin: clean filter 'broken' failed): a session needs it as provenance; make 'git status' work there"
# another size: git status sees the change alone; git diff fails
printf 'three\n' >blob.bin
expect_rc 3 "a diff git cannot make" "$bin" run life.ok
mentions "a diff git cannot make" "the uncommitted changes of the project at '.' cannot be hashed (git diff HEAD: fatal: blob.bin: clean filter 'broken' failed): a session needs their SHA-256 as provenance; make 'git diff HEAD' work there"
[ "$(ls experiments | wc -l)" = "$before" ] || fail "a diff git cannot make: an experiment was written"
git config --unset filter.broken.clean && git config --unset filter.broken.required
rm .git/info/attributes
git checkout -q blob.bin
if [ "$(id -u)" = 0 ]; then
	cp -R "$work/p" "$work/owned" && chown -R nobody "$work/owned"
	cd "$work/owned" || exit 1
	if ! says=$(GIT_CONFIG_GLOBAL=/dev/null git rev-parse --verify HEAD 2>&1); then
		expect_rc 3 "a repository git refuses" env GIT_CONFIG_GLOBAL=/dev/null "$bin" run life.ok
		mentions "a repository git refuses" "git refuses the repository of the project at '.' (git: $(printf '%s\n' "$says" | head -n 1)): a session needs its source revision"
		# git's own advice, for the folder git names
		mentions "a repository git refuses: what to do" "run benchgate as the user who owns the repository or, if you trust it, tell git so: git config --global --add safe.directory '$work/owned'"
	fi
	cd "$work" && rm -rf "$work/owned"
fi
# a repository that holds the project in a folder of its own: the source
# beside that folder is part of the dirty flag and the diff hash, so a
# session of modified source never joins the baseline as committed
mkdir -p "$work/mono/src" && cd "$work/mono" || exit 1
cp -R "$src/tests/cli/trees/lifecycle" bench
sed -i "s/\"sleep_seconds\": 4.321/\"sleep_seconds\": $nap/" bench/benchmarks/benchmark_registry.json
"$bin" -C bench render >/dev/null
echo 'int x;' >src/kernel.c
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
echo 'int y;' >>src/kernel.c
expect_rc 0 "monorepo: a session" "$bin" -C bench run -q --no-repeat --json -w 0 -r 1 life.ok
jqe '.session.provenance.git.dirty == true' "$work/out" ||
	fail "monorepo: source changed beside the project, but the session is clean"
want=$(cd bench && git -c core.abbrev=40 diff HEAD --full-index --no-renames --no-ext-diff --no-textconv --no-color \
	--submodule=diff --ignore-submodules=untracked -- :/ ':(exclude)experiments' | sha256sum | cut -c1-64)
[ "$(jq -r .session.provenance.git.diff_sha256 "$work/out")" = "$want" ] ||
	fail "monorepo: the diff hash is not of the whole repository"
"$bin" -C bench history --json life.ok >"$work/hist"
jqe '.[-1].curation == "pending"' "$work/hist" || fail "monorepo: modified source counted toward the baseline"
[ "$fails" = 0 ] && echo "run lifecycle: all checks passed"
exit $((fails > 0))
