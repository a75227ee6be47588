#!/usr/bin/env bash
# What benchgate records from NVML, through a stand-in library
# (tests/nvml/fake_nvml.c: one device with 5 GiB in use, 64 MiB for each
# process named "sleep"): the tree's GPU memory when NVML lists it, and
# null, never 0, when it cannot (no permission to list processes, their
# memory not available, or pids of another pid namespace, as a container
# sees its host's); the device's used memory either way; the device's
# settings (persistence, power limit, clocks...) in the provenance, null
# when NVML cannot read them; the reasons its clocks were held down during
# each run. Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
lib=${BENCHGATE_BUILD:?}/tests/nvml
[ -f "$lib/libnvidia-ml.so.1" ] || { echo "no $lib/libnvidia-ml.so.1: build the tests first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
MiB=1048576
GiB=$((1024 * MiB))

measure() { # mode
	FAKE_NVML=$1 LD_LIBRARY_PATH=$lib rc_of "$B" measure -q -w 0 -r 2 --json -- sleep 0.3
}

check "listed: session ok"         test "$(measure ok)" = 0
check "listed: the tree's 64 MiB"  jqe "[.runs[].gpu_process_peak_bytes] == [$((64 * MiB)), $((64 * MiB)), $((64 * MiB))]" out
check "listed: statistics"         jqe ".statistics.gpu_process_peak_bytes.count == 2 and .statistics.gpu_process_peak_bytes.max == $((64 * MiB))" out
check "listed: the device"         jqe "[.runs[].gpu_device_used_peak_bytes] == [$((5 * GiB)), $((5 * GiB)), $((5 * GiB))]" out

for mode in noperm unavailable foreign; do
	check "$mode: session ok"          test "$(measure $mode)" = 0
	check "$mode: the tree's unknown"  jqe '[.runs[].gpu_process_peak_bytes] == [null, null, null]' out
	check "$mode: no statistics"       jqe '.statistics.gpu_process_peak_bytes == null' out
	check "$mode: the device still"    jqe "[.runs[].gpu_device_used_peak_bytes] == [$((5 * GiB)), $((5 * GiB)), $((5 * GiB))]" out
done
# the device's settings that change timings, in the provenance
check "settings: session ok"       test "$(measure ok)" = 0
check "settings: recorded" jqe '.provenance.gpu.devices[0] | .persistence_mode == true and .power_limit_watts == 300
	and .compute_mode == "default" and .ecc == true and .applications_sm_clock_mhz == 1410 and .max_sm_clock_mhz == 1980' out
check "settings unreadable: session ok" test "$(measure nosettings)" = 0
check "settings unreadable: null, not guessed" jqe '.provenance.gpu.devices[0] | [.persistence_mode, .power_limit_watts,
	.compute_mode, .ecc, .applications_sm_clock_mhz, .max_sm_clock_mhz] == [null, null, null, null, null, null]' out
# the device's clocks held down while the runs ran (NVML's clocks event
# reasons, sampled with the memory): the slowing reasons of the devices
# the tree runs on, never idle, the applications clocks or sync boost
slowed() { # mask mode [measure options]
	FAKE_NVML_SLOWDOWN=$1 FAKE_NVML=$2 LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 2 "${@:3}" -- sleep 0.3
}
check "not slowed: session ok"     test "$(measure ok)" = 0
check "not slowed: no reason"      jqe '[.runs[].gpu_slowdown] == [[], [], []] and ([.runs[].flags[]] | index("gpu_slowed") | not)' out
check "slowed: session ok"         test "$(slowed 0x47 ok --json)" = 0
check "slowed: the reasons, not idle or the applications clocks" \
	jqe '[.runs[].gpu_slowdown] == [["sw_power_cap", "hw_thermal_slowdown"], ["sw_power_cap", "hw_thermal_slowdown"], ["sw_power_cap", "hw_thermal_slowdown"]]' out
check "slowed: each run flagged"   jqe '[.runs[] | .flags | index("gpu_slowed") != null] == [true, true, true]' out
check "slowed: the summary says so" test "$(slowed 0x47 ok)" = 0
check "... with the timed runs"    grep -qF "  gpu slowed  runs 1, 2, 3: the GPU's clocks were slowed (sw_power_cap, hw_thermal_slowdown) during 2 of the 2 timed runs: their times are of a device held below its clocks" out
check "sync boost, the display clock: not slowdowns" test "$(slowed 0x113 ok --json)" = 0
check "... no reason"              jqe '[.runs[].gpu_slowdown] == [[], [], []]' out
check "processes not listed: every device's reasons" test "$(slowed 0x8 noperm --json)" = 0
check "... hw_slowdown"            jqe '[.runs[].gpu_slowdown] == [["hw_slowdown"], ["hw_slowdown"], ["hw_slowdown"]]' out
# a device slowed while another process (a sleep outside the tree) uses it,
# and the tree, which NVML does not list, runs elsewhere: not its slowdown
sleep 30 &
other=$!
check "another's device slowed: session ok" \
	test "$(FAKE_NVML_SLOWDOWN=0x40 FAKE_NVML=ok LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 1 --json -- sh -c 'i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done')" = 0
check "... not the tree's"         jqe '[.runs[] | select(.gpu_samples > 0) | .gpu_slowdown] | length > 0 and all(. == [])' out
kill "$other" 2>/dev/null
wait "$other" 2>/dev/null
# another process on the GPU the runs use (another user's job): listed
# with its name on each run, flagged, said; not once it is gone; and not
# where NVML speaks of another pid namespace (nothing can be told there)
sleep 30 &
other=$!
check "another process on the GPU: session ok" \
	test "$(FAKE_NVML=ok LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 2 --json -- sleep 0.3)" = 0
check "... listed with its name on every run" \
	jqe --argjson p "$other" '[.runs[] | .gpu_other_processes | any(.pid == $p and .command == "sleep")] == [true, true, true]' out
check "... each run flagged"       jqe '[.runs[] | .flags | index("gpu_shared") != null] == [true, true, true]' out
check "... the summary says so" test "$(FAKE_NVML=ok LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 2 -- sleep 0.3)" = 0
check "... naming it" grep -qE "^  gpu shared  runs 1, 2, 3: other processes used the GPU the runs used during 2 of the 2 timed runs \(.*$other \(sleep\).*\): their work competed with the runs'$" out
check "another namespace: session ok" test "$(measure foreign)" = 0
check "... nothing listed"         jqe '[.runs[].gpu_other_processes] == [[], [], []]' out
kill "$other" 2>/dev/null
wait "$other" 2>/dev/null
check "gone: session ok"           test "$(measure ok)" = 0
check "... not listed"             jqe --argjson p "$other" '[.runs[].gpu_other_processes[] | select(.pid == $p)] == []' out
check "noperm: the summary says n/a" test "$(FAKE_NVML=noperm LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 1 -- sleep 0.3)" = 0
check "noperm: accelerator n/a"    grep -q "^  accelerator n/a$" out

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
