#!/usr/bin/env bash
# A RUNS.md kept outside the experiments folder (profile.runs_index
# "docs/RUNS.md", tracked by git): run writes its rows there, and that is
# benchgate's own record, not the source under test, so the next session
# is not taken for one of uncommitted source (which run stores pending,
# never joining the baseline by itself). Then the experiments folder
# elsewhere too (profile.experiments): run names the manifest there; and
# both outside the repository, which git is not asked about. Measured with BENCHGATE_NO_CGROUP
# set (no run cgroup: nothing shared with other tests). Needs jq and git.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
command -v git >/dev/null || { echo "this test needs git"; exit 1; }
seeded_setup
export BENCHGATE_NO_CGROUP=1
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
jq '.profile = ((.profile // {}) + {runs_index: "docs/RUNS.md"})' benchgate.json >"$work/cfg" && cat "$work/cfg" >benchgate.json
mv experiments/RUNS.md docs/RUNS.md
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1

check "first run: exit 0"       test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "RUNS.md has its row"     grep -q "life-ok" docs/RUNS.md
# the row's link leads from docs/ to the manifest
link=$(grep -o "\[manifest\]([^)]*)" docs/RUNS.md | tail -n 1 | sed 's/^\[manifest\](//; s/)$//')
check "the row's link: ../experiments/ID/manifest.json" sh -c "echo '$link' | grep -Eqx '\.\./experiments/[0-9]{8}-life-ok/manifest\.json'"
check "the row's link leads to the manifest" test -f "docs/$link"
check "second run: exit 0"      test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "second: not uncommitted" bash -c "! grep -q 'uncommitted changes' '$work/out'"
check "second: source clean"    jqe '.provenance.git.dirty == false' <("$B" session 2 --json)
check "second: auto-accepted"   jqe '.[1].curation == "auto-accepted"' <("$B" history life.ok --json)
# a change to the source is still seen
echo "# changed" >>data/input.txt
check "changed: exit 0"         test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "changed: pending"        jqe '.[2].curation == "pending"' <("$B" history life.ok --json)

# the experiments folder elsewhere too (profile.experiments): run names the
# manifest where it is
jq '.profile.experiments = "lab/exps"' benchgate.json >"$work/cfg" && cat "$work/cfg" >benchgate.json
mkdir lab && mv experiments lab/exps && git add -A && git -c user.email=t@t -c user.name=t commit -qm moved || exit 1
check "experiments elsewhere: exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
exp=$(grep -o "manifest: [^ ]*" "$work/out" | cut -d' ' -f2)
check "experiments elsewhere: the manifest named" test -f "$exp"
check "experiments elsewhere: under lab/exps" test "${exp#lab/exps/}" != "$exp"
link=$(grep -o "\[manifest\]([^)]*)" docs/RUNS.md | tail -n 1 | sed 's/^\[manifest\](//; s/)$//')
check "experiments elsewhere: the row's link leads to it" test "docs/$link" -ef "$exp"


# the experiments folder and RUNS.md outside the repository (../results):
# nothing of them is named to git, which refuses a pathspec there
mkdir -p "$work/results" && mv docs/RUNS.md "$work/results/RUNS.md"
jq '.profile.experiments = "../results" | .profile.runs_index = "../results/RUNS.md"' benchgate.json >"$work/cfg" && cat "$work/cfg" >benchgate.json
git add -A && git -c user.email=t@t -c user.name=t commit -qm "outside" || exit 1
check "experiments outside the repository: exit 0" test "$(rc_of "$B" run -q --no-repeat life.ok)" = 0
check "experiments outside the repository: clean" jqe '.provenance.git.dirty == false' <("$B" session "$("$B" compare --last life.ok --json | jq .session)" --json)
check "experiments outside the repository: the row" grep -q "life-ok" "$work/results/RUNS.md"

echo "$fails failure(s)"
[ "$fails" = 0 ]
