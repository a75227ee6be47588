/*
 * cmd_render.c - `benchgate render [--output FILE]`: writes the generated
 * coverage document atomically as it is rendered (default: registry.generated
 * of benchgate.json; a relative FILE is relative to the project root); a
 * render that fails leaves neither the file nor a directory it created.
 */
#include "cli/cli.h"
#include "benchgate/fsutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *on_opt(int id, const char *value, void *data)
{
	(void)id;
	*(const char **)data = value;
	return NULL;
}

/*
 * Creates the directory of path (the document is written beside it as it
 * is rendered); *made receives the highest directory that had to be
 * created (caller frees), or NULL, so that a failed render leaves nothing.
 */
static int make_parent(const char *path, char **made, struct bg_ctx *ctx)
{
	char *dir = bg_xstrdup(path), *slash = strrchr(dir, '/');
	int rc = BG_OK;

	*made = NULL;
	if (slash && slash != dir) {
		*slash = '\0';
		if (!bg_is_dir(dir)) {
			char *top = bg_xstrdup(dir);
			for (;;) {
				char *s = strrchr(top, '/');
				if (!s || s == top)
					break;
				*s = '\0';
				if (bg_is_dir(top)) {
					*s = '/';
					break;
				}
			}
			*made = top;
		}
		rc = bg_mkdirs(dir, ctx);
	}
	free(dir);
	return rc;
}

/* Removes the (empty) directories make_parent created for path. */
static void remove_made(const char *path, const char *made)
{
	char *cur = bg_xstrdup(path), *s;

	while (made && (s = strrchr(cur, '/')) && s != cur) {
		*s = '\0';
		if (rmdir(cur) != 0 || strcmp(cur, made) == 0)
			break;
	}
	free(cur);
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"output", 0, BG_OPT_VALUE, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf path = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	const char *output = NULL;
	char *made = NULL;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &output, &parsed)))
		return rc;
	if (output && !*output)
		return bg_cli_usage_error(self, "argument --output: expected a file name");
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	if (!output)
		output = cfg.generated_path;
	bg_ctx_init(&ctx);
	bg_config_path(&cfg, &path, output);
	rc = make_parent(path.buf, &made, &ctx);
	if (!rc)
		rc = bg_registry_render_to_file(&reg, path.buf, output, &ctx);
	if (rc)
		remove_made(path.buf, made);
	free(made);
	if (rc) {
		bg_cli_fail_ctx(rc, &ctx);
	} else {
		bg_strbuf_addf(&msg, "%s\n", output);
		bg_cli_write(&msg, false);
	}
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
	"                     registry.generated from benchgate.json\n",
	run,
};
