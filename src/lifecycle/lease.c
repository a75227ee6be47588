/*
 * lease.c - exclusive device leases: a lock plus a readable owner record
 * (see lifecycle.h).
 *
 * The lock is an open-file-description lock (fcntl F_OFD_SETLK, a write
 * lock on the whole of STATE/leases/SLUG.lock), not flock. Both belong to
 * the open file and are dropped by the kernel when the holder dies, but
 * only an OFD lock can be tested without being taken: `lease status` asks
 * with F_OFD_GETLK, which takes nothing. With flock a status had to take a
 * shared lock to look, and a run whose non-blocking attempt came at that
 * moment refused (exit 3) although nobody held the device. Retrying the
 * attempt for a while would only have made that rarer; a test that takes
 * nothing makes it impossible. flock and OFD locks do not see each other,
 * so every benchgate that runs on one project must be of this kind.
 */
#include "benchgate/lifecycle.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/provenance.h"
#include "lifecycle/lock_internal.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void bg_lifecycle_state_dir(const struct bg_config *cfg, struct bg_strbuf *out)
{
	const char *spec = cfg->store;
	struct bg_strbuf file = BG_STRBUF_INIT;
	char *slash;

	if (strncmp(spec, "sqlite:", 7) == 0) {
		bg_config_path(cfg, &file, spec + 7);
		slash = strrchr(file.buf, '/');
		if (slash)
			bg_strbuf_setlen(&file, (size_t)(slash - file.buf));
		bg_strbuf_addn(out, file.buf, file.len);
	} else {
		bg_config_path(cfg, out, ".benchgate");
	}
	bg_strbuf_release(&file);
}

_Static_assert(BG_STATE_EXCLUDES_MAX == 1 + 4 + BG_STATE_FILES,
	       "the state folders, the store and its three side files, and the state files");

size_t bg_lifecycle_state_excludes(const struct bg_config *cfg, char **out, size_t max)
{
	const char *spec = cfg->store, *path, *slash;
	static const char *const beside[] = {"", "-journal", "-wal", "-shm"};
	size_t n = 0;

	/* every .benchgate folder of the repository: this project's state by
	 * default, and any other project's beside or above it */
	if (n < max)
		out[n++] = bg_xstrdup(BG_GIT_EXCLUDE_STATE_FOLDERS);
	if (strncmp(spec, "sqlite:", 7) != 0)
		return n;
	/* an absolute path inside the project is the relative one it names; a
	 * folder that may lie outside the project cannot be named to git from
	 * it (git refuses a pathspec outside the repository) */
	if (!(path = bg_config_in_project(cfg, spec + 7)))
		return n;
	slash = strrchr(path, '/');
	if (slash && !(slash - path == 1 && path[0] == '.')) {
		char *dir = bg_xstrndup(path, (size_t)(slash - path));
		const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
		bool state_folder = strcmp(base, ".benchgate") == 0;

		free(dir);
		if (state_folder) /* (left out whole above) */
			return n;
	}
	/* the store's files and the rest of benchgate's state beside it
	 * (state_dir is the store's folder), never that folder itself: it may
	 * hold sources (a store in benchmarks/) */
	for (size_t k = 0; k < 4 + BG_STATE_FILES && n < max; k++) {
		struct bg_strbuf sb = BG_STRBUF_INIT;

		if (k < 4)
			bg_strbuf_addf(&sb, "%s%s", path, beside[k]);
		else
			bg_strbuf_addf(&sb, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path,
				       bg_state_files[k - 4].name);
		out[n++] = bg_provenance_glob_escape(sb.buf);
		bg_strbuf_release(&sb);
	}
	return n;
}

void bg_lifecycle_leases_dir(const struct bg_config *cfg, struct bg_strbuf *out)
{
	bg_lifecycle_state_dir(cfg, out);
	bg_strbuf_adds(out, "/leases");
}

int bg_lifecycle_lock(const struct bg_config *cfg, const char *name, const char *display, int *fd,
		      struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	*fd = -1;
	bg_lifecycle_state_dir(cfg, &path);
	if ((rc = bg_mkdirs(path.buf, ctx)) == BG_OK) {
		bg_strbuf_addf(&path, "/%s", name);
		rc = bg_lock_file(path.buf, display ? display : path.buf, fd, ctx);
	}
	bg_strbuf_release(&path);
	return rc;
}

void bg_lifecycle_now_rfc3339(struct bg_strbuf *out)
{
	struct timeval tv;
	struct tm tm;
	char buf[64];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	bg_strbuf_addf(out, "%s.%06ldZ", buf, (long)tv.tv_usec);
}

static int lease_paths(const struct bg_config *cfg, const char *slug, struct bg_strbuf *dir,
		       struct bg_ctx *ctx)
{
	int rc;

	/* benchgate.json's slugs are checked when it is loaded: this guards
	 * the files against any other caller (a path, '..') */
	if (!bg_config_slug_valid(slug))
		return bg_error(ctx, BG_ECHECK, "device slug '%s' cannot name a device lease; use %s", slug,
				BG_SLUG_RULE);
	bg_lifecycle_leases_dir(cfg, dir);
	if ((rc = bg_mkdirs_made(dir->buf, bg_config_relative(cfg, dir->buf), NULL, ctx)))
		bg_error(ctx, rc, "%s; the device leases are kept in %s: remove or rename what is in the way, or let benchgate write there",
			 bg_ctx_message(ctx), bg_config_relative(cfg, dir->buf));
	return rc;
}

const char *bg_file_kind(mode_t mode)
{
	return S_ISDIR(mode)   ? "a directory"
	       : S_ISLNK(mode)  ? "a link"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "not a regular file";
}

/* BG_EIO: "REL: is a FIFO, not a regular file; remove it (...)". */
static int not_regular(const char *rel, mode_t mode, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EIO, "%s: is %s, not a regular file; remove it (benchgate keeps a device's lease there)",
			rel, bg_file_kind(mode));
}

/*
 * Opens a lease file, never through a link, never waiting on a FIFO and
 * never opening a device (lstat first, then O_NOFOLLOW | O_NONBLOCK and
 * fstat for one put there meanwhile), and keeps it only when it is a
 * regular file. BG_OK with *fd, or *fd -1 when it is absent (and flags do
 * not create it); else BG_EIO with a message naming it from the project
 * root (cfg NULL: as given).
 */
static int open_lease_file(const struct bg_config *cfg, const char *path, int flags, int *fd,
			   struct bg_ctx *ctx)
{
	const char *rel = cfg ? bg_config_relative(cfg, path) : path;
	struct stat st;
	int e, rc;

	*fd = -1;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return not_regular(rel, st.st_mode, ctx);
	*fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	if (*fd < 0) {
		e = errno;
		if (e == ENOENT && !(flags & O_CREAT))
			return BG_OK;
		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return not_regular(rel, st.st_mode, ctx);
		return bg_error(ctx, BG_EIO, "%s: cannot open: %s; let benchgate read and write its leases folder",
				rel, strerror(e));
	}
	rc = fstat(*fd, &st) != 0   ? bg_error(ctx, BG_EIO, "%s: cannot examine: %s", rel, strerror(errno))
	     : !S_ISREG(st.st_mode) ? not_regular(rel, st.st_mode, ctx)
				    : BG_OK;
	if (rc) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

static const char *field(const json_t *o, const char *key)
{
	return bg_json_str_or(json_object_get(o, key), "?");
}

static void describe_owner(struct bg_strbuf *out, const json_t *o)
{
	bg_strbuf_addf(out, "experiment %s (pid %lld on %s, user %s, since %s)", field(o, "experiment_id"),
		       (long long)json_integer_value(json_object_get(o, "pid")), field(o, "host"),
		       field(o, "user"), field(o, "started"));
}

bool bg_same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A lock of type on the whole file, without waiting: 1 taken, 0 a
 * conflicting lock is held by another open file, -1 failed (errno). */
static int ofd_lock(int fd, short type)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 1;
	return errno == EAGAIN || errno == EACCES ? 0 : -1;
}

/* The lease lock (see the contract above and lock_internal.h). */
int bg_ofd_lock_take(int fd)
{
	return ofd_lock(fd, F_WRLCK);
}

void bg_ofd_lock_drop(int fd)
{
	struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

	fcntl(fd, F_OFD_SETLK, &fl);
}

int bg_ofd_lock_share(int fd)
{
	return ofd_lock(fd, F_RDLCK);
}

/* F_OFD_GETLK only reports a lock that would conflict; it takes none. */
int bg_ofd_lock_test(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};

	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return -1;
	return fl.l_type == F_UNLCK ? 0 : fl.l_type == F_RDLCK ? 2 : 1;
}

/* The start of process pid in seconds since the epoch, or -1 when unknown
 * (/proc/PID/stat's starttime after the boot time of /proc/stat). */
static double process_start(pid_t pid)
{
	char buf[1024];
	const char *p = bg_proc_stat_tail(pid, buf, sizeof(buf));
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	int field;

	if (!p)
		return -1;
	for (field = 3; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || sscanf(p, "%llu", &ticks) != 1)
		return -1;
	if (!(f = fopen("/proc/stat", "re")))
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %llu", &btime) == 1)
			break;
	fclose(f);
	if (!btime || hz <= 0)
		return -1;
	return (double)btime + (double)ticks / (double)hz;
}

/*
 * Seconds since the epoch of an RFC 3339 time (YYYY-MM-DDTHH:MM:SS, digits
 * in every place, T or t, an optional fraction, then Z, z or an offset
 * +HH:MM / -HH:MM), or -1 for anything else: a date that does not exist
 * (2026-02-30), an hour of 24, an offset beyond 23:59, text after it.
 * benchgate writes UTC with Z.
 */
static double rfc3339_seconds(const char *s)
{
	struct tm tm, back;
	double frac = 0;
	long offset = 0;
	time_t t;
	const char *end;

	/* YYYY-MM-DDTHH:MM:SS by position: strptime takes " 3" for a day */
	if (!s || strlen(s) < 20)
		return -1;
	for (int i = 0; i < 19; i++) {
		static const char shape[] = "dddd-dd-ddTdd:dd:dd";
		bool ok = shape[i] == 'd' ? isdigit((unsigned char)s[i]) != 0
					  : shape[i] == 'T' ? (s[i] == 'T' || s[i] == 't') : s[i] == shape[i];

		if (!ok)
			return -1;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = atoi(s) - 1900;
	tm.tm_mon = (s[5] - '0') * 10 + (s[6] - '0') - 1;
	tm.tm_mday = (s[8] - '0') * 10 + (s[9] - '0');
	tm.tm_hour = (s[11] - '0') * 10 + (s[12] - '0');
	tm.tm_min = (s[14] - '0') * 10 + (s[15] - '0');
	tm.tm_sec = (s[17] - '0') * 10 + (s[18] - '0');
	end = s + 19;
	if (*end == '.') {
		const char *f = end + 1;

		while (isdigit((unsigned char)*f))
			f++;
		if (f == end + 1)
			return -1;
		frac = strtod(end, NULL);
		end = f;
	}
	if (*end == '+' || *end == '-') {
		if (!isdigit((unsigned char)end[1]) || !isdigit((unsigned char)end[2]) || end[3] != ':' ||
		    !isdigit((unsigned char)end[4]) || !isdigit((unsigned char)end[5]) || end[6])
			return -1;
		offset = ((end[1] - '0') * 10 + (end[2] - '0')) * 3600L + ((end[4] - '0') * 10 + (end[5] - '0')) * 60L;
		if (end[1] > '2' || (end[1] == '2' && end[2] > '3') || end[4] > '5')
			return -1;
		if (*end == '-')
			offset = -offset;
	} else if (!((*end == 'Z' || *end == 'z') && !end[1])) {
		return -1;
	}
	/* a day or time that does not exist comes back otherwise */
	back = tm;
	t = timegm(&back);
	if (back.tm_year != tm.tm_year || back.tm_mon != tm.tm_mon || back.tm_mday != tm.tm_mday ||
	    back.tm_hour != tm.tm_hour || back.tm_min != tm.tm_min || back.tm_sec != tm.tm_sec)
		return -1;
	return (double)(t - offset) + frac;
}

bool bg_pid_alive_since(pid_t pid, const char *when)
{
	double began, written;

	if (!bg_pid_alive(pid))
		return false;
	began = process_start(pid);
	written = rfc3339_seconds(when);
	/* began may be up to a second early (btime is whole seconds), never
	 * late: a start after when is surely another process */
	return began < 0 || written < 0 || began <= written;
}

/*
 * Whether rec is an owner record that can be acted on: an object with an
 * integer pid in 1..INT_MAX (a pid_t), a host and a started time that
 * reads as RFC 3339. Anything else would be taken for a holder that never
 * existed, or a live one for ever (a pid truncated to another, a start
 * that cannot be compared).
 */
static bool record_valid(const json_t *rec)
{
	const json_t *pid = json_object_get(rec, "pid");

	return json_is_object(rec) && json_is_integer(pid) && json_integer_value(pid) >= 1 &&
	       json_integer_value(pid) <= INT_MAX && json_is_string(json_object_get(rec, "host")) &&
	       json_is_string(json_object_get(rec, "started")) &&
	       rfc3339_seconds(json_string_value(json_object_get(rec, "started"))) >= 0;
}

/* text as JSON holds it: bytes that are not UTF-8 as \xNN (bg_json_text) */
static void add_json_text(struct bg_strbuf *out, const char *text)
{
	json_t *t = bg_json_text(text);

	bg_strbuf_adds(out, json_string_value(t));
	json_decref(t);
}

void bg_lifecycle_hostname(struct bg_strbuf *out)
{
	char host[256] = "";

	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "unknown");
	add_json_text(out, host);
}

void bg_lifecycle_username(struct bg_strbuf *out)
{
	struct passwd *pw = getpwuid(getuid());

	add_json_text(out, pw && pw->pw_name ? pw->pw_name : "unknown");
}

/*
 * Whether the process an owner record names still runs here: a valid
 * record (record_valid), same host, a live pid other than ours, and (where /proc tells) a process that started
 * before the record was written, so that a reused pid is not taken for the
 * holder.
 */
static bool owner_alive(const json_t *rec)
{
	struct bg_strbuf host = BG_STRBUF_INIT;
	json_int_t pid = json_integer_value(json_object_get(rec, "pid"));
	const char *h = json_string_value(json_object_get(rec, "host"));
	bool here;

	if (!record_valid(rec))
		return false;
	bg_lifecycle_hostname(&host);
	here = strcmp(h, host.buf) == 0;
	bg_strbuf_release(&host);
	return here && pid != (json_int_t)getpid() &&
	       bg_pid_alive_since((pid_t)pid, json_string_value(json_object_get(rec, "started")));
}

/* An owner record larger than this is not one (a record is some 200 bytes). */
#define OWNER_MAX 65536

/*
 * Reads the owner record at path: BG_OK with *rec a valid record
 * (record_valid) or NULL, *unreadable telling whether a file was there
 * that is not one (not JSON, not a record); BG_EIO when it is not a
 * regular file or cannot be read.
 */
static int read_owner(const struct bg_config *cfg, const char *path, json_t **rec, bool *unreadable,
		      struct bg_ctx *ctx)
{
	struct bg_strbuf text = BG_STRBUF_INIT;
	json_error_t err;
	char buf[4096];
	ssize_t n = 0;
	int fd, rc;

	*rec = NULL;
	*unreadable = false;
	if ((rc = open_lease_file(cfg, path, O_RDONLY, &fd, ctx)) || fd < 0)
		return rc;
	while (text.len <= OWNER_MAX && ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			bg_strbuf_addn(&text, buf, (size_t)n);
	if (n < 0)
		rc = bg_error(ctx, BG_EIO, "%s: cannot read: %s; let benchgate read its leases folder",
			      cfg ? bg_config_relative(cfg, path) : path, strerror(errno));
	else if (text.len <= OWNER_MAX)
		*rec = json_loadb(text.buf, text.len, 0, &err);
	close(fd);
	bg_strbuf_release(&text);
	if (!rc && !record_valid(*rec)) {
		json_decref(*rec);
		*rec = NULL;
		*unreadable = true;
	}
	return rc;
}

/*
 * Removes dir/SLUG.json.tmp.PID (bg_file_write_atomic's temporary of the
 * owner record) where PID is no live process: left by a run killed while
 * it wrote its record. Only under the device's lock, which every writer of
 * that record holds; nothing else in the folder is touched, nor a
 * directory of that name.
 */
static void remove_dead_temporaries(const char *dir, const char *slug)
{
	struct bg_strbuf owner = BG_STRBUF_INIT;
	const char *bases[2];

	bg_strbuf_addf(&owner, "%s.json", slug);
	bases[0] = owner.buf;
	bases[1] = NULL;
	bg_atomic_remove_dead(dir, bases);
	bg_strbuf_release(&owner);
}

int bg_lease_acquire(const struct bg_config *cfg, const char *slug, const char *experiment_id,
		     struct bg_lease *lease, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, lock = BG_STRBUF_INIT, owner = BG_STRBUF_INIT;
	struct bg_strbuf when = BG_STRBUF_INIT, host = BG_STRBUF_INIT, user = BG_STRBUF_INIT;
	json_t *rec, *old = NULL;
	bool unreadable = false;
	char *text;
	int fd, rc, locked;

	memset(lease, 0, sizeof(*lease));
	lease->fd = -1;
	lease->machine_fd = -1;
	if ((rc = lease_paths(cfg, slug, &dir, ctx))) {
		bg_strbuf_release(&dir);
		return rc;
	}
	bg_strbuf_addf(&lock, "%s/%s.lock", dir.buf, slug);
	bg_strbuf_addf(&owner, "%s/%s.json", dir.buf, slug);
	for (int tries = 0;; tries++) {
		if ((rc = open_lease_file(cfg, lock.buf, O_RDWR | O_CREAT, &fd, ctx)))
			goto fail;
		if ((locked = bg_ofd_lock_take(fd)) < 0) {
			rc = bg_error(ctx, BG_EIO, "%s: cannot lock: %s; keep benchgate's state folder on a file system with file locks",
				      bg_config_relative(cfg, lock.buf), strerror(errno));
			close(fd);
			goto fail;
		}
		/* a lock taken on a file that was removed or replaced meanwhile
		 * excludes nobody: take the one the path names now */
		if (!locked || bg_same_file(fd, lock.buf))
			break;
		close(fd);
		if (tries == 10) {
			rc = bg_error(ctx, BG_EIO, "%s: the lease lock keeps being removed or replaced; leave the leases folder alone while benchgate runs",
				      bg_config_relative(cfg, lock.buf));
			goto fail;
		}
	}
	if (!locked) {
		struct bg_strbuf who = BG_STRBUF_INIT;
		struct bg_ctx c2;
		int bad = BG_OK;

		close(fd);
		bg_ctx_init(&c2);
		/* the holder writes its record just after locking: wait briefly for it */
		for (int tries = 0; tries < 40; tries++) {
			const char *eid;

			json_decref(old);
			if ((bad = read_owner(cfg, owner.buf, &old, &unreadable, &c2)))
				break;
			eid = json_string_value(json_object_get(old, "experiment_id"));
			if (eid && eid[0] != '(')
				break;
			usleep(50000);
		}
		if (bad)
			bg_strbuf_addf(&who, "another process (its owner record cannot be read: %s)", bg_ctx_message(&c2));
		else if (old)
			describe_owner(&who, old);
		else /* the lock is the truth: held, whatever the record says */
			bg_strbuf_adds(&who, unreadable ? "another process (its owner record is unreadable)"
							: "another process (its owner record is not readable yet)");
		rc = bg_error(ctx, BG_EPRECOND,
			      "device '%s' is leased by %s; wait for it to finish or see 'benchgate lease status'",
			      slug, who.buf);
		json_decref(old);
		bg_strbuf_release(&who);
		bg_ctx_release(&c2);
		goto fail;
	}
	/* under the lock: the record must be one benchgate can read and replace */
	if ((rc = read_owner(cfg, owner.buf, &old, &unreadable, ctx))) {
		bg_ofd_lock_drop(fd);
		close(fd);
		goto fail;
	}
	if (old && owner_alive(old)) {
		/* the lock was free only because its file was removed while the
		 * holder ran: the device is still in use */
		struct bg_strbuf who = BG_STRBUF_INIT;

		describe_owner(&who, old);
		rc = bg_error(ctx, BG_EPRECOND,
			      "device '%s' is leased by %s, whose lock file was removed while it ran (its session will be blocked); wait for it to finish or see 'benchgate lease status'",
			      slug, who.buf);
		bg_strbuf_release(&who);
		json_decref(old);
		bg_ofd_lock_drop(fd);
		close(fd);
		goto fail;
	}
	if (old) { /* the lock was free, so its writer died without releasing */
		lease->replaced_stale = true;
		lease->stale_owner = old;
	}
	/* the device is free; the machine must be too (a run of another
	 * project, or of another checkout of this one) */
	if ((rc = bg_machine_lease_take(cfg, slug, experiment_id, &lease->machine_fd, &lease->machine_path, ctx))) {
		bg_ofd_lock_drop(fd);
		close(fd);
		goto fail;
	}
	/* a record that is not one names no holder: with the lock free, it is replaced */
	lease->replaced_unreadable = unreadable;
	remove_dead_temporaries(dir.buf, slug);
	bg_lifecycle_hostname(&host);
	bg_lifecycle_username(&user);
	bg_lifecycle_now_rfc3339(&when);
	rec = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s}", "device", slug, "experiment_id", experiment_id,
			"pid", (json_int_t)getpid(), "host", host.buf, "user", user.buf, "started", when.buf);
	bg_strbuf_release(&host);
	bg_strbuf_release(&user);
	text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(rec);
	rc = bg_file_write_atomic(owner.buf, bg_config_relative(cfg, owner.buf), text, strlen(text), ctx);
	free(text);
	if (rc) {
		int e = errno;
		bg_error(ctx, rc, "%s; %s", bg_ctx_message(ctx),
			 e == ENOSPC || e == EDQUOT ? "free some space on that file system"
						    : "let benchgate write its leases folder");
		bg_ofd_lock_drop(fd);
		close(fd);
		goto fail;
	}
	lease->fd = fd;
	lease->slug = bg_xstrdup(slug);
	lease->lock_path = bg_strbuf_detach(&lock, NULL);
	lease->owner_path = bg_strbuf_detach(&owner, NULL);
	bg_strbuf_release(&when);
	bg_strbuf_release(&dir);
	return BG_OK;
fail:
	bg_machine_lease_drop(lease->machine_fd);
	lease->machine_fd = -1;
	free(lease->machine_path);
	lease->machine_path = NULL;
	bg_strbuf_release(&dir);
	bg_strbuf_release(&lock);
	bg_strbuf_release(&owner);
	bg_strbuf_release(&when);
	json_decref(lease->stale_owner);
	lease->stale_owner = NULL;
	return rc;
}

void bg_lease_set_experiment(struct bg_lease *lease, const char *experiment_id)
{
	bool unreadable;
	json_t *rec;
	char *text;

	if (lease->fd >= 0)
		bg_machine_lease_set_experiment(lease->machine_fd, lease->machine_path, experiment_id);
	if (lease->fd < 0 || read_owner(NULL, lease->owner_path, &rec, &unreadable, NULL) || !rec)
		return;
	json_object_set_new(rec, "experiment_id", json_string(experiment_id));
	text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	bg_file_write_atomic(lease->owner_path, NULL, text, strlen(text), NULL);
	free(text);
	json_decref(rec);
}

bool bg_lease_held(const struct bg_lease *lease)
{
	return lease->fd >= 0 && bg_same_file(lease->fd, lease->lock_path);
}

bool bg_lease_machine_held(const struct bg_lease *lease)
{
	return lease->fd >= 0 && lease->machine_fd >= 0 && bg_same_file(lease->machine_fd, lease->machine_path);
}

void bg_lease_release(struct bg_lease *lease)
{
	if (lease->fd >= 0) {
		bool unreadable;
		json_t *rec;

		/* the record is ours unless the lock file was replaced and
		 * another process has written its own since (or put something
		 * else than a file there, which stays for a person to see) */
		if (read_owner(NULL, lease->owner_path, &rec, &unreadable, NULL) == BG_OK &&
		    (!rec || json_integer_value(json_object_get(rec, "pid")) == (json_int_t)getpid()))
			unlink(lease->owner_path);
		json_decref(rec);
		bg_ofd_lock_drop(lease->fd);
		close(lease->fd);
		bg_machine_lease_drop(lease->machine_fd);
	}
	free(lease->machine_path);
	free(lease->slug);
	free(lease->lock_path);
	free(lease->owner_path);
	json_decref(lease->stale_owner);
	memset(lease, 0, sizeof(*lease));
	lease->fd = -1;
	lease->machine_fd = -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bg_lease_status(const struct bg_config *cfg, json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	*out = json_array();
	bg_lifecycle_leases_dir(cfg, &dir);
	d = opendir(dir.buf);
	if (!d) {
		/* none yet; one that cannot be listed is never taken for none */
		int rc = errno == ENOENT ? BG_OK
					 : bg_error(ctx, BG_EIO, "%s: cannot list the device leases: %s; it must be a folder benchgate can read (remove or rename what is there)",
						    bg_config_relative(cfg, dir.buf), strerror(errno));
		bg_strbuf_release(&dir);
		return rc;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		/* a device has a lock file, or only an owner record once its
		 * lock file was removed */
		if (len <= 5 || (strcmp(e->d_name + len - 5, ".lock") != 0 &&
				 strcmp(e->d_name + len - 5, ".json") != 0))
			continue;
		names = bg_xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = bg_xstrndup(e->d_name, len - 5);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && strcmp(names[i], names[i + 1]) == 0) {
			free(names[i]);
			continue;
		}
		struct bg_strbuf lock = BG_STRBUF_INIT, owner = BG_STRBUF_INIT;
		struct bg_ctx c2;
		json_t *rec = NULL;
		const char *state, *note = NULL;
		bool unreadable = false;
		int fd, bad, held = 0;

		bg_strbuf_addf(&lock, "%s/%s.lock", dir.buf, names[i]);
		bg_strbuf_addf(&owner, "%s/%s.json", dir.buf, names[i]);
		bg_ctx_init(&c2);
		/* asked, never taken: a status must not make a run refuse */
		if (!(bad = open_lease_file(cfg, lock.buf, O_RDONLY, &fd, &c2)) && fd >= 0) {
			int w;

			/* a lock that cannot be tested cannot be taken either */
			if ((held = bg_ofd_lock_test(fd)) < 0)
				bad = bg_error(&c2, BG_EIO, "%s: cannot test the lock: %s; keep benchgate's state folder on a file system with file locks",
					       bg_config_relative(cfg, lock.buf), strerror(errno));
			close(fd);
			/* nor one a run cannot open as it does, read-write (another
			 * user's file of mode 644): unusable, with the run's words */
			if (!bad && !(bad = open_lease_file(cfg, lock.buf, O_RDWR, &w, &c2)) && w >= 0)
				close(w);
		}
		if (!bad)
			bad = read_owner(cfg, owner.buf, &rec, &unreadable, &c2);
		if (bad) { /* a file that is not a lease file: no run can use the device */
			state = "unusable";
			note = bg_ctx_message(&c2);
		} else if (held) { /* the lock is the truth, whatever the record says */
			state = "held";
			note = unreadable ? "its owner record is unreadable" : NULL;
		} else if (unreadable) {
			state = "stale";
			note = "an unreadable owner record; the next run replaces it";
		} else { /* a free lock whose record names a live holder: the
			  * lock file was removed while that holder ran */
			state = !rec ? "free" : owner_alive(rec) ? "held" : "stale";
		}
		json_array_append_new(*out, json_pack("{s:s, s:s, s:o, s:o}", "device", names[i], "state", state,
						      "owner", rec ? rec : json_null(), "reason",
						      note ? json_string(note) : json_null()));
		bg_ctx_release(&c2);
		bg_strbuf_release(&lock);
		bg_strbuf_release(&owner);
		free(names[i]);
	}
	free(names);
	bg_strbuf_release(&dir);
	return BG_OK;
}
