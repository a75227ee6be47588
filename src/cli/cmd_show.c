/*
 * cmd_show.c - `benchgate show GATE`: one resolved gate as sorted JSON.
 */
#include "cli/cli.h"

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_value *gate;
	struct bg_ctx ctx;
	int rc;

	if ((rc = bg_cli_parse(cli, self, NULL, 1, false, bg_cli_no_options, NULL, &parsed)))
		return rc;
	if (parsed.npos != 1)
		return bg_cli_usage_error(self, "the following arguments are required: gate_id");
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	bg_ctx_init(&ctx);
	if ((rc = bg_registry_lookup_gate(&reg, parsed.pos[0], &gate, &ctx))) {
		bg_cli_fail_ctx(rc, &ctx);
	} else if (!gate) {
		bg_cli_add_unknown_gate(&out, &reg, parsed.pos[0]);
		bg_cli_write(&out, true);
		rc = BG_ECHECK;
	} else {
		bg_registry_show(gate, &out);
		rc = bg_cli_write_text(&out);
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&out);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_show = {
	"show",
	"show one resolved gate (configuration fields included) as JSON",
	"benchgate show GATE",
	NULL,
	run,
	NULL,
	true,
};
