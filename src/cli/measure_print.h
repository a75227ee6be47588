/*
 * measure_print.h - text rendering of sessions and runs for the measure,
 * sessions and session verbs. What was not measured (JSON null) is "n/a";
 * durations and sizes are written as benchgate/format.h writes them.
 */
#ifndef BENCHGATE_CLI_MEASURE_PRINT_H
#define BENCHGATE_CLI_MEASURE_PRINT_H

#include <jansson.h>

#include <stdbool.h>

#include "benchgate/config.h"
#include "benchgate/measure.h"
#include "benchgate/strbuf.h"

/* The closing summary of a session document. */
void bg_mp_summary(struct bg_strbuf *out, const json_t *doc);
/* One line per run. */
void bg_mp_runs(struct bg_strbuf *out, const json_t *runs);
/*
 * For a blocked session, the end of what its first failed run (an exit
 * status other than 0, a signal, a timeout) wrote on stderr, from the file
 * `run` captured it in: up to its last 10 lines (of its last 2 KiB), each
 * after "  | " as bg_cli_add_shown shows it, under a line naming the run
 * and the file (relative to cfg's project root). Nothing when no run
 * failed, nothing was captured or the file is gone. With id (not 0) the
 * capture is shown only when its experiment's manifest names session id
 * (a store shared by projects: another project's experiment may have the
 * same folder here), else a line says it is not this session's.
 */
void bg_mp_failed_stderr(struct bg_strbuf *out, const json_t *session, long long id, const struct bg_config *cfg);
/* The command words joined by spaces: a word with a space or quote in '...', one with a
 * control byte as the shell's $'...' with \xNN (bg_cli_add_shown). */
void bg_mp_command(struct bg_strbuf *out, const json_t *command);

/* The progress line on stderr (the caller decides whether to show it). */
struct bg_mp_progress_state {
	bool color;
	bool shown;
	const char *phase; /* last phase drawn */
	double last_drawn; /* CLOCK_MONOTONIC seconds */
};
/* A bg_measure_progress_fn; data is a struct bg_mp_progress_state. */
void bg_mp_progress(const struct bg_measure_progress *p, void *data);

#endif
