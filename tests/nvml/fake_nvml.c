/*
 * fake_nvml.c - a stand-in for libnvidia-ml.so.1, so that the tests can
 * check what benchgate records from NVML on a machine without a GPU
 * (tests/scripts/test_measure_nvml.sh loads it through LD_LIBRARY_PATH).
 * One device with 5 GiB in use; the processes it lists are those named
 * "sleep", each holding 64 MiB, unless FAKE_NVML says otherwise:
 *   noperm       listing processes fails (NVML_ERROR_NO_PERMISSION)
 *   unavailable  their memory is NVML_VALUE_NOT_AVAILABLE
 *   foreign      a process of another pid namespace is listed too (pid
 *                4194304, above Linux's largest pid: it exists nowhere here)
 *   nosettings   the device's settings cannot be read (NVML_ERROR_NOT_SUPPORTED)
 * Its clocks are slowed for the reasons FAKE_NVML_SLOWDOWN gives (NVML's
 * bit mask, as strtoull reads it: 0x40 is hardware thermal slowdown)
 * while a process named "sleep" runs, and for none otherwise.
 * Its settings: persistence mode on, ECC on, compute mode default, an
 * enforced power limit of FAKE_NVML_POWER_MW milliwatts (300000 unless
 * set), applications SM clock 1410 MHz, maximum SM clock 1980 MHz.
 * Only the entry points benchgate binds exist; the layouts are NVML's.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	unsigned long long total, free, used;
} fake_memory;
typedef struct {
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id, compute_instance_id;
} fake_process;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **device);
int nvmlDeviceGetMemoryInfo(void *device, fake_memory *m);
int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned int *count, fake_process *info);

/* as NVML does, opens a device file as it starts (and fails with errno
 * left as open set it) */
int nvmlInit_v2(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 999; /* NVML_ERROR_UNKNOWN */
	close(fd);
	return 0;
}
int nvmlShutdown(void) { return 0; }

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 1;
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **device)
{
	(void)i;
	*device = (void *)1;
	return 0;
}

int nvmlDeviceGetMemoryInfo(void *device, fake_memory *m)
{
	(void)device;
	m->total = 80ULL << 30;
	m->used = 5ULL << 30;
	m->free = m->total - m->used;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *device, unsigned int *count, fake_process *info)
{
	const char *mode = getenv("FAKE_NVML");
	unsigned int n = 0;
	struct dirent *e;
	DIR *dir;

	(void)device;
	if (mode && strcmp(mode, "noperm") == 0)
		return 4;
	dir = opendir("/proc");
	while (dir && (e = readdir(dir)) && n < *count) {
		char path[300], comm[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, "sleep\n") == 0) {
			info[n].pid = (unsigned int)atoi(e->d_name);
			info[n].used_gpu_memory = mode && strcmp(mode, "unavailable") == 0 ? ~0ULL : 64ULL << 20;
			info[n].gpu_instance_id = info[n].compute_instance_id = 0;
			n++;
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	if (mode && strcmp(mode, "foreign") == 0 && n < *count) {
		info[n].pid = 4194304;
		info[n].used_gpu_memory = 1ULL << 30;
		info[n].gpu_instance_id = info[n].compute_instance_id = 0;
		n++;
	}
	*count = n;
	return 0;
}

/* The device's settings (NVML_ERROR_NOT_SUPPORTED is 3). */
static int no_settings(void)
{
	const char *mode = getenv("FAKE_NVML");

	return mode && strcmp(mode, "nosettings") == 0;
}

int nvmlDeviceGetPersistenceMode(void *device, int *mode);
int nvmlDeviceGetEnforcedPowerLimit(void *device, unsigned int *limit);
int nvmlDeviceGetComputeMode(void *device, int *mode);
int nvmlDeviceGetEccMode(void *device, int *current, int *pending);
int nvmlDeviceGetApplicationsClock(void *device, int type, unsigned int *mhz);
int nvmlDeviceGetMaxClockInfo(void *device, int type, unsigned int *mhz);

int nvmlDeviceGetPersistenceMode(void *device, int *mode)
{
	(void)device;
	*mode = 1;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetEnforcedPowerLimit(void *device, unsigned int *limit)
{
	const char *mw = getenv("FAKE_NVML_POWER_MW");

	(void)device;
	*limit = mw ? (unsigned int)strtoul(mw, NULL, 10) : 300000u;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetComputeMode(void *device, int *mode)
{
	(void)device;
	*mode = 0;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetEccMode(void *device, int *current, int *pending)
{
	(void)device;
	*current = *pending = 1;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetApplicationsClock(void *device, int type, unsigned int *mhz)
{
	(void)device;
	*mhz = type == 1 ? 1410u : 1593u;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetMaxClockInfo(void *device, int type, unsigned int *mhz)
{
	(void)device;
	*mhz = type == 1 ? 1980u : 1593u;
	return no_settings() ? 3 : 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons);

/* Whether a process named "sleep" runs (the tests' stand-in for a kernel). */
static int sleep_runs(void)
{
	struct dirent *e;
	DIR *dir = opendir("/proc");
	int found = 0;

	while (dir && !found && (e = readdir(dir))) {
		char path[300], comm[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		found = fgets(comm, sizeof(comm), f) && strcmp(comm, "sleep\n") == 0;
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *device, unsigned long long *reasons)
{
	const char *mask = getenv("FAKE_NVML_SLOWDOWN");

	(void)device;
	*reasons = mask && sleep_runs() ? strtoull(mask, NULL, 0) : 0x1ull; /* idle */
	return no_settings() ? 3 : 0;
}
