#!/usr/bin/env bash
# bench/inputs.sh [BUILD...] - the SHA-256 of a declared folder input, as
# `run` computes it before a session (bench/hashdir.c), for each BUILD's
# libbenchgate.a (default build), on a folder of FILES (default 64) files
# of MIB (default 16) MiB each in the page cache, in ROUNDS (default 5)
# interleaved rounds of N (default 5) hashes; prints each round's median
# and the medians of the rounds. Also prints what `sha256sum` takes for
# the same files one after the other. Not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -gt 0 ] || set -- "$root/build"
files=${FILES:-64}
mib=${MIB:-16}
rounds=${ROUNDS:-5}
n=${N:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/data"
for i in $(seq "$files"); do
	head -c "$((mib << 20))" /dev/urandom >"$work/data/f$i"
done
progs=()
for b in "$@"; do
	b=$(cd "$b" && pwd)
	p="$work/hashdir-${#progs[@]}"
	cc -O2 -I"$root/include" -I"$root/src" -o "$p" "$here/hashdir.c" "$b/libbenchgate.a" \
		$(pkg-config --libs jansson) -lm -lpthread -ldl
	progs+=("$p")
done
echo "$files files of $mib MiB, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A all
for r in $(seq "$rounds"); do
	line="round $r:"
	for i in "${!progs[@]}"; do
		out=$("${progs[$i]}" "$n" "$work/data")
		all[$i]+="${out%% ms*} "
		line+=" ${*:$((i + 1)):1} ${out%% *} ms |"
	done
	s0=$(date +%s%N)
	(cd "$work/data" && sha256sum -- * >/dev/null)
	line+=" sha256sum $(( ($(date +%s%N) - s0) / 1000000 )) ms"
	echo "$line"
done
for i in "${!progs[@]}"; do
	med=$(printf '%s\n' ${all[$i]} | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
	echo "median: ${*:$((i + 1)):1} $med ms"
done
