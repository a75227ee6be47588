/*
 * cmd_validate.c - `benchgate validate [--no-render-check]`: the registry's
 * rules, then the generated document. Errors as "ERROR: ..." on stdout.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static const char *on_opt(int id, const char *value, void *data)
{
	(void)id;
	(void)value;
	*(bool *)data = true;
	return NULL;
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"no-render-check", 0, BG_OPT_FLAG, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_registry_counts counts;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	bool no_render = false;
	int rc, w;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &no_render, &parsed)))
		return rc;
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_registry_validate(&reg, !no_render, &problems, &counts, &ctx);
	if (rc) {
		bg_cli_fail_ctx(rc, &ctx);
	} else if (problems.n) {
		for (size_t i = 0; i < problems.n; i++)
			bg_strbuf_addf(&out, "ERROR: %s\n", problems.items[i]);
		rc = BG_ECHECK;
	} else {
		bg_strbuf_addf(&out, "benchgate validate: OK -- %zu gates, %zu measurements, and %zu runbooks\n",
			       counts.gates, counts.measurements, counts.runbooks);
	}
	if ((w = bg_cli_write_text(&out)) && !rc)
		rc = w;
	bg_ctx_release(&ctx);
	bg_strbuf_release(&out);
	bg_problems_release(&problems);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_validate = {
	"validate",
	"check the registry's rules and that the generated document is current",
	"benchgate validate [--no-render-check]",
	"  --no-render-check  do not compare the generated coverage document\n",
	run,
	NULL,
	true,
};
