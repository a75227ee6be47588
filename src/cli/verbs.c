/*
 * verbs.c - the one table of verbs, and what is said from it: the program's
 * usage (`benchgate --help`, `benchgate help`), the lookup of a typed verb,
 * and the message for one that is not there, with the verbs it is closest
 * to ("did you mean 'validate'?", bg_cli_add_near). Prints only on stderr,
 * and only in bg_cli_unknown_verb.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

extern const struct bg_cmd bg_cmd_validate, bg_cmd_list, bg_cmd_next, bg_cmd_show,
	bg_cmd_command, bg_cmd_render, bg_cmd_check;
extern const struct bg_cmd bg_cmd_lease, bg_cmd_experiments, bg_cmd_run;
/* measurement engine verbs */
extern const struct bg_cmd bg_cmd_measure, bg_cmd_sessions, bg_cmd_session;
/* decision and curation verbs */
extern const struct bg_cmd bg_cmd_key, bg_cmd_compare, bg_cmd_accept, bg_cmd_reject, bg_cmd_history,
	bg_cmd_repeat, bg_cmd_promote, bg_cmd_dashboard;
extern const struct bg_cmd bg_cmd_help;

const struct bg_cmd *const bg_commands[] = {
	/* the registry: pure reads with the reference's output */
	&bg_cmd_validate,
	&bg_cmd_list,
	&bg_cmd_next,
	&bg_cmd_show,
	&bg_cmd_command,
	&bg_cmd_render,
	&bg_cmd_check,
	/* measuring */
	&bg_cmd_measure,
	&bg_cmd_sessions,
	&bg_cmd_session,
	/* the lifecycle */
	&bg_cmd_run,
	&bg_cmd_lease,
	&bg_cmd_experiments,
	/* decisions, curation, promotion */
	&bg_cmd_key,
	&bg_cmd_compare,
	&bg_cmd_accept,
	&bg_cmd_reject,
	&bg_cmd_history,
	&bg_cmd_repeat,
	&bg_cmd_promote,
	&bg_cmd_dashboard,
	/* this help */
	&bg_cmd_help,
	NULL,
};

void bg_cli_main_usage(struct bg_strbuf *out)
{
	bg_strbuf_adds(out, "usage: benchgate [-C DIR] [--config FILE] VERB [options]\n"
			    "       benchgate --help | --version\n\n"
			    "benchgate is parity-first continuous profiling for scientific and GPU code.\n\n"
			    "global options:\n"
			    "  -C DIR         run in the project rooted at DIR\n"
			    "  --config FILE  read FILE instead of benchgate.json\n"
			    "  -h, --help     show this help (benchgate VERB --help for a verb)\n"
			    "  --version      show the version\n\n"
			    "verbs:\n");
	for (size_t i = 0; bg_commands[i]; i++)
		bg_strbuf_addf(out, "  %-12s %s\n", bg_commands[i]->name, bg_commands[i]->summary);
}

const struct bg_cmd *bg_cli_find_verb(const char *name)
{
	for (size_t i = 0; bg_commands[i]; i++) {
		if (strcmp(bg_commands[i]->name, name) == 0)
			return bg_commands[i];
	}
	return NULL;
}

void bg_cli_unknown_verb(const char *prefix, const char *word)
{
	struct bg_strbuf sb = BG_STRBUF_INIT, near = BG_STRBUF_INIT;
	const char *names[sizeof(bg_commands) / sizeof(bg_commands[0])];
	size_t n = 0;

	for (; bg_commands[n]; n++)
		names[n] = bg_commands[n]->name;
	bg_cli_add_near(&near, word, strlen(word), names, n, BG_CLI_NEAR_BEGINNINGS, "");
	bg_strbuf_adds(&sb, prefix);
	bg_strbuf_adds(&sb, ": unknown verb '");
	bg_cli_add_shown(&sb, word);
	bg_strbuf_addch(&sb, '\'');
	if (near.len)
		bg_strbuf_addf(&sb, " (did you mean %s?)", near.buf);
	bg_strbuf_adds(&sb, "; see 'benchgate --help'\n");
	bg_cli_main_usage(&sb);
	bg_cli_write(&sb, true);
	bg_strbuf_release(&sb);
	bg_strbuf_release(&near);
}
