/*
 * filters.c - the --state/--platform/--module/--computer options shared by
 * `list` and `next`.
 */
#include "cli/filters.h"

#include <string.h>

const char *bg_filter_option(struct bg_gate_filter *f, int id, const char *value)
{
	switch (id) {
	case BG_FILTER_STATE:
		if (!bg_state_label(value))
			return "invalid choice for '--state' (choose from 'blocked', 'measured', 'partial', "
			       "'pending', 'refuted', 'superseded', 'unsupported')";
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
