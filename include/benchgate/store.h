/*
 * store.h - where sessions and their runs are kept: one interface, several
 * back ends chosen by the store string of benchgate.json:
 *   "sqlite:PATH"        SQLite file (PATH relative to the project root), now
 *   "postgresql://..."   PostgreSQL, later (refused with BG_EIO for now)
 *
 * A session is the document bg_measure_session returns (docs/measure.md);
 * bg_store_put_session writes it and its runs in one transaction, so a
 * killed writer leaves no half session. Documents returned are new
 * references owned by the caller; a stored text that is not UTF-8 (a
 * store changed outside benchgate) comes back with each byte that is not
 * part of a valid sequence as \xNN (bg_json_text), never as a member left
 * out. Errors: BG_EIO for any store failure
 * ("STORE: what failed: REASON"), BG_ECHECK when a session id is unknown.
 */
#ifndef BENCHGATE_STORE_H
#define BENCHGATE_STORE_H

#include <jansson.h>
#include <stdbool.h>

#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_store;

/*
 * What the opener will do with the store:
 *   BG_STORE_READ    only read it. A store that does not exist yet is not
 *                    made: BG_OK with *out NULL. One this user may write is
 *                    opened as for writing (an older schema upgraded). One
 *                    this user may not write (the file or its folder: a
 *                    shared store, a read-only file system) is opened
 *                    read-only, and nothing is written, no -wal or -shm
 *                    file made beside it: it is read through the -wal and
 *                    -shm already there, or, with no -wal (or an empty
 *                    one), the file as it is (SQLite's immutable mode); a
 *                    -wal without its -shm, and a schema older than this
 *                    program's, are BG_EIO there.
 *   BG_STORE_CREATE  write it, making it (folders, schema) when not there:
 *                    whole in a temporary file beside it, then named, never
 *                    over a store another process made meanwhile.
 *   BG_STORE_WRITE   write it when it exists (*out NULL when not).
 * An empty store file (0 bytes: truncated, or left by an older benchgate
 * stopped while it made the store) is BG_EIO in every mode, and in
 * bg_store_check_write, saying what to do; nothing is written into it.
 * A writing mode on a store this user may not write (the file, or its
 * folder where SQLite keeps the -wal and -shm files) is BG_EIO before
 * anything is opened: "STORE: cannot write the store: REASON; ...".
 */
enum bg_store_mode { BG_STORE_READ, BG_STORE_CREATE, BG_STORE_WRITE };

/* Opens the store named by spec (root: the project root, for relative paths). */
int bg_store_open(const char *spec, const char *root, enum bg_store_mode mode, struct bg_store **out,
		  struct bg_ctx *ctx);
/*
 * BG_OK when this user may write the store named by spec (the file, its
 * folder, or for a store not made yet the folder it would be made in),
 * opening and making nothing: a verb that stores only after long work
 * (run) asks first. Else BG_EIO as a writing bg_store_open gives it, also
 * for what it would refuse without opening: a kind this build cannot open
 * (PostgreSQL, unknown), a sqlite spec without a path, a path that is a
 * folder or a link to nothing. (A file that is not a benchgate store is
 * found only by opening it.)
 */
int bg_store_check_write(const char *spec, const char *root, struct bg_ctx *ctx);
void bg_store_close(struct bg_store *st);
/* Stores a session document and its "runs"; *id receives the new session id. */
int bg_store_put_session(struct bg_store *st, const json_t *session, long long *id,
			 struct bg_ctx *ctx);
/*
 * The last sessions (all when last <= 0), oldest first, as an array of
 * summaries: {id, started_at, status, reason, command, timed_runs, wall_p50_ns,
 * wall_p95_ns, wall_max_ns, wall_mad_ns, cpu_p50_ns, max_rss_bytes,
 * tree_peak_bytes, gpu_peak_bytes, parity, parity_kind, cache_state,
 * git_revision, git_dirty, experiment_id, gate_id, tier, computer, timing}:
 * parity is the result ("pass", "fail", null when not checked), parity_kind
 * what the runbook declared ("none" when nothing; docs/measure.md).
 */
int bg_store_list_sessions(struct bg_store *st, long last, json_t **out, struct bg_ctx *ctx);
/*
 * What the walks below call with each summary, in order: row is the
 * store's, valid only during the call (json_incref to keep it). A non-zero
 * return stops the walk and is what the walk returns; fn leaves its
 * message on ctx.
 */
typedef int (*bg_store_row_fn)(const json_t *row, void *data, struct bg_ctx *ctx);
/*
 * bg_store_list_sessions one summary at a time: a large store is never
 * held whole. A row that cannot be read is BG_EIO after fn has seen the
 * rows before it, so a caller that must print nothing on an error keeps
 * what it makes until the walk returns BG_OK.
 */
int bg_store_each_session(struct bg_store *st, long last, bg_store_row_fn fn, void *data, struct bg_ctx *ctx);
/* A bg_store_row_fn that appends row to the JSON array data; BG_EIO when out of memory. */
int bg_store_append_row(const json_t *row, void *array, struct bg_ctx *ctx);
/* The whole session document with "id" and "runs"; BG_ECHECK when unknown. */
int bg_store_get_session(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx);
/*
 * Decisions and curation (migration 2). A gate session (benchgate run) gets
 * its comparison key and decision when it is stored:
 *   key_id   SHA-256 of the key's canonical JSON (decide.h)
 *   key      {"fields": [...], "values": {...}, "id", "canonical"}
 *   decision the document bg_decide returns ({"decision", "reasons", "baseline", "metrics", ...})
 *   curation "auto-accepted" (pass, no-baseline), "pending" (investigate;
 *            run stores any decision but block pending for uncommitted source),
 *            "rejected" (block: never a baseline), later "accepted" or
 *            "rejected" by a person with a reason.
 * Errors: BG_ECHECK for an unknown session id, BG_EIO for the store.
 */
int bg_store_set_decision(struct bg_store *st, long long id, const char *key_id, const json_t *key,
			  const json_t *decision, const char *curation, struct bg_ctx *ctx);
/*
 * bg_store_put_session and bg_store_set_decision in one transaction: a gate
 * session is never stored without its key and decision, whatever stops the
 * writer. *id receives the new session id.
 */
int bg_store_put_decided_session(struct bg_store *st, const json_t *session, const char *key_id,
				 const json_t *key, const json_t *decision, const char *curation, long long *id,
				 struct bg_ctx *ctx);
/*
 * The baseline of a key: summaries (as bg_store_list_sessions, plus
 * "key_id", "decision", "curation") of sessions with that key_id whose
 * decision is "pass", "investigate" or "no-baseline" (never block, nor a
 * word benchgate never decides, in a store changed outside benchgate),
 * curation "accepted" or "auto-accepted", tier "scheduled-profile" or
 * "release-signoff", status "ok", timed as timing says ("process" or
 * "reported", the session's "timing"; NULL: either), excluding exclude_id;
 * most recent first, at most limit (all when limit <= 0).
 */
int bg_store_baseline(struct bg_store *st, const char *key_id, const char *timing, long long exclude_id,
		      long limit, json_t **out, struct bg_ctx *ctx);
/*
 * The same rule for one summary (as bg_store_history gives it): NULL when
 * the session counts toward its key's baseline, else the first reason it
 * does not, one of "no decision", "blocked" (decision block), "unknown
 * decision" (one benchgate never makes: a store changed outside it),
 * "decision document disagrees" (its "decision_document_agrees" is false:
 * the decision document holds another decision, or is missing), "status"
 * (status not "ok"), "rejected", "pending" (investigate, not accepted yet),
 * "not accepted" (any other curation), "tier" (not scheduled-profile or
 * release-signoff). Parity is no part of it: a runbook may declare none.
 */
const char *bg_store_not_in_baseline(const json_t *summary);
/*
 * A person's curation: curation "accepted" or "rejected", with why, who and
 * when recorded. why must be one line of UTF-8 text, without control
 * characters, not blank (Unicode spaces included): BG_EUSAGE otherwise,
 * naming what is wrong. BG_ECHECK for an unknown id, for a session without
 * a decision (nothing to curate), and for accepting a blocked session
 * (the message says why); BG_EIO for a stored decision benchgate never
 * makes, a session and its decision document that name two, or a damaged
 * session document (as bg_store_verdict), before anything is written.
 * Every curation, the automatic one of
 * bg_store_set_decision included, is also appended to a log (table
 * curations), so earlier verdicts stay readable.
 */
int bg_store_curate(struct bg_store *st, long long id, const char *curation, const char *why,
		    const char *who, struct bg_ctx *ctx);
/*
 * The sessions of a gate (gate_id) or of a key (key_id), oldest first, as
 * summaries (as bg_store_list_sessions, plus "key_id", "decision",
 * "curation", "curated_by", "curated_at", "curation_why" and
 * "conditions": the decision's notes, an array of lines where the machine
 * ran otherwise than the baseline, or null for a session without a
 * decision, a decision stored without them, or a decision document that
 * is not valid JSON). With both NULL: every session that has a key. An
 * empty array when none.
 */
int bg_store_history(struct bg_store *st, const char *gate_id, const char *key_id, json_t **out,
		     struct bg_ctx *ctx);
/* bg_store_history one summary at a time (as bg_store_each_session). */
int bg_store_each_history(struct bg_store *st, const char *gate_id, const char *key_id, bg_store_row_fn fn,
			  void *data, struct bg_ctx *ctx);
/* bg_store_each_history of the last `last` sessions only (every one when
 * last <= 0), still oldest first; the older ones are not read. */
int bg_store_each_history_last(struct bg_store *st, const char *gate_id, const char *key_id, long last,
			       bg_store_row_fn fn, void *data, struct bg_ctx *ctx);
/*
 * The key ids stored (as bg_store_history gives them: text only) that
 * begin with prefix, each once, in the order of their first session, at
 * most two: one names the key, two make the prefix ambiguous. Reads only
 * the matching entries of the key index, not the sessions. An empty array
 * when none; BG_ECHECK for an empty prefix.
 */
int bg_store_keys_with_prefix(struct bg_store *st, const char *prefix, json_t **out, struct bg_ctx *ctx);
/*
 * Every key with stored sessions, one row each, the key whose latest
 * session is the newest first: {"key_id", "id" (its first session),
 * "latest" (its latest session), "sessions" (how many)}. "key_id" is as
 * bg_store_history gives it: text, or else not a string (a store changed
 * outside benchgate), which the caller names by "id". Reads the key index,
 * not the sessions: a store of many keys is listed without being held.
 */
int bg_store_each_key(struct bg_store *st, bg_store_row_fn fn, void *data, struct bg_ctx *ctx);
/*
 * bg_store_each_history for the key of session session_id: the sessions
 * whose stored key id is that session's, byte for byte (whatever its
 * bytes, so a key id bg_store_each_key shows as \xNN is still found),
 * oldest first. None when the session has no key or does not exist.
 */
int bg_store_each_of_key(struct bg_store *st, long long session_id, bg_store_row_fn fn, void *data,
			 struct bg_ctx *ctx);
/*
 * The reads that follow, until bg_store_read_end, see the store as it was
 * at the first of them (one read transaction: a session stored meanwhile
 * is not seen), so that a reader of many queries, such as the dashboard,
 * sees one state of the store. Nothing may be written in between. BG_EIO
 * for the store; read_end after a read_begin that failed does nothing.
 */
int bg_store_read_begin(struct bg_store *st, struct bg_ctx *ctx);
void bg_store_read_end(struct bg_store *st);
/*
 * The verdict of one session: the history summary of it plus "key" and
 * "decision_document" (the stored documents, or null) and "curations"
 * ([{"curation", "why", "who", "at"}], oldest first). BG_ECHECK when unknown;
 * BG_EIO for a decision benchgate never makes, a session and its decision
 * document that name two, or a session document that does not parse or is
 * not a JSON object (a store changed outside benchgate).
 */
int bg_store_verdict(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx);
/* The id of the latest session (highest id) of gate_id; BG_ECHECK when it has none. */
int bg_store_last_of_gate(struct bg_store *st, const char *gate_id, long long *id,
			  struct bg_ctx *ctx);

/*
 * The ids of gate_id's sessions after the session `after` (higher ids),
 * oldest first, at most max of them, into ids; *n is how many. Reads the
 * gate's index entries after `after`, not the gate's history.
 */
int bg_store_gate_sessions_after(struct bg_store *st, const char *gate_id, long long after, long long *ids,
				 size_t max, size_t *n, struct bg_ctx *ctx);

/* The schema version of an open store. */
int bg_store_schema_version(struct bg_store *st);

#ifdef __cplusplus
}
#endif

#endif
