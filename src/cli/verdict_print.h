/*
 * verdict_print.h - what the decision and curation verbs (key, compare,
 * accept, reject, history, repeat, promote) share: opening the store for a
 * verb, reading a session id argument, and printing metric values of a
 * decision. Only src/cli prints.
 */
#ifndef BENCHGATE_CLI_VERDICT_PRINT_H
#define BENCHGATE_CLI_VERDICT_PRINT_H

#include <jansson.h>

#include "cli/cli.h"
#include "benchgate/store.h"

/*
 * Loads the configuration and opens the existing store, mode BG_STORE_READ
 * or BG_STORE_WRITE (store.h). On failure prints and returns the status (no
 * store yet: exit 1 "no sessions stored yet"); on success the caller
 * releases cfg and closes *st.
 */
int bg_vp_open(struct bg_cli *cli, struct bg_config *cfg, enum bg_store_mode mode, struct bg_store **st);
/* bg_vp_open for the sessions of gate: where there is no store yet, a gate
 * the registry does not have is said to be unknown (exit 1), as where the
 * store has no session of it, rather than "no sessions stored yet". */
int bg_vp_open_gate(struct bg_cli *cli, struct bg_config *cfg, enum bg_store_mode mode, struct bg_store **st,
		    const char *gate);
/* Parses a session id (positive integer) or prints a usage error (exit 2). */
int bg_vp_session_id(const struct bg_cmd *self, const char *arg, long long *id);
/* A bg_cmd check_pos for verbs whose first positional is a session id. */
int bg_vp_check_session_pos(const struct bg_cmd *self, int index, const char *word);
/*
 * Parses a verb's argv (opts, on_opt and data as bg_cli_parse) whose one
 * positional argument is a session id; a usage error (exit 2) when it is
 * absent or bad.
 */
int bg_vp_parse_session(struct bg_cli *cli, const struct bg_cmd *self, const struct bg_opt *opts,
			bg_opt_fn on_opt, void *data, long long *id);
/* A decision metric value: durations for wall_* (seconds in a decision document), bytes for *_bytes,
 * a plain number (or n/a) for any other name. */
void bg_vp_metric_value(struct bg_strbuf *out, const char *metric, const json_t *v);
/* The curation as a person reads it: "accepted by ana at T: why" or the bare word. */
void bg_vp_curation(struct bg_strbuf *out, const json_t *verdict);
/* A decision's notes (an array of lines; what is not text is skipped),
 * one "INDENT note: ..." line each, control bytes shown; nothing when none. */
void bg_vp_notes(struct bg_strbuf *out, const json_t *notes, const char *indent);
/* The decision document's "conditions" (where the machine differed from
 * the baseline's, and what else ran meanwhile), one "  note: ..." line
 * each; nothing when none. */
void bg_vp_conditions(struct bg_strbuf *out, const json_t *decision);
/*
 * Why a pending session (a summary with "curation" and "git_dirty") waits
 * for a person beyond its decision: "uncommitted source" (run stores a
 * session of uncommitted source pending whatever it decided), "source
 * state unknown" (git could not tell), or NULL (committed source, or not
 * pending).
 */
const char *bg_vp_pending_source(const json_t *summary);

#endif
