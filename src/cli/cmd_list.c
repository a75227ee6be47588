/*
 * cmd_list.c - `benchgate list`: every gate (filtered), by module, platform, id.
 */
#include "cli/filters.h"

static const char *on_opt(int id, const char *value, void *data)
{
	return bg_filter_option(data, id, value);
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {BG_FILTER_OPTS, {0}};
	struct bg_gate_filter filter = {0};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &filter, &parsed)))
		return rc;
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_registry_list(&reg, &filter, &out, &ctx);
	if (rc)
		bg_cli_fail_ctx(rc, &ctx);
	else if (!(rc = bg_cli_write_text(&out)) && out.len == 0)
		bg_filter_say_unmatched(self->name, &reg, &filter);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&out);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_list = {
	"list",
	"list the required coverage gates",
	"benchgate list [--state STATE] [--platform NAME] [--module NAME] [--computer NAME]",
	BG_FILTER_HELP,
	run,
	NULL,
	true,
};
