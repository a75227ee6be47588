/*
 * cmd_check.c - `benchgate check`: the profile matrix against the parity
 * matrix, experiment manifests, RUNS.md, then the registry (validate).
 */
#include "cli/cli.h"
#include "benchgate/profile.h"

#include <string.h>

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_profile_counts pc;
	struct bg_registry_counts rcounts;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_parsed parsed;
	struct bg_ctx ctx;
	int rc, w;

	if ((rc = bg_cli_parse(cli, self, NULL, 0, false, bg_cli_no_options, NULL, &parsed)))
		return rc;
	if ((rc = bg_cli_load_config(cli, &cfg)))
		return rc;
	bg_ctx_init(&ctx);
	memset(&reg, 0, sizeof(reg));
	rc = bg_profile_check(&cfg, &problems, &pc, &ctx);
	if (!rc)
		rc = bg_registry_load(&reg, &cfg, &ctx);
	if (!rc)
		rc = bg_registry_validate(&reg, true, &problems, &rcounts, &ctx);
	if (rc) {
		bg_cli_fail_project(cli, rc, &ctx, &cfg);
	} else if (problems.n) {
		for (size_t i = 0; i < problems.n; i++)
			bg_strbuf_addf(&out, "ERROR: %s\n", problems.items[i]);
		rc = BG_ECHECK;
	} else {
		bg_strbuf_addf(&out,
			       "benchgate check: OK -- %zu platform/module cells and %zu retained experiments; "
			       "%zu exact benchmark gates, %zu measurements, and %zu runbooks\n",
			       pc.cells, pc.experiments, rcounts.gates, rcounts.measurements, rcounts.runbooks);
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

const struct bg_cmd bg_cmd_check = {
	"check",
	"check the profile matrix, experiment manifests, RUNS.md, then the registry",
	"benchgate check",
	NULL,
	run,
	NULL,
	true,
};
