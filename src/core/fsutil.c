/*
 * fsutil.c - file reads and read-only views (mapped or read), atomic writes,
 * mkdir -p (see fsutil.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE */
#endif
#include "benchgate/fsutil.h"
#include "core/stops.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * One fstat, a buffer of exactly the expected size, reads until EOF: a
 * regular file of known size costs one allocation (no growth copies) and
 * two reads (the second sees EOF, or the bytes appended meanwhile, which
 * are then read into a growing buffer as for pipes and /proc files).
 */
/* What is read from a file that is not regular (a pipe, a device) at most:
 * /dev/zero or /dev/urandom named as a project file must not take all memory. */
#define STREAM_READ_MAX ((size_t)256 << 20)

/* Reads fd (already fstat'ed into st, or st NULL) to its end into out. */
static int read_fd(int fd, const struct stat *st, const char *display, struct bg_strbuf *out,
		   struct bg_ctx *ctx)
{
	size_t chunk = 65536;
	bool stream = !st || !S_ISREG(st->st_mode);

	if (st && S_ISREG(st->st_mode) && st->st_size > 0) {
		bg_strbuf_grow(out, (size_t)st->st_size);
		chunk = 4096; /* growth only when the file grew since fstat */
	}
	if (out->cap - out->len <= 1)
		bg_strbuf_grow(out, chunk);
	for (;;) {
		ssize_t n;
		char spare[4096];

		if (stream && out->len > STREAM_READ_MAX)
			return bg_error(ctx, BG_EIO,
					"%s: cannot read: more than 256 MiB from a file that is not a regular file (a device or a pipe); name a regular file",
					display);
		if (out->cap - out->len - 1 == 0) {
			/* full: the file may be complete; look before growing */
			n = read(fd, spare, sizeof(spare));
			if (n > 0) {
				bg_strbuf_addn(out, spare, (size_t)n);
				bg_strbuf_grow(out, chunk);
				continue;
			}
		} else {
			n = read(fd, out->buf + out->len, out->cap - out->len - 1);
			if (n > 0) {
				bg_strbuf_setlen(out, out->len + (size_t)n);
				continue;
			}
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
		}
		return BG_OK;
	}
}

/* Opens path for reading and fstats it; a directory is an error. */
static int open_regular(const char *path, const char *display, struct stat *st, bool *have_st,
			int *fd, struct bg_ctx *ctx)
{
	*have_st = false;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	*have_st = fstat(*fd, st) == 0;
	if (*have_st && S_ISDIR(st->st_mode)) {
		close(*fd);
		return bg_error(ctx, BG_EIO, "%s: cannot read: is a directory", display);
	}
	return BG_OK;
}

int bg_file_read(const char *path, const char *display, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	struct stat st;
	bool have_st;
	int fd, rc;

	if (!display)
		display = path;
	if ((rc = open_regular(path, display, &st, &have_st, &fd, ctx)))
		return rc;
	rc = read_fd(fd, have_st ? &st : NULL, display, out, ctx);
	close(fd);
	return rc;
}

/*
 * Files at least this big are mapped: the page cache's own pages, with no
 * fresh memory to fault in and zero and no copy, which is most of what
 * reading a big file costs; smaller ones are read into one buffer.
 */
#define VIEW_MAP_MIN ((size_t)32 << 10)

/* The atomic writer's temporary file: PATH.tmp.PID */
#define TEMP_MARK ".tmp."

int bg_file_view_open(struct bg_file_view *view, const char *path, const char *display,
		      struct bg_ctx *ctx)
{
	struct stat st;
	bool have_st;
	int fd, rc;

	if (!display)
		display = path;
	memset(view, 0, sizeof(*view));
	bg_strbuf_init(&view->sb);
	if ((rc = open_regular(path, display, &st, &have_st, &fd, ctx)))
		return rc;
	if (have_st && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= VIEW_MAP_MIN &&
	    (uint64_t)st.st_size < SIZE_MAX / 2) {
		/* an anonymous reservation one byte longer than the file, the file
		 * mapped over its start: the byte after the text reads as '\0'
		 * (the zeroed tail of the file's last page, or the spare page) */
		size_t len = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE);
		size_t whole = (len + 1 + page - 1) / page * page;
		void *base = mmap(NULL, whole, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base != MAP_FAILED) {
			if (mmap(base, len, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) !=
			    MAP_FAILED) {
				close(fd);
				view->text = base;
				view->len = len;
				view->map = base;
				view->map_len = whole;
				return BG_OK;
			}
			munmap(base, whole);
		}
	}
	rc = read_fd(fd, have_st ? &st : NULL, display, &view->sb, ctx);
	close(fd);
	if (rc) {
		bg_strbuf_release(&view->sb);
		return rc;
	}
	view->text = view->sb.buf;
	view->len = view->sb.len;
	return BG_OK;
}

/* What bg_file_view_release may still leave mapped (bg_file_view_leave_mapped). */
static _Atomic size_t leave_budget;

void bg_file_view_leave_mapped(size_t budget)
{
	atomic_store(&leave_budget, budget);
}

void bg_file_view_release(struct bg_file_view *view)
{
	if (view->map) {
		size_t left = atomic_load(&leave_budget);

		while (left >= view->map_len &&
		       !atomic_compare_exchange_weak(&leave_budget, &left, left - view->map_len))
			;
		if (left < view->map_len)
			munmap(view->map, view->map_len);
	}
	bg_strbuf_release(&view->sb);
	memset(view, 0, sizeof(*view));
	bg_strbuf_init(&view->sb);
}

static int fsync_parent(const char *path)
{
	struct bg_strbuf dir = BG_STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	int fd, rc = 0;

	if (slash)
		bg_strbuf_addn(&dir, path, slash == path ? 1 : (size_t)(slash - path));
	else
		bg_strbuf_adds(&dir, ".");
	fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	bg_strbuf_release(&dir);
	return rc;
}

/*
 * The stop signals stay held from the moment a temporary file may exist
 * until it is renamed or removed, so that Ctrl-C or a polite kill cannot
 * leave one behind: what arrives meanwhile is delivered once the target is
 * either the old file or the new one. A thread may have several files
 * open; the mask of the first is restored when the last ends.
 */
static _Thread_local int atomic_open_files;
static _Thread_local sigset_t atomic_saved_mask;

static void atomic_hold(void)
{
	sigset_t old;

	bg_stops_hold(&old);
	if (atomic_open_files++ == 0)
		atomic_saved_mask = old;
}

static void atomic_release(void)
{
	if (atomic_open_files > 0 && --atomic_open_files == 0)
		bg_stops_release(&atomic_saved_mask);
}

long bg_atomic_temp_pid(const char *name, const char *base)
{
	size_t n = strlen(base), m = strlen(TEMP_MARK);
	char *end;
	long pid;

	if (strncmp(name, base, n) != 0 || strncmp(name + n, TEMP_MARK, m) != 0 ||
	    !isdigit((unsigned char)name[n + m]) || name[n + m] == '0')
		return -1;
	errno = 0;
	pid = strtol(name + n + m, &end, 10);
	return *end || errno || pid <= 0 || pid > INT_MAX ? -1 : pid;
}

int bg_atomic_target(const char *path, const char *display, struct bg_strbuf *target, struct bg_ctx *ctx)
{
	struct stat st;
	char *real;
	int e;

	if (!display)
		display = path;
	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) {
		bg_strbuf_adds(target, path);
		return BG_OK;
	}
	if (!(real = realpath(path, NULL))) {
		e = errno;
		/* /dev/stdout and its kind lead through /proc to a pipe or a
		 * terminal: something there, but not a file that can be replaced */
		if (e == ENOENT && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return bg_error(ctx, BG_EIO, "%s: cannot write: it leads to something that is not a regular file "
					"(a pipe, a terminal or a device); name a file", display);
		if (e == ENOENT)
			return bg_error(ctx, BG_EIO, "%s: cannot write: it is a symbolic link to nothing; "
					"make it lead to a file, or remove it", display);
		return bg_error(ctx, BG_EIO, "%s: cannot write: it is a symbolic link that cannot be "
				"followed (%s); make it lead to a file, or remove it", display,
				e == ELOOP ? "a loop of links" : strerror(e));
	}
	bg_strbuf_adds(target, real);
	free(real);
	return BG_OK;
}

/*
 * A file without a name in the folder of target (O_TMPFILE), named only
 * when it is whole (link_unnamed), so that a writer killed outright while
 * writing leaves nothing behind; -1 where the kernel or the file system
 * has no such files, or /proc (through which it is named) is not mounted:
 * the caller then writes a named temporary file.
 */
static int open_unnamed(const char *target)
{
#ifdef O_TMPFILE
	const char *slash = strrchr(target, '/');
	char *dir;
	int fd = -1;

	if (access("/proc/self/fd", X_OK) != 0)
		return -1;
	dir = !slash ? bg_xstrdup(".") : slash == target ? bg_xstrdup("/")
			: bg_xstrndup(target, (size_t)(slash - target));
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	free(dir);
	return fd;
#else
	(void)target;
	return -1;
#endif
}

/* Names the unnamed file of f at f->tmp (one left there by a writer of the
 * same pid, now gone, is replaced): 0, or the errno. */
static int link_unnamed(struct bg_atomic_file *f)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
	for (int tries = 0; tries < 2; tries++) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp.buf, AT_SYMLINK_FOLLOW) == 0) {
			f->unnamed = false;
			return 0;
		}
		if (errno != EEXIST || unlink(f->tmp.buf) != 0)
			break;
	}
	return errno;
}

const char *bg_proc_stat_tail(long pid, char *buf, size_t size)
{
	char path[64], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

bool bg_pid_alive(long pid)
{
	char buf[512];
	const char *tail;

	if (pid <= 0 || pid > INT_MAX || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
		return false;
	tail = bg_proc_stat_tail(pid, buf, sizeof(buf));
	return !(tail && (*tail == 'Z' || *tail == 'X'));
}

void bg_atomic_remove_dead(const char *dir, const char *const *bases)
{
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (!(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		long pid = -1;

		for (size_t k = 0; bases[k] && pid < 0; k++)
			pid = bg_atomic_temp_pid(e->d_name, bases[k]);

		if (pid > 0 && pid != (long)getpid() && !bg_pid_alive(pid) &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* bg_atomic_remove_dead for the file at path (a link's target) */
static void remove_dead_beside(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base[2] = {slash ? slash + 1 : path, NULL};
	char *dir = slash ? bg_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : bg_xstrdup(".");

	bg_atomic_remove_dead(dir, base);
	free(dir);
}

int bg_atomic_file_open(struct bg_atomic_file *f, const char *path, const char *display,
			struct bg_ctx *ctx)
{
	struct stat st;
	bool exists;
	int e = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = path;
	f->display = display ? display : path;
	bg_strbuf_init(&f->tmp);
	bg_strbuf_init(&f->target);
	/* a symbolic link stays a link: the file it leads to is replaced, by a
	 * temporary file beside that one (as git's lockfile does) */
	if ((e = bg_atomic_target(path, f->display, &f->target, ctx))) {
		bg_strbuf_release(&f->target);
		return e;
	}
	/* never replace a device, FIFO or directory with a regular file */
	exists = stat(f->target.buf, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		bg_strbuf_release(&f->target);
		return bg_error(ctx, BG_EIO, "%s: cannot write: it exists and is %s, not a regular file; "
				"remove it, or write another file", f->display,
				S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a pipe" :
				S_ISSOCK(st.st_mode) ? "a socket" : "a device");
	}
	/* what a killed writer of this file left (a project's `git add -A`
	 * would commit it; a session would count it untracked) */
	remove_dead_beside(f->target.buf);
	bg_strbuf_addf(&f->tmp, "%s" TEMP_MARK "%ld", f->target.buf, (long)getpid());
	atomic_hold();
	f->fd = open_unnamed(f->target.buf);
	f->unnamed = f->fd >= 0;
	/* a new file of our own (never through a link planted at its name); one
	 * already there has this process's pid, so its writer is gone */
	for (int tries = 0; tries < 2 && !f->unnamed; tries++) {
		f->fd = open(f->tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd >= 0 || errno != EEXIST || unlink(f->tmp.buf) != 0)
			break;
	}
	if (f->fd < 0)
		e = errno;
	/* the replacement keeps the permissions of the file it replaces (the
	 * new file's 0644 went through the umask: set them whatever they are) */
	else if (exists && fchmod(f->fd, st.st_mode & 07777) != 0)
		e = errno;
	if (e) {
		if (f->fd >= 0) {
			close(f->fd);
			if (!f->unnamed)
				unlink(f->tmp.buf);
			f->fd = -1;
		}
		atomic_release();
		bg_strbuf_release(&f->tmp);
		bg_strbuf_release(&f->target);
		bg_error(ctx, BG_EIO, "%s: cannot write: %s", f->display, strerror(e));
		errno = e;
		return BG_EIO;
	}
	return BG_OK;
}

void bg_atomic_file_write(struct bg_atomic_file *f, const char *data, size_t len)
{
	size_t off = 0;

	while (off < len && !f->err) {
		ssize_t n = write(f->fd, data + off, len - off);
		if (n < 0) {
			if (errno != EINTR)
				f->err = errno;
			continue;
		}
		off += (size_t)n;
	}
}

void bg_atomic_file_abort(struct bg_atomic_file *f)
{
	if (f->fd >= 0) {
		close(f->fd);
		if (!f->unnamed)
			unlink(f->tmp.buf);
		f->fd = -1;
		atomic_release();
	}
	bg_strbuf_release(&f->tmp);
	bg_strbuf_release(&f->target);
}

int bg_atomic_file_commit(struct bg_atomic_file *f, struct bg_ctx *ctx)
{
	int e = f->err, rc = BG_OK;

	if (!e && fsync(f->fd) != 0)
		e = errno;
	/* named only now that it is whole: a writer killed before leaves nothing */
	if (!e && f->unnamed)
		e = link_unnamed(f);
	if (close(f->fd) != 0 && !e)
		e = errno;
	f->fd = -1;
	if (e) {
		if (!f->unnamed)
			unlink(f->tmp.buf);
		rc = bg_error(ctx, BG_EIO, "%s: cannot write: %s", f->display, strerror(e));
	} else if (rename(f->tmp.buf, f->target.buf) != 0) {
		e = errno;
		unlink(f->tmp.buf);
		rc = bg_error(ctx, BG_EIO, "%s: cannot replace: %s", f->display, strerror(e));
	} else {
		fsync_parent(f->target.buf);
	}
	atomic_release();
	bg_strbuf_release(&f->tmp);
	bg_strbuf_release(&f->target);
	if (rc)
		errno = e;
	return rc;
}

int bg_file_write_atomic(const char *path, const char *display, const char *data, size_t len,
			 struct bg_ctx *ctx)
{
	struct bg_atomic_file f;
	int rc;

	if ((rc = bg_atomic_file_open(&f, path, display, ctx)))
		return rc;
	bg_atomic_file_write(&f, data, len);
	return bg_atomic_file_commit(&f, ctx);
}

/*
 * The message of a folder p (a prefix of path) not made, why: p as display
 * shows path: display's tail is path's, so p is display cut where path's
 * rest begins; a folder above where display starts is named whole. err,
 * the failure's errno, is left in errno for the caller, whatever making
 * the message did to it.
 */
static int mkdirs_fail(const char *path, const char *display, const char *p, int err, const char *why,
		       struct bg_ctx *ctx)
{
	size_t rest = strlen(path) - strlen(p), n = strlen(display);
	int rc;

	if (n > rest)
		rc = bg_error(ctx, BG_EIO, "%.*s: cannot create directory: %s", (int)(n - rest), display, why);
	else
		rc = bg_error(ctx, BG_EIO, "%s: cannot create directory: %s", p, why);
	errno = err;
	return rc;
}

/* Appends dir to the list of folders made (each NUL-terminated, the list
 * ended by an empty one: bg_mkdirs_made's *made). */
static void made_add(struct bg_strbuf *list, const char *dir)
{
	bg_strbuf_addn(list, dir, strlen(dir) + 1);
}

int bg_mkdirs_made(const char *path, const char *display, char **made, struct bg_ctx *ctx)
{
	struct bg_strbuf list = BG_STRBUF_INIT;
	char *p = bg_xstrdup(path);
	struct stat st;
	int rc = BG_OK;

	if (made)
		*made = NULL;
	if (!display)
		display = path;
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) == 0) {
				made_add(&list, p);
			} else if (errno != EEXIST) {
				int err = errno;

				rc = mkdirs_fail(path, display, p, err, strerror(err), ctx);
				/* the folders made above the one that failed go again */
				bg_strbuf_addch(&list, '\0');
				bg_rmdirs_made(list.buf);
				errno = err;
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	/* the last name is taken by something else than a folder: the kernel's
	 * words, as for a file in the way of a folder further down; a link
	 * that leads nowhere says whether to nothing or round a loop */
	if (rc == BG_OK && !bg_is_dir(path)) {
		int err = stat(path, &st) != 0 ? errno : 0;

		rc = mkdirs_fail(path, display, path, ENOTDIR,
				 err && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)
					 ? (err == ELOOP ? "Not a directory (a loop of symbolic links)"
							 : "Not a directory (a symbolic link to nothing)")
					 : strerror(ENOTDIR),
				 ctx);
	}
	free(p);
	if (rc == BG_OK && made && list.len) {
		bg_strbuf_addch(&list, '\0');
		*made = bg_strbuf_detach(&list, NULL);
	}
	bg_strbuf_release(&list);
	return rc;
}

int bg_mkdirs(const char *path, struct bg_ctx *ctx)
{
	return bg_mkdirs_made(path, NULL, NULL, ctx);
}

void bg_rmdirs_made(const char *made)
{
	size_t n = 0;
	const char **dirs;

	if (!made)
		return;
	for (const char *d = made; *d; d += strlen(d) + 1)
		n++;
	dirs = bg_xcalloc(n + 1, sizeof(*dirs));
	n = 0;
	for (const char *d = made; *d; d += strlen(d) + 1)
		dirs[n++] = d;
	/* the last made first: each below the ones made before it (or beside
	 * them, past a ".."); one that is no longer empty stays, and so does
	 * what it is in, which then is not empty either */
	while (n--)
		(void)rmdir(dirs[n]);
	free(dirs);
}

/* Whether SIGINT, SIGTERM, SIGHUP or SIGQUIT waits, held back (stops.h):
 * a person asked this process to end while it holds them. */
static bool stop_pending(void)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t p;

	if (sigpending(&p) != 0)
		return false;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		struct sigaction sa;

		/* one ignored (SIGHUP under nohup) is dropped once let through */
		if (sigismember(&p, stops[i]) == 1 && sigaction(stops[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			return true;
	}
	return false;
}

int bg_lock_file(const char *lock_path, const char *display, int *fd, struct bg_ctx *ctx)
{
	struct timespec t0, t;
	long waited_ms = 0;
	int rc, e = 0;

	*fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0 && (e = errno) == EACCES) /* another user's: flock needs no write */
		*fd = open(lock_path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		size_t nl = strlen(lock_path), nd = strlen(display);

		e = e ? e : errno;
		/* a file locked through a lock file of its own (RUNS.md's in the
		 * state folder): that is what could not be opened or made */
		if (nl < nd || strcmp(lock_path + nl - nd, display) != 0)
			return bg_error(ctx, BG_EIO, "%s: cannot lock: its lock file %s cannot be opened: %s; let "
					"benchgate write its state folder", display, lock_path, strerror(e));
		return bg_error(ctx, BG_EIO, "%s: cannot lock: %s", display, strerror(e));
	}
	e = 0;
	/* polled, not a blocking flock: a wait ends when the holder is done,
	 * when it lasts BG_LOCK_WAIT_MS (a holder stopped or hung), or when a
	 * stop signal waits held back (Ctrl-Z'd writers are not waited for
	 * forever, nor is Ctrl-C ignored while waiting) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((rc = flock(*fd, LOCK_EX | LOCK_NB)) != 0) {
		struct timespec step = {0, 20 * 1000000L};

		e = errno;
		if (e == EINTR)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		waited_ms = (long)(t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (e != EWOULDBLOCK || stop_pending() || waited_ms >= BG_LOCK_WAIT_MS)
			break;
		nanosleep(&step, NULL);
	}
	if (rc == 0)
		return BG_OK;
	close(*fd);
	*fd = -1;
	if (e != EWOULDBLOCK)
		return bg_error(ctx, BG_EIO, "%s: cannot lock: %s", display, strerror(e));
	if (waited_ms < BG_LOCK_WAIT_MS)
		return bg_error(ctx, BG_EIO, "%s: interrupted while waiting for its lock (%s), which another process "
				"holds; nothing was written to it", display, lock_path);
	return bg_error(ctx, BG_EIO, "%s: cannot lock: another process has held its lock (%s) for %ld s: a "
			"long promotion, or a benchgate stopped (Ctrl-Z) or hung ('fuser -v %s' names it); try again "
			"once it is done", display, lock_path, BG_LOCK_WAIT_MS / 1000, lock_path);
}

void bg_unlock(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

bool bg_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool bg_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Folders nested deeper than this are refused (a loop the walk cannot see). */
#define TREE_MAX_DEPTH 128

struct tree_list {
	char **rel; /* relative paths, malloc'd */
	size_t n, cap;
};

static int cmp_tree_rel(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Adds to l the relative path (under rel, "" at the top) of every regular
 * file in root/rel, through links to files. BG_EIO "DISPLAY/REL: cannot
 * read: REASON" for what cannot be listed or is not a file or a folder.
 */
static int tree_walk(const char *root, const char *display, const char *rel, int depth, struct tree_list *l,
		     struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, full = BG_STRBUF_INIT, sub = BG_STRBUF_INIT;
	struct dirent *e;
	DIR *d;
	int rc = BG_OK;

	bg_strbuf_adds(&dir, root);
	if (*rel)
		bg_strbuf_addf(&dir, "/%s", rel);
	if (depth > TREE_MAX_DEPTH) {
		rc = bg_error(ctx, BG_EIO, "%s/%s: cannot read: folders nested more than %d deep", display, rel,
			      TREE_MAX_DEPTH);
		goto out;
	}
	if (!(d = opendir(dir.buf))) {
		rc = bg_error(ctx, BG_EIO, "%s%s%s: cannot read: %s", display, *rel ? "/" : "", rel, strerror(errno));
		goto out;
	}
	while (rc == BG_OK && (errno = 0, e = readdir(d))) {
		struct stat lst, st;
		const char *why = NULL;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		bg_strbuf_reset(&sub);
		if (*rel)
			bg_strbuf_addf(&sub, "%s/", rel);
		bg_strbuf_adds(&sub, e->d_name);
		bg_strbuf_reset(&full);
		bg_strbuf_addf(&full, "%s/%s", root, sub.buf);
		if (strchr(e->d_name, '\n'))
			why = "its name holds a line break";
		else if (lstat(full.buf, &lst) != 0)
			why = strerror(errno);
		else if (S_ISLNK(lst.st_mode) && stat(full.buf, &st) != 0)
			why = errno == ELOOP ? "a loop of links" : errno == ENOENT ? "a link to nothing" : strerror(errno);
		else if (S_ISLNK(lst.st_mode) && S_ISDIR(st.st_mode))
			why = "a link to a folder (declare the folder it leads to instead)";
		else if (S_ISDIR(lst.st_mode))
			rc = tree_walk(root, display, sub.buf, depth + 1, l, ctx);
		else if (!S_ISREG(S_ISLNK(lst.st_mode) ? st.st_mode : lst.st_mode))
			why = "not a regular file or a folder";
		else {
			if (l->n == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 64;
				l->rel = bg_xrealloc(l->rel, l->cap * sizeof(*l->rel));
			}
			l->rel[l->n++] = bg_xstrdup(sub.buf);
		}
		if (why)
			rc = bg_error(ctx, BG_EIO, "%s/%s: cannot read: %s", display, sub.buf, why);
	}
	if (rc == BG_OK && errno != 0)
		rc = bg_error(ctx, BG_EIO, "%s%s%s: cannot read: %s", display, *rel ? "/" : "", rel, strerror(errno));
	closedir(d);
out:
	bg_strbuf_release(&dir);
	bg_strbuf_release(&full);
	bg_strbuf_release(&sub);
	return rc;
}

void bg_tree_files_free(char **rel, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rel[i]);
	free(rel);
}

int bg_tree_files(const char *path, const char *display, char ***rel, size_t *n, struct bg_ctx *ctx)
{
	struct tree_list l = {0};
	int rc = tree_walk(path, display, "", 0, &l, ctx);

	if (rc) {
		bg_tree_files_free(l.rel, l.n);
		*rel = NULL;
		*n = 0;
		return rc;
	}
	if (l.n > 1) /* an empty folder has no array to sort */
		qsort(l.rel, l.n, sizeof(*l.rel), cmp_tree_rel);
	*rel = l.rel;
	*n = l.n;
	return BG_OK;
}

const char *bg_open_files_advice(int e)
{
	if (e == EMFILE)
		return "benchgate has as many files open as its limit allows; raise the limit (ulimit -n) "
		       "and run it again";
	if (e == ENFILE)
		return "the system has as many files open as it allows; close some programs and run it again";
	return NULL;
}

const char *bg_file_problem(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return S_ISREG(st.st_mode) ? NULL : S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
	if (errno == ENOENT && lstat(path, &st) == 0)
		return "a link to nothing";
	if (errno == ENOENT || errno == ENOTDIR)
		return "";
	return strerror(errno);
}

bool bg_path_stays_below(const char *path)
{
	size_t n = strlen(path);

	return n && path[0] != '/' && strcmp(path, "..") != 0 && strncmp(path, "../", 3) != 0 &&
	       !strstr(path, "/../") && !(n >= 3 && strcmp(path + n - 3, "/..") == 0);
}

void bg_path_join(struct bg_strbuf *out, const char *dir, const char *rel)
{
	if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0) {
		bg_strbuf_adds(out, rel);
		return;
	}
	bg_strbuf_adds(out, dir);
	if (out->len && out->buf[out->len - 1] != '/')
		bg_strbuf_addch(out, '/');
	bg_strbuf_adds(out, rel);
}

char *bg_path_named_later(const char *path)
{
	struct bg_strbuf cur = BG_STRBUF_INIT, next = BG_STRBUF_INIT;
	bool there = true; /* cur is there, links resolved */
	char *base = realpath(path[0] == '/' ? "/" : ".", NULL);

	if (!base)
		return NULL;
	bg_strbuf_adds(&cur, strcmp(base, "/") == 0 ? "" : base);
	free(base);
	/* name by name: one that is there is resolved (a link leads on), and
	 * ".." after it is its real parent; one not there yet will be a folder
	 * benchgate makes, holding no link, so ".." after it is cur again */
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *last = strrchr(cur.buf, '/');
			struct stat st;

			if (last)
				bg_strbuf_setlen(&cur, (size_t)(last - cur.buf));
			/* the parent: there when it was before the name just left */
			there = lstat(cur.len ? cur.buf : "/", &st) == 0;
		} else if (n && !(n == 1 && p[0] == '.')) {
			struct stat st;
			char *real;

			bg_strbuf_reset(&next);
			bg_strbuf_addf(&next, "%s/%.*s", cur.buf, (int)n, p);
			if (there && lstat(next.buf, &st) == 0 && (real = realpath(next.buf, NULL))) {
				bg_strbuf_reset(&cur);
				bg_strbuf_adds(&cur, strcmp(real, "/") == 0 ? "" : real);
				free(real);
			} else {
				bg_strbuf_reset(&cur);
				bg_strbuf_addn(&cur, next.buf, next.len);
				there = false;
			}
		}
		p += n + (p[n] == '/');
	}
	if (!cur.len)
		bg_strbuf_addch(&cur, '/');
	bg_strbuf_release(&next);
	return bg_strbuf_detach(&cur, NULL);
}

void bg_path_add_names(struct bg_strbuf *out, const char *path)
{
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *last = strrchr(out->buf, '/');
			if (last)
				bg_strbuf_setlen(out, (size_t)(last - out->buf));
		} else if (n && !(n == 1 && p[0] == '.')) {
			bg_strbuf_addch(out, '/');
			bg_strbuf_addn(out, p, n);
		}
		p += n + (p[n] == '/');
	}
}

void bg_stops_hold(sigset_t *old)
{
	sigset_t stops;

	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigaddset(&stops, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &stops, old);
}

void bg_stops_release(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
