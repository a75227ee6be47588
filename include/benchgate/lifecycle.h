/*
 * lifecycle.h - what surrounds a measured session: device leases, experiment
 * ids, manifests and the RUNS.md index.
 *
 * Leases: one owner per device slug, held as an open-file-description
 * lock (fcntl F_OFD_SETLK) on STATE/leases/SLUG.lock (the kernel drops it
 * when the holder dies) plus a readable owner record STATE/leases/SLUG.json.
 * STATE is the folder of the store (".benchgate" by default). Looking at a
 * lease (bg_lease_status) tests the lock without taking it, so it never
 * makes a run's bg_lease_acquire fail.
 *
 * Manifests and RUNS.md are written whole (temporary file, fsync, rename);
 * RUNS.md updates are serialised by an flock on a lock file beside it, so
 * concurrent experiments never lose each other's rows. Every path written
 * is relative to the project root. Returned JSON belongs to the caller.
 */
#ifndef BENCHGATE_LIFECYCLE_H
#define BENCHGATE_LIFECYCLE_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "benchgate/config.h"
#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The folder that holds the store and leases (absolute), into out. */
void bg_lifecycle_state_dir(const struct bg_config *cfg, struct bg_strbuf *out);
/*
 * benchgate's own state, which the git checks of a session leave out
 * (provenance.h: git_exclude): at most max new strings (the caller frees
 * them) into out; returns how many. Always BG_GIT_EXCLUDE_STATE_FOLDERS,
 * every folder named .benchgate in the repository (the default folder of
 * the store, leases and dashboard, of this project or of another in the
 * same repository); then, for a store named elsewhere, the store's file,
 * SQLite's -journal, -wal and -shm beside it, and "leases", "dashboard",
 * "runs-index.lock", "promote.lock", "abandon.lock" and "promote-journal" in its folder
 * (relative to the project root), never that folder itself, which may
 * hold sources; a store named by an absolute path inside the project
 * root as the relative path it names; nothing more for a store named by
 * another absolute path or through "..", which may lie outside the
 * repository. Each is a glob pattern (provenance.h), plain names escaped.
 * BG_STATE_EXCLUDES_MAX is the most there can be.
 */
#define BG_STATE_EXCLUDES_MAX 11
size_t bg_lifecycle_state_excludes(const struct bg_config *cfg, char **out, size_t max);
/* Its leases/ folder, where the device leases are kept (absolute), into out. */
void bg_lifecycle_leases_dir(const struct bg_config *cfg, struct bg_strbuf *out);
/*
 * Waits for the exclusive lock STATE/name (bg_lock_file) in that folder,
 * creating the folder when needed; release *fd with bg_unlock. Messages
 * name display, or the lock's path when display is NULL.
 */
int bg_lifecycle_lock(const struct bg_config *cfg, const char *name, const char *display, int *fd,
		      struct bg_ctx *ctx);

struct bg_lease {
	int fd;      /* the locked file, or -1 */
	char *slug;  /* owned */
	char *lock_path;
	char *owner_path;
	int machine_fd;     /* the machine lease, taken with the device's (valid while fd >= 0) */
	char *machine_path; /* owned */
	bool replaced_stale; /* an owner record of a dead holder was found and replaced */
	json_t *stale_owner; /* that record, or NULL */
	bool replaced_unreadable; /* a file that is not an owner record was found and replaced */
};

/*
 * Takes the lease of device slug for experiment_id, and with it the
 * machine lease (bg_machine_lease_take); once it holds the lock,
 * removes SLUG.json.tmp.PID files of writers that are gone and replaces an
 * owner record of a dead holder (replaced_stale) or an unreadable one
 * (replaced_unreadable). BG_EPRECOND when another
 * live process holds it: "device 'SLUG' is leased by experiment ID (pid P on
 * HOST, user U, since T); wait for it or run 'benchgate lease status'", and
 * also when the lock is free but the owner record names a process that still
 * runs on this host (its lock file was removed while it ran), or when a run
 * of any project holds the machine lease. BG_EIO when
 * a lease file is not a regular file ("PATH: is a link, not a regular
 * file; remove it"; links are never followed, FIFOs never waited on) or
 * the leases folder cannot be made or written; messages name paths from
 * the project root and say what to do. BG_ECHECK for a slug that cannot
 * name a lease file (bg_config_slug_valid; benchgate.json's are checked
 * when it is read).
 */
int bg_lease_acquire(const struct bg_config *cfg, const char *slug, const char *experiment_id,
		     struct bg_lease *lease, struct bg_ctx *ctx);
/* Rewrites the owner record with the experiment id (once it is known). */
void bg_lease_set_experiment(struct bg_lease *lease, const char *experiment_id);
/* Removes the owner record (unless another process wrote its own) and
 * drops the lock; safe on a lease whose fd is -1, as bg_lease_acquire
 * leaves one it failed to take (not on a zeroed one: fd 0 is stdin). */
void bg_lease_release(struct bg_lease *lease);
/* True while the lease's lock is held by this process on the file that
 * STATE/leases/SLUG.lock still names: false once that file was removed or
 * replaced, since another process could then lock the device too. */
bool bg_lease_held(const struct bg_lease *lease);
/* The same for the machine lease taken with it. */
bool bg_lease_machine_held(const struct bg_lease *lease);

/*
 * The machine lease: one lock for the whole machine, which every run takes
 * beside its device lease, so that runs of different projects (two
 * checkouts, two users, two CI runners on one host) never measure at once.
 * The lock file is $BENCHGATE_MACHINE_LOCK (an absolute path), else
 * /run/lock/benchgate-machine.lock where /run/lock is a folder every user
 * may write (mode 1777), else /tmp/benchgate-machine.lock; made writable by
 * every user, never removed or replaced. Its content is the holder's
 * record: {"project": the project root, "device", "experiment_id", "pid",
 * "host", "user", "started"}, emptied at release. The lock is an OFD lock
 * as a device lease's.
 */
/* Its path, into out; BG_EPRECOND for a relative BENCHGATE_MACHINE_LOCK. */
int bg_machine_lease_path(struct bg_strbuf *out, struct bg_ctx *ctx);
/*
 * Takes it for a run of device slug of the project cfg: *fd the locked
 * file, *path its path (the caller frees it). BG_EPRECOND when another
 * open file holds it: "this machine is leased by experiment ID of the
 * project at ROOT (pid P on HOST, user U, since T): ...". BG_EIO when the
 * file is not a regular one (never followed through a link, never waited
 * on), cannot be opened read-write (another user made it without the
 * others' write bit: the message names them and the remedy), locked or
 * written.
 */
int bg_machine_lease_take(const struct bg_config *cfg, const char *slug, const char *experiment_id,
			  int *fd, char **path, struct bg_ctx *ctx);
/*
 * Holds it shared, for a diagnostic session (measure): diagnostic sessions
 * share the machine with each other, not with a run, which
 * bg_machine_lease_take refuses meanwhile ("this machine is measuring a
 * diagnostic session ..."). *fd the file read-locked (release with
 * bg_machine_lease_unshare), or -1 with *run_holds true while a run holds
 * it (BG_OK: the caller decides). BG_EPRECOND for a relative
 * BENCHGATE_MACHINE_LOCK, BG_EIO as bg_machine_lease_take.
 */
int bg_machine_lease_share(int *fd, bool *run_holds, struct bg_ctx *ctx);
void bg_machine_lease_unshare(int fd);
/* Rewrites the record with the experiment id (once it is known). */
void bg_machine_lease_set_experiment(int fd, const char *path, const char *experiment_id);
/* Empties the record, drops the lock and closes fd (nothing for -1). */
void bg_machine_lease_drop(int fd);
/* "experiment ID of the project at ROOT (pid P on HOST, user U, since T)". */
void bg_machine_lease_describe(struct bg_strbuf *out, const json_t *rec);
/*
 * The machine lease as `lease status` shows it: {"scope": "machine",
 * "device": null, "lock": PATH, "state": "free"|"held"|"shared" (diagnostic
 * sessions)|"unusable", "owner": the holder's record|null, "reason":
 * TEXT|null}. Tested, never taken, and
 * never made: an absent file is "free". BG_EPRECOND only for a relative
 * BENCHGATE_MACHINE_LOCK.
 */
int bg_machine_lease_status(json_t **out, struct bg_ctx *ctx);
/*
 * Every device with a lease file: [{"device", "state":
 * "free"|"held"|"stale"|"unusable", "owner": {...}|null, "reason":
 * TEXT|null}]. "stale": an owner record whose holder is gone, or one that
 * is unreadable (not an object with an integer pid in 1..INT_MAX, a host
 * and a readable started time; owner null, reason says so) under a free
 * lock. "unusable": its lock file or owner record is not a regular file
 * (a directory, a link, a FIFO...) or cannot be read; reason says which
 * and what to do (bg_lease_acquire fails with BG_EIO there). A held lock
 * is "held" whatever its record says (reason notes an unreadable one).
 * The lock is tested, never taken. BG_EIO only when the leases folder is
 * there but cannot be listed.
 */
int bg_lease_status(const struct bg_config *cfg, json_t **out, struct bg_ctx *ctx);

/*
 * Reserves experiments/ID/ for a new experiment, ID being
 * YYYYMMDD-<gate id with dots as dashes> (UTC date), then -2, -3 ... when
 * taken: a folder that exists, or an id RUNS.md already has a row for
 * (its folder removed by a git clean, say). The folder is created
 * exclusively, so two runs never share one.
 */
int bg_experiment_reserve(const struct bg_config *cfg, const char *gate_id, struct bg_strbuf *id,
			  struct bg_ctx *ctx);
/* Appends "[manifest](PATH)" for RUNS.md's row of experiment id: PATH
 * from RUNS.md's folder to experiments/ID/manifest.json ("ID/manifest.json"
 * where RUNS.md is in the experiments folder, "../experiments/ID/..." for a
 * docs/RUNS.md), so that the link leads to the manifest wherever
 * benchgate.json keeps the two. */
void bg_experiment_manifest_link(const struct bg_config *cfg, const char *id, struct bg_strbuf *out);
/* Writes experiments/ID/manifest.json atomically. */
int bg_experiment_write_manifest(const struct bg_config *cfg, const char *id, const json_t *manifest,
				 struct bg_ctx *ctx);
/* Reads experiments/ID/manifest.json as check reads it (Python's json):
 * BG_EIO when it cannot be read (one that is not a regular file, a FIFO
 * too, is never opened), BG_ECHECK when it is not a JSON object, BG_EPRECOND
 * naming the member that benchgate's records cannot hold (NaN, an integer
 * beyond 64 bits, a lone surrogate: bg_value_to_json). _view reads it for
 * reading only, never written back: those become what bg_value_to_json_lossy
 * makes them, so a manifest check accepts is listed and repaired. */
int bg_experiment_read_manifest_view(const struct bg_config *cfg, const char *id, json_t **out, struct bg_ctx *ctx);
int bg_experiment_read_manifest(const struct bg_config *cfg, const char *id, json_t **out,
				struct bg_ctx *ctx);

/*
 * Whether a running experiment's owner lives: *state is "alive", "dead",
 * "other-host" (recorded on another host: cannot tell) or "unknown" (no pid
 * a process can have: not an integer in 1..INT_MAX; never alive, so it can
 * be abandoned).
 */
int bg_experiment_owner_state(const json_t *manifest, const char **state);
/*
 * Records a failure: writes experiments/ID/NOTE_NAME (the note, as JSON),
 * lists it among the outputs with its SHA-256, sets status "failed",
 * failure_reason and timestamps.finished, rewrites the manifest and makes
 * the RUNS.md row "failed" with the reason. manifest is modified in place.
 * *manifest_written (may be NULL) says whether the note and the manifest
 * were written, also when the row then could not be.
 */
int bg_experiment_mark_failed(const struct bg_config *cfg, const char *id, json_t *manifest,
			      const char *reason, const char *note_name, const json_t *note,
			      bool *manifest_written, struct bg_ctx *ctx);
/* Why no RUNS.md row can name the experiment folder id (not one line of
 * UTF-8; a '|', '<' or '&', which a cell writes as an entity; a space at
 * either end, which check strips), or NULL: such a folder is to be renamed. */
const char *bg_experiment_id_unnameable(const char *id);
/* How an experiment's RUNS.md row stands to its manifest (bg_experiment_row_state). */
enum bg_row_state { BG_ROW_AGREES, BG_ROW_SAYS, BG_ROW_REPEATED, BG_ROW_UNREAD, BG_ROW_MISSING };
/*
 * Marks a running experiment whose owner is dead as failed with reason
 * "abandoned: WHY". BG_EPRECOND while its owner is alive, or runs on
 * another host (whose processes cannot be seen from here) unless
 * owner_gone (the caller says it has stopped there), BG_ECHECK when it is
 * not running. An ended (completed or failed)
 * experiment whose RUNS.md row disagrees with its manifest (its writer was
 * killed between the manifest and the row, or RUNS.md could not be
 * written then) gets its row written from the manifest instead, as
 * bg_experiment_repair_row does: BG_OK with *ended its status ("completed"
 * or "failed", static), *was the row's status before ("" when there was
 * none; WHY is not used then) and *before how it stood
 * (bg_experiment_row_state). *ended is NULL otherwise. BG_EUSAGE for an id that is
 * empty, not one line of UTF-8 text, holds a '/' or starts with '.', and
 * for a WHY that is not one line
 * of text (bg_format_line_problem) or holds a private path; BG_ECHECK for
 * an id with no folder.
 */
int bg_experiment_abandon(const struct bg_config *cfg, const char *id, const char *why, bool owner_gone,
			  struct bg_strbuf *was, enum bg_row_state *before, const char **ended, struct bg_ctx *ctx);

/*
 * How the RUNS.md text runs[0..len) (NULL: there is no RUNS.md) stands to
 * the manifest of experiment id, as check reads the rows
 * (bg_profile_runs_rows; rows, when not NULL, is what that gave for the
 * text, so that a listing reads the text once): for a completed or failed
 * manifest, BG_ROW_AGREES when id has one row whose status starts with the
 * one check wants ("ok", "failed"), BG_ROW_SAYS when it has one that says
 * otherwise (*have gets its status), BG_ROW_REPEATED for several (*nrows
 * how many), BG_ROW_UNREAD for a row benchgate finds by its first cell that
 * check does not read (not starting "| 20": "|2026...|"), BG_ROW_MISSING
 * for none. An id that does not start "20", whose rows check never reads,
 * is judged by the row benchgate finds. BG_ROW_AGREES for a manifest of any
 * other status, unless any_status: then the row of a manifest of every
 * status check knows (planned, running, refuted, superseded too) is judged
 * as check judges it.
 */
struct bg_value;
enum bg_row_state bg_experiment_row_state(const char *runs, size_t len, const struct bg_value *rows, const char *id,
					  const json_t *manifest, bool any_status, struct bg_strbuf *have,
					  size_t *nrows);
/*
 * Writes the RUNS.md row of a completed or failed experiment from its
 * manifest when the two disagree (bg_experiment_row_state): status "ok"
 * or "failed", the result its manifest's outputs record (a failure note's,
 * else runs.jsonl's, else "failed: REASON", else the last output's, else
 * "n/a"); a missing row also gets the
 * question, "COMPUTER; gate G; tier T" and the manifest's link. The
 * manifest is never changed. *repaired false (nothing written) when the row
 * already agrees; *was gets the row's status before ("" when there was
 * none) and *before how the row stood (bg_experiment_row_state; a row
 * check does not read is rewritten in its place). BG_ECHECK for a running
 * experiment (abandon is for that), one of another status, several rows for
 * the id (check's "repeats": which to keep is a person's call), or an id
 * with no folder; BG_EUSAGE for an id bg_experiment_abandon refuses;
 * BG_EIO when the manifest cannot be read.
 */
int bg_experiment_repair_row(const struct bg_config *cfg, const char *id, struct bg_strbuf *was,
			     enum bg_row_state *before, bool *repaired, struct bg_ctx *ctx);

/*
 * The writer's pid when name (no folder) is a temporary file the atomic
 * writer makes in an experiment's folder, exactly as benchgate names it:
 * F.tmp.PID for F one of manifest.json, runs.jsonl, session.json,
 * error.json, interrupted.json, abandoned.json, PID in decimal without a
 * leading zero; -1 for any other name.
 */
long bg_experiment_leftover_pid(const char *name);
/*
 * Removes what a benchgate killed between naming and renaming a file left:
 * RUNS.md's temporary (RUNS.md.tmp.PID beside the file the writer
 * replaces) and those of bg_experiment_leftover_pid in the folder of
 * experiment id (id NULL: of every experiment), each only when it is a
 * regular file and its PID is no live process (on this host). Nothing
 * else is touched; nothing is said.
 */
void bg_experiment_remove_leftovers(const struct bg_config *cfg, const char *id);
/*
 * Whether the folder of experiment id is there and holds nothing but
 * names of bg_experiment_leftover_pid whose PID is no live process (a live
 * one's is a run creating it right now), so no
 * manifest.json: what a run killed between creating the folder and
 * writing the manifest leaves. bg_experiment_abandon and
 * bg_experiment_repair_row refuse such a folder with BG_ECHECK, saying to
 * remove it (nothing is removed for the user: a run that has just created
 * it would lose its folder).
 */
bool bg_experiment_folder_bare(const struct bg_config *cfg, const char *id);

/* One row of RUNS.md: | id | hypothesis | setup | status | result | artifact | */
struct bg_runs_row {
	const char *id, *hypothesis, *setup, *status, *result, *artifact;
	/* for a row that is added, not one replaced: the cells the fields
	 * above leave NULL (a manifest's question, setup and link) */
	const char *new_hypothesis, *new_setup, *new_artifact;
};
/*
 * Adds the row, or replaces the row with the same id when present (a NULL
 * field keeps that cell of the existing row; the new_ ones serve an added
 * row only); creates
 * RUNS.md with its header when absent. Cells have "|" escaped and newlines
 * folded.
 */
int bg_runs_index_put(const struct bg_config *cfg, const struct bg_runs_row *row, struct bg_ctx *ctx);
/*
 * The 1-based line of the first merge-conflict marker in text[0..len) (a
 * line that is "<<<<<<<", "|||||||", "=======" or ">>>>>>>", or begins
 * with one of those but "=======" and a space), or 0. git leaves them in
 * RUNS.md when two branches added rows; bg_runs_index_put refuses such a
 * file (BG_EPRECOND, naming the line) rather than rewrite it with them.
 */
size_t bg_runs_index_conflict(const char *text, size_t len);
/*
 * Writes an experiment's manifest and then its RUNS.md row (the running
 * pair when a run starts, the terminal one when it ends), RUNS.md's lock
 * taken first and SIGINT, SIGTERM, SIGHUP and SIGQUIT held back meanwhile,
 * so that a signal does not leave the two disagreeing (which 'check' would
 * report) and a lock wait that ends leaves neither written.
 * *manifest_written (may be NULL) says whether the manifest was written,
 * so that a caller whose row failed can say the row alone is to repair
 * (bg_experiment_repair_row).
 */
int bg_experiment_write_pair(const struct bg_config *cfg, const char *id, const json_t *manifest,
			 const struct bg_runs_row *row, bool *manifest_written, struct bg_ctx *ctx);

/* "2026-11-30T10:15:19Z"-style UTC timestamp with microseconds into out. */
void bg_lifecycle_now_rfc3339(struct bg_strbuf *out);
/* This machine's host name, and the user's name from the password entry
 * ("unknown" without one), appended to out as they are written into leases
 * and manifests: a byte that is not UTF-8 as the text \xNN (bg_json_text),
 * so that a record can always be written and compared with its writer. */
void bg_lifecycle_hostname(struct bg_strbuf *out);
void bg_lifecycle_username(struct bg_strbuf *out);
/*
 * Whether pid is a live process that started no later than when (RFC 3339
 * UTC as benchgate writes it; NULL or unreadable: not compared), so that a
 * pid reused after its writer died (a reboot, a busy container) is not
 * taken for the writer. Where /proc cannot tell the start, as bg_pid_alive.
 */
bool bg_pid_alive_since(pid_t pid, const char *when);
/*
 * The SHA-256 (hex) of runbook rb as the registry writes it (its JSON with
 * keys sorted, compact, ASCII: how it is laid out does not count): what
 * `run` records in a gate session's context as "runbook_sha256", and what
 * `promote` compares with the registry's runbook now. BG_EIO when
 * libcrypto cannot be loaded.
 */
int bg_lifecycle_runbook_sha256(const json_t *rb, char hex[65], struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
