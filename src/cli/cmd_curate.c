/*
 * cmd_curate.c - `benchgate accept SESSION --why TEXT` and `benchgate
 * reject SESSION --why TEXT`: a person's verdict on a gate session, stored
 * with who (the user name), when and why. An investigate session enters
 * the baseline of its key only once accepted; a rejected session never
 * does; a blocked session cannot be accepted (exit 1 with the reason).
 * The session is read and checked as compare reads it before anything is
 * written: a damaged one (its document or decision) is exit 4 with
 * compare's message, and stays as it was. Exit 1 for an unknown session or
 * one without a decision, 2 for usage.
 */
#include "cli/cli.h"
#include "cli/verdict_print.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/promotion.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *on_opt(int id, const char *v, void *data)
{
	(void)id;
	*(const char **)data = v;
	return NULL;
}

/* The user name: $USER, else $LOGNAME, else the password entry, else "uid N";
 * control bytes shown as '?'; a longer name than n - 1 bytes is cut before
 * the character that would not fit whole. */
static void user_name(char *buf, size_t n)
{
	const char *u = getenv("USER");
	struct passwd *pw;
	json_t *valid;

	if (!u || !*u)
		u = getenv("LOGNAME");
	if ((!u || !*u) && (pw = getpwuid(getuid())))
		u = pw->pw_name;
	if (u && *u) {
		size_t len = strlen(u);

		if (len >= n) { /* cut at a character's start, never inside one */
			len = n - 1;
			while (len && ((unsigned char)u[len] & 0xC0) == 0x80)
				len--;
		}
		memcpy(buf, u, len);
		buf[len] = '\0';
	} else {
		snprintf(buf, n, "uid %u", (unsigned)getuid());
	}
	/* shown back in tables, terminals and JSON: no control character
	 * passes through (C1 ones, two bytes in UTF-8, become one '?'), and a
	 * name that is not UTF-8 keeps only its ASCII */
	valid = json_string(buf);
	for (char *p = buf; *p;) {
		size_t k = bg_cli_control_at(p);

		if (!valid && (unsigned char)*p >= 0x80) {
			*p++ = '?';
			continue;
		}
		if (k > 1) /* one '?' for a control of several bytes */
			memmove(p + 1, p + k, strlen(p + k) + 1);
		if (k)
			*p++ = '?';
		else
			p += bg_cli_char_at(p);
	}
	json_decref(valid);
}

/* What the verdict makes of an accepted session, by the baseline's own
 * rule (bg_store_not_in_baseline) applied to v, the session's verdict as
 * read before the curation with its curation now "accepted": it counts
 * (with its decision's notes, where the machine ran otherwise than the
 * baseline), or its tier or status keeps it out. */
static void counts_line(struct bg_strbuf *sb, json_t *v, struct bg_store *store, long long id)
{
	const json_t *window = json_object_get(json_object_get(v, "decision_document"), "window");
	const char *why, *timing = json_string_value(json_object_get(v, "timing"));
	json_t *base = NULL, *x;
	struct bg_ctx ctx;
	bool within = true;
	size_t i;

	json_object_set_new(v, "curation", json_string("accepted"));
	why = bg_store_not_in_baseline(v);
	/* a later session's baseline is the most recent `window` sessions of
	 * the key that count: one older than those is read by no later
	 * decision, whatever its curation */
	bg_ctx_init(&ctx);
	if (!why && json_is_integer(window) && json_integer_value(window) > 0 &&
	    bg_store_baseline(store, json_string_value(json_object_get(v, "key_id")), timing, 0,
			      (long)json_integer_value(window), &base, &ctx) == BG_OK) {
		within = false;
		json_array_foreach(base, i, x)
			within = within || json_integer_value(json_object_get(x, "id")) == id;
	}
	json_decref(base);
	bg_ctx_release(&ctx);
	if (!why && !within) {
		bg_strbuf_addf(sb, "it counts in no later decision even so: at least %lld newer sessions of its key count, and a "
				   "baseline is the most recent %lld of them (the window)\n",
			       (long long)json_integer_value(window), (long long)json_integer_value(window));
	} else if (!why) {
		const json_t *notes = json_object_get(json_object_get(v, "decision_document"), "conditions");

		/* a person's verdict brings the session's times into the baseline as
		 * they are: what its decision noted is said again, not hidden */
		bg_strbuf_adds(sb, json_array_size(notes) ? "it now counts in the baseline of its key, with what its "
							    "decision noted of the machine it ran on:\n"
							  : "it now counts in the baseline of its key\n");
		bg_vp_notes(sb, notes, "");
	} else if (strcmp(why, "tier") == 0) {
		bg_strbuf_adds(sb, "it does not count in a baseline even so: its tier is ");
		bg_cli_add_shown(sb, json_string_value(json_object_get(v, "tier")));
		bg_strbuf_adds(sb, ", and only scheduled-profile and release-signoff sessions do\n");
	} else {
		/* a session whose runs did not all succeed (a store changed outside benchgate) */
		bg_strbuf_adds(sb, "it does not count in a baseline even so: its status is ");
		bg_cli_add_shown(sb, json_string_value(json_object_get(v, "status")));
		bg_strbuf_adds(sb, ", and only sessions whose runs all succeeded ('ok') do\n");
	}
}

/*
 * After a rejection: the rows of the promotion evidence file (promote's,
 * bg_promotion_evidence_path) that cite session id with v's key, which the
 * registry still counts for the gate whatever the store now says: named,
 * with what to do. Nothing when the file is not there or cites none.
 */
static void promoted_note(struct bg_strbuf *sb, const struct bg_config *cfg, long long id, const json_t *v)
{
	struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
	json_t *ev = NULL, *row;
	struct bg_ctx ctx;
	size_t i;

	bg_promotion_evidence_path(cfg, &rel);
	bg_config_path(cfg, &abs, rel.buf);
	bg_ctx_init(&ctx);
	if (bg_is_file(abs.buf) && bg_json_load_file(abs.buf, rel.buf, &ev, &ctx) == BG_OK) {
		json_array_foreach(json_object_get(ev, "measurements"), i, row) {
			if (!bg_promotion_row_of(row, id, v)) /* (a clone's row of the same number is not) */
				continue;
			bg_strbuf_adds(sb, "it was promoted, and the registry still counts it: ");
			bg_cli_add_shown(sb, rel.buf);
			bg_strbuf_adds(sb, "'s row '");
			bg_cli_add_shown(sb, json_string_value(json_object_get(row, "id")));
			bg_strbuf_adds(sb, "' cites it, which gate '");
			bg_cli_add_shown(sb, json_string_value(json_object_get(v, "gate_id")));
			bg_strbuf_adds(sb, "' names in satisfied_by; a rejection changes no registry: take the row out and its id "
					   "out of the gate's satisfied_by (and its state back), then 'benchgate render', or "
					   "promote another session of the gate\n");
		}
	}
	json_decref(ev);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&abs);
}

static int curate(struct bg_cli *cli, const struct bg_cmd *self, const char *curation)
{
	static const struct bg_opt opts[] = {{"why", 0, BG_OPT_VALUE, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	const char *why = NULL;
	json_t *v = NULL;
	char who[256];
	long long id;
	int rc;

	if ((rc = bg_vp_parse_session(cli, self, opts, on_opt, &why, &id)))
		return rc;
	if (!why)
		return bg_cli_usage_error(self, "--why TEXT is required: say why the session is %s", curation);
	/* judged before the store is opened: a reason that shows nothing is a
	 * usage error whatever the session (bg_store_curate says the same) */
	if ((rc = bg_cli_check_reason(why)))
		return rc;
	if ((rc = bg_vp_open(cli, &cfg, BG_STORE_WRITE, &store)))
		return rc;
	user_name(who, sizeof(who));
	bg_ctx_init(&ctx);
	/* the session read and checked as compare reads it, before anything is
	 * written: a damaged one (its document, its decision) is refused whole */
	rc = bg_store_verdict(store, id, &v, &ctx);
	if (rc == BG_OK)
		rc = bg_store_curate(store, id, curation, why, who, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
	} else {
		bg_strbuf_addf(&sb, "session %lld %s by %s: %s\n", id, curation, who, why);
		if (strcmp(curation, "accepted") == 0)
			counts_line(&sb, v, store, id);
		else
			bg_strbuf_adds(&sb, "it never counts in a baseline\n");
		if (strcmp(curation, "rejected") == 0)
			promoted_note(&sb, &cfg, id, v);
		rc = bg_cli_write(&sb, false);
	}
	json_decref(v);
	bg_strbuf_release(&sb);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

static int run_accept(struct bg_cli *cli, const struct bg_cmd *self)
{
	return curate(cli, self, "accepted");
}

static int run_reject(struct bg_cli *cli, const struct bg_cmd *self)
{
	return curate(cli, self, "rejected");
}

const struct bg_cmd bg_cmd_accept = {
	"accept",
	"accept a gate session into its key's baseline, with a reason",
	"benchgate accept SESSION --why TEXT",
	"  --why TEXT   why the session is accepted (stored with your user name and the time)\n",
	run_accept,
	bg_vp_check_session_pos,
	false,
};

const struct bg_cmd bg_cmd_reject = {
	"reject",
	"reject a gate session so that it never counts in a baseline, with a reason",
	"benchgate reject SESSION --why TEXT",
	"  --why TEXT   why the session is rejected (stored with your user name and the time)\n",
	run_reject,
	bg_vp_check_session_pos,
	false,
};
