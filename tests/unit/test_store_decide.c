/*
 * test_store_decide.c - the store's decision and curation side (migration 2):
 * bg_store_set_decision, bg_store_baseline (tiers, curation, status,
 * exclusion, limit, order), bg_store_curate (who, when, why; a blocked
 * session cannot be accepted; a diagnostic session has nothing to curate,
 * nor has a session whose document was damaged),
 * bg_store_history, bg_store_verdict, bg_store_last_of_gate and
 * bg_store_gate_sessions_after; the walks
 * bg_store_each_history and bg_store_each_session (a row at a time, a
 * callback's status stops them), bg_store_keys_with_prefix, and the
 * dashboard's walks bg_store_each_key and bg_store_each_of_key, read in
 * one snapshot (bg_store_read_begin, bg_store_read_end).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/store.h"

static char dir[256];
static struct bg_store *st;

static int setup(void **state)
{
	struct bg_ctx ctx;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/bg-test-store-decide-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	bg_ctx_init(&ctx);
	if (bg_store_open("sqlite:store.sqlite3", dir, BG_STORE_CREATE, &st, &ctx) || !st)
		return -1;
	bg_ctx_release(&ctx);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	bg_store_close(st);
	st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Stores a gate session (tier NULL: a diagnostic one) timed as timing says
 * (NULL: no "timing", that is process) and returns its id. */
static long long put_timed(const char *gate, const char *tier, const char *status, double p50, const char *timing)
{
	json_t *doc = json_pack("{s:i, s:s, s:s, s:s, s:[s], s:{s:i}, s:{s:{s:f,s:f,s:f}}, s:[]}",
				"schema_version", 1, "kind", tier ? "gate" : "diagnostic", "status",
				status, "started_at", "2026-11-30T10:00:00.000000Z", "command", "true",
				"counts", "timed", 3, "statistics", "wall_ns", "p50", p50, "p95",
				p50 * 1.1, "max", p50 * 1.2, "runs");
	struct bg_ctx ctx;
	long long id = 0;

	if (gate)
		json_object_set_new(doc, "gate_id", json_string(gate));
	if (tier)
		json_object_set_new(doc, "tier", json_string(tier));
	if (timing)
		json_object_set_new(doc, "timing", json_string(timing));
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_put_session(st, doc, &id, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	json_decref(doc);
	return id;
}

static long long put(const char *gate, const char *tier, const char *status, double p50)
{
	return put_timed(gate, tier, status, p50, NULL);
}

static void decide(long long id, const char *key_id, const char *decision, const char *curation)
{
	json_t *key = json_pack("{s:[], s:{}, s:s}", "fields", "values", "id", key_id);
	json_t *doc = json_pack("{s:s, s:[s], s:[], s:[]}", "decision", decision, "reasons", "because",
				"baseline", "metrics");
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_set_decision(st, id, key_id, key, doc, curation, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	json_decref(key);
	json_decref(doc);
}

static json_t *baseline(const char *key_id, long long exclude, long limit)
{
	struct bg_ctx ctx;
	json_t *out = NULL;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_baseline(st, key_id, NULL, exclude, limit, &out, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	assert_true(json_is_array(out));
	return out;
}

static long long id_at(const json_t *rows, size_t i)
{
	return (long long)json_integer_value(json_object_get(json_array_get(rows, i), "id"));
}

/*
 * bg_store_not_in_baseline says of every history row of key_id what
 * bg_store_baseline selects: NULL exactly for the rows it returns.
 */
static void rule_agrees(const char *key_id)
{
	struct bg_ctx ctx;
	json_t *rows = NULL, *base = baseline(key_id, 0, 0), *r, *b;
	size_t i, k;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_history(st, NULL, key_id, &rows, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	json_array_foreach(rows, i, r) {
		bool in = false;

		json_array_foreach(base, k, b)
			in = in || json_equal(json_object_get(b, "id"), json_object_get(r, "id"));
		assert_int_equal(bg_store_not_in_baseline(r) == NULL, in);
	}
	json_decref(rows);
	json_decref(base);
}

/* The reason bg_store_not_in_baseline gives for session id of key_id. */
static const char *why_not(const char *key_id, long long id)
{
	static char why[32];
	struct bg_ctx ctx;
	json_t *rows = NULL, *r;
	const char *w;
	size_t i;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_history(st, NULL, key_id, &rows, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	snprintf(why, sizeof(why), "(not found)");
	json_array_foreach(rows, i, r)
		if (json_integer_value(json_object_get(r, "id")) == id) {
			w = bg_store_not_in_baseline(r);
			snprintf(why, sizeof(why), "%s", w ? w : "(counts)");
		}
	json_decref(rows);
	return why;
}

static void test_schema_version(void **state)
{
	(void)state;
	assert_int_equal(bg_store_schema_version(st), 4);
}

/* The baseline of one timing: a session timed by the command ("timing":
 * "reported") is never compared with process wall times, nor the reverse,
 * even under one key (a contract's key need not hold the measure object). */
static void test_baseline_timing(void **state)
{
	long long proc, rep, rep2;
	struct bg_ctx ctx;
	json_t *rows = NULL;

	(void)state;
	proc = put("g", "scheduled-profile", "ok", 1e6);
	decide(proc, "K", "pass", "auto-accepted");
	rep = put_timed("g", "scheduled-profile", "ok", 1e3, "reported");
	decide(rep, "K", "pass", "auto-accepted");
	rep2 = put_timed("g", "scheduled-profile", "ok", 1e3, "reported");
	decide(rep2, "K", "pass", "auto-accepted");
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_baseline(st, "K", "reported", 0, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), rep2);
	assert_int_equal(id_at(rows, 1), rep);
	json_decref(rows);
	assert_int_equal(bg_store_baseline(st, "K", "process", 0, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(id_at(rows, 0), proc);
	json_decref(rows);
	assert_int_equal(bg_store_baseline(st, "K", NULL, 0, 0, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 3);
	json_decref(rows);
	bg_ctx_release(&ctx);
}

static void test_baseline_selection(void **state)
{
	long long sched, sign, smoke, diag, blocked, pending, rejected, other, accepted;
	json_t *rows;

	(void)state;
	sched = put("g", "scheduled-profile", "ok", 1e6);
	decide(sched, "K", "no-baseline", "auto-accepted");
	sign = put("g", "release-signoff", "ok", 1e6);
	decide(sign, "K", "pass", "auto-accepted");
	smoke = put("g", "pr-smoke", "ok", 1e6); /* never a baseline tier */
	decide(smoke, "K", "pass", "auto-accepted");
	diag = put("g", "diagnostic", "ok", 1e6);
	decide(diag, "K", "pass", "auto-accepted");
	blocked = put("g", "scheduled-profile", "blocked", 1e6); /* status blocked */
	decide(blocked, "K", "block", "rejected");
	pending = put("g", "scheduled-profile", "ok", 2e6); /* investigate, not accepted yet */
	decide(pending, "K", "investigate", "pending");
	rejected = put("g", "scheduled-profile", "ok", 2e6);
	decide(rejected, "K", "investigate", "pending");
	other = put("g", "scheduled-profile", "ok", 1e6); /* another key */
	decide(other, "OTHER", "pass", "auto-accepted");
	accepted = put("g", "release-signoff", "ok", 2e6);
	decide(accepted, "K", "investigate", "pending");
	(void)put("g", "scheduled-profile", "ok", 1e6); /* no decision at all */

	rows = baseline("K", 0, 0);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), sign); /* most recent first */
	assert_int_equal(id_at(rows, 1), sched);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "key_id")), "K");
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "decision")), "pass");
	json_decref(rows);
	rule_agrees("K");
	assert_string_equal(why_not("K", smoke), "tier");
	assert_string_equal(why_not("K", diag), "tier");
	assert_string_equal(why_not("K", blocked), "blocked");
	assert_string_equal(why_not("K", pending), "pending");
	assert_string_equal(why_not("K", sched), "(counts)");

	{
		struct bg_ctx ctx;

		bg_ctx_init(&ctx);
		assert_int_equal(bg_store_curate(st, accepted, "accepted", "known: new allocator", "ana", &ctx),
				 BG_OK);
		assert_int_equal(bg_store_curate(st, rejected, "rejected", "noisy neighbour", "ana", &ctx),
				 BG_OK);
		/* a pending investigate session never counts; a rejected one neither */
		bg_ctx_release(&ctx);
	}
	rows = baseline("K", 0, 0);
	assert_int_equal(json_array_size(rows), 3);
	assert_int_equal(id_at(rows, 0), accepted);
	assert_int_equal(id_at(rows, 1), sign);
	assert_int_equal(id_at(rows, 2), sched);
	json_decref(rows);
	rule_agrees("K");
	assert_string_equal(why_not("K", rejected), "rejected");
	assert_string_equal(why_not("K", accepted), "(counts)");

	/* exclusion and limit */
	rows = baseline("K", sign, 0);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), accepted);
	assert_int_equal(id_at(rows, 1), sched);
	json_decref(rows);
	rows = baseline("K", 0, 2);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), accepted);
	assert_int_equal(id_at(rows, 1), sign);
	json_decref(rows);
	rows = baseline("OTHER", 0, 0);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(id_at(rows, 0), other);
	json_decref(rows);
	rows = baseline("NONE", 0, 0);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);

	/* a person can reject an auto-accepted session: it leaves the baseline */
	{
		struct bg_ctx ctx;

		bg_ctx_init(&ctx);
		assert_int_equal(bg_store_curate(st, sign, "rejected", "wrong fixture", "bo", &ctx), BG_OK);
		bg_ctx_release(&ctx);
	}
	rows = baseline("K", 0, 0);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), accepted);
	assert_int_equal(id_at(rows, 1), sched);
	json_decref(rows);
	rule_agrees("K");
	assert_string_equal(why_not("K", sign), "rejected");
	(void)smoke;
	(void)diag;
	(void)pending;
	(void)blocked;
}

/*
 * A decision benchgate never makes with it (a store changed outside
 * benchgate: block curated accepted, a word no one decides) keeps a session
 * out of the baseline, as bg_store_not_in_baseline says: run compared new
 * sessions with them.
 */
static void test_baseline_decision_rule(void **state)
{
	long long blocked, weird, good;
	json_t *rows;

	(void)state;
	blocked = put("g", "scheduled-profile", "ok", 1e6);
	decide(blocked, "K", "block", "accepted");
	weird = put("g", "scheduled-profile", "ok", 1e6);
	decide(weird, "K", "weird", "auto-accepted");
	good = put("g", "scheduled-profile", "ok", 1e6);
	decide(good, "K", "pass", "auto-accepted");
	rows = baseline("K", 0, 0);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(id_at(rows, 0), good);
	json_decref(rows);
	rule_agrees("K");
	assert_string_equal(why_not("K", blocked), "blocked");
	assert_string_equal(why_not("K", weird), "unknown decision");
	assert_string_equal(why_not("K", good), "(counts)");
}

/*
 * A stored decision that its decision document does not hold (a document
 * with another decision, or none: a store changed outside benchgate) keeps
 * the session out of the baseline query, and bg_store_not_in_baseline says
 * so for the history's rows: the dashboard's Counts column showed "yes".
 */
static void test_baseline_document_disagrees(void **state)
{
	long long none, other, good;
	char cmd[512];
	json_t *rows;

	(void)state;
	if (system("command -v sqlite3 >/dev/null 2>&1") != 0)
		skip();
	none = put("g", "scheduled-profile", "ok", 1e6);
	decide(none, "KA", "pass", "auto-accepted");
	other = put("g", "scheduled-profile", "ok", 1e6);
	decide(other, "KA", "pass", "auto-accepted");
	good = put("g", "scheduled-profile", "ok", 1e6);
	decide(good, "KA", "pass", "auto-accepted");
	snprintf(cmd, sizeof(cmd),
		 "sqlite3 '%s/store.sqlite3' \"UPDATE sessions SET decision_doc = NULL WHERE id = %lld; "
		 "UPDATE sessions SET decision_doc = json_set(decision_doc, '$.decision', 'block') WHERE id = %lld\"",
		 dir, none, other);
	assert_int_equal(system(cmd), 0);
	rows = baseline("KA", 0, 0);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(id_at(rows, 0), good);
	json_decref(rows);
	rule_agrees("KA");
	assert_string_equal(why_not("KA", none), "decision document disagrees");
	assert_string_equal(why_not("KA", other), "decision document disagrees");
	assert_string_equal(why_not("KA", good), "(counts)");
}

static void test_curation_rules(void **state)
{
	struct bg_ctx ctx;
	long long blocked, diag, inv;
	json_t *v, *log;

	(void)state;
	blocked = put("h", "release-signoff", "blocked", 1e6);
	decide(blocked, "K2", "block", "rejected");
	diag = put(NULL, NULL, "ok", 1e6);
	inv = put("h", "release-signoff", "ok", 1e6);
	decide(inv, "K2", "investigate", "pending");

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_curate(st, blocked, "accepted", "looks fine", "ana", &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "blocked and cannot be accepted"));
	assert_int_equal(bg_store_curate(st, diag, "accepted", "x", "ana", &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "has no decision"));
	assert_int_equal(bg_store_curate(st, 9999, "accepted", "x", "ana", &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "no session with id 9999"));
	assert_int_equal(bg_store_curate(st, inv, "accepted", "", "ana", &ctx), BG_EUSAGE);
	assert_int_equal(bg_store_curate(st, inv, "accepted", "two\nlines", "ana", &ctx), BG_EUSAGE);
	assert_int_equal(bg_store_curate(st, inv, "maybe", "x", "ana", &ctx), BG_ECHECK);
	/* rejecting a blocked session is allowed (it already never counts) */
	assert_int_equal(bg_store_curate(st, blocked, "rejected", "confirmed parity bug", "ana", &ctx), BG_OK);
	assert_int_equal(bg_store_curate(st, inv, "accepted", "expected: faster kernel", "bo", &ctx), BG_OK);

	assert_int_equal(bg_store_verdict(st, inv, &v, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(v, "curation")), "accepted");
	assert_string_equal(json_string_value(json_object_get(v, "curated_by")), "bo");
	assert_string_equal(json_string_value(json_object_get(v, "curation_why")), "expected: faster kernel");
	assert_non_null(json_string_value(json_object_get(v, "curated_at")));
	assert_string_equal(json_string_value(json_object_get(v, "decision")), "investigate");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "decision_document"), "decision")),
			    "investigate");
	assert_string_equal(json_string_value(json_object_get(json_object_get(v, "key"), "id")), "K2");
	log = json_object_get(v, "curations");
	assert_int_equal(json_array_size(log), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "curation")), "pending");
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "who")), "benchgate");
	assert_string_equal(json_string_value(json_object_get(json_array_get(log, 1), "curation")), "accepted");
	json_decref(v);

	/* a diagnostic session has a verdict with null decision */
	assert_int_equal(bg_store_verdict(st, diag, &v, &ctx), BG_OK);
	assert_true(json_is_null(json_object_get(v, "decision")));
	assert_true(json_is_null(json_object_get(v, "decision_document")));
	assert_int_equal(json_array_size(json_object_get(v, "curations")), 0);
	json_decref(v);
	assert_int_equal(bg_store_verdict(st, 9999, &v, &ctx), BG_ECHECK);

	/* set_decision on an unknown session */
	{
		json_t *key = json_pack("{s:[]}", "fields"), *doc = json_pack("{s:s}", "decision", "pass");
		assert_int_equal(bg_store_set_decision(st, 9999, "K", key, doc, "auto-accepted", &ctx), BG_ECHECK);
		json_decref(key);
		json_decref(doc);
	}
	bg_ctx_release(&ctx);
}

/*
 * A session whose document was damaged outside benchgate (not JSON, or
 * JSON that is not an object) is never curated: bg_store_curate and
 * bg_store_verdict refuse it with BG_EIO naming it, and nothing is written.
 * Needs the sqlite3 program to damage it.
 */
static void test_curate_damaged_document(void **state)
{
	static const char *const damage[] = {"{bad", "[1,2]"};
	struct bg_ctx ctx;
	json_t *v;

	(void)state;
	if (system("command -v sqlite3 >/dev/null 2>&1") != 0)
		skip();
	bg_ctx_init(&ctx);
	for (size_t i = 0; i < 2; i++) {
		long long id = put("gate.d", "scheduled-profile", "ok", 1e6);
		char cmd[512], want[160];

		decide(id, "KD", "investigate", "pending");
		snprintf(cmd, sizeof(cmd), "sqlite3 '%s/store.sqlite3' \"UPDATE sessions SET document = '%s' WHERE id = %lld\"",
			 dir, damage[i], id);
		assert_int_equal(system(cmd), 0);
		snprintf(want, sizeof(want), "session %lld: the stored document is %s; the store is corrupted: restore it "
			 "from a backup", id, i ? "not a JSON object" : "not valid JSON");
		assert_int_equal(bg_store_curate(st, id, "accepted", "looks fine", "ana", &ctx), BG_EIO);
		assert_non_null(strstr(bg_ctx_message(&ctx), want));
		assert_int_equal(bg_store_curate(st, id, "rejected", "looks off", "ana", &ctx), BG_EIO);
		assert_int_equal(bg_store_verdict(st, id, &v, &ctx), BG_EIO);
		assert_non_null(strstr(bg_ctx_message(&ctx), want));
		assert_null(v);
		/* nothing written: still pending, and the log holds the automatic curation alone */
		snprintf(cmd, sizeof(cmd), "test \"$(sqlite3 '%s/store.sqlite3' \"SELECT s.curation || count(c.seq) FROM "
			 "sessions s LEFT JOIN curations c ON c.session_id = s.id WHERE s.id = %lld\")\" = pending1",
			 dir, id);
		assert_int_equal(system(cmd), 0);
	}
	bg_ctx_release(&ctx);
}

/* Counts the rows walked; stops the walk with BG_ECHECK at the row whose id is stop. */
struct walk {
	long long stop;
	size_t n;
	long long last;
};

static int walk_row(const json_t *row, void *data, struct bg_ctx *ctx)
{
	struct walk *w = data;

	w->n++;
	w->last = (long long)json_integer_value(json_object_get(row, "id"));
	if (w->last == w->stop)
		return bg_error(ctx, BG_ECHECK, "stopped at %lld", w->last);
	return BG_OK;
}

static void test_history_and_last(void **state)
{
	struct bg_ctx ctx;
	json_t *rows;
	long long a, b, c, id = 0;
	struct walk w = {0, 0, 0};

	(void)state;
	a = put("gate.x", "scheduled-profile", "ok", 1e6);
	decide(a, "KX", "no-baseline", "auto-accepted");
	b = put("gate.y", "scheduled-profile", "ok", 1e6);
	decide(b, "KX", "no-baseline", "auto-accepted");
	c = put("gate.x", "diagnostic", "ok", 1e6);

	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_history(st, "gate.x", NULL, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), a); /* oldest first */
	assert_int_equal(id_at(rows, 1), c);
	assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "decision")));
	json_decref(rows);
	assert_int_equal(bg_store_history(st, NULL, "KX", &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(id_at(rows, 0), a);
	assert_int_equal(id_at(rows, 1), b);
	json_decref(rows);
	assert_int_equal(bg_store_history(st, NULL, NULL, &rows, &ctx), BG_OK);
	assert_true(json_array_size(rows) >= 2); /* every keyed session */
	json_decref(rows);
	assert_int_equal(bg_store_history(st, "nope", NULL, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);

	/* the same, a row at a time; the callback's status stops the walk */
	assert_int_equal(bg_store_each_history(st, "gate.x", NULL, walk_row, &w, &ctx), BG_OK);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.last, c);
	w = (struct walk){b, 0, 0};
	assert_int_equal(bg_store_each_history(st, NULL, "KX", walk_row, &w, &ctx), BG_ECHECK);
	assert_int_equal(w.n, 2);
	assert_non_null(strstr(bg_ctx_message(&ctx), "stopped at "));
	/* the last N of a gate, of a key, of every keyed session: oldest first */
	{
		json_t *last = json_array();

		assert_int_equal(bg_store_each_history_last(st, "gate.x", NULL, 1, bg_store_append_row, last, &ctx),
				 BG_OK);
		assert_int_equal(json_array_size(last), 1);
		assert_int_equal(id_at(last, 0), c);
		json_array_clear(last);
		assert_int_equal(bg_store_each_history_last(st, NULL, "KX", 5, bg_store_append_row, last, &ctx),
				 BG_OK);
		assert_int_equal(json_array_size(last), 2); /* more than there are: all of them */
		assert_int_equal(id_at(last, 0), a);
		assert_int_equal(id_at(last, 1), b);
		json_array_clear(last);
		assert_int_equal(bg_store_each_history_last(st, NULL, NULL, 1, bg_store_append_row, last, &ctx),
				 BG_OK);
		assert_int_equal(json_array_size(last), 1);
		assert_int_equal(id_at(last, 0), b); /* the newest keyed one (c has no key) */
		json_array_clear(last);
		assert_int_equal(bg_store_each_history_last(st, "gate.x", NULL, 0, bg_store_append_row, last, &ctx),
				 BG_OK);
		assert_int_equal(json_array_size(last), 2); /* 0: every one */
		json_decref(last);
	}
	w = (struct walk){0, 0, 0};
	assert_int_equal(bg_store_each_session(st, 2, walk_row, &w, &ctx), BG_OK);
	assert_int_equal(w.n, 2); /* the last two, oldest first */
	assert_int_equal(w.last, c);
	w = (struct walk){a, 0, 0};
	assert_int_equal(bg_store_each_session(st, 0, walk_row, &w, &ctx), BG_ECHECK);
	assert_int_equal(w.n, 1);

	assert_int_equal(bg_store_last_of_gate(st, "gate.x", &id, &ctx), BG_OK);
	assert_int_equal(id, c);
	assert_int_equal(bg_store_last_of_gate(st, "nope", &id, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "gate 'nope' has no stored session"));

	/* the sessions of a gate after one of them, oldest first, at most max */
	{
		long long ids[3] = {0, 0, 0}, d = put("gate.x", "diagnostic", "ok", 1e6);
		size_t n = 9;

		assert_int_equal(bg_store_gate_sessions_after(st, "gate.x", a, ids, 3, &n, &ctx), BG_OK);
		assert_int_equal(n, 2);
		assert_int_equal(ids[0], c);
		assert_int_equal(ids[1], d);
		assert_int_equal(bg_store_gate_sessions_after(st, "gate.x", 0, ids, 1, &n, &ctx), BG_OK);
		assert_int_equal(n, 1);
		assert_int_equal(ids[0], a);
		assert_int_equal(bg_store_gate_sessions_after(st, "gate.x", d, ids, 3, &n, &ctx), BG_OK);
		assert_int_equal(n, 0);
		assert_int_equal(bg_store_gate_sessions_after(st, "nope", 0, ids, 3, &n, &ctx), BG_OK);
		assert_int_equal(n, 0);
	}
	bg_ctx_release(&ctx);
}

/*
 * A history row carries its decision's notes ("conditions" of the decision
 * document): the array as stored, null for a decision without them, for
 * one whose conditions are not an array, and for a session without a
 * decision; the same through bg_store_each_of_key.
 */
static void test_history_notes(void **state)
{
	struct bg_ctx ctx;
	json_t *rows = NULL, *key = json_pack("{s:[], s:{}, s:s}", "fields", "values", "id", "KN"), *doc;
	long long a, b, c, d;

	(void)state;
	bg_ctx_init(&ctx);
	a = put("gate.n", "scheduled-profile", "ok", 1e6);
	doc = json_pack("{s:s, s:[], s:[], s:[], s:[s, s]}", "decision", "pass", "reasons", "baseline", "metrics",
			"conditions", "power_source battery here, ac in 5 of the 5 baseline sessions that record it",
			"cpus_allowed 1 here, 2 in 5 of the 5 baseline sessions that record it");
	assert_int_equal(bg_store_set_decision(st, a, "KN", key, doc, "auto-accepted", &ctx), BG_OK);
	json_decref(doc);
	b = put("gate.n", "scheduled-profile", "ok", 1e6);
	decide(b, "KN", "pass", "auto-accepted"); /* a decision stored without notes */
	c = put("gate.n", "scheduled-profile", "ok", 1e6);
	doc = json_pack("{s:s, s:[], s:[], s:[], s:s}", "decision", "pass", "reasons", "baseline", "metrics",
			"conditions", "not a list");
	assert_int_equal(bg_store_set_decision(st, c, "KN", key, doc, "auto-accepted", &ctx), BG_OK);
	json_decref(doc);
	d = put("gate.n", "diagnostic", "ok", 1e6);

	assert_int_equal(bg_store_history(st, "gate.n", NULL, &rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 4);
	assert_int_equal(id_at(rows, 0), a);
	assert_int_equal(json_array_size(json_object_get(json_array_get(rows, 0), "conditions")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_array_get(rows, 0), "conditions"), 1)),
			    "cpus_allowed 1 here, 2 in 5 of the 5 baseline sessions that record it");
	for (size_t i = 1; i < 4; i++) {
		json_t *n = json_object_get(json_array_get(rows, i), "conditions");
		assert_true(n && json_is_null(n)); /* present, and null */
	}
	assert_int_equal(id_at(rows, 3), d);
	json_decref(rows);

	rows = json_array();
	assert_int_equal(bg_store_each_of_key(st, b, bg_store_append_row, rows, &ctx), BG_OK);
	assert_int_equal(json_array_size(rows), 3);
	assert_int_equal(json_array_size(json_object_get(json_array_get(rows, 0), "conditions")), 2);
	assert_true(json_is_null(json_object_get(json_array_get(rows, 2), "conditions")));
	json_decref(rows);
	json_decref(key);
	bg_ctx_release(&ctx);
}

/* The key ids that begin with a prefix: each once, in the order of their first session, at most two. */
static void test_keys_with_prefix(void **state)
{
	static const struct {
		const char *prefix, *first, *second;
	} cases[] = {
		{"ab", "abd1", "abc0"}, /* abd1 has the older session */
		{"abc", "abc0", "abc1"},
		{"abd", "abd1", NULL},
		{"abd1", "abd1", NULL},
		{"abd10", NULL, NULL},
		{"ac", NULL, NULL},
		{"a", "abd1", "abc0"},
		{"9", "9f", NULL}, /* ':' after '9' bounds the range */
		{"f", "ff", NULL}, /* 'g' after 'f' */
	};
	const char *keys[] = {"abd1", "abc0", "abd1", "abc1", "9f", "ff", "abc0", "b"};
	struct bg_ctx ctx;
	json_t *out = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		decide(put("gate.k", "scheduled-profile", "ok", 1e6), keys[i], "no-baseline", "auto-accepted");
	put("gate.k", "diagnostic", "ok", 1e6); /* no key */
	bg_ctx_init(&ctx);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(bg_store_keys_with_prefix(st, cases[i].prefix, &out, &ctx), BG_OK);
		assert_int_equal(json_array_size(out), !cases[i].first ? 0 : !cases[i].second ? 1 : 2);
		if (cases[i].first)
			assert_string_equal(json_string_value(json_array_get(out, 0)), cases[i].first);
		if (cases[i].second)
			assert_string_equal(json_string_value(json_array_get(out, 1)), cases[i].second);
		json_decref(out);
	}
	assert_int_equal(bg_store_keys_with_prefix(st, "", &out, &ctx), BG_ECHECK);
	assert_null(out);
	bg_ctx_release(&ctx);
}

/* Every key once, latest session newest first, with its first session and
 * count; the sessions of one key found from any of its sessions. */
static void test_each_key(void **state)
{
	const char *keys[] = {"k1", "k2", "k3", NULL, "k1", "k2"};
	long long ids[6];
	struct bg_ctx ctx;
	json_t *out = json_array(), *r;

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		ids[i] = put("gate.k", keys[i] ? "scheduled-profile" : NULL, "ok", 1e6);
		if (keys[i])
			decide(ids[i], keys[i], "no-baseline", "auto-accepted");
	}
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_each_key(st, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 3);
	{
		static const struct {
			const char *key;
			int first, latest, sessions;
		} want[] = {{"k2", 1, 5, 2}, {"k1", 0, 4, 2}, {"k3", 2, 2, 1}};
		for (size_t i = 0; i < 3; i++) {
			r = json_array_get(out, i);
			assert_string_equal(json_string_value(json_object_get(r, "key_id")), want[i].key);
			assert_int_equal(json_integer_value(json_object_get(r, "id")), ids[want[i].first]);
			assert_int_equal(json_integer_value(json_object_get(r, "latest")), ids[want[i].latest]);
			assert_int_equal(json_integer_value(json_object_get(r, "sessions")), want[i].sessions);
		}
	}
	json_decref(out);
	out = json_array();
	assert_int_equal(bg_store_each_of_key(st, ids[4], bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(out, 0), "id")), ids[0]);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(out, 1), "id")), ids[4]);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 1), "key_id")), "k1");
	json_array_clear(out);
	/* a session without a key, and no session at all: nothing */
	assert_int_equal(bg_store_each_of_key(st, ids[3], bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(bg_store_each_of_key(st, 999, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 0);
	json_decref(out);
	bg_ctx_release(&ctx);
}

/* Between bg_store_read_begin and bg_store_read_end every read sees the
 * store as the first one did: the owner's writes meanwhile are not seen. */
static void test_read_snapshot(void **state)
{
	struct bg_store *r = NULL;
	struct bg_ctx ctx;
	json_t *out = json_array();
	long long a, b, c;

	(void)state;
	a = put("gate.s", "scheduled-profile", "ok", 1e6);
	decide(a, "s1", "no-baseline", "auto-accepted");
	bg_ctx_init(&ctx);
	assert_int_equal(bg_store_open("sqlite:store.sqlite3", dir, BG_STORE_READ, &r, &ctx), BG_OK);
	assert_non_null(r);
	assert_int_equal(bg_store_read_begin(r, &ctx), BG_OK);
	assert_int_equal(bg_store_each_key(r, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 1);
	/* the owner stores a session of the key and one of a new key meanwhile */
	b = put("gate.s", "scheduled-profile", "ok", 1e6);
	decide(b, "s1", "no-baseline", "auto-accepted");
	c = put("gate.s", "scheduled-profile", "ok", 1e6);
	decide(c, "s2", "no-baseline", "auto-accepted");
	json_array_clear(out);
	assert_int_equal(bg_store_each_of_key(r, a, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 1);
	json_array_clear(out);
	assert_int_equal(bg_store_each_key(r, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 1);
	bg_store_read_end(r);
	/* after it, the store as it is */
	json_array_clear(out);
	assert_int_equal(bg_store_each_of_key(r, a, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 2);
	json_array_clear(out);
	assert_int_equal(bg_store_each_key(r, bg_store_append_row, out, &ctx), BG_OK);
	assert_int_equal(json_array_size(out), 2);
	bg_store_read_end(r); /* none open: nothing */
	bg_store_close(r);
	json_decref(out);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_timing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_decision_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_baseline_document_disagrees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_curation_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_curate_damaged_document, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_and_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_notes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keys_with_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_each_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_snapshot, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
