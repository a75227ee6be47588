#!/usr/bin/env bash
# A lone surrogate escape from U+DC80 to U+DCFF (a \udcff without its pair)
# in what a registry verb prints: Python's print() writes it as the byte it
# stands for where its standard streams use "surrogateescape" (the C, POSIX
# and C.UTF-8 locales, as in most containers, and PYTHONUTF8=1), and raises
# under any other locale. benchgate decides as the reference's Python would
# in the same environment, and Python itself is the oracle here: each
# environment's sys.stdout.errors is asked first. Other surrogates
# (\ud800) are refused in every locale. The strict locale is en_US.UTF-8
# built with localedef into a folder of the test's own (LOCPATH).
# Needs python3 and the locales package (localedef's sources).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
command -v python3 >/dev/null || { echo "this test needs python3"; exit 1; }
[ -f /usr/share/i18n/locales/en_US ] || { echo "this test needs the locales package"; exit 1; }
scratch
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" p
python3 - <<'PY'
p = "p/benchmarks/benchmark_registry.json"
s = open(p).read()
assert '"platform": "GPU",' in s
open(p, "w").write(s.replace('"platform": "GPU",', '"platform": "GPU\\udcff\\udc80",', 1))
PY
mkdir loc
localedef -i en_US -f UTF-8 "$work/loc/en_US.UTF-8" >/dev/null 2>&1
check "localedef made en_US.UTF-8" test -d "$work/loc/en_US.UTF-8"
errors_in() { env "$@" python3 -c 'import sys; print(sys.stdout.errors)'; }
line=$(printf 'io.gpu.ci.bin1\tNot supported\tGPU\377\200\tCI runner\tparity-only')

# ---- the environments where Python writes the byte
for e in "LC_ALL=C.UTF-8" "LC_ALL=POSIX" "LC_ALL=C" "LC_ALL=C.utf8" "LOCPATH=$work/loc LC_ALL=en_US.UTF-8 PYTHONUTF8=1"; do
	# shellcheck disable=SC2086
	check "python: $e escapes"       test "$(errors_in $e)" = surrogateescape
	# shellcheck disable=SC2086
	check "list: $e exit 0"          test "$(cd p && rc_of env $e "$B" list)" = 0
	check "list: $e the bytes"       test "$(tail -n 1 "$work/out")" = "$line"
	check "list: $e nothing said"    test ! -s "$work/err"
done

# ---- a UTF-8 locale: Python raises, benchgate refuses (exit 1, nothing printed)
e="LOCPATH=$work/loc LC_ALL=en_US.UTF-8"
# shellcheck disable=SC2086
check "python: $e is strict"          test "$(errors_in $e)" = strict
# shellcheck disable=SC2086
check "list: $e exit 1"               test "$(cd p && rc_of env $e "$B" list)" = 1
check "list: $e prints nothing"       test ! -s "$work/out"
check "list: $e names the line"       grep -qF "its line 6, 'io.gpu.ci.bin1\\tNot supported\\tGPU\\udcff\\udc80\\tCI runner\\tparity-only', holds the lone surrogate '\\udcff'" "$work/err"
# benchgate's own locale stays C: its messages are as in any other locale
check "list: $e message in English"   grep -q "^benchgate: cannot print the output" "$work/err"

# ---- a surrogate outside U+DC80..U+DCFF: refused in every locale
sed -i 's/GPU\\udcff\\udc80/GPU\\udcff\\ud800/' p/benchmarks/benchmark_registry.json
check "list: \\ud800 refused under C.UTF-8" test "$(cd p && rc_of env LC_ALL=C.UTF-8 "$B" list)" = 1
check "list: \\ud800 named"                 grep -qF "holds the lone surrogate '\\ud800'" "$work/err"
check "list: \\ud800 nothing printed"       test ! -s "$work/out"
echo "fails: $fails"
[ "$fails" = 0 ]
