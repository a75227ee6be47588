#!/usr/bin/env bash
# bench/measure.sh - the measurement engine against hyperfine (Debian package)
# on this machine, in one script so that both see the same noise:
#   1. total wall time of `benchgate measure -r 1000 -- /bin/true` against
#      `hyperfine -N --runs 1000 /bin/true` (ROUNDS interleaved rounds);
#      target: the median of the per-round ratios benchgate/hyperfine <= 1
#      (paired rounds see the same machine load; the medians are shown too).
#   2. p50 of `sleep 0.05` against hyperfine's median (20 runs each, ROUNDS
#      rounds, medians); target: within 0.5%.
# Prints the figures and exits 1 when a target is missed (by the first build).
#   bench/measure.sh [BUILD...]     (default build/; ROUNDS=5 by default)
# With several builds (a before and an after), part 1 runs each of them in
# every round, interleaved with hyperfine, and reports each one's ratio.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build"
bins=()
for build in "$@"; do
	[ -x "$build/benchgate" ] || { echo "no benchgate at $build/benchgate; build first"; exit 2; }
	bins+=("$(cd "$build" && pwd)/benchgate")
done
B=${bins[0]}
rounds=${ROUNDS:-5}
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)"; exit 2; }
command -v jq >/dev/null || { echo "jq is not installed"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

now() { date +%s%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "benchgate: $("$B" --version)   hyperfine: $(hyperfine --version)"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
echo
echo "1. total wall time of 1000 runs of /bin/true ($rounds interleaved rounds)"
: >hf.txt
for i in "${!bins[@]}"; do : >"bg$i.txt"; : >"ratio$i.txt"; done
for r in $(seq "$rounds"); do
	line="   round $r:"
	for i in "${!bins[@]}"; do
		t0=$(now); "${bins[$i]}" measure -q -r 1000 -- /bin/true >/dev/null; t1=$(now)
		echo "$(( (t1 - t0) / 1000000 ))" >>"bg$i.txt"
	done
	t0=$(now); hyperfine -N --runs 1000 --style none /bin/true >/dev/null 2>&1; t1=$(now)
	echo "$(( (t1 - t0) / 1000000 ))" >>hf.txt
	for i in "${!bins[@]}"; do
		awk -v a="$(tail -1 "bg$i.txt")" -v b="$(tail -1 hf.txt)" 'BEGIN {printf "%.4f\n", a / b}' >>"ratio$i.txt"
		line="$line build $((i + 1)) $(tail -1 "bg$i.txt") ms (ratio $(tail -1 "ratio$i.txt")),"
	done
	echo "$line hyperfine $(tail -1 hf.txt) ms"
done
hf_total=$(median <hf.txt)
echo "   median: hyperfine -N --runs 1000 /bin/true: ${hf_total} ms"
for i in "${!bins[@]}"; do
	bg_total=$(median <"bg$i.txt"); ratio=$(median <"ratio$i.txt")
	ok=$(awk -v r="$ratio" 'BEGIN {print (r <= 1) ? "yes" : "no"}')
	[ "$i" = 0 ] && ok1=$ok
	echo "   ${bins[$i]} measure -r 1000 -- /bin/true: ${bg_total} ms (1 smoke + 1 warmup + 1000 timed, stored)"
	echo "      ratio of the medians $(awk -v a="$bg_total" -v b="$hf_total" 'BEGIN {printf "%.3f", a / b}'), median of the per-round ratios $ratio  target <= 1: $ok"
done
echo
echo "2. p50 of sleep 0.05 against hyperfine's median ($rounds rounds of 20 runs)"
: >bg.txt; : >hf.txt
for r in $(seq "$rounds"); do
	"$B" measure -q -r 20 --json -- sleep 0.05 | jq '.statistics.wall_ns.p50 / 1e9' >>bg.txt
	hyperfine -N --runs 20 --style none --export-json h.json 'sleep 0.05' >/dev/null 2>&1
	jq '.results[0].median' h.json >>hf.txt
	echo "   round $r: benchgate p50 $(tail -1 bg.txt) s, hyperfine median $(tail -1 hf.txt) s"
done
bg_p50=$(median <bg.txt); hf_med=$(median <hf.txt)
diff=$(awk -v a="$bg_p50" -v b="$hf_med" 'BEGIN {d = (a - b) / b * 100; printf "%+.3f", d}')
ok2=$(awk -v d="$diff" 'BEGIN {print (d <= 0.5 && d >= -0.5) ? "yes" : "no"}')
echo "   median: benchgate p50 ${bg_p50} s, hyperfine median ${hf_med} s, difference ${diff}%  target within 0.5%: $ok2"
[ "$ok1" = yes ] && [ "$ok2" = yes ]
