#!/usr/bin/env bash
# The installed manual (docs/benchgate.1) against the program's own verb
# table: groff renders it without a warning; every verb `benchgate --help`
# lists is an entry of its VERBS section; every option of `benchgate --help`
# and of each `benchgate VERB --help` appears in it as a person would type
# it (an ASCII '-', which roff writes '\-': a bare '-' renders as a
# typographic hyphen that a shell does not take), and in README.md or
# docs/*.md. A verb or option added without its documentation fails here.
# Needs groff (groff-base).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
S=${BENCHGATE_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v groff >/dev/null || { echo "this test needs groff (apt-get install groff-base)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
man=$S/docs/benchgate.1

# -ww: every warning; long lines and no hyphenation, so that no option is
# broken over two lines
check "groff renders the manual without a warning" \
	bash -c 'out=$(groff -man -Tutf8 -ww -z "$1" 2>&1) && [ -z "$out" ] || { printf "%s\n" "$out" >&2; false; }' _ "$man"
groff -man -Tutf8 -rLL=2000n -rHY=0 -P-cbou "$man" 2>/dev/null >"$work/man.txt"
check "the manual renders to text" test -s "$work/man.txt"

# the tag lines of the VERBS section: its entries' first lines
awk '/^[A-Z]/ {verbs = ($0 == "VERBS")} verbs && /^       [^ ]/' "$work/man.txt" >"$work/tags.txt"
verbs=$("$B" --help | awk '/^verbs:/ {f = 1; next} f && NF {print $1}')
check "benchgate --help lists verbs" test -n "$verbs"
for v in $verbs; do
	# an entry begins with the verb, or names it after a comma (accept, reject)
	check "the manual has an entry for '$v'" grep -qE "^       $v( |\$)|, $v " "$work/tags.txt"
done

# options as --help shows them: after a space, '[', '|' or ',' at a word's start
options_of() {
	"$B" "$@" --help | grep -oE '(^|[][ |,])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[][ |,]//' | sort -u
}
missing_in() { # FILE... : the options on stdin that none of FILE holds
	local o
	while read -r o; do
		grep -qF -e "$o" "$@" || echo "$o"
	done
}
export -f missing_in
for v in "" $verbs; do
	options_of $v >"$work/opts.txt"
	name=${v:-benchgate}
	[ -n "$v" ] || check "benchgate --help shows options" test -s "$work/opts.txt"
	check "the manual shows every option of '$name'" \
		bash -c 'left=$(missing_in "$2" <"$1"); [ -z "$left" ] || { echo "not in the manual: $left" >&2; false; }' \
		_ "$work/opts.txt" "$work/man.txt"
	check "README.md or docs/ shows every option of '$name'" \
		bash -c 'left=$(missing_in "$2"/README.md "$2"/docs/*.md <"$1"); [ -z "$left" ] || { echo "not in README.md or docs/: $left" >&2; false; }' \
		_ "$work/opts.txt" "$S"
done
exit $((fails > 0))
