/*
 * internal.h - the measurement engine's private modules (not installed).
 *
 *   watch.c    sampling thread: RSS of a run's live process tree, GPU memory
 *   spawn.c    spawning and reaping one run or one shell command
 *   cache.c    page-cache eviction and residency (fadvise, mincore)
 *   sysinfo.c  swap, memory pressure, timestamps
 *   nvml.c     NVIDIA management library through dlopen, optional
 *   cgroup.c   a memory cgroup of each run's own (cgroup v1), optional
 *   stale.c    declared outputs that a run did not write
 *   outputs.c  a run's outputs: found, hashed, compared, checked for parity
 */
#ifndef BENCHGATE_MEASURE_INTERNAL_H
#define BENCHGATE_MEASURE_INTERNAL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "benchgate/npy.h"
#include "benchgate/status.h"

/* ---- stale.c ---- */
struct bg_stale_file;
struct bg_stale { /* zero-initialised; bg_stale_release frees it */
	struct bg_stale_file *files;
	size_t n, cap;
};
/* Just before a run: gives each regular file matching patterns[0..n) a
 * sentinel modification time (after putting back any earlier marks). */
void bg_stale_mark(struct bg_stale *s, const char *const *patterns, size_t n);
/* After the run: path was marked and still carries the sentinel (the same
 * file, not written by the run). */
bool bg_stale_unwritten(const struct bg_stale *s, const char *path);
/* Puts back the own modification time of every marked file the run did not
 * write, and forgets the marks. */
void bg_stale_restore(struct bg_stale *s);
void bg_stale_release(struct bg_stale *s);

/* ---- outputs.c ---- */
struct bg_measure_opts;
/* One run's outputs as found, by their real bytes: what parity checks and
 * --deterministic compares (the JSON record holds them as bg_json_text
 * writes them, which is for reading only). */
struct bg_output {
	char *path;   /* owned; as glob(3) returned it */
	char hex[65]; /* SHA-256, "" when the file could not be hashed */
};
struct bg_outputs { /* zero-initialised; bg_outputs_release frees it */
	struct bg_output *v;
	size_t n, cap;
};
void bg_outputs_release(struct bg_outputs *l);
/*
 * Expands patterns[0..npatterns) and hashes every file into *list (empty on
 * entry) and the returned JSON array (a new reference: {"path", "sha256"}
 * each), each path once, where first matched (a pattern listed twice, or
 * patterns that overlap). *err receives the first problem (owned by the
 * caller; NULL when none): a pattern that matches nothing, a file that
 * stale says the run did not write, or one that cannot be hashed.
 */
json_t *bg_outputs_hash(const char *const *patterns, size_t npatterns, const struct bg_stale *stale,
			struct bg_outputs *list, char **err);
/* Whether a (a run's outputs) and b (the smoke run's) name the same files
 * (by their bytes) with the same digests; when not, appends the first
 * difference to why: a file whose digest differs, one that only a has, or
 * one that only b has. */
struct bg_strbuf;
bool bg_outputs_same(const struct bg_outputs *a, const struct bg_outputs *b, struct bg_strbuf *why);
/* The reference of --parity allclose, read once before the smoke run
 * (bg_parity_ref_open); zero-initialised, released with
 * bg_parity_ref_release. */
struct bg_parity_ref {
	struct bg_npy npy;
	bool loaded;
	char sha256[65]; /* of its bytes when read */
	struct stat st;  /* the file then: a change shows in it */
};
/*
 * Reads and hashes o's allclose reference (after the setup, before any
 * run, so that no run can write what its outputs are compared with); BG_OK,
 * or BG_ECHECK with why it cannot be (the session is blocked: parity
 * cannot be proven).
 */
int bg_parity_ref_open(const struct bg_measure_opts *o, struct bg_parity_ref *ref, struct bg_ctx *ctx);
void bg_parity_ref_release(struct bg_parity_ref *ref);
/*
 * The parity object of a run's outputs under o's parity (a new reference):
 * "result" ("pass" or "fail"), "detail" (why it failed, or null) and the
 * kind's figures. out_err (the outputs' problem, or NULL) fails it.
 */
json_t *bg_parity_check(const struct bg_measure_opts *o, const struct bg_outputs *outputs, const char *out_err,
			struct bg_parity_ref *ref);

/* ---- nvml.c ---- */
struct bg_nvml;
/*
 * Loads and starts NVML: *out NULL when libnvidia-ml.so.1 is absent or does
 * not initialise (a machine without an NVIDIA GPU). BG_EIO, *out NULL,
 * when it could not be loaded or started for want of file descriptors
 * (EMFILE, ENFILE), the message saying the limit and what to do: such a
 * machine may have a GPU, and a session must not record it as one without.
 */
int bg_nvml_load(struct bg_nvml **out, struct bg_ctx *ctx);
void bg_nvml_close(struct bg_nvml *n);
/* Per-device facts as a JSON array (name, uuid, memory_total_bytes and the
 * settings of device_settings in nvml.c) plus versions; new reference. */
json_t *bg_nvml_describe(struct bg_nvml *n);
/* What a sample holds: BG_NVML_DEVICE when device_bytes is the used memory
 * of the devices that answered, BG_NVML_PROCESS when proc_bytes is known:
 * every device listed its processes and the memory of each of pids[0..npids)
 * (0 is then measured: the tree held no GPU memory). *slowdown receives
 * the reasons NVML gives now for clocks below what the device allows
 * (its "clocks event reasons"), those of BG_GPU_SLOWDOWN_MASK, of the
 * devices that run one of pids, or of every device when that cannot be
 * told; 0 where NVML cannot say. others[0..*nothers) receives up to
 * BG_GPU_OTHERS_MAX processes outside pids that NVML lists on a device one
 * of pids uses (another user's job sharing the GPU), none where that
 * cannot be told. */
enum { BG_NVML_DEVICE = 1u, BG_NVML_PROCESS = 2u };
#define BG_GPU_OTHERS_MAX 4
unsigned bg_nvml_sample(struct bg_nvml *n, const pid_t *pids, size_t npids, uint64_t *proc_bytes,
			uint64_t *device_bytes, uint64_t *slowdown, pid_t *others, size_t *nothers);
/*
 * The reasons that slow a device down, NVML's bits: software power cap
 * (0x4), hardware slowdown (0x8: thermal or power brake), software thermal
 * slowdown (0x20), hardware thermal slowdown (0x40), power brake (0x80).
 * Not among them: idle (0x1), the applications clocks setting (0x2), sync
 * boost (0x10) and the display clock (0x100), which a busy device at its
 * configured clocks also shows. bg_gpu_slowdown_names[bit] names each of
 * them (NULL for the others).
 */
#define BG_GPU_SLOWDOWN_MASK 0xecull
#define BG_GPU_SLOWDOWN_BITS 8
extern const char *const bg_gpu_slowdown_names[BG_GPU_SLOWDOWN_BITS];

/* ---- watch.c ---- */
struct bg_watch;
struct bg_watch_result {
	long samples;            /* samples taken while the run was live */
	uint64_t tree_peak;      /* max over samples of the summed RSS, bytes */
	long gpu_samples;        /* samples where NVML gave the devices' used memory */
	long gpu_proc_samples;   /* samples where it gave the tree's processes' memory too */
	uint64_t gpu_proc_peak;  /* max summed per-process GPU memory of the tree (those samples) */
	uint64_t gpu_device_peak; /* max total used GPU memory */
	uint64_t gpu_slowdown;   /* the slowdown reasons any sample saw (bg_nvml_sample) */
	pid_t gpu_others[BG_GPU_OTHERS_MAX]; /* other processes any sample saw on the tree's devices */
	size_t ngpu_others;
};
/* Starts the thread; nvml may be NULL. BG_EIO when the thread cannot start. */
int bg_watch_start(struct bg_watch **out, long interval_ms, struct bg_nvml *nvml,
		   struct bg_ctx *ctx);
/* Starts watching the tree rooted at pid (also orphans left in its process group). */
void bg_watch_begin(struct bg_watch *w, pid_t pid);
/* Stops watching and returns what was seen since bg_watch_begin. */
void bg_watch_end(struct bg_watch *w, struct bg_watch_result *res);
void bg_watch_stop(struct bg_watch *w);
/* Pids of the live tree of root (root first); caller frees. */
size_t bg_proc_tree(pid_t root, pid_t **pids);
/* The same among the processes whose pid is at least min_pid (as the
 * watcher scans while pids have not wrapped); none may qualify. */
size_t bg_proc_tree_above(pid_t root, pid_t min_pid, pid_t **pids);
/* How many processes of that tree are alive (zombies left out). */
size_t bg_proc_tree_live(pid_t root);
/* Whether pid is a process that runs (not gone, not a zombie). */
bool bg_proc_alive(pid_t pid);
/* pid's start time in clock ticks after boot (/proc/PID/stat); false when it is gone. */
bool bg_proc_start(pid_t pid, unsigned long long *start);
/*
 * How many live processes escaped root's process group: adopted by this
 * process (a subreaper) outside root's group, started at or after
 * min_start (root's start time) with a pid above root's, and their
 * descendants. What a run left running after it called setsid (or
 * setpgid) where no run cgroup holds its processes; a descendant made
 * after the pids wrapped is not seen. With kill_them, each is sent SIGKILL
 * first and only those that could not be signalled are counted (the
 * killed ones are left as zombies for bg_spawn_reap_orphans).
 */
size_t bg_proc_escaped(pid_t root, unsigned long long min_start, bool kill_them);

/* ---- cgroup.c ---- */
/*
 * The session's view of memory cgroups: where run cgroups are made
 * (parent, NULL when they cannot be) and the memory_source_note that says
 * what cgroup_peak_bytes is, or why it is null. Owns parent.
 */
struct bg_cgroup {
	char *parent;     /* benchgate's own v1 memory cgroup folder, or NULL */
	char run[4096];   /* the current run's cgroup folder, "" when none */
	char procs[4200]; /* run + "/cgroup.procs" */
	long ordinal;     /* the current run's */
	unsigned long long limit; /* benchgate's memory limit, given to each run cgroup; 0 for none */
	bool checked;     /* a run cgroup was seen to have the peak file */
	char note[1024];
};
/* Finds benchgate's v1 memory cgroup and removes run cgroups left by dead benchgates; never fails. */
void bg_cgroup_init(struct bg_cgroup *cg);
/*
 * Makes the cgroup of run ordinal and returns the cgroup.procs path the
 * child writes itself into (struct bg_spawn_prog.cgroup_procs), or NULL
 * when there is none (the note says why; later runs do not try again).
 */
const char *bg_cgroup_run_begin(struct bg_cgroup *cg, long ordinal);
/*
 * After the run: true with *peak the cgroup's peak in bytes when the child
 * joined it (join_errno 0); an errno > 0 (why it did not) goes into the
 * note, -1 means the run did not start. *oom (may be NULL): whether the
 * kernel's OOM killer killed a process of it (its memory limit reached).
 * Moves what is still running back to benchgate's cgroup and removes the
 * run's cgroup either way.
 */
bool bg_cgroup_run_end(struct bg_cgroup *cg, int join_errno, uint64_t *peak, bool *oom);
/*
 * After the smoke run: when it took less than BG_CGROUP_MIN_RUN_NS, the
 * later runs get no cgroup (the note says why: its cost against such a
 * run, and the kernel's charge batching of 64 pages a CPU at that scale).
 */
#define BG_CGROUP_MIN_RUN_NS 20000000LL
void bg_cgroup_skip_short(struct bg_cgroup *cg, int64_t smoke_wall_ns);
/* Removes a run cgroup still present and frees parent. */
void bg_cgroup_release(struct bg_cgroup *cg);

/* ---- spawn.c ---- */
/* How long a run's leftover processes may take to end (or to close its
 * captured output) before they count as left running. */
#define BG_LEFTOVER_GRACE_MS 100
struct bg_spawn_result {
	int64_t wall_ns;
	int64_t user_ns, sys_ns;
	int64_t maxrss_bytes;
	int64_t maxrss_floor_bytes; /* benchgate's own peak RSS at spawn: maxrss_bytes is never below it */
	bool exited;     /* exit_status valid */
	int exit_status;
	int term_signal; /* 0 unless killed by a signal */
	bool timed_out;
	bool interrupted;
	double start_realtime; /* seconds since the epoch */
	int cgroup_errno;      /* 0 when the child joined prog->cgroup_procs before exec, else why not */
	pid_t pid;             /* the run's child (reaped), also its process group */
	/* killed (timeout, interrupt) without a run cgroup: processes that had
	 * left its process group and could not be killed too (bg_proc_escaped);
	 * with one, every process of the cgroup is killed and this is 0 */
	size_t escaped;
	/* a signal stopped it (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), not a
	 * suspension of the session: it was killed then; 0 otherwise */
	int stop_signal;
	/* the session was suspended (bg_measure_suspend) while it ran: its wall
	 * time holds the time it was stopped */
	bool suspended;
	/* how long the machine slept (suspend to RAM or disk) while it ran:
	 * the boot clock's advance beyond the monotonic clock's, which stops
	 * during a system sleep; 0 below BG_SLEPT_MIN_NS */
	int64_t slept_ns;
	/* CLOCK_REALTIME as the run's own process was reaped: a file's time
	 * later than it was written after the run's own process ended (a file
	 * time is never later than its write, coarse or fine) */
	struct timespec ended_at;
};
#define BG_SLEPT_MIN_NS 100000000LL /* 0.1 s: far above either clock's resolution */
/*
 * What a session spawns, prepared once: argv, the program found on PATH
 * (as execvp would find it, without its fallback to /bin/sh), and the
 * signals whose dispositions the child resets before exec (those caught by
 * this process when the session began, and the usual job-control ones).
 * bg_spawn_prog_init never fails and does not look on PATH yet;
 * bg_spawn_prog_find looks (again) now, so that a session can look after
 * its setup and before its first run; it returns the path found or NULL.
 * A program that cannot be found (or was not looked for) is reported by
 * each bg_spawn_run as "cannot start". argv is borrowed.
 */
struct bg_spawn_prog {
	char *const *argv;
	char *const *envp; /* the environment of each run; NULL: this process's */
	char *path; /* owned; NULL when not found */
	int find_errno;
	sigset_t reset;
	/* set per run: the child writes itself into this cgroup.procs before exec
	 * (the time that takes is not part of wall_ns); NULL: it stays where it is */
	const char *cgroup_procs;
};
void bg_spawn_prog_init(struct bg_spawn_prog *prog, char *const *argv);
const char *bg_spawn_prog_find(struct bg_spawn_prog *prog);
void bg_spawn_prog_release(struct bg_spawn_prog *prog);
/*
 * Spawns prog in a new process group (never the terminal's foreground
 * group) with stdin and stdout on /dev/null, watches it with w (may be
 * NULL), waits for it and fills
 * res. Its tree (the whole group, its descendants, and every process of
 * its run cgroup when it joined one) is killed after timeout seconds (0 =
 * never), when *interrupted is set, or when its process stops. BG_EIO "'ARGV0': cannot start: REASON" when it cannot
 * be started.
 */
int bg_spawn_run(const struct bg_spawn_prog *prog, double timeout,
		 volatile sig_atomic_t *interrupted, struct bg_watch *w, struct bg_spawn_result *res,
		 struct bg_ctx *ctx);
/*
 * The same, with stdout and stderr each a pipe that benchgate drains while
 * it waits into capture_prefix.stdout and capture_prefix.stderr (created
 * or truncated) instead of /dev/null and the terminal, keeping the first
 * cap bytes of each (cap <= 0: all) and discarding the rest, so that a
 * file never holds more; after the run a truncation marker line is
 * appended. capture_prefix NULL behaves as bg_spawn_run.
 */
int bg_spawn_run_captured(const struct bg_spawn_prog *prog, double timeout,
			  volatile sig_atomic_t *interrupted,
			  struct bg_watch *w, const char *capture_prefix, long long cap,
			  struct bg_spawn_result *res, struct bg_ctx *ctx);
/*
 * What a run left behind once its own process ended: waits, reaping, up to
 * grace_ms for the rest of its tree to end, and returns how many still run
 * then (they are left running); *outlived receives how many still ran at
 * the start (the run's own process had ended before them). Its tree: every
 * process of its run cgroup when cgroup_procs (the cgroup.procs it joined)
 * is not NULL, else the processes still in its process group and their
 * descendants. Returns at once, 0, when the run left nothing.
 */
size_t bg_spawn_leftovers(pid_t pgid, const char *cgroup_procs, long grace_ms, size_t *outlived);
/*
 * Runs /bin/sh -c CMD (with args as "$1"...) as bg_spawn_run runs a
 * program (its own process group, killed when *interrupted
 * is set or it stops) and waits; *status is the exit status, or 128 +
 * signal (the shell's convention, which the stored records keep), and
 * *signal (when not NULL) the signal that killed the shell, else 0: a
 * shell that exits 137 itself is told apart from one killed by SIGKILL.
 * With left (not NULL), *left is how many processes of its process group
 * (and their descendants) still ran BG_LEFTOVER_GRACE_MS after the shell
 * ended (bg_spawn_leftovers; 0 when it was killed). BG_EIO when /bin/sh
 * cannot start.
 */
int bg_spawn_shell(const char *cmd, const char *const *args, size_t nargs,
		   volatile sig_atomic_t *interrupted, int *status, int *signal, size_t *left, struct bg_ctx *ctx);
/* Runs argv in dir capturing stdout into out; *status as above. The
 * environment is this process's, less the names in unset (NULL-terminated,
 * or NULL for none). */
struct bg_strbuf;
int bg_spawn_capture(char *const *argv, const char *dir, const char *const *unset, struct bg_strbuf *out,
		     int *status, struct bg_ctx *ctx);
/* The same with stderr captured into out too. */
int bg_spawn_capture_all(char *const *argv, const char *dir, const char *const *unset, struct bg_strbuf *out,
			 int *status, struct bg_ctx *ctx);
/* Reaps finished children without blocking (orphans adopted as
 * subreaper), never one of the caller's children when the session began. */
void bg_spawn_reap_orphans(void);
/* A session's beginning: notes the caller's children (which
 * bg_spawn_reap_orphans leaves alone) and makes this process a subreaper,
 * so that the orphans of a run stay visible and killable. */
void bg_spawn_adopt_begin(void);
/* A session's end: the subreaper setting the caller had, back. */
void bg_spawn_adopt_end(void);

/* ---- cache.c ---- */
/* Writes back and drops the cached pages of the file, or of every file under
 * the folder (bg_tree_files), then measures residency. */
int bg_cache_evict(const char *path, double *resident_fraction, struct bg_ctx *ctx);
/* Fraction of the pages of the file (or of the folder's files) resident in
 * the page cache (mincore); 0 for no page at all. */
int bg_cache_resident(const char *path, double *resident_fraction, struct bg_ctx *ctx);
/* The processes (other than this one) that map the regular file at path,
 * or, for a folder, the first of its files (bg_tree_files) that some map,
 * appended to out as "PID (NAME)", the first three and "and N more"; how
 * many. *file gets the file they map (path itself for a file, or when none
 * is found). Those of other users are not seen unless this process may
 * read their /proc/PID/maps. 0 for what cannot be examined. */
size_t bg_cache_mappers(const char *path, struct bg_strbuf *out, struct bg_strbuf *file);
/*
 * The network, cluster or user-space file system path lies on ("nfs",
 * "cifs", "lustre", "gpfs", "ceph", "9p", "fuse", ...; a static string),
 * or NULL for a local one (or one statfs cannot read): there, evicting a
 * file drops this machine's copy of its pages only, and a server's cache
 * (or a FUSE daemon's) may still hold them. For a local folder, the file
 * system of the first of its files (bg_tree_files' order) that lies on
 * such a one, a mount inside the folder. *where receives the path found
 * remote (path itself, or that file's path under it), else path.
 */
const char *bg_cache_remote_fs(const char *path, struct bg_strbuf *where);

/* ---- sysinfo.c ---- */
/* The machine's CPU time so far over all CPUs, from /proc/stat, in seconds:
 * busy (user, nice, system, irq, softirq) and steal (taken by a
 * hypervisor). False when /proc/stat cannot be read. */
bool bg_sys_cpu_times(double *busy, double *steal);
/* The CPU time of this process (all its threads) and of its children it
 * has waited for, in seconds. */
double bg_sys_own_cpu(void);
/* Swap in use in bytes; false when /proc/meminfo lacks it. */
bool bg_sys_swap_used(uint64_t *bytes);
/* The memory the system says is free for new use (MemAvailable), in bytes;
 * false where /proc/meminfo does not say. */
bool bg_sys_memory_available(uint64_t *bytes);
/* An fd on /proc/pressure/memory, or -1 when the kernel lacks PSI; close() it. */
int bg_sys_psi_open(void);
/* PSI memory "some avg10" read through fd (re-read each call); false when unavailable. */
bool bg_sys_psi_memory_some10(int fd, double *avg10);
/* RFC 3339 UTC with microseconds: "2026-01-02T03:04:05.123456Z" into buf[64]. */
void bg_sys_rfc3339(double epoch_seconds, char buf[64]);
double bg_sys_realtime(void);
int64_t bg_sys_monotonic_ns(void);
/* The name of process pid (/proc/PID/comm) into comm, its control bytes
 * as '?'; false (comm "") when it is gone or cannot be read. */
bool bg_proc_comm(pid_t pid, char comm[64]);
/* CLOCK_BOOTTIME: the monotonic clock that also counts a system sleep. */
int64_t bg_sys_boottime_ns(void);

#endif
