/*
 * provenance.c - git state, environment and host facts (see benchgate/provenance.h).
 */
#include "benchgate/json.h"
#include "benchgate/provenance.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"
#include "measure/internal.h"

#include <ctype.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

extern char **environ;

/* Whether the n bytes at s hold word (upper case) in any case; with part,
 * only as a whole part, between bytes that are not letters or digits:
 * "AUTH" in "HTTP_AUTH" or "--auth", not in "AUTHOR". */
static bool name_has(const char *s, size_t n, const char *word, bool part)
{
	size_t m = strlen(word);

	for (size_t i = 0; i + m <= n; i++)
		if (strncasecmp(s + i, word, m) == 0 &&
		    (!part || ((i == 0 || !isalnum((unsigned char)s[i - 1])) &&
			       (i + m == n || !isalnum((unsigned char)s[i + m])))))
			return true;
	return false;
}

/* bg_provenance_secret_name for the n bytes at s, of any length (a name
 * that a redaction shortens cannot start to look secret). */
static bool secret_name_n(const char *s, size_t n)
{
	/* anywhere in the name: AUTHORIZATION, not AUTHOR or AUTHORITY */
	static const char *const words[] = {"TOKEN",  "SECRET",	"PASSWORD",	 "PASSWD", "PASSPHRASE",
					    "KEY",    "CREDENTIAL", "AUTHORIZATION", "COOKIE"};
	/* only as a whole part: "--auth", "DB_PASS", "--pw"; not "PASSES", "PWD" */
	static const char *const parts[] = {"AUTH", "PASS", "PW"};

	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (name_has(s, n, words[k], false))
			return true;
	for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
		if (name_has(s, n, parts[k], true))
			return true;
	return false;
}

bool bg_provenance_secret_name(const char *name)
{
	return secret_name_n(name, strlen(name));
}

static void chomp(struct bg_strbuf *sb)
{
	while (sb->len && (sb->buf[sb->len - 1] == '\n' || sb->buf[sb->len - 1] == '\r'))
		bg_strbuf_setlen(sb, sb->len - 1);
}

/*
 * What git reads from the environment to look at another repository than
 * the one it finds from its folder (a git hook sets some; a shell may keep
 * them): benchgate's git calls describe the project root's repository, as
 * `run` names it, so they go without them.
 */
static const char *const git_env_unset[] = {"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
					    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
					    /* what reads the pathspecs otherwise (":/" and the
					     * excludes taken for file names) */
					    "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
					    "GIT_ICASE_PATHSPECS", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
					    "GIT_SHALLOW_FILE", "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", NULL};

/* At most this many git globs stand for one output pattern (see glob_alts). */
#define GLOB_ALTS_MAX 16

/*
 * The git globs (glob magic) that together match what pattern, a glob as
 * glob(3) reads it, matches; cur holds what was written before p (at the
 * start of a name when at_start); each is pushed to alts (*n of them, at
 * most GLOB_ALTS_MAX: the rest are dropped, so that less is left out of
 * the dirty check, never more). Two differences are written away:
 *  - a run of '*' is one: glob(3) reads two as one, where git reads a
 *    folder named by two as any depth (an output pattern of two '*', a '/'
 *    and "*.npy" hid every edited tracked .npy of the repository);
 *  - glob(3) matches a name starting with '.' only with a '.' written
 *    there, where git's '*' and '?' match it (an output pattern of "out",
 *    a '/' and "*.json" left an edited tracked out/.meta.json out): at a name's start, '?' is
 *    written "[!.]" and '*' "[!.]*", with, for a '*' that can match
 *    nothing before a byte other than '.' ("*x" matches "x"), a second
 *    glob without it.
 * An escaped byte stays as it is.
 */
static void glob_alts(const char *p, bool at_start, struct bg_strbuf *cur, char **alts, size_t *n)
{
	while (*p) {
		if (p[0] == '\\' && p[1]) {
			bg_strbuf_addn(cur, p, 2);
			p += 2;
			at_start = false;
		} else if (*p == '*') {
			while (*p == '*')
				p++;
			if (at_start && *p && *p != '/' && *p != '.' && !(p[0] == '\\' && p[1] == '.')) {
				struct bg_strbuf alt = BG_STRBUF_INIT; /* the '*' matching nothing */

				bg_strbuf_addn(&alt, cur->buf, cur->len);
				glob_alts(p, true, &alt, alts, n);
				bg_strbuf_release(&alt);
			}
			bg_strbuf_adds(cur, at_start ? "[!.]*" : "*");
			at_start = false;
		} else if (*p == '?' && at_start) {
			bg_strbuf_adds(cur, "[!.]");
			p++;
			at_start = false;
		} else {
			at_start = *p == '/';
			bg_strbuf_addch(cur, *p++);
		}
	}
	if (*n < GLOB_ALTS_MAX)
		alts[(*n)++] = bg_xstrdup(cur->len ? cur->buf : "");
}

/*
 * git --no-optional-locks ARGS... [-- :/ :(exclude,glob)P...] in root (args ends
 * with NULL); stdout (with_stderr: and stderr) in out, the exit status in
 * *st; BG_EIO when git cannot be started. Without optional locks `git
 * status` reads the index without refreshing it into .git/index: an
 * observer that never writes the user's repository, nor holds the
 * index.lock that would make their own `git commit` fail meanwhile.
 */
static int git_run(const char *root, const char *const *args, const char *const *exclude, bool with_stderr,
		   struct bg_strbuf *out, int *st, struct bg_ctx *ctx)
{
	size_t na = 0, nx = 0, n = 0;
	char **argv;
	int rc;

	while (args[na])
		na++;
	while (exclude && exclude[nx])
		nx++;
	argv = bg_xcalloc(2 + na + 2 + (GLOB_ALTS_MAX + 1) * nx + 1, sizeof(*argv));
	argv[n++] = bg_xstrdup("git");
	argv[n++] = bg_xstrdup("--no-optional-locks");
	for (size_t i = 0; i < na; i++)
		argv[n++] = bg_xstrdup(args[i]);
	if (nx) {
		/* the whole repository (":/", its top), not only the project's
		 * folder: in a repository that holds the project in a folder of
		 * its own, the source under test is often beside that folder */
		argv[n++] = bg_xstrdup("--");
		argv[n++] = bg_xstrdup(":/");
		for (size_t k = 0; k < nx; k++) {
			struct bg_strbuf spec = BG_STRBUF_INIT;
			if (strcmp(exclude[k], BG_GIT_EXCLUDE_STATE_FOLDERS) == 0) {
				bg_strbuf_addf(&spec, ":(exclude,%s", BG_GIT_EXCLUDE_STATE_FOLDERS + 2);
				argv[n++] = bg_strbuf_detach(&spec, NULL);
			} else { /* what glob(3) matched as the outputs */
				char *alts[GLOB_ALTS_MAX];
				size_t nalts = 0;

				bg_strbuf_adds(&spec, ":(exclude,glob)");
				glob_alts(exclude[k], true, &spec, alts, &nalts);
				bg_strbuf_release(&spec);
				for (size_t a = 0; a < nalts; a++)
					argv[n++] = alts[a];
			}
			/* an escaped name no longer matches what lies below it as
			 * a leading folder (git compares that part as it is
			 * written): a folder's contents are named too */
			if (strchr(exclude[k], '\\') && strcmp(exclude[k], BG_GIT_EXCLUDE_STATE_FOLDERS) != 0) {
				bg_strbuf_addf(&spec, ":(exclude,glob)%s/**", exclude[k]);
				argv[n++] = bg_strbuf_detach(&spec, NULL);
			}
		}
	}
	argv[n] = NULL;
	rc = with_stderr ? bg_spawn_capture_all(argv, root, git_env_unset, out, st, ctx)
			 : bg_spawn_capture(argv, root, git_env_unset, out, st, ctx);
	for (size_t i = 0; i < n; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

char *bg_provenance_glob_escape(const char *path)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	for (const char *p = path; *p; p++) {
		if (strchr("*?[\\", *p))
			bg_strbuf_addch(&sb, '\\');
		bg_strbuf_addch(&sb, *p);
	}
	return bg_strbuf_detach(&sb, NULL);
}

/* git_run's stdout in out; false when git fails or cannot be started. */
static bool git(const char *root, const char *const *args, const char *const *exclude, struct bg_strbuf *out)
{
	struct bg_ctx ctx;
	int st = -1, rc;

	bg_ctx_init(&ctx);
	rc = git_run(root, args, exclude, false, out, &st, &ctx);
	bg_ctx_release(&ctx);
	return rc == BG_OK && st == 0;
}

/* Appends what git said when it failed (out: its stdout and stderr): its
 * last "fatal: " line, else its last "error: " line, else its first line,
 * else its exit status. */
static void git_said(const struct bg_strbuf *out, int st, struct bg_strbuf *why)
{
	const char *pick = NULL, *p = out->buf;
	bool fatal = false;

	while (*p) {
		size_t n = strcspn(p, "\n");
		if (strncmp(p, "fatal: ", 7) == 0 || (!fatal && strncmp(p, "error: ", 7) == 0)) {
			fatal = strncmp(p, "fatal: ", 7) == 0;
			pick = p;
		}
		p += n + (p[n] == '\n');
	}
	if (!pick && out->len && out->buf[0] != '\n')
		pick = out->buf;
	if (pick)
		bg_strbuf_addn(why, pick, strcspn(pick, "\n"));
	else
		bg_strbuf_addf(why, "it exited with status %d", st);
}

/* Whether dir/name exists (any type); with want_dir, only a directory. */
static bool entry_exists(const char *dir, const char *name, bool want_dir)
{
	char path[PATH_MAX];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);

	if (n < 0 || (size_t)n >= sizeof(path))
		return true; /* cannot tell: as if it existed */
	if (stat(path, &st) != 0)
		return false;
	return !want_dir || S_ISDIR(st.st_mode);
}

/*
 * Whether git could find a repository from root: false only when it surely
 * cannot, so that the `git rev-parse` spawn (a millisecond or more) is
 * skipped where its answer is known to be "not a repository". Conservative:
 * GIT_DIR set, a root that cannot be resolved, or any directory from root up
 * to / holding a ".git" entry or looking like a git directory itself (HEAD,
 * objects/, refs/: a bare repository) all answer true, and git decides.
 */
static bool git_repository_possible(const char *root)
{
	char *dir;
	bool possible = false;

	if (getenv("GIT_DIR"))
		return true;
	dir = realpath(root, NULL);
	if (!dir)
		return true;
	for (;;) {
		char *slash;

		if (entry_exists(dir, ".git", false) ||
		    (entry_exists(dir, "HEAD", false) && entry_exists(dir, "objects", true) &&
		     entry_exists(dir, "refs", true))) {
			possible = true;
			break;
		}
		slash = strrchr(dir, '/');
		if (!slash || (slash == dir && dir[1] == '\0'))
			break;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	free(dir);
	return possible;
}

static const char *const git_rev_parse[] = {"rev-parse", "--verify", "HEAD", NULL};
/* `git status`: tracked changes and untracked files (those no .gitignore
 * names), each entry "XY PATH" ended by NUL, the path from the repository's
 * top; a submodule counts as changed for what is tracked in it, not for
 * untracked files it holds */
static const char *const git_status[] = {"status", "--porcelain", "-z", "--no-renames",
					 "--untracked-files=all", "--ignore-submodules=untracked", NULL};
static const char *const git_toplevel[] = {"rev-parse", "--show-toplevel", NULL};
/* `git diff`: every changed file by its full blob ids (a binary one by them
 * alone, not a binary patch of its bytes: a modified 100 MB file took git
 * 25 s and 580 MB each time), and a changed submodule by the diff of its
 * content (not "Subproject commit X-dirty", the same for any edit in it);
 * never the user's external diff program, text conversion or colours,
 * which would run a program of theirs mid-session and hash its output
 * instead of the source */
static const char *const git_diff[] = {"-c", "core.abbrev=40", /* full ids in a submodule's diff too */
				       "diff", "HEAD", "--full-index", "--no-renames", "--no-ext-diff",
				       "--no-textconv", "--no-color", "--submodule=diff",
				       "--ignore-submodules=untracked", NULL};

/* The untracked files of `git status -z` output (entries "?? PATH"), in
 * its order (by path); *tracked tells whether any other entry was there. */
static size_t untracked_of(const struct bg_strbuf *st, const char ***paths, bool *tracked)
{
	const char *p = st->buf, *end = st->buf + st->len;
	size_t n = 0, cap = 0;

	*paths = NULL;
	*tracked = false;
	while (p < end) {
		size_t len = strnlen(p, (size_t)(end - p));
		if (len >= 4 && p[0] == '?' && p[1] == '?' && p[2] == ' ') {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				*paths = bg_xrealloc(*paths, cap * sizeof(**paths));
			}
			(*paths)[n++] = p + 3;
		} else if (len) {
			*tracked = true;
			if ((p[0] == 'R' || p[0] == 'C') && p + len + 1 < end) {
				/* (not with --no-renames) the source path follows */
				p += len + 1;
				len = strnlen(p, (size_t)(end - p));
			}
		}
		p += len + 1;
	}
	return n;
}

/*
 * Appends the identity of the untracked file top/path to sb, NUL-ended:
 * "sha256:HEX" of its content up to BG_UNTRACKED_READ_MAX bytes while
 * *budget (bytes, BG_UNTRACKED_READ_BUDGET per state) lasts, else
 * "size:N mtime:S.NS" (a large untracked dataset, or a virtual environment
 * kept in the repository, is not read each session), "link:TARGET",
 * "directory" (a repository nested in this one), "other" (a FIFO, a
 * socket, a device: never opened) or "missing".
 */
static void untracked_identity(const char *top, const char *path, long long *budget, struct bg_strbuf *sb)
{
	struct bg_strbuf full = BG_STRBUF_INIT;
	struct stat st;

	bg_strbuf_addf(&full, "%s/%s", top, path);
	if (lstat(full.buf, &st) != 0) {
		bg_strbuf_adds(sb, "missing");
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(full.buf, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		bg_strbuf_addf(sb, "link:%s", target);
	} else if (S_ISDIR(st.st_mode)) {
		bg_strbuf_adds(sb, "directory");
	} else if (!S_ISREG(st.st_mode)) {
		bg_strbuf_adds(sb, "other");
	} else if (st.st_size > BG_UNTRACKED_READ_MAX || st.st_size > *budget) {
		bg_strbuf_addf(sb, "size:%lld mtime:%lld.%09ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			       (long)st.st_mtim.tv_nsec);
	} else {
		struct bg_strbuf content = BG_STRBUF_INIT;
		struct bg_ctx ctx;
		char hex[65];
		int fd = open(full.buf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		bool read_ok = false;

		bg_ctx_init(&ctx);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= BG_UNTRACKED_READ_MAX) {
			for (;;) { /* to the end (read_ok), or an error */
				ssize_t got;
				bg_strbuf_grow(&content, 65536);
				got = read(fd, content.buf + content.len, 65536);
				if (got < 0 && errno == EINTR)
					continue;
				if (got <= 0) {
					read_ok = got == 0;
					break;
				}
				bg_strbuf_setlen(&content, content.len + (size_t)got);
			}
		}
		if (fd >= 0)
			close(fd);
		*budget -= (long long)st.st_size;
		if (read_ok && bg_sha256_hex(content.buf, content.len, hex, &ctx) == BG_OK)
			bg_strbuf_addf(sb, "sha256:%s", hex);
		else /* unreadable now: its state as far as it can be told */
			bg_strbuf_addf(sb, "unreadable:%lld mtime:%lld.%09ld", (long long)st.st_size,
				       (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
		bg_ctx_release(&ctx);
		bg_strbuf_release(&content);
	}
	bg_strbuf_addch(sb, '\0');
	bg_strbuf_release(&full);
}

/*
 * The untracked files the state covers: all of them, or, after a session's
 * start, those that were untracked then, in that order (a file the runs
 * created is an output, not the source they ran); a file untracked then and
 * gone since is NULL ("missing"). The start's files are since_all (every
 * one, kept in memory) or else since's "untracked" when it lists every one;
 * *start receives that list (borrowed), or NULL when every file now is
 * covered. *n receives the count; the array is the caller's, its paths
 * point into status or are NULL.
 */
static const char **untracked_covered(const char **now, size_t nnow, const json_t *since,
				      const json_t *since_all, const json_t **start, size_t *n)
{
	const json_t *listed = json_object_get(since, "untracked");
	const json_t *count = json_object_get(since, "untracked_files");
	const char **out;
	bool *used;

	if (json_is_array(since_all) && json_is_integer(count) &&
	    json_array_size(since_all) == (size_t)json_integer_value(count))
		listed = since_all;
	*start = listed;
	if (!json_is_array(listed) || !json_is_integer(count) ||
	    json_array_size(listed) != (size_t)json_integer_value(count)) {
		/* no start, or more files then than it kept: every one now */
		*start = NULL;
		*n = nnow;
		out = bg_xcalloc(nnow ? nnow : 1, sizeof(*out));
		if (nnow)
			memcpy(out, now, nnow * sizeof(*out));
		return out;
	}
	*n = json_array_size(listed);
	out = bg_xcalloc(*n ? *n : 1, sizeof(*out));
	/* each file now stands for one file then: two names written alike
	 * (bytes not UTF-8 as \xNN, and those four characters themselves) are
	 * taken in git's order, one each */
	used = bg_xcalloc(nnow ? nnow : 1, sizeof(*used));
	for (size_t i = 0; i < *n; i++) {
		const char *want = json_string_value(json_array_get(listed, i));
		/* a name that is not UTF-8 was recorded with \xNN for its bytes */
		bool shown = want && strstr(want, "\\x");
		for (size_t j = 0; want && j < nnow; j++) {
			bool same;
			if (used[j])
				continue;
			if (shown) {
				json_t *t = bg_json_text(now[j]);
				same = strcmp(json_string_value(t), want) == 0;
				json_decref(t);
			} else {
				same = strcmp(now[j], want) == 0;
			}
			if (same) {
				out[i] = now[j];
				used[j] = true;
				break;
			}
		}
	}
	free(used);
	return out;
}

json_t *bg_provenance_git(const char *root, const char *const *exclude, const json_t *since,
			  const json_t *since_all, json_t **all)
{
	json_t *g = json_object();
	const json_t *start = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT, status = BG_STRBUF_INIT, top = BG_STRBUF_INIT;
	const char **now = NULL, **covered = NULL;
	size_t nnow, ncovered = 0;
	bool tracked;

	if (all)
		*all = NULL;
	json_object_set_new(g, "revision", json_null());
	json_object_set_new(g, "dirty", json_null());
	json_object_set_new(g, "diff_sha256", json_null());
	json_object_set_new(g, "untracked_files", json_null());
	json_object_set_new(g, "untracked", json_null());
	{
		json_t *ex = json_array();
		for (size_t i = 0; exclude && exclude[i]; i++)
			json_array_append_new(ex, bg_json_text(exclude[i]));
		json_object_set_new(g, "excluded", ex);
	}
	if (!git_repository_possible(root) || !git(root, git_rev_parse, NULL, &sb)) {
		bg_strbuf_release(&sb);
		return g;
	}
	chomp(&sb);
	json_object_set_new(g, "revision", bg_json_text(sb.buf));
	bg_strbuf_reset(&sb);
	if (!git(root, git_status, exclude, &status))
		goto done;
	nnow = untracked_of(&status, &now, &tracked);
	covered = untracked_covered(now, nnow, since, since_all, &start, &ncovered);
	if (ncovered && !git(root, git_toplevel, NULL, &top))
		goto done; /* the untracked files cannot be found: the state is unknown */
	chomp(&top);
	{
		bool dirty = tracked || ncovered;
		json_t *listed = json_array();

		json_object_set_new(g, "dirty", json_boolean(dirty));
		json_object_set_new(g, "untracked_files", json_integer((json_int_t)ncovered));
		for (size_t i = 0; i < ncovered && i < BG_UNTRACKED_LISTED; i++) {
			if (covered[i])
				json_array_append_new(listed, bg_json_text(covered[i]));
			else
				json_array_append(listed, json_array_get(start, i));
		}
		json_object_set_new(g, "untracked", listed);
		if (all) {
			*all = json_array();
			for (size_t i = 0; i < ncovered; i++)
				json_array_append_new(*all, covered[i] ? bg_json_text(covered[i])
								       : json_incref(json_array_get(start, i)));
		}
		if (dirty && git(root, git_diff, exclude, &sb)) {
			struct bg_ctx ctx;
			char hex[65];

			long long budget = BG_UNTRACKED_READ_BUDGET;

			/* the untracked files after the diff, each by its path and
			 * identity: with none, the hash is the diff's alone */
			if (ncovered)
				bg_strbuf_addn(&sb, "\0untracked\0", 11);
			for (size_t i = 0; i < ncovered; i++) {
				const json_t *was = json_array_get(start, i);
				if (covered[i]) {
					bg_strbuf_addn(&sb, covered[i], strlen(covered[i]) + 1);
					untracked_identity(top.buf, covered[i], &budget, &sb);
				} else {
					bg_strbuf_adds(&sb, json_string_value(was));
					bg_strbuf_addn(&sb, "\0missing\0", 9);
				}
			}
			/* like a failed `git diff`, a digest that cannot be computed
			 * (libcrypto missing) leaves diff_sha256 null */
			bg_ctx_init(&ctx);
			if (bg_sha256_hex(sb.buf, sb.len, hex, &ctx) == BG_OK)
				json_object_set_new(g, "diff_sha256", json_string(hex));
			bg_ctx_release(&ctx);
		}
	}
done:
	free(now);
	free(covered);
	bg_strbuf_release(&top);
	bg_strbuf_release(&status);
	bg_strbuf_release(&sb);
	return g;
}

bool bg_provenance_git_why(const char *root, struct bg_strbuf *why)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	int st = -1;
	bool started;

	bg_ctx_init(&ctx);
	started = git_run(root, git_rev_parse, NULL, true, &out, &st, &ctx) == BG_OK;

	if (!started) {
		bg_strbuf_adds(why, bg_ctx_message(&ctx)); /* "'git': cannot start: ..." */
	} else if (st != 0) {
		size_t n = strcspn(out.buf, "\n");
		if (n)
			bg_strbuf_addn(why, out.buf, n);
		else
			bg_strbuf_addf(why, "'git rev-parse --verify HEAD' exited with status %d", st);
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&out);
	return started;
}

void bg_provenance_git_state_why(const char *root, const char *const *exclude, struct bg_strbuf *why)
{
	const char *const *cmds[] = {git_status, git_diff};
	const char *names[] = {"git status", "git diff HEAD"};
	struct bg_strbuf out = BG_STRBUF_INIT;

	for (int k = 0; k < 2; k++) {
		struct bg_ctx ctx;
		int st = -1;

		bg_ctx_init(&ctx);
		bg_strbuf_reset(&out);
		if (git_run(root, cmds[k], exclude, true, &out, &st, &ctx) != BG_OK) {
			bg_strbuf_addf(why, "%s: %s", names[k], bg_ctx_message(&ctx));
			bg_ctx_release(&ctx);
			break;
		}
		bg_ctx_release(&ctx);
		if (st != 0) {
			bg_strbuf_addf(why, "%s: ", names[k]);
			git_said(&out, st, why);
			break;
		}
	}
	bg_strbuf_release(&out);
}

static json_t *file_field(const char *path, const char *prefix, char sep)
{
	FILE *f = fopen(path, "re");
	char line[512];
	size_t plen = strlen(prefix);
	json_t *v = json_null();

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		char *p, *e;

		if (strncmp(line, prefix, plen) != 0)
			continue;
		p = line + plen;
		if (sep) {
			p = strchr(p, sep);
			if (!p)
				continue;
			p++;
		}
		while (*p == ' ' || *p == '\t' || *p == '"')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '"'))
			e--;
		*e = '\0';
		json_decref(v);
		v = bg_json_text(p);
		break;
	}
	fclose(f);
	return v;
}

/* How many CPUs this process (and so every run, which inherits it) may run
 * on: its affinity mask, which `taskset`, a container's --cpuset-cpus or a
 * batch scheduler's binding narrow; null when it cannot be read. */
static json_t *cpus_allowed(void)
{
	for (int n = 1024; n <= 1 << 20; n *= 4) {
		cpu_set_t *set = CPU_ALLOC((size_t)n);
		size_t size = CPU_ALLOC_SIZE((size_t)n);
		int count;

		if (!set)
			return json_null();
		if (sched_getaffinity(0, size, set) == 0) {
			count = CPU_COUNT_S(size, set);
			CPU_FREE(set);
			return json_integer(count);
		}
		CPU_FREE(set);
		if (errno != EINVAL) /* EINVAL: a mask too small for this machine */
			break;
	}
	return json_null();
}

static json_t *capture_host(void)
{
	json_t *h = json_object(), *mem;
	struct utsname u;
	double load[3];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	json_object_set_new(h, "cpu_model", file_field("/proc/cpuinfo", "model name", ':'));
	json_object_set_new(h, "logical_cores", cores > 0 ? json_integer(cores) : json_null());
	json_object_set_new(h, "cpus_allowed", cpus_allowed());
	mem = file_field("/proc/meminfo", "MemTotal:", 0);
	if (json_is_string(mem)) {
		long long kb = atoll(json_string_value(mem));

		json_object_set_new(h, "memory_total_bytes", json_integer(kb * 1024));
	} else {
		json_object_set_new(h, "memory_total_bytes", json_null());
	}
	json_decref(mem);
	json_object_set_new(h, "kernel_release", uname(&u) == 0 ? bg_json_text(u.release) : json_null());
	json_object_set_new(h, "os_release", file_field("/etc/os-release", "PRETTY_NAME=", 0));
	json_object_set_new(h, "cpu_governor",
			    file_field("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "", 0));
	if (getloadavg(load, 3) == 3) {
		json_t *l = json_array();

		for (int i = 0; i < 3; i++)
			json_array_append_new(l, json_real(load[i]));
		json_object_set_new(h, "load_average", l);
	} else {
		json_object_set_new(h, "load_average", json_null());
	}
	bg_host_conditions("", h);
	return h;
}

static json_t *relative_cwd(const char *root)
{
	char *cwd = getcwd(NULL, 0);
	size_t n = root ? strlen(root) : 0;
	json_t *v = json_null();

	if (!cwd)
		return v;
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (root && strncmp(cwd, root, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0')) {
		json_decref(v);
		v = bg_json_text(cwd[n] ? cwd + n + 1 : ".");
	}
	free(cwd);
	return v;
}

json_t *bg_provenance_capture(const struct bg_provenance_opts *opts)
{
	json_t *p = json_object(), *argv = json_array(), *env = json_object();

	json_object_set_new(p, "git", bg_provenance_git(opts->root ? opts->root : ".", opts->git_exclude, NULL, NULL,
							opts->untracked_all));
	json_object_set_new(p, "benchgate_version", json_string(BENCHGATE_VERSION));
	for (int i = 0; i < opts->argc; i++)
		json_array_append_new(argv, bg_json_text(opts->argv[i]));
	json_object_set_new(p, "argv", argv);
	json_object_set_new(p, "cwd", relative_cwd(opts->root));
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char *name;
		json_t *val = json_null();

		if (!eq)
			continue;
		name = bg_xstrndup(*e, (size_t)(eq - *e));
		for (size_t k = 0; k < opts->nenv; k++) {
			if (strcmp(opts->env_names[k], name) != 0)
				continue;
			json_decref(val);
			val = bg_provenance_secret_name(name) ? json_string("<redacted>")
							      : bg_json_text(eq + 1);
		}
		{
			json_t *key = bg_json_text(name); /* a name that is not UTF-8 stays in */

			json_object_set_new(env, json_string_value(key), val);
			json_decref(key);
		}
		free(name);
	}
	json_object_set_new(p, "environment", env);
	json_object_set_new(p, "host", capture_host());
	json_object_set_new(p, "gpu", opts->gpu ? json_incref(opts->gpu) : json_null());
	return p;
}

void bg_provenance_untracked_text(const json_t *git, struct bg_strbuf *out)
{
	const json_t *count = json_object_get(git, "untracked_files"), *listed = json_object_get(git, "untracked");
	json_int_t n = json_integer_value(count);
	size_t shown = json_array_size(listed) < 3 ? json_array_size(listed) : 3;

	if (!json_is_integer(count) || n <= 0)
		return;
	bg_strbuf_addf(out, "%lld untracked file%s", (long long)n, n == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++)
		bg_strbuf_addf(out, "%s'%s'", i ? ", " : ": ", json_string_value(json_array_get(listed, i)));
	if ((json_int_t)shown < n)
		bg_strbuf_adds(out, ", ...");
}

bool bg_provenance_git_changed(const json_t *before, const json_t *after, struct bg_strbuf *why)
{
	const char *r0 = json_string_value(json_object_get(before, "revision"));
	const char *r1 = json_string_value(json_object_get(after, "revision"));

	if (!r0)
		return false;
	if (!r1 || strcmp(r0, r1) != 0) {
		bg_strbuf_addf(why, "the source revision changed from %.12s to %.12s", r0, r1 ? r1 : "none");
		return true;
	}
	/* what was read at the start but cannot be read now cannot be told unchanged */
	if ((json_is_boolean(json_object_get(before, "dirty")) && !json_is_boolean(json_object_get(after, "dirty"))) ||
	    (json_is_string(json_object_get(before, "diff_sha256")) && json_is_true(json_object_get(after, "dirty")) &&
	     !json_is_string(json_object_get(after, "diff_sha256")))) {
		bg_strbuf_adds(why, "the source could not be read again after the last run (git status or git diff failed)");
		return true;
	}
	if (!json_equal(json_object_get(before, "dirty"), json_object_get(after, "dirty")) ||
	    !json_equal(json_object_get(before, "diff_sha256"), json_object_get(after, "diff_sha256"))) {
		bg_strbuf_adds(why, "the uncommitted changes to the source");
		if (json_integer_value(json_object_get(before, "untracked_files")) > 0) {
			bg_strbuf_adds(why, " (including ");
			bg_provenance_untracked_text(before, why);
			bg_strbuf_addch(why, ')');
		}
		bg_strbuf_adds(why, json_is_true(json_object_get(after, "dirty")) ? " changed" : " were committed or undone");
		return true;
	}
	return false;
}

/* --- keeping home directories and secrets out of what is written ------- */

/* A byte that continues a path or a word: not a separator such as white
 * space, a quote, '=', ':', ',', ';' or a bracket. Bytes >= 0x80 (UTF-8
 * names) continue. */
static bool path_byte(unsigned char c)
{
	return c >= 0x80 || isalnum(c) || (c && strchr("/._-~+@%#", c) != NULL);
}

/* The length of the case-insensitive home marker ("/home/" or "/users/") at s, or 0. */
static size_t home_marker(const char *s)
{
	if (s[0] != '/')
		return 0;
	if (strncasecmp(s, "/home/", 6) == 0)
		return 6;
	if (strncasecmp(s, "/users/", 7) == 0)
		return 7;
	return 0;
}

/* Appends s with $HOME (home) written "~" where it starts a path, and every
 * other absolute path holding /home/NAME or /users/NAME written "~NAME" from
 * its start through NAME. */
static void scrub_paths(const char *s, const char *home, struct bg_strbuf *out)
{
	struct bg_strbuf a = BG_STRBUF_INIT;
	size_t hlen = home ? strlen(home) : 0, done = 0, i;

	while (hlen > 1 && home[hlen - 1] == '/')
		hlen--;
	if (home && (home[0] != '/' || hlen < 2))
		hlen = 0;
	for (i = 0; s[i];) {
		if (hlen && (i == 0 || !path_byte((unsigned char)s[i - 1])) && strncmp(s + i, home, hlen) == 0 &&
		    (s[i + hlen] == '/' || !path_byte((unsigned char)s[i + hlen]))) {
			bg_strbuf_addch(&a, '~');
			i += hlen;
		} else {
			bg_strbuf_addch(&a, s[i++]);
		}
	}
	s = a.len ? a.buf : "";
	for (i = 0; s[i];) {
		size_t m = home_marker(s + i), start = i, end;

		if (!m) {
			i++;
			continue;
		}
		while (start > done && path_byte((unsigned char)s[start - 1]))
			start--;
		/* a relative path (out/home/x) names no home; one from "~" does */
		if (s[start] != '/' && s[start] != '~') {
			i++;
			continue;
		}
		end = i + m;
		while (s[end] && s[end] != '/' && path_byte((unsigned char)s[end]))
			end++;
		bg_strbuf_addn(out, s + done, start - done);
		bg_strbuf_addch(out, '~');
		bg_strbuf_addn(out, s + i + m, end - (i + m));
		done = i = end;
	}
	bg_strbuf_adds(out, s + done);
	bg_strbuf_release(&a);
}

/* The end of the shell word that starts at s: to the first white space
 * outside quotes ('a b'c is one word), or the end of the text. */
static const char *value_end(const char *s)
{
	while (*s && !isspace((unsigned char)*s)) {
		if (*s == '\'' || *s == '"') {
			const char *q = strchr(s + 1, *s);

			if (!q)
				return s + strlen(s);
			s = q + 1;
		} else {
			s++;
		}
	}
	return s;
}

/* Whether the option or assignment name in [s, e) (leading dashes skipped) looks secret. */
static bool secret_span(const char *s, const char *e)
{
	while (s < e && *s == '-')
		s++;
	return s < e && secret_name_n(s, (size_t)(e - s));
}

/* A byte of an HTTP header name ("X-Api-Key"). */
static bool header_byte(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '_';
}

/* Whether p, in the word that starts at w, is the "://" of a URL. */
static bool url_at(const char *w, const char *p)
{
	return p > w && strncmp(p, "://", 3) == 0 && isalnum((unsigned char)p[-1]);
}

/* The end of a URL's authority (user info, host, port) that starts at a. */
static const char *authority_end(const char *a)
{
	return a + strcspn(a, " \t\n\v\f\r'\"/?#");
}

/* The quote open after c, when q was open before it (0: none). */
static char quote_after(char q, char c)
{
	if (!q && (c == '\'' || c == '"'))
		return c;
	return c == q ? 0 : q;
}

/*
 * What is redacted inside a word: when p, in the word that starts at w and
 * inside the quote q (0: none), starts a secret, returns where its value
 * ends and sets *v to where it starts (what is before it stays); else NULL.
 * A secret is:
 *  - where a word starts (after a byte that is not a path byte), the value
 *    of a header whose name looks secret ("Cookie: v", "X-Api-Key: v"; not
 *    "x://"), to the quote that closes it or the end of the text; the word
 *    after "Bearer " or "Basic " (any case; outside quotes a quoted word
 *    whole);
 *  - in a URL, the user info's password ("://user:pw@") or the whole user
 *    info ("://token@");
 *  - the value of a query parameter whose name looks secret ("?token=v",
 *    "&api_key=v");
 *  - the quoted value of a quoted name that looks secret, as JSON or a
 *    Python dict writes it ("\"token\": \"v\"", "'api_key': 'v'"), to its
 *    closing quote, or to the end of the text when that quote is escaped
 *    or missing.
 * An empty value is none. Every value starts after a byte that is not a
 * letter or digit and ends before a separator, so that what is written
 * ("<redacted>") is found and redacted again as itself.
 */
static const char *secret_at(const char *w, const char *p, char q, const char **v)
{
	static const char *const ends = " \t\n\v\f\r'\"";
	const char *end = NULL;

	if (isalnum((unsigned char)*p) && (p == w || !path_byte((unsigned char)p[-1]))) {
		const char *n = p;
		size_t k = strncasecmp(p, "bearer", 6) == 0 ? 6 : strncasecmp(p, "basic", 5) == 0 ? 5 : 0;

		while (header_byte((unsigned char)*n))
			n++;
		if (k && (p[k] == ' ' || p[k] == '\t')) {
			*v = p + k + strspn(p + k, " \t");
			end = !q && (**v == '\'' || **v == '"') ? value_end(*v) : *v + strcspn(*v, ends);
		} else if (*n == ':' && strncmp(n + 1, "//", 2) != 0 && secret_span(p, n)) {
			*v = n + 1 + strspn(n + 1, " \t");
			end = q && strchr(*v, q) ? strchr(*v, q) : *v + strlen(*v);
		}
	} else if (url_at(w, p)) {
		const char *a = p + 3, *colon;

		for (const char *c = a; c < authority_end(a); c++)
			if (*c == '@')
				end = c;
		colon = end ? memchr(a, ':', (size_t)(end - a)) : NULL;
		*v = colon ? colon + 1 : a;
	} else if ((*p == '"' || *p == '\'') && !q) {
		/* "NAME": "v" as JSON (or a Python dict) writes it */
		const char *n = p + 1;

		while (header_byte((unsigned char)*n))
			n++;
		if (*n == *p && secret_span(p + 1, n)) {
			n += 1 + strspn(n + 1, " \t");
			if (*n == ':') {
				n += 1 + strspn(n + 1, " \t");
				/* to the quote that closes it as a shell word's quote
				 * does (value_end), so that what follows reads as it
				 * did; one escaped ("a\\"b"): to the end of the text */
				if (*n == '"' || *n == '\'') {
					*v = n + 1;
					end = strchr(*v, *n);
					if (!end || (end > *v && end[-1] == '\\'))
						end = *v + strlen(*v);
				}
			}
		}
	} else if (*p == '?' || *p == '&') {
		const char *n = p + 1 + strcspn(p + 1, "=&#?/ \t\n\v\f\r'\"");

		if (*n == '=' && secret_span(p + 1, n)) {
			*v = n + 1;
			end = *v + strcspn(*v, "&# \t\n\v\f\r'\"");
		}
	}
	return end && end > *v ? end : NULL;
}

/* Appends the shell word [w, e) with the secrets inside it (secret_at)
 * written "<redacted>"; returns where the text goes on: e, or past it
 * where a secret's value went on. *to_end says a secret's value ran to the
 * word's end or past it. */
static const char *scrub_word(const char *w, const char *e, bool *to_end, struct bg_strbuf *out)
{
	const char *p = w, *v, *r;
	char q = 0; /* the quote open at p */

	*to_end = false;
	while (p < e) {
		r = secret_at(w, p, q, &v);
		if (url_at(w, p)) {
			/* a URL's authority is written whole (its user info
			 * redacted): a secret seen in it could reach past its end
			 * and make another URL of it */
			const char *a = p + 3, *ae = authority_end(a);

			if (r) {
				bg_strbuf_addn(out, p, (size_t)(v - p));
				bg_strbuf_adds(out, "<redacted>");
				p = r;
			}
			bg_strbuf_addn(out, p, (size_t)(ae - p));
			*to_end = false;
			p = ae;
			continue;
		}
		if (r) {
			bg_strbuf_addn(out, p, (size_t)(v - p));
			bg_strbuf_adds(out, "<redacted>");
			*to_end = r >= e;
			while (p < v) /* the quotes before the value ("NAME": ") stay open or closed */
				q = quote_after(q, *p++);
			p = r;
			/* a value that ran past the word to the quote closing it
			 * ("NAME": "a b"): the word goes on after that quote */
			if (r >= e && q && *r == q) {
				e = value_end(r + 1);
				*to_end = false;
			}
			continue;
		}
		*to_end = false;
		q = quote_after(q, *p);
		bg_strbuf_addch(out, *p++);
	}
	return p;
}

/* Appends s with the values of secret-looking options and assignments and
 * the secrets inside its words (secret_at) redacted; *pending says the next
 * word is such a value (an option such as "--token" ended the previous word
 * or string: then s is that word whole) and is updated. */
static void scrub_secrets(const char *s, bool *pending, struct bg_strbuf *out)
{
	if (*pending && *s && *s != '-') { /* the value is this whole argv word */
		bg_strbuf_adds(out, "<redacted>");
		*pending = false;
		return;
	}
	while (*s) {
		const char *w = s, *e, *eq, *v;
		bool to_end;
		char q;

		while (*w && isspace((unsigned char)*w))
			w++;
		bg_strbuf_addn(out, s, (size_t)(w - s));
		if (!*w)
			break;
		if (*pending && *w != '-') {
			e = value_end(w);
			bg_strbuf_adds(out, "<redacted>");
			*pending = false;
			s = e;
			continue;
		}
		*pending = false;
		/* an assignment's name ends before the first secret in its word
		 * and before a URL or a query ('?', '&'): the '=' after them (or
		 * after white space in them) could be gone or written over once
		 * they are redacted, or its value redacted make a secret of
		 * them, and the text would not scrub to itself */
		for (e = w, q = 0; *e && !isspace((unsigned char)*e) && !strchr("=?&", *e); e++) {
			if (url_at(w, e) || secret_at(w, e, q, &v))
				break;
			q = quote_after(q, *e);
		}
		eq = *e == '=' ? e : NULL;
		if (eq && secret_span(w, eq)) {
			bg_strbuf_addn(out, w, (size_t)(eq + 1 - w));
			bg_strbuf_adds(out, "<redacted>");
			s = value_end(eq + 1);
			continue;
		}
		e = value_end(w);
		s = scrub_word(w, e, &to_end, out);
		/* the next word is the value of "--password" ending this one,
		 * unless a value redacted in this one ran to its end */
		*pending = !eq && *w == '-' && !to_end && secret_span(w, e);
	}
}

void bg_provenance_scrub_text(const char *s, const char *home, bool *pending, struct bg_strbuf *out)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	bool none = false;

	/* a home holding what a redaction writes or writes it after ('<', '>',
	 * '=', ':', white space: no real home does) could be made by a
	 * redaction, and the text would not scrub to itself (fuzz_scrub found
	 * such homes): such a home is not looked for; /home/NAME and
	 * /users/NAME still are */
	if (home && strpbrk(home, "<>=: \t\n\v\f\r"))
		home = NULL;
	/* until nothing changes: writing an inner /home/NAME as ~NAME can
	 * leave a text that now starts with $HOME (a home holding "~"). Each
	 * pass that changes the text shortens it, so this ends. */
	scrub_paths(s, home, &p);
	for (;;) {
		struct bg_strbuf again = BG_STRBUF_INIT;

		scrub_paths(p.len ? p.buf : "", home, &again);
		if (again.len == p.len) {
			bg_strbuf_release(&again);
			break;
		}
		bg_strbuf_release(&p);
		p = again;
	}
	scrub_secrets(p.len ? p.buf : "", pending ? pending : &none, out);
	bg_strbuf_release(&p);
}

/* Scrubs v in place; strings of one array share the pending state, so that
 * ["--token", "abc"] loses "abc". */
static void scrub_value(json_t *v, const char *home, bool *pending)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v)) {
		bg_provenance_scrub_text(json_string_value(v), home, pending, &sb);
		if (strcmp(sb.len ? sb.buf : "", json_string_value(v)) != 0)
			json_string_set(v, sb.len ? sb.buf : "");
	} else if (json_is_array(v)) {
		bool in_array = false;

		json_array_foreach(v, i, x)
			scrub_value(x, home, &in_array);
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, x) {
			bool own = false;

			scrub_value(x, home, &own);
		}
	}
	bg_strbuf_release(&sb);
}

void bg_provenance_scrub(json_t *doc, const char *home)
{
	bool pending = false;
	/* the document's text went through bg_json_text: a home that is not
	 * UTF-8 is looked for as it reads there */
	json_t *h = bg_json_text(home);

	scrub_value(doc, json_string_value(h), &pending);
	json_decref(h);
}
