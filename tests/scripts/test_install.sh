#!/usr/bin/env bash
# What `make install PREFIX=...` gives another program: the files in their
# places, public headers that compile alone as strict C11 and as C++, and a
# library that a C and a C++ program link through the installed pkg-config
# file and use as benchgate itself does (the mini project validated, same
# counts as `benchgate validate`). Installs from $BENCHGATE_BUILD into a
# scratch prefix. Needs cc and pkg-config; the C++ checks need c++.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
BUILD=${BENCHGATE_BUILD:?}
S=${BENCHGATE_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

check "cmake --install into a scratch prefix" cmake --install "$BUILD" --prefix "$prefix"
check "the program"        test -x "$prefix/bin/benchgate"
check "the man page"       test -s "$prefix/share/man/man1/benchgate.1"
check "the library"        test -s "$prefix/lib/libbenchgate.a"
check "the pkg-config file" test -s "$prefix/lib/pkgconfig/benchgate.pc"
check "every public header" diff <(cd "$S/include/benchgate" && ls) <(cd "$prefix/include/benchgate" && ls)
check "the installed program runs" "$prefix/bin/benchgate" --version

# A sanitizer build's library needs its runtime in whatever links it.
san=()
grep -q '^BENCHGATE_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null &&
	san=(-fsanitize=address,undefined)
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags benchgate) || cflags=
# the library is static only: the plain flags link, as CMake's
# pkg_check_modules and meson's dependency() ask for them
libs=$(pkg-config --libs benchgate) || libs=
check "pkg-config knows benchgate" pkg-config --exists benchgate
check "--static adds nothing the plain flags lack" \
	test "$(pkg-config --libs benchgate)" = "$(pkg-config --static --libs benchgate)"
# every name the library defines for the linker is benchgate's own (bg_),
# so that none clashes with a program's (a sanitizer's __odr_asan.bg_...
# names one of them)
others() { nm -g --defined-only "$prefix/lib/libbenchgate.a" | awk 'NF == 3 {sub(/^__odr_asan\./, "", $3); if ($3 !~ /^bg_/) print $3}'; }
check "the library defines only bg_ names ($(others 2>/dev/null | head -n 3 | tr '\n' ' '))" test "$(others | wc -l)" = 0
cxx=$(command -v c++ || command -v g++ || true)

# each header alone: no POSIX or GNU feature macro, no other header first
bad_c=() bad_cxx=()
for h in "$prefix"/include/benchgate/*.h; do
	h=${h##*/}
	printf '#include <benchgate/%s>\nint main(void) { return 0; }\n' "$h" >"$work/h.c"
	cc -std=c11 -Wall -Wextra -Wpedantic -Werror $cflags -c "$work/h.c" -o "$work/h.o" \
		2>>"$work/err" || bad_c+=("$h")
	if [ -n "$cxx" ]; then
		cp "$work/h.c" "$work/h.cc"
		"$cxx" -Wall -Wextra -Werror $cflags -c "$work/h.cc" -o "$work/h.o" \
			2>>"$work/err" || bad_cxx+=("$h")
	fi
done
check "each header compiles alone as C11 (${bad_c[*]:-all})" test ${#bad_c[@]} = 0
[ -n "$cxx" ] && check "each header compiles alone as C++ (${bad_cxx[*]:-all})" test ${#bad_cxx[@]} = 0

# a program using the library as the validate verb does
cat >"$work/use.c" <<'EOF'
#include <benchgate/config.h>
#include <benchgate/registry.h>
#include <benchgate/status.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_problems problems;
	struct bg_registry_counts counts;
	struct bg_ctx ctx;
	int rc;

	memset(&problems, 0, sizeof problems);
	bg_ctx_init(&ctx);
	rc = bg_config_load(&cfg, NULL, NULL, &ctx);
	if (!rc) {
		rc = bg_registry_load(&reg, &cfg, &ctx);
		if (!rc)
			rc = bg_registry_resolve_measurements(&reg, &ctx);
		if (!rc)
			rc = bg_registry_validate(&reg, true, &problems, &counts, &ctx);
		if (!rc && problems.n == 0)
			printf("benchgate validate: OK -- %zu gates, %zu measurements, and %zu runbooks\n",
			       counts.gates, counts.measurements, counts.runbooks);
		bg_problems_release(&problems);
		bg_registry_release(&reg);
	}
	bg_config_release(&cfg);
	if (rc)
		fprintf(stderr, "use: %s\n", bg_ctx_message(&ctx));
	bg_ctx_release(&ctx);
	return rc || problems.n;
}
EOF
cp -R "$S/tests/cli/trees/mini" "$work/proj" && chmod -R u+w "$work/proj"
(cd "$work/proj" && "$B" validate) >"$work/expected"
check "benchgate validates the mini project" grep -q OK "$work/expected"
check "a C program links through pkg-config" \
	cc -std=c11 -Wall -Wextra -Werror "${san[@]}" $cflags "$work/use.c" -o "$work/use-c" $libs
check "the C program gives validate's counts" \
	bash -c "cd '$work/proj' && '$work/use-c' | diff '$work/expected' -"
if [ -n "$cxx" ]; then
	cp "$work/use.c" "$work/use.cc"
	check "a C++ program links through pkg-config (extern \"C\")" \
		"$cxx" -Wall -Wextra -Werror "${san[@]}" $cflags "$work/use.cc" -o "$work/use-cxx" $libs
	check "the C++ program gives validate's counts" \
		bash -c "cd '$work/proj' && '$work/use-cxx' | diff '$work/expected' -"
fi
exit $((fails > 0))
