#!/usr/bin/env bash
# The figures a session and a decision show, recomputed from what they are
# made of by a second implementation (jq), so that a wrong filter, field or
# formula anywhere between the runs and the output cannot pass unseen:
# - each statistics entry of measured sessions (count, min, p50 and p95
#   interpolated as numpy's default, max, mean, population stddev, MAD)
#   from the session's own successful timed runs, and the outliers (wall
#   time beyond p50 + 10 x MAD), for process timing and reported timing;
# - each decision (docs/decisions.md): per metric, centre = median of the
#   baseline sessions' figure, scale = max(1.4826 x MAD, floor x |centre|),
#   outside when |value - centre| > k x scale; investigate when a metric is
#   outside, else pass; the baseline ids are the most recent accepted
#   sessions of the key;
# - the key id: the SHA-256 of the key's canonical text, which holds the fields
#   `key` shows.
# Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
seeded_setup
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/p"
cd "$work/p" || exit 1

# jq definitions shared by every check: numpy's linear percentile, the
# median, MAD, population stddev, and a relative comparison
defs='
def pct($q): sort as $s | ($s | length) as $n | (($n - 1) * $q) as $pos
	| ($pos | floor) as $lo | ([$lo + 1, $n - 1] | min) as $hi
	| $s[$lo] + ($s[$hi] - $s[$lo]) * ($pos - $lo);
def median: pct(0.5);
def mad: median as $m | map(. - $m | fabs) | median;
def mean: add / length;
def stddev: mean as $m | (map((. - $m) * (. - $m)) | add / length) | sqrt;
def near($a; $b): ($a - $b | fabs) <= 1e-9 * ([($a | fabs), ($b | fabs), 1] | max);
def entry: {count: length, min: min, p50: median, p95: pct(0.95), max: max,
	mean: mean, stddev: stddev, mad: mad};
def same_entry($got): . as $want | $got != null
	and ([$want | keys[] | . as $k | near($want[$k]; $got[$k])] | all);
'

# --- statistics of measured sessions: spread-out runs, one slow one ---
cat >vary.sh <<'SH'
#!/bin/sh
n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
case $n in
7) sleep 0.3 ;;                       # an outlier among the timed runs
*) sleep 0.0$((n % 5 + 1)) ;;
esac
head -c $((n * 300000)) /dev/zero | cat >/dev/null
SH
chmod +x vary.sh
check "measured session" test "$(rc_of "$B" measure -q -w 1 -r 11 --json -- ./vary.sh)" = 0
cp "$work/out" m.json
# the runs the statistics are made of: timed, succeeded, not suspended
runs='[.runs[] | select(.phase == "timed" and .exit_status == 0 and (.flags | index("suspended") | not))]'
for f in wall_ns user_ns sys_ns max_rss_bytes tree_peak_bytes; do
	check "statistics.$f recomputed" jqe "$defs $runs as \$r
		| [\$r[] | .$f | select(. != null)] | entry | same_entry(\$m[0].statistics.$f)" --slurpfile m m.json \
		m.json
done
check "cpu_ns is user + sys" jqe "$defs $runs | map(.user_ns + .sys_ns) | entry as \$e
	| \$e | same_entry(\$m[0].statistics.cpu_ns)" --slurpfile m m.json m.json
check "an outlier was there to find" jqe '.outliers | length >= 1' m.json
check "outliers recomputed" jqe "$defs $runs as \$r | [\$r[].wall_ns] as \$w
	| (\$w | median) as \$p50 | (\$w | mad) as \$mad
	| [\$r[] | select(.wall_ns > \$p50 + 10 * \$mad) | .ordinal] == .outliers" m.json
check "outliers flagged on their runs" jqe '.outliers as $o
	| [.runs[] | select(.flags | index("outlier")) | .ordinal] == $o' m.json

# --- statistics of a reported-timing session: the pooled samples ---
cat >report.sh <<'SH'
#!/bin/sh
n=$(cat rcount 2>/dev/null || echo 0); n=$((n + 1)); echo $n >rcount
printf '{"samples_seconds": [0.0%s1, 0.012, 0.0%s7], "metrics": {"gflops": %s.25}}\n' \
	$((n % 4 + 1)) $((n % 3 + 2)) $((n * n % 7)) >"$BENCHGATE_RESULT"
SH
chmod +x report.sh
check "reported session" test "$(rc_of "$B" measure -q -w 1 -r 6 --timing reported --json -- ./report.sh)" = 0
cp "$work/out" r.json
check "statistics.reported_ns recomputed" jqe "$defs $runs
	| [.[].reported.samples_seconds[] * 1e9] | entry | same_entry(\$m[0].statistics.reported_ns)" \
	--slurpfile m r.json r.json
check "statistics.metrics.gflops recomputed" jqe "$defs $runs
	| [.[].reported.metrics.gflops] | entry | same_entry(\$m[0].statistics.metrics.gflops)" \
	--slurpfile m r.json r.json
check "metrics.gflops is their median" jqe "$defs $runs
	| [.[].reported.metrics.gflops] | near(median; \$m[0].metrics.gflops)" --slurpfile m r.json r.json

# --- decisions: sessions of one key stored as run stores them ---
# p50 figures around 0.1 s with a spread, a slow one (investigate), a fast
# one (investigate: either direction counts), and equal ones (MAD 0: the
# floor sets the scale)
ids=()
for p in 0.100 0.104 0.097 0.101 0.099 0.102 0.100 0.140 0.098 0.100 0.100 0.100 0.100 0.100 0.070 0.1004; do
	ids+=("$(seed "$G" scheduled-profile "$p")")
done
check "sixteen sessions stored" test "${#ids[@]}" = 16
# the figure of a metric in a session document, as compare names it
fig='def fig($m): if $m == "wall_p50" then .statistics.wall_ns.p50 / 1e9
	elif $m == "wall_p95" then .statistics.wall_ns.p95 / 1e9
	elif $m == "wall_max" then .statistics.wall_ns.max / 1e9
	elif $m == "tree_peak_bytes" then .statistics.tree_peak_bytes.max
	else error("metric \($m) unknown to this test") end;'
for s in "${ids[@]}"; do
	"$B" compare --json "$s" >"c$s.json" 2>/dev/null
	"$B" session --json "$s" >"s$s.json"
done
# the sessions that count in a baseline: accepted, by benchgate or a person
accepted=$(for s in "${ids[@]}"; do jq -r --argjson s "$s" \
	'select(.curation == "auto-accepted" or .curation == "accepted") | $s' "c$s.json"; done | jq -s -c .)
decided=0 seen_investigate=0 seen_pass=0
for s in "${ids[@]}"; do
	d=$(jq -r .decision "c$s.json")
	[ "$d" = pass ] || [ "$d" = investigate ] || continue
	decided=$((decided + 1))
	[ "$d" = investigate ] && seen_investigate=$((seen_investigate + 1))
	[ "$d" = pass ] && seen_pass=$((seen_pass + 1))
	bfiles=$(jq -r '.baseline | map("s\(.).json") | join(" ")' "c$s.json")
	# shellcheck disable=SC2086
	jq -s . $bfiles >"b$s.json"
	check "session $s: every metric recomputed" jqe "$defs $fig
		.k as \$k | .floor as \$floor
		| [.metrics[] | . as \$row
		   | (\$b[0] | map(fig(\$row.metric)) | map(select(. != null))) as \$base
		   | (\$base | median) as \$c | (\$base | mad) as \$mad
		   | ([1.4826 * \$mad, \$floor * (\$c | fabs)] | max) as \$scale
		   | (\$s[0] | fig(\$row.metric)) as \$v
		   | near(\$row.value; \$v) and near(\$row.centre; \$c) and near(\$row.scale; \$scale)
		     and (\$row.outside == ((\$v - \$c | fabs) > \$k * \$scale))
		     and \$row.baseline_values == (\$base | length)]
		| length == 4 and all" --slurpfile b "b$s.json" --slurpfile s "s$s.json" "c$s.json"
	check "session $s: decision from its metrics" jqe \
		'.decision == (if any(.metrics[]; .outside) then "investigate" else "pass" end)' "c$s.json"
	# the baseline: the accepted sessions before it, most recent first, at most 20
	check "session $s: baseline ids" jqe --argjson s "$s" --argjson acc "$accepted" \
		'.baseline == ([$acc[] | select(. < $s)] | reverse | .[:20])' "c$s.json"
done
# the key id: SHA-256 of the canonical text, which holds exactly the fields shown
for s in "${ids[0]}" "${ids[15]}"; do
	"$B" key --json "$s" >"k$s.json"
	check "session $s: key id is the canonical text's SHA-256" \
		test "$(jq -j .canonical "k$s.json" | sha256sum | cut -c1-64)" = "$(jq -r .key_id "k$s.json")"
	check "session $s: canonical text holds the fields" \
		jqe '(.canonical | fromjson) == (.fields | map({(.field): .value}) | add)' "k$s.json"
	check "session $s: compare names the same key" \
		test "$(jq -r .key_id "c$s.json")" = "$(jq -r .key_id "k$s.json")"
done
check "eleven sessions decided" test "$decided" = 11
check "both outcomes were checked" test "$seen_investigate" -ge 2 -a "$seen_pass" -ge 2

echo "$fails failed"
[ "$fails" = 0 ]
