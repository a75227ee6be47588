/*
 * cgroup.c - a memory cgroup of each run's own (see internal.h): the exact
 * peak of the memory charged to the run, where benchgate may create one.
 *
 * Only the cgroup v1 memory controller is used: a v1 memory cgroup accepts
 * processes beside child cgroups, so benchgate makes one under its own,
 * the child moves itself in before exec, and what is left when the run
 * ends is moved back before the folder is removed. On cgroup v2 the
 * no-internal-process rule forbids a child cgroup with the memory
 * controller while benchgate runs in the parent; the note says so.
 * Folders are named benchgate-PID-ORDINAL; those of a benchgate that died
 * are removed by the next session that finds them empty.
 */
#include "measure/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEAK_FILE "memory.max_usage_in_bytes"

/* Sets the note for runs without a cgroup peak: fmt has one %s (arg), err an errno or 0. */
static void note(struct bg_cgroup *cg, const char *fmt, const char *arg, int err)
{
	char what[400];

	snprintf(what, sizeof(what), fmt, arg ? arg : "");
	if (err)
		snprintf(cg->note, sizeof(cg->note),
			 "%.399s: %.100s; tree_peak_bytes is sampled, cgroup_peak_bytes is null", what, strerror(err));
	else
		snprintf(cg->note, sizeof(cg->note), "%.399s; tree_peak_bytes is sampled, cgroup_peak_bytes is null",
			 what);
}

/* Whether a comma-separated list (changed in place) names the memory controller. */
static bool lists_memory(char *csv)
{
	for (char *sv, *tok = strtok_r(csv, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv))
		if (strcmp(tok, "memory") == 0)
			return true;
	return false;
}

/* The mount point of the v1 hierarchy whose super options name memory, and its root; false when none. */
static bool v1_mount(char *mnt, size_t mlen, char *root, size_t rlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char r[1024], m[1024], type[64], opts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
		    sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2 || strcmp(type, "cgroup") != 0)
			continue;
		if ((found = lists_memory(opts))) {
			snprintf(mnt, mlen, "%s", m);
			snprintf(root, rlen, "%s", r);
		}
	}
	fclose(f);
	return found;
}

/* This process's path in the v1 memory hierarchy (from /proc/self/cgroup); false when none. */
static bool v1_path(char *path, size_t len, bool *v2)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	bool found = false;

	*v2 = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *p;

		line[strcspn(line, "\n")] = '\0';
		if (!ctrl || !(p = strchr(ctrl + 1, ':')))
			continue;
		*p++ = '\0';
		ctrl++;
		if (*ctrl == '\0') {
			*v2 = true;
			continue;
		}
		if ((found = lists_memory(ctrl)))
			snprintf(path, len, "%s", p);
	}
	fclose(f);
	return found;
}

/* Moves every process listed in dir/cgroup.procs into to/cgroup.procs (one that has gone needs no move). */
static void evacuate(const char *dir, const char *to)
{
	char path[4200], pid[32];
	FILE *in;
	int out;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (!(in = fopen(path, "re")))
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", to);
	if ((out = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		while (fgets(pid, sizeof(pid), in)) {
			size_t n = strcspn(pid, "\n");

			if (write(out, pid, n) != (ssize_t)n) {
				/* gone (ESRCH), or not movable: rmdir then fails and is retried */
			}
		}
		close(out);
	}
	fclose(in);
}

/* Empties and removes dir (processes back into parent), retrying while processes fork. */
static bool remove_run_cgroup(const char *dir, const char *parent)
{
	for (int i = 0; i < 100; i++) {
		evacuate(dir, parent);
		if (rmdir(dir) == 0 || errno == ENOENT)
			return true;
		if (errno != EBUSY)
			return false;
		usleep(1000);
	}
	return false;
}

/* A process that is running (a zombie has finished: its parent has not reaped it yet). */
static bool running(long pid)
{
	char path[64], buf[256];
	const char *close_paren;
	FILE *f;
	bool zombie = false;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')))
			zombie = close_paren[1] == ' ' && close_paren[2] == 'Z';
		fclose(f);
	}
	return !zombie;
}

/*
 * Removes the run cgroups of benchgate processes that are gone, when they
 * are empty: processes still in one are left alone (a pid that is gone here
 * may be a live benchgate in another pid namespace sharing the folder), and
 * a later session removes it once they have exited.
 */
static void remove_stale(struct bg_cgroup *cg)
{
	DIR *d = opendir(cg->parent);
	struct dirent *e;
	char path[4200];

	if (!d)
		return;
	while ((e = readdir(d))) {
		long pid;
		long ord;
		char tail;

		if (sscanf(e->d_name, "benchgate-%ld-%ld%c", &pid, &ord, &tail) != 2 || pid <= 0 ||
		    pid == (long)getpid() || running(pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cg->parent, e->d_name);
		rmdir(path); /* fails (EBUSY) while processes are in it */
	}
	closedir(d);
}

/*
 * The memory limit that applies to benchgate's cgroup (hierarchical), or 0
 * for none, read once per session. Each run's cgroup gets it, so that a
 * program sizing itself by its cgroup's limit (a JVM, say) sees the limit
 * it would have seen without the run cgroup; the hierarchy enforces the
 * parent's limit either way.
 */
static unsigned long long parent_limit(const char *parent)
{
	char path[4200], line[256];
	unsigned long long limit = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", parent);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "hierarchical_memory_limit %llu", &limit) == 1)
			break;
	fclose(f);
	return limit >= (1ULL << 62) ? 0 : limit; /* none: the kernel shows PAGE_COUNTER_MAX pages */
}

void bg_cgroup_init(struct bg_cgroup *cg)
{
	char mnt[1024], root[1024], path[2048];
	size_t rl;
	bool v2;

	memset(cg, 0, sizeof(*cg));
	if (getenv("BENCHGATE_NO_CGROUP")) {
		note(cg, "BENCHGATE_NO_CGROUP is set", NULL, 0);
		return;
	}
	if (!v1_path(path, sizeof(path), &v2)) {
		note(cg, v2 ? "cgroup v2 only: a run cgroup with the memory controller would need benchgate's "
			      "own cgroup to have none of its processes (the no-internal-process rule)"
			    : "no cgroup memory controller for this process",
		     NULL, 0);
		return;
	}
	if (!v1_mount(mnt, sizeof(mnt), root, sizeof(root))) {
		note(cg, "the cgroup v1 memory hierarchy is not mounted here", NULL, 0);
		return;
	}
	/* the path is relative to the hierarchy; the mount may show a sub-tree of it */
	rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (rl && strncmp(path, root, rl) != 0) {
		note(cg, "benchgate's memory cgroup '%.300s' is outside the mounted hierarchy", path, 0);
		return;
	}
	cg->parent = bg_xmalloc(strlen(mnt) + strlen(path + rl) + 2);
	sprintf(cg->parent, "%s%s", mnt, strcmp(path + rl, "/") == 0 ? "" : path + rl);
	remove_stale(cg);
	cg->limit = parent_limit(cg->parent);
	snprintf(cg->note, sizeof(cg->note),
		 "cgroup_peak_bytes: " PEAK_FILE " of a cgroup v1 memory cgroup of each run's own (anonymous "
		 "memory, page cache and kernel memory charged to the run; exact, not sampled); "
		 "tree_peak_bytes is sampled");
}

/* Gives the run's cgroup the session's limit (best effort, as said above). */
static void inherit_limit(const struct bg_cgroup *cg)
{
	char path[4200], text[32];
	int fd, n;

	if (!cg->limit)
		return;
	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", cg->run);
	n = snprintf(text, sizeof(text), "%llu", cg->limit);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, text, (size_t)n) != n) {
			/* the run cgroup keeps no limit of its own; the parent's still applies */
		}
		close(fd);
	}
}

/* No run cgroups for the rest of the session (the note says why). */
static void give_up(struct bg_cgroup *cg)
{
	free(cg->parent);
	cg->parent = NULL;
	cg->run[0] = '\0';
}

const char *bg_cgroup_run_begin(struct bg_cgroup *cg, long ordinal)
{
	char peak[4200];

	cg->run[0] = '\0';
	if (!cg->parent)
		return NULL;
	snprintf(cg->run, sizeof(cg->run), "%s/benchgate-%ld-%ld", cg->parent, (long)getpid(), ordinal);
	if (mkdir(cg->run, 0755) != 0 && !(errno == EEXIST && remove_run_cgroup(cg->run, cg->parent) &&
					    mkdir(cg->run, 0755) == 0)) {
		int e = errno;

		note(cg, "cannot create a cgroup under '%.300s'", cg->parent, e);
		give_up(cg);
		return NULL;
	}
	snprintf(peak, sizeof(peak), "%s/" PEAK_FILE, cg->run);
	if (!cg->checked && access(peak, R_OK) != 0) {
		note(cg, "a new cgroup under '%.300s' has no " PEAK_FILE, cg->parent, 0);
		rmdir(cg->run);
		give_up(cg);
		return NULL;
	}
	cg->checked = true;
	inherit_limit(cg);
	cg->ordinal = ordinal;
	snprintf(cg->procs, sizeof(cg->procs), "%s/cgroup.procs", cg->run);
	return cg->procs;
}

/* Whether the kernel's OOM killer killed a process of the cgroup at dir:
 * "oom_kill N" of its memory.oom_control (Linux 4.13 and later) above 0. */
static bool oom_killed(const char *dir)
{
	char path[4200], buf[256], *at;
	unsigned long long n = 0;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/memory.oom_control", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return false;
	buf[got] = '\0';
	return (at = strstr(buf, "oom_kill ")) && sscanf(at + 9, "%llu", &n) == 1 && n > 0;
}

bool bg_cgroup_run_end(struct bg_cgroup *cg, int join_errno, uint64_t *peak, bool *oom)
{
	char path[4200], buf[64];
	bool have = false;
	int fd;

	*peak = 0;
	if (oom)
		*oom = false;
	if (!cg->run[0])
		return false;
	if (oom && join_errno == 0)
		*oom = oom_killed(cg->run);
	if (join_errno > 0)
		snprintf(cg->note, sizeof(cg->note),
			 "run %ld could not join its cgroup ('%.400s': %.100s); its cgroup_peak_bytes is null",
			 cg->ordinal, cg->procs, strerror(join_errno));
	snprintf(path, sizeof(path), "%s/" PEAK_FILE, cg->run);
	if (join_errno == 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			have = sscanf(buf, "%" SCNu64, peak) == 1;
		}
		close(fd);
	}
	/* an empty cgroup (the usual case) goes at once; else its processes move first */
	if (rmdir(cg->run) != 0 && errno != ENOENT && !remove_run_cgroup(cg->run, cg->parent)) {
		int e = errno;

		note(cg, "cannot remove the run cgroup '%.300s'", cg->run, e);
		give_up(cg);
	}
	cg->run[0] = '\0';
	return have;
}

void bg_cgroup_skip_short(struct bg_cgroup *cg, int64_t smoke_wall_ns)
{
	if (!cg->parent || smoke_wall_ns >= BG_CGROUP_MIN_RUN_NS)
		return;
	snprintf(cg->note, sizeof(cg->note),
		 "cgroup_peak_bytes: of the smoke run only, which took %.3g ms: no run cgroup is made for "
		 "runs under %d ms (making and removing one costs a few tenths of a millisecond a run, and the "
		 "kernel charges memory to a cgroup in batches of 64 pages a CPU, about what such runs use); "
		 "tree_peak_bytes is sampled",
		 (double)smoke_wall_ns / 1e6, (int)(BG_CGROUP_MIN_RUN_NS / 1000000));
	give_up(cg);
}

void bg_cgroup_release(struct bg_cgroup *cg)
{
	if (cg->run[0] && cg->parent)
		remove_run_cgroup(cg->run, cg->parent);
	free(cg->parent);
	cg->parent = NULL;
	cg->run[0] = '\0';
}
