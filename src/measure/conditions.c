/*
 * conditions.c - the state of the machine that changes how fast the same
 * code runs, for a session's provenance (see provenance.h): the power
 * source, CPU boost, the energy/performance preference, SMT, a hypervisor
 * and the CPU quota of the container or cgroup benchgate runs in. Read from
 * /sys and /proc under a root folder ("" for this machine), so that a test
 * can lay out a machine of its own. Nothing fails: what cannot be read is
 * null. Also the notes a decision carries about them, and about what a
 * session's runs met (other processes' CPU, a GPU slowed or shared, an
 * eviction that reached this machine's copy only).
 */
#include "benchgate/provenance.h"
#include "benchgate/json.h"
#include "benchgate/strbuf.h"
#include "measure/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first line of root/rel without its line end, into out; false when unreadable or empty. */
static bool read_line(const char *root, const char *rel, struct bg_strbuf *out)
{
	char buf[512];
	FILE *f;

	bg_strbuf_reset(out);
	bg_strbuf_addf(out, "%s%s", root, rel);
	f = fopen(out->buf, "re");
	bg_strbuf_reset(out);
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		bg_strbuf_adds(out, buf);
	}
	fclose(f);
	return out->len > 0;
}

/* "ac" when a mains or USB supply is online, "battery" when one discharges, else null. */
static json_t *power_source(const char *root)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, rel = BG_STRBUF_INIT, v = BG_STRBUF_INIT;
	bool ac = false, discharging = false;
	struct dirent *e;
	DIR *d;

	bg_strbuf_addf(&dir, "%s/sys/class/power_supply", root);
	if ((d = opendir(dir.buf))) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			bg_strbuf_reset(&rel);
			bg_strbuf_addf(&rel, "/sys/class/power_supply/%s/type", e->d_name);
			if (!read_line(root, rel.buf, &v))
				continue;
			if (strcmp(v.buf, "Mains") == 0 || strncmp(v.buf, "USB", 3) == 0) {
				bg_strbuf_reset(&rel);
				bg_strbuf_addf(&rel, "/sys/class/power_supply/%s/online", e->d_name);
				if (read_line(root, rel.buf, &v) && strcmp(v.buf, "1") == 0)
					ac = true;
			} else if (strcmp(v.buf, "Battery") == 0) {
				bg_strbuf_reset(&rel);
				bg_strbuf_addf(&rel, "/sys/class/power_supply/%s/status", e->d_name);
				if (read_line(root, rel.buf, &v) && strcmp(v.buf, "Discharging") == 0)
					discharging = true;
			}
		}
		closedir(d);
	}
	bg_strbuf_release(&dir);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&v);
	return ac ? json_string("ac") : discharging ? json_string("battery") : json_null();
}

/* Whether the CPU may boost above its base clock: cpufreq's boost, or intel_pstate's no_turbo. */
static json_t *cpu_boost(const char *root)
{
	struct bg_strbuf v = BG_STRBUF_INIT;
	json_t *b = json_null();

	if (read_line(root, "/sys/devices/system/cpu/cpufreq/boost", &v) && (v.buf[0] == '0' || v.buf[0] == '1'))
		b = json_boolean(v.buf[0] == '1');
	else if (read_line(root, "/sys/devices/system/cpu/intel_pstate/no_turbo", &v) &&
		 (v.buf[0] == '0' || v.buf[0] == '1'))
		b = json_boolean(v.buf[0] == '0');
	bg_strbuf_release(&v);
	return b;
}

/* The text of a one-line file, or null. */
static json_t *text_of(const char *root, const char *rel)
{
	struct bg_strbuf v = BG_STRBUF_INIT;
	json_t *t = read_line(root, rel, &v) ? bg_json_text(v.buf) : json_null();

	bg_strbuf_release(&v);
	return t;
}

/* true when /proc/cpuinfo's flags name a hypervisor, false when they do
 * not, null without flags (only x86 kernels list them so). */
static json_t *virtualized(const char *root)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	char line[8192];
	json_t *v = json_null();
	FILE *f;

	bg_strbuf_addf(&path, "%s/proc/cpuinfo", root);
	if ((f = fopen(path.buf, "re"))) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "flags", 5) != 0 || !strchr(line, ':'))
				continue;
			json_decref(v);
			v = json_boolean(strstr(line, " hypervisor") != NULL);
			break;
		}
		fclose(f);
	}
	bg_strbuf_release(&path);
	return v;
}

/* The cgroup limit of one folder in cores: cgroup v2's cpu.max ("QUOTA
 * PERIOD" or "max PERIOD"), v1's cfs quota and period; 0 for none. */
static double folder_quota(const char *root, const char *dir, bool v2)
{
	struct bg_strbuf rel = BG_STRBUF_INIT, v = BG_STRBUF_INIT;
	double quota = 0, period = 0;

	bg_strbuf_addf(&rel, "%s/%s", dir, v2 ? "cpu.max" : "cpu.cfs_quota_us");
	if (read_line(root, rel.buf, &v)) {
		if (v2) {
			char *end;
			quota = strtod(v.buf, &end);
			if (end != v.buf && *end == ' ')
				period = strtod(end + 1, NULL);
		} else {
			quota = strtod(v.buf, NULL);
			bg_strbuf_reset(&rel);
			bg_strbuf_addf(&rel, "%s/cpu.cfs_period_us", dir);
			if (read_line(root, rel.buf, &v))
				period = strtod(v.buf, NULL);
		}
	}
	bg_strbuf_release(&rel);
	bg_strbuf_release(&v);
	return quota > 0 && period > 0 ? quota / period : 0;
}

/*
 * The CPU time this process's cgroup may use, in cores: the smallest limit
 * of its cgroup and every cgroup above it (a container's --cpus, a CI
 * runner's or a systemd slice's CPUQuota); null when none applies or none
 * can be read.
 */
static json_t *cpu_quota(const char *root)
{
	static const char *const v1_mounts[] = {"cpu,cpuacct", "cpu", "cpuacct,cpu", NULL};
	struct bg_strbuf path = BG_STRBUF_INIT, dir = BG_STRBUF_INIT;
	char line[4096];
	const char *unified = "/sys/fs/cgroup";
	double best = 0;
	FILE *f;

	bg_strbuf_addf(&path, "%s/sys/fs/cgroup/cgroup.controllers", root);
	if (access(path.buf, F_OK) != 0)
		unified = "/sys/fs/cgroup/unified";
	bg_strbuf_reset(&path);
	bg_strbuf_addf(&path, "%s/proc/self/cgroup", root);
	f = fopen(path.buf, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *cg;
		const char *mount = NULL;
		bool v2;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		cg = c2 + 1;
		v2 = c1[1] == '\0' && strncmp(line, "0:", 2) == 0;
		if (!v2) { /* a v1 hierarchy with the cpu controller */
			char *ctl = c1 + 1, *save = NULL, *tok;
			bool cpu = false;
			for (tok = strtok_r(ctl, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				cpu |= strcmp(tok, "cpu") == 0;
			if (!cpu)
				continue;
			for (int k = 0; v1_mounts[k] && !mount; k++) {
				bg_strbuf_reset(&dir);
				bg_strbuf_addf(&dir, "%s/sys/fs/cgroup/%s", root, v1_mounts[k]);
				if (dir_exists(dir.buf))
					mount = v1_mounts[k];
			}
			if (!mount)
				continue;
		}
		/* this cgroup, then each one above it */
		for (;;) {
			double q;
			char *slash;

			bg_strbuf_reset(&dir);
			if (v2) /* unified, or beside v1 hierarchies (hybrid) */
				bg_strbuf_addf(&dir, "%s%s", unified, strcmp(cg, "/") == 0 ? "" : cg);
			else
				bg_strbuf_addf(&dir, "/sys/fs/cgroup/%s%s", mount, strcmp(cg, "/") == 0 ? "" : cg);
			q = folder_quota(root, dir.buf, v2);
			if (q > 0 && (best == 0 || q < best))
				best = q;
			if (strcmp(cg, "/") == 0 || !(slash = strrchr(cg, '/')))
				break;
			if (slash == cg)
				cg[1] = '\0';
			else
				*slash = '\0';
		}
	}
	if (f)
		fclose(f);
	bg_strbuf_release(&path);
	bg_strbuf_release(&dir);
	return best > 0 ? json_real(best) : json_null();
}

void bg_host_conditions(const char *root, json_t *host)
{
	json_object_set_new(host, "power_source", power_source(root));
	json_object_set_new(host, "cpu_boost", cpu_boost(root));
	json_object_set_new(host, "cpu_energy_preference",
			    text_of(root, "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference"));
	json_object_set_new(host, "smt", text_of(root, "/sys/devices/system/cpu/smt/control"));
	json_object_set_new(host, "virtualized", virtualized(root));
	json_object_set_new(host, "cpu_quota_cores", cpu_quota(root));
}

bool bg_cpu_throttle_read(const char *root, struct bg_cpu_throttle *t)
{
	static const char *const counters[] = {"core_throttle_count", "package_throttle_count"};
	struct bg_strbuf dir = BG_STRBUF_INIT, rel = BG_STRBUF_INIT, v = BG_STRBUF_INIT;
	struct dirent *e;
	DIR *d;

	memset(t, 0, sizeof(*t));
	bg_strbuf_addf(&dir, "%s/sys/devices/system/cpu", root);
	d = opendir(dir.buf);
	while (d && (e = readdir(d))) {
		char *end = NULL;
		long cpu = strncmp(e->d_name, "cpu", 3) == 0 ? strtol(e->d_name + 3, &end, 10) : -1;
		unsigned long long sum = 0;
		bool any = false;

		if (cpu < 0 || end == e->d_name + 3 || *end)
			continue;
		for (int k = 0; k < 2; k++) {
			bg_strbuf_reset(&rel);
			bg_strbuf_addf(&rel, "/sys/devices/system/cpu/%s/thermal_throttle/%s", e->d_name, counters[k]);
			if (read_line(root, rel.buf, &v)) {
				sum += strtoull(v.buf, NULL, 10);
				any = true;
			}
		}
		if (!any)
			continue;
		t->cpu = bg_xrealloc(t->cpu, (t->n + 1) * sizeof(*t->cpu));
		t->count = bg_xrealloc(t->count, (t->n + 1) * sizeof(*t->count));
		t->cpu[t->n] = cpu;
		t->count[t->n++] = sum;
	}
	if (d)
		closedir(d);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&v);
	return t->n > 0;
}

size_t bg_cpu_throttle_rose(const struct bg_cpu_throttle *before, const struct bg_cpu_throttle *after)
{
	size_t rose = 0;

	for (size_t i = 0; i < after->n; i++)
		for (size_t j = 0; j < before->n; j++)
			if (before->cpu[j] == after->cpu[i]) {
				rose += after->count[i] > before->count[j];
				break;
			}
	return rose;
}

void bg_cpu_throttle_release(struct bg_cpu_throttle *t)
{
	free(t->cpu);
	free(t->count);
	memset(t, 0, sizeof(*t));
}

/* The conditions a baseline is compared on: the host's (the governor is
 * the older field) and each GPU's (bg_nvml_describe). */
static const char *const host_fields[] = {"power_source", "cpu_boost", "cpu_energy_preference", "smt",
					  "virtualized", "cpu_quota_cores", "cpus_allowed", "cpu_governor", NULL};
static const char *const gpu_fields[] = {"persistence_mode", "power_limit_watts", "compute_mode", "ecc",
					 "applications_sm_clock_mhz", "max_sm_clock_mhz", NULL};

static void add_value(struct bg_strbuf *out, const json_t *v)
{
	if (json_is_string(v))
		bg_strbuf_adds(out, json_string_value(v));
	else if (json_is_boolean(v))
		bg_strbuf_adds(out, json_is_true(v) ? "on" : "off");
	else if (json_is_number(v))
		bg_strbuf_addf(out, "%g", json_number_value(v));
	else
		bg_strbuf_adds(out, "not reported");
}

/* The object a field is read from: the host, or GPU gpu's description. */
static const json_t *part(const json_t *prov, long gpu)
{
	if (gpu < 0)
		return json_object_get(prov, "host");
	return json_array_get(json_object_get(json_object_get(prov, "gpu"), "devices"), (size_t)gpu);
}

/* One field: a note into notes when most of the baseline ran otherwise. */
static void differ_one(const json_t *prov, const json_t *const *base, size_t n, long gpu, const char *f,
		       json_t *notes)
{
	const json_t *mine = json_object_get(part(prov, gpu), f), *other = NULL;
	size_t recorded = 0, same = 0, other_count = 0;
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (!mine) /* a session from before the field */
		return;
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_object_get(part(base[i], gpu), f);
		size_t count = 0;

		if (!v)
			continue;
		recorded++;
		if (json_equal((json_t *)v, (json_t *)mine)) {
			same++;
			continue;
		}
		/* the commonest other value, first met on a tie */
		for (size_t j = 0; j < n; j++) {
			const json_t *w = json_object_get(part(base[j], gpu), f);
			if (w && json_equal((json_t *)v, (json_t *)w))
				count++;
		}
		if (count > other_count) {
			other = v;
			other_count = count;
		}
	}
	/* a note when most of the baseline ran otherwise, not for one odd
	 * session of it */
	if (!recorded || 2 * same >= recorded)
		return;
	if (gpu >= 0)
		bg_strbuf_addf(&sb, "gpu %ld ", gpu);
	bg_strbuf_addf(&sb, "%s ", f);
	add_value(&sb, mine);
	bg_strbuf_adds(&sb, " here, ");
	add_value(&sb, other);
	bg_strbuf_addf(&sb, " in %zu of the %zu baseline session%s that record it", other_count, recorded,
		       recorded == 1 ? "" : "s");
	json_array_append_new(notes, bg_json_text(sb.buf));
	bg_strbuf_release(&sb);
}

json_t *bg_conditions_differ(const json_t *prov, const json_t *const *base, size_t n)
{
	json_t *notes = json_array();
	size_t ngpu = json_array_size(json_object_get(json_object_get(prov, "gpu"), "devices"));

	for (const char *const *f = host_fields; *f; f++)
		differ_one(prov, base, n, -1, *f, notes);
	for (size_t g = 0; g < ngpu && g < 64; g++)
		for (const char *const *f = gpu_fields; *f; f++)
			differ_one(prov, base, n, (long)g, *f, notes);
	return notes;
}

void bg_load_notes(const json_t *session, json_t *notes)
{
	const json_t *load = json_object_get(session, "machine_load");
	const json_t *cores = json_object_get(json_object_get(json_object_get(session, "provenance"), "host"),
					      "logical_cores");
	double other = json_number_value(json_object_get(load, "other_cpu_cores"));
	double steal = json_number_value(json_object_get(load, "steal_cpu_cores"));
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (!json_is_object(load))
		return;
	if (other >= BG_LOAD_NOTABLE_CORES) {
		bg_strbuf_addf(&sb, "other processes kept %.2f ", other);
		if (json_is_integer(cores))
			bg_strbuf_addf(&sb, "of the %lld ", (long long)json_integer_value(cores));
		bg_strbuf_adds(&sb, "cores busy during the runs");
		json_array_append_new(notes, json_string(sb.buf));
		bg_strbuf_reset(&sb);
	}
	if (steal >= BG_STEAL_NOTABLE_CORES) {
		bg_strbuf_addf(&sb, "a hypervisor took %.2f cores (steal) during the runs", steal);
		json_array_append_new(notes, json_string(sb.buf));
	}
	bg_strbuf_release(&sb);
}

void bg_thermal_notes(const json_t *session, json_t *notes)
{
	const json_t *t = json_object_get(session, "cpu_throttle");
	json_int_t rose = json_integer_value(json_object_get(t, "throttled"));
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (rose <= 0)
		return;
	bg_strbuf_addf(&sb, "the CPU throttled for heat during the runs (its thermal throttle counters rose on %lld of the %lld CPUs): their times are of a slowed processor",
		       (long long)rose, (long long)json_integer_value(json_object_get(t, "cpus")));
	json_array_append_new(notes, json_string(sb.buf));
	bg_strbuf_release(&sb);
}

void bg_slowdown_notes(const json_t *session, json_t *notes)
{
	const json_t *r, *why;
	size_t i, k, timed = 0, slowed = 0;
	bool seen[BG_GPU_SLOWDOWN_BITS] = {false};
	struct bg_strbuf sb = BG_STRBUF_INIT;

	json_array_foreach(json_object_get(session, "runs"), i, r) {
		const char *phase = json_string_value(json_object_get(r, "phase"));
		bool counted = false;

		if (!phase || strcmp(phase, "timed") != 0)
			continue;
		timed++;
		json_array_foreach(json_object_get(r, "gpu_slowdown"), k, why)
			for (int b = 0; b < BG_GPU_SLOWDOWN_BITS; b++)
				if (bg_gpu_slowdown_names[b] && json_is_string(why) &&
				    strcmp(json_string_value(why), bg_gpu_slowdown_names[b]) == 0)
					counted = seen[b] = true;
		slowed += counted;
	}
	if (slowed) {
		const char *sep = "";
		bg_strbuf_adds(&sb, "the GPU's clocks were slowed (");
		for (int b = 0; b < BG_GPU_SLOWDOWN_BITS; b++)
			if (seen[b]) {
				bg_strbuf_addf(&sb, "%s%s", sep, bg_gpu_slowdown_names[b]);
				sep = ", ";
			}
		bg_strbuf_addf(&sb, ") during %zu of the %zu timed runs: their times are of a device held below its clocks",
			       slowed, timed);
		json_array_append_new(notes, json_string(sb.buf));
	}
	bg_strbuf_release(&sb);
}

void bg_cache_notes(const json_t *session, json_t *notes)
{
	const json_t *f;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(session, "cache"), "remote"), i, f) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		if (!json_is_string(json_object_get(f, "path")) || !json_is_string(json_object_get(f, "filesystem")))
			continue; /* a store changed outside benchgate */
		bg_strbuf_addf(&sb,
			       "'%s' is on %s: evicting it dropped this machine's copy only, and a file server's cache "
			       "(or the file system's daemon) may still hold it, so the cold runs may not have read it "
			       "from disk",
			       json_string_value(json_object_get(f, "path")),
			       json_string_value(json_object_get(f, "filesystem")));
		json_array_append_new(notes, json_string(sb.buf));
		bg_strbuf_release(&sb);
	}
}

void bg_gpu_shared_notes(const json_t *session, json_t *notes)
{
	const json_t *r, *p;
	size_t i, k, timed = 0, shared = 0, named = 0;
	json_int_t seen[3];
	struct bg_strbuf who = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;

	json_array_foreach(json_object_get(session, "runs"), i, r) {
		const char *phase = json_string_value(json_object_get(r, "phase"));
		const json_t *others = json_object_get(r, "gpu_other_processes");

		if (!phase || strcmp(phase, "timed") != 0)
			continue;
		timed++;
		if (!json_array_size(others))
			continue;
		shared++;
		json_array_foreach(others, k, p) {
			json_int_t pid = json_integer_value(json_object_get(p, "pid"));
			const char *cmd = json_string_value(json_object_get(p, "command"));
			bool again = false;
			for (size_t j = 0; j < named && !again; j++)
				again = seen[j] == pid;
			if (again || named == 3)
				continue;
			seen[named++] = pid;
			bg_strbuf_addf(&who, "%s%lld", who.len ? ", " : "", (long long)pid);
			if (cmd)
				bg_strbuf_addf(&who, " (%s)", cmd);
		}
	}
	if (shared) {
		bg_strbuf_addf(&sb, "other processes used the GPU the runs used during %zu of the %zu timed runs (%s): "
				    "their work competed with the runs'",
			       shared, timed, who.buf);
		json_array_append_new(notes, json_string(sb.buf));
	}
	bg_strbuf_release(&who);
	bg_strbuf_release(&sb);
}
