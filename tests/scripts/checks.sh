# tests/scripts/checks.sh - sourced by scenario scripts (not a test itself):
# a failure count $fails, and
#   check DESCRIPTION CMD...   CMD must succeed (its stdout is dropped; on failure
#                              the last lines of $work/err are shown)
#   rc_of CMD...               prints CMD's exit status; its output goes to
#                              $work/out and $work/err ($work: the script's scratch folder)
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
