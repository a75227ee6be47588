/*
 * cmd_help.c - `benchgate help [VERB]`: the program's usage, or one verb's
 * (as `benchgate --help` and `benchgate VERB --help` show them), on
 * stdout with exit 0. A verb that is not there is a usage error (exit 2),
 * with the verbs it is closest to.
 */
#include "cli/cli.h"

#include <string.h>

static int run_help(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{0}};
	struct bg_parsed parsed;
	const struct bg_cmd *verb;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	int rc;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, bg_cli_no_options, NULL, &parsed)))
		return rc;
	if (parsed.npos == 0) {
		bg_cli_main_usage(&sb);
		rc = bg_cli_write(&sb, false);
		bg_strbuf_release(&sb);
		return rc;
	}
	if (!(verb = bg_cli_find_verb(parsed.pos[0]))) {
		bg_cli_unknown_verb("benchgate help", parsed.pos[0]);
		return BG_EUSAGE;
	}
	return bg_cli_print_help(verb);
}

const struct bg_cmd bg_cmd_help = {
	"help",
	"show this help, or one verb's: benchgate help VERB",
	"benchgate help [VERB]",
	NULL,
	run_help,
	NULL,
	false,
};
