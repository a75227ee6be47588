/*
 * cmd_session.c - `benchgate session ID [--json]`: one stored session with
 * its runs. Exit 1 when no session has that id, 2 when ID is not a number.
 */
#include "cli/cli.h"
#include "cli/measure_print.h"
#include "cli/verdict_print.h"
#include "benchgate/json.h"
#include "benchgate/store.h"

#include <stdio.h>
#include <string.h>

enum { O_JSON };

static const struct bg_opt session_opts[] = {
	{"json", 0, BG_OPT_FLAG, O_JSON, false},
	{NULL, 0, 0, 0, false},
};

static const char *on_opt(int id, const char *v, void *data)
{
	(void)id;
	(void)v;
	*(bool *)data = true;
	return NULL;
}

/* What of the machine's state changes timings, when it was recorded and is
 * not the usual: ", on battery, boost off, CPU quota 1.5 cores, virtual machine". */
static void conditions(struct bg_strbuf *out, const json_t *host)
{
	const json_t *power = json_object_get(host, "power_source"), *quota = json_object_get(host, "cpu_quota_cores");

	if (json_is_string(power))
		bg_strbuf_adds(out, strcmp(json_string_value(power), "battery") == 0 ? ", on battery" : ", on mains power");
	if (json_is_false(json_object_get(host, "cpu_boost")))
		bg_strbuf_adds(out, ", boost off");
	if (json_is_number(quota))
		bg_strbuf_addf(out, ", CPU quota %g cores", json_number_value(quota));
	if (json_is_integer(json_object_get(host, "cpus_allowed")) &&
	    json_integer_value(json_object_get(host, "cpus_allowed")) <
		    json_integer_value(json_object_get(host, "logical_cores")))
		bg_strbuf_addf(out, ", %lld CPU(s) allowed (affinity)",
			       (long long)json_integer_value(json_object_get(host, "cpus_allowed")));
	if (json_is_true(json_object_get(host, "virtualized")))
		bg_strbuf_adds(out, ", virtual machine");
}

static void provenance(struct bg_strbuf *out, const json_t *doc)
{
	const json_t *p = json_object_get(doc, "provenance"), *git = json_object_get(p, "git");
	const json_t *host = json_object_get(p, "host");
	const char *rev = json_string_value(json_object_get(git, "revision"));
	const char *cpu = json_string_value(json_object_get(host, "cpu_model"));

	struct bg_strbuf t[3] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT};

	bg_strbuf_addf(out, "  %-12s%s", "revision", bg_cli_shown(&t[0], rev));
	if (json_is_true(json_object_get(git, "dirty"))) {
		json_int_t untracked = json_integer_value(json_object_get(git, "untracked_files"));
		bg_strbuf_addf(out, " (dirty, diff %s",
			       bg_cli_shown(&t[0], json_string_value(json_object_get(git, "diff_sha256"))));
		if (untracked > 0)
			bg_strbuf_addf(out, ", %lld untracked file%s", (long long)untracked, untracked == 1 ? "" : "s");
		bg_strbuf_addch(out, ')');
	}
	bg_strbuf_addch(out, '\n');
	bg_strbuf_addf(out, "  %-12s%s, %lld cores, kernel %s", "host", bg_cli_shown(&t[0], cpu),
		       (long long)json_integer_value(json_object_get(host, "logical_cores")),
		       bg_cli_shown(&t[1], json_string_value(json_object_get(host, "kernel_release"))));
	conditions(out, host);
	bg_strbuf_addch(out, '\n');
	bg_strbuf_addf(out, "  %-12s%s .. %s\n", "when",
		       bg_cli_shown(&t[1], json_string_value(json_object_get(doc, "started_at"))),
		       bg_cli_shown(&t[2], json_string_value(json_object_get(doc, "finished_at"))));
	for (int k = 0; k < 3; k++)
		bg_strbuf_release(&t[k]);
}

static int run_session(struct bg_cli *cli, const struct bg_cmd *self)
{
	struct bg_parsed parsed;
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *doc = NULL;
	bool json = false;
	long long id;
	int rc;

	rc = bg_cli_parse(cli, self, session_opts, 1, false, on_opt, &json, &parsed);
	if (rc)
		return rc;
	if (parsed.npos != 1)
		return bg_cli_usage_error(self, "a session id is required");
	if ((rc = bg_vp_session_id(self, parsed.pos[0], &id)))
		return rc;
	rc = bg_cli_load_config(cli, &cfg);
	if (rc)
		return rc;
	bg_ctx_init(&ctx);
	rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx);
	if (rc == BG_OK && !store)
		rc = bg_error(&ctx, BG_ECHECK, "no session with id %lld: no sessions stored yet", id);
	if (rc == BG_OK)
		rc = bg_store_get_session(store, id, &doc, &ctx);
	if (rc) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	if (json) {
		bg_json_dump_py(&sb, doc, 2, false);
		bg_strbuf_addch(&sb, '\n');
	} else {
		bg_mp_summary(&sb, doc);
		bg_mp_failed_stderr(&sb, doc, id, &cfg);
		provenance(&sb, doc);
		bg_strbuf_addch(&sb, '\n');
		bg_mp_runs(&sb, json_object_get(doc, "runs"));
	}
	rc = bg_cli_write(&sb, false);
out:
	bg_strbuf_release(&sb);
	json_decref(doc);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_session = {
	"session",
	"show one stored measurement session with its runs",
	"benchgate session ID [--json]",
	"  --json     print the whole session document with its runs as JSON\n",
	run_session,
	bg_vp_check_session_pos,
	false,
};
