/*
 * cmd_key.c - `benchgate key SESSION [--json]`: the comparison key of a
 * gate session, every field with its value and where the value came from
 * (key_fields of benchgate.json, the session context, or unresolved).
 * Exit 1 for an unknown session or one without a key (a diagnostic
 * session), 2 for usage.
 */
#include "cli/cli.h"
#include "cli/verdict_print.h"
#include "benchgate/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *on_opt(int id, const char *v, void *data)
{
	(void)id;
	(void)v;
	*(bool *)data = true;
	return NULL;
}

/* The characters (UTF-8 code points) of s[0..len); *at receives the byte
 * offset where character number n (0-based) starts, or len. */
static size_t utf8_chars(const char *s, size_t len, size_t n, size_t *at)
{
	size_t chars = 0;

	*at = len;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (chars == n)
				*at = i;
			chars++;
		}
	return chars;
}

static int run_key(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"json", 0, BG_OPT_FLAG, 1, false}, {0}};
	struct bg_config cfg;
	struct bg_store *store = NULL;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *v = NULL, *key, *f;
	bool json = false;
	long long id;
	size_t i;
	bool cut = false;
	int rc;

	if ((rc = bg_vp_parse_session(cli, self, opts, on_opt, &json, &id)))
		return rc;
	if ((rc = bg_vp_open(cli, &cfg, BG_STORE_READ, &store)))
		return rc;
	bg_ctx_init(&ctx);
	if ((rc = bg_store_verdict(store, id, &v, &ctx))) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	key = json_object_get(v, "key");
	if (!json_is_object(key) && json_is_string(json_object_get(v, "gate_id"))) {
		bg_strbuf_addf(&sb, "session %lld has no comparison key: it is a session of gate '%s' stored without "
			       "its decision (its run stopped before deciding); run the gate again",
			       id, json_string_value(json_object_get(v, "gate_id")));
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
		goto out;
	}
	if (!json_is_object(key)) {
		bg_strbuf_addf(&sb, "session %lld has no comparison key: it is a diagnostic session "
			       "('benchgate measure'); keys are computed for gate sessions ('benchgate run GATE')",
			       id);
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
		goto out;
	}
	if (json) {
		json_t *o = json_pack("{s:I, s:O, s:O, s:O, s:O}", "session", (json_int_t)id, "gate_id",
				      json_object_get(v, "gate_id"), "key_id", json_object_get(v, "key_id"),
				      "fields", json_object_get(key, "fields"), "canonical",
				      json_object_get(key, "canonical") ? json_object_get(key, "canonical")
									 : json_null());
		bg_json_dump_py(&sb, o, 2, false);
		bg_strbuf_addch(&sb, '\n');
		json_decref(o);
	} else {
		const char *gate = json_string_value(json_object_get(v, "gate_id"));
		size_t width = 20;

		bg_strbuf_addf(&sb, "session %lld  gate ", id);
		bg_cli_add_shown(&sb, gate);
		bg_strbuf_adds(&sb, "\nkey ");
		bg_cli_add_shown(&sb, json_string_value(json_object_get(v, "key_id")));
		bg_strbuf_adds(&sb, "\n\n");
		/* the field column: 20 characters, or the longest name's */
		json_array_foreach(json_object_get(key, "fields"), i, f) {
			struct bg_strbuf name = BG_STRBUF_INIT;
			size_t at_unused = 0, nchars;

			bg_cli_shown(&name, json_string_value(json_object_get(f, "field")));
			nchars = utf8_chars(name.buf, name.len, 0, &at_unused);
			if (nchars > width)
				width = nchars;
			bg_strbuf_release(&name);
		}
		bg_strbuf_addf(&sb, "%-*s %-44s %s\n", (int)width, "field", "value", "source");
		json_array_foreach(json_object_get(key, "fields"), i, f) {
			struct bg_strbuf val = BG_STRBUF_INIT, name = BG_STRBUF_INIT, source = BG_STRBUF_INIT;
			size_t chars, at41 = 0;
			char *text = json_dumps(json_object_get(f, "value"),
						JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

			/* JSON escapes C0 controls, not DEL or C1 ones */
			bg_cli_add_shown(&val, text ? text : "null");
			free(text);
			/* characters, not bytes: a cut never splits a UTF-8 sequence */
			if ((chars = utf8_chars(val.buf, val.len, 41, &at41)) > 44) {
				cut = true;
				val.len = at41;
				val.buf[at41] = '\0';
				bg_strbuf_adds(&val, "...");
				chars = 44;
			}
			/* padded by characters, as the value is ('clé' is 3) */
			{
				size_t nchars, at_unused = 0;

				bg_cli_shown(&name, json_string_value(json_object_get(f, "field")));
				nchars = utf8_chars(name.buf, name.len, 0, &at_unused);
				bg_strbuf_addf(&sb, "%s%*s %s%*s %s\n", name.buf, (int)(width - nchars), "",
					       val.buf, (int)(44 - chars), "",
					       bg_cli_shown(&source, json_string_value(json_object_get(f, "source"))));
			}
			bg_strbuf_release(&val);
			bg_strbuf_release(&name);
			bg_strbuf_release(&source);
		}
		if (cut)
			bg_strbuf_adds(&sb, "(values longer than 44 characters are cut; --json shows them whole)\n");
	}
	rc = bg_cli_write(&sb, false);
out:
	json_decref(v);
	bg_strbuf_release(&sb);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_key = {
	"key",
	"show a session's comparison key: every field, its value and its source",
	"benchgate key SESSION [--json]",
	"  --json     print the key fields as JSON\n",
	run_key,
	bg_vp_check_session_pos,
	false,
};
