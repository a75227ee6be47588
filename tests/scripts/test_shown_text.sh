#!/usr/bin/env bash
# Text that a program, a file name or a stored record brings (a block
# reason naming an output pattern, a folder under experiments/, a lease
# file's name) reaches the terminal with its control bytes shown as \xNN,
# never raw: `measure`'s "session N blocked: REASON", `run`'s decision
# reasons, `experiments` and `lease status`. Sessions are measured with
# BENCHGATE_NO_CGROUP set (no run cgroup: nothing shared with other tests).
# Needs jq and git.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
export BENCHGATE_NO_CGROUP=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
esc=$(printf '\033')
# no raw ESC (nor any other C0 byte but newline) in what the last rc_of printed
# the same for what script(1) recorded: its lines end with CR LF
no_raw_tty() { ! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\r\n\t' <"$work/out"); }
no_raw() { ! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$work/out") && ! LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$work/err"); }

# ---- measure: the block reason names an output pattern with an ESC
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" "$work/m"
check "measure: blocked (exit 1)"  test "$(cd "$work/m" && rc_of "$B" measure -q -r 1 -w 0 --output "m${esc}M.txt" -- true)" = 1
check "measure: reason shown"      grep -qF "session 1 blocked: smoke run 1: output pattern 'm\\x1bM.txt' matched no file" "$work/err"
check "measure: no raw byte"       no_raw

# ---- run: the decision's reasons hold the session's block reason
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
jq '.runbooks.ok.measure.outputs = ["out/{id}\u001bM.txt"] | del(.runbooks.ok.measure.parity) | del(.runbooks.ok.measure.deterministic)' \
	benchmarks/benchmark_registry.json >"$work/registry.json" && cat "$work/registry.json" >benchmarks/benchmark_registry.json
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
check "run: blocked (exit 1)"      test "$(rc_of "$B" run -q --no-repeat life.ok)" = 1
check "run: reason shown"          grep -qF "  the session is blocked: smoke run 1: output pattern 'out/life.ok\\x1bM.txt' matched no file" "$work/out"
check "run: no raw byte"           no_raw

# ---- experiments: the failed one's reason, a folder named with an ESC
mkdir "experiments/x${esc}M"
check "experiments: exit 0"        test "$(rc_of "$B" experiments)" = 0
check "experiments: reason shown"  grep -qF "failed     (the session is blocked: smoke run 1: output pattern 'out/life.ok\\x1bM.txt' matched no file)" "$work/out"
check "experiments: folder shown"  grep -qF 'x\x1bM ' "$work/out"
check "experiments: no raw byte"   no_raw

# ---- lease status: a lease file named with an ESC (a folder: unusable)
mkdir -p .benchgate/leases "$(printf '.benchgate/leases/d\033M.lock')"
check "lease: exit 0"              test "$(rc_of "$B" lease status)" = 0
check "lease: device and reason"   grep -qF 'd\x1bM                       unusable .benchgate/leases/d\x1bM.lock: is a directory' "$work/out"
check "lease: no raw byte"         no_raw

# ---- registry verbs: a gate id with an ESC and a bidi override reaches a
# terminal shown; a pipe gets the registry's bytes, as the reference prints them
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/r"
cd "$work/r" || exit 1
jq '.gates[0].id = "life.ok\u001b[31mRED\u202e" | .gates[0].next_gate = "go\u0007"' \
	benchmarks/benchmark_registry.json >"$work/registry.json" && cat "$work/registry.json" >benchmarks/benchmark_registry.json
check "list piped: raw, as the reference"  grep -qF "life.ok${esc}[31mRED" <("$B" list)
if command -v script >/dev/null; then
	for verb in list next; do
		script -qec "$B $verb" /dev/null >"$work/out" 2>"$work/err"
		check "$verb on a terminal: id shown"  grep -qF 'life.ok\x1b[31mRED\xe2\x80\xae' "$work/out"
		check "$verb on a terminal: no raw byte"  no_raw_tty
	done
	# the id travels in the environment, its bytes made by printf: script(1)
	# runs the line with $SHELL, which need not know $'...', in any locale
	BG_GATE="life.ok${esc}[31mRED$(printf '\342\200\256')" \
		script -qec "$B command \"\$BG_GATE\"" /dev/null >"$work/out" 2>"$work/err"
	check "command on a terminal: id shown"  grep -qF 'Gate: life.ok\x1b[31mRED\xe2\x80\xae' "$work/out"
	check "command on a terminal: no raw byte"  no_raw_tty
	jq '.gates[0].state = "bad\u001b[2Jstate"' benchmarks/benchmark_registry.json >"$work/registry.json" &&
		cat "$work/registry.json" >benchmarks/benchmark_registry.json
	for verb in validate check; do
		script -qec "$B $verb" /dev/null >"$work/out" 2>"$work/err"
		check "$verb on a terminal: finding shown"  grep -qF 'has invalid state bad\x1b[2Jstate' "$work/out"
		check "$verb on a terminal: no raw byte"  no_raw_tty
	done
	check "validate piped: raw, as the reference"  grep -qF "has invalid state bad${esc}[2Jstate" <("$B" validate)
else
	echo "skip: script(1) is not installed (util-linux): the terminal cases were not run"
fi

echo "$fails failed"
[ "$fails" = 0 ]
