# tests/scripts/checks.sh - sourced by scenario scripts (not a test itself):
# a failure count $fails, and
#   check DESCRIPTION CMD...   CMD must succeed (its stdout is dropped; on failure
#                              the last lines of $work/err are shown)
#   rc_of CMD...               prints CMD's exit status; its output goes to
#                              $work/out and $work/err ($work: the script's scratch folder)
#   jqe ARGS...                jq -e, failing on empty input too
# the machine lease of the tests' runs is their own (tests/run-all sets it),
# never this machine's /run/lock/benchgate-machine.lock
: "${BENCHGATE_MACHINE_LOCK:?run the tests through tests/run-all, or set BENCHGATE_MACHINE_LOCK to a file of your own}"
fails=0
check() {
	local what=$1; shift
	if "$@" >/dev/null; then
		echo "ok   $what"
	else
		echo "FAIL $what"
		fails=$((fails + 1))
		# what the last rc_of left, for a failure seen only in CI
		[ -s "${work:-}/err" ] && sed 's/^/     stderr: /' "$work/err" | tail -n 5
	fi
	return 0
}
rc_of() { "$@" >"$work/out" 2>"$work/err"; printf '%s' $?; }
# jq -e that also fails when there is no input at all: jq 1.6 (Debian 12's)
# exits 0 on an empty file, so a check of what benchgate wrote would pass
# when it wrote nothing. Use it for every jq -e.
jqe() { local out; out=$(jq -e "$@") || return 1; [ -n "$out" ]; }
# For a script that stores sessions the way `benchgate run` stores them
# (tests/unit/test_seedtool.c) in a copy of a tree at $work/p, measuring
# nothing:
#   seeded_setup               sets B, SEED, G (a gate of the mini tree) and
#                              $work (removed on exit, made writable first)
#   seed ARGS...               stores a session in $work/p; prints its id
seeded_setup() {
	B=${BENCHGATE:?}
	SEED="${BENCHGATE_BUILD:?}/test_seedtool"
	G=bin.cpu.test-box.bin2.warm
	work=$(mktemp -d)
	trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
}
seed() { "$SEED" seed "$work/p" "$@" | cut -d' ' -f1; }
# scratch: a new scratch folder $work, removed on exit, made the current folder
scratch() {
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	cd "$work" || exit 1
}
