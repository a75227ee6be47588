#!/usr/bin/env bash
# The decision verbs on sessions stored by `benchgate run` itself (not the
# seed tool): compare and key read what run stored; repeat runs the gate
# twice more through run and keeps all three; promote refuses a session that
# ran on a dirty tree and turns the first release-signoff session of a fully
# declared gate into measured; validate and check pass; the registry diff is
# the gate's state, its satisfied_by and the evidence import. Needs git and
# jq. KEEP=1 keeps the scratch folder.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
# a gate whose configuration declares every geometry field, running long
# enough for the memory watcher to sample the process tree
jq '.configurations.full = (.configurations.geo + {source_detector_rows: 4, source_detector_columns: 4,
      detector_bin: 2, output_detector_rows: 2, output_detector_columns: 2})
    | .runbooks.full = (.runbooks.ok + {command: "sleep 0.05; printf hello > out/{id}.txt"})
    | .runbooks.var = (.runbooks.ok + {command: "sleep $LIFE_SLEEP; printf $LIFE_WORD > out/{id}.txt"})
    | .runbooks.floor = (.runbooks.ok + {measure: (.runbooks.ok.measure + {memory_floor_bytes: 1})})
    | .configurations.rep = (.configurations.full + {logical_resident_bytes: 4096})
    | .runbooks.rep = (.runbooks.ok + {command: "sh report.sh {id} $REP_SECONDS $REP_METRIC",
                                       measure: (.runbooks.ok.measure + {timing: "reported"})})
    | .gates += [(.gates[0] + {id: "life.full", configuration: "full", runbook: "full"}),
                 (.gates[0] + {id: "life.var", runbook: "var"}),
                 (.gates[0] + {id: "life.floor", runbook: "floor"}),
                 (.gates[0] + {id: "life.rep", configuration: "rep", runbook: "rep"})]' \
	benchmarks/benchmark_registry.json >reg.tmp && mv reg.tmp benchmarks/benchmark_registry.json
printf '.benchgate/\nout/\n' >.gitignore
# the reported-timing command: three samples of $2 seconds and, unless $3 is
# "none", the logical resident bytes the gate declares
cat >report.sh <<'SH'
sleep 0.05
printf hello > "out/$1.txt"
m='"metrics": {"logical_resident_bytes": 4096}'
[ "$3" = none ] && m='"metrics": {}'
echo "{\"samples_seconds\": [$2, $2, $2], $m}" >"$BENCHGATE_RESULT"
SH
"$B" render >/dev/null
check "fixture validates"          "$B" validate
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
cp benchmarks/benchmark_registry.json "$work/registry.before"

check "run: release-signoff"       test "$(rc_of "$B" run -q life.full --tier release-signoff)" = 0
check "compare: no-baseline"       test "$("$B" compare --last life.full --json | jq -r .decision)" = no-baseline
check "key: contract fields"       test "$("$B" key 1 --json | jq -r '[.fields[].field] | join(",")')" = "gate,computer,device_id,runtime_version,source_revision,cache_state,measure,source_identity"
check "key: resolved from context" test "$("$B" key 1 --json | jq -r '.fields[0].source')" = "context: gate"
check "repeat: exit 0"             test "$(rc_of "$B" repeat 1)" = 0
check "repeat: three kept"         grep -q "the three sessions are kept" "$work/out"
check "repeat: same key"           test "$("$B" history --key "$("$B" key 1 --json | jq -r .key_id)" --json | jq length)" = 3
check "repeat: same tier"          test "$("$B" history life.full --json | jq -r '[.[].tier] | unique | join(",")')" = release-signoff
check "repeat: three experiments"  test "$(ls -d experiments/*-life-full* | wc -l)" = 3
check "check after runs"           "$B" check

# the repeated sessions ran after the first experiment's records
# (experiments/ID/, the RUNS.md row) were written: benchgate's own records
# are left out of the dirty check, so their source is still clean
check "repeat session: clean"      grep -q '"dirty": false' "$(ls -d experiments/*-life-full* | sort | tail -n 1)/manifest.json"
check "repeat session: git excludes experiments, state and outputs" \
	test "$("$B" session 3 --json | jq -r '.provenance.git.excluded | join(",")')" = 'experiments,:(top,glob)**/.benchgate/**,out/life.full.txt,out/*.txt'
# the first session started on the committed tree (its manifest: dirty false)
s=1
check "session 1 has a tree peak"  test "$("$B" history life.full --json | jq '.[0].tree_peak_bytes != null')" = true
# a manifest that records another session (an experiment id used again
# after its folder was removed) is another run's records: refused
e1=$("$B" session 1 --json | jq -r .experiment_id)
cp "experiments/$e1/manifest.json" "$work/manifest1"
jq '.session_id = 99' "$work/manifest1" >"experiments/$e1/manifest.json"
check "promote: another run's records refused" test "$(rc_of "$B" promote 1)" = 1
check "promote: says whose"        grep -q "records session 99, not this session 1" "$work/out" "$work/err"
cp "$work/manifest1" "experiments/$e1/manifest.json"
# a gate whose fields changed since the session ran is refused: its row
# would describe something else
cp benchmarks/benchmark_registry.json "$work/reg1"; cp docs/_generated/benchmark_coverage.md "$work/doc1"
jq '(.gates[] | select(.id == "life.full")) |= (.module = "Other")' "$work/reg1" >benchmarks/benchmark_registry.json
"$B" render >/dev/null
check "promote: a changed gate refused" test "$(rc_of "$B" promote 1)" = 1
check "promote: says what changed" grep -q "the gate's module is now Other; session 1 ran with " "$work/out" "$work/err"
# so is one whose runbook changed since (its command here): the row would
# credit the runbook as it is now with the old one's timing; a runbook only
# laid out anew (its keys in another order) is the same runbook
check "session: runbook digest"    grep -qE '^[0-9a-f]{64}$' <("$B" session 1 --json | jq -r .context.runbook_sha256)
jq '.runbooks.full.command += "; true"' "$work/reg1" >benchmarks/benchmark_registry.json
"$B" render >/dev/null
check "promote: a changed runbook refused" test "$(rc_of "$B" promote 1)" = 1
check "promote: says the runbook changed" grep -q "runbook 'full' has changed since session 1 ran (its SHA-256 then [0-9a-f]\{12\}, now [0-9a-f]\{12\})" "$work/out"
# a NaN in the session's runbook (the registry verbs read it, as Python's
# json does): the promoted row is JSON, which cannot hold one
jq '.runbooks.full.measure.budget_seconds = 12345' "$work/reg1" | sed 's/"budget_seconds": 12345/"budget_seconds": NaN/' \
	>benchmarks/benchmark_registry.json
"$B" render >/dev/null
check "promote: a NaN in the runbook refused" test "$(rc_of "$B" promote 1)" = 3
check "promote: names the member"  grep -q "runbook 'full': 'measure.budget_seconds' is nan, which JSON cannot hold" "$work/err"
# an integer beyond 64 bits in the session's gate: jansson, which writes
# the promoted row, holds 64 bits
jq '(.gates[] | select(.id == "life.full")).seed = 12345' "$work/reg1" | sed 's/"seed": 12345/"seed": 18446744073709551615/' \
	>benchmarks/benchmark_registry.json
"$B" render >/dev/null
check "promote: a big integer in the gate refused" test "$(rc_of "$B" promote 1)" = 3
check "promote: names the field" grep -q "gate 'life.full': 'seed' is 18446744073709551615, beyond the 64 bits benchgate's records hold" "$work/err"
jq '(.runbooks.full |= (to_entries | reverse | from_entries)) | (.gates[] | select(.id == "life.full")) |= (.module = "Other")' \
	"$work/reg1" >benchmarks/benchmark_registry.json
"$B" render >/dev/null
"$B" promote 1 --json >"$work/pj" 2>/dev/null
check "promote: a runbook laid out anew is the same" \
	jq -e '(.refusals | length) == 1 and ([.refusals[] | select(contains("runbook"))] | length) == 0' "$work/pj"
cp "$work/reg1" benchmarks/benchmark_registry.json; cp "$work/doc1" docs/_generated/benchmark_coverage.md
# render takes promote's lock before it reads the registry: a registry
# changed by the lock's holder (as a promotion changes it) is the one it
# renders, so the document is current afterwards
cp benchmarks/benchmark_registry.json "$work/reg.keep"
jq '(.gates[] | select(.id == "life.full")) |= (.module = "Renamed")' "$work/reg1" >"$work/reg.renamed"
flock .benchgate/promote.lock sh -c "sleep 0.5; cp '$work/reg.renamed' benchmarks/benchmark_registry.json" &
holder=$!
sleep 0.2
check "render while promote's lock is held: exit 0" test "$(rc_of "$B" render)" = 0
wait $holder
check "... it rendered the registry the holder left" "$B" validate
cp "$work/reg.keep" benchmarks/benchmark_registry.json; cp "$work/doc1" docs/_generated/benchmark_coverage.md
# promotions are serialised (each reads and rewrites the registry, the
# evidence index and the document): promote waits while the lock is held
flock .benchgate/promote.lock sleep 1 &
holder=$!
sleep 0.2
start=$(date +%s%N)
check "promote: exit 0"            test "$(rc_of "$B" promote "$s")" = 0
waited=$((($(date +%s%N) - start) / 1000000))
wait $holder
check "promote: waited for the lock ($waited ms)" test "$waited" -ge 500
check "promote: measured"          grep -q "promoted as measured" "$work/out"
check "validate after promote"     "$B" validate
check "check after promote"        "$B" check
diff "$work/registry.before" benchmarks/benchmark_registry.json | grep '^[<>]' >"$work/diff"
check "registry diff: 5 new lines, 3 old" test "$(grep -c "^>" "$work/diff"),$(grep -c "^<" "$work/diff")" = "5,3"
check "registry diff: state"       grep -q '^>   *"state": "measured",' "$work/diff"
h=$(sha256sum "experiments/$e1/manifest.json" | cut -c1-8)
check "registry diff: satisfied_by" grep -q "\"satisfied_by\": \[\"test-host-benchgate-life-full-s$s-$h\"\]" "$work/diff"
check "registry diff: import"      grep -q '"path": "experiments/benchgate-evidence.json"' "$work/diff"
check "list: measured"             test "$("$B" list --state measured | grep -c life.full)" = 1
check "evidence: device recorded"  jqe '.measurements[0].device | type == "string" and length > 0' experiments/benchgate-evidence.json
# rejecting a promoted session changes no registry: reject says the row
# and the gate still count it, and what to do
check "reject a promoted session: exit 0" test "$(rc_of "$B" reject "$s" --why "the GPU was throttled")" = 0
check "reject a promoted session: said" grep -qxF "it was promoted, and the registry still counts it: experiments/benchgate-evidence.json's row 'test-host-benchgate-life-full-s$s-$h' cites it, which gate 'life.full' names in satisfied_by; a rejection changes no registry: take the row out and its id out of the gate's satisfied_by (and its state back), then 'benchgate render', or promote another session of the gate" "$work/out"
check "reject a promoted session: still measured" test "$("$B" list --state measured | grep -c life.full)" = 1
check "accept it again: no such line" sh -c '! "$1" accept "$2" --why "checked: not throttled" | grep -q "was promoted"' _ "$B" "$s"
# a row of another clone's session of the same number, key and experiment
# id (its figures differ): not this session's, so reject says nothing of it
cp experiments/benchgate-evidence.json "$work/ev.kept"
jq '.measurements[0].wall_p50_seconds *= 1.5' "$work/ev.kept" >experiments/benchgate-evidence.json
check "another clone's row: reject exit 0" test "$(rc_of "$B" reject "$s" --why "the GPU was throttled")" = 0
check "another clone's row: not said" sh -c '! grep -q "was promoted" "$1"' _ "$work/out"
cp "$work/ev.kept" experiments/benchgate-evidence.json
"$B" accept "$s" --why "checked: not throttled" >/dev/null
# timing "reported": the command's samples and metrics are what promotion
# and decisions read (docs/measure.md)
git add -A && git -c user.email=t@t -c user.name=t commit -qm promoted || exit 1
export REP_SECONDS=0.01 REP_METRIC=yes
check "reported: run"              test "$(rc_of "$B" run -q life.rep --tier release-signoff)" = 0
s=$("$B" compare --last life.rep --json | jq .session)
check "reported: promote"          test "$(rc_of "$B" promote "$s")" = 0
check "reported: evidence row"     jqe '.measurements[-1] | .logical_resident_bytes == 4096 and .wall_p50_seconds == 0.01
                                          and .wall_max_seconds == 0.01 and .sample_count == 9' experiments/benchgate-evidence.json
check "reported: validate"         "$B" validate
git add -A && git -c user.email=t@t -c user.name=t commit -qm promoted-rep || exit 1
REP_METRIC=none "$B" run -q life.rep --tier release-signoff >/dev/null 2>&1
s=$("$B" compare --last life.rep --json | jq .session)
check "reported, no metric: refused" test "$(rc_of "$B" promote "$s")" = 1
check "reported, no metric: why"   grep -q "logical resident bytes: the gate declares them, the session did not report them" "$work/out"
for i in 1 2 3 4; do "$B" run -q life.rep >/dev/null 2>&1; done
REP_SECONDS=0.1 "$B" run -q life.rep >/dev/null 2>&1
check "reported: investigate"      test "$("$B" compare --last life.rep --json | jq -r .decision)" = investigate
check "reported: the reported p50" test "$("$B" compare --last life.rep --json | jq '[.metrics[] | select(.metric == "wall_p50")][0].value')" = 0.1
check "reported: compare says so" test "$("$B" compare --last life.rep --json | jq -r .timing)" = reported
check "reported: compare text"     grep -q "^timing: reported (p50, p95 and max are the program's own samples)" <("$B" compare --last life.rep)
check "process: compare text"      bash -c "'$B' compare --last life.full >'$work/cmp' && ! grep -q '^timing:' '$work/cmp'"
check "reported: history says so" test "$("$B" history life.rep --json | jq -r '[.[].timing] | unique | join(",")')" = reported
check "reported: dashboard"        test "$(rc_of "$B" dashboard --output "$work/dash")" = 0
check "reported: the plot says so" grep -q "Reported time: p50" "$work/dash/index.html"
check "reported: the key says so"  grep -q "timed by the program itself (its own samples, not process wall time)" "$work/dash/index.html"
check "process keys: wall time"    grep -q "Wall time: p50" "$work/dash/index.html"

# decisions made by run reach the store and compare: five no-baseline
# sessions, then a session ten times slower (investigate), then a parity
# failure (block)
export LIFE_SLEEP=0.02 LIFE_WORD=hello
for i in 1 2 3 4 5; do "$B" run -q life.var >/dev/null 2>&1; done
check "run: five no-baseline"      test "$("$B" history life.var --json | jq -r '[.[].decision] | unique | join(",")')" = no-baseline
LIFE_SLEEP=0.2 "$B" run -q life.var >/dev/null 2>&1
check "run: investigate stored"    test "$("$B" compare --last life.var --json | jq -r .decision)" = investigate
check "run: investigate exit 0"    test "$(rc_of "$B" compare --last life.var)" = 0
check "run: --fail-on investigate" test "$(rc_of "$B" compare --last life.var --fail-on investigate)" = 1
check "run: baseline of five"      test "$("$B" compare --last life.var --json | jq '.baseline | length')" = 5
check "run: slower"                test "$("$B" compare --last life.var --json | jq -r '[.metrics[] | select(.metric == "wall_p50")][0].direction')" = slower-or-larger
LIFE_WORD=world "$B" run -q life.var >/dev/null 2>&1
check "run: block stored"          test "$("$B" compare --last life.var --json | jq -r .decision)" = block
check "run: block exit 1"          test "$(rc_of "$B" compare --last life.var)" = 1
check "run: block not acceptable"  test "$(rc_of "$B" accept "$("$B" compare --last life.var --json | jq .session)" --why x)" = 1
# a memory floor every process is over blocks, also when the command is too
# short for the watcher to sample its tree (each run's peak RSS counts)
check "floor: block"               test "$(rc_of "$B" run life.floor)" = 1
check "floor: the reason"          grep -q "over the memory floor of 1 bytes" "$work/out"
check "check after all runs"       "$B" check

# a promoted row's id writes each character of the gate id that is no ASCII
# letter or digit as one '-' (it wrote one for each byte of 'é')
jq '.gates += [(.gates[] | select(.id == "life.full")) + {id: "life.café"}]' benchmarks/benchmark_registry.json >reg.tmp &&
	mv reg.tmp benchmarks/benchmark_registry.json
"$B" render >/dev/null
git add -A && git -c user.email=t@t -c user.name=t commit -qm "a gate named in French" || exit 1
check "non-ASCII gate: run"        test "$(rc_of "$B" run -q --no-repeat life.café --tier release-signoff)" = 0
sid=$("$B" compare --last life.café --json | jq .session)
check "non-ASCII gate: promote"    test "$(rc_of "$B" promote "$sid")" = 0
check "non-ASCII gate: one '-' for 'é'" grep -qE "^promoted as measured: measurement test-host-benchgate-life-caf--s$sid-[0-9a-f]{8}$" "$work/out"
check "non-ASCII gate: validate"   "$B" validate

# a gate whose cache_state claims a cold cache ("cold source; ..."), run
# by a runbook that evicts nothing: not promoted on that claim unproven
jq '.gates += [(.gates[] | select(.id == "life.full")) + {id: "life.cold", cache_state: "cold source; no prepared index"}]' \
	benchmarks/benchmark_registry.json >reg.tmp && mv reg.tmp benchmarks/benchmark_registry.json
"$B" render >/dev/null
git add -A && git -c user.email=t@t -c user.name=t commit -qm "a gate that claims cold" || exit 1
check "cold claim: run"            test "$(rc_of "$B" run -q --no-repeat life.cold --tier release-signoff)" = 0
check "cold claim: run notes it" grep -qF "note: the gate's cache_state 'cold source; no prepared index' claims a cold cache, but nothing made the runs cold (cache state 'none')" "$work/out" "$work/err"
check "cold claim: compare notes it" grep -qF "claims a cold cache, but nothing made the runs cold" <("$B" compare --last life.cold)
sid=$("$B" compare --last life.cold --json | jq .session)
cp benchmarks/benchmark_registry.json "$work/registry.cold"
check "cold claim: promote refused" test "$(rc_of "$B" promote "$sid")" = 1
check "cold claim: criterion 4 says why" grep -qF "the gate's cache state 'cold source; no prepared index' claims a cold cache, which the session did not verify (cache state 'none'): evict the data before every run (the runbook's measure.cache)" "$work/out" "$work/err"
check "cold claim: the registry unchanged" cmp -s benchmarks/benchmark_registry.json "$work/registry.cold"
echo "$fails failed"
[ "$fails" = 0 ]
