#!/usr/bin/env bash
# benchgate promote: a golden test (the registry diff is exactly the intended
# lines; validate and check pass afterwards; the evidence row resolves to the
# id named in satisfied_by, state measured), partial promotion (memory layers
# missing; a scheduled-profile session), and one refusal per criterion and
# precondition (also records changed after the session: a tampered raw
# artifact, a manifest no longer completed, a missing RUNS.md row, a gate
# superseded since), after which no file has changed. A session whose
# decision has notes is promoted saying them, and the row keeps them. Sessions are stored the way
# `benchgate run` stores them (tests/unit/test_seedtool.c). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
SEED="${BENCHGATE_BUILD:?}/test_seedtool"
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
G=bin.cpu.test-box.bin2.warm
fresh() { rm -rf "$work/p"; cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"; }
seed() { "$SEED" seed "$work/p" "$@" | cut -d' ' -f1; }

# ---- golden: a release-signoff session meeting every criterion
fresh
s=$(seed $G release-signoff 0.100 experiment=1)
check "golden: first session is 1"  test "$s" = 1
# the id ends with the first 8 digits of the experiment manifest's SHA-256
eid=$("$B" -C "$work/p" session 1 --json | jq -r .experiment_id)
h=$(sha256sum "$work/p/experiments/$eid/manifest.json" | cut -c1-8)
mid="test-box-16gb-benchgate-bin-cpu-test-box-bin2-warm-s1-$h"
check "golden: promote exit 0"      test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "golden: says measured"       grep -q "promoted as measured: measurement $mid" "$work/out"
diff "${BENCHGATE_SOURCE}/tests/cli/trees/mini/benchmarks/benchmark_registry.json" "$work/p/benchmarks/benchmark_registry.json" >"$work/diff"
cat >"$work/want" <<DIFF
11c11,12
<     }
---
>     },
>     {"path": "experiments/benchgate-evidence.json"}
102,103c103,105
<       "configuration": "bin2", "state": "pending",
<       "runbook": "bin-timing", "priority": 1, "next_gate": "Run seven timed repetitions with parity."
---
>       "configuration": "bin2", "state": "measured",
>       "runbook": "bin-timing", "priority": 1, "next_gate": "Run seven timed repetitions with parity.",
>       "satisfied_by": ["$mid"]
DIFF
check "golden: registry diff exact" diff -u "$work/want" "$work/diff"
check "golden: validate passes"     "$B" -C "$work/p" validate
check "golden: check passes"        "$B" -C "$work/p" check
check "golden: gate measured"       test "$("$B" -C "$work/p" list --state measured | grep -c "$G")" = 1
ev="$work/p/experiments/benchgate-evidence.json"
check "evidence: one row"           test "$(jq '.measurements | length' "$ev")" = 1
check "evidence: one artifact"      test "$(jq '.artifacts | length' "$ev")" = 1
check "evidence: p50 seconds"       test "$(jq '.measurements[0].wall_p50_seconds' "$ev")" = 0.1
check "evidence: session link"      test "$(jq '.measurements[0].benchgate.session_id' "$ev")" = 1
check "evidence: no notes, none kept" jq -e '.measurements[0].benchgate | has("notes") | not' "$ev"
check "golden: no note printed"     bash -c "! grep -q '^note: ' '$work/out'"
check "render lists the row"        grep -q "$mid" "$work/p/docs/_generated/benchmark_coverage.md"
check "promote twice: refused"      test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "promote twice: message"      grep -q "already promoted" "$work/err"
check "promote twice: --json says why" bash -c "'$B' -C '$work/p' promote --json $s | jq -r .error | grep -q 'already promoted'"
check "after refusal: validate"     "$B" -C "$work/p" validate
# the row id holds the manifest's SHA-256: a manifest whose bytes changed
# since (a newline added) must not make the same session promotable again
cp "$work/p/experiments/$eid/manifest.json" "$work/manifest.kept"
printf '\n' >>"$work/p/experiments/$eid/manifest.json"
check "manifest changed: refused"   test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "manifest changed: names row" grep -q "already promoted as '$mid'" "$work/err"
check "manifest changed: one row"   test "$(jq '.measurements | length' "$ev")" = 1
cp "$work/manifest.kept" "$work/p/experiments/$eid/manifest.json"
# a second promotion adds the import only once
s2=$(seed bin.simd.test-box.bin2.cold release-signoff 0.100 experiment=1 ctx.cache_state='"cold source (evicted)"' cache=cold)
# whose decision noted that the machine ran otherwise than its baseline: no
# criterion, but said to whoever promotes it, and kept with the figures
note='the GPU'"'"'s clocks were slowed (hw_thermal_slowdown) during 3 of the 7 timed runs'
"$SEED" sql "$work/p" "UPDATE sessions SET decision_doc = json_set(decision_doc, '\$.conditions', json_array('$(printf '%s' "$note" | sed "s/'/''/g")')) WHERE id = $s2" || exit 1
check "second gate: promoted"       test "$(rc_of "$B" -C "$work/p" promote "$s2")" = 0
check "noted: said before the result" test "$(grep -A1 "^note: " "$work/out")" = "note: $note
promoted as measured: measurement $(jq -r '.measurements[1].id // empty' "$ev")"
check "noted: kept in the row"      jq -e --arg n "$note" '.measurements[1].benchgate.notes == [$n]' "$ev"
"$B" -C "$work/p" promote --json "$s2" >"$work/noted.json" 2>/dev/null
check "noted: --json's report lists it" jq -e --arg n "$note" '.notes == [$n]' "$work/noted.json"
check "import added once"           test "$(grep -c benchgate-evidence.json "$work/p/benchmarks/benchmark_registry.json")" = 1
check "two rows"                    test "$(jq '.measurements | length' "$ev")" = 2
check "second: validate and check"  "$B" -C "$work/p" check
# an evidence index that exists but cannot be read is never taken for absent
# (a new index over the retained rows, then removed on the way back): exit 4,
# nothing written. Root reads any file, so root runs promote as nobody.
s3=$(seed $G release-signoff 0.100 experiment=1)
snap() { (cd "$work/p" && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort); }
# refused LABEL SESSION GREP-ARGS...: promote of SESSION exits 1, saying
# what grep GREP-ARGS finds in its stderr, and no file of the project changed
refused() {
	local label=$1 sid=$2
	shift 2
	snap >"$work/before"
	check "$label: refused" test "$(rc_of "$B" -C "$work/p" promote "$sid")" = 1
	check "$label: says so" grep "$@" "$work/err"
	snap >"$work/after"
	check "$label: nothing changed" cmp -s "$work/before" "$work/after"
}
snap >"$work/before"
as=()
if [ "$(id -u)" = 0 ]; then
	chmod a+x "$work" && chmod -R a+rwX "$work/p"
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
chmod 000 "$ev"
check "unreadable evidence: exit 4" test "$(rc_of "${as[@]}" "$B" -C "$work/p" promote "$s3")" = 4
check "unreadable evidence: names it" grep -q "experiments/benchgate-evidence.json: cannot" "$work/err"
chmod 644 "$ev"
snap >"$work/after"
check "unreadable evidence: nothing changed" cmp -s "$work/before" "$work/after"
check "unreadable evidence: two rows kept" test "$(jq '.measurements | length' "$ev")" = 2
mv "$ev" "$work/ev.json" && mkdir "$ev"
check "evidence a folder: exit 4"   test "$(rc_of "$B" -C "$work/p" promote "$s3")" = 4
check "evidence a folder: names it" grep -q "experiments/benchgate-evidence.json: not a regular file; nothing was changed" "$work/err"
check "evidence a folder: kept"     test -d "$ev"
rmdir "$ev" && mv "$work/ev.json" "$ev"
# the registry's folder may not be written (the evidence index is written
# first): undone, and said so with what to do (it said only "cannot write")
snap >"$work/before"
chmod 555 "$work/p/benchmarks"
check "registry not writable: exit 4" test "$(rc_of "${as[@]}" "$B" -C "$work/p" promote "$s3")" = 4
check "registry not writable: said" grep -q "benchmarks/benchmark_registry.json: cannot .*; the promotion was undone, nothing was changed: make the file writable (or free space), then promote again" "$work/err"
chmod 777 "$work/p/benchmarks"
snap >"$work/after"
check "registry not writable: nothing changed" cmp -s "$work/before" "$work/after"
check "registry not writable: no journal" test ! -e "$work/p/.benchgate/promote-journal"
check "then promoted"               test "$(rc_of "$B" -C "$work/p" promote "$s3")" = 0
check "three rows"                  test "$(jq '.measurements | length' "$ev")" = 3

# ---- a promotion killed between its writes (its journal left behind) is
# undone by the next promotion, which then proceeds
fresh
s=$(seed $G release-signoff 0.100 experiment=1)
check "killed: first promote"       test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
j="$work/p/.benchgate/promote-journal"
mkdir -p "$j"
cp "${BENCHGATE_SOURCE}/tests/cli/trees/mini/benchmarks/benchmark_registry.json" "$j/1"
cp "${BENCHGATE_SOURCE}/tests/cli/trees/mini/docs/_generated/benchmark_coverage.md" "$j/2"
printf '{"files": [{"path": "experiments/benchgate-evidence.json", "existed": false}, {"path": "benchmarks/benchmark_registry.json", "existed": true}, {"path": "docs/_generated/benchmark_coverage.md", "existed": true}]}\n' >"$j/index.json"
check "killed: promoted again"      test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "killed: says it undid"       grep -q "an interrupted promotion (killed between its writes) was undone first" "$work/out"
check "killed: one row"             test "$(jq '.measurements | length' "$work/p/experiments/benchgate-evidence.json")" = 1
diff "${BENCHGATE_SOURCE}/tests/cli/trees/mini/benchmarks/benchmark_registry.json" "$work/p/benchmarks/benchmark_registry.json" >"$work/diff"
check "killed: registry diff exact" diff -u "$work/want" "$work/diff"
check "killed: journal gone"        test ! -e "$j"
check "killed: check passes"        "$B" -C "$work/p" check
# killed after its writes, and the registry edited by hand since: the undo
# would throw the edit away; refused, nothing changed, the journal kept
# until the edit is undone (then the promotion is undone as above)
killed_after_writes() {
	rm -rf "$j"; mkdir -p "$j"
	cp "${BENCHGATE_SOURCE}/tests/cli/trees/mini/benchmarks/benchmark_registry.json" "$j/1"
	cp "${BENCHGATE_SOURCE}/tests/cli/trees/mini/docs/_generated/benchmark_coverage.md" "$j/2"
	printf '{"files": [{"path": "experiments/benchgate-evidence.json", "existed": false, "written_sha256": "%s"}, {"path": "benchmarks/benchmark_registry.json", "existed": true, "written_sha256": "%s"}, {"path": "docs/_generated/benchmark_coverage.md", "existed": true}]}\n' \
		"$(sha256sum <"$work/p/experiments/benchgate-evidence.json" | cut -c1-64)" \
		"$(sha256sum <"$work/p/benchmarks/benchmark_registry.json" | cut -c1-64)" >"$j/index.json"
}
killed_after_writes
reg="$work/p/benchmarks/benchmark_registry.json"
cp "$reg" "$work/reg-written.json"
sed -i 's/"next_gate": "[^"]*"/"next_gate": "HAND EDIT"/' "$reg"
"$B" -C "$work/p" render >/dev/null
snap >"$work/before"
check "edited since: exit 4"        test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
check "edited since: says so"       grep -qF "benchmarks/benchmark_registry.json has changed since a promotion was interrupted (it holds neither its text from before the promotion nor what the promotion wrote), so the promotion is not undone and nothing was changed: if the project's files are as they should be ('benchgate validate' passes), remove '.benchgate/promote-journal' and promote again" "$work/err"
snap >"$work/after"
check "edited since: nothing changed" cmp -s "$work/before" "$work/after"
check "edited since: the edit kept" grep -q "HAND EDIT" "$reg"
check "edited since: journal kept"  test -e "$j/index.json"
cp "$work/reg-written.json" "$reg"
"$B" -C "$work/p" render >/dev/null
check "as left: promoted again"     test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "as left: undone first"       grep -q "an interrupted promotion (killed between its writes) was undone first" "$work/out"
check "as left: one row"            test "$(jq '.measurements | length' "$work/p/experiments/benchgate-evidence.json")" = 1
check "as left: journal gone"       test ! -e "$j"
# killed after both writes, its journal naming the row it promoted: the
# next promote finishes it (renders, validates) rather than undo a promotion
# that a person may already have committed; this one then refused as done
killed_after_writes
mid=$(jq -r '.measurements[0].id' "$work/p/experiments/benchgate-evidence.json")
jq --arg m "$mid" '. + {measurement_id: $m, state: "measured"}' "$j/index.json" >"$j/i" && mv "$j/i" "$j/index.json"
: >"$work/p/docs/_generated/benchmark_coverage.md"   # killed before the render
check "written: refused as promoted" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "written: finished first"     grep -q "an interrupted promotion (killed after its writes) was finished first" "$work/out"
check "written: row kept"           test "$(jq -r '.measurements[0].id' "$work/p/experiments/benchgate-evidence.json")" = "$mid"
check "written: journal gone"       test ! -e "$j"
check "written: validates"          "$B" -C "$work/p" validate
# ... but one that failed and said it would be undone (its journal marked
# "undo": a write failed, and so did the putting back) is undone even
# where both its writes were made, never kept against what was said
killed_after_writes
jq --arg m "$mid" '. + {measurement_id: $m, state: "measured"}' "$j/index.json" >"$j/i" && mv "$j/i" "$j/index.json"
: >"$j/undo"
check "failed, marked: promoted again" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "failed, marked: undone first"  grep -q "an interrupted promotion (killed between its writes) was undone first" "$work/out"
check "failed, marked: journal gone"  test ! -e "$j"
# an interrupted promotion undone by a promote refused before any
# criterion (an unknown session): said on stderr, and in --json
killed_after_writes
dead=$(sh -c 'echo $$')   # the writer's temporary file, as SIGKILL leaves it
echo partial >"$work/p/experiments/benchgate-evidence.json.tmp.$dead"
check "undone, unknown: exit 1"     test "$(rc_of "$B" -C "$work/p" promote 999 --json)" = 1
check "undone, unknown: temporary file gone" test ! -e "$work/p/experiments/benchgate-evidence.json.tmp.$dead"
check "undone, unknown: said"       grep -qF "no session with id 999; see 'benchgate sessions' (before that, an interrupted promotion (killed between its writes) was undone: the evidence index, the registry and the generated document are as they were before it)" "$work/err"
check "undone, unknown: --json"     jqe '.session == 999 and (.error | test("was undone"))' "$work/out"
check "undone, unknown: journal gone" test ! -e "$j"
check "undone, unknown: then promoted" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
# copies without an index: the killed promotion had changed nothing yet
mkdir -p "$j" && echo junk >"$j/1"
check "unfinished journal: refused as promoted" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "unfinished journal: ignored" grep -q "already promoted" "$work/err"
check "unfinished journal: removed" test ! -e "$j"
check "unfinished journal: registry kept" diff -u "$work/want" <(diff "${BENCHGATE_SOURCE}/tests/cli/trees/mini/benchmarks/benchmark_registry.json" "$work/p/benchmarks/benchmark_registry.json")
# a journal that names other files, or does not parse, is never followed
mkdir -p "$j" && echo owned >"$j/0"
printf '{"files": [{"path": "../outside.txt", "existed": true}]}\n' >"$j/index.json"
check "foreign journal: exit 4"     test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
check "foreign journal: says so"    grep -q "promote-journal/index.json: files\[0\] is not the evidence index a promotion writes; put the files back by hand" "$work/err"
check "foreign journal: not written" test ! -e "$work/outside.txt"
echo '{"files": [' >"$j/index.json"
check "broken journal: exit 4"      test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
check "broken journal: says what to do" grep -q "a promotion was interrupted: put the evidence index, the registry and the generated document back by hand" "$work/err"
rm -rf "$j"

# ---- partial: memory layers missing (swap), and a scheduled-profile session
fresh
s=$(seed $G release-signoff 0.100 experiment=1 swap=none)
check "partial: exit 0"             test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "partial: says partial"       grep -q "promoted as partial" "$work/out"
check "partial: unmet memory shown" grep -q "\[unmet\] 6 memory" "$work/out"
check "partial: gate state"         test "$(jq -r --arg g "$G" '.gates[] | select(.id == $g) | .state' "$work/p/benchmarks/benchmark_registry.json")" = partial
check "partial: check passes"       "$B" -C "$work/p" check
check "partial: row resolves partial" test "$(jq -r '.measurements[0].parity | test("incomplete")' "$work/p/experiments/benchgate-evidence.json")" = true
# runs too short for the memory sampler: the unmet item says why, and what to do
fresh
s=$(seed $G release-signoff 0.100 experiment=1 tree=none)
check "short runs: partial"         test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "short runs: why unmeasured"  grep -qF "process-tree peak: not measured: every timed run ended before the first memory sample (one each 5 ms); give each run more work so that it lasts longer, or sample more often (the runbook's measure.sample_interval_ms; --sample-interval of measure)" "$work/out"
fresh
s=$(seed $G scheduled-profile 0.100 experiment=1)
check "scheduled: partial"          test "$(rc_of "$B" -C "$work/p" promote --json "$s")" = 0
check "scheduled: json state"       test "$(jq -r .state "$work/out")" = partial
# a partial promotion never lowers a measured gate
fresh
s=$(seed bin.cpu.test-box.bin1.warm release-signoff 0.100 experiment=1 swap=none)
check "no downgrade: refused"       test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "no downgrade: message"       grep -q "already measured; a partial promotion would lower it" "$work/out"

# ---- one refusal per criterion: exit 1, the criterion listed, nothing written
refuse() { # name, criterion text, then seed arguments
	local name=$1 want=$2; shift 2
	fresh
	local sid; sid=$(seed "$@")
	(cd "$work/p" && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort) >"$work/before"
	check "$name: exit 1"           test "$(rc_of "$B" -C "$work/p" promote "$sid")" = 1
	check "$name: names it"         grep -qF -- "$want" "$work/out"
	check "$name: says not promoted" grep -q "not promoted" "$work/out"
	(cd "$work/p" && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort) >"$work/after"
	check "$name: nothing changed"  cmp -s "$work/before" "$work/after"
}
refuse "1 revisions"  "[unmet] 1 revisions"  $G release-signoff 0.1 experiment=1 dirty=1
refuse "2 machine"    "[unmet] 2 machine"    $G release-signoff 0.1 experiment=1 ctx.runtime=null
refuse "3 geometry"   "detector_bin of the session (4) is not the gate's (2)" $G release-signoff 0.1 experiment=1 ctx.detector_bin=4
refuse "4 cache"      "[unmet] 4 cache"      $G release-signoff 0.1 experiment=1 ctx.cache_state=null
refuse "5 timing"     "[unmet] 5 timing"     $G release-signoff 0.1 experiment=1 timing_boundary=none
refuse "7 parity"     "[unmet] 7 parity"     $G release-signoff 0.1 experiment=1 parity=none
refuse "7 outputs"    "outputs fingerprinted" $G release-signoff 0.1 experiment=1 outputs=0
refuse "8 manifest"   "[unmet] 8 records"    $G release-signoff 0.1 experiment=1 manifest=0
refuse "8 artifacts"  "raw artifact"         $G release-signoff 0.1 experiment=1 artifacts=0
refuse "8 RUNS.md"    "not a terminal 'ok'"  $G release-signoff 0.1 experiment=1 runs_md=0
refuse "8 no experiment" "names no experiment" $G release-signoff 0.1
refuse "pre: blocked" "is blocked"           $G release-signoff 0.1 experiment=1 parity=fail
refuse "pre: tier"    "tier 'pr-smoke' never promotes" $G pr-smoke 0.1 experiment=1
refuse "pre: diagnostic" "tier 'diagnostic' never promotes" $G diagnostic 0.1 experiment=1
refuse "1 short revision" "source revision 'abc1234' is not a full Git SHA" $G release-signoff 0.1 experiment=1 revision=abc1234
refuse "2 other computer" "the session ran on 'CI runner', the gate's computer is 'Test box (x86, 16 GB)'" \
	$G release-signoff 0.1 experiment=1 computer="CI runner"
# records changed after the session: each is refused, nothing written
refuse_after() { # name, criterion text, a shell edit run in the project after seeding
	local name=$1 want=$2 edit=$3
	fresh
	local sid; sid=$(seed $G release-signoff 0.1 experiment=1)
	(cd "$work/p" && bash -c "$edit") || { check "$name: edit" false; return; }
	(cd "$work/p" && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort) >"$work/before"
	check "$name: exit 1"           test "$(rc_of "$B" -C "$work/p" promote "$sid")" = 1
	check "$name: names it"         grep -qF -- "$want" "$work/out"
	(cd "$work/p" && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort) >"$work/after"
	check "$name: nothing changed"  cmp -s "$work/before" "$work/after"
}
refuse_after "8 tampered artifact" "-bin-cpu-test-box-bin2-warm does not match its SHA-256 in the manifest" \
	'echo "{}" >> experiments/*-bin-cpu-test-box-bin2-warm/runs.jsonl'
refuse_after "8 manifest not completed" "has status 'failed', not 'completed'" \
	'm=$(ls experiments/*-bin-cpu-test-box-bin2-warm/manifest.json); jq ".status = \"failed\"" "$m" >m.tmp && mv m.tmp "$m"'
refuse_after "8 no outputs retained" "retains no outputs (raw artifacts)" \
	'm=$(ls experiments/*-bin-cpu-test-box-bin2-warm/manifest.json); jq ".outputs = []" "$m" >m.tmp && mv m.tmp "$m"'
refuse_after "8 no RUNS.md row" "has no row for experiment" \
	'grep -v -- "-bin-cpu-test-box-bin2-warm" experiments/RUNS.md >r.tmp && mv r.tmp experiments/RUNS.md'
refuse_after "pre: superseded gate" "gate '$G' is superseded; it takes no timing evidence" \
	"sed -i 's/\"configuration\": \"bin2\", \"state\": \"pending\"/\"configuration\": \"bin2\", \"state\": \"superseded\"/' benchmarks/benchmark_registry.json"
# a project never rendered: promotion makes the document's folder, as render
# does (it failed with exit 4, 'cannot write'); a file in its way is exit 4,
# and nothing is left changed
fresh
s=$(seed $G release-signoff 0.1 experiment=1)
rm -rf "$work/p/docs/_generated"
check "unrendered: promoted"        test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "unrendered: document made"   test -s "$work/p/docs/_generated/benchmark_coverage.md"
check "unrendered: validate"        "$B" -C "$work/p" validate
fresh
s=$(seed $G release-signoff 0.1 experiment=1)
rm -rf "$work/p/docs/_generated"
sed -i 's/"priority": 2,/"priority": "high",/' "$work/p/benchmarks/benchmark_registry.json"
check "unrenderable: refused"       test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "unrenderable: no folder left" test ! -e "$work/p/docs/_generated"
fresh
s=$(seed $G release-signoff 0.1 experiment=1)
rm -rf "$work/p/docs/_generated" && : >"$work/p/docs/_generated"
snap >"$work/before"
check "folder blocked: exit 4"      test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
check "folder blocked: says so"    grep -q "docs/_generated.*Not a directory; nothing was changed" "$work/err"
snap >"$work/after"
check "folder blocked: unchanged"   cmp -s "$work/before" "$work/after"
# a gate renamed in the registry since: criteria 3 to 5 say there is no gate
# to compare with (they said it declared no cache state, or were met)
refuse_after "pre: gate gone"  "gate '$G' is not in the registry" \
	"sed -i 's/\"id\": \"$G\"/\"id\": \"$G.renamed\"/' benchmarks/benchmark_registry.json"
check "gate gone: 3 to 5 say why"   test "$(grep -c "^        - there is no gate to compare with: '$G' is not in the registry$" "$work/out")$(grep -c "declares no\|\[met\] 3" "$work/out")" = 30
# every unmet criterion is listed at once
fresh
s=$(seed $G release-signoff 0.1 dirty=1 ctx.runtime=null parity=none)
rc_of "$B" -C "$work/p" promote "$s" >/dev/null
check "every unmet listed"          test "$(grep -c '\[unmet\]' "$work/out")" = 4
# a gate whose satisfied_by is an empty text (no evidence, to the reference):
# the promotion writes the list there
fresh
s=$(seed $G release-signoff 0.1 experiment=1)
(cd "$work/p" && jq '(.gates[] | select(.id == "'$G'")).satisfied_by = ""' benchmarks/benchmark_registry.json >r.tmp &&
	mv r.tmp benchmarks/benchmark_registry.json && "$B" render >/dev/null)
check "satisfied_by empty text: validates first" "$B" -C "$work/p" validate
check "satisfied_by empty text: promoted"  test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "satisfied_by empty text: now a list" test "$(jq -r '.gates[] | select(.id == "'$G'") | .satisfied_by | type' \
	"$work/p/benchmarks/benchmark_registry.json")" = array
check "satisfied_by empty text: validates after" "$B" -C "$work/p" validate
# an evidence index whose artifacts are not a list cannot take the new row
# (an empty object is no artifacts to a reader, but nothing to append to)
fresh
s=$(seed $G release-signoff 0.1 experiment=1)
echo '{"schema": "benchgate-evidence/v1", "artifacts": {}, "measurements": []}' >"$work/p/experiments/benchgate-evidence.json"
refused "evidence lists not lists" "$s" -qxF \
	"benchgate: experiments/benchgate-evidence.json: 'artifacts' and 'measurements' must be lists; the evidence index is benchgate's own file: put back what it wrote (git checkout -- experiments/benchgate-evidence.json), or move the file away; nothing was changed"
printf '{"schema": ' >"$work/p/experiments/benchgate-evidence.json"
refused "evidence index not JSON" "$s" -qF "; the evidence index is benchgate's own file: put back what it wrote (git checkout -- experiments/benchgate-evidence.json), or move the file away; nothing was changed"
# another program's evidence index where benchgate keeps its own: never
# appended to (it would keep its schema and lose its generator)
echo '{"schema": "my-own/v9", "artifacts": [], "measurements": []}' >"$work/p/experiments/benchgate-evidence.json"
refused "foreign evidence index" "$s" -qxF \
	"benchgate: experiments/benchgate-evidence.json: not benchgate's evidence index (its schema is 'my-own/v9', not 'benchgate-evidence/v1'): benchgate keeps this file for itself; move the file away, or give benchgate.json another experiments folder; nothing was changed"
echo '{"artifacts": [], "measurements": []}' >"$work/p/experiments/benchgate-evidence.json"
refused "evidence index without a schema" "$s" -qF "(it has no \"schema\", not 'benchgate-evidence/v1')"
# a registry that did not validate before: said so, not blamed on the promotion
fresh
(cd "$work/p" && jq '(.gates[] | select(.id != "'$G'")).priority = 9' benchmarks/benchmark_registry.json >r.tmp &&
	mv r.tmp benchmarks/benchmark_registry.json && "$B" render >/dev/null)
s=$(seed $G release-signoff 0.1 experiment=1)
refused "invalid before" "$s" -q "^benchgate: benchmarks/benchmark_registry.json does not validate, before the promotion too: "
# ... nor when it did not even load: its evidence file, which the registry
# imports and names a row of, removed (the promotion would write it anew
# without that row)
fresh
s1=$(seed $G release-signoff 0.1 experiment=1)
check "evidence removed: the first promoted" test "$(rc_of "$B" -C "$work/p" promote "$s1")" = 0
rm "$work/p/experiments/benchgate-evidence.json"
s2=$(seed $G release-signoff 0.1 experiment=1)
refused "evidence removed" "$s2" -q \
	"^benchgate: benchmarks/benchmark_registry.json does not validate, before the promotion too: experiments/benchgate-evidence.json: cannot read"
# the registry imports the evidence file already, written another way
# ("./experiments/..."): the promotion names it once, as written (it added a
# second import, and the promoted registry then failed validation on ids)
fresh
echo '{"schema": "benchgate-evidence/v1", "artifacts": [], "measurements": []}' >"$work/p/experiments/benchgate-evidence.json"
(cd "$work/p" && jq '.evidence_imports += [{"path": "./experiments//benchgate-evidence.json"}]' \
	benchmarks/benchmark_registry.json >r.tmp && mv r.tmp benchmarks/benchmark_registry.json && "$B" render >/dev/null)
s=$(seed $G release-signoff 0.1 experiment=1)
check "imported as ./: promoted"    test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "imported as ./: one import"  test "$(grep -c benchgate-evidence.json "$work/p/benchmarks/benchmark_registry.json")" = 1
check "imported as ./: one row"     test "$(jq '.measurements | length' "$work/p/experiments/benchgate-evidence.json")" = 1
check "imported as ./: validates"   "$B" -C "$work/p" validate
# a refusal that is no criterion says itself, not "1 unmet"
s=$(seed $G scheduled-profile 0.1 experiment=1)
check "measured, partial: refused"  test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "measured, partial: says why" grep -q "cannot be promoted: gate '$G' is already measured; a partial promotion would lower it" "$work/err"
# a diagnostic measure session is not a gate session
fresh
(cd "$work/p" && "$B" measure -q -r 1 -w 0 -- true >/dev/null 2>&1)
check "measure session: refused"    test "$(rc_of "$B" -C "$work/p" promote 1)" = 1
check "measure session: message"    grep -q "not a gate session" "$work/out"

echo "$fails failed"
[ "$fails" = 0 ]
