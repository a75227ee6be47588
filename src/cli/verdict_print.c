/*
 * verdict_print.c - shared helpers of the decision and curation verbs (see
 * verdict_print.h).
 */
#include "cli/verdict_print.h"
#include "cli/measure_print.h"
#include "benchgate/decide.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int bg_vp_open(struct bg_cli *cli, struct bg_config *cfg, enum bg_store_mode mode, struct bg_store **st)
{
	return bg_vp_open_gate(cli, cfg, mode, st, NULL);
}

int bg_vp_open_gate(struct bg_cli *cli, struct bg_config *cfg, enum bg_store_mode mode, struct bg_store **st,
		    const char *gate)
{
	struct bg_ctx ctx;
	int rc;

	*st = NULL;
	if ((rc = bg_cli_load_config(cli, cfg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_store_open(cfg->store, cfg->root, mode, st, &ctx);
	if (rc == BG_OK && !*st && gate) {
		struct bg_strbuf msg = BG_STRBUF_INIT;

		/* a mistyped id never reads as a gate never run */
		if ((rc = bg_cli_unknown_stored_gate(cli, cfg, gate, BG_ECHECK, &msg)))
			bg_error(&ctx, rc, "%s", msg.buf);
		bg_strbuf_release(&msg);
	}
	if (rc == BG_OK && !*st)
		rc = bg_error(&ctx, BG_ECHECK, "no sessions stored yet; run a gate with 'benchgate run GATE'");
	if (rc) {
		bg_cli_fail_ctx(rc, &ctx);
		bg_config_release(cfg);
		return rc;
	}
	bg_ctx_release(&ctx);
	return BG_OK;
}

int bg_vp_session_id(const struct bg_cmd *self, const char *arg, long long *id)
{
	if (bg_cli_parse_int(arg, id) && *id >= 1)
		return BG_OK;
	if (bg_cli_parse_int_clamped(arg, id) && *id == LLONG_MAX)
		return bg_cli_usage_error(self, "session id '%s' is out of range: session ids go up to %lld",
					  arg, LLONG_MAX);
	return bg_cli_usage_error(self, "session id must be a positive integer, not '%s'", arg);
}

int bg_vp_check_session_pos(const struct bg_cmd *self, int index, const char *word)
{
	long long id;

	return index == 0 ? bg_vp_session_id(self, word, &id) : BG_OK;
}

int bg_vp_parse_session(struct bg_cli *cli, const struct bg_cmd *self, const struct bg_opt *opts,
			bg_opt_fn on_opt, void *data, long long *id)
{
	struct bg_parsed parsed;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, on_opt, data, &parsed)))
		return rc;
	if (parsed.npos != 1)
		return bg_cli_usage_error(self, "a session id is required");
	return bg_vp_session_id(self, parsed.pos[0], id);
}

void bg_vp_metric_value(struct bg_strbuf *out, const char *metric, const json_t *v)
{
	/* a name benchgate does not know (a store changed outside it): no unit assumed */
	if (json_is_number(v))
		bg_decide_metric_text(out, metric, json_number_value(v));
	else
		bg_strbuf_adds(out, "n/a");
}

void bg_vp_curation(struct bg_strbuf *out, const json_t *v)
{
	const char *c = json_string_value(json_object_get(v, "curation"));
	const char *by = json_string_value(json_object_get(v, "curated_by"));
	const char *at = json_string_value(json_object_get(v, "curated_at"));
	const char *why = json_string_value(json_object_get(v, "curation_why"));

	if (!c) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	bg_cli_add_shown(out, c);
	/* benchgate's own curation of a decision ("decision: pass") shows no
	 * who and why; a person's does, also one whose user name is benchgate */
	if (by && !(strcmp(by, "benchgate") == 0 && why && strncmp(why, "decision: ", 10) == 0)) {
		bg_strbuf_adds(out, " by ");
		bg_cli_add_shown(out, by);
		bg_strbuf_adds(out, " at ");
		bg_cli_add_shown(out, at);
		bg_strbuf_adds(out, ": ");
		bg_cli_add_shown(out, why ? why : "");
	}
}

void bg_vp_notes(struct bg_strbuf *out, const json_t *notes, const char *indent)
{
	const json_t *x;
	size_t i;

	json_array_foreach(notes, i, x) {
		if (!json_is_string(x)) /* a store changed outside benchgate */
			continue;
		bg_strbuf_adds(out, indent);
		bg_strbuf_adds(out, "note: ");
		bg_cli_add_shown(out, json_string_value(x));
		bg_strbuf_addch(out, '\n');
	}
}

void bg_vp_conditions(struct bg_strbuf *out, const json_t *decision)
{
	bg_vp_notes(out, json_object_get(decision, "conditions"), "  ");
}

const char *bg_vp_pending_source(const json_t *summary)
{
	const json_t *dirty = json_object_get(summary, "git_dirty");
	const char *c = json_string_value(json_object_get(summary, "curation"));

	if (!c || strcmp(c, "pending") != 0 || json_is_false(dirty))
		return NULL;
	return json_is_true(dirty) ? "uncommitted source" : "source state unknown";
}
