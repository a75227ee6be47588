#!/usr/bin/env bash
# Hostile values in every argument slot of the verbs that read a project
# and its store: empty, '-', '--', signs, numbers past int64 and double
# (1e309, 18446744073709551616), nan, inf, spaces, hexadecimal, a 5000-byte
# word, a line break, bytes that are not UTF-8, printf directives, paths
# that climb or name a device. Each run must end with one of benchgate's
# statuses (0 to 4; a signal, an abort or a sanitizer report is a failure)
# and within 60 s. It checks no message: the golden cases do that; this
# is the net under them. Sessions are stored the way `benchgate run` stores
# them (tests/unit/test_seedtool.c).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
seeded_setup
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
chmod -R u+w "$work/p"
cd "$work/p" || exit 1
for p in 0.100 0.101 0.099 0.100 0.102 0.150; do seed "$G" scheduled-profile "$p" >/dev/null; done
seed "$G" release-signoff 0.100 experiment=1 >/dev/null
long=$(printf 'a%.0s' $(seq 5000))
values=("" "-" "--" "0" "-1" "1e309" "nan" "inf" "-inf" "18446744073709551616"
	"-9223372036854775808" " 5" "5 " "0x10" "1.5" "$long" $'a\nb' $'\xff\xfe' "é"
	"%s%n%x" "../../../../etc/passwd" "/dev/null" "/" "$G" "1" "7")
runs=0
try() {
	local out rc
	runs=$((runs + 1))
	out=$(timeout 60 "$B" "$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" -gt 4 ] || grep -q -E "Sanitizer|runtime error" <<<"$out"; then
		echo "FAIL exit $rc: benchgate $(printf '%q ' "$@" | cut -c1-200)"
		grep -E "ERROR|runtime error|SUMMARY" <<<"$out" | head -n 3
		fails=$((fails + 1))
	fi
}
o=$work/o && mkdir -p "$o"
for v in "${values[@]}"; do
	try sessions --last "$v"
	try history --last "$v" "$G"
	try history --key "$v"
	try history "$v" --json
	try session "$v"
	try session "$v" --json
	try key "$v"
	try compare "$v"
	try compare --last "$v" --json
	try compare 1 --fail-on "$v"
	try accept "$v" --why x
	try reject 6 --why "$v"
	try promote "$v"
	try show "$v"
	try command "$v"
	try list --state "$v"
	try list --platform "$v"
	try next --limit "$v"
	try render --output "$o/r$v"
	try dashboard --output "$o/d$v"
	try -C "$v" validate
	try --config "$v" list
	try measure -q -r "$v" -- true
	try measure -q --timeout "$v" -r 1 -- true
	try measure -q --min-time "$v" --max-runs 2 -- true
	try measure -q --sample-interval "$v" -r 1 -- true
	try measure -q --env "$v" -r 1 -- true
	try measure -q --parity "sha256:$v" -r 1 -- true
	try measure -q --parity "allclose:$v" -r 1 -- true
	try measure -q --evict "$v" -r 1 -- true
	try measure -q -r 1 -- "$v"
	try run "$v"
	try run "$G" --tier "$v"
	try run "$G" --times "$v" -q
	try experiments abandon "$v" --why x
	try lease "$v"
	try repeat "$v"
	try help "$v"
done
check "every hostile run ended with a status of benchgate's ($runs runs)" test "$fails" = 0

echo "$fails failed"
[ "$fails" = 0 ]
