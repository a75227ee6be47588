/*
 * cmd_compare.c - `benchgate compare SESSION | --last GATE [--json]
 * [--fail-on investigate|unaccepted]`: the stored decision of a gate
 * session, each metric against its envelope (value, centre, bounds, how far
 * outside in scales, direction) and the baseline sessions it was compared
 * with. Exit 1 on block; on investigate with --fail-on investigate; with
 * --fail-on unaccepted on any session not accepted (automatically or by a
 * person: an investigate session pending review or rejected); 0
 * otherwise. A session without a decision (a diagnostic `measure` session)
 * is exit 1: there is nothing to compare, and a gate that expected one
 * must not pass silently. 2 usage, 4 store failure.
 */
#include "cli/cli.h"
#include "cli/verdict_print.h"
#include "benchgate/json.h"
#include "benchgate/measure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { O_LAST, O_JSON, O_FAIL_ON };

/* What exits 1 besides block (--fail-on). */
enum fail_on { FAIL_BLOCK, FAIL_INVESTIGATE, FAIL_UNACCEPTED };

struct compare_args {
	const char *last;
	bool json;
	enum fail_on fail_on;
	char msg[160];
};

static const char *on_opt(int id, const char *v, void *data)
{
	struct compare_args *a = data;

	if (id == O_JSON) {
		a->json = true;
	} else if (id == O_LAST) {
		a->last = v;
	} else if (strcmp(v, "investigate") == 0 || strcmp(v, "block") == 0 || strcmp(v, "unaccepted") == 0) {
		/* given twice, the last counts (as argparse) */
		a->fail_on = v[0] == 'i' ? FAIL_INVESTIGATE : v[0] == 'u' ? FAIL_UNACCEPTED : FAIL_BLOCK;
	} else {
		snprintf(a->msg, sizeof(a->msg), "--fail-on must be 'investigate', 'unaccepted' or 'block', not '%s'", v);
		return a->msg;
	}
	return NULL;
}

static void upper(struct bg_strbuf *out, const char *s)
{
	for (; *s; s++)
		bg_strbuf_addch(out, (*s >= 'a' && *s <= 'z') ? (char)(*s - 'a' + 'A') : *s);
}

static void text(struct bg_strbuf *sb, long long id, const json_t *v, const json_t *d)
{
	const char *gate = json_string_value(json_object_get(v, "gate_id"));
	const char *tier = json_string_value(json_object_get(v, "tier"));
	const char *curation = json_string_value(json_object_get(v, "curation"));
	const json_t *metrics = json_object_get(d, "metrics"), *m, *x;
	const json_t *base = json_object_get(d, "baseline");
	size_t i;

	bg_strbuf_addf(sb, "session %lld  gate ", id);
	bg_cli_add_shown(sb, gate);
	bg_strbuf_adds(sb, "  tier ");
	bg_cli_add_shown(sb, tier);
	bg_strbuf_adds(sb, "\nkey ");
	bg_cli_add_shown(sb, json_string_value(json_object_get(v, "key_id")));
	bg_strbuf_addch(sb, '\n');
	if (bg_measure_reported(v))
		bg_strbuf_adds(sb, "timing: reported (p50, p95 and max are the program's own samples)\n");
	bg_strbuf_adds(sb, "\ndecision: ");
	upper(sb, bg_json_str_or(json_object_get(d, "decision"), "n/a"));
	bg_strbuf_addch(sb, '\n');
	json_array_foreach(json_object_get(d, "reasons"), i, x) {
		bg_strbuf_adds(sb, "  - ");
		bg_cli_add_shown(sb, json_string_value(x));
		bg_strbuf_addch(sb, '\n');
	}
	bg_vp_conditions(sb, d);
	bg_strbuf_adds(sb, "curation: ");
	bg_vp_curation(sb, v);
	if (curation && strcmp(curation, "pending") == 0)
		bg_strbuf_addf(sb, " (decide: 'benchgate accept %lld --why TEXT' or 'benchgate reject %lld "
			       "--why TEXT'; 'benchgate repeat %lld' runs it twice more)", id, id, id);
	bg_strbuf_addch(sb, '\n');
	if (json_array_size(metrics)) {
		bg_strbuf_addf(sb, "\n%-24s %-11s %-11s %-11s %-11s %-9s %s\n", "metric", "value", "centre", "low",
			       "high", "scales", "direction");
		json_array_foreach(metrics, i, m) {
			/* a store changed outside benchgate may hold anything here */
			const char *name = bg_json_str_or(json_object_get(m, "metric"), "n/a");
			struct bg_strbuf c[6] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
						 BG_STRBUF_INIT, BG_STRBUF_INIT};
			const json_t *dev = json_object_get(m, "deviation");
			char devs[32];

			bg_vp_metric_value(&c[0], name, json_object_get(m, "value"));
			bg_vp_metric_value(&c[1], name, json_object_get(m, "centre"));
			bg_vp_metric_value(&c[2], name, json_object_get(m, "low"));
			bg_vp_metric_value(&c[3], name, json_object_get(m, "high"));
			if (json_is_number(dev))
				snprintf(devs, sizeof(devs), "%+.2f", json_number_value(dev));
			else
				snprintf(devs, sizeof(devs), "n/a");
			bg_strbuf_addf(sb, "%-24s %-11s %-11s %-11s %-11s %-9s %s%s\n", bg_cli_shown(&c[4], name),
				       c[0].buf, c[1].buf, c[2].buf, c[3].buf, devs,
				       bg_cli_shown(&c[5], json_string_value(json_object_get(m, "direction"))),
				       json_is_true(json_object_get(m, "outside")) ? "  OUTSIDE" : "");
			for (int k = 0; k < 6; k++)
				bg_strbuf_release(&c[k]);
		}
		bg_strbuf_addf(sb, "(envelope: median of the baseline +- k x scale, k = %g, scale = max(1.4826 x MAD, "
			       "%g x centre))\n", json_number_value(json_object_get(d, "k")),
			       json_number_value(json_object_get(d, "floor")));
	}
	bg_strbuf_addf(sb, "\nbaseline: %zu session%s", json_array_size(base), json_array_size(base) == 1 ? "" : "s");
	json_array_foreach(base, i, x)
		bg_strbuf_addf(sb, "%s%lld", i ? ", " : ": ", (long long)json_integer_value(x));
	bg_strbuf_addch(sb, '\n');
}

static int run_compare(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {
		{"last", 0, BG_OPT_VALUE, O_LAST, false},
		{"json", 0, BG_OPT_FLAG, O_JSON, false},
		{"fail-on", 0, BG_OPT_VALUE, O_FAIL_ON, false},
		{0},
	};
	struct compare_args a = {NULL, false, false, ""};
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *v = NULL, *d;
	const char *name;
	long long id = 0;
	int rc, wrote;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, on_opt, &a, &parsed)))
		return rc;
	if (a.last && parsed.npos)
		return bg_cli_usage_error(self, "give a session id or --last GATE, not both");
	if (!a.last && parsed.npos != 1)
		return bg_cli_usage_error(self, "a session id or --last GATE is required");
	if (a.last && !*a.last)
		return bg_cli_usage_error(self, "--last needs a gate id");
	if (!a.last && (rc = bg_vp_session_id(self, parsed.pos[0], &id)))
		return rc;
	if ((rc = bg_vp_open_gate(cli, &cfg, BG_STORE_READ, &store, a.last)))
		return rc;
	bg_ctx_init(&ctx);
	if (a.last && (rc = bg_store_last_of_gate(store, a.last, &id, &ctx)) == BG_ECHECK) {
		/* no session: a gate never run, unless the registry has no such gate
		 * (a mistyped id) or cannot say (its own error) */
		int known = bg_cli_unknown_stored_gate(cli, &cfg, a.last, BG_ECHECK, &sb);

		if (known) {
			rc = bg_cli_fail(known, sb.buf);
			goto out;
		}
	}
	if (rc == BG_OK)
		rc = bg_store_verdict(store, id, &v, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	d = json_object_get(v, "decision_document");
	name = json_string_value(json_object_get(d, "decision"));
	if (!name && json_is_string(json_object_get(v, "gate_id"))) {
		bg_strbuf_addf(&sb, "session %lld has no decision: it is a session of gate '%s' stored without one "
			       "(its run stopped before deciding); run the gate again",
			       id, json_string_value(json_object_get(v, "gate_id")));
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
		goto out;
	}
	if (!name) {
		bg_strbuf_addf(&sb, "session %lld has no decision: it is a diagnostic session ('benchgate "
			       "measure'), compared with nothing; decisions are made for gate sessions "
			       "('benchgate run GATE')", id);
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
		goto out;
	}
	if (a.json) {
		static const char *const from_session[] = {
			"gate_id", "tier", "key_id", "curation", "curated_by", "curated_at", "curation_why", "timing",
		};
		json_t *o = json_deep_copy(d);

		json_object_set_new(o, "session", json_integer(id));
		for (size_t i = 0; i < sizeof(from_session) / sizeof(from_session[0]); i++)
			json_object_set(o, from_session[i], json_object_get(v, from_session[i]));
		bg_json_dump_py(&sb, o, 2, true);
		bg_strbuf_addch(&sb, '\n');
		json_decref(o);
	} else {
		text(&sb, id, v, d);
	}
	/* the decision's status stands when stdout cannot be written (README:
	 * exit 4 only where the status was not already 1, 2 or 3) */
	wrote = bg_cli_write(&sb, false);
	rc = BG_OK;
	if (strcmp(name, "block") == 0 && a.fail_on == FAIL_UNACCEPTED) {
		/* waiting for a review, a blocked session waits for nothing */
		bg_strbuf_reset(&sb);
		bg_strbuf_addf(&sb, "session %lld is blocked and cannot be accepted: fix what blocked it "
			       "('benchgate compare %lld' says why), then run the gate again", id, id);
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
	} else if (strcmp(name, "block") == 0) {
		rc = BG_ECHECK;
	} else if (a.fail_on == FAIL_INVESTIGATE && strcmp(name, "investigate") == 0) {
		rc = BG_ECHECK;
	} else if (a.fail_on == FAIL_UNACCEPTED) {
		const char *curation = json_string_value(json_object_get(v, "curation"));

		/* a person's review is what this waits for: say what would pass */
		if (!curation || (strcmp(curation, "accepted") != 0 && strcmp(curation, "auto-accepted") != 0)) {
			bg_strbuf_reset(&sb);
			if (curation && strcmp(curation, "rejected") == 0)
				bg_strbuf_addf(&sb, "session %lld (%s) was rejected%s%s: run the gate again", id, name,
					       json_is_string(json_object_get(v, "curated_by")) ? " by " : "",
					       json_is_string(json_object_get(v, "curated_by"))
						       ? json_string_value(json_object_get(v, "curated_by")) : "");
			else if (json_is_true(json_object_get(v, "git_dirty")))
				/* another run of the same tree is pending again */
				bg_strbuf_addf(&sb, "session %lld (%s) is %s, not accepted: it ran on uncommitted "
					       "source; commit, then run the gate again, or review it ('benchgate compare "
					       "%lld') and accept it ('benchgate accept %lld --why TEXT')",
					       id, name, curation ? curation : "not curated", id, id);
			else
				bg_strbuf_addf(&sb, "session %lld (%s) is %s, not accepted: review it ('benchgate "
					       "compare %lld') and accept it ('benchgate accept %lld --why TEXT'), or run "
					       "the gate again", id, name, curation ? curation : "not curated", id, id);
			rc = bg_cli_fail(BG_ECHECK, sb.buf);
		}
	}
	if (rc == BG_OK)
		rc = wrote;
out:
	json_decref(v);
	bg_strbuf_release(&sb);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_compare = {
	"compare",
	"show a gate session's decision against the envelope of its baseline",
	"benchgate compare SESSION [--json] [--fail-on investigate|unaccepted]\n"
	"       benchgate compare --last GATE [--json] [--fail-on investigate|unaccepted]",
	"  --last GATE              the latest session of GATE\n"
	"  --json                   print the decision document as JSON\n"
	"  --fail-on investigate    exit 1 on investigate too (block always exits 1;\n"
	"                           '--fail-on block' says just that, and is accepted)\n"
	"  --fail-on unaccepted     exit 1 unless the session is accepted: automatically\n"
	"                           (pass, no-baseline of committed source) or by a\n"
	"                           person ('benchgate accept'); a pending or rejected\n"
	"                           investigate session exits 1\n",
	run_compare,
	bg_vp_check_session_pos,
	false,
};
