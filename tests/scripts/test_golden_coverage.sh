#!/usr/bin/env bash
# Every verb, every validation rule and every usage error has a CLI golden
# case (issue 2's acceptance): a case that runs each verb of the table (not
# only its --help); each message that src/registry/validate.c and
# src/profile/check.c add as a problem, and each usage message of src/cli
# (bg_cli_usage_error, and what an option callback returns), must appear in
# some tests/cli/cases/*/expect.* file. A format directive matches any text;
# a message written over several string literals is matched by its first.
# So must each error of the registry verbs' library code about its input
# (bg_error in src/registry, src/profile, src/config; render's reasons).
# Reads the sources only (BENCHGATE_SOURCE).
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
src=${BENCHGATE_SOURCE:?}
cases=()
for f in "$src"/tests/cli/cases/*/expect.*; do
	[ -f "$f" ] && cases+=("$f") # not expect.files/
done

# the message as an extended regular expression: directives match anything,
# other special characters themselves
pattern() {
	printf '%s' "$1" | sed -E 's/%[-#0 +]*[0-9*]*(\.[0-9*]+)?(hh|h|ll|l|z|j|t)?[diouxXsc]/\x01/g;
		s/[][\\^$|+?(){}.*]/\\&/g; s/\x01/.*/g'
}

covered() { grep -qE -- "$(pattern "$1")" "${cases[@]}"; }

n=0
while IFS= read -r msg; do
	n=$((n + 1))
	check "validation rule has a case: $msg" covered "$msg"
done < <(grep -ho 'bg_problems_add(p, "[^"]*"' "$src"/src/registry/validate.c "$src"/src/profile/check.c |
	sed 's/^bg_problems_add(p, "//; s/"$//' | sort -u)
check "validation rules found" test "$n" -ge 50

n=0
while IFS= read -r msg; do
	n=$((n + 1))
	check "usage error has a case: $msg" covered "$msg"
done < <({
	grep -ho 'bg_cli_usage_error(self, "[^"]*"' "$src"/src/cli/*.c | sed 's/^bg_cli_usage_error(self, "//; s/"$//'
	# what option callbacks return (a usage message): a long literal after
	# return, ? or : within a "static const char *" function (on_opt,
	# count_arg, parse_parity, ...) of a verb
	awk '/^static const char \*[a-z_]+\(/ { inside = 1 } inside { print } inside && /^}/ { inside = 0 }' \
		"$src"/src/cli/cmd_*.c "$src"/src/cli/filters.c |
		grep -oE '(return|:|\?) +"[^"]{12,}"' | sed -E 's/^(return|:|\?) +"//; s/"$//'
} | sort -u)
check "usage messages found" test "$n" -ge 30

# every error the registry verbs' library code returns for bad input (the
# file, the object and the field it names): bg_error's message in
# src/registry, src/profile and src/config, C escapes undone. The one that
# needs a removed working directory is checked by test_registry_input.sh.
n=0
while IFS= read -r msg; do
	n=$((n + 1))
	case "$msg" in "cannot determine the working directory"*) continue ;; esac
	check "input error has a case: $msg" covered "$msg"
done < <({
	perl -0777 -ne 'while (/bg_error\(\s*ctx\s*,\s*[^,]+,\s*"((?:[^"\\]|\\.)*)"/g) { my $m = $1; $m =~ s/\\(["\\])/$1/g; print "$m\n" }' \
		"$src"/src/registry/*.c "$src"/src/profile/*.c "$src"/src/config/*.c
	# why render cannot write the document: render_fail's message, and
	# fail_value's "which ..." (its "%s '%s' has %s %s %s; %s" is checked too)
	perl -0777 -ne 'while (/(?:render_fail\(\s*r\s*,|fail_value\(\s*r\s*,(?:\s*[^,]+,){3})\s*"((?:[^"\\]|\\.)*)"/g) { my $m = $1; $m =~ s/\\(["\\])/$1/g; print "$m\n" unless $m eq "%s" }' \
		"$src"/src/registry/render.c
} | sort -u)
check "input errors found" test "$n" -ge 70

# every verb of the table: a case that runs it (not only its --help); the
# verb each case runs, read once
run_verbs=$(for d in "$src"/tests/cli/cases/*/; do
	[ -f "$d/args" ] || continue
	grep -aqx -e '--help' -e '-h' "$d/args" && continue
	grep -a -v -e '^-C' -e '^--config' "$d/args" | head -n 1
done | sort -u)
n=0
while IFS= read -r verb; do
	n=$((n + 1))
	check "verb has a case: $verb" grep -qx -- "$verb" <<<"$run_verbs"
done < <(grep -h -A1 '^const struct bg_cmd bg_cmd_' "$src"/src/cli/cmd_*.c | grep -oE '^\s*"[a-z]+",' | tr -d ' \t",')
check "verbs found" test "$n" -ge 20

echo "$fails failed"
[ "$fails" -eq 0 ]
