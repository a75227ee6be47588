/*
 * sqlite.c - the SQLite store (Debian libsqlite3): WAL journal, a versioned
 * schema upgraded by the migrations below (table schema_migrations), one
 * IMMEDIATE transaction per session. The whole session document is kept as
 * JSON text beside the columns that later work filters on; later columns
 * come as new migrations appended to the list, never by editing old ones.
 */
#include "store/store_impl.h"
#include "benchgate/fsutil.h"
#include "benchgate/strbuf.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sqlite_store {
	struct bg_store base;
	sqlite3 *db;
	char *display;
	int version;
};

/* Migration N+1 is migrations[N]; applied in order, each in its own transaction. */
static const char *const migrations[] = {
	/* 1: sessions and runs */
	"CREATE TABLE sessions ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" started_at TEXT NOT NULL, finished_at TEXT,"
	" kind TEXT NOT NULL, status TEXT NOT NULL, reason TEXT,"
	" command TEXT NOT NULL," /* JSON array */
	" timed_runs INTEGER NOT NULL,"
	" wall_min_ns REAL, wall_p50_ns REAL, wall_p95_ns REAL, wall_max_ns REAL, wall_mad_ns REAL,"
	" cpu_p50_ns REAL, max_rss_bytes REAL, tree_peak_bytes REAL, gpu_peak_bytes REAL,"
	" memory_source TEXT, parity_kind TEXT, parity TEXT, cache_state TEXT,"
	" git_revision TEXT, git_dirty INTEGER, diff_sha256 TEXT, benchgate_version TEXT,"
	" experiment_id TEXT, gate_id TEXT, tier TEXT, computer TEXT,"
	" document TEXT NOT NULL);" /* the session document without its runs */
	"CREATE TABLE runs ("
	" session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	" ordinal INTEGER NOT NULL, phase TEXT NOT NULL, started_at TEXT NOT NULL,"
	" wall_ns INTEGER NOT NULL, user_ns INTEGER, sys_ns INTEGER,"
	" exit_status INTEGER, signal INTEGER, timed_out INTEGER NOT NULL,"
	" max_rss_bytes INTEGER, tree_peak_bytes INTEGER,"
	" record TEXT NOT NULL," /* the JSON Lines record */
	" PRIMARY KEY (session_id, ordinal));"
	"CREATE INDEX sessions_started ON sessions(started_at);"
	"CREATE INDEX sessions_gate ON sessions(gate_id, tier);",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static int db_error(struct sqlite_store *s, struct bg_ctx *ctx, const char *what)
{
	return bg_error(ctx, BG_EIO, "%s: %s: %s; check that the store is writable and not "
			"corrupted", s->display, what, sqlite3_errmsg(s->db));
}

static int exec(struct sqlite_store *s, const char *sql, const char *what, struct bg_ctx *ctx)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, ctx, what);
	return BG_OK;
}

static int current_version(struct sqlite_store *s, int *version, struct bg_ctx *ctx)
{
	sqlite3_stmt *st;
	int rc;

	*version = 0;
	rc = sqlite3_prepare_v2(s->db,
				"SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema");
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return BG_OK;
	if (rc != SQLITE_ROW)
		return db_error(s, ctx, "cannot read the schema");
	if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", -1,
			       &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema version");
	if (sqlite3_step(st) == SQLITE_ROW)
		*version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return BG_OK;
}

static int migrate(struct sqlite_store *s, struct bg_ctx *ctx)
{
	int rc = current_version(s, &s->version, ctx);

	if (rc)
		return rc;
	if (s->version > NMIGRATIONS)
		return bg_error(ctx, BG_EIO, "%s: store schema version %d is newer than this benchgate "
				"knows (%d); upgrade benchgate", s->display, s->version, NMIGRATIONS);
	while (s->version < NMIGRATIONS) {
		struct bg_strbuf sql = BG_STRBUF_INIT;

		rc = exec(s, "BEGIN IMMEDIATE", "cannot start the schema upgrade", ctx);
		if (rc)
			return rc;
		/* another writer may have migrated meanwhile */
		rc = current_version(s, &s->version, ctx);
		if (rc || s->version >= NMIGRATIONS) {
			sqlite3_exec(s->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
			return rc;
		}
		bg_strbuf_addf(&sql,
			       "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
			       " applied_at TEXT NOT NULL);%s"
			       "INSERT INTO schema_migrations VALUES (%d, strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now'));",
			       migrations[s->version], s->version + 1);
		rc = exec(s, sql.buf, "cannot upgrade the schema", ctx);
		bg_strbuf_release(&sql);
		if (rc) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		rc = exec(s, "COMMIT", "cannot commit the schema upgrade", ctx);
		if (rc)
			return rc;
		s->version++;
	}
	return BG_OK;
}

static void bind_text(sqlite3_stmt *st, int i, const json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(st, i, json_string_value(v), -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_num(sqlite3_stmt *st, int i, const json_t *v)
{
	if (json_is_integer(v))
		sqlite3_bind_int64(st, i, json_integer_value(v));
	else if (json_is_real(v))
		sqlite3_bind_double(st, i, json_real_value(v));
	else if (json_is_boolean(v))
		sqlite3_bind_int(st, i, json_is_true(v));
	else
		sqlite3_bind_null(st, i);
}

/*
 * Compact JSON text of v (what json_dumps(v, JSON_COMPACT) writes; reals as
 * %.17g, which reads back exactly), faster than jansson's callback-based
 * dump: a session of 1000 runs writes 1000 records.
 */
static void dump_string(struct bg_strbuf *out, const char *s, size_t n)
{
	size_t start = 0;

	bg_strbuf_addch(out, '"');
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		bg_strbuf_addn(out, s + start, k - start);
		start = k + 1;
		switch (c) {
		case '"':
			bg_strbuf_adds(out, "\\\"");
			break;
		case '\\':
			bg_strbuf_adds(out, "\\\\");
			break;
		case '\n':
			bg_strbuf_adds(out, "\\n");
			break;
		case '\t':
			bg_strbuf_adds(out, "\\t");
			break;
		case '\r':
			bg_strbuf_adds(out, "\\r");
			break;
		default:
			bg_strbuf_addf(out, "\\u%04x", c);
			break;
		}
	}
	bg_strbuf_addn(out, s + start, n - start);
	bg_strbuf_addch(out, '"');
}

static void dump_compact(struct bg_strbuf *out, const json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;
	bool first = true;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		bg_strbuf_addch(out, '{');
		json_object_foreach((json_t *)v, key, item) {
			if (!first)
				bg_strbuf_addch(out, ',');
			first = false;
			dump_string(out, key, strlen(key));
			bg_strbuf_addch(out, ':');
			dump_compact(out, item);
		}
		bg_strbuf_addch(out, '}');
		break;
	case JSON_ARRAY:
		bg_strbuf_addch(out, '[');
		json_array_foreach(v, i, item) {
			if (i)
				bg_strbuf_addch(out, ',');
			dump_compact(out, item);
		}
		bg_strbuf_addch(out, ']');
		break;
	case JSON_STRING:
		dump_string(out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		bg_strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL: {
		size_t at = out->len;

		bg_strbuf_addf(out, "%.17g", json_real_value(v));
		if (!strpbrk(out->buf + at, ".eEni"))
			bg_strbuf_adds(out, ".0");
		break;
	}
	case JSON_TRUE:
		bg_strbuf_adds(out, "true");
		break;
	case JSON_FALSE:
		bg_strbuf_adds(out, "false");
		break;
	default:
		bg_strbuf_adds(out, "null");
		break;
	}
}

static void bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t len;
	char *text;

	dump_compact(&sb, v);
	text = bg_strbuf_detach(&sb, &len);
	sqlite3_bind_text(st, i, text, (int)len, free);
}

static const json_t *path_get(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b ? json_object_get(v, b) : v;
}

static int put_session(struct bg_store *base, const json_t *doc, long long *id,
		       struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	const json_t *stats = json_object_get(doc, "statistics"), *prov = json_object_get(doc, "provenance");
	const json_t *runs = json_object_get(doc, "runs"), *r;
	json_t *copy;
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc;

	rc = exec(s, "BEGIN IMMEDIATE", "cannot start the session transaction", ctx);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO sessions (started_at, finished_at, kind, status, reason, command,"
			       " timed_runs, wall_min_ns, wall_p50_ns, wall_p95_ns, wall_max_ns, wall_mad_ns,"
			       " cpu_p50_ns, max_rss_bytes, tree_peak_bytes, gpu_peak_bytes, memory_source,"
			       " parity_kind, parity, cache_state, git_revision, git_dirty, diff_sha256,"
			       " benchgate_version, experiment_id, gate_id, tier, computer, document)"
			       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	bind_text(st, 1, json_object_get(doc, "started_at"));
	bind_text(st, 2, json_object_get(doc, "finished_at"));
	bind_text(st, 3, json_object_get(doc, "kind"));
	bind_text(st, 4, json_object_get(doc, "status"));
	bind_text(st, 5, json_object_get(doc, "reason"));
	bind_json(st, 6, json_object_get(doc, "command"));
	bind_num(st, 7, path_get(doc, "counts", "timed"));
	bind_num(st, 8, path_get(stats, "wall_ns", "min"));
	bind_num(st, 9, path_get(stats, "wall_ns", "p50"));
	bind_num(st, 10, path_get(stats, "wall_ns", "p95"));
	bind_num(st, 11, path_get(stats, "wall_ns", "max"));
	bind_num(st, 12, path_get(stats, "wall_ns", "mad"));
	bind_num(st, 13, path_get(stats, "cpu_ns", "p50"));
	bind_num(st, 14, path_get(stats, "max_rss_bytes", "max"));
	bind_num(st, 15, path_get(stats, "tree_peak_bytes", "max"));
	bind_num(st, 16, path_get(stats, "gpu_process_peak_bytes", "max"));
	bind_text(st, 17, json_object_get(doc, "memory_source"));
	bind_text(st, 18, path_get(doc, "parity", "kind"));
	bind_text(st, 19, path_get(doc, "parity", "result"));
	bind_text(st, 20, path_get(doc, "cache", "state"));
	bind_text(st, 21, path_get(prov, "git", "revision"));
	bind_num(st, 22, path_get(prov, "git", "dirty"));
	bind_text(st, 23, path_get(prov, "git", "diff_sha256"));
	bind_text(st, 24, json_object_get(prov, "benchgate_version"));
	bind_text(st, 25, json_object_get(doc, "experiment_id"));
	bind_text(st, 26, json_object_get(doc, "gate_id"));
	bind_text(st, 27, json_object_get(doc, "tier"));
	bind_text(st, 28, json_object_get(doc, "computer"));
	copy = json_copy((json_t *)doc);
	json_object_del(copy, "runs");
	json_object_del(copy, "id");
	bind_json(st, 29, copy);
	json_decref(copy);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	*id = sqlite3_last_insert_rowid(s->db);
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO runs (session_id, ordinal, phase, started_at, wall_ns, user_ns,"
			       " sys_ns, exit_status, signal, timed_out, max_rss_bytes, tree_peak_bytes, record)"
			       " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	json_array_foreach(runs, i, r) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, *id);
		bind_num(st, 2, json_object_get(r, "ordinal"));
		bind_text(st, 3, json_object_get(r, "phase"));
		bind_text(st, 4, json_object_get(r, "started_at"));
		bind_num(st, 5, json_object_get(r, "wall_ns"));
		bind_num(st, 6, json_object_get(r, "user_ns"));
		bind_num(st, 7, json_object_get(r, "sys_ns"));
		bind_num(st, 8, json_object_get(r, "exit_status"));
		bind_num(st, 9, json_object_get(r, "signal"));
		sqlite3_bind_int(st, 10, json_is_true(json_object_get(r, "timed_out")));
		bind_num(st, 11, json_object_get(r, "max_rss_bytes"));
		bind_num(st, 12, json_object_get(r, "tree_peak_bytes"));
		bind_json(st, 13, r);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return BG_OK;
fail:
	rc = db_error(s, ctx, "cannot store the session");
	sqlite3_finalize(st);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static json_t *column_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_TEXT:
		return json_string((const char *)sqlite3_column_text(st, i));
	default:
		return json_null();
	}
}

static int list_sessions(struct bg_store *base, long last, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	json_t *arr = json_array();
	int rc;

	*out = NULL;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT * FROM (SELECT id, started_at, status, reason, command, timed_runs,"
			       " wall_min_ns, wall_p50_ns, wall_p95_ns, wall_max_ns, wall_mad_ns, cpu_p50_ns,"
			       " max_rss_bytes, tree_peak_bytes, gpu_peak_bytes, parity, cache_state,"
			       " git_revision, git_dirty, experiment_id, gate_id, tier, computer"
			       " FROM sessions ORDER BY id DESC LIMIT ?) ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK) {
		json_decref(arr);
		return db_error(s, ctx, "cannot list sessions");
	}
	sqlite3_bind_int64(st, 1, last > 0 ? last : -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *row = json_object();
		int n = sqlite3_column_count(st);

		for (int c = 0; c < n; c++) {
			const char *name = sqlite3_column_name(st, c);
			json_t *v = column_json(st, c);

			if (strcmp(name, "command") == 0 && json_is_string(v)) {
				json_t *cmd = json_loads(json_string_value(v), 0, NULL);

				json_decref(v);
				v = cmd ? cmd : json_null();
			} else if (strcmp(name, "git_dirty") == 0 && json_is_integer(v)) {
				json_t *b = json_boolean(json_integer_value(v) != 0);

				json_decref(v);
				v = b;
			}
			json_object_set_new(row, name, v);
		}
		json_array_append_new(arr, row);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return db_error(s, ctx, "cannot list sessions");
	}
	*out = arr;
	return BG_OK;
}

static int get_session(struct bg_store *base, long long id, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	json_t *doc = NULL, *runs;
	int rc;

	*out = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT document FROM sessions WHERE id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_error(s, ctx, "cannot read the session");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		doc = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return bg_error(ctx, BG_ECHECK, "%s: no session with id %lld; see 'benchgate sessions'",
				s->display, id);
	if (!doc)
		return db_error(s, ctx, "cannot read the session");
	json_object_set_new(doc, "id", json_integer(id));
	runs = json_array();
	if (sqlite3_prepare_v2(s->db, "SELECT record FROM runs WHERE session_id = ? ORDER BY ordinal",
			       -1, &st, NULL) != SQLITE_OK) {
		json_decref(doc);
		json_decref(runs);
		return db_error(s, ctx, "cannot read the runs");
	}
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *r = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);

		json_array_append_new(runs, r ? r : json_null());
	}
	sqlite3_finalize(st);
	json_object_set_new(doc, "runs", runs);
	if (rc != SQLITE_DONE) {
		json_decref(doc);
		return db_error(s, ctx, "cannot read the runs");
	}
	*out = doc;
	return BG_OK;
}

static int schema_version(struct bg_store *base)
{
	return ((struct sqlite_store *)base)->version;
}

static void close_store(struct bg_store *base)
{
	struct sqlite_store *s = (struct sqlite_store *)base;

	sqlite3_close(s->db);
	free(s->display);
	free(s);
}

static const struct bg_store_ops sqlite_ops = {
	put_session, list_sessions, get_session, schema_version, close_store,
};

int bg_store_sqlite_open(const char *path, const char *display, bool create,
			 struct bg_store **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s;
	int rc;

	*out = NULL;
	if (!bg_is_file(path)) {
		char *dir, *slash;

		if (!create)
			return BG_OK;
		dir = bg_xstrdup(path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			rc = bg_mkdirs(dir, ctx);
			if (rc) {
				free(dir);
				return rc;
			}
		}
		free(dir);
	}
	s = bg_xcalloc(1, sizeof(*s));
	s->base.ops = &sqlite_ops;
	s->display = bg_xstrdup(display ? display : path);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		rc = db_error(s, ctx, "cannot open the store");
		close_store(&s->base);
		return rc;
	}
	sqlite3_busy_timeout(s->db, 10000);
	rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;",
		  "cannot configure the store", ctx);
	if (rc == BG_OK)
		rc = migrate(s, ctx);
	if (rc) {
		close_store(&s->base);
		return rc;
	}
	*out = &s->base;
	return BG_OK;
}
