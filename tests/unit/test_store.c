/*
 * test_store.c - the SQLite store: creation on first use (whole or not at
 * all; an empty store file refused), migrations,
 * put/list/get round trip, unknown ids, unsupported stores, and stored
 * JSON damaged outside benchgate (refused with the session named), and a
 * gate session stored with its decision in one transaction; what a writer
 * is refused before the store is opened; a store read without locks by a
 * user who may not write it, changed by its owner meanwhile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchgate/fsutil.h"
#include "benchgate/store.h"
#include "store/sqlite_api.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/bg-test-store-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static json_t *session_doc(const char *status, double p50)
{
	json_t *doc = json_pack(
		"{s:i, s:s, s:s, s:s, s:s, s:o, s:[s,s], s:{s:i,s:i,s:i},"
		" s:{s:{s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f}, s:n},"
		" s:{s:{s:s,s:b,s:n}, s:s}, s:{s:s,s:n}, s:{s:n,s:n}, s:s,"
		" s:[{s:i,s:i,s:s,s:s,s:i,s:i,s:i,s:i,s:n,s:b,s:i,s:n}]}",
		"schema_version", 1, "kind", "diagnostic", "status", status, "started_at",
		"2026-01-01T00:00:00.000000Z", "finished_at", "2026-01-01T00:00:01.000000Z", "reason",
		strcmp(status, "ok") ? json_string("why") : json_null(), "command", "sleep", "0.05",
		"counts", "smoke", 1, "warmup", 0, "timed", 1, "statistics", "wall_ns", "count", 1,
		"min", p50, "p50", p50, "p95", p50, "max", p50, "mean", p50, "stddev", 0.0, "mad", 0.0,
		"tree_peak_bytes", "provenance", "git", "revision", "abc", "dirty", 0, "diff_sha256",
		"benchgate_version", "0.1.0", "parity", "kind", "none", "result", "cache", "requested",
		"state", "memory_source", "sampled", "runs", "schema_version", 1, "ordinal", 1, "phase",
		"smoke", "started_at", "2026-01-01T00:00:00.000000Z", "wall_ns", 5, "user_ns", 1,
		"sys_ns", 1, "exit_status", 0, "signal", "timed_out", 0, "max_rss_bytes", 4096,
		"tree_peak_bytes");

	assert_non_null(doc);
	return doc;
}

static void test_round_trip(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc, *rows, *got;
	long long id1 = 0, id2 = 0;
	char spec[300];

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(spec, sizeof(spec), "sqlite:sub/dir/store.sqlite3");
	/* not created by a read */
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_null(st);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_non_null(st);
	assert_int_equal(bg_store_schema_version(st), 4);
	doc = session_doc("ok", 5e7);
	assert_int_equal(bg_store_put_session(st, doc, &id1, &ctx), BG_OK);
	json_decref(doc);
	doc = session_doc("blocked", 6e7);
	assert_int_equal(bg_store_put_session(st, doc, &id2, &ctx), BG_OK);
	json_decref(doc);
	assert_int_equal(id2, id1 + 1);
	bg_store_close(st);

	/* reopen: no second migration, both sessions there */
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_non_null(st);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "id")), id1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "status")),
			    "blocked");
	assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "gate_id")));
	assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "tree_peak_bytes")));
	json_decref(rows);
	assert_int_equal(bg_store_list_sessions(st, 1, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "id")), id2);
	json_decref(rows);
	assert_int_equal(bg_store_get_session(st, id1, &got, &ctx), BG_OK);
	assert_int_equal(json_integer_value(json_object_get(got, "id")), id1);
	assert_int_equal(json_array_size(json_object_get(got, "runs")), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(got, "runs"), 0), "phase")),
		"smoke");
	json_decref(got);
	assert_int_equal(bg_store_get_session(st, 999, &got, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "no session with id 999"));
	bg_store_close(st);
	bg_ctx_release(&ctx);
}

static void test_unsupported(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open("postgresql://u:secret@h/db", dir, BG_STORE_CREATE, &st, &ctx), BG_EIO);
	assert_null(strstr(bg_ctx_message(&ctx), "secret"));
	assert_int_equal(bg_store_open("mysql:x", dir, BG_STORE_CREATE, &st, &ctx), BG_EIO);
	assert_int_equal(bg_store_open("sqlite:", dir, BG_STORE_CREATE, &st, &ctx), BG_EIO);
	bg_ctx_release(&ctx);
}

/* Rewrites one stored text with SQL, through the store's own SQLite binding. */
static void damage(const char *path, const char *sql)
{
	struct bg_ctx ctx;
	sqlite3 *db = NULL;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_sqlite_api_load(&ctx), BG_OK);
	assert_int_equal(bg_sym_sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(bg_sym_sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	bg_sym_sqlite3_close(db);
	bg_ctx_release(&ctx);
}

/* Opens the damaged store, expects BG_EIO from get (id) or list (id 0) with each needle. */
static void expect_corrupt(const char *spec, long long id, const char *needle1, const char *needle2)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *got = NULL;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_non_null(st);
	if (id)
		assert_int_equal(bg_store_get_session(st, id, &got, &ctx), BG_EIO);
	else
		assert_int_equal(bg_store_list_sessions(st, 0, &got, &ctx), BG_EIO);
	assert_null(got);
	assert_non_null(strstr(bg_ctx_message(&ctx), needle1));
	assert_non_null(strstr(bg_ctx_message(&ctx), needle2));
	assert_non_null(strstr(bg_ctx_message(&ctx), "the store is corrupted"));
	bg_store_close(st);
	bg_ctx_release(&ctx);
}

static void test_damaged(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc, *got;
	long long id1 = 0, id2 = 0;
	char path[320];
	const char *spec = "sqlite:damaged.sqlite3";

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/damaged.sqlite3", dir);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	doc = session_doc("ok", 5e7);
	assert_int_equal(bg_store_put_session(st, doc, &id1, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id2, &ctx), BG_OK);
	json_decref(doc);
	bg_store_close(st);

	/* a document that does not parse: get names it with the parser's place; list names the session */
	damage(path, "UPDATE sessions SET document = '{' WHERE id = 2");
	expect_corrupt(spec, 2, "session 2: the stored document is not valid JSON (1:1: ", "");
	expect_corrupt(spec, 0, "cannot list sessions: session 2: the stored document is not valid JSON", "");
	/* the other session still reads */
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_get_session(st, id1, &got, &ctx), BG_OK);
	json_decref(got);
	bg_store_close(st);
	/* valid JSON, but not an object: never shown as an empty session */
	damage(path, "UPDATE sessions SET document = '[1, 2]' WHERE id = 2");
	expect_corrupt(spec, 2, "session 2: the stored document is not a JSON object", "");
	/* ... also in a listing, which reads only some of its members */
	expect_corrupt(spec, 0, "cannot list sessions: session 2: the stored document is not a JSON object", "");
	damage(path, "UPDATE sessions SET document = '\"text\"' WHERE id = 2");
	expect_corrupt(spec, 0, "cannot list sessions: session 2: the stored document is not a JSON object", "");
	/* an object after white space is one */
	damage(path, "UPDATE sessions SET document = ' ' || (SELECT document FROM sessions WHERE id = 1) WHERE id = 2");
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_list_sessions(st, 0, &got, &ctx), BG_OK);
	assert_int_equal(json_array_size(got), 2);
	json_decref(got);
	bg_store_close(st);
	/* a run record: named by its ordinal */
	damage(path, "UPDATE sessions SET document = (SELECT document FROM sessions WHERE id = 1) WHERE id = 2;"
		     "UPDATE runs SET record = 'nope' WHERE session_id = 2");
	expect_corrupt(spec, 2, "session 2: the stored record of run 1 is not valid JSON (1:", "near 'nope'");
	damage(path, "UPDATE runs SET record = '7' WHERE session_id = 2");
	expect_corrupt(spec, 2, "session 2: the stored record of run 1 is not valid JSON", "");
	/* a summary column holding JSON text */
	damage(path, "UPDATE runs SET record = (SELECT record FROM runs WHERE session_id = 1);"
		     "UPDATE sessions SET command = '[\"sleep' WHERE id = 1");
	expect_corrupt(spec, 0, "session 1: the stored command is not valid JSON (1:", "premature end of input");
	bg_ctx_release(&ctx);
}

/* A store written by a newer benchgate (a schema version beyond this one's
 * migrations) is refused on open, never read or written with the old schema. */
static void test_newer_schema(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	char path[320];
	const char *spec = "sqlite:newer.sqlite3";

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/newer.sqlite3", dir);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	bg_store_close(st);
	damage(path, "INSERT INTO schema_migrations VALUES (999, '2099-01-01T00:00:00Z')");
	st = NULL;
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_EIO);
	assert_null(st);
	assert_non_null(strstr(bg_ctx_message(&ctx), "store schema version 999 is newer than this benchgate knows ("));
	assert_non_null(strstr(bg_ctx_message(&ctx), "); upgrade benchgate"));
	/* refused before anything is written: a reader and a writer leave the
	 * file as it was (the journal mode was switched to WAL first) */
	damage(path, "PRAGMA journal_mode=DELETE");
	{
		struct bg_strbuf before = BG_STRBUF_INIT, after = BG_STRBUF_INIT;
		struct stat sb;
		char wal[340];

		assert_int_equal(bg_file_read(path, NULL, &before, &ctx), BG_OK);
		for (int m = 0; m < 2; m++) {
			assert_int_equal(bg_store_open(spec, dir, m ? BG_STORE_CREATE : BG_STORE_READ, &st, &ctx), BG_EIO);
			assert_null(st);
		}
		assert_int_equal(bg_file_read(path, NULL, &after, &ctx), BG_OK);
		assert_int_equal(before.len, after.len);
		assert_memory_equal(before.buf, after.buf, before.len);
		snprintf(wal, sizeof(wal), "%s-wal", path);
		assert_int_not_equal(stat(wal, &sb), 0);
		bg_strbuf_release(&before);
		bg_strbuf_release(&after);
	}
	bg_ctx_release(&ctx);
}

/* A new store of spec holding one session; returns its id. */
static long long store_one(const char *spec)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc = session_doc("ok", 5e7);
	long long id = 0;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	json_decref(doc);
	bg_store_close(st);
	bg_ctx_release(&ctx);
	return id;
}

/*
 * A store written before migration 2 (sessions without keys, decisions or
 * curation) is upgraded in place on open: its sessions read back whole,
 * without a verdict, and can be given one. The old store is made from a
 * current one by undoing migrations 3 and 2 by hand.
 */
static void test_upgrade(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *got, *rows, *key, *decision;
	long long id = 0;
	char path[320];
	const char *spec = "sqlite:old.sqlite3";

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/old.sqlite3", dir);
	id = store_one(spec);
	damage(path, "DROP TABLE decision_notes; DELETE FROM schema_migrations WHERE version = 4;"
		     "DROP INDEX sessions_gate_id; DROP INDEX sessions_baseline; DELETE FROM schema_migrations WHERE version = 3;"
		     "DROP INDEX sessions_key; DROP INDEX curations_session; DROP TABLE curations;"
		     "ALTER TABLE sessions DROP COLUMN key_id; ALTER TABLE sessions DROP COLUMN key;"
		     "ALTER TABLE sessions DROP COLUMN decision; ALTER TABLE sessions DROP COLUMN decision_doc;"
		     "ALTER TABLE sessions DROP COLUMN curation; ALTER TABLE sessions DROP COLUMN curated_by;"
		     "ALTER TABLE sessions DROP COLUMN curated_at; ALTER TABLE sessions DROP COLUMN curation_why;"
		     "DELETE FROM schema_migrations WHERE version = 2");

	st = NULL;
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_non_null(st);
	assert_int_equal(bg_store_schema_version(st), 4);
	assert_int_equal(bg_store_get_session(st, id, &got, &ctx), BG_OK);
	assert_int_equal(json_array_size(json_object_get(got, "runs")), 1);
	json_decref(got);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	/* no verdict yet, and no session of any key */
	assert_int_equal(bg_store_verdict(st, id, &got, &ctx), BG_OK);
	assert_true(json_is_null(json_object_get(got, "decision_document")));
	json_decref(got);
	assert_int_equal(bg_store_history(st, NULL, NULL, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);
	/* the upgraded columns take a decision */
	key = json_pack("{s:s}", "id", "k1");
	decision = json_pack("{s:s}", "decision", "no-baseline");
	assert_int_equal(bg_store_set_decision(st, id, "k1", key, decision, "auto-accepted", &ctx), BG_OK);
	json_decref(key);
	json_decref(decision);
	assert_int_equal(bg_store_history(st, NULL, "k1", &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "curation")), "auto-accepted");
	json_decref(rows);
	bg_store_close(st);
	bg_ctx_release(&ctx);
}

/* The first column of the first row of sql (one text parameter: arg, or
 * none when NULL) on the store at path, read-only; -1 when the query
 * fails (no such table) or has no row. */
static int query_int(const char *path, const char *sql, const char *arg)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	int n = -1;

	assert_int_equal(bg_sym_sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (bg_sym_sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK) {
		if (arg)
			bg_sym_sqlite3_bind_text(q, 1, arg, -1, SQLITE_TRANSIENT);
		if (bg_sym_sqlite3_step(q) == SQLITE_ROW)
			n = bg_sym_sqlite3_column_int(q, 0);
	}
	bg_sym_sqlite3_finalize(q);
	bg_sym_sqlite3_close(db);
	return n;
}

/* Whether the store at path holds an index of that name. */
static bool has_index(const char *path, const char *name)
{
	return query_int(path, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", name) == 1;
}

/*
 * A version-2 store (before the indexes of migration 3) is upgraded on
 * open by a writer: the indexes made, the sessions as they were.
 */
static void test_upgrade_indexes(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *rows;
	char path[320];
	const char *spec = "sqlite:v2.sqlite3";

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/v2.sqlite3", dir);
	store_one(spec);
	assert_true(has_index(path, "sessions_gate_id") && has_index(path, "sessions_baseline"));
	damage(path, "DROP TABLE decision_notes; DROP INDEX sessions_gate_id; DROP INDEX sessions_baseline;"
		     "DELETE FROM schema_migrations WHERE version >= 3");
	assert_false(has_index(path, "sessions_gate_id") || has_index(path, "sessions_baseline"));

	st = NULL;
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_non_null(st);
	assert_int_equal(bg_store_schema_version(st), 4);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	bg_store_close(st);
	assert_true(has_index(path, "sessions_gate_id") && has_index(path, "sessions_baseline"));
	bg_ctx_release(&ctx);
}

/* How many rows the store at path has in decision_notes (-1: no such table). */
static int note_rows(const char *path)
{
	return query_int(path, "SELECT count(*) FROM decision_notes", NULL);
}

/*
 * A decision's notes: a row of decision_notes for a decision that has any
 * (replaced when the decision is), none for an empty list or none. A
 * version-3 store (before migration 4) gets the table on open by a writer,
 * filled from the decision documents already stored (a document that is
 * not valid JSON is left out, not an error).
 */
static void test_decision_notes(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *rows, *key = json_pack("{s:s}", "id", "k1"), *d;
	long long a, b, c;
	char path[320];
	const char *spec = "sqlite:notes.sqlite3";

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/notes.sqlite3", dir);
	a = store_one(spec);
	b = store_one(spec);
	c = store_one(spec);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	d = json_pack("{s:s, s:[s]}", "decision", "pass", "conditions", "smt off here, on in 5 of the 5");
	assert_int_equal(bg_store_set_decision(st, a, "k1", key, d, "auto-accepted", &ctx), BG_OK);
	json_decref(d);
	d = json_pack("{s:s, s:[]}", "decision", "pass", "conditions");
	assert_int_equal(bg_store_set_decision(st, b, "k1", key, d, "auto-accepted", &ctx), BG_OK);
	assert_int_equal(bg_store_set_decision(st, c, "k1", key, d, "auto-accepted", &ctx), BG_OK);
	json_decref(d);
	bg_store_close(st);
	assert_int_equal(note_rows(path), 1);

	/* a decision stored again replaces its notes: c gains two, a loses its one */
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	d = json_pack("{s:s, s:[s, s]}", "decision", "investigate", "conditions", "one", "two");
	assert_int_equal(bg_store_set_decision(st, c, "k1", key, d, "pending", &ctx), BG_OK);
	json_decref(d);
	d = json_pack("{s:s, s:[]}", "decision", "pass", "conditions");
	assert_int_equal(bg_store_set_decision(st, a, "k1", key, d, "auto-accepted", &ctx), BG_OK);
	json_decref(d);
	assert_int_equal(bg_store_history(st, NULL, "k1", &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 3);
	assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "conditions")));
	assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "conditions")));
	assert_int_equal(json_array_size(json_object_get(json_array_get(rows, 2), "conditions")), 2);
	json_decref(rows);
	d = json_pack("{s:s, s:[s]}", "decision", "pass", "conditions", "smt off here, on in 5 of the 5");
	assert_int_equal(bg_store_set_decision(st, a, "k1", key, d, "auto-accepted", &ctx), BG_OK);
	json_decref(d);
	bg_store_close(st);
	assert_int_equal(note_rows(path), 2);

	/* back to version 3, with b's document damaged: migration 4 copies the notes in */
	damage(path, "DROP TABLE decision_notes; DELETE FROM schema_migrations WHERE version = 4;"
		     "UPDATE sessions SET decision_doc = '{\"conditions\": [' WHERE id = 2");
	assert_int_equal(b, 2);
	assert_int_equal(note_rows(path), -1);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_schema_version(st), 4);
	assert_int_equal(bg_store_history(st, NULL, "k1", &rows, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(rows, 0), "conditions"), 0)),
			    "smt off here, on in 5 of the 5");
	assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "conditions")));
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(rows, 2), "conditions"), 1)),
			    "two");
	json_decref(rows);
	bg_store_close(st);
	assert_int_equal(note_rows(path), 2);
	json_decref(key);
	bg_ctx_release(&ctx);
}

/*
 * A gate session and its decision go in one transaction: when writing the
 * decision fails (here a trigger refuses the curation log), the session is
 * not stored either; one stored without a decision (by an earlier
 * benchgate) is named as such, not as a diagnostic session.
 */
static void test_decided_session(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc, *key, *decision, *rows, *v;
	long long id = 0, id2 = 0;
	char spec[] = "sqlite:decided.sqlite3", path[300];

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/decided.sqlite3", dir);
	key = json_pack("{s:[], s:{}, s:s}", "fields", "values", "id", "k1");
	decision = json_pack("{s:s, s:[], s:[], s:[]}", "decision", "no-baseline", "reasons", "baseline", "metrics");
	doc = session_doc("ok", 5e7);
	json_object_set_new(doc, "kind", json_string("gate"));
	json_object_set_new(doc, "gate_id", json_string("g.one"));
	json_object_set_new(doc, "tier", json_string("scheduled-profile"));
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_decided_session(st, doc, "k1", key, decision, "auto-accepted", &id, &ctx), BG_OK);
	assert_int_equal(bg_store_verdict(st, id, &v, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(v, "decision")), "no-baseline");
	assert_string_equal(json_string_value(json_object_get(v, "key_id")), "k1");
	assert_string_equal(json_string_value(json_object_get(v, "curation")), "auto-accepted");
	json_decref(v);
	bg_store_close(st);

	damage(path, "CREATE TRIGGER refuse BEFORE INSERT ON curations BEGIN SELECT RAISE(ABORT, 'refused'); END;");
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_READ, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_decided_session(st, doc, "k1", key, decision, "auto-accepted", &id2, &ctx),
			 BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "refused"));
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
	/* a gate session without a decision has nothing to curate, and says why */
	assert_int_equal(bg_store_put_session(st, doc, &id2, &ctx), BG_OK);
	assert_int_equal(bg_store_curate(st, id2, "accepted", "fine", "me", &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "it is a gate session stored without one"));
	bg_store_close(st);
	json_decref(doc);
	json_decref(key);
	json_decref(decision);
	bg_ctx_release(&ctx);
}

/* Another program's SQLite database is refused, and left as it was. */
static void test_foreign_database(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	sqlite3 *db = NULL;
	sqlite3_stmt *q;
	char path[300];
	int n = -1;

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/app.db", dir);
	assert_int_equal(bg_sqlite_api_load(&ctx), BG_OK);
	assert_int_equal(bg_sym_sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
	assert_int_equal(bg_sym_sqlite3_exec(db, "CREATE TABLE customers (id INTEGER)", NULL, NULL, NULL), SQLITE_OK);
	bg_sym_sqlite3_close(db);
	assert_int_equal(bg_store_open("sqlite:app.db", dir, BG_STORE_READ, &st, &ctx), BG_EIO);
	assert_null(st);
	assert_non_null(strstr(bg_ctx_message(&ctx), "app.db: not a benchgate store"));
	assert_int_equal(bg_store_open("sqlite:app.db", dir, BG_STORE_CREATE, &st, &ctx), BG_EIO);
	assert_int_equal(bg_sym_sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(bg_sym_sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL), SQLITE_OK);
	if (bg_sym_sqlite3_step(q) == SQLITE_ROW)
		n = bg_sym_sqlite3_column_int(q, 0);
	bg_sym_sqlite3_finalize(q);
	bg_sym_sqlite3_close(db);
	assert_int_equal(n, 1); /* no table of benchgate's added */
	bg_ctx_release(&ctx);
}

/*
 * bg_store_check_write (run asks it before it runs anything) refuses what a
 * writing bg_store_open would refuse without opening the store: a kind
 * this build cannot open, no path, a folder or a link to nothing where
 * the file should be; a store not made yet is fine, and nothing is made.
 */
static void test_check_write(void **state)
{
	struct bg_ctx ctx;
	char path[300];

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_check_write("postgresql://u:secret@h/db", dir, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "PostgreSQL stores are not supported"));
	assert_null(strstr(bg_ctx_message(&ctx), "secret"));
	assert_int_equal(bg_store_check_write("mysql:x", dir, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "unknown store kind"));
	assert_int_equal(bg_store_check_write("sqlite:", dir, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "needs a path"));
	snprintf(path, sizeof(path), "%s/folder.sqlite3", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(bg_store_check_write("sqlite:folder.sqlite3", dir, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "folder.sqlite3: cannot open the store: a folder, not a file; name a file in 'store' of benchgate.json");
	snprintf(path, sizeof(path), "%s/dangling.sqlite3", dir);
	assert_int_equal(symlink("nowhere", path), 0);
	assert_int_equal(bg_store_check_write("sqlite:dangling.sqlite3", dir, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "dangling.sqlite3: cannot open the store: a link to nothing; make it lead to the store (restore the file it named), or remove the link to start a new store");
	assert_int_equal(bg_store_check_write("sqlite:new/store.sqlite3", dir, &ctx), BG_OK);
	snprintf(path, sizeof(path), "%s/new", dir);
	assert_int_equal(access(path, F_OK), -1);
	bg_ctx_release(&ctx);
}

/* The names in the folder dir/sub, sorted and joined by spaces, into out. */
static void folder_names(const char *sub, char *out, size_t n)
{
	char cmd[400];
	FILE *f;
	size_t len;

	snprintf(cmd, sizeof(cmd), "ls -A '%s/%s' | sort | tr '\\n' ' '", dir, sub);
	f = popen(cmd, "r");
	assert_non_null(f);
	len = fread(out, 1, n - 1, f);
	out[len] = '\0';
	pclose(f);
}

/*
 * A store is made whole or not at all: its schema written into a
 * temporary file beside it, named only when complete, nothing left beside
 * it. An empty store file (truncated, or left by an older benchgate
 * stopped while it made one) is never taken for a new store: every mode
 * refuses it, saying what to do, and writes nothing into it; so is a -wal
 * without its store, which SQLite would read as the new store's.
 */
static void test_create_whole(void **state)
{
	static const enum bg_store_mode modes[] = {BG_STORE_READ, BG_STORE_WRITE, BG_STORE_CREATE};
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	struct stat sb;
	char path[320], names[256];
	FILE *f;

	(void)state;
	bg_ctx_init(&ctx);
	/* temporary stores a killed benchgate left (a pid that runs no more,
	 * 999999999 > pid_max) are removed; a live one's (pid 1) and other
	 * names are not */
	assert_int_equal(mkdir(strcat(strcpy(path, dir), "/made"), 0755), 0);
	{
		static const char *const left[] = {"store.sqlite3.tmp.999999999", "store.sqlite3.tmp.999999999-wal",
						   "store.sqlite3.tmp.1", "store.sqlite3.tmp.0999999999",
						   "other.sqlite3.tmp.999999999"};

		for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
			snprintf(path, sizeof(path), "%s/made/%s", dir, left[i]);
			f = fopen(path, "w");
			assert_non_null(f);
			fclose(f);
		}
	}
	assert_int_equal(bg_store_open("sqlite:made/store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_non_null(st);
	assert_int_equal(bg_store_schema_version(st), 4);
	bg_store_close(st);
	folder_names("made", names, sizeof(names));
	assert_string_equal(names,
			    "other.sqlite3.tmp.999999999 store.sqlite3 store.sqlite3.tmp.0999999999 store.sqlite3.tmp.1 ");

	snprintf(path, sizeof(path), "%s/empty.sqlite3", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	for (size_t i = 0; i < 3; i++) {
		st = NULL;
		assert_int_equal(bg_store_open("sqlite:empty.sqlite3", dir, modes[i], &st, &ctx), BG_EIO);
		assert_null(st);
		assert_string_equal(bg_ctx_message(&ctx),
				    "empty.sqlite3: the store is an empty file (0 bytes): it was truncated, or left by "
				    "an older benchgate stopped while it created the store; if it never held sessions, "
				    "remove it with any -wal and -shm file beside it (the next 'benchgate measure' or "
				    "'benchgate run' makes a new one), otherwise restore it from a backup");
		assert_int_equal(stat(path, &sb), 0);
		assert_int_equal(sb.st_size, 0);
	}
	assert_int_equal(bg_store_check_write("sqlite:empty.sqlite3", dir, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "the store is an empty file (0 bytes)"));

	assert_int_equal(mkdir(strcat(strcpy(path, dir), "/walonly"), 0755), 0);
	f = fopen(strcat(path, "/store.sqlite3-wal"), "w");
	assert_non_null(f);
	fputs("frames of a store removed without its -wal", f);
	fclose(f);
	assert_int_equal(bg_store_open("sqlite:walonly/store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "the store file is not there, but its -wal file (42 bytes) is"));
	/* nor is it read as no store */
	assert_int_equal(bg_store_open("sqlite:walonly/store.sqlite3", dir, BG_STORE_READ, &st, &ctx), BG_EIO);
	assert_null(st);
	folder_names("walonly", names, sizeof(names));
	assert_string_equal(names, "store.sqlite3-wal ");
	bg_ctx_release(&ctx);
}

/*
 * A store read by a user who may not write its folder is read without
 * SQLite's locks (immutable, as the file was when opened): a session its
 * owner stores meanwhile is reported ("the store changed while it was
 * read"), never read as a mix of the two files. As root the reader is a
 * child that drops to nobody; otherwise the folder and file are read-only
 * to their owner while the child opens them.
 */
static void test_read_while_owner_writes(void **state)
{
	char sub[300], file[340];
	const char *spec = "sqlite:shared/store.sqlite3";
	int to_child[2], to_parent[2], status;
	bool root = geteuid() == 0;
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc = session_doc("ok", 1e6);
	long long id;
	pid_t pid;
	char c;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/shared", dir);
	snprintf(file, sizeof(file), "%s/store.sqlite3", sub);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0); /* nobody may look in */
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	bg_store_close(st); /* the last connection: the session is in the file, no -wal is left */
	if (!root) {
		assert_int_equal(chmod(sub, 0555), 0);
		assert_int_equal(chmod(file, 0444), 0);
	}
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct bg_store *r = NULL;
		struct bg_ctx cc;
		json_t *rows = json_array();
		int rc;

		if (root && (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0))
			_exit(10);
		bg_ctx_init(&cc);
		if (bg_store_open(spec, dir, BG_STORE_READ, &r, &cc) != BG_OK || !r)
			_exit(11);
		/* read as it is while nothing changes it */
		if (bg_store_each_session(r, 0, bg_store_append_row, rows, &cc) != BG_OK || json_array_size(rows) != 1)
			_exit(12);
		if (write(to_parent[1], "o", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(13);
		json_array_clear(rows);
		rc = bg_store_each_session(r, 0, bg_store_append_row, rows, &cc);
		if (rc != BG_EIO || !strstr(bg_ctx_message(&cc), "store.sqlite3: the store changed while it was read"))
			_exit(14);
		bg_store_close(r);
		_exit(0);
	}
	assert_int_equal(read(to_parent[0], &c, 1), 1);
	if (!root) {
		assert_int_equal(chmod(sub, 0755), 0);
		assert_int_equal(chmod(file, 0644), 0);
	}
	/* the owner stores a session while the reader holds the store open */
	assert_int_equal(bg_store_open(spec, dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	bg_store_close(st);
	assert_int_equal(write(to_child[1], "w", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	json_decref(doc);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_newer_schema),
		cmocka_unit_test(test_upgrade),
		cmocka_unit_test(test_upgrade_indexes),
		cmocka_unit_test(test_decision_notes),
		cmocka_unit_test(test_decided_session),
		cmocka_unit_test(test_foreign_database),
		cmocka_unit_test(test_check_write),
		cmocka_unit_test(test_create_whole),
		cmocka_unit_test(test_read_while_owner_writes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
