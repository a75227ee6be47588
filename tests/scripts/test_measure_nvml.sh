#!/usr/bin/env bash
# What benchgate records from NVML, through a stand-in library
# (tests/nvml/fake_nvml.c: one device with 5 GiB in use, 64 MiB for each
# process named "sleep"): the tree's GPU memory when NVML lists it, and
# null, never 0, when it cannot (no permission to list processes, their
# memory not available, or pids of another pid namespace, as a container
# sees its host's); the device's used memory either way; the device's
# settings (persistence, power limit, clocks...) in the provenance, null
# when NVML cannot read them. Needs jq.
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
check "noperm: the summary says n/a" test "$(FAKE_NVML=noperm LD_LIBRARY_PATH=$lib rc_of "$B" measure -w 0 -r 1 -- sleep 0.3)" = 0
check "noperm: accelerator n/a"    grep -q "^  accelerator n/a$" out

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
