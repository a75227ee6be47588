/*
 * cmd_history.c - `benchgate history GATE | --key ID [--json]`: the
 * sessions of a gate or of a comparison key, oldest first, with p50, p95,
 * max, memory (process-tree and accelerator peaks), decision and curation,
 * and under a session the notes of its decision (the machine's conditions
 * that differed from its baseline's).
 * A gate without sessions prints a line saying so (exit 0); a gate
 * without sessions that the registry does not have either is a usage error
 * (exit 2), as `run` says it, so that a mistyped id is not read as a gate
 * never run. A gate that has sessions is listed whether or not the
 * registry still has it. A key no stored session has is unknown (exit 1),
 * as an unknown session is: a key exists only through its sessions.
 */
#include "cli/cli.h"
#include "cli/measure_print.h"
#include "cli/verdict_print.h"
#include "benchgate/format.h"
#include "benchgate/json.h"

#include <stdlib.h>
#include <string.h>

enum { O_KEY, O_LAST, O_JSON };

struct history_args {
	const char *key;
	long last; /* 0: every session */
	bool json;
	char msg[128];
};

static const char *on_opt(int id, const char *v, void *data)
{
	struct history_args *a = data;

	if (id == O_LAST)
		return bg_cli_last_arg(v, &a->last, a->msg, sizeof(a->msg));
	if (id == O_JSON)
		a->json = true;
	else
		a->key = v;
	return NULL;
}

/*
 * The table. A gate's history names each session's key (its first 8
 * digits); a key's names each session's gate instead, since a key whose
 * fields leave the gate out holds sessions of several (a session with no
 * gate, of 'measure', shows "-").
 */
static void table_header_of(struct bg_strbuf *out, const char *last)
{
	bg_strbuf_addf(out, "%-5s %-27s %-17s %-10s %-10s %-10s %-10s %-10s %-11s %-8s %s\n", "id", "started", "tier",
		       "p50", "p95", "max", "tree peak", "accel peak", "decision", last, "curation");
}

static void table_header(struct bg_strbuf *out)
{
	table_header_of(out, "key");
}

static void table_header_key(struct bg_strbuf *out)
{
	table_header_of(out, "gate");
}

static void table_row_of(struct bg_strbuf *out, const json_t *r, bool by_key)
{
	struct bg_strbuf c[9] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
				 BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
				 BG_STRBUF_INIT};
	const char *tier = json_string_value(json_object_get(r, "tier"));
	const char *decision = json_string_value(json_object_get(r, "decision"));
	const char *key = json_string_value(json_object_get(r, "key_id"));
	const char *gate = json_string_value(json_object_get(r, "gate_id"));
	const char *status = json_string_value(json_object_get(r, "status"));
	const char *pending = bg_vp_pending_source(r);

	bg_format_duration(&c[0], json_object_get(r, "wall_p50_ns"));
	bg_format_duration(&c[1], json_object_get(r, "wall_p95_ns"));
	bg_format_duration(&c[2], json_object_get(r, "wall_max_ns"));
	bg_format_bytes(&c[3], json_object_get(r, "tree_peak_bytes"));
	bg_format_bytes(&c[4], json_object_get(r, "gpu_peak_bytes"));
	bg_strbuf_addf(out, "%-5lld %-27s %-17s %-10s %-10s %-10s %-10s %-10s %-11s ",
		       (long long)json_integer_value(json_object_get(r, "id")),
		       bg_cli_shown(&c[5], json_string_value(json_object_get(r, "started_at"))),
		       bg_cli_shown(&c[6], tier), c[0].buf, c[1].buf, c[2].buf, c[3].buf, c[4].buf,
		       bg_cli_shown(&c[7], decision ? decision : (status && strcmp(status, "ok") ? status : "none")));
	if (by_key) /* in full: gate ids are not truncated */
		bg_strbuf_addf(out, "%-8s ", gate ? bg_cli_shown(&c[8], gate) : "-");
	else
		bg_strbuf_addf(out, "%-8.8s ", bg_cli_shown(&c[8], key));
	bg_vp_curation(out, r);
	if (pending) /* as the dashboard says why it does not count */
		bg_strbuf_addf(out, " (%s)", pending);
	bg_strbuf_addch(out, '\n');
	/* the decision's notes under its row, as compare prints them */
	bg_vp_notes(out, json_object_get(r, "conditions"), "      ");
	for (int k = 0; k < 9; k++)
		bg_strbuf_release(&c[k]);
}

static void table_row(struct bg_strbuf *out, const json_t *r)
{
	table_row_of(out, r, false);
}

static void table_row_key(struct bg_strbuf *out, const json_t *r)
{
	table_row_of(out, r, true);
}

/*
 * The full key id that prefix (4 to 64 hexadecimal digits, as the history
 * table shows the first 8) names among the stored keys: *full is set (a
 * copy the caller frees), or left NULL when no stored key starts so.
 * BG_ECHECK when several do. Reads the key index only (the first two keys
 * that begin so, in the order of their first session), not every session.
 */
static int resolve_key(struct bg_store *store, const char *prefix, char **full, struct bg_ctx *ctx)
{
	json_t *keys = NULL;
	int rc;

	*full = NULL;
	if ((rc = bg_store_keys_with_prefix(store, prefix, &keys, ctx)))
		return rc;
	if (json_array_size(keys) > 1)
		rc = bg_error(ctx, BG_ECHECK, "key '%s' is ambiguous: it begins %.12s... and %.12s...; "
			      "give more of its digits", prefix, json_string_value(json_array_get(keys, 0)),
			      json_string_value(json_array_get(keys, 1)));
	else if (json_array_size(keys) == 1)
		*full = bg_xstrdup(json_string_value(json_array_get(keys, 0)));
	json_decref(keys);
	return rc;
}

static int run_history(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {
		{"key", 0, BG_OPT_VALUE, O_KEY, false},
		{"last", 0, BG_OPT_VALUE, O_LAST, false},
		{"json", 0, BG_OPT_FLAG, O_JSON, false},
		{0},
	};
	struct history_args a = {NULL, 0, false, ""};
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT, msg = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct bg_cli_rows walk = {.out = &sb, .header = table_header, .row = table_row};
	const char *gate;
	char *full_key = NULL;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, on_opt, &a, &parsed)))
		return rc;
	if (a.key && parsed.npos)
		return bg_cli_usage_error(self, "give a gate or --key ID, not both");
	if (!a.key && parsed.npos != 1)
		return bg_cli_usage_error(self, "a gate id or --key ID is required");
	if (a.key && (strlen(a.key) < 4 || strlen(a.key) > 64 || strspn(a.key, "0123456789abcdef") != strlen(a.key)))
		return bg_cli_usage_error(self, "--key needs a key id, or at least its first 4 of 64 lower-case "
					  "hexadecimal digits (see 'benchgate key SESSION' or 'benchgate history GATE')");
	gate = a.key ? NULL : parsed.pos[0];
	if (gate && !*gate)
		return bg_cli_usage_error(self, "a gate id cannot be empty");
	walk.json = a.json;
	if (a.key) {
		walk.header = table_header_key;
		walk.row = table_row_key;
	}
	if ((rc = bg_cli_load_config(cli, &cfg)))
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx);
	if (rc == BG_OK && store && a.key && strlen(a.key) < 64)
		rc = resolve_key(store, a.key, &full_key, &ctx);
	/* printed into sb as the rows come; nothing of it is shown on an error */
	if (rc == BG_OK && store && (!a.key || strlen(a.key) == 64 || full_key))
		rc = bg_store_each_history_last(store, gate, full_key ? full_key : a.key, a.last, bg_cli_rows_add,
						&walk, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	if (walk.n == 0 && gate && (rc = bg_cli_unknown_stored_gate(cli, &cfg, gate, BG_EUSAGE, &msg))) {
		bg_cli_fail(rc, msg.buf); /* which shows its control bytes */
		goto out;
	}
	if (walk.n == 0 && !gate && a.key) {
		/* a key exists only through its sessions: none is a mistyped
		 * or foreign key, as an unknown session is */
		bg_strbuf_addf(&msg, "unknown key '%s': %s; a session's key is shown by 'benchgate key SESSION' and "
			       "'benchgate history GATE'", a.key,
			       store ? (strlen(a.key) < 64 ? "no stored session has a key that begins so"
							   : "no stored session has this key")
				     : "no sessions stored yet");
		rc = BG_ECHECK;
		bg_cli_fail(rc, msg.buf);
		goto out;
	}
	bg_cli_rows_end(&walk);
	if (!a.json && walk.n == 0) {
		/* the gate as typed: its control bytes shown, as every message shows them */
		bg_strbuf_adds(&sb, "no sessions stored for gate '");
		bg_cli_add_shown(&sb, gate);
		bg_strbuf_adds(&sb, "'\n");
	}
	rc = bg_cli_write(&sb, false);
out:
	free(full_key);
	bg_strbuf_release(&sb);
	bg_strbuf_release(&msg);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_history = {
	"history",
	"list the sessions of a gate or a comparison key with their decisions",
	"benchgate history GATE [--last N] [--json]\n"
	"       benchgate history --key ID [--last N] [--json]",
	"  --key ID   the sessions of one comparison key (see 'benchgate key SESSION'); its\n"
	"             first digits are enough when no other stored key begins with them\n"
	"  --last N   only the last N sessions (still oldest first)\n"
	"  --json     print a JSON array of session summaries\n",
	run_history,
	NULL,
	false,
};
