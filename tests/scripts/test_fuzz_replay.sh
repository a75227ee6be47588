#!/usr/bin/env bash
# Replays the saved fuzz corpora, the test registries and the conformance
# registry through the fuzz targets (under the sanitizers in the asan build).
set -eu
replay="$BENCHGATE_BUILD/fuzz_registry_replay"
files=("$BENCHGATE_SOURCE"/tests/fuzz/corpus/registry/* "$BENCHGATE_SOURCE"/tests/cli/trees/*/benchmarks/*.json)
conf="$BENCHGATE_SOURCE/../shared/conformance/trees"
[ -d "$conf" ] && files+=("$conf"/*/benchmarks/benchmark_registry.json)
out=$("$replay" "${files[@]}" 2>&1)
echo "$out"
if echo "$out" | grep -qE 'AddressSanitizer|LeakSanitizer|runtime error'; then exit 1; fi
# the parser's keep path against its whole path (tests/fuzz/fuzz_json.c), on
# the same files, its own corpus and the corpus tree's evidence indexes
files+=("$BENCHGATE_SOURCE"/tests/fuzz/corpus/json/*)
[ -d "$conf" ] && files+=("$conf"/*/experiments/*/*.json)
out=$("$BENCHGATE_BUILD/fuzz_json_replay" "${files[@]}" 2>&1)
echo "$out"
if echo "$out" | grep -qE 'AddressSanitizer|LeakSanitizer|runtime error'; then exit 1; fi
# whole projects (tests/fuzz/fuzz_project.c), .npy files (fuzz_npy.c),
# reported-timing files (fuzz_reported.c), the scrubbing of what a
# session writes (fuzz_scrub.c), format specifications (fuzz_format.c)
# and integers beyond 64 bits against OpenSSL's BIGNUM (fuzz_bigint.c)
for target in project npy reported scrub format bigint; do
	out=$("$BENCHGATE_BUILD/fuzz_${target}_replay" "$BENCHGATE_SOURCE"/tests/fuzz/corpus/$target/* 2>&1) ||
		{ echo "$out"; exit 1; }
	echo "$out"
	if echo "$out" | grep -qE 'AddressSanitizer|LeakSanitizer|runtime error'; then exit 1; fi
done
# promotion's registry edit against what a JSON reader sees (fuzz_promote.c;
# a violated property aborts), on its seeds and every registry above
out=$("$BENCHGATE_BUILD/fuzz_promote_replay" "$BENCHGATE_SOURCE"/tests/fuzz/corpus/promote/* "${files[@]}" 2>&1) ||
	{ echo "$out"; exit 1; }
echo "$out"
if echo "$out" | grep -qE 'AddressSanitizer|LeakSanitizer|runtime error'; then exit 1; fi
