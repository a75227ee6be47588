#!/usr/bin/env bash
# The decision window is never smaller than the comparison contract's
# minimum of accepted sessions: with a minimum of 21 (above the default
# window of 20) a key's 22nd session is decided against its 21 accepted
# ones, where it was no-baseline for ever ("20 accepted sessions of this
# key; no threshold applies before 21"), every session auto-accepted and no
# regression ever flagged. Needs git and jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
jq '.comparison_contract.minimum_accepted_sessions_before_hard_threshold = 21' benchmarks/profile_matrix.json >"$work/m" &&
	mv "$work/m" benchmarks/profile_matrix.json
printf '.benchgate/\nout/\n' >.gitignore
mkdir -p out
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1

# (the 22nd's decision is of real timings: pass, investigate or, slowed by
# the machine, block, exit 1; any of them is a decision)
check "22 sessions: exit 0 or 1"     test "$(rc_of "$B" run -q life.ok --times 22 -r 1 -w 0)" -le 1
check "the 21st: no baseline, 20 before it" \
	jqe '.decision == "no-baseline" and (.reasons[0] | startswith("20 accepted sessions of this key; no threshold applies before 21"))' \
	<("$B" compare 21 --json)
check "the 22nd: decided"            jqe '(.decision | IN("pass", "investigate", "block")) and .window == 21 and (.baseline | length) == 21' \
	<("$B" compare 22 --json)

echo "$fails failed"
[ "$fails" = 0 ]
