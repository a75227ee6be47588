/*
 * verbs.c - the one table of verbs, and what is said from it: the program's
 * usage (`benchgate --help`, `benchgate help`), the lookup of a typed verb,
 * and the message for one that is not there, with the verbs it is closest
 * to ("did you mean 'validate'?"). Prints only on stderr, and only in
 * bg_cli_unknown_verb.
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

/* Longest typed word compared with the verbs: anything longer is no typo of one. */
enum { TYPED_MAX = 32 };

/* An ASCII letter in lower case; any other byte as it is. */
static char fold(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/*
 * The optimal string alignment distance between a and b (insertions,
 * deletions, substitutions and swaps of two neighbours, each 1), ASCII
 * letters compared without regard to case. Both at most TYPED_MAX bytes.
 */
static size_t distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t d[TYPED_MAX + 1][TYPED_MAX + 1];

	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			size_t best = d[i - 1][j - 1] + (fold(a[i - 1]) != fold(b[j - 1]));

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[n][m];
}

/*
 * Appends to out the verbs word is likely a slip for, as "'a'", "'a' or
 * 'b'" or "'a', 'b' or 'c'": those within 1 edit of a word of up to 4
 * bytes, 2 of a longer one, and those the word begins (3 bytes or more),
 * the nearest first (table order among equals), at most three. Nothing
 * when none is near.
 */
static void add_suggestions(struct bg_strbuf *out, const char *word)
{
	size_t len = strlen(word), found = 0, limit = len <= 4 ? 1 : 2;
	const struct bg_cmd *pick[3];

	if (len == 0 || len > TYPED_MAX)
		return;
	for (size_t want = 0; want <= TYPED_MAX && found < 3; want++) {
		for (size_t i = 0; bg_commands[i] && found < 3; i++) {
			const char *name = bg_commands[i]->name;
			size_t d = distance(word, name); /* verb names are shorter than TYPED_MAX */
			bool prefix = len >= 3 && strncmp(name, word, len) == 0;

			if (d == want && (d <= limit || prefix))
				pick[found++] = bg_commands[i];
		}
	}
	for (size_t k = 0; k < found; k++) {
		if (k)
			bg_strbuf_adds(out, k + 1 == found ? " or " : ", ");
		bg_strbuf_addf(out, "'%s'", pick[k]->name);
	}
}

void bg_cli_unknown_verb(const char *prefix, const char *word)
{
	struct bg_strbuf sb = BG_STRBUF_INIT, near = BG_STRBUF_INIT;

	add_suggestions(&near, word);
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
