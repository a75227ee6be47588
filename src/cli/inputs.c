/*
 * inputs.c - the files a project is read from (see inputs.h).
 */
#include "cli/inputs.h"
#include "benchgate/lifecycle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether path and the input named as the project names it (relative to
 * the root) are one file, links followed on both sides: the atomic writer
 * writes the file a link leads to. */
static bool same_file(const struct stat *at, const struct bg_config *cfg, const char *input)
{
	struct bg_strbuf in = BG_STRBUF_INIT;
	struct stat b;
	bool same;

	if (!input)
		return false;
	bg_config_path(cfg, &in, input);
	same = stat(in.buf, &b) == 0 && at->st_dev == b.st_dev && at->st_ino == b.st_ino;
	bg_strbuf_release(&in);
	return same;
}

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

const char *bg_cli_input_at(const char *path, const struct bg_registry *reg, bool generated)
{
	const struct bg_config *cfg = reg->cfg;
	const struct {
		const char *path, *what;
	} inputs[] = {
		{cfg->config_path, "benchgate.json"},
		{cfg->registry_path, "the registry"},
		{cfg->profile_path, "the profile matrix"},
		{cfg->parity_matrix, "the parity matrix"},
		{cfg->runs_index, "the experiments' RUNS.md"},
		{generated ? cfg->generated_path : NULL, "the registry's generated document"},
	};
	static const char *const store_files[] = {"", "-wal", "-shm", "-journal"};
	const struct bg_value *imports = bg_value_get(reg->root, "evidence_imports"), *item;
	struct bg_strbuf p = BG_STRBUF_INIT;
	const char *what = NULL;
	struct stat at;
	size_t i;

	if (stat(path, &at) != 0)
		return NULL; /* a new file (or a link to nothing, refused when written) replaces nothing */
	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]) && !what; i++)
		if (same_file(&at, cfg, inputs[i].path))
			what = inputs[i].what;
	BG_VALUE_ARRAY_FOREACH(imports, i, item) {
		const char *ev = bg_value_str(bg_value_get(item, "path"));
		if (!what && ev && same_file(&at, cfg, ev))
			what = "an evidence import of the registry";
	}
	if (!what && cfg->store && strncmp(cfg->store, "sqlite:", 7) == 0 && cfg->store[7])
		for (i = 0; i < sizeof(store_files) / sizeof(store_files[0]) && !what; i++) {
			bg_strbuf_reset(&p);
			bg_strbuf_addf(&p, "%s%s", cfg->store + 7, store_files[i]);
			if (same_file(&at, cfg, p.buf))
				what = "the store";
		}
	if (!what && cfg->experiments) {
		bg_strbuf_reset(&p);
		bg_config_path(cfg, &p, cfg->experiments);
		if (inside(path, p.buf))
			what = "a file of the experiments folder";
	}
	if (!what) {
		bg_strbuf_reset(&p);
		bg_lifecycle_leases_dir(cfg, &p);
		if (inside(path, p.buf))
			what = "a device lease";
	}
	bg_strbuf_release(&p);
	return what;
}
