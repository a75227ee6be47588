/*
 * test_store_records.c - what the SQLite store writes for a session: the
 * exact text of each run record and of the session document (compact JSON,
 * integers as %lld, reals as %.17g plus ".0" when that has no point or
 * exponent), the columns copied from each record (a member missing from one
 * record is NULL there, whatever the record before it held), one transaction
 * per session (a failing run leaves nothing), and the round trip through
 * bg_store_get_session.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchgate/store.h"

static char dir[256];
static char path[300];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/bg-test-store-records-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/store.sqlite3", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* A run record with every kind of value; its text as the store must write it. */
static const char *const record1_json =
	"{\"schema_version\": 1, \"ordinal\": 2, \"phase\": \"timed\","
	" \"started_at\": \"2026-01-01T00:00:00.000001Z\", \"wall_ns\": 1234567890123,"
	" \"user_ns\": -5, \"sys_ns\": 0, \"exit_status\": 0, \"signal\": null, \"timed_out\": true,"
	" \"max_rss_bytes\": 9223372036854775807, \"tree_peak_bytes\": 4096.0,"
	" \"least\": -9223372036854775808,"
	" \"reals\": [0.0, -0.0, 1.0, -2.0, 0.1, 1e15, 999999999999999.0, -999999999999999.0,"
	"             1e-7, 1e300, 123456.789, 0.5, 9007199254740992.0, 1e16],"
	" \"text\": \"q\\\"b\\\\n\\nt\\tr\\rb\\bf\\fu\\u001f\\u00b5/\","
	" \"nested\": {\"a\": [], \"b\": {}, \"c\": [true, false, null, [1, \"x\"]]}}";
static const char *const record1_text =
	"{\"schema_version\":1,\"ordinal\":2,\"phase\":\"timed\","
	"\"started_at\":\"2026-01-01T00:00:00.000001Z\",\"wall_ns\":1234567890123,"
	"\"user_ns\":-5,\"sys_ns\":0,\"exit_status\":0,\"signal\":null,\"timed_out\":true,"
	"\"max_rss_bytes\":9223372036854775807,\"tree_peak_bytes\":4096.0,"
	"\"least\":-9223372036854775808,"
	"\"reals\":[0.0,-0.0,1.0,-2.0,0.10000000000000001,1000000000000000.0,999999999999999.0,"
	"-999999999999999.0,9.9999999999999995e-08,1.0000000000000001e+300,123456.789,"
	"0.5,9007199254740992.0,10000000000000000.0],"
	"\"text\":\"q\\\"b\\\\n\\nt\\tr\\rb\\u0008f\\u000cu\\u001f\xc2\xb5/\","
	"\"nested\":{\"a\":[],\"b\":{},\"c\":[true,false,null,[1,\"x\"]]}}";
/* A sparse record after it: the columns it lacks must be NULL, timed_out 0. */
static const char *const record2_json =
	"{\"ordinal\": 3, \"phase\": \"timed\", \"started_at\": \"2026-01-01T00:00:01.000000Z\","
	" \"wall_ns\": 7, \"timed_out\": false}";
static const char *const record2_text =
	"{\"ordinal\":3,\"phase\":\"timed\",\"started_at\":\"2026-01-01T00:00:01.000000Z\","
	"\"wall_ns\":7,\"timed_out\":false}";

static json_t *session_doc(void)
{
	json_t *doc = json_loads(
		"{\"schema_version\": 1, \"id\": 77, \"kind\": \"diagnostic\", \"status\": \"ok\","
		" \"reason\": null, \"started_at\": \"2026-01-01T00:00:00.000000Z\","
		" \"finished_at\": \"2026-01-01T00:00:02.000000Z\", \"command\": [\"sleep\", \"0.05\"],"
		" \"counts\": {\"smoke\": 0, \"warmup\": 0, \"timed\": 2},"
		" \"statistics\": {\"wall_ns\": {\"min\": 7.0, \"p50\": 617283945065.0,"
		" \"p95\": 1172839495616.5, \"max\": 1234567890123.0, \"mad\": 0.25}},"
		" \"runs\": [], \"provenance\": {\"git\": {\"revision\": null, \"dirty\": false}},"
		" \"parity\": {\"kind\": \"none\", \"result\": \"pass\"}, \"after_runs\": \"kept\"}",
		0, NULL);

	assert_non_null(doc);
	return doc;
}

static const char *const document_text =
	"{\"schema_version\":1,\"kind\":\"diagnostic\",\"status\":\"ok\",\"reason\":null,"
	"\"started_at\":\"2026-01-01T00:00:00.000000Z\",\"finished_at\":\"2026-01-01T00:00:02.000000Z\","
	"\"command\":[\"sleep\",\"0.05\"],\"counts\":{\"smoke\":0,\"warmup\":0,\"timed\":2},"
	"\"statistics\":{\"wall_ns\":{\"min\":7.0,\"p50\":617283945065.0,"
	"\"p95\":1172839495616.5,\"max\":1234567890123.0,\"mad\":0.25}},"
	"\"provenance\":{\"git\":{\"revision\":null,\"dirty\":false}},"
	"\"parity\":{\"kind\":\"none\",\"result\":\"pass\"},\"after_runs\":\"kept\"}";

static json_t *load(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);

	assert_non_null(v);
	return v;
}

static void test_record_text_and_columns(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc = session_doc(), *runs = json_object_get(doc, "runs"), *got;
	long long id = 0;
	sqlite3 *db;
	sqlite3_stmt *q;

	(void)state;
	bg_ctx_init(&ctx);
	json_array_append_new(runs, load(record1_json));
	json_array_append_new(runs, load(record2_json));
	assert_int_equal(bg_store_open("sqlite:store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	/* the round trip: the same document back, with the new id */
	assert_int_equal(bg_store_get_session(st, id, &got, &ctx), BG_OK);
	assert_int_equal(json_integer_value(json_object_get(got, "id")), id);
	json_object_set_new(doc, "id", json_integer(id));
	assert_true(json_equal(got, doc));
	json_decref(got);
	bg_store_close(st);

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT document FROM sessions WHERE id = ?", -1, &q,
					    NULL), SQLITE_OK);
	sqlite3_bind_int64(q, 1, id);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(q, 0), document_text);
	sqlite3_finalize(q);
	assert_int_equal(sqlite3_prepare_v2(db,
					    "SELECT ordinal, phase, started_at, wall_ns, user_ns, sys_ns,"
					    " exit_status, signal, timed_out, max_rss_bytes, tree_peak_bytes,"
					    " record, typeof(tree_peak_bytes) FROM runs WHERE session_id = ?"
					    " ORDER BY ordinal",
					    -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_int64(q, 1, id);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(q, 0), 2);
	assert_string_equal((const char *)sqlite3_column_text(q, 1), "timed");
	assert_string_equal((const char *)sqlite3_column_text(q, 2), "2026-01-01T00:00:00.000001Z");
	assert_true(sqlite3_column_int64(q, 3) == 1234567890123LL);
	assert_int_equal(sqlite3_column_int64(q, 4), -5);
	assert_int_equal(sqlite3_column_int64(q, 5), 0);
	assert_int_equal(sqlite3_column_type(q, 6), SQLITE_INTEGER);
	assert_int_equal(sqlite3_column_type(q, 7), SQLITE_NULL);
	assert_int_equal(sqlite3_column_int(q, 8), 1);
	assert_true(sqlite3_column_int64(q, 9) == INT64_MAX);
	/* 4096.0 in an INTEGER column: SQLite keeps it as the integer 4096 */
	assert_string_equal((const char *)sqlite3_column_text(q, 12), "integer");
	assert_int_equal(sqlite3_column_int64(q, 10), 4096);
	assert_string_equal((const char *)sqlite3_column_text(q, 11), record1_text);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(q, 0), 3);
	assert_true(sqlite3_column_int64(q, 3) == 7);
	for (int c = 4; c <= 7; c++)
		assert_int_equal(sqlite3_column_type(q, c), SQLITE_NULL);
	assert_int_equal(sqlite3_column_int(q, 8), 0);
	assert_int_equal(sqlite3_column_type(q, 9), SQLITE_NULL);
	assert_int_equal(sqlite3_column_type(q, 10), SQLITE_NULL);
	assert_string_equal((const char *)sqlite3_column_text(q, 11), record2_text);
	assert_int_equal(sqlite3_step(q), SQLITE_DONE);
	sqlite3_finalize(q);
	sqlite3_close(db);
	json_decref(doc);
	bg_ctx_release(&ctx);
}

/* A run the schema refuses (no phase): nothing of the session is kept. */
static void test_one_transaction(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc = session_doc(), *runs = json_object_get(doc, "runs"), *rows;
	long long id = 0;
	size_t before;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open("sqlite:store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	before = json_array_size(rows);
	json_decref(rows);
	json_array_append_new(runs, load(record1_json));
	json_array_append_new(runs, load("{\"ordinal\": 3, \"started_at\": \"x\", \"wall_ns\": 1}"));
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "cannot store the session"));
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), before);
	json_decref(rows);
	/* the same with the bad run inside a batch of many */
	for (int k = 4; k <= 40; k++) {
		json_t *r = load(record2_json);

		json_object_set_new(r, "ordinal", json_integer(k));
		json_array_append_new(runs, r);
	}
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_EIO);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), before);
	json_decref(rows);
	/* the store still works after the failed transactions */
	json_array_remove(runs, 1);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	assert_int_equal(bg_store_list_sessions(st, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), before + 1);
	json_decref(rows);
	bg_store_close(st);
	json_decref(doc);
	bg_ctx_release(&ctx);
}

/* Many runs, as `measure -r 1000` stores them: every record back in order, the same. */
static void test_many_runs(void **state)
{
	struct bg_store *st = NULL;
	struct bg_ctx ctx;
	json_t *doc = session_doc(), *runs = json_object_get(doc, "runs"), *got;
	long long id = 0;

	(void)state;
	bg_ctx_init(&ctx);
	for (int k = 1; k <= 1002; k++) {
		json_t *r = load(k % 2 ? record1_json : record2_json);

		json_object_set_new(r, "ordinal", json_integer(k));
		json_object_set_new(r, "psi", k % 3 ? json_real(k / 7.0) : json_null());
		json_array_append_new(runs, r);
	}
	assert_int_equal(bg_store_open("sqlite:store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx), BG_OK);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	assert_int_equal(bg_store_get_session(st, id, &got, &ctx), BG_OK);
	json_object_set_new(doc, "id", json_integer(id));
	assert_true(json_equal(got, doc));
	json_decref(got);
	bg_store_close(st);
	json_decref(doc);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_text_and_columns),
		cmocka_unit_test(test_one_transaction),
		cmocka_unit_test(test_many_runs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
