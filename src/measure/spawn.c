/*
 * spawn.c - spawning and reaping: one measured run (its own process group,
 * never given the terminal's foreground, wall clock
 * from just before spawn to reaping, wait4 rusage of that child only,
 * whole-tree kill on timeout, interrupt or a stop, its output drained from
 * pipes), the untimed shell commands around it, and commands whose stdout
 * is read (posix_spawn; see internal.h).
 *
 * Runs and shell commands are started by clone(CLONE_VM | CLONE_VFORK) on
 * a stack of our own, as glibc's posix_spawn does, but the child resets
 * only the dispositions in prog->reset (glibc's resets or queries every one
 * of the 64 signals: about 110 rt_sigaction calls per run) and a run's
 * program is found on PATH once per session: a run of /bin/true costs
 * about 5% less.
 * The child calls only async-signal-safe functions and reports a failed
 * step through memory it shares with the parent. A run's child may first
 * join a cgroup of its own (cgroup.c); the time that takes is taken out of
 * the run's wall time. A run never takes the terminal: Ctrl-C, Ctrl-Z and a
 * hangup reach benchgate, which stops, suspends or interrupts the run
 * itself; a run that reads or sets the terminal is stopped by SIGTTIN or
 * SIGTTOU, then killed, and blocks the session (docs/measure.md).
 */
#include "measure/internal.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/measure.h"
#include "benchgate/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000000LL + (int64_t)tv->tv_usec * 1000LL;
}

/* The job-control and termination signals a caller may ignore: default in every child. */
static const int reset_always[] = {SIGINT,  SIGTERM, SIGQUIT, SIGHUP,  SIGPIPE, SIGCHLD,
				   SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM};

/*
 * posix_spawn attributes of bg_spawn_capture (git and the like): the
 * caller's process group, empty signal mask, default dispositions for
 * reset_always.
 */
static void spawn_attrs(posix_spawnattr_t *attr)
{
	sigset_t all, none;

	posix_spawnattr_init(attr);
	sigemptyset(&all);
	for (size_t i = 0; i < sizeof(reset_always) / sizeof(reset_always[0]); i++)
		sigaddset(&all, reset_always[i]);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(attr, &all);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

/* /dev/null opened once (close-on-exec) and dup2'ed into children: cheaper than opening it per spawn. */
static int devnull_fd = -1;
static pthread_once_t devnull_once = PTHREAD_ONCE_INIT;

static void devnull_open(void)
{
	devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
}

/*
 * How many processes listed in a run cgroup's cgroup.procs run (zombies
 * left out), each sent SIGKILL first with kill_them; false when the file
 * cannot be read.
 */
static bool cgroup_live(const char *procs, bool kill_them, size_t *live)
{
	FILE *f = fopen(procs, "re");
	char line[32];

	*live = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		long pid = strtol(line, NULL, 10);

		if (pid <= 0)
			continue;
		if (kill_them)
			kill((pid_t)pid, SIGKILL);
		*live += bg_proc_alive((pid_t)pid);
	}
	fclose(f);
	return true;
}

/* SIGKILL to pid's process group, every descendant found in /proc and, with cg_procs, every process of the run's cgroup. */
static void kill_tree(pid_t pid, const char *cg_procs)
{
	pid_t *pids;
	size_t n = bg_proc_tree(pid, &pids), live;

	kill(-pid, SIGKILL);
	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	free(pids);
	if (cg_procs)
		cgroup_live(cg_procs, true, &live);
}

/* The caller's children when the session began (bg_spawn_adopt_begin):
 * never reaped here, so that a program that embeds the library keeps their
 * exit statuses; and whether it was a subreaper then (-1: no session). */
static pid_t *callers_children;
static size_t ncallers_children;
static bool callers_known;
static int subreaper_before = -1;

/*
 * The pids of this process's children, of every thread and zombies too
 * (/proc/self/task/TID/children), into *out (malloc'd, *n of them); false
 * when the kernel does not list them (CONFIG_PROC_CHILDREN).
 */
static bool list_children(pid_t **out, size_t *n)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool listed = false;

	*out = NULL;
	*n = 0;
	while (d && (e = readdir(d))) {
		char path[64];
		FILE *f;
		long pid;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/children", e->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		listed = true;
		while (fscanf(f, "%ld", &pid) == 1) {
			*out = bg_xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = (pid_t)pid;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return listed;
}

void bg_spawn_adopt_begin(void)
{
	int was = 0;

	if (prctl(PR_GET_CHILD_SUBREAPER, &was, 0, 0, 0) != 0)
		was = 0;
	subreaper_before = was;
	free(callers_children);
	callers_known = list_children(&callers_children, &ncallers_children);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

void bg_spawn_adopt_end(void)
{
	if (subreaper_before == 0)
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	subreaper_before = -1;
	free(callers_children);
	callers_children = NULL;
	ncallers_children = 0;
	callers_known = false;
}

void bg_spawn_reap_orphans(void)
{
	pid_t *kids;
	size_t n;
	int st;

	if (!callers_known || !list_children(&kids, &n)) {
		/* no list of children: every finished one (the old way) */
		while (waitpid(-1, &st, WNOHANG) > 0)
			;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		bool callers = false;

		for (size_t k = 0; k < ncallers_children && !callers; k++)
			callers = kids[i] == callers_children[k];
		if (!callers)
			while (waitpid(kids[i], &st, WNOHANG) < 0 && errno == EINTR)
				;
	}
	free(kids);
}

size_t bg_spawn_leftovers(pid_t pgid, const char *cgroup_procs, long grace_ms, size_t *outlived)
{
	*outlived = 0;
	for (long waited = 0;; waited++) {
		struct timespec ms = {0, 1000000};
		size_t n;

		if (cgroup_procs) {
			/* the run's cgroup holds all it started, also what left its group */
			bg_spawn_reap_orphans();
			if (!cgroup_live(cgroup_procs, false, &n))
				cgroup_procs = NULL; /* unreadable: the process group below */
		}
		if (!cgroup_procs) {
			/* an empty process group: nothing of the tree is left (a
			 * descendant that left the group had a member as its parent, and
			 * is no member once that parent is gone), and no /proc scan; a
			 * zombie still counts as a member until it is reaped */
			if (kill(-pgid, 0) != 0 && errno == ESRCH)
				return 0;
			bg_spawn_reap_orphans();
			n = bg_proc_tree_live(pgid);
		}
		if (waited == 0)
			*outlived = n;
		if (n == 0 || waited >= grace_ms)
			return n;
		nanosleep(&ms, NULL);
	}
}

/*
 * After a kill: reaps what the killed group (and the run's cgroup, with
 * cg_procs) leaves behind, adopted by us as subreaper, killing what is
 * still there, until none of it is left, for at most two seconds, so that
 * no zombie outlives benchgate where the init process does not reap.
 */
static void reap_killed(pid_t pgid, const char *cg_procs)
{
	for (int i = 0; i < 2000; i++) {
		struct timespec ms = {0, 1000000};
		pid_t *pids;
		size_t n, live = 0;

		bg_spawn_reap_orphans();
		n = bg_proc_tree(pgid, &pids);
		for (size_t k = 0; k < n; k++)
			kill(pids[k], SIGKILL);
		free(pids);
		if (cg_procs)
			cgroup_live(cg_procs, true, &live);
		if (n == 0 && live == 0)
			return;
		nanosleep(&ms, NULL);
	}
}

/*
 * One captured stream of a run: the child writes into a pipe, and
 * benchgate copies the first cap bytes into the capture file while it
 * waits, discarding the rest, so that the file never holds more.
 */
struct capture {
	int rd;     /* the pipe's read end (non-blocking); -1 once closed */
	int file;   /* the capture file; -1 when none */
	long long cap, kept, total;
	bool eof;   /* every writer closed the pipe */
};

/* Writes all of buf; 0, or -1 with errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Creates (truncates) path and a pipe whose write end (*wr, close-on-exec)
 * the child gets; 0, or an errno with *what the step that failed.
 */
static int capture_open(struct capture *c, const char *path, long long cap, int *wr, const char **what)
{
	int fds[2], e;

	memset(c, 0, sizeof(*c));
	c->rd = -1;
	c->cap = cap > 0 ? cap : LLONG_MAX;
	*what = "cannot open";
	c->file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->file < 0)
		return errno;
	*what = "cannot make a pipe for";
	/* only the read end is non-blocking: the run writes as to any file */
	if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0) {
		e = errno;
		close(c->file);
		c->file = -1;
		return e;
	}
	c->rd = fds[0];
	*wr = fds[1];
	return 0;
}

/* Reads what the pipes of cap[0..1] hold now (at most 16 reads each: the run's exit is not kept waiting). */
static void capture_drain(struct capture *cap)
{
	char buf[65536];

	for (int k = 0; cap && k < 2; k++) {
		struct capture *c = &cap[k];

		for (int i = 0; i < 16 && c->rd >= 0; i++) {
			ssize_t n = read(c->rd, buf, sizeof(buf));

			if (n > 0) {
				long long room = c->cap - c->kept;
				size_t keep = room <= 0 ? 0 : room < n ? (size_t)room : (size_t)n;

				c->total += n;
				if (keep && write_all(c->file, buf, keep) == 0)
					c->kept += (long long)keep;
				else if (keep)
					c->cap = c->kept; /* the file cannot take it: keep no more */
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			c->eof = n == 0; /* end of file, or a pipe that cannot be read */
			close(c->rd);
			c->rd = -1;
		}
	}
}

/* The pollfds of the pipes of cap still open, into p; how many. */
static nfds_t capture_pollfds(const struct capture *cap, struct pollfd *p)
{
	nfds_t n = 0;

	for (int k = 0; cap && k < 2; k++)
		if (cap[k].rd >= 0)
			p[n++] = (struct pollfd){.fd = cap[k].rd, .events = POLLIN};
	return n;
}

/*
 * After the run's process is reaped: reads on until every writer closed
 * the pipes, for at most grace_ms (processes the run left running may hold
 * them), closes them (what such a process writes later fails with EPIPE),
 * marks a truncation and closes the files.
 */
static void capture_finish(struct capture *cap, long grace_ms)
{
	int64_t end = bg_sys_monotonic_ns() + (int64_t)grace_ms * 1000000;

	for (;;) {
		struct pollfd p[2];
		nfds_t n;
		int64_t left;

		capture_drain(cap);
		n = capture_pollfds(cap, p);
		left = end - bg_sys_monotonic_ns();
		if (n == 0 || left <= 0)
			break;
		poll(p, n, (int)(left / 1000000) + 1);
	}
	for (int k = 0; k < 2; k++) {
		struct capture *c = &cap[k];
		char note[400];
		int len = 0;

		if (c->rd >= 0)
			close(c->rd);
		if (c->total > c->kept)
			len = snprintf(note, sizeof(note), "\n[benchgate: truncated at %lld bytes; the run wrote %lld]\n",
				       c->kept, c->total);
		if (!c->eof)
			len += snprintf(note + len, sizeof(note) - (size_t)len,
					"%s[benchgate: processes the run left running still held this output open when it "
					"ended; what they wrote after that is not kept]\n",
					len ? "" : "\n");
		if (len && write_all(c->file, note, (size_t)len) != 0) {
			/* the capture stays without its note */
		}
		close(c->file);
		c->rd = c->file = -1;
	}
}

/*
 * The run or shell command being waited for, for bg_measure_suspend (a
 * signal handler): its process group (0: none); how many suspensions there
 * were and how long this process was stopped by them in all; whether one is
 * under way.
 */
static volatile sig_atomic_t job_pgid, job_stops, job_suspending;
static atomic_llong job_stopped_ns;
/* continues that no bg_measure_suspend asked for (bg_measure_continued) */
static volatile sig_atomic_t job_conts;

void bg_measure_continued(void)
{
	if (!job_suspending)
		job_conts = job_conts + 1;
}

void bg_measure_suspend(void)
{
	int saved = errno;
	pid_t pg = (pid_t)job_pgid;
	struct timespec t0, t1;

	job_suspending = 1;
	job_stops = job_stops + 1;
	if (pg > 0)
		kill(-pg, SIGSTOP);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(getpid(), SIGSTOP); /* returns once continued */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&job_stopped_ns, (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	if (pg > 0 && job_pgid == pg)
		kill(-pg, SIGCONT);
	job_suspending = 0;
	errno = saved;
}

/* How much longer than its timeout a wait must have lasted, besides a
 * continue, to be taken for a stop benchgate did not make. */
#define BG_FOREIGN_STOP_MARGIN_NS (50 * 1000000LL)

/* One run or shell command being waited for (wait_child). */
struct waiter {
	pid_t pid;                          /* the child, also its process group */
	int64_t deadline_ns;                /* CLOCK_MONOTONIC; 0: none */
	volatile sig_atomic_t *interrupted; /* may be NULL */
	const char *cg_procs;               /* the cgroup.procs of the run cgroup it joined, or NULL */
	struct capture *cap;                /* its stdout and stderr pipes to drain, or NULL */
	long long stopped0;                 /* job_stopped_ns before it started */
	/* what happened */
	int wstatus;
	struct rusage ru;
	bool timed_out, intr, killed;
	int stop_signal; /* the signal that stopped it (it was then killed), or 0 */
	size_t escaped; /* killed without cg_procs: what had left the group and still runs */
	/* stopped by someone else (SIGSTOP) while it waited: how long, as the
	 * gap of a wait that a continue ended (bg_measure_continued) */
	bool foreign_stop;
	int64_t foreign_ns;
	bool have_start;
	unsigned long long start; /* the child's start time, read before a kill without cg_procs */
};

/* Kills the child's tree once (see kill_tree). */
static void kill_run(struct waiter *w)
{
	if (w->killed)
		return;
	w->killed = true;
	/* without a cgroup, what escaped the group is found by its start */
	if (!w->cg_procs)
		w->have_start = bg_proc_start(w->pid, &w->start);
	kill_tree(w->pid, w->cg_procs);
}

/*
 * The child stopped (wait4 with WUNTRACED) by something other than
 * bg_measure_suspend: nothing in a measured run should stop it (a read or
 * a mode change of the terminal, SIGTTIN or SIGTTOU, included), and nobody
 * would continue it, so it has failed; its tree is killed rather than
 * waited for forever.
 */
static void on_stopped(struct waiter *w, int sig)
{
	if (job_suspending)
		return; /* bg_measure_suspend (in another thread) stopped it, and continues it */
	if (!w->stop_signal)
		w->stop_signal = sig;
	kill_run(w);
}

/*
 * Waits for w->pid with wait4, killing its tree when the deadline passes,
 * *interrupted is set or it stops, draining w->cap meanwhile. 0, or -1
 * with errno.
 */
static int wait_child(struct waiter *w)
{
	int pfd = -1;
	pid_t pid = w->pid;
	bool reaped = false;
	/* the continues seen (bg_measure_continued), and when the loop last
	 * looked: a stop that benchgate did not make shows as a gap between two
	 * looks longer than the wait between them could be */
	sig_atomic_t conts_seen = job_conts;
	int64_t mark = bg_sys_monotonic_ns();

	/* a pidfd whenever there is one: the loop below, which also sees such
	 * a stop, and not a blocking wait4, which would restart past it */
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		pid_t r;
		int wait_ms = 100;

		/* the flag is read before each wait: a signal that came before the wait interrupts nothing */
		if (!w->killed && w->interrupted && *w->interrupted) {
			w->intr = true;
			kill_run(w);
		}
		if (!w->killed && w->deadline_ns) {
			/* the time this process was suspended is not the run's */
			int64_t left = w->deadline_ns + (int64_t)(atomic_load(&job_stopped_ns) - w->stopped0) +
				       w->foreign_ns - bg_sys_monotonic_ns();

			if (left <= 0) {
				w->timed_out = true;
				kill_run(w);
			} else if (left / 1000000 < wait_ms) {
				wait_ms = (int)(left / 1000000) + 1;
			}
		}
		if (pfd < 0 && !w->deadline_ns && !w->cap) {
			/* no pidfd (Linux before 5.3) and nothing to watch but the
			 * child: a blocking wait4, which SIGINT (no SA_RESTART) interrupts */
			r = wait4(pid, &w->wstatus, WUNTRACED, &w->ru);
		} else {
			/* the pidfd says when the child exits; the pipes, when the run wrote */
			struct pollfd p[3];
			nfds_t n = 0;

			if (pfd >= 0)
				p[n++] = (struct pollfd){.fd = pfd, .events = POLLIN};
			n += capture_pollfds(w->cap, p + n);
			if (pfd < 0)
				wait_ms = 1; /* no pidfd (Linux before 5.3): look every millisecond */
			else if (w->killed)
				wait_ms = -1;
			if (n == 0) {
				struct timespec ms = {0, 1000000};

				nanosleep(&ms, NULL);
			} else if (poll(p, n, wait_ms) < 0 && errno != EINTR) {
				break;
			}
			{
				int64_t now = bg_sys_monotonic_ns();

				if (job_conts != conts_seen && wait_ms >= 0) {
					/* continued from a stop benchgate did not make: the
					 * look lasted longer than it could have (the wait, and a
					 * margin for the scheduler) by the time it was stopped */
					int64_t over = now - mark - (int64_t)wait_ms * 1000000 - BG_FOREIGN_STOP_MARGIN_NS;

					if (over > 0) {
						w->foreign_stop = true;
						w->foreign_ns += over;
					}
				}
				conts_seen = job_conts;
				mark = now;
			}
			capture_drain(w->cap);
			r = wait4(pid, &w->wstatus, WNOHANG | WUNTRACED, &w->ru);
			if (r == 0)
				continue;
		}
		if (r == pid && WIFSTOPPED(w->wstatus)) {
			on_stopped(w, WSTOPSIG(w->wstatus));
			continue;
		}
		if (r == pid) {
			reaped = true;
			break;
		}
		if (r < 0 && errno != EINTR)
			break;
	}
	if (pfd >= 0) {
		int e = errno;

		close(pfd);
		errno = e;
	}
	if (!reaped)
		return -1;
	if (w->killed) { /* what the group left behind, adopted as subreaper */
		reap_killed(pid, w->cg_procs);
		if (w->have_start) {
			/* the tree includes what left the group: killed too */
			w->escaped = bg_proc_escaped(pid, w->start, true);
			bg_spawn_reap_orphans();
		}
	}
	return 0;
}

/* execvp's search without running it: 0 and *out (malloc'd), or an errno. */
static int find_program(const char *file, char **out)
{
	const char *path, *p;
	int err = ENOENT;

	*out = NULL;
	if (!*file)
		return ENOENT;
	if (strchr(file, '/')) {
		*out = bg_xstrdup(file);
		return 0;
	}
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t dl = end ? (size_t)(end - p) : strlen(p);
		struct bg_strbuf cand = BG_STRBUF_INIT;
		struct stat st;

		if (dl)
			bg_strbuf_addn(&cand, p, dl);
		else
			bg_strbuf_addch(&cand, '.'); /* an empty element is the working directory */
		bg_strbuf_addch(&cand, '/');
		bg_strbuf_adds(&cand, file);
		if (stat(cand.buf, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(cand.buf, X_OK) == 0) {
				*out = bg_strbuf_detach(&cand, NULL);
				return 0;
			}
			err = EACCES; /* as execvp: remembered, the search goes on */
		} else if (errno == EACCES) {
			err = EACCES;
		}
		bg_strbuf_release(&cand);
		if (!end)
			break;
		p = end;
	}
	return err;
}

void bg_spawn_prog_init(struct bg_spawn_prog *prog, char *const *argv)
{
	memset(prog, 0, sizeof(*prog));
	prog->argv = argv;
	prog->find_errno = ENOENT; /* until bg_spawn_prog_find looks */
	sigemptyset(&prog->reset);
	for (size_t i = 0; i < sizeof(reset_always) / sizeof(reset_always[0]); i++)
		sigaddset(&prog->reset, reset_always[i]);
	/* a caught signal arriving before exec must not run this process's handler in the child */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0)
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			sigaddset(&prog->reset, sig);
	}
}

const char *bg_spawn_prog_find(struct bg_spawn_prog *prog)
{
	free(prog->path);
	prog->find_errno = find_program(prog->argv[0], &prog->path);
	return prog->path;
}

void bg_spawn_prog_release(struct bg_spawn_prog *prog)
{
	free(prog->path);
	prog->path = NULL;
}

struct child_args {
	const struct bg_spawn_prog *prog;
	int out_fd, err_fd;              /* made stdout and stderr; -1: stdout on /dev/null, stderr inherited */
	int devnull;                     /* -1: open /dev/null here */
	volatile int err;                /* the errno of a failed step, 0 when exec succeeded */
	volatile int cg_err;             /* why the child did not join prog->cgroup_procs, or 0 */
	volatile int64_t own_ns;         /* how long benchgate's own steps in the child took */
	pid_t parent;                    /* benchgate */
};

/*
 * The child's steps that are benchgate's work, timed to be taken out of
 * the run's wall time: joining its cgroup. Async-signal-safe calls only.
 */
__attribute__((no_sanitize("address", "undefined"))) static void own_steps(struct child_args *a)
{
	struct timespec t0, t1;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (a->prog->cgroup_procs) {
		fd = open(a->prog->cgroup_procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			a->cg_err = errno ? errno : EIO;
		if (fd >= 0)
			close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	a->own_ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
}

static int open_onto(const char *path, int flags, int target)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (dup2(fd, target) < 0)
		return -1;
	return close(fd) == 0 || errno == EINTR ? 0 : -1;
}

/*
 * The child, between clone and exec: shares the parent's memory (the parent
 * waits) and runs with every signal blocked until the dispositions are reset.
 */
__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	const struct bg_spawn_prog *prog = a->prog;
	struct sigaction dfl;
	sigset_t none;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&prog->reset, sig) == 1)
			sigaction(sig, &dfl, NULL);
	if (setpgid(0, 0) != 0)
		goto fail;
	/* a benchgate that is killed (SIGKILL, a crash) takes the run with it,
	 * so that no orphan keeps the device busy behind a stale lease */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != a->parent)
		goto fail;
	if (prog->cgroup_procs)
		own_steps(a);
	if (a->devnull >= 0) {
		if (dup2(a->devnull, 0) < 0)
			goto fail;
	} else if (open_onto("/dev/null", O_RDONLY, 0) != 0) {
		goto fail;
	}
	if (a->out_fd >= 0) {
		if (dup2(a->out_fd, 1) < 0 || dup2(a->err_fd, 2) < 0)
			goto fail;
	} else if (a->devnull >= 0) {
		if (dup2(a->devnull, 1) < 0)
			goto fail;
	} else if (open_onto("/dev/null", O_WRONLY, 1) != 0) {
		goto fail;
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(prog->path, prog->argv, prog->envp ? prog->envp : environ);
fail:
	a->err = errno ? errno : EINVAL;
	_exit(127);
}

/* What to do about a program that start_child could not start (errno e),
 * after the system's own words: name is as given (searched on PATH when it
 * has no '/'). */
static const char *start_hint(const char *name, int e)
{
	struct stat st;

	/* a limit of this process or of the system, not the command's fault */
	if (bg_open_files_advice(e))
		return bg_open_files_advice(e);
	if (e == EAGAIN)
		return "the system refused another process (the limit of processes of this user, ulimit -u, "
		       "or of the system); try again when fewer run";
	if (e == ENOMEM)
		return "there is not enough memory to start it";
	if (e == E2BIG)
		return "its arguments and environment are longer than the system allows";
	if (e == ENOEXEC)
		return "it is not a program this system can run (a script needs a #! line, or run it "
		       "through its interpreter)";
	if (!strchr(name, '/'))
		return e == EACCES ? "a file of that name on PATH is a folder or not executable; check the "
				     "command name and PATH"
				   : "check the command name and PATH";
	if (e == ENOENT)
		return "check the path (and, for a script, the interpreter its #! line names)";
	if (e != EACCES)
		return "check the path";
	if (stat(name, &st) != 0)
		return "a folder on its path cannot be searched; check the folders' permissions";
	if (S_ISDIR(st.st_mode))
		return "it is a folder, not a program";
	if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return "it is not executable (chmod +x it, or run it through its interpreter)";
	return "the system refuses to run it (a file system mounted noexec?)";
}

/*
 * Starts prog with stdout and stderr on out_fd and err_fd (-1: stdout on
 * /dev/null, stderr inherited), in a process group of its own; 0 and
 * *pid, or an errno (nothing left running).
 * With prog->cgroup_procs, *cg_err is 0 when the child joined that cgroup
 * (else why not); *own_ns is how long the child's own_steps took. Both may
 * be NULL.
 */
static int start_child(const struct bg_spawn_prog *prog, int out_fd, int err_fd, pid_t *pid,
		       int *cg_err, int64_t *own_ns)
{
	enum { STACK = 64 * 1024 };
	struct child_args a = {prog, out_fd, err_fd, -1, 0, 0, 0, 0};
	sigset_t all, old;
	char *stack;
	int e;

	if (!prog->path)
		return prog->find_errno;
	pthread_once(&devnull_once, devnull_open);
	a.devnull = devnull_fd;
	a.parent = getpid();
	stack = bg_xmalloc(STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*pid = clone(child_main, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	e = *pid < 0 ? errno : 0;
	if (!e) /* before a SIGTSTP can be handled */
		job_pgid = *pid;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(stack);
	if (e)
		return e;
	if (cg_err)
		*cg_err = a.cg_err;
	if (own_ns)
		*own_ns = a.own_ns;
	if (a.err) { /* the child exited 127 before exec: reap it */
		int st;

		while (waitpid(*pid, &st, 0) < 0 && errno == EINTR)
			;
		job_pgid = 0;
		return a.err;
	}
	return 0;
}

int bg_spawn_run(const struct bg_spawn_prog *prog, double timeout,
		 volatile sig_atomic_t *interrupted, struct bg_watch *w, struct bg_spawn_result *res,
		 struct bg_ctx *ctx)
{
	return bg_spawn_run_captured(prog, timeout, interrupted, w, NULL, 0, res, ctx);
}

int bg_spawn_run_captured(const struct bg_spawn_prog *prog, double timeout,
			  volatile sig_atomic_t *interrupted,
			  struct bg_watch *w, const char *capture_prefix, long long cap,
			  struct bg_spawn_result *res, struct bg_ctx *ctx)
{
	struct capture capture[2];
	struct waiter wt;
	int64_t t0, t1, b0, b1, own_ns = 0;
	pid_t pid = -1;
	int e, wr[2] = {-1, -1};
	sig_atomic_t stops0;

	memset(res, 0, sizeof(*res));
	memset(&wt, 0, sizeof(wt));
	if (capture_prefix) {
		/* made before the clock starts: the run's own work is writing */
		for (int k = 0; k < 2; k++) {
			char path[4200];
			const char *what;

			snprintf(path, sizeof(path), "%s.%s", capture_prefix, k ? "stderr" : "stdout");
			e = capture_open(&capture[k], path, cap, &wr[k], &what);
			if (e != 0) {
				if (k) {
					close(wr[0]);
					close(capture[0].rd);
					close(capture[0].file);
				}
				return bg_error(ctx, BG_EIO, "'%s': %s '%s' for the run's output: %s", prog->argv[0],
						what, path, strerror(e));
			}
		}
		wt.cap = capture;
	}
	stops0 = job_stops;
	wt.stopped0 = atomic_load(&job_stopped_ns);
	{
		/* the child shares benchgate's address space until it execs, and
		 * execve keeps the high-water mark of the one it replaces: the
		 * run's ru_maxrss is never below benchgate's own peak so far */
		struct rusage self;

		res->maxrss_floor_bytes = getrusage(RUSAGE_SELF, &self) == 0 ? (int64_t)self.ru_maxrss * 1024 : 0;
	}
	res->start_realtime = bg_sys_realtime();
	t0 = bg_sys_monotonic_ns();
	b0 = bg_sys_boottime_ns();
	e = start_child(prog, wr[0], wr[1], &pid, &res->cgroup_errno, &own_ns);
	if (wt.cap) { /* the child has its copies (or failed); the pipes end when the run's do */
		close(wr[0]);
		close(wr[1]);
		if (e != 0)
			capture_finish(capture, 0);
	}
	if (e != 0)
		return bg_error(ctx, BG_EIO, "'%s': cannot start: %s; %s", prog->argv[0], strerror(e),
				start_hint(prog->argv[0], e));
	if (w)
		bg_watch_begin(w, pid);
	wt.pid = pid;
	/* the run's own time is what runs after benchgate's steps in the child
	 * (joining the cgroup, milliseconds on a busy v1 hierarchy): the
	 * timeout counts from there, as its wall time does */
	wt.deadline_ns = timeout > 0 ? t0 + own_ns + (int64_t)(timeout * 1e9) : 0;
	wt.interrupted = interrupted;
	wt.cg_procs = prog->cgroup_procs && res->cgroup_errno == 0 ? prog->cgroup_procs : NULL;
	e = wait_child(&wt) != 0 ? errno : 0;
	job_pgid = 0;
	if (e != 0) {
		if (w) {
			struct bg_watch_result dummy;

			bg_watch_end(w, &dummy);
		}
		if (wt.cap)
			capture_finish(capture, 0);
		return bg_error(ctx, BG_EIO, "'%s': cannot wait for the run: %s", prog->argv[0],
				strerror(e));
	}
	t1 = bg_sys_monotonic_ns();
	b1 = bg_sys_boottime_ns();
	clock_gettime(CLOCK_REALTIME, &res->ended_at);
	/* a system sleep stops the monotonic clock, not the boot clock */
	res->slept_ns = (b1 - b0) - (t1 - t0) >= BG_SLEPT_MIN_NS ? (b1 - b0) - (t1 - t0) : 0;
	res->pid = pid;
	res->wall_ns = t1 - t0 - own_ns; /* joining the cgroup: benchgate's work */
	res->user_ns = tv_ns(&wt.ru.ru_utime);
	res->sys_ns = tv_ns(&wt.ru.ru_stime);
	res->maxrss_bytes = (int64_t)wt.ru.ru_maxrss * 1024;
	res->timed_out = wt.timed_out;
	res->interrupted = wt.intr;
	res->escaped = wt.escaped;
	res->stop_signal = wt.stop_signal;
	res->suspended = job_stops != stops0 || wt.foreign_stop;
	if (WIFEXITED(wt.wstatus)) {
		res->exited = true;
		res->exit_status = WEXITSTATUS(wt.wstatus);
	} else if (WIFSIGNALED(wt.wstatus)) {
		res->term_signal = WTERMSIG(wt.wstatus);
	}
	if (wt.cap) /* untimed */
		capture_finish(capture, BG_LEFTOVER_GRACE_MS);
	return BG_OK;
}

int bg_spawn_shell(const char *cmd, const char *const *args, size_t nargs,
		   volatile sig_atomic_t *interrupted, int *status, int *signal, size_t *left, struct bg_ctx *ctx)
{
	char **argv = bg_xcalloc(nargs + 5, sizeof(char *));
	struct bg_spawn_prog prog;
	struct waiter wt;
	struct bg_strbuf script = BG_STRBUF_INIT;
	int e;

	bg_strbuf_adds(&script, cmd);
	if (nargs)
		bg_strbuf_adds(&script, " \"$@\"");
	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)"-c";
	argv[2] = script.buf;
	argv[3] = (char *)"benchgate";
	for (size_t i = 0; i < nargs; i++)
		argv[4 + i] = (char *)args[i];
	bg_spawn_prog_init(&prog, argv);
	bg_spawn_prog_find(&prog);
	memset(&wt, 0, sizeof(wt));
	wt.interrupted = interrupted;
	wt.stopped0 = atomic_load(&job_stopped_ns);
	e = start_child(&prog, -1, -1, &wt.pid, NULL, NULL);
	bg_spawn_prog_release(&prog);
	free(argv);
	bg_strbuf_release(&script);
	if (e != 0)
		return bg_error(ctx, BG_EIO, "'/bin/sh': cannot start: %s", strerror(e));
	e = wait_child(&wt) != 0 ? errno : 0;
	job_pgid = 0;
	if (e != 0)
		return bg_error(ctx, BG_EIO, "cannot wait for a shell command: %s", strerror(e));
	*status = WIFEXITED(wt.wstatus) ? WEXITSTATUS(wt.wstatus) : 128 + WTERMSIG(wt.wstatus);
	if (signal)
		*signal = WIFEXITED(wt.wstatus) ? 0 : WTERMSIG(wt.wstatus);
	if (left) { /* what it left running, as a run's leftovers are counted without a cgroup */
		size_t outlived;

		*left = wt.killed ? 0 : bg_spawn_leftovers(wt.pid, NULL, BG_LEFTOVER_GRACE_MS, &outlived);
	}
	return BG_OK;
}

void bg_measure_shell_ended(struct bg_strbuf *out, int status, int signal)
{
	if (!signal) {
		bg_strbuf_addf(out, "exited with status %d", status);
		return;
	}
	bg_strbuf_adds(out, "was killed by signal ");
	bg_format_signal(out, signal);
}

/* bg_spawn_capture, with stderr into out too when merge_stderr. */
/* environ less the variables named in unset (NULL: environ itself); a new
 * array of borrowed strings, the caller frees it (NULL: nothing to free) */
static char **env_without(const char *const *unset)
{
	size_t n = 0, k = 0;
	char **env;

	if (!unset)
		return NULL;
	while (environ && environ[n]) /* (NULL after clearenv) */
		n++;
	env = bg_xcalloc(n + 1, sizeof(*env));
	for (size_t i = 0; i < n; i++) {
		bool drop = false;

		for (size_t u = 0; unset[u] && !drop; u++) {
			size_t len = strlen(unset[u]);
			drop = strncmp(environ[i], unset[u], len) == 0 && environ[i][len] == '=';
		}
		if (!drop)
			env[k++] = environ[i];
	}
	return env;
}

static int spawn_capture(char *const *argv, const char *dir, const char *const *unset, bool merge_stderr,
			 struct bg_strbuf *out, int *status, struct bg_ctx *ctx)
{
	char **env = env_without(unset);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int fds[2], e, wst = 0;
	pid_t pid;
	char buf[65536];
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return bg_error(ctx, BG_EIO, "cannot create a pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	if (merge_stderr)
		posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (dir)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	spawn_attrs(&attr);
	e = posix_spawnp(&pid, argv[0], &fa, &attr, argv, env ? env : environ);
	free(env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fds[1]);
	if (e != 0) {
		close(fds[0]);
		return bg_error(ctx, BG_EIO, "'%s': cannot start: %s", argv[0], strerror(e));
	}
	while ((n = read(fds[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		bg_strbuf_addn(out, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	*status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	return BG_OK;
}

int bg_spawn_capture(char *const *argv, const char *dir, const char *const *unset, struct bg_strbuf *out,
		     int *status, struct bg_ctx *ctx)
{
	return spawn_capture(argv, dir, unset, false, out, status, ctx);
}

int bg_spawn_capture_all(char *const *argv, const char *dir, const char *const *unset, struct bg_strbuf *out,
			 int *status, struct bg_ctx *ctx)
{
	return spawn_capture(argv, dir, unset, true, out, status, ctx);
}
