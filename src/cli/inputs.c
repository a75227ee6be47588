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

const char *bg_cli_input_at(const char *path, const struct bg_registry *reg, bool generated)
{
	const struct bg_config *cfg = reg->cfg;
	const struct bg_value *imports = bg_value_get(reg->root, "evidence_imports"), *item;
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = NULL;
	struct stat at, b;
	char *later = NULL;
	size_t i;

	/* a new file (or a link to nothing, refused when written) replaces
	 * nothing, unless a folder made on the way leads back to one
	 * ("new/../benchmarks/benchmark_registry.json") */
	if (stat(path, &at) != 0) {
		if (!(later = bg_path_named_later(path)))
			return NULL;
		if (stat(later, &at) != 0) {
			/* a new file: only where a folder benchgate reads would hold it */
			what = folder_role(reg->cfg, later, inside_later);
			if (!what)
				what = bg_config_store_side_file(reg->cfg, later);
			free(later);
			return what;
		}
		path = later;
	}
	/* links followed on both sides: the atomic writer writes where a link leads */
	what = bg_config_file_role(cfg, &at, generated ? BG_FILE_ALL : BG_FILE_ALL & ~BG_FILE_GENERATED);
	BG_VALUE_ARRAY_FOREACH(imports, i, item) {
		const char *ev = bg_value_str(bg_value_get(item, "path"));

		if (what || !ev)
			continue;
		bg_strbuf_reset(&p);
		bg_config_path(cfg, &p, ev);
		if (stat(p.buf, &b) == 0 && at.st_dev == b.st_dev && at.st_ino == b.st_ino)
			what = "an evidence import of the registry";
	}
	if (!what)
		what = folder_role(cfg, path, inside);
	bg_strbuf_release(&p);
	free(later);
	return what;
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
	struct bg_strbuf lock = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *what = NULL;
	struct stat at, b;
	char *later = NULL;

	if (stat(path, &at) != 0) {
		if (!(later = bg_path_named_later(path)))
			return NULL;
		if (stat(later, &at) != 0) {
			what = folder_role(cfg, later, inside_later);
			if (!what)
				what = bg_config_store_side_file(cfg, later);
			free(later);
			return what;
		}
		path = later;
	}
	what = bg_config_file_role(cfg, &at, BG_FILE_ALL);
	if (!what)
		what = folder_role(cfg, path, inside);
	bg_ctx_init(&ctx);
	if (!what && bg_machine_lease_path(&lock, &ctx) == BG_OK && stat(lock.buf, &b) == 0 &&
	    at.st_dev == b.st_dev && at.st_ino == b.st_ino)
		what = "the machine lease";
	bg_ctx_release(&ctx);
	bg_strbuf_release(&lock);
	free(later);
	return what;
}
