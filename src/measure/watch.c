/*
 * watch.c - the watcher thread: every interval it sums the RSS of the live
 * process tree of the current run and, with NVML, the GPU memory of those
 * pids. The tree is the run's child, its descendants, and orphans adopted
 * by benchgate (a child subreaper) that are still in the run's process
 * group. The kernel here may lack /proc/PID/task/TID/children, so the tree
 * is found by scanning /proc; the parent of a pid is cached between scans
 * (re-read for tree members, whose parent can change by adoption).
 * Processes sharing one address space (kcmp KCMP_VM) are counted once.
 * While /proc/sys/kernel/ns_last_pid still names the run's child, nothing
 * has forked since the spawn and the scan is skipped.
 */
#include "measure/internal.h"
#include "benchgate/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

struct proc_ent {
	pid_t pid, ppid, pgid;
	bool member;
	bool zombie; /* exited, not reaped: holds no memory */
};

struct bg_watch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	long interval_ms;
	bool quit, active;
	unsigned gen;
	pid_t pid;
	struct bg_watch_result res;
	struct bg_nvml *nvml;
	/* owned by the thread */
	DIR *proc; /* /proc, kept open between scans */
	int lastpid_fd; /* /proc/sys/kernel/ns_last_pid, or -1 */
	bool wrapped;   /* pids wrapped during run wrapped_gen (owned by the thread) */
	unsigned wrapped_gen;
	struct proc_ent *cache;
	size_t ncache;
};

static int cmp_ent(const void *a, const void *b)
{
	pid_t x = ((const struct proc_ent *)a)->pid, y = ((const struct proc_ent *)b)->pid;

	return (x > y) - (x < y);
}

/*
 * Reads state, ppid and pgid from /proc/PID/stat, and with start the start
 * time (clock ticks after boot); false when the process is gone.
 */
static bool read_stat(pid_t pid, pid_t *ppid, pid_t *pgid, bool *zombie, unsigned long long *start)
{
	char state;
	char buf[1024];
	const char *p = bg_proc_stat_tail(pid, buf, sizeof(buf));
	int pp, pg;

	if (!p || sscanf(p, "%c %d %d", &state, &pp, &pg) != 3)
		return false;
	/* after pgrp: session, tty_nr, tpgid, flags, 6 fault and time counts, 6 more, then starttime */
	if (start && sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			    start) != 1)
		return false;
	*zombie = state == 'Z' || state == 'X';
	*ppid = pp;
	*pgid = pg;
	return true;
}

static uint64_t read_rss(pid_t pid)
{
	char path[64], buf[256];
	int fd;
	ssize_t n;
	unsigned long long size, resident;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
		return 0;
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Makes the descendants of the members of v[0..n) (sorted by pid) members too; self never. */
static void add_descendants(struct proc_ent *v, size_t n, pid_t self)
{
	bool changed;

	do {
		changed = false;
		for (size_t i = 0; i < n; i++) {
			struct proc_ent key, *par;

			if (v[i].member || v[i].pid == self)
				continue;
			key.pid = v[i].ppid;
			par = bsearch(&key, v, n, sizeof(key), cmp_ent);
			if (par && par->member)
				v[i].member = changed = true;
		}
	} while (changed);
}

/*
 * Rescans /proc into *cache (sorted by pid), marking the members of root's
 * tree. old entries are reused for non-members (their parent cannot become
 * a tree member later).
 */
static size_t scan_tree(DIR *dir, struct proc_ent **cache, size_t *ncache, pid_t root,
			pid_t min_pid)
{
	DIR *d = dir ? dir : opendir("/proc");
	struct dirent *de;
	struct proc_ent *next = NULL;
	size_t n = 0, cap = 0, members = 0;
	pid_t self = getpid();

	if (!d)
		return 0;
	if (dir)
		rewinddir(d);
	while ((de = readdir(d))) {
		struct proc_ent key, *old;
		char *end;
		long v;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		v = strtol(de->d_name, &end, 10);
		if (*end)
			continue;
		key.pid = (pid_t)v;
		if (key.pid < min_pid)
			continue; /* older than the root: cannot descend from it */
		old = *ncache ? bsearch(&key, *cache, *ncache, sizeof(key), cmp_ent) : NULL;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			next = bg_xrealloc(next, cap * sizeof(*next));
		}
		/* parents of non-members never matter again; the root's stays benchgate */
		if (old && (!old->member || key.pid == root)) {
			next[n] = *old;
		} else {
			next[n].pid = key.pid;
			if (!read_stat(key.pid, &next[n].ppid, &next[n].pgid, &next[n].zombie, NULL))
				continue;
		}
		next[n].member = false;
		n++;
	}
	if (!dir)
		closedir(d);
	if (n) /* none at or above min_pid (the run is gone): next may be NULL */
		qsort(next, n, sizeof(*next), cmp_ent);
	/* members: root, orphans of root's group adopted by us, and their descendants */
	for (size_t i = 0; i < n; i++)
		next[i].member = next[i].pid != self &&
				 (next[i].pid == root || (next[i].ppid == self && next[i].pgid == root));
	add_descendants(next, n, self);
	for (size_t i = 0; i < n; i++)
		members += next[i].member;
	free(*cache);
	*cache = next;
	*ncache = n;
	return members;
}

size_t bg_proc_tree(pid_t root, pid_t **pids)
{
	return bg_proc_tree_above(root, 0, pids);
}

size_t bg_proc_tree_above(pid_t root, pid_t min_pid, pid_t **pids)
{
	struct proc_ent *cache = NULL;
	size_t ncache = 0, k = 0, m = scan_tree(NULL, &cache, &ncache, root, min_pid);

	*pids = bg_xmalloc((m ? m : 1) * sizeof(pid_t));
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].member)
			(*pids)[k++] = cache[i].pid;
	free(cache);
	return k;
}

size_t bg_proc_tree_live(pid_t root)
{
	struct proc_ent *cache = NULL;
	size_t ncache = 0, live = 0;

	scan_tree(NULL, &cache, &ncache, root, 0);
	for (size_t i = 0; i < ncache; i++)
		live += cache[i].member && !cache[i].zombie;
	free(cache);
	return live;
}

/* The GPU part of a sample: what NVML could tell (bg_nvml_sample). */
static void gpu_sample(struct bg_watch *w, const pid_t *pids, size_t np, struct bg_watch_result *s)
{
	unsigned got = bg_nvml_sample(w->nvml, pids, np, &s->gpu_proc_peak, &s->gpu_device_peak, &s->gpu_slowdown,
				      s->gpu_others, &s->ngpu_others);

	s->gpu_samples = (got & BG_NVML_DEVICE) != 0;
	s->gpu_proc_samples = (got & BG_NVML_PROCESS) != 0;
}

bool bg_proc_alive(pid_t pid)
{
	pid_t ppid, pgid;
	bool zombie;

	return read_stat(pid, &ppid, &pgid, &zombie, NULL) && !zombie;
}

bool bg_proc_start(pid_t pid, unsigned long long *start)
{
	pid_t ppid, pgid;
	bool zombie;

	return read_stat(pid, &ppid, &pgid, &zombie, start);
}

size_t bg_proc_escaped(pid_t root, unsigned long long min_start, bool kill_them)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct proc_ent *v = NULL;
	size_t n = 0, cap = 0, live = 0;
	pid_t self = getpid();

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned long long start;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		/* a descendant of the run was made after it: a higher pid, while pids have not wrapped */
		if (*end || pid <= (long)root)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = bg_xrealloc(v, cap * sizeof(*v));
		}
		v[n].pid = (pid_t)pid;
		if (!read_stat(v[n].pid, &v[n].ppid, &v[n].pgid, &v[n].zombie, &start))
			continue;
		v[n].member = v[n].ppid == self && v[n].pgid != root && start >= min_start;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_ent);
	add_descendants(v, n, self);
	for (size_t i = 0; i < n; i++)
		if (v[i].member && !v[i].zombie && !(kill_them && kill(v[i].pid, SIGKILL) == 0))
			live++;
	free(v);
	return live;
}

static void take_sample(struct bg_watch *w, pid_t root, unsigned gen,
			struct bg_watch_result *s)
{
	uint64_t rss = 0;
	long last = -1; /* ns_last_pid, or -1 when unknown */
	pid_t pids[512];
	size_t np = 0;

	memset(s, 0, sizeof(*s));
	/*
	 * Shortcut: while the last pid the kernel handed out is still the run's
	 * own, nothing has forked since the spawn and the tree is the root
	 * alone; no /proc scan is needed.
	 */
	if (w->lastpid_fd >= 0) {
		char buf[32];
		ssize_t n = pread(w->lastpid_fd, buf, sizeof(buf) - 1, 0);

		if (n > 0) {
			buf[n] = '\0';
			last = atol(buf);
			if (last == (long)root) {
				rss = read_rss(root);
				if (rss == 0)
					return;
				s->samples = 1;
				s->tree_peak = rss;
				if (w->nvml)
					gpu_sample(w, &root, 1, s);
				return;
			}
		}
	}
	if (!w->proc)
		w->proc = opendir("/proc");
	/*
	 * Without a pid wrap since the spawn, descendants all have pids above the
	 * root's. A wrap is seen as ns_last_pid below the root (a full wrap needs
	 * pid_max forks within one tick) and sticks for the rest of the run.
	 */
	if (w->wrapped_gen != gen) {
		w->wrapped_gen = gen;
		w->wrapped = false;
	}
	if (last < (long)root)
		w->wrapped = true;
	scan_tree(w->proc, &w->cache, &w->ncache, root, w->wrapped ? 0 : root);
	for (size_t i = 0; i < w->ncache && np < 512; i++) {
		pid_t pid = w->cache[i].pid;
		bool shared = false;
		uint64_t r;

		if (!w->cache[i].member || w->cache[i].zombie)
			continue;
		/* no resident page: gone, a zombie, or between two address spaces in exec */
		r = read_rss(pid);
		if (r == 0)
			continue;
		/* processes sharing one address space (vfork, clone(CLONE_VM)) count once */
		for (size_t k = 0; k < np && k < 64 && !shared; k++)
			shared = syscall(SYS_kcmp, pid, pids[k], KCMP_VM, 0, 0) == 0;
		pids[np++] = pid;
		if (!shared)
			rss += r;
	}
	if (np == 0)
		return; /* the tree is gone: no sample */
	s->samples = 1;
	s->tree_peak = rss;
	if (w->nvml)
		gpu_sample(w, pids, np, s);
}

/*
 * The thread ticks every interval whether or not a run is live, so that
 * starting and ending a run never wakes it (a short run costs nothing);
 * a run is sampled on each tick while it is live.
 */
static void *watch_main(void *arg)
{
	struct bg_watch *w = arg;
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		until.tv_nsec += (w->interval_ms % 1000) * 1000000L;
		until.tv_sec += w->interval_ms / 1000 + until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!w->quit && pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT)
			;
		if (w->quit)
			break;
		if (w->active) {
			struct bg_watch_result s;
			unsigned gen = w->gen;
			pid_t pid = w->pid;

			pthread_mutex_unlock(&w->mu);
			take_sample(w, pid, gen, &s);
			pthread_mutex_lock(&w->mu);
			if (w->active && w->gen == gen && s.samples) {
				w->res.samples++;
				if (s.tree_peak > w->res.tree_peak)
					w->res.tree_peak = s.tree_peak;
				w->res.gpu_slowdown |= s.gpu_slowdown;
				for (size_t k = 0; k < s.ngpu_others; k++) {
					size_t j = 0;
					while (j < w->res.ngpu_others && w->res.gpu_others[j] != s.gpu_others[k])
						j++;
					if (j == w->res.ngpu_others && j < BG_GPU_OTHERS_MAX)
						w->res.gpu_others[w->res.ngpu_others++] = s.gpu_others[k];
				}
				if (s.gpu_samples) {
					w->res.gpu_samples++;
					if (s.gpu_device_peak > w->res.gpu_device_peak)
						w->res.gpu_device_peak = s.gpu_device_peak;
				}
				if (s.gpu_proc_samples) {
					w->res.gpu_proc_samples++;
					if (s.gpu_proc_peak > w->res.gpu_proc_peak)
						w->res.gpu_proc_peak = s.gpu_proc_peak;
				}
			}
		}
		/* after a slow sample (or a suspended machine) tick from now, without catching up */
		{
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > until.tv_sec ||
			    (now.tv_sec == until.tv_sec && now.tv_nsec > until.tv_nsec))
				until = now;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int bg_watch_start(struct bg_watch **out, long interval_ms, struct bg_nvml *nvml,
		   struct bg_ctx *ctx)
{
	struct bg_watch *w = bg_xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;
	sigset_t all, old;
	int e;

	w->interval_ms = interval_ms > 0 ? interval_ms : 5;
	w->lastpid_fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
	w->nvml = nvml;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* the thread blocks every signal, so that SIGINT interrupts the waiting main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(&w->thread, NULL, watch_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		if (w->lastpid_fd >= 0)
			close(w->lastpid_fd);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return bg_error(ctx, BG_EIO, "cannot start the memory watcher thread: %s",
				strerror(e));
	}
	*out = w;
	return BG_OK;
}

void bg_watch_begin(struct bg_watch *w, pid_t pid)
{
	pthread_mutex_lock(&w->mu);
	w->gen++;
	w->pid = pid;
	w->active = true;
	memset(&w->res, 0, sizeof(w->res));
	pthread_mutex_unlock(&w->mu);
}

void bg_watch_end(struct bg_watch *w, struct bg_watch_result *res)
{
	pthread_mutex_lock(&w->mu);
	w->active = false;
	*res = w->res;
	pthread_mutex_unlock(&w->mu);
}

void bg_watch_stop(struct bg_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	if (w->proc)
		closedir(w->proc);
	if (w->lastpid_fd >= 0)
		close(w->lastpid_fd);
	free(w->cache);
	free(w);
}
