#!/usr/bin/env bash
# benchgate with fewer file descriptors than it needs (ulimit -n from 3 up):
# wherever it runs out (opening the store, loading libcrypto, starting the
# command, reading its outputs, loading NVML), the message names the limit and what to do, never "check that
# the store is writable and not corrupted", "install Debian's ..." or
# "check the command name"; the exit status is 4, and a store it could not
# open is left as it was. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
[ -n "${BG_DEBUG:-}" ] && set -x
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
B=${BENCHGATE:?}
scratch
cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/mini" p && chmod -R u+w p
cd p || exit 1
sha=$(printf 'out\n' | sha256sum | cut -c1-64)
check "a first session" "$B" measure -q -r 1 -- true
# runs VERB ARGS... under a limit of $1 descriptors, the inherited ones past
# stderr closed, so that the limit is what benchgate has
limited() { sh -c 'n=$1; shift; exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; ulimit -n "$n"; exec "$@"' _ "$@"; }
advice="benchgate has as many files open as its limit allows; raise the limit (ulimit -n) and run it again"
: >all.err
for n in $(seq 3 14); do
	for verb in sessions measure; do
		if [ "$verb" = sessions ]; then
			limited "$n" "$B" sessions >/dev/null 2>one.err
		else
			limited "$n" "$B" measure -q -r 1 --output out.txt --parity "sha256:$sha" \
				-- sh -c 'exec >out.txt; echo out' >/dev/null 2>one.err
		fi
		rc=$?
		# the dynamic loader's own failure, before benchgate runs at all
		grep -q "error while loading shared libraries" one.err && continue
		printf '%s %s rc=%s\n' "$n" "$verb" "$rc" >>all.err
		cat one.err >>all.err
		# benchgate's own lines (the command's stderr is passed through)
		grep '^benchgate: ' one.err >own.err
		case $rc in
		0 | 4) ;;
		1) # the command itself failed under the limit it inherited: blocked
			grep -q "blocked: smoke run 1 exited with status" own.err ||
				{ echo "FAIL ulimit -n $n: $verb: exit 1"; cat one.err; fails=$((fails + 1)); } ;;
		*) echo "FAIL ulimit -n $n: $verb: exit $rc"; fails=$((fails + 1)) ;;
		esac
		if grep -q "Too many open files" own.err; then
			[ "$rc" = 4 ] || { echo "FAIL ulimit -n $n: $verb: out of files but exit $rc"; fails=$((fails + 1)); }
			grep -qF "$advice" own.err || { echo "FAIL ulimit -n $n: $verb: no advice"; cat one.err; fails=$((fails + 1)); }
		fi
	done
done
check "some limits were low enough" grep -q "Too many open files" all.err
check "the store: said as a limit" \
	grep -qF ".benchgate/store.sqlite3: cannot read the schema: unable to open database file (Too many open files): $advice" all.err
check "libcrypto: said as a limit" \
	grep -qF "cannot load libcrypto.so.3: libcrypto.so.3: cannot open shared object file: Too many open files; $advice" all.err
check "the command: said as a limit" grep -qF "'sh': cannot start: Too many open files; $advice" all.err
# out of descriptors reading the outputs to check their parity: a limit of
# benchgate's, exit 4 (it was a parity failure of the run, exit 1)
check "the outputs: said as a limit" grep -qF "smoke run 1: out.txt: cannot read: Too many open files; $advice" all.err
check "the outputs: never a parity failure" bash -c '! grep -q "parity failed.*Too many open files" all.err'
check "never the store's condition" bash -c '! grep -q "check that the store is" all.err'
check "never a missing package" bash -c '! grep -q "install Debian" all.err'
check "never the command's name" bash -c '! grep -q "check the command name" all.err'
check "the store still read and written" test "$(rc_of "$B" measure -q -r 1 -- true)" = 0
check "sessions measured once the limit allowed" jqe 'length >= 3 and (map(select(.status == "ok")) | length) >= 3' \
	<("$B" sessions --json)

# a machine with a GPU (the stand-in NVML, which opens a device file as it
# starts): wherever loading or starting NVML runs out of descriptors, it is
# said as a limit (exit 4), and no session is stored as one without its GPU
lib=${BENCHGATE_BUILD:?}/tests/nvml
: >gpu.err
for n in $(seq 4 14); do
	FAKE_NVML=ok LD_LIBRARY_PATH=$lib limited "$n" "$B" measure -q -w 0 -r 1 --json -- true >gpu.json 2>one.err
	rc=$?
	printf '%s rc=%s\n' "$n" "$rc" >>gpu.err
	cat one.err >>gpu.err
	case $rc in
	0) jqe '.provenance.gpu.devices | length == 1' gpu.json ||
		{ echo "FAIL ulimit -n $n: a session without its GPU"; fails=$((fails + 1)); } ;;
	4) ;;
	*) echo "FAIL ulimit -n $n: GPU: exit $rc"; cat one.err; fails=$((fails + 1)) ;;
	esac
done
check "NVML: said as a limit" \
	grep -qF "cannot load libnvidia-ml.so.1 to read the GPUs: libnvidia-ml.so.1: cannot open shared object file: Too many open files; $advice" gpu.err
check "NVML: a session once the limit allowed, with its GPU" grep -q "^14 rc=0" gpu.err

echo "$fails failed"
[ "$fails" = 0 ]
