/*
 * inputs.c - the files a project is read from (see inputs.h).
 */
#include "cli/inputs.h"
#include "benchgate/fsutil.h"
#include "benchgate/lifecycle.h"
#include "benchgate/config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the file at path (which exists) lies inside folder: its parent,
 * links resolved, is folder or below it (the parent of the file it leads
 * to, for a link: the file written). */
static bool inside(const char *path, const char *folder)
{
	char dir[PATH_MAX], top[PATH_MAX], *parent = realpath(path, NULL), *slash;
	bool in = false;
	size_t n;

	if (!parent)
		parent = bg_xstrdup(path);
	if ((slash = strrchr(parent, '/')))
		*slash = '\0';
	if (realpath(slash ? (*parent ? parent : "/") : ".", dir) && realpath(folder, top)) {
		n = strlen(top);
		in = strncmp(dir, top, n) == 0 && (dir[n] == '\0' || dir[n] == '/' || n == 1);
	}
	free(parent);
	return in;
}

/* Whether later, a path not there yet as bg_path_named_later gives it, would lie
 * inside folder (as it is, or as it will be named once made). */
static bool inside_later(const char *later, const char *folder)
{
	char *top = realpath(folder, NULL);
	size_t n;
	bool in;

	if (!top && !(top = bg_path_named_later(folder)))
		return false;
	n = strlen(top);
	in = strncmp(later, top, n) == 0 && (later[n] == '/' || (n == 1 && top[0] == '/'));
	free(top);
	return in;
}

/* What the file at path is by the folder it lies in (in(path, folder)
 * says whether it does): one of the experiments folder or a device lease,
 * where the verbs that read those would meet it; NULL for neither. */
static const char *folder_role(const struct bg_config *cfg, const char *path,
			       bool (*in)(const char *path, const char *folder))
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = NULL;

	if (cfg->experiments) {
		bg_config_path(cfg, &p, cfg->experiments);
		if (in(path, p.buf))
			what = "a file of the experiments folder";
	}
	if (!what) {
		bg_strbuf_reset(&p);
		bg_lifecycle_leases_dir(cfg, &p);
		if (in(path, p.buf))
			what = "a device lease";
	}
	bg_strbuf_release(&p);
	return what;
}

/*
 * "a benchgate.json that benchgate would read from here" when a is a file
 * named benchgate.json in the working directory or a folder above it, at
 * or below the project's root (above it too where the project has no
 * benchgate.json): benchgate reads the nearest one upwards, so one written
 * there makes another project of this one (every later verb reads it);
 * NULL otherwise.
 */
static const char *config_found_here(const struct bg_config *cfg, const char *a)
{
	const char *slash = strrchr(a, '/');
	char *cwd, *top;
	size_t n;
	bool found;

	if (!slash || strcmp(slash + 1, "benchgate.json") != 0 || !(cwd = realpath(".", NULL)))
		return NULL;
	n = (size_t)(slash - a);
	found = strncmp(cwd, a, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/' || n == 0);
	if (found && cfg->config_path && (top = realpath(cfg->root, NULL))) {
		found = n >= strlen(top); /* a folder above the root holding one: this project's is nearer */
		free(top);
	}
	free(cwd);
	return found ? "a benchgate.json that benchgate would read from here" : NULL;
}

/*
 * What a (absolute, links resolved, as bg_path_named_later gives it) is by
 * its name, there or not yet: one of the files benchgate.json names (those
 * in roles; benchgate.json itself also where there is none yet, since it is
 * read once made), the sqlite store or a file SQLite keeps beside it, a lock
 * or a promotion's journal in benchgate's state folder, the machine lease;
 * NULL for none. A lock replaced by a new file locks nothing: whoever holds
 * it holds the old one.
 */
static const char *named_role(const struct bg_config *cfg, const char *a, unsigned roles)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = bg_config_file_named(cfg, a, roles);
	struct bg_ctx ctx;
	char *state, *lease;

	bg_lifecycle_state_dir(cfg, &p);
	state = bg_path_named_later(p.buf);
	for (size_t i = 0; state && i < BG_STATE_FILES && !what; i++) {
		const struct bg_state_file *f = &bg_state_files[i];
		size_t n = strlen(state), m = strlen(f->name);

		/* the leases are found by their folder (folder_role), and the
		 * dashboard's folder is where dashboard writes */
		if (strcmp(f->name, "leases") == 0 || strcmp(f->name, "dashboard") == 0)
			continue;
		if (strncmp(a, state, n) == 0 && a[n] == '/' && strncmp(a + n + 1, f->name, m) == 0 &&
		    (a[n + 1 + m] == '\0' || (f->folder && a[n + 1 + m] == '/')))
			what = f->what;
	}
	free(state);
	bg_strbuf_reset(&p);
	bg_ctx_init(&ctx);
	if (!what && bg_machine_lease_path(&p, &ctx) == BG_OK && (lease = bg_path_named_later(p.buf))) {
		if (strcmp(a, lease) == 0)
			what = "the machine lease";
		free(lease);
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&p);
	if (!what)
		what = config_found_here(cfg, a);
	return what;
}

/* An evidence import of reg whose file is the file at; NULL when none is. */
static const char *evidence_import(const struct bg_registry *reg, const struct stat *at)
{
	const struct bg_value *imports = bg_value_get(reg->root, "evidence_imports"), *item;
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = NULL;
	struct stat b;
	size_t i;

	BG_VALUE_ARRAY_FOREACH(imports, i, item) {
		const char *ev = bg_value_str(bg_value_get(item, "path"));

		if (what || !ev)
			continue;
		bg_strbuf_reset(&p);
		bg_config_path(reg->cfg, &p, ev);
		if (stat(p.buf, &b) == 0 && at->st_dev == b.st_dev && at->st_ino == b.st_ino)
			what = "an evidence import of the registry";
	}
	bg_strbuf_release(&p);
	return what;
}

char *bg_cli_named_later_followed(const char *path)
{
	char *p = bg_xstrdup(path), *later;

	for (int hops = 0; hops < 40; hops++) {
		char to[PATH_MAX];
		struct stat st;
		ssize_t n;
		const char *slash;

		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode) || (n = readlink(p, to, sizeof(to) - 1)) < 0)
			break;
		to[n] = '\0';
		slash = strrchr(p, '/');
		if (to[0] != '/' && slash) { /* from the link's folder */
			struct bg_strbuf sb = BG_STRBUF_INIT;

			bg_strbuf_addf(&sb, "%.*s/%s", (int)(slash - p), p, to);
			free(p);
			p = bg_strbuf_detach(&sb, NULL);
		} else {
			free(p);
			p = bg_xstrdup(to);
		}
	}
	later = bg_path_named_later(p);
	free(p);
	return later;
}

/* bg_cli_input_at and bg_cli_project_file_at: reg NULL when there is none. */
static const char *file_at(const struct bg_config *cfg, const struct bg_registry *reg, const char *path,
			   unsigned roles)
{
	const char *what = NULL;
	struct stat at;
	char *later = NULL, *a;

	/* a new file (or a link to nothing, refused when written) replaces
	 * nothing that is there, unless a folder made on the way leads back to
	 * one ("new/../benchmarks/benchmark_registry.json"); but it may be one
	 * that benchgate reads or locks once it is there */
	if (stat(path, &at) != 0) {
		if (!(later = bg_cli_named_later_followed(path)))
			return NULL;
		if (stat(later, &at) != 0) {
			/* where a folder benchgate reads would hold it, or by its name */
			what = folder_role(cfg, later, inside_later);
			if (!what)
				what = named_role(cfg, later, roles);
			free(later);
			return what;
		}
		path = later;
	}
	/* links followed on both sides: the atomic writer writes where a link leads */
	what = bg_config_file_role(cfg, &at, roles);
	if (!what && reg)
		what = evidence_import(reg, &at);
	if (!what)
		what = folder_role(cfg, path, inside);
	if (!what && (a = realpath(path, NULL))) {
		what = named_role(cfg, a, roles);
		free(a);
	}
	free(later);
	return what;
}

const char *bg_cli_input_at(const char *path, const struct bg_registry *reg, bool generated)
{
	return file_at(reg->cfg, reg, path, generated ? BG_FILE_ALL : BG_FILE_ALL & ~BG_FILE_GENERATED);
}

bool bg_cli_file_within(const char *path, const char *folder)
{
	struct stat st;
	char *later;
	bool in;

	if (stat(path, &st) == 0)
		return inside(path, folder);
	if (!(later = bg_path_named_later(path)))
		return false;
	in = inside_later(later, folder);
	free(later);
	return in;
}

const char *bg_cli_project_file_at(const struct bg_config *cfg, const char *path)
{
	return file_at(cfg, NULL, path, BG_FILE_ALL);
}
