/*
 * nvml.c - NVIDIA GPU facts and memory through libnvidia-ml.so.1, opened with
 * dlopen at run time (no build dependency). Every failure means "no GPU
 * data": callers record null; except running out of file descriptors while
 * loading or starting it, an error (bg_nvml_load), since the machine may
 * have a GPU. Only the few entry points needed are bound.
 */
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "core/dynlib.h"
#include "measure/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t; /* the _v2/_v3 layout */

#define NVML_MAX_DEVICES 16
#define NVML_MAX_PROCS 256

struct bg_nvml {
	void *lib;
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*cuda)(int *);
	nvmlReturn_t (*procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
	/* the device's settings that change timings (bg_nvml_describe) */
	nvmlReturn_t (*persistence)(nvmlDevice_t, int *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*compute_mode)(nvmlDevice_t, int *);
	nvmlReturn_t (*ecc)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*app_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int *);
	/* why the clocks are below what they could be, now (bg_nvml_sample) */
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	unsigned int ndev;
	nvmlDevice_t dev[NVML_MAX_DEVICES];
};

/* dlsym into a function pointer without the object-to-function cast warning. */
static void nvml_bind(void *lib, const char *name, void *slot)
{
	void *sym = dlsym(lib, name);

	memcpy(slot, &sym, sizeof(sym));
}

int bg_nvml_load(struct bg_nvml **out, struct bg_ctx *ctx)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvmlReturn_t (*init)(void) = NULL;
	nvmlReturn_t st = 0;
	struct bg_nvml *n;
	int e;

	*out = NULL;
	if (!lib) {
		const char *why = dlerror();

		/* out of descriptors is not the library's absence: a machine with
		 * a GPU must not pass for one without */
		if ((e = bg_dynlib_out_of_files(why)))
			return bg_error(ctx, BG_EIO, "cannot load libnvidia-ml.so.1 to read the GPUs: %s; %s", why,
					bg_open_files_advice(e));
		return BG_OK;
	}
	n = bg_xcalloc(1, sizeof(*n));
	n->lib = lib;
	nvml_bind(lib, "nvmlInit_v2", &init);
	nvml_bind(lib, "nvmlShutdown", &n->shutdown);
	nvml_bind(lib, "nvmlDeviceGetCount_v2", &n->count);
	nvml_bind(lib, "nvmlDeviceGetHandleByIndex_v2", &n->handle);
	nvml_bind(lib, "nvmlDeviceGetName", &n->name);
	nvml_bind(lib, "nvmlDeviceGetUUID", &n->uuid);
	nvml_bind(lib, "nvmlDeviceGetMemoryInfo", &n->memory);
	nvml_bind(lib, "nvmlSystemGetDriverVersion", &n->driver);
	nvml_bind(lib, "nvmlSystemGetCudaDriverVersion", &n->cuda);
	nvml_bind(lib, "nvmlDeviceGetComputeRunningProcesses_v3", &n->procs);
	if (!n->procs)
		nvml_bind(lib, "nvmlDeviceGetComputeRunningProcesses_v2", &n->procs);
	nvml_bind(lib, "nvmlDeviceGetPersistenceMode", &n->persistence);
	nvml_bind(lib, "nvmlDeviceGetEnforcedPowerLimit", &n->power_limit);
	nvml_bind(lib, "nvmlDeviceGetComputeMode", &n->compute_mode);
	nvml_bind(lib, "nvmlDeviceGetEccMode", &n->ecc);
	nvml_bind(lib, "nvmlDeviceGetApplicationsClock", &n->app_clock);
	nvml_bind(lib, "nvmlDeviceGetMaxClockInfo", &n->max_clock);
	nvml_bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->throttle); /* driver 535 and later */
	if (!n->throttle)
		nvml_bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->throttle);
	errno = 0;
	if (init)
		st = init();
	e = errno;
	if (!init || !n->count || !n->handle || st != 0) {
		dlclose(lib);
		free(n);
		/* NVML opens the driver's device files as it starts */
		if (init && st != 0 && (e == EMFILE || e == ENFILE))
			return bg_error(ctx, BG_EIO, "NVML could not start to read the GPUs (error %d): %s; %s", (int)st,
					strerror(e), bg_open_files_advice(e));
		return BG_OK;
	}
	if (n->count(&n->ndev) != 0)
		n->ndev = 0;
	if (n->ndev > NVML_MAX_DEVICES)
		n->ndev = NVML_MAX_DEVICES;
	for (unsigned int i = 0; i < n->ndev; i++)
		if (n->handle(i, &n->dev[i]) != 0)
			n->dev[i] = NULL;
	*out = n;
	return BG_OK;
}

void bg_nvml_close(struct bg_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

#define NVML_CLOCK_SM 1

/*
 * What of a device's settings changes how fast the same kernel runs, each
 * null where NVML cannot tell (or the driver lacks the call):
 * persistence_mode (bool), power_limit_watts (the enforced limit),
 * compute_mode ("default", "exclusive-thread", "prohibited",
 * "exclusive-process"), ecc (bool, current), applications_sm_clock_mhz
 * (the SM clock the applications clocks set) and max_sm_clock_mhz.
 */
static void device_settings(struct bg_nvml *n, nvmlDevice_t dev, json_t *d)
{
	static const char *const modes[] = {"default", "exclusive-thread", "prohibited", "exclusive-process"};
	unsigned int u;
	int v, pending;

	json_object_set_new(d, "persistence_mode", dev && n->persistence && n->persistence(dev, &v) == 0
							   ? json_boolean(v == 1) : json_null());
	json_object_set_new(d, "power_limit_watts", dev && n->power_limit && n->power_limit(dev, &u) == 0
							    ? json_real(u / 1000.0) : json_null());
	json_object_set_new(d, "compute_mode", dev && n->compute_mode && n->compute_mode(dev, &v) == 0 && v >= 0 &&
						       v < 4
						       ? json_string(modes[v]) : json_null());
	json_object_set_new(d, "ecc", dev && n->ecc && n->ecc(dev, &v, &pending) == 0 ? json_boolean(v == 1)
										      : json_null());
	json_object_set_new(d, "applications_sm_clock_mhz",
			    dev && n->app_clock && n->app_clock(dev, NVML_CLOCK_SM, &u) == 0 ? json_integer(u)
											      : json_null());
	json_object_set_new(d, "max_sm_clock_mhz",
			    dev && n->max_clock && n->max_clock(dev, NVML_CLOCK_SM, &u) == 0 ? json_integer(u)
											      : json_null());
}

json_t *bg_nvml_describe(struct bg_nvml *n)
{
	json_t *o = json_object(), *devs = json_array();
	char buf[256];
	int cuda;

	if (n->driver && n->driver(buf, sizeof(buf)) == 0)
		json_object_set_new(o, "driver_version", bg_json_text(buf));
	else
		json_object_set_new(o, "driver_version", json_null());
	if (n->cuda && n->cuda(&cuda) == 0) {
		snprintf(buf, sizeof(buf), "%d.%d", cuda / 1000, cuda % 1000 / 10);
		json_object_set_new(o, "cuda_version", json_string(buf));
	} else {
		json_object_set_new(o, "cuda_version", json_null());
	}
	for (unsigned int i = 0; i < n->ndev; i++) {
		json_t *d = json_object();
		nvmlMemory_t mem;

		if (n->dev[i] && n->name && n->name(n->dev[i], buf, sizeof(buf)) == 0)
			json_object_set_new(d, "name", bg_json_text(buf));
		else
			json_object_set_new(d, "name", json_null());
		if (n->dev[i] && n->uuid && n->uuid(n->dev[i], buf, sizeof(buf)) == 0)
			json_object_set_new(d, "uuid", bg_json_text(buf));
		else
			json_object_set_new(d, "uuid", json_null());
		if (n->dev[i] && n->memory && n->memory(n->dev[i], &mem) == 0)
			json_object_set_new(d, "memory_total_bytes", json_integer((json_int_t)mem.total));
		else
			json_object_set_new(d, "memory_total_bytes", json_null());
		device_settings(n, n->dev[i], d);
		json_array_append_new(devs, d);
	}
	json_object_set_new(o, "devices", devs);
	return o;
}

const char *const bg_gpu_slowdown_names[BG_GPU_SLOWDOWN_BITS] = {
	NULL, NULL, "sw_power_cap", "hw_slowdown", NULL, "sw_thermal_slowdown", "hw_thermal_slowdown",
	"hw_power_brake_slowdown",
};

/* Adds pid to the set others[0..*n) (at most BG_GPU_OTHERS_MAX). */
static void add_other(pid_t *others, size_t *n, pid_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if (others[i] == pid)
			return;
	if (*n < BG_GPU_OTHERS_MAX)
		others[(*n)++] = pid;
}

unsigned bg_nvml_sample(struct bg_nvml *n, const pid_t *pids, size_t npids, uint64_t *proc_bytes,
			uint64_t *device_bytes, uint64_t *slowdown, pid_t *others, size_t *nothers)
{
	static nvmlProcessInfo_t info[NVML_MAX_PROCS];
	bool any = false, procs_known = n->procs != NULL && n->ndev > 0;
	uint64_t slow_ours = 0, slow_all = 0;

	*proc_bytes = 0;
	*device_bytes = 0;
	*nothers = 0;
	for (unsigned int i = 0; i < n->ndev; i++) {
		nvmlMemory_t mem;
		unsigned int count = NVML_MAX_PROCS;
		unsigned long long reasons = 0;
		uint64_t slow;
		bool on_device = false, others_known = true;
		pid_t dev_others[BG_GPU_OTHERS_MAX];
		size_t ndev_others = 0;

		if (!n->dev[i]) {
			procs_known = false;
			continue;
		}
		if (n->memory && n->memory(n->dev[i], &mem) == 0) {
			*device_bytes += mem.used;
			any = true;
		}
		if (!n->throttle || n->throttle(n->dev[i], &reasons) != 0)
			reasons = 0;
		slow = (uint64_t)reasons & BG_GPU_SLOWDOWN_MASK;
		slow_all |= slow;
		/* a device that cannot list its processes (no permission, too
		 * many) leaves the tree's share unknown, never 0 */
		if (!n->procs || n->procs(n->dev[i], &count, info) != 0) {
			procs_known = false;
			continue;
		}
		for (unsigned int k = 0; k < count && k < NVML_MAX_PROCS; k++) {
			bool ours = false;

			for (size_t j = 0; j < npids && !ours; j++)
				ours = (pid_t)info[k].pid == pids[j];
			on_device = on_device || ours;
			if (!ours) {
				/* a pid that does not exist here: NVML speaks of
				 * another pid namespace (a container's host), so
				 * the tree's pids cannot be matched at all */
				if (kill((pid_t)info[k].pid, 0) != 0 && errno == ESRCH)
					procs_known = others_known = false;
				else
					add_other(dev_others, &ndev_others, (pid_t)info[k].pid);
			} else if (info[k].usedGpuMemory == ~0ULL) { /* NVML_VALUE_NOT_AVAILABLE */
				procs_known = false;
			} else {
				*proc_bytes += info[k].usedGpuMemory;
			}
		}
		if (on_device)
			slow_ours |= slow;
		/* another's processes on a device the tree uses compete with it */
		for (size_t k = 0; on_device && others_known && k < ndev_others; k++)
			add_other(others, nothers, dev_others[k]);
	}
	/* the devices the tree runs on, where they can be told; else any */
	*slowdown = procs_known ? slow_ours : slow_all;
	return (any ? BG_NVML_DEVICE : 0u) | (procs_known ? BG_NVML_PROCESS : 0u);
}
