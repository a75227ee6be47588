/*
 * test_conditions.c - bg_host_conditions on machines laid out in a scratch
 * folder: a laptop on battery and on mains, an Intel and an AMD boost
 * switch, a container's CPU quota under cgroup v2 and v1, and a machine
 * that reports nothing; the notes a decision makes of them and of what
 * else ran.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchgate/provenance.h"

static char root[64];

/* Writes root/rel (making its folders) with text. */
static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static int fresh(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/benchgate-conditions-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int gone(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static json_t *conditions(void)
{
	json_t *h = json_object();

	bg_host_conditions(root, h);
	return h;
}

static bool is_null(const json_t *h, const char *key)
{
	return json_is_null(json_object_get(h, key));
}

/* A machine without /sys or /proc: every field there, every one null. */
static void test_nothing_reported(void **state)
{
	static const char *const keys[] = {"power_source", "cpu_boost", "cpu_energy_preference", "smt",
					   "virtualized", "cpu_quota_cores"};
	json_t *h;

	(void)state;
	h = conditions();
	assert_int_equal(json_object_size(h), 6);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_true(is_null(h, keys[i]));
	json_decref(h);
}

/* A laptop: its battery discharging, then the charger plugged in (a USB-C
 * supply counts as one); Intel's no_turbo; a virtual machine's flags. */
static void test_laptop(void **state)
{
	json_t *h;

	(void)state;
	put("sys/class/power_supply/BAT0/type", "Battery\n");
	put("sys/class/power_supply/BAT0/status", "Discharging\n");
	put("sys/class/power_supply/AC/type", "Mains\n");
	put("sys/class/power_supply/AC/online", "0\n");
	put("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
	put("sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "balance_power\n");
	put("sys/devices/system/cpu/smt/control", "on\n");
	put("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse2\n\nprocessor\t: 1\nflags\t\t: fpu vme sse2\n");
	h = conditions();
	assert_string_equal(json_string_value(json_object_get(h, "power_source")), "battery");
	assert_true(json_is_false(json_object_get(h, "cpu_boost")));
	assert_string_equal(json_string_value(json_object_get(h, "cpu_energy_preference")), "balance_power");
	assert_string_equal(json_string_value(json_object_get(h, "smt")), "on");
	assert_true(json_is_false(json_object_get(h, "virtualized")));
	json_decref(h);

	put("sys/class/power_supply/AC/online", "1\n");
	put("sys/class/power_supply/BAT0/status", "Charging\n");
	put("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
	put("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse2 hypervisor lahf_lm\n");
	h = conditions();
	assert_string_equal(json_string_value(json_object_get(h, "power_source")), "ac");
	assert_true(json_is_true(json_object_get(h, "cpu_boost")));
	assert_true(json_is_true(json_object_get(h, "virtualized")));
	json_decref(h);

	put("sys/class/power_supply/AC/online", "0\n");
	put("sys/class/power_supply/ucsi-source-psy-USBC000:001/type", "USB\n");
	put("sys/class/power_supply/ucsi-source-psy-USBC000:001/online", "1\n");
	/* cpufreq's boost switch (acpi-cpufreq, amd-pstate) comes first */
	put("sys/devices/system/cpu/cpufreq/boost", "0\n");
	h = conditions();
	assert_string_equal(json_string_value(json_object_get(h, "power_source")), "ac");
	assert_true(json_is_false(json_object_get(h, "cpu_boost")));
	json_decref(h);
}

/* A container with --cpus=2 under cgroup v2: the smallest limit of its
 * cgroup and those above it; "max" is no limit. */
static void test_quota_v2(void **state)
{
	json_t *h;

	(void)state;
	put("proc/self/cgroup", "0::/ci/job7\n");
	put("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
	put("sys/fs/cgroup/cpu.max", "max 100000\n");
	put("sys/fs/cgroup/ci/cpu.max", "400000 100000\n");
	put("sys/fs/cgroup/ci/job7/cpu.max", "max 100000\n");
	h = conditions();
	assert_true(json_real_value(json_object_get(h, "cpu_quota_cores")) == 4.0);
	json_decref(h);
	put("sys/fs/cgroup/ci/job7/cpu.max", "200000 100000\n");
	h = conditions();
	assert_true(json_real_value(json_object_get(h, "cpu_quota_cores")) == 2.0);
	json_decref(h);
	put("sys/fs/cgroup/ci/cpu.max", "max 100000\n");
	put("sys/fs/cgroup/ci/job7/cpu.max", "max 100000\n");
	h = conditions();
	assert_true(is_null(h, "cpu_quota_cores"));
	json_decref(h);
}

/* cgroup v1 (with the v2 hierarchy beside it, as systemd's hybrid mode):
 * the cpu controller's cfs quota over its period; -1 is no limit. */
static void test_quota_v1(void **state)
{
	json_t *h;

	(void)state;
	put("proc/self/cgroup", "4:memory:/x\n2:cpu,cpuacct:/slurm/job1\n0::/\n");
	put("sys/fs/cgroup/unified/cgroup.procs", "");
	put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
	put("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
	put("sys/fs/cgroup/cpu,cpuacct/slurm/cpu.cfs_quota_us", "-1\n");
	put("sys/fs/cgroup/cpu,cpuacct/slurm/cpu.cfs_period_us", "100000\n");
	put("sys/fs/cgroup/cpu,cpuacct/slurm/job1/cpu.cfs_quota_us", "150000\n");
	put("sys/fs/cgroup/cpu,cpuacct/slurm/job1/cpu.cfs_period_us", "100000\n");
	h = conditions();
	assert_true(json_real_value(json_object_get(h, "cpu_quota_cores")) == 1.5);
	json_decref(h);
	put("sys/fs/cgroup/cpu,cpuacct/slurm/job1/cpu.cfs_quota_us", "-1\n");
	h = conditions();
	assert_true(is_null(h, "cpu_quota_cores"));
	json_decref(h);
}

/* A provenance document holding host (taken). */
static json_t *prov(json_t *host)
{
	return json_pack("{s:o}", "host", host);
}

/* The note a decision makes: only where most of the baseline ran otherwise. */
static void test_differ(void **state)
{
	json_t *mine = prov(json_pack("{s:s, s:b, s:n, s:f}", "power_source", "battery", "cpu_boost", 0, "smt",
				      "cpu_quota_cores", 1.5));
	const json_t *base[8];
	json_t *notes;

	(void)state;
	/* five on mains with boost on, one without the fields (stored before them) */
	for (int i = 0; i < 5; i++)
		base[i] = prov(json_pack("{s:s, s:b, s:n, s:n}", "power_source", "ac", "cpu_boost", 1, "smt",
					 "cpu_quota_cores"));
	base[5] = prov(json_pack("{s:s}", "cpu_model", "x"));
	notes = bg_conditions_differ(mine, base, 6);
	assert_int_equal(json_array_size(notes), 3);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "power_source battery here, ac in 5 of the 5 baseline sessions that record it");
	assert_string_equal(json_string_value(json_array_get(notes, 1)),
			    "cpu_boost off here, on in 5 of the 5 baseline sessions that record it");
	assert_string_equal(json_string_value(json_array_get(notes, 2)),
			    "cpu_quota_cores 1.5 here, not reported in 5 of the 5 baseline sessions that record it");
	json_decref(notes);
	/* one odd session of eight is not this session's difference; four of
	 * eight are not most; the commonest other value is named */
	for (int i = 0; i < 6; i++)
		json_decref((json_t *)base[i]);
	for (int i = 0; i < 8; i++)
		base[i] = prov(json_pack("{s:s, s:b}", "power_source", i == 0 ? "ac" : "battery", "cpu_boost", i < 4));
	notes = bg_conditions_differ(mine, base, 8);
	assert_int_equal(json_array_size(notes), 0); /* boost: 4 of 8 off, as here */
	json_decref(notes);
	json_decref((json_t *)base[3]);
	base[3] = prov(json_pack("{s:s, s:b}", "power_source", "ac", "cpu_boost", 1));
	json_decref((json_t *)base[4]);
	base[4] = prov(json_pack("{s:s, s:b}", "power_source", "usb", "cpu_boost", 1));
	notes = bg_conditions_differ(mine, base, 8);
	assert_int_equal(json_array_size(notes), 1);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "cpu_boost off here, on in 5 of the 8 baseline sessions that record it");
	json_decref(notes);
	/* a session without the fields (stored before them) is compared on none */
	notes = bg_conditions_differ(base[5], base, 0);
	assert_int_equal(json_array_size(notes), 0);
	json_decref(notes);
	for (int i = 0; i < 8; i++)
		json_decref((json_t *)base[i]);
	json_decref(mine);
}

/* A GPU's settings, device by device: a lower power limit is noted. */
static void test_differ_gpu(void **state)
{
	json_t *mine = json_pack("{s:{}, s:{s:[{s:f, s:b}, {s:f}]}}", "host", "gpu", "devices", "power_limit_watts",
				 250.0, "persistence_mode", 1, "power_limit_watts", 300.0);
	const json_t *base[3];
	json_t *notes;

	(void)state;
	for (int i = 0; i < 3; i++)
		base[i] = json_pack("{s:{}, s:{s:[{s:f, s:b}, {s:f}]}}", "host", "gpu", "devices", "power_limit_watts",
				    300.0, "persistence_mode", 1, "power_limit_watts", 300.0);
	notes = bg_conditions_differ(mine, base, 3);
	assert_int_equal(json_array_size(notes), 1);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "gpu 0 power_limit_watts 250 here, 300 in 3 of the 3 baseline sessions that record it");
	json_decref(notes);
	for (int i = 0; i < 3; i++)
		json_decref((json_t *)base[i]);
	json_decref(mine);
}

/* What else ran: noted from 0.25 cores of other processes, 0.10 of steal. */
static void test_load_notes(void **state)
{
	json_t *notes = json_array(), *quiet, *busy, *none, *older;

	(void)state;
	quiet = json_pack("{s:{s:f, s:f, s:f}, s:{s:{s:i}}}", "machine_load", "seconds", 2.0, "other_cpu_cores",
			  0.24, "steal_cpu_cores", 0.09, "provenance", "host", "logical_cores", 2);
	busy = json_pack("{s:{s:f, s:f, s:f}, s:{s:{s:i}}}", "machine_load", "seconds", 2.0, "other_cpu_cores",
			 1.02, "steal_cpu_cores", 0.15, "provenance", "host", "logical_cores", 2);
	none = json_pack("{s:n}", "machine_load");
	older = json_object(); /* stored before the field */
	bg_load_notes(quiet, notes);
	bg_load_notes(none, notes);
	bg_load_notes(older, notes);
	assert_int_equal(json_array_size(notes), 0);
	bg_load_notes(busy, notes);
	assert_int_equal(json_array_size(notes), 2);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "other processes kept 1.02 of the 2 cores busy during the runs");
	assert_string_equal(json_string_value(json_array_get(notes, 1)),
			    "a hypervisor took 0.15 cores (steal) during the runs");
	json_decref(notes);
	json_decref(quiet);
	json_decref(busy);
	json_decref(none);
	json_decref(older);
}

/* the GPU's clocks held down in timed runs: one note, the reasons in
 * NVML's bit order, warmups not counted; nothing without a slowed timed
 * run, NVML or samples */
static void test_slowdown_notes(void **state)
{
	json_t *notes = json_array();
	json_t *slowed = json_loads("{\"runs\": ["
				    "{\"phase\": \"smoke\", \"gpu_slowdown\": [\"hw_slowdown\"]},"
				    "{\"phase\": \"warmup\", \"gpu_slowdown\": [\"hw_slowdown\"]},"
				    "{\"phase\": \"timed\", \"gpu_slowdown\": [\"hw_thermal_slowdown\"]},"
				    "{\"phase\": \"timed\", \"gpu_slowdown\": []},"
				    "{\"phase\": \"timed\", \"gpu_slowdown\": [\"sw_power_cap\", \"hw_thermal_slowdown\"]},"
				    "{\"phase\": \"timed\", \"gpu_slowdown\": null}]}",
				    0, NULL);
	json_t *warmup_only = json_loads("{\"runs\": [{\"phase\": \"warmup\", \"gpu_slowdown\": [\"hw_slowdown\"]},"
					 "{\"phase\": \"timed\", \"gpu_slowdown\": []}]}",
					 0, NULL);
	json_t *no_nvml = json_loads("{\"runs\": [{\"phase\": \"timed\", \"gpu_slowdown\": null}]}", 0, NULL);
	json_t *older = json_loads("{\"runs\": [{\"phase\": \"timed\"}]}", 0, NULL);

	(void)state;
	bg_slowdown_notes(warmup_only, notes);
	bg_slowdown_notes(no_nvml, notes);
	bg_slowdown_notes(older, notes);
	assert_int_equal(json_array_size(notes), 0);
	bg_slowdown_notes(slowed, notes);
	assert_int_equal(json_array_size(notes), 1);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "the GPU's clocks were slowed (sw_power_cap, hw_thermal_slowdown) during 2 of the 4 timed "
			    "runs: their times are of a device held below its clocks");
	json_decref(notes);
	json_decref(slowed);
	json_decref(warmup_only);
	json_decref(no_nvml);
	json_decref(older);
}

/* another's processes on the GPU during timed runs: one note, each process
 * named once, at most three; warmups not counted; nothing without one */
static void test_gpu_shared_notes(void **state)
{
	json_t *notes = json_array();
	json_t *shared = json_loads(
		"{\"runs\": ["
		"{\"phase\": \"warmup\", \"gpu_other_processes\": [{\"pid\": 7, \"command\": \"w\"}]},"
		"{\"phase\": \"timed\", \"gpu_other_processes\": [{\"pid\": 42, \"command\": \"python3\"}]},"
		"{\"phase\": \"timed\", \"gpu_other_processes\": []},"
		"{\"phase\": \"timed\", \"gpu_other_processes\": [{\"pid\": 42, \"command\": \"python3\"},"
		" {\"pid\": 43, \"command\": null}, {\"pid\": 44, \"command\": \"a\"}, {\"pid\": 45, \"command\": \"b\"}]},"
		"{\"phase\": \"timed\", \"gpu_other_processes\": null}]}",
		0, NULL);
	json_t *alone = json_loads("{\"runs\": [{\"phase\": \"warmup\", \"gpu_other_processes\": [{\"pid\": 7}]},"
				   "{\"phase\": \"timed\", \"gpu_other_processes\": []}, {\"phase\": \"timed\"}]}",
				   0, NULL);

	(void)state;
	bg_gpu_shared_notes(alone, notes);
	assert_int_equal(json_array_size(notes), 0);
	bg_gpu_shared_notes(shared, notes);
	assert_int_equal(json_array_size(notes), 1);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "other processes used the GPU the runs used during 2 of the 4 timed runs (42 (python3), 43, "
			    "44 (a)): their work competed with the runs'");
	json_decref(notes);
	json_decref(shared);
	json_decref(alone);
}

/* Intel's thermal throttle counters: read per CPU (cpufreq and a CPU
 * without them left out), a rise on one CPU counted once, none where no
 * CPU has them; and the note */
static void test_cpu_throttle(void **state)
{
	struct bg_cpu_throttle before, after;
	json_t *notes = json_array();
	json_t *hot = json_pack("{s:{s:i, s:i}}", "cpu_throttle", "cpus", 2, "throttled", 1);
	json_t *cool = json_pack("{s:{s:i, s:i}}", "cpu_throttle", "cpus", 2, "throttled", 0);
	json_t *none = json_pack("{s:n}", "cpu_throttle");

	(void)state;
	assert_false(bg_cpu_throttle_read(root, &before)); /* a machine without them */
	bg_cpu_throttle_release(&before);
	put("/sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", "5\n");
	put("/sys/devices/system/cpu/cpu0/thermal_throttle/package_throttle_count", "2\n");
	put("/sys/devices/system/cpu/cpu12/thermal_throttle/core_throttle_count", "0\n");
	put("/sys/devices/system/cpu/cpu12/thermal_throttle/package_throttle_count", "2\n");
	put("/sys/devices/system/cpu/cpu3/online", "1\n");
	put("/sys/devices/system/cpu/cpufreq/boost", "1\n");
	assert_true(bg_cpu_throttle_read(root, &before));
	assert_int_equal(before.n, 2);
	put("/sys/devices/system/cpu/cpu12/thermal_throttle/core_throttle_count", "3\n");
	assert_true(bg_cpu_throttle_read(root, &after));
	assert_int_equal(bg_cpu_throttle_rose(&before, &after), 1);
	assert_int_equal(bg_cpu_throttle_rose(&after, &after), 0);
	bg_cpu_throttle_release(&before);
	bg_cpu_throttle_release(&after);

	bg_thermal_notes(cool, notes);
	bg_thermal_notes(none, notes);
	assert_int_equal(json_array_size(notes), 0);
	bg_thermal_notes(hot, notes);
	assert_string_equal(json_string_value(json_array_get(notes, 0)),
			    "the CPU throttled for heat during the runs (its thermal throttle counters rose on 1 of the "
			    "2 CPUs): their times are of a slowed processor");
	json_decref(notes);
	json_decref(hot);
	json_decref(cool);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_reported, fresh, gone),
		cmocka_unit_test_setup_teardown(test_laptop, fresh, gone),
		cmocka_unit_test_setup_teardown(test_quota_v2, fresh, gone),
		cmocka_unit_test_setup_teardown(test_quota_v1, fresh, gone),
		cmocka_unit_test(test_differ),
		cmocka_unit_test(test_differ_gpu),
		cmocka_unit_test(test_load_notes),
		cmocka_unit_test(test_slowdown_notes),
		cmocka_unit_test(test_gpu_shared_notes),
		cmocka_unit_test_setup_teardown(test_cpu_throttle, fresh, gone),
	};
	return cmocka_run_group_tests_name("conditions", tests, NULL, NULL);
}
