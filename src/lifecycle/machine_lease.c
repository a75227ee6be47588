/*
 * machine_lease.c - the machine lease: one lock for the whole machine,
 * which every run takes beside its device lease, so that runs of different
 * projects (two checkouts, two users, two CI runners on one host) never
 * measure at once (see lifecycle.h).
 *
 * The lock file is shared by every user of the machine, in a folder each of
 * them may write (/run/lock or /tmp: mode 1777). So it is never replaced
 * or removed, only opened: in a sticky folder another user could neither
 * rename a record over it nor remove it, and the kernel refuses an
 * O_CREAT open of another user's file there (fs.protected_regular). The
 * holder's record is the file's own content, written under the lock and
 * emptied at release; the lock alone says whether the machine is held.
 * Diagnostic sessions (measure) hold it shared (a read lock): they measure
 * beside each other, never beside a run.
 */
#include "benchgate/lifecycle.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "lifecycle/lock_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MACHINE_LOCK_NAME "benchgate-machine.lock"
#define RECORD_MAX 65536 /* a record is some 300 bytes */

int bg_machine_lease_path(struct bg_strbuf *out, struct bg_ctx *ctx)
{
	const char *env = getenv("BENCHGATE_MACHINE_LOCK");
	struct stat st;

	if (env && *env) {
		if (env[0] != '/')
			return bg_error(ctx, BG_EPRECOND,
					"BENCHGATE_MACHINE_LOCK ('%s') must be an absolute path: every run on this machine must name the same file",
					env);
		bg_strbuf_adds(out, env);
		return BG_OK;
	}
	/* where every user may create a file (mode 1777); the same answer for
	 * every user of the machine */
	if (stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 01777) == 01777)
		bg_strbuf_adds(out, "/run/lock/" MACHINE_LOCK_NAME);
	else
		bg_strbuf_adds(out, "/tmp/" MACHINE_LOCK_NAME);
	return BG_OK;
}

/* The user that owns path's file, for a message ("uid N" when unnamed). */
static void file_owner(const char *path, struct bg_strbuf *out)
{
	struct stat st;
	struct passwd *pw;

	if (lstat(path, &st) != 0)
		bg_strbuf_adds(out, "another user");
	else if ((pw = getpwuid(st.st_uid)) && pw->pw_name)
		bg_strbuf_addf(out, "user %s", pw->pw_name);
	else
		bg_strbuf_addf(out, "uid %ld", (long)st.st_uid);
}

/* BG_EIO: PATH is not a regular file. A path the user named in
 * BENCHGATE_MACHINE_LOCK (such as /tmp) is never to be removed: the
 * variable is what must change. */
static int not_regular(const char *path, mode_t mode, struct bg_ctx *ctx)
{
	const char *env = getenv("BENCHGATE_MACHINE_LOCK");

	if (env && strcmp(env, path) == 0)
		return bg_error(ctx, BG_EIO,
				"%s: is %s, not a regular file; point BENCHGATE_MACHINE_LOCK at a file instead (benchgate keeps the machine lease in the file it names, and makes it when absent)",
				path, bg_file_kind(mode));
	return bg_error(ctx, BG_EIO,
			"%s: is %s, not a regular file; remove it (benchgate keeps the machine lease there)", path,
			bg_file_kind(mode));
}

/*
 * Opens the lock file: read-write when create, else read-only (*fd -1 when
 * it is absent). Never through a link, never waiting on a FIFO; only a
 * regular file is kept. A file this call creates is made writable by
 * every user (whatever the umask), so that any user's run can lock it.
 */
static int open_lock(const char *path, bool create, int *fd, struct bg_ctx *ctx)
{
	const int flags = (create ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int e = 0;

	*fd = -1;
	for (int tries = 0; tries < 10 && *fd < 0; tries++) {
		/* first without O_CREAT: in a sticky folder the kernel may refuse
		 * an O_CREAT open of a file another user made */
		if ((*fd = open(path, flags)) >= 0)
			break;
		if ((e = errno) != ENOENT)
			break;
		if (!create)
			return BG_OK;
		if ((*fd = open(path, flags | O_CREAT | O_EXCL, 0666)) >= 0) {
			(void)fchmod(*fd, 0666);
			break;
		}
		if ((e = errno) != EEXIST) /* made meanwhile by another run: open that */
			break;
	}
	if (*fd < 0) {
		struct bg_strbuf who = BG_STRBUF_INIT;
		int rc;

		if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return not_regular(path, st.st_mode, ctx);
		if (e == EACCES || e == EPERM) {
			file_owner(path, &who);
			rc = bg_error(ctx, BG_EIO,
				      "%s: cannot open the machine lease: %s; %s made it and it must be a file every user of benchgate on this machine can write: ask them (or root) to run 'chmod 666 %s', or set BENCHGATE_MACHINE_LOCK to another file",
				      path, strerror(e), who.buf, path);
		} else {
			rc = bg_error(ctx, BG_EIO,
				      "%s: cannot open the machine lease: %s; it must be a file in a folder every user of benchgate on this machine can write (or set BENCHGATE_MACHINE_LOCK to one)",
				      path, strerror(e));
		}
		bg_strbuf_release(&who);
		return rc;
	}
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int rc = fstat(*fd, &st) != 0 ? bg_error(ctx, BG_EIO, "%s: cannot examine: %s", path, strerror(errno))
					       : not_regular(path, st.st_mode, ctx);
		close(*fd);
		*fd = -1;
		return rc;
	}
	return BG_OK;
}

/* The record the lock file holds: an object with an integer pid, a host
 * and a start, or NULL (empty, half written, or not a record). */
static json_t *read_record(int fd)
{
	char buf[RECORD_MAX];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	json_error_t err;
	json_t *rec;

	if (n <= 0 || (size_t)n == sizeof(buf))
		return NULL;
	rec = json_loadb(buf, (size_t)n, 0, &err);
	if (!json_is_object(rec) || !json_is_integer(json_object_get(rec, "pid")) ||
	    !json_is_string(json_object_get(rec, "host")) || !json_is_string(json_object_get(rec, "started"))) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* The record as the lock file holds it, written whole at offset 0. */
static int write_record(int fd, const char *path, json_t *rec, struct bg_ctx *ctx)
{
	char *text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
	size_t len = strlen(text), done = 0;
	int rc = BG_OK;

	if (ftruncate(fd, 0) != 0) {
		rc = bg_error(ctx, BG_EIO, "%s: cannot write the machine lease: %s", path, strerror(errno));
		goto out;
	}
	while (done < len) {
		ssize_t n = pwrite(fd, text + done, len - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			rc = bg_error(ctx, BG_EIO, "%s: cannot write the machine lease: %s%s", path, strerror(e),
				      e == ENOSPC || e == EDQUOT ? "; free some space on that file system" : "");
			goto out;
		}
		done += (size_t)n;
	}
out:
	free(text);
	return rc;
}

static const char *field(const json_t *o, const char *key)
{
	return bg_json_str_or(json_object_get(o, key), "?");
}

void bg_machine_lease_describe(struct bg_strbuf *out, const json_t *rec)
{
	bg_strbuf_addf(out, "experiment %s of the project at %s (pid %lld on %s, user %s, since %s)",
		       field(rec, "experiment_id"), field(rec, "project"),
		       (long long)json_integer_value(json_object_get(rec, "pid")), field(rec, "host"),
		       field(rec, "user"), field(rec, "started"));
}

int bg_machine_lease_take(const struct bg_config *cfg, const char *slug, const char *experiment_id,
			  int *fd_out, char **path_out, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, when = BG_STRBUF_INIT, host = BG_STRBUF_INIT,
			 user = BG_STRBUF_INIT;
	json_t *rec;
	int fd = -1, rc, locked = 0;
	bool shared = false;

	*fd_out = -1;
	*path_out = NULL;
	if ((rc = bg_machine_lease_path(&path, ctx)))
		goto out;
	for (int tries = 0;; tries++) {
		if ((rc = open_lock(path.buf, true, &fd, ctx)))
			goto out;
		if ((locked = bg_ofd_lock_take(fd)) < 0) {
			rc = bg_error(ctx, BG_EIO, "%s: cannot lock the machine lease: %s; set BENCHGATE_MACHINE_LOCK to a file on a local file system with file locks",
				      path.buf, strerror(errno));
			goto out;
		}
		if (!locked) {
			int held = bg_ofd_lock_test(fd);

			/* diagnostic sessions share it (none of them a run); a lock
			 * released between the attempt and the test is tried again */
			shared = held == 2;
			if (held != 0)
				break;
		} else if (bg_same_file(fd, path.buf)) { /* not a file removed meanwhile */
			break;
		}
		close(fd);
		fd = -1;
		if (tries == 10) {
			rc = bg_error(ctx, BG_EIO, "%s: the machine lease keeps being removed, replaced or taken and released; leave it alone while benchgate runs",
				      path.buf);
			goto out;
		}
	}
	if (shared) {
		rc = bg_error(ctx, BG_EPRECOND,
			      "this machine is measuring a diagnostic session ('benchgate measure'), which shares the machine lease with other diagnostic sessions but not with a run, so that neither disturbs the other's timings; wait for it to finish or see 'benchgate lease status' (the lock: %s)",
			      path.buf);
		goto out;
	}
	if (!locked) {
		struct bg_strbuf who = BG_STRBUF_INIT;

		/* the holder writes its record just after locking: wait briefly for it */
		rec = NULL;
		for (int tries = 0; tries < 40; tries++) {
			const char *eid;

			json_decref(rec);
			rec = read_record(fd);
			eid = json_string_value(json_object_get(rec, "experiment_id"));
			if (eid && eid[0] != '(')
				break;
			usleep(50000);
		}
		if (rec)
			bg_machine_lease_describe(&who, rec);
		else
			bg_strbuf_adds(&who, "another process (its record is not readable yet)");
		rc = bg_error(ctx, BG_EPRECOND,
			      "this machine is leased by %s: one run measures at a time on a machine, whatever its project; wait for it to finish or see 'benchgate lease status' (the lock: %s)",
			      who.buf, path.buf);
		json_decref(rec);
		bg_strbuf_release(&who);
		goto out;
	}
	bg_lifecycle_hostname(&host);
	bg_lifecycle_username(&user);
	bg_lifecycle_now_rfc3339(&when);
	rec = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:s}", "project", cfg->root, "device", slug,
			"experiment_id", experiment_id, "pid", (json_int_t)getpid(), "host", host.buf, "user",
			user.buf, "started", when.buf);
	rc = write_record(fd, path.buf, rec, ctx);
	json_decref(rec);
	if (rc) {
		bg_ofd_lock_drop(fd);
		goto out;
	}
	*fd_out = fd;
	fd = -1;
	*path_out = bg_strbuf_detach(&path, NULL);
out:
	if (fd >= 0)
		close(fd);
	bg_strbuf_release(&path);
	bg_strbuf_release(&when);
	bg_strbuf_release(&host);
	bg_strbuf_release(&user);
	return rc;
}

int bg_machine_lease_share(int *fd_out, bool *run_holds, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int fd = -1, rc, got;

	*fd_out = -1;
	*run_holds = false;
	if ((rc = bg_machine_lease_path(&path, ctx)) || (rc = open_lock(path.buf, true, &fd, ctx)))
		goto out;
	if ((got = bg_ofd_lock_share(fd)) < 0)
		rc = bg_error(ctx, BG_EIO, "%s: cannot lock the machine lease: %s; set BENCHGATE_MACHINE_LOCK to a file on a local file system with file locks",
			      path.buf, strerror(errno));
	else if (!got)
		*run_holds = true;
	if (rc == BG_OK && got > 0) {
		*fd_out = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	bg_strbuf_release(&path);
	return rc;
}

void bg_machine_lease_unshare(int fd)
{
	if (fd < 0)
		return;
	bg_ofd_lock_drop(fd);
	close(fd);
}

void bg_machine_lease_set_experiment(int fd, const char *path, const char *experiment_id)
{
	json_t *rec = read_record(fd);

	if (!rec)
		return;
	json_object_set_new(rec, "experiment_id", json_string(experiment_id));
	write_record(fd, path, rec, NULL);
	json_decref(rec);
}

void bg_machine_lease_drop(int fd)
{
	if (fd < 0)
		return;
	/* emptied while still locked: a record under a free lock is never read */
	(void)ftruncate(fd, 0);
	bg_ofd_lock_drop(fd);
	close(fd);
}

/*
 * Whether a run could open the lock file at path as it does (read-write,
 * made where it is not there yet) when the status opened it read-only
 * (there: whether it is): BG_OK, else the run's error. Creates nothing.
 */
static int usable_lock(const char *path, bool there, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	int fd, rc = BG_OK;

	if (there) {
		if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) >= 0) {
			close(fd);
			return BG_OK;
		}
		if (errno == ENOENT) /* removed meanwhile: a run makes it */
			return BG_OK;
		rc = open_lock(path, true, &fd, ctx); /* its words, never creating: the file is there */
		if (fd >= 0)
			close(fd);
		return rc;
	}
	bg_strbuf_addn(&dir, path, slash && slash != path ? (size_t)(slash - path) : 1);
	if (access(dir.buf, W_OK | X_OK) != 0)
		rc = bg_error(ctx, BG_EIO,
			      "%s: cannot open the machine lease: %s%s; it must be a file in a folder every user of benchgate on this machine can write (or set BENCHGATE_MACHINE_LOCK to one)",
			      path, errno == ENOENT ? "" : "cannot make it: ", strerror(errno));
	bg_strbuf_release(&dir);
	return rc;
}

int bg_machine_lease_status(json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	struct bg_ctx c2;
	json_t *rec = NULL;
	const char *state = "free", *reason = NULL;
	int fd = -1, rc, held;

	*out = NULL;
	if ((rc = bg_machine_lease_path(&path, ctx))) {
		bg_strbuf_release(&path);
		return rc;
	}
	bg_ctx_init(&c2);
	if (open_lock(path.buf, false, &fd, &c2) || usable_lock(path.buf, fd >= 0, &c2)) {
		state = "unusable";
		reason = bg_ctx_message(&c2);
		if (fd >= 0)
			close(fd);
	} else if (fd >= 0) {
		if ((held = bg_ofd_lock_test(fd)) < 0) {
			bg_error(&c2, BG_EIO, "%s: cannot test the lock: %s; set BENCHGATE_MACHINE_LOCK to a file on a local file system with file locks",
				 path.buf, strerror(errno));
			state = "unusable";
			reason = bg_ctx_message(&c2);
		} else if (held == 2) {
			state = "shared";
			reason = "diagnostic sessions ('benchgate measure') are measuring; a run started now is refused (exit 3), or with --wait waits for them";
		} else if (held) {
			state = "held";
			if (!(rec = read_record(fd)))
				reason = "its record is not readable yet";
		}
		close(fd);
	}
	*out = json_pack("{s:s, s:n, s:s, s:s, s:o, s:o}", "scope", "machine", "device", "lock", path.buf,
			 "state", state, "owner", rec ? rec : json_null(), "reason",
			 reason ? json_string(reason) : json_null());
	bg_ctx_release(&c2);
	bg_strbuf_release(&path);
	return BG_OK;
}
