/*
 * cmd_lease.c - `benchgate lease status [--json]`: every device that has a
 * lease file, whether it is free, held, left by a dead holder, or unusable
 * (a lease file that is not a regular file: why, and what to do), and who
 * owns it; first the machine lease, which a run of any project takes. Exit
 * 0 whatever the states; 4 when the leases folder cannot be listed.
 */
#include "cli/cli.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"

#include <string.h>

static const char *on_opt(int id, const char *value, void *data)
{
	(void)id;
	(void)value;
	*(bool *)data = true;
	return NULL;
}

/* The machine lease's line: who holds it, and its lock file. */
static void add_machine(struct bg_strbuf *out, const json_t *m, bool as_json)
{
	const char *state = json_string_value(json_object_get(m, "state"));
	const json_t *o = json_object_get(m, "owner");

	if (as_json)
		return;
	bg_strbuf_addf(out, "%-28s %-8s ", "machine", state);
	if (json_is_string(json_object_get(m, "reason"))) {
		bg_cli_add_shown(out, json_string_value(json_object_get(m, "reason")));
	} else {
		if (json_is_object(o)) {
			struct bg_strbuf who = BG_STRBUF_INIT;
			bg_machine_lease_describe(&who, o);
			bg_cli_add_shown(out, who.buf);
			bg_strbuf_release(&who);
			bg_strbuf_addch(out, ' ');
		}
		bg_strbuf_adds(out, "(lock ");
		bg_cli_add_shown(out, json_string_value(json_object_get(m, "lock")));
		bg_strbuf_addch(out, ')');
	}
	bg_cli_end_line(out);
}

/* The action, checked as argparse checks a choice: where it stands. */
static int check_action(const struct bg_cmd *self, int index, const char *word)
{
	if (index == 0 && strcmp(word, "status") != 0)
		return bg_cli_usage_error(self, "unknown action '%s'; the action is 'status'", word);
	return BG_OK;
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"json", 0, BG_OPT_FLAG, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_parsed parsed;
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	bool as_json = false;
	json_t *st = NULL, *machine = NULL, *item;
	size_t i;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, on_opt, &as_json, &parsed)))
		return rc;
	if (parsed.npos != 1)
		return bg_cli_usage_error(self, "expected 'status'");
	if ((rc = bg_cli_load_config(cli, &cfg)))
		return rc;
	bg_ctx_init(&ctx);
	if ((rc = bg_machine_lease_status(&machine, &ctx)) || (rc = bg_lease_status(&cfg, &st, &ctx))) {
		bg_cli_fail_ctx(rc, &ctx);
		goto out;
	}
	json_array_foreach(st, i, item)
		json_object_set_new(item, "scope", json_string("project"));
	add_machine(&out, machine, as_json);
	if (as_json) {
		json_array_insert(st, 0, machine);
		bg_json_dump_py(&out, st, 2, true);
		bg_strbuf_addch(&out, '\n');
	} else if (json_array_size(st) == 0) {
		bg_strbuf_adds(&out, "no device has been leased in this project\n");
	} else {
		struct bg_strbuf t[5] = {BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT, BG_STRBUF_INIT};

		/* the lease files' names and words (a host, a user name): shown */
		json_array_foreach(st, i, item) {
			json_t *o = json_object_get(item, "owner");
			const char *state = json_string_value(json_object_get(item, "state"));

			bg_strbuf_addf(&out, "%-28s %-8s", bg_cli_shown(&t[0], json_string_value(json_object_get(item, "device"))),
				       state);
			if (json_is_string(json_object_get(item, "reason"))) {
				bg_strbuf_addch(&out, ' ');
				bg_cli_add_shown(&out, json_string_value(json_object_get(item, "reason")));
			} else if (json_is_object(o) && strcmp(state, "free") != 0) {
				bg_strbuf_addf(&out, " experiment %s, pid %lld on %s, user %s, since %s%s",
					       bg_cli_shown(&t[1], json_string_value(json_object_get(o, "experiment_id"))),
					       (long long)json_integer_value(json_object_get(o, "pid")),
					       bg_cli_shown(&t[2], json_string_value(json_object_get(o, "host"))),
					       bg_cli_shown(&t[3], json_string_value(json_object_get(o, "user"))),
					       bg_cli_shown(&t[4], json_string_value(json_object_get(o, "started"))),
					       strcmp(state, "stale") == 0 ? " (holder is gone; the next run replaces it)" : "");
			}
			bg_cli_end_line(&out);
		}
		for (size_t k = 0; k < 5; k++)
			bg_strbuf_release(&t[k]);
	}
	if (bg_cli_write(&out, false))
		rc = BG_EIO;
out:
	json_decref(machine);
	json_decref(st);
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_lease = {
	"lease",
	"show the machine and device leases: free, held (and by whom), left by a dead holder, or unusable",
	"benchgate lease status [--json]",
	"  --json             print the leases as JSON\n",
	run,
	check_action,
	false,
};
