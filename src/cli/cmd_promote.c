/*
 * cmd_promote.c - `benchgate promote SESSION [--json]`: checks the eight
 * promotion criteria (benchgate/promotion.h) and, when they are met,
 * appends the measurement row to the evidence file benchgate owns, names
 * it in the gate's satisfied_by, sets the gate's state (measured, or
 * partial), re-renders the generated document and validates. Every unmet
 * criterion is listed (exit 1); nothing is written then. 2 usage, 4 files
 * or store.
 */
#include "cli/cli.h"
#include "cli/verdict_print.h"
#include "benchgate/json.h"
#include "benchgate/promotion.h"

#include <stdio.h>
#include <string.h>

static const char *on_opt(int id, const char *v, void *data)
{
	(void)id;
	(void)v;
	*(bool *)data = true;
	return NULL;
}

static void criteria(struct bg_strbuf *sb, const json_t *report)
{
	const json_t *c, *p;
	size_t i, k;

	json_array_foreach(json_object_get(report, "preconditions"), i, p) {
		bg_strbuf_adds(sb, "  [refused] ");
		bg_cli_add_shown(sb, json_string_value(p));
		bg_strbuf_addch(sb, '\n');
	}
	json_array_foreach(json_object_get(report, "criteria"), i, c) {
		bool met = json_is_true(json_object_get(c, "met"));

		bg_strbuf_addf(sb, "  [%s] %lld %s: %s\n", met ? "met" : "unmet",
			       (long long)json_integer_value(json_object_get(c, "number")),
			       bg_json_str_or(json_object_get(c, "name"), "n/a"),
			       bg_json_str_or(json_object_get(c, "title"), "n/a"));
		json_array_foreach(json_object_get(c, "problems"), k, p) {
			bg_strbuf_adds(sb, "        - ");
			bg_cli_add_shown(sb, json_string_value(p));
			bg_strbuf_addch(sb, '\n');
		}
	}
}

static int run_promote(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"json", 0, BG_OPT_FLAG, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *report = NULL;
	bool json = false;
	long long id;
	int rc;

	if ((rc = bg_vp_parse_session(cli, self, opts, on_opt, &json, &id)))
		return rc;
	if ((rc = bg_vp_open(cli, &cfg, BG_STORE_READ, &store)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_promotion_run(&cfg, store, id, &report, &ctx);
	if (json && !report && rc) /* refused before any criterion was checked: the report is its error */
		report = json_pack("{s:I, s:s}", "session", (json_int_t)id, "error", bg_ctx_message(&ctx));
	if (json && report) {
		/* a refusal that is no criterion (already promoted, a store or
		 * file failure) is said in the report too, not only on stderr */
		if (rc && ctx.msg)
			json_object_set_new(report, "error", json_string(ctx.msg));
		bg_json_dump_py(&sb, report, 2, false);
		bg_strbuf_addch(&sb, '\n');
	} else if (report) {
		const char *state = json_string_value(json_object_get(report, "state"));

		bg_strbuf_addf(&sb, "session %lld  gate ", id);
		bg_cli_add_shown(&sb, json_string_value(json_object_get(report, "gate")));
		bg_strbuf_adds(&sb, "  tier ");
		bg_cli_add_shown(&sb, json_string_value(json_object_get(report, "tier")));
		bg_strbuf_addch(&sb, '\n');
		if (json_is_true(json_object_get(report, "undid_interrupted_promotion")))
			bg_strbuf_adds(&sb, "an interrupted promotion (killed between its writes) was undone first\n");
		if (json_is_true(json_object_get(report, "finished_interrupted_promotion")))
			bg_strbuf_adds(&sb, "an interrupted promotion (killed after its writes) was finished first\n");
		criteria(&sb, report);
		/* the decision's notes: no criterion, but the figures promoted are that session's */
		bg_vp_notes(&sb, json_object_get(report, "notes"), "");
		if (rc == BG_OK)
			bg_strbuf_addf(&sb, "promoted as %s: measurement %s\n  appended to %s\n  %s: gate state %s, "
				       "satisfied_by names it\n  %s re-rendered; the registry validates\n",
				       state, json_string_value(json_object_get(report, "measurement_id")),
				       json_string_value(json_object_get(report, "evidence")),
				       json_string_value(json_object_get(report, "registry")), state,
				       json_string_value(json_object_get(report, "generated")));
		else if (!state)
			bg_strbuf_adds(&sb, "not promoted: standard error says why\n");
	}
	if (sb.len)
		bg_cli_write(&sb, false);
	if (rc)
		bg_cli_fail(rc, bg_ctx_message(&ctx));
	json_decref(report);
	bg_strbuf_release(&sb);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_promote = {
	"promote",
	"promote a qualified gate session into the registry (measured or partial)",
	"benchgate promote SESSION [--json]",
	"  --json     print the criteria report as JSON\n",
	run_promote,
	bg_vp_check_session_pos,
	false,
};
