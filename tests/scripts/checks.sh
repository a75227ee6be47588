# tests/scripts/checks.sh - sourced by scenario scripts (not a test itself):
# a failure count $fails, and
#   check DESCRIPTION CMD...   CMD must succeed (its stdout is dropped)
#   rc_of CMD...               prints CMD's exit status; its output goes to
#                              $work/out and $work/err ($work: the script's scratch folder)
fails=0
check() {
	local what=$1; shift
	if "$@" >/dev/null; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi
}
rc_of() { "$@" >"$work/out" 2>"$work/err"; printf '%s' $?; }
