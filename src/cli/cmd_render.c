/*
 * cmd_render.c - `benchgate render [--output FILE]`: writes the generated
 * coverage document atomically as it is rendered (default: registry.generated
 * of benchgate.json; a relative FILE is relative to the project root); a
 * render that fails leaves neither the file nor a directory it created.
 * The document never replaces a file the project is read from (benchgate.json,
 * the registry, its evidence imports, the matrices, RUNS.md, the store, the
 * experiments folder, the leases: cli/inputs.h). `--output -` prints it on
 * standard output instead (a file named '-' is `--output ./-`).
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "benchgate/fsutil.h"
#include "benchgate/lifecycle.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *on_opt(int id, const char *value, void *data)
{
	(void)id;
	*(const char **)data = value;
	return NULL;
}

/* The directory the document is written in (as it is rendered, beside the
 * document), or NULL when path has none; the caller frees it. */
static char *parent_dir(const char *path)
{
	char *dir = bg_xstrdup(path), *slash = strrchr(dir, '/');

	if (!slash || slash == dir) {
		free(dir);
		return NULL;
	}
	*slash = '\0';
	return dir;
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"output", 0, BG_OPT_VALUE, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf path = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	const char *output = NULL, *what;
	char *dir = NULL, *made = NULL;
	struct stat st;
	int rc, lock = -1;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &output, &parsed)))
		return rc;
	if (output && !*output)
		return bg_cli_usage_error(self, "argument --output: expected a file name");
	if (output && output[strlen(output) - 1] == '/')
		return bg_cli_usage_error(self, "argument --output: '%s' names a folder; name the file to write", output);
	if ((rc = bg_cli_load_config(cli, &cfg)))
		return rc;
	bg_ctx_init(&ctx);
	memset(&reg, 0, sizeof(reg));
	/* one writer of the document at a time: a promotion re-renders it from
	 * the registry it edits, and a render that read the registry before
	 * would write the old one over it. The lock is promote's, taken where
	 * a promotion could run (its state folder is there) before the
	 * registry is read. */
	if (!(output && strcmp(output, "-") == 0)) {
		struct bg_strbuf state = BG_STRBUF_INIT;

		bg_lifecycle_state_dir(&cfg, &state);
		bg_strbuf_adds(&state, "/promote.lock");
		/* a lock file a promotion made: render makes none itself (in a
		 * project whose state folder is its root, it would be one more
		 * file there) */
		if (bg_is_file(state.buf))
			rc = bg_lifecycle_lock(&cfg, "promote.lock", NULL, &lock, &ctx);
		bg_strbuf_release(&state);
		if (rc)
			goto out;
	}
	if ((rc = bg_registry_load(&reg, &cfg, &ctx))) {
		bg_cli_fail_project(cli, rc, &ctx, &cfg);
		bg_ctx_init(&ctx);
		goto out;
	}
	if (output && strcmp(output, "-") == 0) {
		/* standard output, the document alone: what a pipe or a diff reads */
		if ((rc = bg_registry_render(&reg, &msg, &ctx)) == BG_OK && bg_cli_write(&msg, false))
			rc = BG_EIO;
		goto out;
	}
	if (!output)
		output = cfg.generated_path;
	bg_config_path(&cfg, &path, output);
	if (stat(path.buf, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (output == cfg.generated_path) /* benchgate.json's mistake, or the folder's: both said */
			rc = bg_error(&ctx, BG_EIO, "%s: 'registry.generated' names '%s', which is a folder; name the "
				      "file to write there, or remove the folder if it was made by mistake",
				      cfg.config_path ? cfg.config_path : "benchgate.json", output);
		else
			rc = bg_cli_usage_error(self, "argument --output: '%s' names a folder; name the file to write",
						output);
		goto out;
	}
	if ((what = bg_cli_input_at(path.buf, &reg, false))) {
		if (output == cfg.generated_path)
			rc = bg_error(&ctx, BG_ECHECK,
				      "%s: 'registry.generated' names '%s', which is %s; name another file",
				      cfg.config_path ? cfg.config_path : "benchgate.json", output, what);
		else
			rc = bg_cli_usage_error(self, "argument --output: '%s' is %s; choose another file",
						output, what);
		goto out;
	}
	/* a failed render leaves neither the file nor a directory made for it */
	dir = parent_dir(path.buf);
	if (dir && (rc = bg_mkdirs_made(dir, bg_config_relative(&cfg, dir), &made, &ctx)))
		bg_error(&ctx, rc, "%s; choose another %s", bg_ctx_message(&ctx),
			 output == cfg.generated_path ? "'registry.generated' in benchgate.json" : "--output");
	if (!rc)
		rc = bg_registry_render_to_file(&reg, path.buf, output, &ctx);
	if (rc && dir)
		bg_rmdirs_made(made);
	free(made);
	free(dir);
	if (!rc) {
		bg_strbuf_addf(&msg, "%s\n", output);
		if (bg_cli_write(&msg, false))
			rc = BG_EIO;
	}
out:
	bg_unlock(lock);
	if (rc && ctx.msg)
		bg_cli_fail_ctx(rc, &ctx);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&path);
	bg_strbuf_release(&msg);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_render = {
	"render",
	"write the generated Markdown coverage document",
	"benchgate render [--output FILE]",
	"  --output FILE      write FILE (relative to the project root) instead of\n"
	"                     registry.generated from benchgate.json; '-': standard output\n",
	run,
	NULL,
	true,
};
