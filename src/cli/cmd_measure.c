/*
 * cmd_measure.c - `benchgate measure [options] -- CMD [ARGS...]`: one
 * diagnostic session through the measurement engine, stored in the store
 * of benchgate.json, summarised on stdout (or as JSON with --json), runs
 * optionally exported as JSON Lines. Exit 0 ok, 1 blocked, 2 usage,
 * 4 when the command cannot start or the store fails (the session measured
 * but not stored is still printed, without an id).
 */
#include "cli/cli.h"
#include "benchgate/lifecycle.h"
#include "cli/inputs.h"
#include "cli/measure_print.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/measure.h"
#include "benchgate/provenance.h"
#include "benchgate/store.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <sys/stat.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
	O_WARMUPS, O_RUNS, O_MIN_RUNS, O_MAX_RUNS, O_MIN_TIME, O_TIMEOUT, O_PREPARE, O_SETUP,
	O_CLEANUP, O_OUTPUT, O_PARITY, O_PARITY_COMMAND, O_DETERMINISTIC, O_EVICT, O_ENV, O_SHELL,
	O_JSON, O_EXPORT, O_QUIET, O_SAMPLE, O_TIMING
};

static const struct bg_opt measure_opts[] = {
	{"warmups", 'w', BG_OPT_VALUE, O_WARMUPS, false},
	{"runs", 'r', BG_OPT_VALUE, O_RUNS, false},
	{"min-runs", 0, BG_OPT_VALUE, O_MIN_RUNS, false},
	{"max-runs", 0, BG_OPT_VALUE, O_MAX_RUNS, false},
	{"min-time", 0, BG_OPT_VALUE, O_MIN_TIME, false},
	{"timeout", 0, BG_OPT_VALUE, O_TIMEOUT, false},
	{"prepare", 0, BG_OPT_VALUE, O_PREPARE, false},
	{"setup", 0, BG_OPT_VALUE, O_SETUP, false},
	{"cleanup", 0, BG_OPT_VALUE, O_CLEANUP, false},
	{"output", 0, BG_OPT_VALUE, O_OUTPUT, true},
	{"parity", 0, BG_OPT_VALUE, O_PARITY, false},
	{"parity-command", 0, BG_OPT_VALUE, O_PARITY_COMMAND, false},
	{"deterministic", 0, BG_OPT_FLAG, O_DETERMINISTIC, false},
	{"evict", 0, BG_OPT_VALUE, O_EVICT, true},
	{"env", 0, BG_OPT_VALUE, O_ENV, true},
	{"shell", 0, BG_OPT_FLAG, O_SHELL, false},
	{"json", 0, BG_OPT_FLAG, O_JSON, false},
	{"export-jsonl", 0, BG_OPT_VALUE, O_EXPORT, false},
	{"quiet", 'q', BG_OPT_FLAG, O_QUIET, false},
	{"sample-interval", 0, BG_OPT_VALUE, O_SAMPLE, false},
	{"timing", 0, BG_OPT_VALUE, O_TIMING, false},
	{NULL, 0, 0, 0, false},
};

struct measure_args {
	struct bg_measure_opts o;
	const char **outputs, **evict, **env;
	size_t noutputs, nevict, nenv;
	bool runs_given, min_runs_given, json, quiet;
	const char *export_path;
	char msg[256];
	char *parity_ref;
	/* left out of the git checks, NULL-terminated (git_excludes) */
	char **exclude;
	size_t nexclude;
};

static volatile sig_atomic_t interrupted;

/* path (relative to the working directory cwd, or absolute) as a path
 * relative to root, appended to a->exclude when it lies inside root: a
 * glob pattern (an --output), or a plain path escaped as one (literal) */
static void exclude_path(struct measure_args *a, const char *root, const char *cwd, const char *path, bool literal)
{
	struct bg_strbuf abs = BG_STRBUF_INIT;
	size_t n = strlen(root);

	if (path[0] != '/' && strcmp(cwd, "/") != 0) /* bg_path_add_names: "" is the root */
		bg_strbuf_adds(&abs, cwd);
	bg_path_add_names(&abs, path);
	if (strncmp(abs.buf, root, n) == 0 && abs.buf[n] == '/' && abs.buf[n + 1])
		a->exclude[a->nexclude++] = literal ? bg_provenance_glob_escape(abs.buf + n + 1)
						    : bg_xstrdup(abs.buf + n + 1);
	bg_strbuf_release(&abs);
}

/*
 * What the git checks leave out (provenance.h), none of it the source under
 * test: benchgate's state (the store's folder) and what the session itself
 * writes, the --output files compared for parity and the --export-jsonl
 * file, where they lie inside the project root.
 */
static void git_excludes(struct measure_args *a, const struct bg_config *cfg)
{
	char *cwd = getcwd(NULL, 0);
	char *root = realpath(cfg->root, NULL);

	a->exclude = bg_xcalloc(BG_STATE_EXCLUDES_MAX + a->noutputs + 2, sizeof(*a->exclude));
	a->nexclude = bg_lifecycle_state_excludes(cfg, a->exclude, BG_STATE_EXCLUDES_MAX);
	if (cwd && root && root[1]) { /* (a root of "/" holds everything) */
		for (size_t i = 0; i < a->noutputs; i++)
			exclude_path(a, root, cwd, a->outputs[i], false);
		if (a->export_path)
			exclude_path(a, root, cwd, a->export_path, true);
	}
	a->o.git_exclude = (const char *const *)a->exclude;
	free(cwd);
	free(root);
}

static const char *count_arg(struct measure_args *a, const char *name, const char *v, long min,
			     long *out)
{
	long long n;

	if (!bg_cli_parse_int(v, &n) || n < min || n > BG_COUNT_MAX) {
		snprintf(a->msg, sizeof(a->msg), "%s must be an integer from %ld to " BG_COUNT_MAX_TEXT ", not '%s'",
			 name, min, v);
		return a->msg;
	}
	*out = (long)n;
	return NULL;
}

/* A number of seconds >= 0 (> 0 when positive) into *out; when max_text is
 * not NULL, at most max (which max_text writes for the message). */
static const char *seconds_arg(struct measure_args *a, const char *name, const char *v,
			       bool positive, double max, const char *max_text, double *out)
{
	double d;

	if (!bg_cli_parse_double(v, &d) || !isfinite(d) || d < 0 || (positive && d <= 0)) {
		snprintf(a->msg, sizeof(a->msg), "%s must be a %s number of seconds, not '%s'", name,
			 positive ? "positive" : "non-negative", v);
		return a->msg;
	}
	if (max_text && d > max) {
		snprintf(a->msg, sizeof(a->msg), "%s must be at most %s seconds, not '%s'", name, max_text, v);
		return a->msg;
	}
	*out = d;
	return NULL;
}

static void push(const char ***arr, size_t *n, const char *v)
{
	*arr = bg_xrealloc(*arr, (*n + 1) * sizeof(char *));
	(*arr)[(*n)++] = v;
}

static const char *parse_parity(struct measure_args *a, const char *v)
{
	if (a->o.parity != BG_PARITY_NONE)
		return "give one of --parity and --parity-command, once";
	if (strncmp(v, "sha256:", 7) == 0) {
		const char *h = v + 7;

		if (strlen(h) != 64 || strspn(h, "0123456789abcdefABCDEF") != 64)
			return "--parity sha256:HEX needs 64 hexadecimal digits";
		a->o.parity = BG_PARITY_SHA256;
		a->o.parity_sha256 = h;
		return NULL;
	}
	if (strncmp(v, "allclose:", 9) == 0) {
		char *spec = bg_xstrdup(v + 9), *tok;
		bool seen_rtol = false, seen_atol = false;
		size_t name;

		free(a->parity_ref);
		a->parity_ref = spec;
		/* the settings are the words after the last commas that read
		 * NAME=VALUE; the rest, commas and all, is the reference */
		while ((tok = strrchr(spec, ',')) && (name = strspn(tok + 1, "abcdefghijklmnopqrstuvwxyz_")) > 0 &&
		       tok[1 + name] == '=') {
			double *dst = strncmp(tok + 1, "rtol=", 5) == 0   ? &a->o.rtol
				      : strncmp(tok + 1, "atol=", 5) == 0 ? &a->o.atol
									  : NULL;
			bool *seen = dst == &a->o.rtol ? &seen_rtol : &seen_atol;

			if (!dst) {
				snprintf(a->msg, sizeof(a->msg),
					 "unknown allclose setting '%s'; use rtol=R or atol=A", tok + 1);
				return a->msg;
			}
			if (*seen) {
				snprintf(a->msg, sizeof(a->msg), "allclose setting '%.4s' is given twice; give it once",
					 tok + 1);
				return a->msg;
			}
			*seen = true;
			if (!bg_cli_parse_double(tok + 6, dst) || *dst < 0 || isnan(*dst)) {
				snprintf(a->msg, sizeof(a->msg),
					 "allclose setting '%s' needs a non-negative number", tok + 1);
				return a->msg;
			}
			if (!isfinite(*dst)) {
				snprintf(a->msg, sizeof(a->msg),
					 "allclose setting '%s' is beyond a double's range; give a finite number", tok + 1);
				return a->msg;
			}
			*tok = '\0';
		}
		if (!*spec)
			return "--parity allclose:REF.npy needs a reference file";
		a->o.parity_reference = spec;
		a->o.parity = BG_PARITY_ALLCLOSE;
		return NULL;
	}
	snprintf(a->msg, sizeof(a->msg),
		 "unknown parity '%.64s'; use sha256:HEX or allclose:REF.npy[,rtol=R][,atol=A]", v);
	return a->msg;
}

static const char *on_opt(int id, const char *v, void *data)
{
	struct measure_args *a = data;
	long ms = 5;

	switch (id) {
	case O_WARMUPS:
		return count_arg(a, "--warmups", v, 0, &a->o.warmups);
	case O_RUNS:
		a->runs_given = true;
		return count_arg(a, "--runs", v, 1, &a->o.runs);
	case O_MIN_RUNS:
		a->o.adaptive = true;
		a->min_runs_given = true;
		return count_arg(a, "--min-runs", v, 1, &a->o.min_runs);
	case O_MAX_RUNS:
		a->o.adaptive = true;
		return count_arg(a, "--max-runs", v, 1, &a->o.max_runs);
	case O_MIN_TIME:
		a->o.adaptive = true;
		return seconds_arg(a, "--min-time", v, false, BG_TIMEOUT_MAX_SECONDS, BG_TIMEOUT_MAX_TEXT,
				   &a->o.min_time);
	case O_TIMEOUT:
		return seconds_arg(a, "--timeout", v, true, BG_TIMEOUT_MAX_SECONDS, BG_TIMEOUT_MAX_TEXT,
				   &a->o.timeout);
	case O_PREPARE:
		a->o.prepare = v;
		return NULL;
	case O_SETUP:
		a->o.setup = v;
		return NULL;
	case O_CLEANUP:
		a->o.cleanup = v;
		return NULL;
	case O_OUTPUT:
		push(&a->outputs, &a->noutputs, v);
		return NULL;
	case O_PARITY:
		return parse_parity(a, v);
	case O_PARITY_COMMAND:
		if (a->o.parity != BG_PARITY_NONE)
			return "give one of --parity and --parity-command, once";
		a->o.parity = BG_PARITY_COMMAND;
		a->o.parity_command = v;
		return NULL;
	case O_DETERMINISTIC:
		a->o.deterministic = true;
		return NULL;
	case O_EVICT:
		push(&a->evict, &a->nevict, v);
		return NULL;
	case O_ENV:
		if (!*v)
			return "--env needs a variable's name";
		if (strchr(v, '=')) {
			/* the mistake is to mean "set it for the command" */
			snprintf(a->msg, sizeof(a->msg),
				 "--env takes a variable's name, whose value is recorded, not '%.40s'; to set a "
				 "variable for the command, run it through env: -- env %.40s CMD", v, v);
			return a->msg;
		}
		push(&a->env, &a->nenv, v);
		return NULL;
	case O_SHELL:
		a->o.shell = true;
		return NULL;
	case O_JSON:
		a->json = true;
		return NULL;
	case O_EXPORT:
		a->export_path = v;
		return *v ? NULL : "--export-jsonl needs a file name";
	case O_QUIET:
		a->quiet = true;
		return NULL;
	case O_TIMING:
		return bg_timing_parse(v, &a->o.timing) ? "--timing must be 'process' or 'reported'" : NULL;
	case O_SAMPLE: {
		const char *m = count_arg(a, "--sample-interval", v, 1, &ms);

		a->o.sample_interval_ms = ms;
		return m;
	}
	default:
		return "unknown option";
	}
}

/*
 * Whether the runs can be written to path (export_jsonl), checked before
 * the session so that one is not measured and stored only for its export
 * to fail at the end. Creates nothing. BG_OK, or BG_EIO with the message
 * on ctx.
 */
static int export_check(const char *path, struct bg_ctx *ctx)
{
	struct bg_strbuf target = BG_STRBUF_INIT;
	struct stat st;
	char *dir;
	const char *slash, *why = NULL;
	int rc = BG_OK;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return bg_error(ctx, BG_EIO, "'%s': cannot write the runs there: it is a folder; give --export-jsonl a file name",
					path);
		if (!S_ISREG(st.st_mode)) { /* a device or FIFO is written into, not replaced */
			if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
				return bg_error(ctx, BG_EIO, "'%s': cannot write the runs: %s; give --export-jsonl another file",
						path, strerror(errno));
			return BG_OK;
		}
	} else if (errno != ENOENT && errno != ENOTDIR) { /* those two: said of its folder below */
		return bg_error(ctx, BG_EIO, "'%s': cannot write the runs: %s; give --export-jsonl another file",
				path, strerror(errno));
	}
	/* a file is made (or replaced) by a rename in its folder: for a
	 * symbolic link, the folder of the file it leads to */
	if ((rc = bg_atomic_target(path, NULL, &target, ctx))) {
		bg_strbuf_release(&target);
		return rc;
	}
	slash = strrchr(target.buf, '/');
	{
		/* written through a temporary file NAME.tmp.PID beside it, which
		 * must be a name the file system takes too (it was found too long
		 * only once the session was stored) */
		const char *base = slash ? slash + 1 : target.buf;
		char pid[24];
		size_t most = NAME_MAX - strlen(".tmp.") - (size_t)snprintf(pid, sizeof(pid), "%ld", (long)getpid());

		if (strlen(base) > most) {
			rc = bg_error(ctx, BG_EUSAGE,
				      "'%s': its name is %zu bytes, and benchgate writes it through a temporary file "
				      "named after it: give --export-jsonl a name of at most %zu bytes",
				      path, strlen(base), most);
			bg_strbuf_release(&target);
			return rc;
		}
	}
	dir = slash ? bg_xstrndup(target.buf, slash == target.buf ? 1 : (size_t)(slash - target.buf))
		    : bg_xstrdup(".");
	bg_strbuf_release(&target);
	if (stat(dir, &st) != 0)
		why = errno == ENOENT ? "does not exist" : strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "is not a folder";
	else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
		why = errno == EROFS ? "is on a read-only file system" : "cannot be written to";
	if (why)
		rc = bg_error(ctx, BG_EIO, "'%s': cannot write the runs: its folder '%s' %s; give --export-jsonl another file",
			      path, dir, why);
	free(dir);
	return rc;
}

/* The absolute name path has, or will have once made (links resolved);
 * NULL when nothing of it is there. The caller frees it. */
static char *named(const char *path)
{
	char *real = realpath(path, NULL);

	return real ? real : bg_path_named_later(path);
}

/* A pattern as an absolute one, the folders before its first wildcard
 * resolved (links, "." and ".."); NULL when they are not there. The
 * caller frees it. */
static char *pattern_named(const char *pattern)
{
	const char *wild = strpbrk(pattern, "*?["), *slash = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	char *dir, *real;

	for (const char *p = pattern; p < wild; p++)
		if (*p == '/')
			slash = p;
	dir = slash ? bg_xstrndup(pattern, slash == pattern ? 1 : (size_t)(slash - pattern)) : bg_xstrdup(".");
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return NULL;
	bg_strbuf_addf(&sb, "%s/%s", strcmp(real, "/") == 0 ? "" : real, slash ? slash + 1 : pattern);
	free(real);
	return bg_strbuf_detach(&sb, NULL);
}

/* Whether path (st: its stat, or NULL when it is not there) and other are
 * one file: the same file when both are there, else the same name (both
 * named from the root, links resolved), also one not made yet. */
static bool same_file(const char *path, const struct stat *st, const char *other)
{
	struct stat t;
	char *x, *y;
	bool same;

	if (st && stat(other, &t) == 0)
		return st->st_dev == t.st_dev && st->st_ino == t.st_ino;
	x = named(path);
	y = named(other);
	same = x && y && strcmp(x, y) == 0;
	free(x);
	free(y);
	return same;
}

/* What writing the export at path would replace: one of the project's
 * files (bg_cli_project_file_at), or what this command reads: a file or a
 * folder's file that --evict names (the dataset the cold claim is about),
 * the reference of --parity allclose, a file --output names; NULL for
 * none. */
static const char *export_over_input(const struct bg_config *cfg, const struct measure_args *a, const char *path)
{
	const char *what = bg_cli_project_file_at(cfg, path);
	struct stat st, t;
	bool there = stat(path, &st) == 0;

	for (size_t i = 0; !what && i < a->nevict; i++) {
		if (stat(a->evict[i], &t) != 0)
			continue;
		if (S_ISDIR(t.st_mode) && bg_cli_file_within(path, a->evict[i]))
			what = "inside a folder --evict names (the data the cold claim is about)";
		else if (!S_ISDIR(t.st_mode) && there && st.st_dev == t.st_dev && st.st_ino == t.st_ino)
			what = "a file --evict names (the data the cold claim is about)";
	}
	/* the reference --parity allclose compares with, there or not yet */
	if (!what && a->o.parity_reference && same_file(path, there ? &st : NULL, a->o.parity_reference))
		what = "the reference --parity allclose compares with";
	/* an output as named (also one the command makes later), or one a
	 * pattern matches, by name as glob(3) will match it after the runs */
	for (size_t i = 0; !what && i < a->noutputs; i++) {
		const char *o = a->outputs[i];

		if (strpbrk(o, "*?[")) {
			/* also spelled otherwise ("./o/r.txt", through a link, absolute):
			 * both named from the root, links resolved */
			char *x = named(path), *y = pattern_named(o);

			if (fnmatch(o, path, FNM_PATHNAME | FNM_PERIOD) == 0 ||
			    (x && y && fnmatch(y, x, FNM_PATHNAME | FNM_PERIOD) == 0))
				what = "a file --output names";
			free(x);
			free(y);
		} else if (same_file(path, there ? &st : NULL, o)) {
			what = "a file --output names";
		}
	}
	return what;
}

static int export_jsonl(const char *path, const json_t *doc, long long id)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct stat st;
	size_t i;
	json_t *r;
	int rc;

	json_array_foreach(json_object_get(doc, "runs"), i, r) {
		json_t *copy = json_copy(r);
		char *line;

		json_object_set_new(copy, "session_id", id > 0 ? json_integer(id) : json_null());
		line = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII);
		bg_strbuf_adds(&sb, line);
		bg_strbuf_addch(&sb, '\n');
		free(line);
		json_decref(copy);
	}
	bg_ctx_init(&ctx);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device, FIFO or terminal (/dev/stdout): write into it, never
		 * rename over it; a FIFO no process reads is refused, never waited
		 * on (the open does not block; the writes then may) */
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		FILE *f = NULL;

		if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0)
			f = fdopen(fd, "w");
		if (!f && fd >= 0) {
			int e = errno;

			close(fd);
			errno = e;
		}
		rc = BG_OK;
		if (!f && errno == ENXIO)
			rc = bg_error(&ctx, BG_EIO, "'%s': cannot write the runs: no process reads this FIFO; start its "
				      "reader first", path);
		else if (!f || fwrite(sb.buf, 1, sb.len, f) != sb.len)
			rc = bg_error(&ctx, BG_EIO, "'%s': cannot write the runs: %s", path,
				      strerror(errno));
		if (f && fclose(f) != 0 && rc == BG_OK)
			rc = bg_error(&ctx, BG_EIO, "'%s': cannot write the runs: %s", path,
				      strerror(errno));
	} else {
		rc = bg_file_write_atomic(path, NULL, sb.buf, sb.len, &ctx);
	}
	/* whatever went wrong (a reader gone mid-write: EPIPE), the session is not lost */
	if (rc && id > 0)
		bg_error(&ctx, rc, "%s (session %lld is stored: 'benchgate session %lld --json' has its runs)",
			 bg_ctx_message(&ctx), id, id);
	if (rc)
		bg_cli_fail(rc, bg_ctx_message(&ctx));
	bg_ctx_release(&ctx);
	bg_strbuf_release(&sb);
	return rc;
}

/*
 * A diagnostic session holds the machine lease shared: diagnostic sessions
 * measure beside each other, and a run waits for them (it is refused
 * meanwhile). One started while a run holds the lease measures anyway, but
 * says that it and that run disturb each other's timings; so does one that
 * cannot take the lease (said, not fatal: nothing it records depends on
 * it). The locked file, or -1.
 */
static int share_machine(void)
{
	struct bg_strbuf msg = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *m = NULL;
	bool run_holds;
	int fd = -1, rc;

	bg_ctx_init(&ctx);
	if ((rc = bg_machine_lease_share(&fd, &run_holds, &ctx)) == BG_OK && run_holds) {
		bg_strbuf_adds(&msg, "benchgate: this machine is leased by ");
		bg_ctx_release(&ctx);
		bg_ctx_init(&ctx);
		if (bg_machine_lease_status(&m, &ctx) == BG_OK && json_is_object(json_object_get(m, "owner")))
			bg_machine_lease_describe(&msg, json_object_get(m, "owner"));
		else
			bg_strbuf_adds(&msg, "a run");
		bg_strbuf_adds(&msg, ": a run measures meanwhile, and this session and that run disturb each other's timings\n");
	} else if (rc) {
		bg_strbuf_addf(&msg, "benchgate: %s; this session measures without it, so a run may start beside it\n",
			       bg_ctx_message(&ctx));
	}
	if (msg.len)
		bg_cli_write(&msg, true);
	json_decref(m);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&msg);
	return fd;
}

/* The .git (a folder, or a file naming one) of root or of a folder above
 * it, into *at; whether there is one: root is then in a repository, whether
 * or not git can read it. */
static bool git_entry_above(const char *root, struct bg_strbuf *at)
{
	char *dir = realpath(root, NULL);
	bool found = false;

	while (dir && !found) {
		struct stat st;
		char *slash;

		bg_strbuf_reset(at);
		bg_strbuf_addf(at, "%s%s.git", dir, strcmp(dir, "/") ? "/" : "");
		found = lstat(at->buf, &st) == 0;
		slash = strrchr(dir, '/');
		if (found || !slash || strcmp(dir, "/") == 0)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return found;
}

/*
 * No revision where the project is in a repository (a .git above it):
 * git could not read it (no commit yet, git not on PATH, a repository of
 * another user, a .git file naming nothing). The session is stored as one
 * outside any repository would be, so this is said, with git's words.
 */
static void warn_no_revision(const struct bg_config *cfg)
{
	struct bg_strbuf at = BG_STRBUF_INIT, why = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;

	if (git_entry_above(cfg->root, &at)) {
		bg_provenance_git_why(cfg->root, &why);
		bg_strbuf_adds(&msg, "benchgate: this session's provenance lacks the source revision: the project is in a "
				     "git repository (");
		bg_cli_add_shown(&msg, at.buf);
		bg_strbuf_adds(&msg, "), but 'git rev-parse --verify HEAD' failed (");
		bg_cli_add_shown(&msg, why.len ? why.buf : "git failed, and now succeeds");
		bg_strbuf_adds(&msg, "); commit the source, put git on PATH, or make the repository one git reads for "
				     "this user, as 'benchgate run' requires\n");
		bg_cli_write(&msg, true);
	}
	bg_strbuf_release(&at);
	bg_strbuf_release(&why);
	bg_strbuf_release(&msg);
}

/*
 * A source git cannot describe (a filter of .gitattributes whose program is
 * missing, as git-lfs's): a diagnostic session is still stored, but its
 * provenance lacks the dirty flag or the diff's hash. Said on stderr with
 * git's words, as run's preflight refuses such a source; nothing outside a
 * repository, where there is nothing to hash; in one of which git gives
 * no revision, warn_no_revision.
 */
static void warn_git_state(const json_t *doc, const struct bg_config *cfg, const char *const *exclude)
{
	const json_t *git = json_object_get(json_object_get(doc, "provenance"), "git");
	const json_t *dirty = json_object_get(git, "dirty");
	struct bg_strbuf why = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;

	if (git && !json_is_string(json_object_get(git, "revision"))) {
		warn_no_revision(cfg);
		return;
	}
	if (!json_is_string(json_object_get(git, "revision")) ||
	    (json_is_boolean(dirty) && (json_is_false(dirty) || json_is_string(json_object_get(git, "diff_sha256")))))
		return;
	bg_provenance_git_state_why(cfg->root, exclude, &why);
	bg_strbuf_addf(&msg, "benchgate: this session's provenance lacks %s (",
		       json_is_boolean(dirty) ? "the SHA-256 of the uncommitted changes"
					      : "whether the source has uncommitted changes");
	bg_cli_add_shown(&msg, why.len ? why.buf : "git failed, and now succeeds");
	bg_strbuf_adds(&msg, "); make 'git status' and 'git diff HEAD' work in the project (install the program a filter names), as 'benchgate run' requires\n");
	bg_cli_write(&msg, true);
	bg_strbuf_release(&why);
	bg_strbuf_release(&msg);
}

static int run_measure(struct bg_cli *cli, const struct bg_cmd *self)
{
	struct measure_args a;
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_mp_progress_state ps = {false, false, NULL, 0};
	struct bg_store *store = NULL;
	struct bg_ctx ctx;
	struct bg_cli_stop stop;
	json_t *doc = NULL;
	const char *what;
	long long id = 0;
	int stored_rc = BG_OK;
	int rc, machine = -1, wrote = BG_OK;

	memset(&a, 0, sizeof(a));
	bg_measure_opts_init(&a.o);
	rc = bg_cli_parse(cli, self, measure_opts, 0, true, on_opt, &a, &parsed);
	if (rc)
		goto out_args;
	if (parsed.rest_index < 0 || parsed.rest_index >= cli->argc) {
		rc = bg_cli_usage_error(self, "a command to measure is required after '--'");
		goto out_args;
	}
	if (a.runs_given && a.o.adaptive) {
		rc = bg_cli_usage_error(self, "--runs conflicts with --min-runs/--max-runs/--min-time");
		goto out_args;
	}
	/* the default minimum (3) follows a smaller --max-runs: `--max-runs 1` means one run */
	if (a.o.adaptive && !a.min_runs_given && a.o.max_runs < a.o.min_runs)
		a.o.min_runs = a.o.max_runs;
	if (a.o.adaptive && a.o.max_runs < a.o.min_runs) {
		rc = bg_cli_usage_error(self, "--max-runs must not be less than --min-runs");
		goto out_args;
	}
	if ((a.o.parity == BG_PARITY_SHA256 || a.o.parity == BG_PARITY_ALLCLOSE ||
	     a.o.deterministic) && a.noutputs == 0) {
		rc = bg_cli_usage_error(self, "--parity and --deterministic need at least one --output");
		goto out_args;
	}
	rc = bg_cli_load_config(cli, &cfg);
	if (rc)
		goto out_args;
	a.o.argv = cli->argv + parsed.rest_index;
	a.o.argc = cli->argc - parsed.rest_index;
	a.o.outputs = a.outputs;
	a.o.noutputs = a.noutputs;
	a.o.evict = a.evict;
	a.o.nevict = a.nevict;
	a.o.env_names = a.env;
	a.o.nenv = a.nenv;
	a.o.root = cfg.root;
	git_excludes(&a, &cfg);
	a.o.bg_argv = cli->argv;
	a.o.bg_argc = cli->argc;
	a.o.interrupted = &interrupted;
	if (!a.quiet && isatty(STDERR_FILENO)) {
		const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

		ps.color = !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
		a.o.progress = bg_mp_progress;
		a.o.progress_data = &ps;
	}
	/* an export target and the store that cannot work fail before measuring
	 * (the store opened, or created, only when the export can be written) */
	bg_ctx_init(&ctx);
	if (a.export_path && (what = export_over_input(&cfg, &a, a.export_path))) {
		rc = bg_cli_usage_error(self, "argument --export-jsonl: '%s' is %s; choose another file", a.export_path,
					what);
		goto out;
	}
	if (a.export_path && (rc = export_check(a.export_path, &ctx)) != BG_OK) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	rc = bg_store_open(cfg.store, cfg.root, BG_STORE_CREATE, &store, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	machine = share_machine();
	bg_cli_catch_stop(&interrupted, &stop);
	bg_cli_catch_suspend(&stop);
	rc = bg_measure_session(&a.o, &doc, &ctx);
	bg_cli_release_stop(&stop);
	bg_machine_lease_unshare(machine);
	if (rc == BG_EUSAGE) {
		rc = bg_cli_usage_error(self, "%s", bg_ctx_message(&ctx));
		goto out;
	}
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	if (strcmp(json_string_value(json_object_get(doc, "status")), "interrupted") == 0) {
		rc = bg_cli_fail(BG_EIO, json_is_true(json_object_get(doc, "cleanup_interrupted"))
						 ? "interrupted: the session was not stored; the cleanup command was "
						   "interrupted too (its process tree was killed): run it by hand if the "
						   "project needs it"
						 : "interrupted: the session was not stored");
		goto out;
	}
	/* a store that fails now (a full disk) loses the session, not what was
	 * measured: the figures (and the export) come out without an id */
	stored_rc = bg_store_put_session(store, doc, &id, &ctx);
	if (stored_rc == BG_OK)
		json_object_set_new(doc, "id", json_integer(id));
	else
		id = 0;
	if (a.export_path) {
		rc = export_jsonl(a.export_path, doc, id);
		if (rc)
			goto stored;
	}
	{
		struct bg_strbuf sb = BG_STRBUF_INIT;

		if (a.json) {
			bg_json_dump_py(&sb, doc, 2, false);
			bg_strbuf_addch(&sb, '\n');
		} else {
			bg_mp_summary(&sb, doc);
		}
		wrote = bg_cli_write(&sb, false);
		bg_strbuf_release(&sb);
	}
	warn_git_state(doc, &cfg, a.o.git_exclude);
stored:
	if (stored_rc) {
		struct bg_strbuf msg = BG_STRBUF_INIT;

		bg_strbuf_addf(&msg, "%s%s", bg_ctx_message(&ctx),
			       rc || wrote ? "" : "; what was measured is printed above, without a session id");
		rc = bg_cli_fail(stored_rc, msg.buf);
		bg_strbuf_release(&msg);
		goto out;
	}
	if (rc == BG_OK && strcmp(json_string_value(json_object_get(doc, "status")), "ok") != 0) {
		struct bg_strbuf msg = BG_STRBUF_INIT;
		const char *reason = json_string_value(json_object_get(doc, "reason"));

		/* the reason holds file names, metric names, a program's words:
		 * bg_cli_fail shows their control bytes */
		bg_strbuf_addf(&msg, "session %lld blocked: %s", id, reason ? reason : "n/a");
		rc = bg_cli_fail(BG_ECHECK, msg.buf);
		bg_strbuf_release(&msg);
	}
	/* a blocked session's exit 1 stands when stdout cannot be written */
	if (rc == BG_OK)
		rc = wrote;
out:
	bg_store_close(store);
	json_decref(doc);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
out_args:
	for (size_t k = 0; k < a.nexclude; k++)
		free(a.exclude[k]);
	free(a.exclude);
	free(a.outputs);
	free(a.evict);
	free(a.env);
	free(a.parity_ref);
	return rc;
}

const struct bg_cmd bg_cmd_measure = {
	"measure",
	"measure a command: smoke run and parity first, then warmups and timed runs",
	"benchgate measure [options] -- CMD [ARGS...]",
	"  -w, --warmups N          runs after the smoke run, recorded, not in the statistics\n"
	"                           (default 1)\n"
	"  -r, --runs N             timed runs (default 7)\n"
	"  --min-runs N, --max-runs N, --min-time S\n"
	"                           adaptive count: at least N runs and S seconds of timed runs,\n"
	"                           at most --max-runs (defaults 3 or a smaller --max-runs,\n"
	"                           unbounded, 3 s)\n"
	"  --timing process|reported\n"
	"                           what is timed: the command's wall time (default), or the\n"
	"                           samples it writes to the file named by $BENCHGATE_RESULT\n"
	"  --timeout S              per run; the whole process tree is killed\n"
	"  --prepare CMD            shell command before every run, not timed\n"
	"  --setup CMD, --cleanup CMD\n"
	"                           shell commands once before and after the session\n"
	"  --output GLOB            file(s) each run writes, hashed and checked (repeatable)\n"
	"  --parity sha256:HEX      the output (or the sha256sum-style list of outputs) hashes to HEX\n"
	"  --parity allclose:REF.npy[,rtol=R][,atol=A]\n"
	"                           the .npy output is numpy.allclose to REF (rtol 1e-5, atol 1e-8)\n"
	"  --parity-command CMD     shell command given the output paths; exit 0 = pass\n"
	"  --deterministic          every run's outputs must hash like the smoke run's\n"
	"  --evict FILE             make FILE cold before each run (a folder: its files); verified\n"
	"                           (repeatable)\n"
	"  --env NAME               record this variable's value (repeatable)\n"
	"  --shell                  run the command through /bin/sh -c\n"
	"  --json                   print the session as JSON\n"
	"  --export-jsonl FILE      write the runs as JSON Lines\n"
	"  -q, --quiet              no progress line\n"
	"  --sample-interval MS     memory sampling period (default 5)\n",
	run_measure,
	NULL,
	false,
};
