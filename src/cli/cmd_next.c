/*
 * cmd_next.c - `benchgate next`: the highest-priority open gates.
 */
#include "cli/filters.h"

#include <stdio.h>

enum { OPT_LIMIT = 1, OPT_PERF };

struct next_opts {
	struct bg_gate_filter filter;
	long long limit;
	bool perf;
};

static const char *on_opt(int id, const char *value, void *data)
{
	struct next_opts *o = data;

	if (id == OPT_LIMIT)
		return bg_cli_parse_int_clamped(value, &o->limit) ? NULL : "argument --limit: expected an integer";
	if (id == OPT_PERF) {
		o->perf = true;
		return NULL;
	}
	return bg_filter_option(&o->filter, id, value);
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {
		BG_FILTER_OPTS,
		{"limit", 0, BG_OPT_VALUE, OPT_LIMIT, false},
		{"performance-entrypoint-only", 0, BG_OPT_FLAG, OPT_PERF, false},
		{0},
	};
	struct next_opts o = {{0}, 10, false};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 0, false, on_opt, &o, &parsed)))
		return rc;
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_registry_next(&reg, &o.filter, o.limit, o.perf, &out, &ctx);
	if (rc)
		bg_cli_fail_ctx(rc, &ctx);
	else if (!(rc = bg_cli_write_text(&out)) && out.len == 0)
		bg_filter_say_unmatched(self->name, &reg, &o.filter);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&out);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_next = {
	"next",
	"list the highest-priority open gates (partial, pending, blocked)",
	"benchgate next [--limit N] [--performance-entrypoint-only] [--state STATE] [--platform NAME]\n"
	"                      [--module NAME] [--computer NAME]",
	"  --limit N          show at most N gates (default 10)\n"
	"  --performance-entrypoint-only\n"
	"                     only gates whose runbook's evidence level is 'physical performance'\n" BG_FILTER_HELP,
	run,
	NULL,
	true,
};
