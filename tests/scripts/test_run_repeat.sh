#!/usr/bin/env bash
# What `run` and `repeat` carry from one session to the next: the -w, -r and
# --timeout a session ran with are in its manifest and its key, and repeat
# runs with them again (same key); repeat started from a subfolder with a
# relative --config reads the same file; and run's exit status after an
# investigate decision is 1 when any repeat blocked, whatever its place;
# repeat's own runs make one session each; run holds the device from an
# investigate's first session to its last repeat, and across --times N
# sessions; every outcome is printed, also after one that blocked.
# Needs git and jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
commit() { git add -A && git -c user.email=t@t -c user.name=t commit -qm "$1"; }

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
printf '.benchgate/\nout/\nplan\n' >.gitignore
"$B" render >/dev/null
git init -q . && commit init || exit 1

# overrides are part of what ran
check "run -r 1 -w 0"              test "$(rc_of "$B" run -q life.ok -r 1 -w 0 --timeout 30)" = 0
check "run -r 2 -w 0"              test "$(rc_of "$B" run -q life.ok -r 2 -w 0)" = 0
m1=$(ls -d experiments/*-life-ok | sort | head -n 1)/manifest.json
check "manifest: repetitions run"  test "$(jq .parameters.measure.repetitions "$m1")" = 1
check "manifest: warmups run"      test "$(jq .parameters.measure.warmups "$m1")" = 0
check "manifest: timeout run"      test "$(jq .parameters.measure.timeout_seconds "$m1")" = 30
k1=$("$B" key 1 --json | jq -r .key_id)
check "another count, another key" test "$("$B" key 2 --json | jq -r .key_id)" != "$k1"
check "repeat: exit 0"             test "$(rc_of "$B" repeat 1)" = 0
# the repeats are the gate's two sessions after the newest before it (2)
check "repeat: lists 1, 3 and 4"   test "$(grep -o '^  session [0-9]*:' "$work/out" | tr -d ' :' | tr '\n' ,)" = "session1,session3,session4,"
check "repeat: the same key"       test "$("$B" history --key "$k1" --json | jq length)" = 3
check "repeat: the same run count" test "$("$B" session 4 --json | jq .counts.timed)" = 1

# the same settings, however given, are the same key: -w 1 and -r 3 are
# the runbook's own; --timeout 30 is a whole number, as a runbook writes it
last_key() { "$B" key "$("$B" sessions --json | jq '.[-1].id')" --json | jq -r .key_id; }
newest() { "$B" sessions --json | jq '.[-1].id // 0'; }
# CMD succeeded and stored a session (so that last_key is its key)
ran() { local before; before=$(newest); "$@" >/dev/null 2>&1 && [ "$(newest)" -gt "$before" ]; }
check "run"                        ran "$B" run -q life.ok --no-repeat; plain=$(last_key)
check "run -w 1 -r 3"              ran "$B" run -q life.ok --no-repeat -w 1 -r 3
check "-w and -r as the runbook's: same key" test "$(last_key)" = "$plain"
check "run --timeout 30"           ran "$B" run -q life.ok --no-repeat --timeout 30; t30=$(last_key)
check "--timeout: another key"     test "$t30" != "$plain"
s30=$(newest)
check "repeat"                     ran "$B" repeat "$s30"
check "repeat of --timeout 30: same key" test "$(last_key)" = "$t30"
check "--timeout 30 recorded as 30" test "$("$B" key "$s30" --json | jq -r .canonical | grep -c '"timeout_seconds":30[,}]')" = 1
# a runbook that gives a timeout and leaves warmups to the default: a repeat
# (which passes both on) and -w 1 land on the run's own key
jq '.runbooks.ok.measure |= (del(.warmups) + {timeout_seconds: 30})' benchmarks/benchmark_registry.json >r.tmp &&
	mv r.tmp benchmarks/benchmark_registry.json && "$B" render >/dev/null && commit timeout
check "run, runbook timeout"       ran "$B" run -q life.ok --no-repeat; rb=$(last_key); srb=$(newest)
check "run -w 1"                   ran "$B" run -q life.ok --no-repeat -w 1
check "-w 1, the default: same key" test "$(last_key)" = "$rb"
check "repeat"                     ran "$B" repeat "$srb"
check "repeat of a runbook timeout: same key" test "$(last_key)" = "$rb"

# a relative --config from a subfolder
mkdir sub && cp benchgate.json sub/alt.json && commit alt
check "repeat --config from a subfolder" \
	test "$(rc_of sh -c "cd sub && '$B' --config alt.json repeat 1")" = 0
check "repeat --config: two more sessions" test "$("$B" history life.ok --json | jq length)" = 15
# a --config read from a pipe (a copy for the runs, removed after), and
# one whose name starts with '-'
tmpd=$(mktemp -d)
check "repeat --config <(...)" test "$(rc_of env TMPDIR="$tmpd" bash -c "'$B' --config <(cat benchgate.json) repeat 1")" = 0
check "repeat --config <(...): two more sessions" test "$("$B" history life.ok --json | jq length)" = 17
check "repeat --config <(...): the copy removed" test -z "$(ls -A "$tmpd")"
rmdir "$tmpd"
cp benchgate.json ./-c.json && commit dash-config
check "repeat --config=-c.json" test "$(rc_of "$B" --config=-c.json repeat 1)" = 0

# exit 1 when a repeat blocked, also when the last repeat did not: each
# experiment reads its line of plan (fast, slow or bad output)
cat >cmd.sh <<'SH'
k=$(ls -d experiments/2*/ | wc -l); p=$(sed -n "${k}p" plan)
case $p in
fast) printf hello >"out/$1.txt" ;;
slow) sleep 0.3; printf hello >"out/$1.txt" ;;
bad) printf world >"out/$1.txt" ;;
esac
SH
jq '.runbooks.ok.command = "sh cmd.sh {id}" | .runbooks.ok.measure.warmups = 0 | .runbooks.ok.measure.repetitions = 1' \
	benchmarks/benchmark_registry.json >r.tmp && mv r.tmp benchmarks/benchmark_registry.json
jq '.comparison_contract.minimum_accepted_sessions_before_hard_threshold = 1' \
	benchmarks/profile_matrix.json >r.tmp && mv r.tmp benchmarks/profile_matrix.json
"$B" render >/dev/null && commit plan
n=$(ls -d experiments/2*/ | wc -l)
{ for _ in $(seq "$n"); do echo fast; done; printf 'fast\nslow\nbad\nslow\n'; } >plan
check "first of the key: exit 0"   test "$(rc_of "$B" run -q life.ok)" = 0
check "investigate, block, investigate: exit 1" test "$(rc_of "$B" run -q life.ok)" = 1
check "investigate, block, investigate: the repeat after the block printed" test "$(grep -c '^repeat [12] of 2:' "$work/out")" = 2
check "all three decided"          test "$("$B" history life.ok --json | jq -r '[.[-3:][].decision] | join(",")')" = investigate,block,investigate

# an id RUNS.md names is never used again, even when its folder is gone
last=$(ls -d experiments/2*-life-ok* | sort -V | tail -n 1)
rm -rf "$last"
"$B" run -q life.ok --no-repeat >/dev/null 2>&1
check "a removed experiment's id is not reused" test "$(grep -c "^| ${last#experiments/} |" experiments/RUNS.md)" = 1
check "the new experiment has an id of its own" test "$("$B" sessions --json | jq -r '.[-1].experiment_id')" != "${last#experiments/}"

# RUNS.md that cannot be updated is refused before anything is written
n_before=$(ls -d experiments/2*/ | wc -l)
mv experiments/RUNS.md "$work/RUNS.md" && mkdir experiments/RUNS.md
check "RUNS.md a folder: refused, exit 3" test "$(rc_of "$B" run -q life.ok)" = 3
check "RUNS.md a folder: says so"  grep -q "experiments/RUNS.md cannot be updated (it is not a regular file)" "$work/err"
check "RUNS.md a folder: no experiment started" test "$(ls -d experiments/2*/ | wc -l)" = "$n_before"
rmdir experiments/RUNS.md && mv "$work/RUNS.md" experiments/RUNS.md

# repeat makes exactly two sessions: an investigate among them is not
# repeated again by the run it starts
n=$(ls -d experiments/2*/ | wc -l)
{ for _ in $(seq "$n"); do echo fast; done; printf 'slow\nfast\nfast\nfast\n'; } >plan
s=$("$B" sessions --json | jq '.[-1].id')
before=$("$B" history life.ok --json | jq length)
check "repeat with an investigate: exit 0" test "$(rc_of "$B" repeat "$s")" = 0
check "repeat with an investigate: two more sessions" \
	test "$("$B" history life.ok --json | jq length)" = $((before + 2))
check "repeat with an investigate: lists it" grep -q "^  session $((s + 1)): investigate" "$work/out"

# an investigate's repeats hold the device from the first session to the
# last: a run started between two of them is refused, and the repeats all
# complete. A git found first on PATH makes the moment: when the first
# session has finished (no manifest running) it starts another run, once,
# and waits until that run holds the lease or has ended; the repeat's
# preflight (which asks git for the revision) goes on only then (the other
# run leaves git's output alone: benchgate reads it to its end)
fake_git() { # the experiment count at which the first session has finished
	local n=$1
	mkdir -p "$work/bin"
	rm -rf "$work/other"
	cat >"$work/bin/git" <<SH
#!/bin/sh
if [ "\$(ls -d experiments/2*/ | wc -l)" = $((n + 1)) ] && ! grep -qs '"status": "running"' experiments/2*/manifest.json &&
	mkdir "$work/other" 2>/dev/null; then
	("$B" run -q life.ok --no-repeat >"$work/other/out" 2>"$work/other/err"; echo \$? >"$work/other/rc") </dev/null >/dev/null 2>&1 &
	while [ ! -e "$work/other/rc" ]; do
		holder=\$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' .benchgate/leases/test-host.json 2>/dev/null)
		[ -n "\$holder" ] && [ "\$holder" != "\$PPID" ] && break
		sleep 0.01
	done
fi
exec $(command -v git) "\$@"
SH
	chmod +x "$work/bin/git"
}
n=$(ls -d experiments/2*/ | wc -l)
{ for _ in $(seq "$n"); do echo fast; done; printf 'slow\nslow\nfast\nfast\n'; } >plan
fake_git "$n"
before=$("$B" history life.ok --json | jq length)
check "repeats hold the device: exit 0" test "$(PATH="$work/bin:$PATH" rc_of "$B" run -q life.ok)" = 0
for _ in $(seq 500); do [ -e "$work/other/rc" ] || [ ! -d "$work/other" ] && break; sleep 0.01; done
check "repeats hold the device: another run was started between them" test -d "$work/other"
check "repeats hold the device: it is refused" test "$(cat "$work/other/rc" 2>/dev/null)" = 3
check "repeats hold the device: it names the holder" grep -q "device 'test-host' is leased by experiment 2" "$work/other/err"
check "repeats hold the device: three sessions" test "$("$B" history life.ok --json | jq length)" = $((before + 3))
check "repeats hold the device: both repeats ran" test "$(grep -c '^repeat [12] of 2:' "$work/out")" = 2
check "repeats hold the device: the lease is free after" sh -c "'$B' lease status | grep -q 'test-host *free'"

# --times N: N sessions in a row, the device held from the first to the
# last in the same way, none repeated; every outcome printed, also after a
# session that blocked (the exit is then 1)
n=$(ls -d experiments/2*/ | wc -l)
{ for _ in $(seq "$n"); do echo fast; done; printf 'bad\nslow\nfast\n'; } >plan
fake_git "$n"
before=$("$B" history life.ok --json | jq length)
check "--times 3: exit 1 (the first blocked)" test "$(PATH="$work/bin:$PATH" rc_of "$B" run -q life.ok --times 3)" = 1
for _ in $(seq 500); do [ -e "$work/other/rc" ] || [ ! -d "$work/other" ] && break; sleep 0.01; done
check "--times 3: another run between them is refused" test "$(cat "$work/other/rc" 2>/dev/null)" = 3
check "--times 3: three sessions" test "$("$B" history life.ok --json | jq length)" = $((before + 3))
check "--times 3: block, then investigate (not repeated)" \
	test "$("$B" history life.ok --json | jq -r '[.[-3:-1][].decision] | join(",")')" = block,investigate
check "--times 3: every outcome printed" test "$(grep -c '^session [123] of 3:' "$work/out")" = 3

# a run that stops before its sessions (a registry that no longer parses:
# exit 1) is said so: repeat printed "the three sessions are kept", as if a
# repeat had blocked
cp benchmarks/benchmark_registry.json "$work/registry.good"
echo '{bad' >benchmarks/benchmark_registry.json
s=$("$B" history life.ok --json | jq '.[-1].id')
check "run stopped: exit 1"         test "$(rc_of "$B" repeat "$s")" = 1
check "run stopped: said so"        grep -qF "benchgate: repeat of session $s stopped: 'benchgate run life.ok' exited with status 1 having stored 0 of the two sessions" "$work/err"
check "run stopped: no 'kept' claim" sh -c "! grep -q 'the three sessions are kept' '$work/out'"
cp "$work/registry.good" benchmarks/benchmark_registry.json

# a question that starts with '-' (run takes it as --question=-...) is
# passed on as one word: repeat exited 2 with a usage error of run's
# (decisions of real timings: exit 0 or 1, both runs made)
for _ in $(seq 10); do echo fast; done >>plan
check "question '-...': run"        test "$(rc_of "$B" run -q life.ok --no-repeat --question=-is-it-faster?)" -le 1
s=$("$B" history life.ok --json | jq '.[-1].id')
check "question '-...': repeat"     test "$(rc_of "$B" repeat "$s")" -le 1
check "... two sessions more"       test "$("$B" history life.ok --json | jq '.[-1].id')" = $((s + 2))
m=$(ls -d experiments/*-life-ok* | sort -V | tail -n 1)/manifest.json
check "... the same question"       test "$(jq -r .question "$m")" = "-is-it-faster?"

# the repeats are the sessions repeat's own run stored: another run of the
# gate that stores one meanwhile (here inside the repeat's run's first git
# call, before it takes the lease) is not listed as one (it was)
for _ in $(seq 10); do echo fast; done >>plan
mkdir -p "$work/bin2"
cat >"$work/bin2/git" <<SH
#!/bin/sh
if [ -e "$work/arm" ] && mkdir "$work/other2" 2>/dev/null; then
	PATH="$PATH" "$B" run -q life.ok --no-repeat >"$work/other2/out" 2>&1 </dev/null
fi
exec $(command -v git) "\$@"
SH
chmod +x "$work/bin2/git"
s=$("$B" history life.ok --json | jq '.[-1].id')
touch "$work/arm"
check "another run meanwhile: repeat exit 0 or 1" test "$(PATH="$work/bin2:$PATH" rc_of "$B" repeat "$s")" -le 1
rm -f "$work/arm"
check "... the other run stored a session" grep -q "^session $((s + 1)):" "$work/other2/out"
check "... repeat lists its own: $s, $((s + 2)), $((s + 3))" \
	test "$(grep -o '^  session [0-9]*:' "$work/out" | tr -d ' :' | tr '\n' ,)" = "session$s,session$((s + 2)),session$((s + 3)),"

echo "$fails failed"
[ "$fails" = 0 ]
