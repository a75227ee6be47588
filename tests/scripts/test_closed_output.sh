#!/usr/bin/env bash
# What benchgate prints that cannot be written is a failure, said once on
# stderr with exit 4: a full disk (/dev/full) or a closed standard output,
# for a verb's output and for --help and --version alike. A reader that
# closed its pipe is not told about. A closed standard output is held on
# /dev/null (read-only) at start, so the first file benchgate opens never
# takes descriptor 1: a run's report never lands in its device lease. A
# run whose reader went away stops with the device released. Needs git.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
said() { grep -qx "benchgate: standard output: cannot write: $1" "$work/err"; }

for args in "list" "validate" "show life.ok" "--version" "--help" "list --help"; do
	# shellcheck disable=SC2086
	rc=$("$B" $args >/dev/full 2>"$work/err"; echo $?)
	check "$args into /dev/full: exit 4" test "$rc" = 4
	check "$args into /dev/full: said" said "No space left on device"
	check "$args into /dev/full: said once" test "$(wc -l <"$work/err")" = 1
	# shellcheck disable=SC2086
	rc=$("$B" $args >&- 2>"$work/err"; echo $?)
	check "$args, standard output closed: exit 4" test "$rc" = 4
	check "$args, standard output closed: said" said "Bad file descriptor"
done
check "a failed check keeps its status" test "$(rc_of "$B" show no.such.gate)" = 1
rc=$("$B" show no.such.gate >/dev/full 2>"$work/err"; echo $?)
check "a failed check into /dev/full keeps its status" test "$rc" = 1

# a reader that stopped: the write fails with EPIPE (SIGPIPE ignored), not said
(trap '' PIPE; { sleep 0.3; "$B" list 2>"$work/err"; } | true)
check "a closed pipe is not said" test ! -s "$work/err"
# ... also where the caller left SIGPIPE at its default (a shell's pipe):
# exit 4, never a death by SIGPIPE (141)
for args in "list" "validate" "show life.ok" "--help"; do
	# shellcheck disable=SC2086
	rc=$( (trap - PIPE; { sleep 0.3; "$B" $args 2>"$work/err"; echo $? >"$work/rc"; } | true); cat "$work/rc")
	check "$args into a closed pipe: exit 4" test "$rc" = 4
	check "$args into a closed pipe: not said" test ! -s "$work/err"
done

# render with standard output closed: the document is written whole
"$B" render --output "$work/open.md" >/dev/null
rc=$("$B" render --output "$work/closed.md" >&- 2>"$work/err"; echo $?)
check "render, standard output closed: exit 4" test "$rc" = 4
check "render, standard output closed: the document is whole" cmp "$work/open.md" "$work/closed.md"

# a run with standard output closed: its lease file stays the lease's
printf '.benchgate/\nout/\n' >.gitignore
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
rc=$("$B" run -q life.ok >&- 2>"$work/err"; echo $?)
check "run, standard output closed: exit 4" test "$rc" = 4
check "run, standard output closed: said" said "Bad file descriptor"
check "run, standard output closed: the session is stored" test "$("$B" sessions | wc -l)" = 2
for f in .benchgate/leases/*; do
	check "run, standard output closed: nothing printed into $(basename "$f")" \
		sh -c "! grep -q 'session' '$f'"
done
check "the run still holds one lease file" test "$(ls .benchgate/leases | wc -l)" -ge 1

# a run whose reader went away (`run --times 3 | head -1`): it stops after
# the session it is in, releases the device and exits 4 without a word; it
# is not killed by SIGPIPE holding the lease
before=$("$B" sessions | wc -l)
rc=$( ( "$B" run -q life.ok --times 3 2>"$work/err"; echo $? >"$work/rc" ) | true; cat "$work/rc")
check "run, reader gone: exit 4, not killed" test "$rc" = 4
check "run, reader gone: not said" test ! -s "$work/err"
check "run, reader gone: one session, then stopped" test "$("$B" sessions | wc -l)" = $((before + 1))
check "run, reader gone: the device is free" bash -c "'$B' lease status | grep -qE ' free( |$)'"
check "run, reader gone: no experiment left running" bash -c "! '$B' experiments | grep -q running"
# the same under repeat: the run it starts stops, and repeat says nothing of it
sid=$("$B" sessions | awk 'NR == 2 {print $1}')
rc=$( ( "$B" repeat "$sid" 2>"$work/err"; echo $? >"$work/rc" ) | true; cat "$work/rc")
check "repeat, reader gone: exit 4" test "$rc" = 4
check "repeat, reader gone: only its first line" test "$(grep -vc '^benchgate repeat: two more sessions' "$work/err")" = 0
check "repeat, reader gone: the device is free" bash -c "'$B' lease status | grep -qE ' free( |$)'"

# a status already 1 stands when the output cannot be written (README:
# exit 4 unless the status was already 1, 2 or 3): a block is a block
"$B" run -q life.fail >/dev/null 2>&1
rc=$("$B" compare --last life.fail >/dev/full 2>"$work/err"; echo $?)
check "compare of a block into /dev/full: exit 1" test "$rc" = 1
check "compare of a block into /dev/full: said" said "No space left on device"
rc=$("$B" compare --last life.fail >&- 2>"$work/err"; echo $?)
check "compare of a block, standard output closed: exit 1" test "$rc" = 1
rc=$("$B" measure -q -w 0 -r 1 -- false >/dev/full 2>"$work/err"; echo $?)
check "a blocked measure into /dev/full: exit 1" test "$rc" = 1
check "a blocked measure into /dev/full: both said" \
	bash -c "said() { grep -qx \"benchgate: standard output: cannot write: \$1\" '$work/err'; }; said 'No space left on device' && grep -q 'blocked: smoke run 1 exited with status 1' '$work/err'"
rc=$("$B" measure -q -w 0 -r 1 -- true >/dev/full 2>"$work/err"; echo $?)
check "a measure into /dev/full: exit 4" test "$rc" = 4

echo "$fails failed"
[ "$fails" -eq 0 ]
