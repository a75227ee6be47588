/*
 * filters.c - the --state/--platform/--module/--computer options shared by
 * `list` and `next`, and the note on stderr when one names what no gate has.
 */
#include "cli/filters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bg_filter_option(struct bg_gate_filter *f, int id, const char *value)
{
	static char msg[256]; /* the message returned, naming the value */

	switch (id) {
	case BG_FILTER_STATE:
		if (!bg_state_label(value)) {
			snprintf(msg, sizeof(msg),
				 "invalid choice for '--state': '%.60s' (choose from 'blocked', 'measured', 'partial', "
				 "'pending', 'refuted', 'superseded', 'unsupported')", value);
			return msg;
		}
		f->state = value;
		return NULL;
	case BG_FILTER_PLATFORM:
		f->platform = value;
		return NULL;
	case BG_FILTER_MODULE:
		f->module = value;
		return NULL;
	case BG_FILTER_COMPUTER:
		f->computer = value;
		return NULL;
	}
	return "unknown option";
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * For one filter: when no gate's field passes it (bg_registry_any_field_matches),
 * appends "benchgate VERB: no gate has FIELD 'WANT'" and the values it is a
 * slip for to out, one line.
 */
static void say_unmatched(struct bg_strbuf *out, const char *verb, const struct bg_registry *reg,
			  const char *field, const char *want)
{
	struct bg_strbuf have = BG_STRBUF_INIT;
	size_t n = bg_value_size(reg->gates), k = 0, i, distinct = 0;
	char **values;
	struct bg_value *gate;

	if (!want || !*want || bg_registry_any_field_matches(reg, field, want))
		return;
	/* each value once, in order (the nearest are then named once) */
	values = bg_xcalloc(n + 1, sizeof(*values));
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		struct bg_value *v = bg_value_get(gate, field);

		if (!v)
			continue;
		bg_strbuf_reset(&have);
		bg_value_py_str(&have, v);
		values[k++] = bg_xstrdup(have.buf);
	}
	qsort(values, k, sizeof(*values), cmp_text);
	for (i = 0; i < k; i++) {
		if (distinct && strcmp(values[distinct - 1], values[i]) == 0)
			free(values[i]);
		else
			values[distinct++] = values[i];
	}
	bg_strbuf_addf(out, "benchgate %s: no gate has %s '", verb, field);
	bg_cli_add_shown(out, want);
	bg_strbuf_addch(out, '\'');
	bg_cli_add_near(out, want, strlen(want), (const char *const *)values, distinct, 0, "");
	bg_strbuf_addch(out, '\n');
	for (i = 0; i < distinct; i++)
		free(values[i]);
	free(values);
	bg_strbuf_release(&have);
}

void bg_filter_say_unmatched(const char *verb, const struct bg_registry *reg, const struct bg_gate_filter *f)
{
	struct bg_strbuf out = BG_STRBUF_INIT;

	say_unmatched(&out, verb, reg, "platform", f->platform);
	say_unmatched(&out, verb, reg, "module", f->module);
	say_unmatched(&out, verb, reg, "computer", f->computer);
	if (out.len)
		bg_cli_write(&out, true);
	bg_strbuf_release(&out);
}
