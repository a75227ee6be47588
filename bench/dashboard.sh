#!/usr/bin/env bash
# Benchmark of `benchgate dashboard` on large stores (not a test): how long
# it takes, how large the page is, and (when Debian's chromium is there) how
# long headless chromium takes to load the page and dump its DOM. Two
# stores, each grown from seven sessions that test_seedtool stores as `run`
# would (six that count and one blocked by a parity failure) by doubling
# the sessions table in SQL:
#   one key   28,672 sessions of one comparison key
#   many keys 114,688 sessions, each of its own key (the key id made unique)
# Prints a Markdown table.
#   bench/dashboard.sh [BENCHGATE] [SEEDTOOL]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${1:-$root/build/benchgate}
seed=${2:-$root/build/test_seedtool}
case "$bin" in /*) ;; *) bin="$(pwd)/$bin" ;; esac
case "$seed" in /*) ;; *) seed="$(pwd)/$seed" ;; esac
browser=$(command -v chromium || command -v chromium-browser || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the sessions table twice over: a copy of every row with new ids, in order
double="CREATE TEMP TABLE t AS SELECT * FROM sessions; UPDATE t SET id = id + (SELECT max(id) FROM sessions);
 INSERT INTO sessions SELECT * FROM t ORDER BY id; DROP TABLE t;"

project() { # dir doublings unique-keys(0/1)
	local dir=$1 n=$2 unique=$3 g=bin.cpu.test-box.bin2.warm
	cp -R "$root/tests/cli/trees/mini" "$dir"
	for p in 0.100 0.101 0.099 0.100 0.100 0.1005; do "$seed" seed "$dir" $g scheduled-profile $p >/dev/null; done
	"$seed" seed "$dir" $g scheduled-profile 0.300 parity=fail >/dev/null
	for _ in $(seq "$n"); do
		"$seed" sql "$dir" "$double"
	done
	[ "$unique" = 1 ] && "$seed" sql "$dir" "UPDATE sessions SET key_id = printf('%064x', id)"
	return 0
}

ms() { echo "$(( ($2 - $1) / 1000000 ))"; }

measure() { # label dir sessions keys
	local label=$1 dir=$2 sessions=$3 keys=$4 t0 t1 t2 size load=n/a
	t0=$(date +%s%N)
	"$bin" -C "$dir" dashboard --output site >/dev/null
	t1=$(date +%s%N)
	size=$(stat -c %s "$dir/site/index.html")
	if [ -n "$browser" ]; then
		HOME="$work/home" timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
			--proxy-server=127.0.0.1:9 --no-first-run --disable-extensions \
			--disable-background-networking --user-data-dir="$work/profile" \
			--dump-dom "file://$dir/site/index.html" >/dev/null 2>&1 || true
		t2=$(date +%s%N)
		load="$(ms "$t1" "$t2") ms"
	fi
	printf '| %s | %s | %s | %s ms | %.1f MB | %s |\n' "$label" "$sessions" "$keys" "$(ms "$t0" "$t1")" \
		"$(echo "$size" | awk '{print $1 / 1e6}')" "$load"
}

echo "benchgate $("$bin" --version | cut -d' ' -f2), $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "| store | sessions | keys | dashboard | page | chromium --dump-dom |"
echo "|---|---|---|---|---|---|"
project "$work/one" 12 0
measure "one key" "$work/one" $((7 << 12)) 1
project "$work/many" 14 1
measure "many keys" "$work/many" $((7 << 14)) $((7 << 14))
