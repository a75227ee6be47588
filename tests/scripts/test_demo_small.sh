#!/usr/bin/env bash
# The demo's registry at a reduced size (issue 6): scripts/demo with
# BENCHGATE_DEMO_SMALL=1 in a new scratch folder, which the demo fills with
# examples/detector-binning and makes a git repository of its own. Checks:
# one key reaches a decision beyond No baseline, the broken gate blocks with
# no timed run, the kernel gate is timed by the program's own samples, a
# release-signoff session is promoted (the registry names it, validate and
# check pass), and the dashboard is written.
set -u
# the machine lease of the tests' runs is their own (tests/run-all sets it),
# never this machine's /run/lock/benchgate-machine.lock
: "${BENCHGATE_MACHINE_LOCK:?run the tests through tests/run-all, or set BENCHGATE_MACHINE_LOCK to a file of your own}"
bin=${BENCHGATE:?}
src=${BENCHGATE_SOURCE:?}
build=${BENCHGATE_BUILD:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a new folder outside any git repository: the demo makes the project and
# its repository (a session records its source revision)
BENCHGATE_DEMO_DIR="$work/demo" BENCHGATE_DEMO_SMALL=1 BENCHGATE_DEMO_NO_BUILD=1 NO_COLOR=1 \
	bash "$src/scripts/demo" >"$work/log" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "the demo exited $rc"
git -C "$work/demo" log --oneline 2>/dev/null | grep -q "benchgate demo project" ||
	fail "the demo did not make its folder a git repository"
grep -q "decision: \(pass\|investigate\)" "$work/log" || fail "no key reached pass or investigate"
grep -q "decision: no-baseline" "$work/log" || fail "no No-baseline decision shown"
grep -q "decision: block" "$work/log" || fail "the broken gate did not block"
grep -q "blocked (1 smoke, 0 warmup, 0 timed runs)" "$work/demo/experiments/"*broken*/session.json 2>/dev/null ||
	grep -q '"timed": 0' "$work/demo/experiments/"*broken*/session.json || fail "the broken gate recorded timed runs"
grep -q '"state": "measured"' "$work/demo/benchmarks/benchmark_registry.json" || fail "nothing was promoted to measured"
# the kernel gate is timed by the program (timing "reported")
grep -q "^| [0-9]*-bin-fast-bin2-kernel.* | ok | reported p50 " "$work/demo/experiments/RUNS.md" ||
	fail "the kernel gate's RUNS.md row does not show its reported timing"
ls "$work/demo/experiments/"*bin-fast-bin2-kernel*/runs/run-001.result.json >/dev/null 2>&1 ||
	fail "the kernel gate's result files were not kept"
(cd "$work/demo" && "$bin" validate >/dev/null && "$bin" check >/dev/null) || fail "validate or check failed after the demo"
[ -s "$work/demo/dashboard/index.html" ] || fail "no dashboard"
# the demo's own repository is left clean (its experiments and promotion
# committed, the dashboard ignored): a second demo's sessions are then of
# committed source, not pending ones that cannot be promoted
[ -z "$(git -C "$work/demo" status --porcelain 2>&1)" ] ||
	fail "the demo left its repository dirty: $(git -C "$work/demo" status --porcelain 2>&1 | head -n 3 | tr '\n' ' ')"
if [ "$fails" != 0 ]; then sed 's/^/    /' "$work/log" | tail -n 60; exit 1; fi
echo "demo (small): all checks passed"
