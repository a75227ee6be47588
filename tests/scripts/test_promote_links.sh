#!/usr/bin/env bash
# benchgate promote in a project whose files are symbolic links (a registry
# kept elsewhere, a generated document linked into docs/): the file a link
# leads to is written, atomically beside it, and the link stays a link; an
# evidence index that is a link to nothing, or a loop of links, is exit 4
# with nothing changed and the link kept (never removed on the way back); a
# link that makes one of them another of the project's files is refused, as
# is the generated document through a link a file of an experiment, and an
# evidence index that is a link.
# Sessions are stored the way `benchgate run` stores them
# (tests/unit/test_seedtool.c), so nothing is measured. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
seeded_setup
fresh() { rm -rf "$work/p"; cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"; }
snap() { (cd "$work/p" && find . ! -path './.benchgate*' ! -type d -printf '%p %y %l\n' | sort && find . -type f ! -path './.benchgate/*' -exec sha256sum {} + | sort); }

# ---- the registry and the generated document are links (one into
# another folder): written through, the links kept
fresh
mkdir "$work/p/shared"
mv "$work/p/benchmarks/benchmark_registry.json" "$work/p/shared/registry.json"
ln -s ../shared/registry.json "$work/p/benchmarks/benchmark_registry.json"
mv "$work/p/docs/_generated/benchmark_coverage.md" "$work/p/docs/_generated/real.md"
ln -s real.md "$work/p/docs/_generated/benchmark_coverage.md"
s=$(seed $G release-signoff 0.100 experiment=1)
check "links: promote exit 0"        test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0
check "links: registry still a link" test -L "$work/p/benchmarks/benchmark_registry.json"
check "links: registry link target"  test "$(readlink "$work/p/benchmarks/benchmark_registry.json")" = ../shared/registry.json
check "links: target written"        grep -q '"satisfied_by"' "$work/p/shared/registry.json"
check "links: target state measured" test "$(jq -r --arg g $G '.gates[] | select(.id == $g) | .state' "$work/p/shared/registry.json")" = measured
check "links: document still a link" test -L "$work/p/docs/_generated/benchmark_coverage.md"
check "links: document rendered"     grep -q "test-box-16gb-benchgate-bin-cpu-test-box-bin2-warm-s1" "$work/p/docs/_generated/real.md"
check "links: no temporary left"     test -z "$(find "$work/p" -name '*.tmp.*')"
check "links: validate"              "$B" -C "$work/p" validate
check "links: check"                 "$B" -C "$work/p" check

# ---- the evidence index a link to nothing: refused, nothing changed, the
# link kept (it was never taken for an absent file, removed on the way back)
fresh
ev="$work/p/experiments/benchgate-evidence.json"
ln -s nowhere.json "$ev"
s=$(seed $G release-signoff 0.100 experiment=1)
snap >"$work/before"
check "dangling: exit 4"             test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
check "dangling: says so"            grep -q "experiments/benchgate-evidence.json: cannot write: it is a symbolic link to nothing; make it lead to a file, or remove it; nothing was changed" "$work/err"
check "dangling: link kept"          test -L "$ev"
snap >"$work/after"
check "dangling: nothing changed"    cmp -s "$work/before" "$work/after"

# ---- a loop of links
rm "$ev"
ln -s loop.json "$ev"
ln -s benchgate-evidence.json "$work/p/experiments/loop.json"
snap >"$work/before"
check "loop: exit 4"                 test "$(rc_of "$B" -C "$work/p" promote "$s")" = 4
# said as render says it, not in the C library's words
check "loop: names it"               grep -q "experiments/benchgate-evidence.json: cannot write: it is a symbolic link that cannot be followed (a loop of links); make it lead to a file, or remove it; nothing was changed" "$work/err"
snap >"$work/after"
check "loop: nothing changed"        cmp -s "$work/before" "$work/after"

# ---- the generated document a link to another of the project's files (the
# parity matrix): the re-render would write over that file; refused
fresh
rm "$work/p/docs/_generated/benchmark_coverage.md"
ln -s ../../tests/parity/backend_matrix.json "$work/p/docs/_generated/benchmark_coverage.md"
s=$(seed $G release-signoff 0.100 experiment=1)
snap >"$work/before"
check "two names: exit 1"            test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "two names: says so"           grep -q "docs/_generated/benchmark_coverage.md: it is the parity matrix too (one file under two names); make it a file of its own; nothing was changed" "$work/err"
snap >"$work/after"
check "two names: nothing changed"   cmp -s "$work/before" "$work/after"

# ---- through a link, a file of an experiment: the generated document a
# link to its manifest or its evidence, the evidence index a link to an
# experiment's evidence (which the promotion would reformat and append to):
# refused, nothing changed
x=experiments/20261101-mini-baseline
for case in "manifest.json:it is '$x/manifest.json' too, a file of the experiments folder" \
	"evidence-index.json:it is the evidence import '$x/evidence-index.json' too"; do
	fresh
	rm "$work/p/docs/_generated/benchmark_coverage.md"
	ln -s "../../$x/${case%%:*}" "$work/p/docs/_generated/benchmark_coverage.md"
	s=$(seed $G release-signoff 0.100 experiment=1)
	snap >"$work/before"
	check "document a link to ${case%%:*}: exit 1" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
	check "... says so" grep -qF "docs/_generated/benchmark_coverage.md: ${case#*:} (one file under two names); make it a file of its own; nothing was changed" "$work/err"
	snap >"$work/after"
	check "... nothing changed" cmp -s "$work/before" "$work/after"
done
fresh
ln -s 20261101-mini-baseline/evidence-index.json "$work/p/experiments/benchgate-evidence.json"
s=$(seed $G release-signoff 0.100 experiment=1)
snap >"$work/before"
check "evidence index a link: exit 1" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 1
check "... says so" grep -qF "experiments/benchgate-evidence.json: a link (to '$x/evidence-index.json'): promote keeps benchgate's evidence index as a file of its own and writes no other file through it; replace the link with a copy of the file it leads to, or remove it; nothing was changed" "$work/err"
snap >"$work/after"
check "... nothing changed" cmp -s "$work/before" "$work/after"
rm "$work/p/experiments/benchgate-evidence.json"
check "... and without the link: exit 0" test "$(rc_of "$B" -C "$work/p" promote "$s")" = 0

echo "$fails failed"
[ "$fails" = 0 ]
