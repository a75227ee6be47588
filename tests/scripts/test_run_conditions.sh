#!/usr/bin/env bash
# The machine's conditions in a session's provenance, and a decision's note
# when they differ from its baseline's: five sessions of a gate form the
# baseline (with a sixth like them), then one runs in a CPU cgroup of this test's own with a quota of
# 1.5 cores (a container's --cpus=1.5): its provenance records
# cpu_quota_cores 1.5, and `run` and `compare` note that the baseline's
# sessions ran without one. The decision itself is not changed by the note.
# The cgroup is made under the cpu hierarchy and removed at the end; without
# root or a cpu hierarchy this test only checks the fields are recorded.
# A GPU's lowered power limit is noted the same way (the stand-in NVML
# library, tests/nvml/fake_nvml.c), and so is a busy loop beside the runs
# (the session's machine_load). The note is shown where sessions are
# reviewed later too: history (under the session's row, and --json), the
# dashboard, and accept (which brings the session into the baseline).
# Needs git and jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq"; exit 1; }
work=$(mktemp -d)
cg=""
trap '[ -z "$cg" ] || rmdir "$cg" 2>/dev/null; rm -rf "$work"' EXIT

cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/p"
cd "$work/p" || exit 1
printf '.benchgate/\nout/\n' >.gitignore
"$B" render >/dev/null
git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1

check "five sessions for a baseline" test "$(rc_of "$B" run -q --times 5 life.ok)" = 0
sid=$("$B" sessions --json | jq 'max_by(.id).id')
"$B" session "$sid" --json >"$work/s.json"
check "the host's conditions are recorded" \
	jqe '.provenance.host | has("power_source") and has("cpu_boost") and has("cpu_energy_preference")
	     and has("smt") and has("virtualized") and has("cpu_quota_cores")' "$work/s.json"
check "no quota recorded outside a limited cgroup" \
	jqe '.provenance.host.cpu_quota_cores == null' "$work/s.json"
check "a sixth session like them: no note" test "$(rc_of "$B" run -q life.ok)" = 0
check "... none printed" sh -c "! grep -q 'note: the machine differs' '$work/out'"
sid=$("$B" sessions --json | jq 'max_by(.id).id')
check "... its decision records none" sh -c "'$B' compare $sid --json | jq -e '.conditions == []'"

check "the CPUs it may run on are recorded" \
	jqe --argjson n "$(nproc)" '.provenance.host.cpus_allowed == $n' "$work/s.json"
# Intel's thermal throttle counters over the runs: null where the machine
# keeps none (other vendors, most virtual machines), else how many CPUs
# have them and on how many they rose
if ls /sys/devices/system/cpu/cpu*/thermal_throttle/core_throttle_count >/dev/null 2>&1; then
	check "the CPU's thermal throttling is recorded" \
		jqe '.cpu_throttle.cpus > 0 and .cpu_throttle.throttled >= 0 and .cpu_throttle.throttled <= .cpu_throttle.cpus' "$work/s.json"
else
	check "no thermal throttle counters here: null" jqe 'has("cpu_throttle") and .cpu_throttle == null' "$work/s.json"
fi

# bound to one CPU (taskset, a container's --cpuset-cpus, a batch
# scheduler's binding): recorded and noted against a baseline of all
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	check "a session bound to one CPU" test "$(rc_of taskset -c 0 "$B" run -q --no-repeat life.ok)" = 0
	cp "$work/out" "$work/bound.out"
	sid=$("$B" sessions --json | jq 'max_by(.id).id')
	"$B" session "$sid" --json >"$work/s.json"
	check "... one CPU recorded"    jqe '.provenance.host.cpus_allowed == 1' "$work/s.json"
	n=$("$B" compare "$sid" --json | jq '.baseline | length')
	check "... run notes it" grep -qF "note: cpus_allowed 1 here, $(nproc) in $n of the $n baseline sessions that record it" "$work/bound.out"
	check "... session shows it"    sh -c "'$B' session $sid | grep -q ', 1 CPU(s) allowed (affinity)'"
	# the note where people review sessions later: under the session's
	# row in history, in history --json, and in the dashboard
	note="cpus_allowed 1 here, $(nproc) in $n of the $n baseline sessions that record it"
	"$B" history life.ok >"$work/hist.out"
	check "... history notes it under its row" \
		awk -v id="$sid" -v note="      note: $note" '$1 == id {getline; if ($0 == note) ok = 1} END {exit !ok}' "$work/hist.out"
	check "... history: only that session" test "$(grep -c '^      note: ' "$work/hist.out")" = 1
	check "... history --json: conditions" \
		sh -c "'$B' history --json life.ok | jq -e --argjson id $sid --arg note '$note' \
			'(map(select(.id == \$id))[0].conditions == [\$note]) and (map(select(.id != \$id and (.conditions // [] | length) > 0)) == [])'"
	"$B" dashboard --output site >/dev/null
	# (class "notes", or "notes out" when the session does not count: one
	# pinned to a CPU may well be slower, investigate, pending review)
	check "... dashboard: the note under its row" \
		grep -qF "<td></td><td colspan=\"10\">note: $note</td></tr>" site/index.html
	check "... dashboard: its marker ringed" grep -q 'class="noted"/>' site/index.html
	check "... dashboard: the marker's title" grep -qF "<title>session $sid: p50 " site/index.html
	check "... dashboard: the title holds it" grep -qF "; note: $note</title>" site/index.html
	rm -rf site
	# a person who accepts it is told what its decision noted, once more
	check "... accept: exit 0" test "$(rc_of "$B" accept "$sid" --why "pinned on purpose")" = 0
	check "... accept: says so" test "$(tail -n 2 "$work/out")" = "it now counts in the baseline of its key, with what its decision noted of the machine it ran on:
note: $note"
	first=$("$B" sessions --json | jq 'min_by(.id).id')
	check "... accept of one without notes: none" test "$(rc_of "$B" accept "$first" --why ok; tail -n 1 "$work/out")" = \
		"0it now counts in the baseline of its key"
else
	echo "skipped: binding to one CPU needs taskset and two CPUs"
fi

# a cgroup of this test's own with a CPU quota: v1's cpu hierarchy, or v2's
# with the cpu controller
if [ "$(id -u)" = 0 ]; then
	v1=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)
	for m in /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup/cpu; do
		if [ -n "$v1" ] && [ -d "$m" ] && mkdir "$m${v1%/}/bgtest-cond-$$" 2>/dev/null; then
			cg="$m${v1%/}/bgtest-cond-$$"
			echo 150000 >"$cg/cpu.cfs_quota_us" && echo 100000 >"$cg/cpu.cfs_period_us" || { rmdir "$cg"; cg=""; }
			break
		fi
	done
	if [ -z "$cg" ] && [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		v2=$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup)
		if mkdir "/sys/fs/cgroup${v2%/}/bgtest-cond-$$" 2>/dev/null; then
			cg="/sys/fs/cgroup${v2%/}/bgtest-cond-$$"
			echo "150000 100000" >"$cg/cpu.max" || { rmdir "$cg"; cg=""; }
		fi
	fi
fi
if [ -n "$cg" ]; then
	check "a session under a quota of 1.5 cores" \
		test "$(rc_of sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" run -q --no-repeat life.ok' sh "$cg" "$B")" != 4
	sid=$("$B" sessions --json | jq 'max_by(.id).id')
	"$B" session "$sid" --json >"$work/s.json"
	check "its quota is recorded" jqe '.provenance.host.cpu_quota_cores == 1.5' "$work/s.json"
	# the baseline: five or six sessions (the sixth joins unless it was an investigate)
	"$B" compare "$sid" --json >"$work/compare.json"
	n=$(jq '.baseline | length' "$work/compare.json")
	note="note: cpu_quota_cores 1.5 here, not reported in $n of the $n baseline sessions that record it"
	cp "$work/out" "$work/run.out"
	check "run notes it"           grep -qF "$note" "$work/run.out"
	"$B" compare "$sid" >"$work/compare.out"
	check "compare notes it"       grep -qF "$note" "$work/compare.out"
	check "the decision records it" \
		jqe --arg n "$n" '.conditions == ["cpu_quota_cores 1.5 here, not reported in \($n) of the \($n) baseline sessions that record it"]' "$work/compare.json"
	rmdir "$cg" && cg=""
	check "the test's cgroup is removed" test -z "$cg"
else
	echo "skipped: the quota checks need root and a cpu cgroup hierarchy this test may write"
fi
# a GPU's power limit lowered (nvidia-smi -pl), through the stand-in NVML
# library: five sessions at 300 W, then one at 250 W
nvml=${BENCHGATE_BUILD:?}/tests/nvml
if [ -f "$nvml/libnvidia-ml.so.1" ]; then
	cp -R "${BENCHGATE_SOURCE:?}/tests/cli/trees/lifecycle" "$work/g" && cd "$work/g" || exit 1
	printf '.benchgate/\nout/\n' >.gitignore
	sed -i 's/"sleep_seconds": 4.321/"sleep_seconds": 0.4/' benchmarks/benchmark_registry.json
	"$B" render >/dev/null
	git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || exit 1
	gpu_run() { FAKE_NVML=ok FAKE_NVML_POWER_MW=$1 LD_LIBRARY_PATH=$nvml rc_of "$B" run -q --no-repeat "${@:2}" life.ok; }
	check "five sessions at 300 W"   test "$(gpu_run 300000 --times 5)" = 0
	check "one at 250 W"             test "$(gpu_run 250000)" = 0
	sid=$("$B" sessions --json | jq 'max_by(.id).id')
	"$B" compare "$sid" --json >"$work/gpu.json"
	n=$(jq '.baseline | length' "$work/gpu.json")
	check "run notes the power limit" grep -qF "note: gpu 0 power_limit_watts 250 here, 300 in $n of the $n baseline sessions that record it" "$work/out"
	check "the decision records it" jqe --arg n "$n" '.conditions == ["gpu 0 power_limit_watts 250 here, 300 in \($n) of the \($n) baseline sessions that record it"]' "$work/gpu.json"
	# the GPU's clocks held down (heat) while the timed run ran
	check "a run with the GPU's clocks slowed: exit 0" \
		test "$(FAKE_NVML=ok FAKE_NVML_SLOWDOWN=0x40 LD_LIBRARY_PATH=$nvml rc_of "$B" run -q --no-repeat life.slow)" = 0
	check "... noted" grep -qF "note: the GPU's clocks were slowed (hw_thermal_slowdown) during 1 of the 1 timed runs: their times are of a device held below its clocks" "$work/out"
	sid=$("$B" sessions --json | jq 'max_by(.id).id')
	check "... in the decision" jqe '.conditions | index("the GPU'"'"'s clocks were slowed (hw_thermal_slowdown) during 1 of the 1 timed runs: their times are of a device held below its clocks") != null' <("$B" compare "$sid" --json)
	# another process on the GPU while the timed run ran
	sleep 30 &
	other=$!
	check "a run beside another process on the GPU: exit 0" \
		test "$(FAKE_NVML=ok LD_LIBRARY_PATH=$nvml rc_of "$B" run -q --no-repeat life.slow)" = 0
	check "... noted" grep -qE "^  note: other processes used the GPU the runs used during 1 of the 1 timed runs \(.*$other \(sleep\).*\): their work competed with the runs'$" "$work/out"
	kill "$other" 2>/dev/null
	wait "$other" 2>/dev/null
	cd "$work/p" || exit 1
fi
# what else ran: a busy loop beside the runs is another process's CPU,
# measured and noted (never asserted absent: the machine is shared)
sed -i 's/"sleep_seconds": 4.321/"sleep_seconds": 0.3/' benchmarks/benchmark_registry.json
"$B" render >/dev/null && git -c user.email=t@t -c user.name=t commit -qam "a short sleep" || exit 1
hog=""
trap '[ -z "$hog" ] || kill "$hog" 2>/dev/null; [ -z "$cg" ] || rmdir "$cg" 2>/dev/null; rm -rf "$work"' EXIT
timeout 60 sh -c 'while :; do :; done' &
hog=$!
check "a session beside a busy loop" test "$(rc_of "$B" run -q --no-repeat -w 0 -r 2 --json life.slow)" = 0
check "its machine load: about a core of another's" \
	jqe '.session.machine_load | .seconds >= 0.5 and .other_cpu_cores >= 0.5 and .steal_cpu_cores >= 0' "$work/out"
check "the decision notes it" \
	jqe '.decision.conditions | any(test("^other processes kept [0-9.]+ of the [0-9]+ cores busy during the runs$"))' "$work/out"
check "measure beside it: the summary's machine line" \
	test "$(rc_of "$B" measure -w 0 -r 2 -- sleep 0.3)" = 0
check "... says what else ran" grep -qE "^  machine     other processes kept [0-9.]+ cores busy, the hypervisor took [0-9.]+ \(over [0-9.]+ s of runs\)$" "$work/out"
kill "$hog" && wait "$hog" 2>/dev/null
hog=""
check "a run too short to tell: null" test "$(rc_of "$B" measure -q -w 0 -r 1 --json -- true)" = 0
check "... null"                   jqe '.machine_load == null' "$work/out"
check "check passes"                test "$(rc_of "$B" check)" = 0
[ "$fails" = 0 ]
