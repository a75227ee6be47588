/*
 * filters.h - gate filter options shared by `list` and `next`.
 */
#ifndef BENCHGATE_CLI_FILTERS_H
#define BENCHGATE_CLI_FILTERS_H

#include "cli/cli.h"

enum { BG_FILTER_STATE = 100, BG_FILTER_PLATFORM, BG_FILTER_MODULE, BG_FILTER_COMPUTER };

#define BG_FILTER_OPTS                                                   \
	{"state", 0, BG_OPT_VALUE, BG_FILTER_STATE, false},              \
	{"platform", 0, BG_OPT_VALUE, BG_FILTER_PLATFORM, false},        \
	{"module", 0, BG_OPT_VALUE, BG_FILTER_MODULE, false},            \
	{"computer", 0, BG_OPT_VALUE, BG_FILTER_COMPUTER, false}

#define BG_FILTER_HELP                                                                   \
	"  --state STATE      only gates in STATE (measured partial pending blocked\n"     \
	"                     refuted unsupported superseded)\n"                           \
	"  --platform NAME    only gates whose platform is NAME (case-insensitive)\n"      \
	"  --module NAME      only gates whose module is NAME (case-insensitive)\n"        \
	"  --computer NAME    only gates whose computer is NAME (case-insensitive)\n"

/* Applies one filter option; returns a usage message or NULL. */
const char *bg_filter_option(struct bg_gate_filter *f, int id, const char *value);
/*
 * For an empty listing: says on stderr, for each of --platform, --module and
 * --computer that no gate has at all (compared as the filter compares), "benchgate
 * VERB: no gate has platform 'cdua' (did you mean 'CUDA'?)", so that a
 * typo is not read as an empty answer. Standard output and the exit status
 * stay the reference's.
 */
void bg_filter_say_unmatched(const char *verb, const struct bg_registry *reg, const struct bg_gate_filter *f);

#endif
