/*
 * filters.c - the --state/--platform/--module/--computer options shared by
 * `list` and `next`.
 */
#include "cli/filters.h"

#include <stdio.h>
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
