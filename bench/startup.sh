#!/usr/bin/env bash
# bench/startup.sh [BUILD] - where `benchgate validate`'s wall time on the
# conformance tree goes, against /bin/true through the same harness
# (bench/runstat.c, all commands interleaved in each round): programs that
# do nothing but start (a static one; one linked against libc; + libm;
# + the static libcrypto, whose start-up code runs OPENSSL_cpuid_setup),
# then `benchgate --version` and `benchgate validate`, bench/floor.c (the
# least any validate must do: read the inputs and check their JSON syntax),
# and benchgate relinked with a static glibc from BUILD's objects (an
# experiment only: that build could not load libnvidia-ml). Prints the
# median of ROUNDS (default 5) rounds of N (default 201) runs and the median
# ratio to /bin/true.
# Not a test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${ROUNDS:-5}
n=${N:-201}
conformance=${CONFORMANCE:-$root/../shared/conformance}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lib=/usr/lib/$(cc -print-multiarch)

cc -O2 -o "$work/runstat" "$here/runstat.c"
printf 'int main(void) { return 0; }\n' >"$work/empty.c"
cat >"$work/crypto.c" <<'C'
#include <openssl/evp.h>
int main(int argc, char **argv)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len;
	/* never taken: links the SHA-256 code, and with it the start-up hook */
	if (argc > 99)
		return EVP_Digest(argv[0], 1, md, &len, EVP_sha256(), NULL);
	return 0;
}
C
cc -O2 -static -o "$work/empty-static" "$work/empty.c"
cc -O2 -o "$work/empty-libc" "$work/empty.c"
cc -O2 -o "$work/empty-libm" "$work/empty.c" -Wl,--no-as-needed -lm
cc -O2 -no-pie -o "$work/empty-libcrypto" "$work/crypto.c" "$lib/libcrypto.a" -lpthread -ldl
# the least any validate must do (bench/floor.c), linked as the program is
cc -O2 -no-pie -I"$root/include" -o "$work/floor" "$here/floor.c" "$build/libbenchgate.a" -ljansson -lm
tree=$(ls -d "$conformance"/trees/*/ | head -n 1)
cp -R "$tree" "$work/tree"
chmod -R u+w "$work/tree"
cd "$work/tree"
# the floor's inputs: the committed document, then every JSON text validate
# reads (the configuration, the registry, each evidence index it imports)
floor_args=(docs/_generated/benchmark_coverage.md benchgate.json benchmarks/benchmark_registry.json)
while IFS= read -r f; do floor_args+=("$f"); done < <(sed -n 's/.*"path": *"\([^"]*\.json\)".*/\1/p' benchmarks/benchmark_registry.json | sort -u)
names=(/bin/true "static, empty" "libc, empty" "libc + libm, empty" "libc + static libcrypto, empty"
	"benchgate --version" "benchgate validate" "floor: read the inputs, check JSON syntax")
cmds=(/bin/true \; "$work/empty-static" \; "$work/empty-libc" \; "$work/empty-libm" \;
	"$work/empty-libcrypto" \; "$build/benchgate" --version \; "$build/benchgate" validate \;
	"$work/floor" "${floor_args[@]}")
# the CLI's objects whose source still exists (a build folder keeps the
# objects of files since removed, which would define symbols twice)
objs=()
for o in "$build"/CMakeFiles/benchgate_cli.dir/src/cli/*.c.o; do
	src=${o#"$build"/CMakeFiles/benchgate_cli.dir/}
	[ -f "$root/${src%.o}" ] && objs+=("$o")
done
if [ ${#objs[@]} -gt 0 ] && [ -f "$lib/libjansson.a" ]; then
	cc -static -no-pie -Wl,--gc-sections -o "$work/benchgate-static" "${objs[@]}" \
		"$build/libbenchgate.a" "$lib/libjansson.a" \
		-lm -lpthread -ldl 2>"$work/static-link.txt"
	names+=("static glibc: --version" "static glibc: validate")
	cmds+=(\; "$work/benchgate-static" --version \; "$work/benchgate-static" validate)
else
	echo "(no static relink: $build has no CMake objects or the static archives are missing)"
fi

"$build/benchgate" validate >/dev/null
"$work/floor" "${floor_args[@]}"
echo "tree $(basename "$tree"), $rounds rounds of $n runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	"$work/runstat" "$n" "${cmds[@]}" | awk '{print $1 * 1000}' >"$work/round$r"
done
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo
echo "| program | median wall | median ratio to /bin/true |"
echo "|---|---|---|"
for i in "${!names[@]}"; do
	ms=$(for r in $(seq "$rounds"); do sed -n "$((i + 1))p" "$work/round$r"; done | median)
	ratio=$(for r in $(seq "$rounds"); do
		awk -v i=$((i + 1)) 'NR == 1 {t = $1} NR == i {printf "%.4f\n", $1 / t}' "$work/round$r"
	done | median)
	printf '| %s | %.3f ms | %.2f |\n' "${names[$i]}" "$ms" "$ratio"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
