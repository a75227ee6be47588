/*
 * cmd_sessions.c - `benchgate sessions [--last N] [--json]`: the stored
 * sessions, oldest first, as a table or a JSON array of summaries.
 */
#include "cli/cli.h"
#include "cli/measure_print.h"
#include "benchgate/format.h"
#include "benchgate/json.h"
#include "benchgate/store.h"

#include <string.h>

enum { O_LAST, O_JSON };

static const struct bg_opt sessions_opts[] = {
	{"last", 0, BG_OPT_VALUE, O_LAST, false},
	{"json", 0, BG_OPT_FLAG, O_JSON, false},
	{NULL, 0, 0, 0, false},
};

struct sessions_args {
	long last;
	bool json;
	char msg[128];
};

static const char *on_opt(int id, const char *v, void *data)
{
	struct sessions_args *a = data;

	if (id == O_JSON) {
		a->json = true;
		return NULL;
	}
	return bg_cli_last_arg(v, &a->last, a->msg, sizeof(a->msg));
}

static void table_header(struct bg_strbuf *out)
{
	bg_strbuf_adds(out, "id    started                      status       runs  p50         p95         tree peak   parity  command\n");
}

static void table_row(struct bg_strbuf *out, const json_t *r)
{
	struct bg_strbuf t[6] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT,
				 BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT};

	bg_format_duration(&t[0], json_object_get(r, "wall_p50_ns"));
	bg_format_duration(&t[1], json_object_get(r, "wall_p95_ns"));
	bg_format_bytes(&t[2], json_object_get(r, "tree_peak_bytes"));
	/* stored texts (a store changed outside benchgate may hold anything)
	 * with their control bytes as \xNN, as every other reader shows them */
	bg_strbuf_addf(out, "%-5lld %-28s %-12s %-5lld %-11s %-11s %-11s %-7s ",
		       (long long)json_integer_value(json_object_get(r, "id")),
		       bg_cli_shown(&t[3], json_string_value(json_object_get(r, "started_at"))),
		       bg_cli_shown(&t[4], json_string_value(json_object_get(r, "status"))),
		       (long long)json_integer_value(json_object_get(r, "timed_runs")), t[0].buf,
		       t[1].buf, t[2].buf, bg_cli_shown(&t[5], json_string_value(json_object_get(r, "parity"))));
	bg_mp_command(out, json_object_get(r, "command"));
	bg_strbuf_addch(out, '\n');
	for (int k = 0; k < 6; k++)
		bg_strbuf_release(&t[k]);
}

static int run_sessions(struct bg_cli *cli, const struct bg_cmd *self)
{
	struct sessions_args a = {0, false, ""};
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct bg_cli_rows walk = {.out = &sb, .header = table_header, .row = table_row};
	int rc;

	rc = bg_cli_parse(cli, self, sessions_opts, 0, false, on_opt, &a, &parsed);
	if (rc)
		return rc;
	rc = bg_cli_load_config(cli, &cfg);
	if (rc)
		return rc;
	walk.json = a.json;
	bg_ctx_init(&ctx);
	rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx);
	/* printed into sb as the rows come; nothing of it is shown on an error */
	if (rc == BG_OK && store)
		rc = bg_store_each_session(store, a.last, bg_cli_rows_add, &walk, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	bg_cli_rows_end(&walk);
	if (!a.json && walk.n == 0) {
		bg_strbuf_adds(&sb, "no sessions stored yet; measure one with 'benchgate measure -- CMD'\n");
	}
	rc = bg_cli_write(&sb, false);
out:
	bg_strbuf_release(&sb);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_sessions = {
	"sessions",
	"list the stored measurement sessions",
	"benchgate sessions [--last N] [--json]",
	"  --last N   only the N most recent sessions\n"
	"  --json     print a JSON array of session summaries\n",
	run_sessions,
	NULL,
	false,
};
