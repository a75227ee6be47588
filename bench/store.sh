#!/usr/bin/env bash
# Benchmark of the store verbs on large stores (not a test: no timed
# assertion anywhere). Grows stores as bench/dashboard.sh does: seven
# sessions that test_seedtool stores as `run` would (six that count, one
# blocked by a parity failure), the sessions table doubled in SQL, then cut
# to SIZE sessions; "one key" keeps them all of one comparison key, "many
# keys" gives each its own key id. Each build given gets its own copy of
# each store, opened once untimed first (a build of a newer schema upgrades
# its copy then; an older build could not read an upgraded one), and, in
# turn (ROUNDS rounds, so that every build sees the same load), each verb
# is timed with /usr/bin/time: median wall seconds and the largest peak RSS.
# SEEDTOOL makes the stores: take the oldest build's, so that every build
# can read them; `seed` runs the test_seedtool beside each build. A third
# kind of store, "one key, rejected", has all but its first six sessions
# rejected: the key's baseline is found only far back (KINDS="0 1 2"
# chooses the kinds).
# `seed` is run's decision step as test_seedtool does it (the baseline
# window read from the store, the decision, the session stored with it).
# Prints a Markdown table.
# ONLY (a shell pattern, e.g. 'dashboard*') times only the verbs it matches.
#   ROUNDS=3 SIZES="1000 10000 100000" KINDS="0 1 2" ONLY=PATTERN SEEDTOOL=OLDEST/test_seedtool bench/store.sh [BENCHGATE...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build/benchgate"
seed=${SEEDTOOL:-$root/build/test_seedtool}
rounds=${ROUNDS:-3}
sizes=${SIZES:-1000 10000 100000}
bins=()
for b in "$@"; do case "$b" in /*) bins+=("$b") ;; *) bins+=("$(pwd)/$b") ;; esac; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g=bin.cpu.test-box.bin2.warm

# the sessions table twice over: a copy of every row with new ids, in order
double="CREATE TEMP TABLE t AS SELECT * FROM sessions; UPDATE t SET id = id + (SELECT max(id) FROM sessions);
 INSERT INTO sessions SELECT * FROM t ORDER BY id; DROP TABLE t;"

project() { # dir sessions kind (0 one key, 1 many keys, 2 one key, all but six sessions rejected)
	local dir=$1 want=$2 unique=$3 n=7
	cp -R "$root/tests/cli/trees/mini" "$dir"
	for p in 0.100 0.101 0.099 0.100 0.100 0.1005; do "$seed" seed "$dir" $g scheduled-profile $p >/dev/null; done
	"$seed" seed "$dir" $g scheduled-profile 0.300 parity=fail >/dev/null
	while [ "$n" -lt "$want" ]; do
		"$seed" sql "$dir" "$double"
		n=$((n * 2))
	done
	"$seed" sql "$dir" "DELETE FROM sessions WHERE id > $want"
	[ "$unique" = 1 ] && "$seed" sql "$dir" "UPDATE sessions SET key_id = printf('%064x', id)"
	[ "$unique" = 2 ] && "$seed" sql "$dir" "UPDATE sessions SET curation = 'rejected', decision = 'block' WHERE id > 6"
	return 0
}

# "label|command words" (ID: a session near the end, KEY its key id)
verbs=("sessions|sessions" "sessions --last 5|sessions --last 5" "sessions --json|sessions --json"
	"session ID|session ID" "history GATE|history $g" "history --json GATE|history --json $g"
	"history --key KEY|history --key KEY" "history --key (12 digits)|history --key KEY12"
	"compare ID|compare ID" "compare --last GATE|compare --last $g" "key ID|key ID"
	"reject ID|reject ID --why bench" "accept ID|accept ID --why bench" "seed (run's decision)|SEED"
	"dashboard|dashboard --output site")

one() { # out-file bin dir words...: "wall rss" of one run
	local out=$1 bin=$2 dir=$3
	shift 3
	if [ "$1" = SEED ]; then
		# the build's own test_seedtool, which reads the schema the build made
		local own="$(dirname "$bin")/test_seedtool"
		[ -x "$own" ] || own=$seed
		/usr/bin/time -o "$out" -f "%e %M" "$own" seed "$dir" $g scheduled-profile 0.1 >/dev/null 2>&1 || true
	else
		/usr/bin/time -o "$out" -f "%e %M" "$bin" -C "$dir" "$@" >/dev/null 2>&1 || true
	fi
	tail -1 "$out"
}

echo "benchgate $("${bins[0]}" --version | cut -d' ' -f2), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds"
echo
printf '| store | verb |'
for b in "${bins[@]}"; do printf ' %s |' "$(basename "$(dirname "$b")")/$(basename "$b")"; done
echo
printf '|---|---|'
for _ in "${bins[@]}"; do printf -- '---|'; done
echo
for size in $sizes; do
	for unique in ${KINDS:-0 1 2}; do
		dir="$work/s$size-$unique"
		project "$dir" "$size" "$unique"
		for i in "${!bins[@]}"; do
			cp -R "$dir" "$dir.$i"
			"${bins[$i]}" -C "$dir.$i" sessions --last 1 >/dev/null
		done
		label="$size, $(case $unique in 0) echo "one key" ;; 1) echo "many keys" ;; *) echo "one key, rejected" ;; esac)"
		id=$((size - 1))
		key=$("${bins[0]}" -C "$dir" key --json "$id" | sed -n 's/.*"key_id": "\([0-9a-f]*\)".*/\1/p')
		for v in "${verbs[@]}"; do
			name=${v%%|*}
			[ -z "${ONLY:-}" ] || [[ "$name" == $ONLY ]] || continue
			words=${v#*|}
			words=${words//KEY12/${key:0:12}}
			words=${words//KEY/$key}
			words=${words//ID/$id}
			declare -A walls=() rss=()
			for _ in $(seq "$rounds"); do
				for i in "${!bins[@]}"; do
					# shellcheck disable=SC2086
					read -r w m < <(one "$work/time" "${bins[$i]}" "$dir.$i" $words)
					walls[$i]="${walls[$i]:-} $w"
					[ "${rss[$i]:-0}" -ge "$m" ] || rss[$i]=$m
				done
			done
			printf '| %s | `%s` |' "$label" "$name"
			for i in "${!bins[@]}"; do
				med=$(echo "${walls[$i]}" | tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
				printf ' %s s, %s MiB |' "$med" "$(awk -v k="${rss[$i]}" 'BEGIN {printf "%.1f", k / 1024}')"
			done
			echo
			unset walls rss
		done
		rm -rf "$dir" "$dir".*
	done
done
