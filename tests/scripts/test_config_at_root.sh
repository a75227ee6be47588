#!/usr/bin/env bash
# A benchgate.json at the file system's root ("/", a container whose
# project is its root) is found from a folder below it, as any other
# folder above: the walk upwards looked at every folder but "/" itself.
# Runs benchgate in a chroot of its own (root and perl needed; skipped
# otherwise).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
SRC=${BENCHGATE_SOURCE:?}
if [ "$(id -u)" != 0 ] || ! command -v perl >/dev/null; then
	echo "skipped: needs root and perl"
	exit 0
fi
# the sanitizer build needs /proc, which the chroot has not
if ldd "$B" | grep -q libasan; then
	echo "skipped: a sanitizer build cannot run without /proc"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
r="$work/root"
mkdir -p "$r/bin" "$r/sub/deeper"
cp "$B" "$r/bin/benchgate"
# the program's own libraries (ldd: the loader and libc for this build)
for lib in $(ldd "$B" | grep -o '/[^ ]*'); do
	mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib"
done
cp -R "$SRC/tests/cli/trees/mini/." "$r/"
# chroot(8) starts in "/": perl (perl-base, in every Debian) enters the
# chroot and then the folder to run from
run_in() { # FOLDER ARGS...: benchgate in the chroot, from FOLDER
	local dir=$1
	shift
	perl -e 'chroot($ARGV[0]) or die "chroot: $!"; chdir($ARGV[1]) or die "chdir: $!"; exec(@ARGV[2..$#ARGV]) or die "exec: $!"' \
		"$r" "$dir" /bin/benchgate "$@" >"$work/out" 2>"$work/err"
}
check "from / itself: validate exit 0" run_in / validate
check "from /sub/deeper: benchgate.json at / found (exit 0)" run_in /sub/deeper validate
check "... the registry read there" grep -q "^benchgate validate: OK" "$work/out"
[ "$fails" = 0 ]
