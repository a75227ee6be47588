/*
 * sqlite.c - the SQLite store (Debian libsqlite3): WAL journal, a versioned
 * schema upgraded by the migrations below (table schema_migrations), one
 * IMMEDIATE transaction per session. The whole session document is kept as
 * JSON text beside the columns that later work filters on; later columns
 * come as new migrations appended to the list, never by editing old ones.
 * A reader that may not write the store opens it read-only, making nothing
 * beside it (open_read_only); a writer that may not is refused before
 * SQLite opens anything. A new store is made whole in a temporary file and
 * then named (create_store), so an empty store file is refused, never
 * taken for a new store.
 */
#include "store/store_impl.h"
#include "store/sqlite_api.h"
#include "store/json_compact.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/measure.h"
#include "benchgate/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sqlite_store {
	struct bg_store base;
	sqlite3 *db;
	char *display;
	int version;
	bool read_only; /* opened read-only: a store this user may not write */
	bool immutable; /* read as the file was when opened (open_read_only, no -wal) */
	char *path;     /* the file, for changed_under */
	struct stat opened; /* the file when it was opened immutable */
	char *wpath;        /* a store opened to write: its file, and its identity then */
	dev_t wdev;
	ino_t wino;
};

/*
 * BG_EIO when the file of a store opened to write is no longer the one
 * opened (removed, or replaced by another): SQLite, holding it open in
 * WAL mode, would store a session into the removed file and say nothing,
 * and the next session would take the same id in a new store.
 */
static int replaced_under(const struct sqlite_store *s, struct bg_ctx *ctx)
{
	struct stat now;

	if (!s->wpath || (stat(s->wpath, &now) == 0 && now.st_dev == s->wdev && now.st_ino == s->wino))
		return BG_OK;
	return bg_error(ctx, BG_EIO, "%s: the store was removed or replaced after it was opened; the session is "
			"not stored in it: put the store back (or keep the new one) and run again", s->display);
}

/*
 * A store read immutable is read as the file was when it was opened,
 * without SQLite's locks: a session its owner stores meanwhile (the
 * checkpoint that moves it into the file) changes pages under the reader,
 * which could then read a mix of the two, or fail as if the store were
 * corrupted. BG_EIO saying so when the file is no longer the one opened,
 * as it was; BG_OK otherwise, and always for a store read through locks.
 */
static int changed_under(struct sqlite_store *s, struct bg_ctx *ctx)
{
	struct stat now;

	if (!s->immutable ||
	    (stat(s->path, &now) == 0 && now.st_dev == s->opened.st_dev && now.st_ino == s->opened.st_ino &&
	     now.st_size == s->opened.st_size && now.st_mtim.tv_sec == s->opened.st_mtim.tv_sec &&
	     now.st_mtim.tv_nsec == s->opened.st_mtim.tv_nsec && now.st_ctim.tv_sec == s->opened.st_ctim.tv_sec &&
	     now.st_ctim.tv_nsec == s->opened.st_ctim.tv_nsec))
		return BG_OK;
	return bg_error(ctx, BG_EIO, "%s: the store changed while it was read (its owner stored a session "
			"meanwhile), and a user who may not write its folder reads it without locks; nothing read "
			"is shown: run the command again", s->display);
}

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
	/* 2: comparison keys, decisions and curation (decide.h, docs/decisions.md) */
	"ALTER TABLE sessions ADD COLUMN key_id TEXT;"
	"ALTER TABLE sessions ADD COLUMN key TEXT;"            /* the key document */
	"ALTER TABLE sessions ADD COLUMN decision TEXT;"       /* pass investigate block no-baseline */
	"ALTER TABLE sessions ADD COLUMN decision_doc TEXT;"   /* what bg_decide returned */
	"ALTER TABLE sessions ADD COLUMN curation TEXT;"       /* auto-accepted pending accepted rejected */
	"ALTER TABLE sessions ADD COLUMN curated_by TEXT;"
	"ALTER TABLE sessions ADD COLUMN curated_at TEXT;"
	"ALTER TABLE sessions ADD COLUMN curation_why TEXT;"
	"CREATE TABLE curations ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
	" curation TEXT NOT NULL, why TEXT, who TEXT, at TEXT NOT NULL);"
	"CREATE INDEX curations_session ON curations(session_id, seq);"
	"CREATE INDEX sessions_key ON sessions(key_id, id);",
	/* 3: indexes only (docs/decisions.md), so that a store's size does not
	 * slow what reads a window of it: the latest session of a gate (MAX(id)
	 * from sessions_gate, ordered by tier first, read every entry of the
	 * gate), and a key's baseline, the sessions of the rule of baseline()
	 * below (its WHERE terms exactly, so that SQLite uses it), newest first */
	"CREATE INDEX sessions_gate_id ON sessions(gate_id, id);"
	"CREATE INDEX sessions_baseline ON sessions(key_id, id) WHERE curation IN ('accepted', 'auto-accepted')"
	" AND tier IN ('scheduled-profile', 'release-signoff') AND status = 'ok';",
	/* 4: a decision's notes (its document's "conditions": where the machine
	 * ran otherwise than the baseline) in a table of their own, a row only
	 * for a decision that has any, so that a history of many sessions reads
	 * them at the cost of an index probe instead of every decision document;
	 * those already stored are copied in */
	"CREATE TABLE decision_notes ("
	" session_id INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,"
	" conditions TEXT NOT NULL);" /* a JSON array of lines */
	"INSERT INTO decision_notes (session_id, conditions)"
	" SELECT id, json_extract(decision_doc, '$.conditions') FROM sessions"
	" WHERE CASE WHEN json_valid(decision_doc) AND json_type(decision_doc, '$.conditions') = 'array'"
	" THEN json_array_length(decision_doc, '$.conditions') > 0 ELSE 0 END;",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
/*
 * The schema a reader needs: the migrations after it add indexes, and the
 * table decision_notes, which a reader of an older store does without
 * (HISTORY), so a store at this version that the user may not write (and
 * so cannot upgrade) is still read, without them.
 */
#define READER_VERSION 2
#define NOTES_VERSION 4 /* the first with decision_notes */

/* The errno of the system call behind a failure to open or do I/O
 * (primary result code), or 0: SQLite's words alone do not say it. */
static int system_errno(struct sqlite_store *s, int code)
{
	if (!s->db || (code != SQLITE_IOERR && code != SQLITE_CANTOPEN))
		return 0;
	return bg_sym_sqlite3_system_errno(s->db);
}

/*
 * A SQLite failure: what failed, SQLite's words, and what to do: a file
 * that is no database, or a damaged one, is not fixed by permissions.
 */
static int db_error(struct sqlite_store *s, struct bg_ctx *ctx, const char *what)
{
	int code = s->db ? bg_sym_sqlite3_errcode(s->db) & 0xff : SQLITE_CANTOPEN;
	int e = code == SQLITE_FULL ? ENOSPC : system_errno(s, code);

	if (changed_under(s, ctx)) /* the error is the owner's write, not damage */
		return BG_EIO;
	if (code == SQLITE_NOTADB)
		return bg_error(ctx, BG_EIO, "%s: %s: %s (another program's file, or a store whose first bytes were "
				"overwritten): restore the store from a backup, or name another file in 'store' of "
				"benchgate.json",
				s->display, what, bg_sym_sqlite3_errmsg(s->db));
	if (code == SQLITE_BUSY)
		return bg_error(ctx, BG_EIO, "%s: %s: %s: another process has held it for writing for 10 s (a "
				"benchgate storing a session, or one stopped with Ctrl-Z while it wrote); try again "
				"once it is done", s->display, what, bg_sym_sqlite3_errmsg(s->db));
	if (code == SQLITE_CORRUPT)
		return bg_error(ctx, BG_EIO, "%s: %s: %s; the store is corrupted (truncated or changed outside "
				"benchgate): restore it from a backup", s->display, what, bg_sym_sqlite3_errmsg(s->db));
	/* a file system without room: SQLite's own "database or disk is full",
	 * or an I/O error whose system call failed for want of space or quota
	 * (the -shm file growing, say) */
	if (e == ENOSPC || e == EDQUOT)
		return bg_error(ctx, BG_EIO, "%s: %s: %s (%s): the file system that holds the store is full; free "
				"some space there and run it again", s->display, what, bg_sym_sqlite3_errmsg(s->db),
				strerror(e));
	if (bg_open_files_advice(e))
		return bg_error(ctx, BG_EIO, "%s: %s: %s (%s): %s", s->display, what, bg_sym_sqlite3_errmsg(s->db),
				strerror(e), bg_open_files_advice(e));
	return bg_error(ctx, BG_EIO, "%s: %s: %s; check that the store is %s and not "
			"corrupted", s->display, what, bg_sym_sqlite3_errmsg(s->db),
			s->read_only ? "readable" : "writable");
}

static int exec(struct sqlite_store *s, const char *sql, const char *what, struct bg_ctx *ctx)
{
	if (bg_sym_sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, ctx, what);
	return BG_OK;
}

static int current_version(struct sqlite_store *s, int *version, struct bg_ctx *ctx)
{
	sqlite3_stmt *st;
	int rc;

	*version = 0;
	rc = bg_sym_sqlite3_prepare_v2(s->db,
				    "SELECT name FROM sqlite_master WHERE type='table' AND name='schema_migrations'",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema");
	rc = bg_sym_sqlite3_step(st);
	bg_sym_sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return BG_OK;
	if (rc != SQLITE_ROW)
		return db_error(s, ctx, "cannot read the schema");
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", -1,
				   &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema version");
	if (bg_sym_sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 v = bg_sym_sqlite3_column_int64(st, 0);
		*version = v > INT_MAX ? INT_MAX : v < 0 ? 0 : (int)v;
	}
	bg_sym_sqlite3_finalize(st);
	return BG_OK;
}

/*
 * The columns of table, as ",NAME,NAME,...," into cols (empty when there
 * is no such table).
 */
static int table_columns(struct sqlite_store *s, const char *table, struct bg_strbuf *cols, struct bg_ctx *ctx)
{
	sqlite3_stmt *st;
	char sql[96];
	int rc;

	bg_strbuf_reset(cols);
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (bg_sym_sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema");
	while ((rc = bg_sym_sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *name = bg_sym_sqlite3_column_text(st, 1);
		bg_strbuf_addf(cols, "%s%s,", cols->len ? "" : ",", name ? (const char *)name : "");
	}
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_error(s, ctx, "cannot read the schema");
	return BG_OK;
}

/* Whether the database has a table of that name. */
static bool table_exists(struct sqlite_store *s, const char *name)
{
	sqlite3_stmt *st;
	bool found = false;

	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1, &st,
				   NULL) != SQLITE_OK)
		return false;
	bg_sym_sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = bg_sym_sqlite3_step(st) == SQLITE_ROW;
	bg_sym_sqlite3_finalize(st);
	return found;
}

/*
 * Whether the schema_migrations table there is benchgate's: its columns
 * (version, applied_at), and, once migration 1 is applied, the sessions
 * and runs tables with the columns benchgate reads and every table a
 * migration applied made (*version: its version, 0 when not ours). Other
 * programs keep a table of that name too (golang-migrate, Rails, Ecto),
 * never with those columns: where they are benchgate's, one of its tables
 * is, and another is missing or lacks its columns, *lacking names that one
 * (a damaged store).
 */
static int schema_is_ours(struct sqlite_store *s, bool *ours, int *version, const char **lacking,
			  struct bg_ctx *ctx)
{
	static const char *const need[][2] = {
		{"sessions", ",id,started_at,"}, {"sessions", ",kind,status,"}, {"sessions", ",command,timed_runs,"},
		{"sessions", ",document,"}, {"runs", ",session_id,ordinal,phase,"}, {"runs", ",record,"},
	};
	/* the tables each migration made: (from version, name) */
	static const struct {
		int version;
		const char *table;
	} made[] = {{2, "curations"}, {4, "decision_notes"}};
	struct bg_strbuf cols = BG_STRBUF_INIT;
	bool whole = false, table_ok = true; /* a table of benchgate's with every column it reads */
	int rc;

	*ours = false;
	*version = 0;
	*lacking = NULL;
	if ((rc = table_columns(s, "schema_migrations", &cols, ctx)))
		goto out;
	if (strcmp(cols.buf ? cols.buf : "", ",version,applied_at,") != 0)
		goto out;
	if ((rc = current_version(s, version, ctx)))
		goto out;
	*ours = true;
	/* every column benchgate reads, table by table: one table whole is
	 * enough to call the file benchgate's (damaged) rather than another
	 * program's that keeps a schema_migrations of the same shape */
	for (size_t i = 0; *version >= 1 && i < sizeof(need) / sizeof(need[0]); i++) {
		if (i == 0 || strcmp(need[i][0], need[i - 1][0]) != 0) {
			whole = whole || (i > 0 && table_ok); /* the table before */
			table_ok = true;
			if ((rc = table_columns(s, need[i][0], &cols, ctx)))
				goto out;
		}
		if (!cols.buf || !strstr(cols.buf, need[i][1])) {
			table_ok = *ours = false;
			if (!*lacking)
				*lacking = need[i][0];
		}
	}
	whole = whole || (*version >= 1 && table_ok);
	/* the tables later migrations made, in a store this benchgate knows
	 * (a newer one may have dropped them: schema_known says so) */
	for (size_t i = 0; *ours && *version <= NMIGRATIONS && i < sizeof(made) / sizeof(made[0]); i++)
		if (*version >= made[i].version && !table_exists(s, made[i].table)) {
			*ours = false;
			*lacking = made[i].table;
		}
	if (!*ours && (!whole || *version > NMIGRATIONS))
		*lacking = NULL; /* no table of benchgate's whole, or a schema this
				  * benchgate does not know: not called damaged */
out:
	bg_strbuf_release(&cols);
	return rc;
}

/*
 * A database with tables of its own but no schema_migrations, or with a
 * schema_migrations that is not benchgate's (schema_is_ours), is some other
 * program's; benchgate's own with a table missing is a damaged store, said
 * so by the table's name: both refused before anything (WAL mode,
 * benchgate's tables) is written into them.
 */
static int refuse_foreign(struct sqlite_store *s, struct bg_ctx *ctx)
{
	sqlite3_stmt *st;
	int rc, version, tables = 0;
	const char *lacking;
	bool ours;

	if (table_exists(s, "schema_migrations")) {
		if ((rc = schema_is_ours(s, &ours, &version, &lacking, ctx)))
			return rc;
		if (!ours && lacking)
			return bg_error(ctx, BG_EIO, "%s: a damaged benchgate store: its table '%s' is missing or "
					"lacks the columns benchgate reads (schema version %d); restore the file from a "
					"backup, or name another file in 'store' of benchgate.json",
					s->display, lacking, version);
		if (!ours)
			return bg_error(ctx, BG_EIO, "%s: not a benchgate store (a table 'schema_migrations' of "
					"another program's, such as a migration tool's, and not benchgate's tables); "
					"name another file in 'store' of benchgate.json",
					s->display);
		if (version > 0)
			return BG_OK;
	}
	/* (SQLite's own tables are named sqlite_...; LIKE's '_' is a wildcard) */
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the schema");
	if (bg_sym_sqlite3_step(st) == SQLITE_ROW)
		tables = bg_sym_sqlite3_column_int(st, 0);
	bg_sym_sqlite3_finalize(st);
	if (tables > 0)
		return bg_error(ctx, BG_EIO, "%s: not a benchgate store (it holds %d table%s or index%s of another "
				"program's, and no benchgate schema); name another file in 'store' of benchgate.json",
				s->display, tables, tables == 1 ? "" : "s", tables == 1 ? "" : "es");
	return BG_OK;
}

/* A store written by a newer benchgate is never read or written with the old schema. */
static int schema_known(struct sqlite_store *s, struct bg_ctx *ctx)
{
	if (s->version > NMIGRATIONS)
		return bg_error(ctx, BG_EIO, "%s: store schema version %d is newer than this benchgate "
				"knows (%d); upgrade benchgate", s->display, s->version, NMIGRATIONS);
	return BG_OK;
}

static int migrate(struct sqlite_store *s, struct bg_ctx *ctx)
{
	int rc = current_version(s, &s->version, ctx);

	if (rc)
		return rc;
	if ((rc = schema_known(s, ctx)))
		return rc;
	while (s->version < NMIGRATIONS) {
		struct bg_strbuf sql = BG_STRBUF_INIT;

		rc = exec(s, "BEGIN IMMEDIATE", "cannot start the schema upgrade", ctx);
		if (rc)
			return rc;
		/* another writer may have migrated meanwhile */
		rc = current_version(s, &s->version, ctx);
		if (rc || s->version >= NMIGRATIONS) {
			bg_sym_sqlite3_exec(s->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
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
			bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
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
		bg_sym_sqlite3_bind_text(st, i, json_string_value(v), -1, SQLITE_TRANSIENT);
	else
		bg_sym_sqlite3_bind_null(st, i);
}

static void bind_num(sqlite3_stmt *st, int i, const json_t *v)
{
	if (json_is_integer(v))
		bg_sym_sqlite3_bind_int64(st, i, json_integer_value(v));
	else if (json_is_real(v))
		bg_sym_sqlite3_bind_double(st, i, json_real_value(v));
	else if (json_is_boolean(v))
		bg_sym_sqlite3_bind_int(st, i, json_is_true(v));
	else
		bg_sym_sqlite3_bind_null(st, i);
}

static void bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t len;
	char *text;

	bg_store_json_compact(&sb, v);
	text = bg_strbuf_detach(&sb, &len);
	bg_sym_sqlite3_bind_text(st, i, text, (int)len, free);
}

/* The columns of table runs that copy a member of the run record, kept by one pass over it. */
enum { RUN_NUM, RUN_TEXT, RUN_TRUE };
static const struct {
	const char *name;
	size_t len;
	int column, kind;
} run_columns[] = {
	{ "ordinal", 7, 2, RUN_NUM },	       { "phase", 5, 3, RUN_TEXT },
	{ "started_at", 10, 4, RUN_TEXT },     { "wall_ns", 7, 5, RUN_NUM },
	{ "user_ns", 7, 6, RUN_NUM },	       { "sys_ns", 6, 7, RUN_NUM },
	{ "exit_status", 11, 8, RUN_NUM },     { "signal", 6, 9, RUN_NUM },
	{ "timed_out", 9, 10, RUN_TRUE },      { "max_rss_bytes", 13, 11, RUN_NUM },
	{ "tree_peak_bytes", 15, 12, RUN_NUM },
};
#define NRUN_COLUMNS (sizeof(run_columns) / sizeof(run_columns[0]))

/*
 * Appends the compact JSON text of run record r to out and binds the
 * parameters base+2 .. base+12 of the runs INSERT st (columns ordinal ..
 * tree_peak_bytes of one row; st's bindings cleared before) from its
 * members: a member that is missing, or a record that is not an object,
 * leaves NULL, timed_out 0 unless it is true. The values bound stay owned by r.
 */
static void dump_run(struct bg_strbuf *out, sqlite3_stmt *st, int base, const json_t *r)
{
	const char *key;
	size_t key_len;
	json_t *item;
	bool first = true;

	bg_sym_sqlite3_bind_int(st, base + 10, 0);
	if (!json_is_object(r)) {
		bg_store_json_compact(out, r);
		return;
	}
	bg_store_put_byte(out, '{');
	json_object_keylen_foreach((json_t *)r, key, key_len, item) {
		for (size_t c = 0; c < NRUN_COLUMNS; c++) {
			int column = base + run_columns[c].column;

			if (run_columns[c].len != key_len || memcmp(run_columns[c].name, key, key_len) != 0)
				continue;
			if (run_columns[c].kind == RUN_NUM)
				bind_num(st, column, item);
			else if (run_columns[c].kind == RUN_TRUE)
				bg_sym_sqlite3_bind_int(st, column, json_is_true(item));
			else if (json_is_string(item))
				bg_sym_sqlite3_bind_text(st, column, json_string_value(item), -1, SQLITE_STATIC);
			break;
		}
		if (!first)
			bg_store_put_byte(out, ',');
		first = false;
		bg_store_json_string(out, key, strlen(key)); /* as bg_store_json_object: up to a NUL */
		bg_store_put_byte(out, ':');
		bg_store_json_compact(out, item);
	}
	bg_store_put_byte(out, '}');
}

static const json_t *path_get(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b ? json_object_get(v, b) : v;
}

/*
 * Runs go in RUN_BATCH rows per INSERT: one statement per row costs as much
 * again in opening and closing its cursors as the row itself.
 */
#define RUN_BATCH 16
#define RUN_COLUMNS 13

/* Prepares the INSERT of rows runs (RUN_COLUMNS parameters each) into *st. */
static int prepare_runs_insert(struct sqlite_store *s, int rows, sqlite3_stmt **st)
{
	struct bg_strbuf sql = BG_STRBUF_INIT;
	int rc;

	bg_strbuf_adds(&sql, "INSERT INTO runs (session_id, ordinal, phase, started_at, wall_ns, user_ns,"
		       " sys_ns, exit_status, signal, timed_out, max_rss_bytes, tree_peak_bytes, record)"
		       " VALUES ");
	for (int k = 0; k < rows; k++)
		bg_strbuf_adds(&sql, k ? ",(?,?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?,?)");
	rc = bg_sym_sqlite3_prepare_v2(s->db, sql.buf, (int)sql.len, st, NULL);
	bg_strbuf_release(&sql);
	return rc == SQLITE_OK ? 0 : -1;
}

static int write_decision(struct sqlite_store *s, long long id, const char *key_id, const json_t *key,
			  const json_t *decision, const char *curation);
static bool decision_complete(const char *key_id, const json_t *key, const json_t *decision, const char *curation);

/* A gate session's key, decision and curation, stored with it. */
struct decided {
	const char *key_id;
	const json_t *key, *decision;
	const char *curation;
};

/* The session and its runs (and dec, when not NULL) in one transaction. */
static int insert_session(struct sqlite_store *s, const json_t *doc, const struct decided *dec, long long *id,
			  struct bg_ctx *ctx)
{
	const json_t *stats = json_object_get(doc, "statistics"), *prov = json_object_get(doc, "provenance");
	const json_t *runs = json_object_get(doc, "runs"), *timing = bg_measure_timing_stats(doc);
	struct bg_strbuf text = BG_STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	size_t i, nruns, rows = 0, starts[RUN_BATCH];
	int rc;

	if ((rc = replaced_under(s, ctx)))
		return rc;
	rc = exec(s, "BEGIN IMMEDIATE", "cannot start the session transaction", ctx);
	if (rc)
		return rc;
	if (bg_sym_sqlite3_prepare_v2(s->db,
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
	/* the timing its decisions use: the reported samples of a "reported" session */
	bind_num(st, 8, json_object_get(timing, "min"));
	bind_num(st, 9, json_object_get(timing, "p50"));
	bind_num(st, 10, json_object_get(timing, "p95"));
	bind_num(st, 11, json_object_get(timing, "max"));
	bind_num(st, 12, json_object_get(timing, "mad"));
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
	/* the document without its runs and id (they have their own places) */
	bg_store_json_object(&text, doc, "runs", "id");
	bg_sym_sqlite3_bind_text(st, 29, text.buf, (int)text.len, SQLITE_STATIC);
	if (bg_sym_sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	bg_sym_sqlite3_finalize(st);
	st = NULL;
	*id = bg_sym_sqlite3_last_insert_rowid(s->db);
	/* full batches of RUN_BATCH rows, then the rest one row per statement */
	nruns = json_array_size(runs);
	for (i = 0; i < nruns; i += rows) {
		if (!st || (nruns - i < RUN_BATCH && rows == RUN_BATCH)) {
			rows = nruns - i < RUN_BATCH ? 1 : RUN_BATCH;
			bg_sym_sqlite3_finalize(st);
			st = NULL;
			if (prepare_runs_insert(s, (int)rows, &st))
				goto fail;
		}
		bg_sym_sqlite3_reset(st);
		bg_sym_sqlite3_clear_bindings(st);
		/* the texts of the batch, one after another in one buffer that SQLite copies
		 * while stepping; bound once the buffer no longer moves */
		bg_strbuf_reset(&text);
		for (size_t k = 0; k < rows; k++) {
			bg_sym_sqlite3_bind_int64(st, (int)k * RUN_COLUMNS + 1, *id);
			starts[k] = text.len;
			dump_run(&text, st, (int)k * RUN_COLUMNS, json_array_get(runs, i + k));
		}
		for (size_t k = 0; k < rows; k++) {
			size_t end = k + 1 < rows ? starts[k + 1] : text.len;

			bg_sym_sqlite3_bind_text(st, (int)k * RUN_COLUMNS + 13, text.buf + starts[k],
					      (int)(end - starts[k]), SQLITE_STATIC);
		}
		if (bg_sym_sqlite3_step(st) != SQLITE_DONE)
			goto fail;
	}
	bg_sym_sqlite3_finalize(st);
	st = NULL;
	bg_strbuf_release(&text);
	if (dec && write_decision(s, *id, dec->key_id, dec->key, dec->decision, dec->curation) != 0)
		goto fail;
	if (bg_sym_sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return BG_OK;
fail:
	rc = db_error(s, ctx, "cannot store the session");
	bg_sym_sqlite3_finalize(st);
	bg_strbuf_release(&text);
	bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int put_session(struct bg_store *base, const json_t *doc, long long *id, struct bg_ctx *ctx)
{
	return insert_session((struct sqlite_store *)base, doc, NULL, id, ctx);
}

static int put_decided_session(struct bg_store *base, const json_t *doc, const char *key_id, const json_t *key,
			       const json_t *decision, const char *curation, long long *id, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	struct decided dec = {key_id, key, decision, curation};

	if (!decision_complete(key_id, key, decision, curation))
		return bg_error(ctx, BG_ECHECK, "%s: a decision needs a key id, a key, a decision document "
				"with 'decision', and a curation", s->display);
	return insert_session(s, doc, &dec, id, ctx);
}

/*
 * One column as JSON. Text that is not UTF-8 (a store changed outside
 * benchgate) keeps its other bytes as \xNN (bg_json_text), so that every
 * reader shows what is there rather than lose the member.
 */
static json_t *column_json(sqlite3_stmt *st, int i)
{
	switch (bg_sym_sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(bg_sym_sqlite3_column_int64(st, i));
	case SQLITE_FLOAT: /* an infinity (a store changed outside benchgate) is no figure: null, never a member lost */
		return isfinite(bg_sym_sqlite3_column_double(st, i)) ? json_real(bg_sym_sqlite3_column_double(st, i))
								      : json_null();
	case SQLITE_TEXT:
		return bg_json_text((const char *)bg_sym_sqlite3_column_text(st, i));
	default:
		return json_null();
	}
}

/*
 * How the session was timed, from its document; null for a document that
 * is valid JSON but no object (damaged outside benchgate), which row_object
 * then refuses naming the session, as a document that does not parse fails
 * the query: a listing never shows a damaged session as a whole one.
 * benchgate writes a document starting with '{', so json_type parses it a
 * second time only where that is not so.
 */
#define TIMING_COLUMN                                                                       \
	"CASE WHEN document LIKE '{%' THEN coalesce(json_extract(document, '$.timing'), 'process')" \
	" WHEN json_type(document) = 'object' THEN coalesce(json_extract(document, '$.timing'), 'process')" \
	" END AS timing"
/* row_object's *bad for a document that is no JSON object */
static const char not_an_object[] = "document (not an object)";
/* The summary columns of bg_store_list_sessions, in order. */
#define SUMMARY_COLUMNS                                                                      \
	"id, started_at, finished_at, kind, status, reason, command, timed_runs, wall_min_ns,"  \
	" wall_p50_ns, wall_p95_ns, wall_max_ns, wall_mad_ns, cpu_p50_ns, max_rss_bytes,"      \
	" tree_peak_bytes, gpu_peak_bytes, memory_source, parity_kind, parity, cache_state,"   \
	" git_revision, git_dirty, diff_sha256, benchgate_version, experiment_id, gate_id,"     \
	" tier, computer, " TIMING_COLUMN
/* ... and those a decision adds (migration 2); bg_store_not_in_baseline
 * (store.c) states the rule of baseline() below for one row. */
#define VERDICT_COLUMNS SUMMARY_COLUMNS ", key_id, decision, curation, curated_by, curated_at, curation_why"
/* Whether the stored decision is its document's, as the baseline query
 * requires (a store changed outside benchgate may hold another, or no
 * document): row_object writes "decision_document_agrees": false where it
 * is not, and bg_store_not_in_baseline reads it */
#define DECISION_AGREES                                                                         \
	"(CASE WHEN json_valid(decision_doc) THEN json_extract(decision_doc, '$.decision') END"  \
	" IS decision) AS decision_agrees"
/* ... and, for the history of a gate or a key, the decision's notes: from
 * decision_notes (migration 4), or, in a store older than that which this
 * user may not upgrade, from the decision document's text (notes_from_doc) */
#define HISTORY_COLUMNS                                                                        \
	VERDICT_COLUMNS ", CASE WHEN decision IS NOT NULL THEN"                                 \
			" (SELECT conditions FROM decision_notes WHERE session_id = sessions.id) END" \
			" AS conditions, " DECISION_AGREES
#define HISTORY_COLUMNS_OLD VERDICT_COLUMNS ", decision_doc AS notes_source, " DECISION_AGREES
#define HISTORY(s) ((s)->version >= NOTES_VERSION ? HISTORY_COLUMNS : HISTORY_COLUMNS_OLD)

/*
 * A stored JSON text that does not parse, or not to what it must be: the
 * store was damaged outside benchgate. Names the session and the column.
 */
static int corrupt(struct sqlite_store *s, long long id, const char *what, const json_error_t *err,
		   struct bg_ctx *ctx)
{
	if (err && err->line == -1) /* valid JSON of the wrong kind (row_object) */
		return bg_error(ctx, BG_EIO, "%s: session %lld: the stored %s is not %s; the store is corrupted:"
				" restore it from a backup", s->display, id, what, err->text);
	if (err)
		return bg_error(ctx, BG_EIO, "%s: session %lld: the stored %s is not valid JSON (%d:%d: %s);"
				" the store is corrupted: restore it from a backup", s->display, id, what,
				err->line, err->column, bg_json_error_text(err));
	return bg_error(ctx, BG_EIO, "%s: session %lld: the stored %s is not a JSON object; the store is"
			" corrupted: restore it from a backup", s->display, id, what);
}

/* A session whose stored document does not parse (valid false), or not to an object. */
static int damaged_document(struct sqlite_store *s, long long id, const char *what, bool valid, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EIO, "%s: %s: session %lld: the stored document is %s; the store is corrupted:"
			" restore it from a backup", s->display, what, id, valid ? "not a JSON object" : "not valid JSON");
}

/*
 * BG_OK when session id's stored document is a JSON object (or there is no
 * such session: the caller's query says so), else BG_EIO naming the
 * session (damaged_document, after what): a verb that reads only some of
 * its members (the verdict, a curation) still never takes a damaged
 * session for a whole one.
 */
static int check_document(struct sqlite_store *s, long long id, const char *what, struct bg_ctx *ctx)
{
	sqlite3_stmt *st;
	int rc, kind = 0;

	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT CASE WHEN NOT json_valid(document) THEN 0 WHEN"
				   " json_type(document) = 'object' THEN 2 ELSE 1 END FROM sessions WHERE id = ?",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, what);
	bg_sym_sqlite3_bind_int64(st, 1, id);
	rc = bg_sym_sqlite3_step(st);
	if (rc == SQLITE_ROW)
		kind = bg_sym_sqlite3_column_int(st, 0);
	bg_sym_sqlite3_finalize(st);
	if (rc == SQLITE_DONE || (rc == SQLITE_ROW && kind == 2))
		return changed_under(s, ctx);
	if (rc != SQLITE_ROW)
		return db_error(s, ctx, what);
	return damaged_document(s, id, what, kind == 1, ctx);
}

/*
 * A query over the sessions failed: when SQLite's JSON functions met a
 * document that does not parse, the message names that session.
 */
static int query_error(struct sqlite_store *s, struct bg_ctx *ctx, const char *what)
{
	sqlite3_stmt *st;
	long long id = 0;

	bool valid = false;

	if (strstr(bg_sym_sqlite3_errmsg(s->db), "JSON") &&
	    bg_sym_sqlite3_prepare_v2(s->db, "SELECT id, json_valid(document) FROM sessions WHERE CASE WHEN NOT"
				   " json_valid(document) THEN 1 ELSE json_type(document) <> 'object' END"
				   " ORDER BY id LIMIT 1",
				   -1, &st, NULL) == SQLITE_OK) {
		if (bg_sym_sqlite3_step(st) == SQLITE_ROW) {
			id = bg_sym_sqlite3_column_int64(st, 0);
			valid = bg_sym_sqlite3_column_int(st, 1) != 0;
		}
		bg_sym_sqlite3_finalize(st);
		if (id)
			return damaged_document(s, id, what, valid, ctx);
	}
	return db_error(s, ctx, what);
}

/*
 * A decision's notes from its document's text (a store older than
 * decision_notes): its "conditions", or null where it has none, an empty
 * list, or the text is not a JSON object (a damaged document is reported
 * by what reads the decision, not by a listing). The text is searched
 * before it is parsed: benchgate writes it compact and has no other member
 * of that name, and outside a string (where every '"' is escaped)
 * "conditions":[ is that member, "conditions":[] an empty one.
 */
static json_t *notes_from_doc(const char *doc)
{
	json_t *parsed, *notes;

	if (!doc || !strstr(doc, "\"conditions\":[") || strstr(doc, "\"conditions\":[]"))
		return json_null();
	parsed = json_loads(doc, 0, NULL);
	notes = json_object_get(parsed, "conditions");
	notes = json_is_array(notes) ? json_incref(notes) : json_null();
	json_decref(parsed);
	return notes;
}

/* Whether column name is want: its first byte first, since a row asks
 * this of every column. */
static inline bool named(const char *name, const char *want)
{
	return name[0] == want[0] && strcmp(name, want) == 0;
}

/*
 * One result row as an object: JSON text columns (command, key,
 * decision_document) parsed, git_dirty a boolean, conditions (a decision's
 * notes) parsed, or null where they do not parse to an array (a listing
 * shows what it can), notes_source (a decision document's text) replaced by
 * "conditions" (notes_from_doc). NULL when a JSON column
 * does not parse, with *bad naming it and *err saying why; NULL with *bad
 * left NULL when jansson could not allocate the row.
 */
static json_t *row_object(sqlite3_stmt *st, const char **bad, json_error_t *err)
{
	json_t *row = json_object();
	int n = bg_sym_sqlite3_column_count(st);

	if (!row)
		return NULL; /* out of memory: *bad stays NULL */
	for (int c = 0; c < n; c++) {
		const char *name = bg_sym_sqlite3_column_name(st, c);
		json_t *v;

		if (named(name, "notes_source")) {
			json_object_set_new(row, "conditions",
					    notes_from_doc(bg_sym_sqlite3_column_type(st, c) == SQLITE_TEXT
								   ? (const char *)bg_sym_sqlite3_column_text(st, c)
								   : NULL));
			continue;
		}
		if (named(name, "decision_agrees")) {
			if (bg_sym_sqlite3_column_int64(st, c) == 0 &&
			    json_object_set_new(row, "decision_document_agrees", json_false())) {
				json_decref(row);
				return NULL; /* out of memory: *bad stays NULL */
			}
			continue;
		}
		if (named(name, "timing") && bg_sym_sqlite3_column_type(st, c) == SQLITE_NULL) {
			*bad = not_an_object; /* (TIMING_COLUMN) */
			json_decref(row);
			return NULL;
		}
		v = column_json(st, c);
		if (named(name, "conditions") && json_is_string(v)) {
			json_t *parsed = json_loads(json_string_value(v), 0, NULL);

			json_decref(v);
			v = json_is_array(parsed) ? parsed : json_null();
			if (v != parsed)
				json_decref(parsed);
		} else if ((named(name, "command") || named(name, "key") ||
		     named(name, "decision_document")) && json_is_string(v)) {
			json_t *parsed = json_loads(json_string_value(v), JSON_DECODE_ANY, err);

			json_decref(v);
			/* benchgate stores a command as an array and a key as an object */
			if (parsed && ((named(name, "command") && !json_is_array(parsed)) ||
				       (named(name, "key") && !json_is_object(parsed) && !json_is_null(parsed)))) {
				err->line = -1; /* (corrupt: the wrong kind of JSON) */
				snprintf(err->text, sizeof(err->text), "%s", named(name, "command") ? "an array" : "an object");
				json_decref(parsed);
				parsed = NULL;
			}
			if (!parsed) {
				*bad = name;
				json_decref(row);
				return NULL;
			}
			v = parsed;
		} else if (named(name, "git_dirty") && json_is_integer(v)) {
			json_t *b = json_boolean(json_integer_value(v) != 0);

			json_decref(v);
			v = b;
		}
		json_object_set_new(row, name, v);
	}
	return row;
}

/*
 * Runs a prepared query and hands each row (as row_object makes it, freed
 * after the call) to fn; finalizes st. A non-zero return of fn stops the
 * walk and is returned (fn leaves its message on ctx). A row that does not
 * parse is BG_EIO naming it, after the rows before it were handed over.
 */
static int each_row(struct sqlite_store *s, sqlite3_stmt *st, const char *what, bg_store_row_fn fn, void *data,
		    struct bg_ctx *ctx)
{
	int rc;

	while ((rc = bg_sym_sqlite3_step(st)) == SQLITE_ROW) {
		const char *bad = NULL;
		json_error_t err;
		json_t *row = row_object(st, &bad, &err);

		if (!row) {
			/* every query selects id first; bad names a column of st, so report before finalizing */
			rc = changed_under(s, ctx);
			if (!rc && !bad)
				rc = bg_error(ctx, BG_EIO, "%s: out of memory while reading the store", s->display);
			else if (!rc && bad == not_an_object)
				rc = damaged_document(s, bg_sym_sqlite3_column_int64(st, 0), what, true, ctx);
			else if (!rc)
				rc = corrupt(s, bg_sym_sqlite3_column_int64(st, 0),
					     strcmp(bad, "decision_document") == 0 ? "decision" : bad, &err, ctx);
			bg_sym_sqlite3_finalize(st);
			return rc;
		}
		rc = fn(row, data, ctx);
		json_decref(row);
		if (rc) {
			bg_sym_sqlite3_finalize(st);
			return rc;
		}
	}
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return query_error(s, ctx, what);
	/* every row read is of the file that was opened */
	return changed_under(s, ctx);
}

/* Runs a prepared query and collects its rows into a new array *out; finalizes st. */
static int collect_rows(struct sqlite_store *s, sqlite3_stmt *st, const char *what, json_t **out,
			struct bg_ctx *ctx)
{
	json_t *arr = json_array();
	int rc = each_row(s, st, what, bg_store_append_row, arr, ctx);

	*out = NULL;
	if (rc)
		json_decref(arr);
	else
		*out = arr;
	return rc;
}

static int list_sessions(struct bg_store *base, long last, bg_store_row_fn fn, void *data, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;

	/* all of them: in id order as they are, without sorting them again */
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   last > 0 ? "SELECT * FROM (SELECT " SUMMARY_COLUMNS
					      " FROM sessions ORDER BY id DESC LIMIT ?) ORDER BY id"
					    : "SELECT " SUMMARY_COLUMNS " FROM sessions ORDER BY id",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot list sessions");
	if (last > 0)
		bg_sym_sqlite3_bind_int64(st, 1, last);
	return each_row(s, st, "cannot list sessions", fn, data, ctx);
}

static int get_session(struct bg_store *base, long long id, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	json_t *doc = NULL, *runs;
	json_error_t err;
	int rc;

	*out = NULL;
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT document FROM sessions WHERE id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_error(s, ctx, "cannot read the session");
	bg_sym_sqlite3_bind_int64(st, 1, id);
	rc = bg_sym_sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		doc = json_loads((const char *)bg_sym_sqlite3_column_text(st, 0), 0, &err);
		if (!doc || !json_is_object(doc)) {
			bg_sym_sqlite3_finalize(st);
			json_decref(doc);
			return corrupt(s, id, "document", doc ? NULL : &err, ctx);
		}
	}
	bg_sym_sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return bg_error(ctx, BG_ECHECK, "%s: no session with id %lld; see 'benchgate sessions'",
				s->display, id);
	if (!doc)
		return db_error(s, ctx, "cannot read the session");
	runs = json_array();
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT record, ordinal FROM runs WHERE session_id = ? ORDER BY ordinal",
				   -1, &st, NULL) != SQLITE_OK) {
		json_decref(doc);
		json_decref(runs);
		return db_error(s, ctx, "cannot read the runs");
	}
	bg_sym_sqlite3_bind_int64(st, 1, id);
	while ((rc = bg_sym_sqlite3_step(st)) == SQLITE_ROW) {
		json_t *r = json_loads((const char *)bg_sym_sqlite3_column_text(st, 0), 0, &err);

		if (!r || !json_is_object(r)) {
			char what[48];

			snprintf(what, sizeof(what), "record of run %lld", (long long)bg_sym_sqlite3_column_int64(st, 1));
			bg_sym_sqlite3_finalize(st);
			json_decref(r);
			json_decref(runs);
			json_decref(doc);
			return corrupt(s, id, what, r ? NULL : &err, ctx);
		}
		json_array_append_new(runs, r);
	}
	bg_sym_sqlite3_finalize(st);
	/* runs, then id: the order in which measure --json printed them */
	json_object_set_new(doc, "runs", runs);
	json_object_set_new(doc, "id", json_integer(id));
	if (rc != SQLITE_DONE) {
		json_decref(doc);
		return db_error(s, ctx, "cannot read the runs");
	}
	*out = doc;
	return BG_OK;
}

/* Appends a row to the curation log (inside the caller's transaction). */
static int log_curation(struct sqlite_store *s, long long id, const char *curation, const char *why,
			const char *who)
{
	sqlite3_stmt *st;
	int rc;

	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "INSERT INTO curations (session_id, curation, why, who, at)"
				   " VALUES (?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
				   -1, &st, NULL) != SQLITE_OK)
		return -1;
	bg_sym_sqlite3_bind_int64(st, 1, id);
	bg_sym_sqlite3_bind_text(st, 2, curation, -1, SQLITE_TRANSIENT);
	if (why)
		bg_sym_sqlite3_bind_text(st, 3, why, -1, SQLITE_TRANSIENT);
	if (who)
		bg_sym_sqlite3_bind_text(st, 4, who, -1, SQLITE_TRANSIENT);
	rc = bg_sym_sqlite3_step(st);
	bg_sym_sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The notes of session id's decision (its "conditions") into
 * decision_notes, replacing any it had; none for an empty list or none.
 * Inside the caller's transaction: 0, or -1 (the connection holds the error). */
static int write_notes(struct sqlite_store *s, long long id, const json_t *conditions)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (bg_sym_sqlite3_prepare_v2(s->db, "DELETE FROM decision_notes WHERE session_id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	bg_sym_sqlite3_bind_int64(st, 1, id);
	rc = bg_sym_sqlite3_step(st);
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (!json_is_array(conditions) || json_array_size(conditions) == 0)
		return 0;
	if (bg_sym_sqlite3_prepare_v2(s->db, "INSERT INTO decision_notes (session_id, conditions) VALUES (?, ?)", -1,
				   &st, NULL) != SQLITE_OK)
		return -1;
	bg_sym_sqlite3_bind_int64(st, 1, id);
	bind_json(st, 2, conditions);
	rc = bg_sym_sqlite3_step(st);
	bg_sym_sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The key, decision and automatic curation of session id, inside the
 * caller's transaction: 0, 1 when no session has that id, -1 on a store
 * failure (the connection holds the error). */
static int write_decision(struct sqlite_store *s, long long id, const char *key_id, const json_t *key,
			  const json_t *decision, const char *curation)
{
	const char *name = json_string_value(json_object_get(decision, "decision"));
	sqlite3_stmt *st = NULL;
	char why[64];

	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "UPDATE sessions SET key_id = ?, key = ?, decision = ?, decision_doc = ?,"
				   " curation = ?, curated_by = 'benchgate',"
				   " curated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now'), curation_why = ?"
				   " WHERE id = ?",
				   -1, &st, NULL) != SQLITE_OK)
		return -1;
	snprintf(why, sizeof(why), "decision: %s", name);
	bg_sym_sqlite3_bind_text(st, 1, key_id, -1, SQLITE_TRANSIENT);
	bind_json(st, 2, key);
	bg_sym_sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
	bind_json(st, 4, decision);
	bg_sym_sqlite3_bind_text(st, 5, curation, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_text(st, 6, why, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_int64(st, 7, id);
	if (bg_sym_sqlite3_step(st) != SQLITE_DONE) {
		bg_sym_sqlite3_finalize(st);
		return -1;
	}
	bg_sym_sqlite3_finalize(st);
	if (bg_sym_sqlite3_changes(s->db) == 0)
		return 1;
	if (write_notes(s, id, json_object_get(decision, "conditions")))
		return -1;
	return log_curation(s, id, curation, why, "benchgate") ? -1 : 0;
}

static bool decision_complete(const char *key_id, const json_t *key, const json_t *decision, const char *curation)
{
	return key_id && json_is_object(key) && json_string_value(json_object_get(decision, "decision")) && curation;
}

static int set_decision(struct bg_store *base, long long id, const char *key_id, const json_t *key,
			const json_t *decision, const char *curation, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	int rc;

	if (!decision_complete(key_id, key, decision, curation))
		return bg_error(ctx, BG_ECHECK, "%s: a decision needs a key id, a key, a decision document "
				"with 'decision', and a curation", s->display);
	rc = exec(s, "BEGIN IMMEDIATE", "cannot start the decision transaction", ctx);
	if (rc)
		return rc;
	rc = write_decision(s, id, key_id, key, decision, curation);
	if (rc == 1) {
		bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return bg_error(ctx, BG_ECHECK, "%s: no session with id %lld; see 'benchgate sessions'",
				s->display, id);
	}
	if (rc == 0 && bg_sym_sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
		return BG_OK;
	rc = db_error(s, ctx, "cannot store the decision");
	bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int baseline(struct bg_store *base, const char *key_id, const char *timing, long long exclude_id,
		    long limit, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;

	*out = NULL;
	/* the terms of the partial index sessions_baseline (migration 3) word
	 * for word, so that SQLite uses it; then the decision, which a store
	 * changed outside benchgate may hold as block or as a word no one
	 * decides on a session still curated accepted (bg_store_not_in_baseline),
	 * or as another than its decision document's (check_decision: such a
	 * session is no one's decision, and counts nowhere) */
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT " VERDICT_COLUMNS " FROM sessions WHERE key_id = ?1"
				   " AND curation IN ('accepted', 'auto-accepted')"
				   " AND tier IN ('scheduled-profile', 'release-signoff') AND status = 'ok'"
				   " AND decision IN ('pass', 'investigate', 'no-baseline')"
				   " AND CASE WHEN json_valid(decision_doc) THEN json_extract(decision_doc, '$.decision')"
				   " END IS decision"
				   " AND (?4 IS NULL OR coalesce(json_extract(document, '$.timing'), 'process') = ?4)"
				   " AND id <> ?2 ORDER BY id DESC LIMIT ?3",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the baseline");
	bg_sym_sqlite3_bind_text(st, 1, key_id ? key_id : "", -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_int64(st, 2, exclude_id);
	bg_sym_sqlite3_bind_int64(st, 3, limit > 0 ? limit : -1);
	if (timing)
		bg_sym_sqlite3_bind_text(st, 4, timing, -1, SQLITE_TRANSIENT);
	return collect_rows(s, st, "cannot read the baseline", out, ctx);
}

/* A session whose stored decision no one made (what: which, and how). */
static int foreign_decision(struct sqlite_store *s, long long id, const char *what, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EIO, "%s: session %lld: the stored decision is not one benchgate made (%s); the store "
			"is corrupted: restore it from a backup", s->display, id, what);
}

/* ... one that is not a known name. */
static int unknown_decision(struct sqlite_store *s, long long id, const char *name, struct bg_ctx *ctx)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	int rc;

	bg_strbuf_addf(&what, "'%s' is none of pass, investigate, block, no-baseline", name);
	rc = foreign_decision(s, id, what.buf, ctx);
	bg_strbuf_release(&what);
	return rc;
}

static int check_decision(struct sqlite_store *s, long long id, const json_t *row, struct bg_ctx *ctx);

static int curate(struct bg_store *base, long long id, const char *curation, const char *why,
		  const char *who, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st = NULL;
	char *decision = NULL;
	bool gate = false;
	int rc, step;

	if (!curation || (strcmp(curation, "accepted") != 0 && strcmp(curation, "rejected") != 0))
		return bg_error(ctx, BG_ECHECK, "curation must be 'accepted' or 'rejected'");
	if (!why || !*why)
		return bg_error(ctx, BG_ECHECK, "a curation needs a reason (--why TEXT)");
	rc = exec(s, "BEGIN IMMEDIATE", "cannot start the curation transaction", ctx);
	if (rc)
		return rc;
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT decision, gate_id, decision_doc AS decision_document FROM sessions"
				   " WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	bg_sym_sqlite3_bind_int64(st, 1, id);
	step = bg_sym_sqlite3_step(st);
	if (step == SQLITE_ROW) {
		/* never curated into a baseline: a decision no one made, or a
		 * session and its document that name two (as bg_store_verdict) */
		const char *bad = NULL;
		json_error_t err;
		json_t *row = row_object(st, &bad, &err);

		rc = row ? check_decision(s, id, row, ctx) : corrupt(s, id, "decision", &err, ctx);
		if (!rc) /* a damaged session is refused as bg_store_verdict refuses it */
			rc = check_document(s, id, "cannot read the decision", ctx);
		if (rc) {
			json_decref(row);
			bg_sym_sqlite3_finalize(st);
			bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return rc;
		}
		if (json_is_string(json_object_get(row, "decision")))
			decision = bg_xstrdup(json_string_value(json_object_get(row, "decision")));
		gate = json_is_string(json_object_get(row, "gate_id"));
		json_decref(row);
	}
	bg_sym_sqlite3_finalize(st);
	st = NULL;
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		goto fail;
	if (step == SQLITE_DONE || !decision ||
	    (strcmp(decision, "block") == 0 && strcmp(curation, "accepted") == 0)) {
		bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		if (step == SQLITE_DONE)
			rc = bg_error(ctx, BG_ECHECK, "%s: no session with id %lld; see 'benchgate sessions'",
				      s->display, id);
		else if (!decision && gate)
			rc = bg_error(ctx, BG_ECHECK, "session %lld has no decision: it is a gate session stored "
				      "without one (its run stopped before deciding); there is nothing to accept or "
				      "reject: run the gate again", id);
		else if (!decision)
			rc = bg_error(ctx, BG_ECHECK, "session %lld has no decision: it is a diagnostic "
				      "session ('benchgate measure'), not a gate session ('benchgate run "
				      "GATE'); there is nothing to accept or reject", id);
		else
			rc = bg_error(ctx, BG_ECHECK, "session %lld is blocked and cannot be accepted: a "
				      "blocked session never enters a baseline; see 'benchgate compare %lld' "
				      "for why, fix the cause and run the gate again", id, id);
		free(decision);
		return rc;
	}
	free(decision);
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "UPDATE sessions SET curation = ?, curation_why = ?, curated_by = ?,"
				   " curated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?",
				   -1, &st, NULL) != SQLITE_OK)
		goto fail;
	bg_sym_sqlite3_bind_text(st, 1, curation, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_text(st, 2, why, -1, SQLITE_TRANSIENT);
	if (who)
		bg_sym_sqlite3_bind_text(st, 3, who, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_int64(st, 4, id);
	if (bg_sym_sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	bg_sym_sqlite3_finalize(st);
	st = NULL;
	if (log_curation(s, id, curation, why, who))
		goto fail;
	if (bg_sym_sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	return BG_OK;
fail:
	rc = db_error(s, ctx, "cannot store the curation");
	bg_sym_sqlite3_finalize(st);
	bg_sym_sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int history(struct bg_store *base, const char *gate_id, const char *key_id, long last, bg_store_row_fn fn,
		   void *data, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	const char *where = gate_id ? "gate_id = ?1" : key_id ? "key_id = ?1" : "key_id IS NOT NULL";
	struct bg_strbuf sql = BG_STRBUF_INIT;
	int rc;

	/* the last ones: the newest taken through the index, then put back in order */
	if (last > 0)
		bg_strbuf_addf(&sql, "SELECT * FROM (SELECT %s FROM sessions WHERE %s"
				     " ORDER BY id DESC LIMIT ?2) ORDER BY id", HISTORY(s), where);
	else
		bg_strbuf_addf(&sql, "SELECT %s FROM sessions WHERE %s ORDER BY id", HISTORY(s), where);
	rc = bg_sym_sqlite3_prepare_v2(s->db, sql.buf, -1, &st, NULL);
	bg_strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return db_error(s, ctx, "cannot read the history");
	if (gate_id || key_id)
		bg_sym_sqlite3_bind_text(st, 1, gate_id ? gate_id : key_id, -1, SQLITE_TRANSIENT);
	if (last > 0)
		bg_sym_sqlite3_bind_int64(st, 2, last);
	return each_row(s, st, "cannot read the history", fn, data, ctx);
}

/*
 * The distinct key ids that begin with prefix, in the order of their first
 * session, at most two (enough to tell one from ambiguous). A range over
 * the index sessions_key: prefix <= key_id < prefix with its last byte one
 * higher holds exactly the texts that begin with prefix (BINARY collation),
 * so only the matching index entries are read, never the sessions.
 */
static int keys_with_prefix(struct bg_store *base, const char *prefix, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	size_t n = strlen(prefix);
	char *upper;
	sqlite3_stmt *st;
	json_t *arr;
	int rc;

	*out = NULL;
	if (n == 0 || (unsigned char)prefix[n - 1] == 0xff)
		return bg_error(ctx, BG_ECHECK, "a key prefix must be 1 or more hexadecimal digits, not '%s'", prefix);
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT key_id FROM sessions WHERE key_id >= ?1 AND key_id < ?2"
				   " GROUP BY key_id ORDER BY min(id) LIMIT 2",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the keys");
	upper = bg_xstrdup(prefix);
	upper[n - 1] = (char)(upper[n - 1] + 1);
	bg_sym_sqlite3_bind_text(st, 1, prefix, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_text(st, 2, upper, -1, SQLITE_TRANSIENT);
	free(upper);
	arr = json_array();
	while ((rc = bg_sym_sqlite3_step(st)) == SQLITE_ROW)
		if (bg_sym_sqlite3_column_type(st, 0) == SQLITE_TEXT)
			json_array_append_new(arr, column_json(st, 0));
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return db_error(s, ctx, "cannot read the keys");
	}
	*out = arr;
	return BG_OK;
}

/*
 * The keys, latest session newest first: one pass over the index
 * sessions_key (key_id, id), which covers the query; only the grouped rows
 * are sorted.
 */
static int each_key(struct bg_store *base, bg_store_row_fn fn, void *data, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;

	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT min(id) AS id, key_id, max(id) AS latest, count(*) AS sessions FROM sessions"
				   " WHERE key_id IS NOT NULL GROUP BY key_id ORDER BY latest DESC",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the keys");
	return each_row(s, st, "cannot read the keys", fn, data, ctx);
}

/* The sessions of the key of session session_id, compared as stored (index sessions_key). */
static int key_history(struct bg_store *base, long long session_id, bg_store_row_fn fn, void *data,
		       struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	struct bg_strbuf sql = BG_STRBUF_INIT;
	sqlite3_stmt *st;
	int rc;

	bg_strbuf_addf(&sql, "SELECT %s FROM sessions WHERE key_id = (SELECT key_id FROM sessions WHERE id = ?)"
			     " ORDER BY id", HISTORY(s));
	rc = bg_sym_sqlite3_prepare_v2(s->db, sql.buf, -1, &st, NULL);
	bg_strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return db_error(s, ctx, "cannot read the history");
	bg_sym_sqlite3_bind_int64(st, 1, session_id);
	return each_row(s, st, "cannot read the history", fn, data, ctx);
}

/*
 * One read transaction for the reads until read_end: BEGIN (deferred) takes
 * its snapshot at the first read, and every read after it sees that one
 * (WAL: the owner's writes meanwhile go on, unseen).
 */
static int read_begin(struct bg_store *base, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;

	return exec(s, "BEGIN", "cannot begin reading the store", ctx);
}

static void read_end(struct bg_store *base)
{
	struct sqlite_store *s = (struct sqlite_store *)base;

	if (!bg_sym_sqlite3_get_autocommit(s->db))
		bg_sym_sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

/*
 * BG_OK unless the decision of row (a verdict row: the decision column and
 * the parsed decision_document) names one benchgate never makes, or the
 * session and its document name two different ones: BG_EIO, the store was
 * changed outside benchgate, and a reader that went on would pass a gate
 * on a decision no one made. A decision missing from both is the
 * reader's "has no decision", never a pass; missing from one of them (a
 * document that is none, or not an object) is a change by hand too.
 */
static int check_decision(struct sqlite_store *s, long long id, const json_t *row, struct bg_ctx *ctx)
{
	const char *name = json_string_value(json_object_get(row, "decision"));
	const char *named = json_string_value(json_object_get(json_object_get(row, "decision_document"), "decision"));
	struct bg_strbuf what = BG_STRBUF_INIT;
	int rc;

	if (name && !bg_store_known_decision(name))
		return unknown_decision(s, id, name, ctx);
	if (named && !bg_store_known_decision(named))
		return unknown_decision(s, id, named, ctx);
	if ((!name && !named) || (name && named && strcmp(name, named) == 0))
		return BG_OK;
	/* benchgate writes both or neither: one without the other was changed by hand */
	if (!named)
		bg_strbuf_addf(&what, "the session says '%s' but it holds no decision document that names one", name);
	else if (!name)
		bg_strbuf_addf(&what, "the session names no decision but its decision document '%s'", named);
	else
		bg_strbuf_addf(&what, "the session says '%s' but its decision document '%s'", name, named);
	rc = foreign_decision(s, id, what.buf, ctx);
	bg_strbuf_release(&what);
	return rc;
}

static int verdict(struct bg_store *base, long long id, json_t **out, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	json_t *rows = NULL, *log = NULL, *v;
	int rc;

	*out = NULL;
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT " VERDICT_COLUMNS ", key, decision_doc AS decision_document"
				   " FROM sessions WHERE id = ?",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the decision");
	bg_sym_sqlite3_bind_int64(st, 1, id);
	if ((rc = collect_rows(s, st, "cannot read the decision", &rows, ctx)))
		return rc;
	if (json_array_size(rows) == 0) {
		json_decref(rows);
		return bg_error(ctx, BG_ECHECK, "%s: no session with id %lld; see 'benchgate sessions'",
				s->display, id);
	}
	if ((rc = check_document(s, id, "cannot read the decision", ctx)) ||
	    (rc = check_decision(s, id, json_array_get(rows, 0), ctx))) {
		json_decref(rows);
		return rc;
	}
	if (bg_sym_sqlite3_prepare_v2(s->db,
				   "SELECT curation, why, who, at FROM curations WHERE session_id = ? ORDER BY seq",
				   -1, &st, NULL) != SQLITE_OK) {
		json_decref(rows);
		return db_error(s, ctx, "cannot read the curations");
	}
	bg_sym_sqlite3_bind_int64(st, 1, id);
	if ((rc = collect_rows(s, st, "cannot read the curations", &log, ctx))) {
		json_decref(rows);
		return rc;
	}
	v = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	json_object_set_new(v, "curations", log);
	*out = v;
	return BG_OK;
}

static int last_of_gate(struct bg_store *base, const char *gate_id, long long *id, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT MAX(id) FROM sessions WHERE gate_id = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return db_error(s, ctx, "cannot read the sessions of the gate");
	bg_sym_sqlite3_bind_text(st, 1, gate_id, -1, SQLITE_TRANSIENT);
	rc = bg_sym_sqlite3_step(st);
	if (rc == SQLITE_ROW && bg_sym_sqlite3_column_type(st, 0) == SQLITE_INTEGER)
		*id = bg_sym_sqlite3_column_int64(st, 0);
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_error(s, ctx, "cannot read the sessions of the gate");
	if (*id == 0)
		return bg_error(ctx, BG_ECHECK, "gate '%s' has no stored session; run it with 'benchgate "
				"run %s'", gate_id, gate_id);
	return BG_OK;
}

static int schema_version(struct bg_store *base)
{
	return ((struct sqlite_store *)base)->version;
}

static void close_store(struct bg_store *base)
{
	struct sqlite_store *s = (struct sqlite_store *)base;

	bg_sym_sqlite3_close(s->db);
	free(s->display);
	free(s->path);
	free(s->wpath);
	free(s);
}

/* The index sessions_gate_id (gate_id, id) of migration 3 answers it with
 * the entries after `after` alone; a version-2 store read as it is, by
 * sessions_gate. */
static int gate_sessions_after(struct bg_store *base, const char *gate_id, long long after, long long *ids,
			       size_t max, size_t *n, struct bg_ctx *ctx)
{
	struct sqlite_store *s = (struct sqlite_store *)base;
	sqlite3_stmt *st;
	int rc;

	*n = 0;
	if (bg_sym_sqlite3_prepare_v2(s->db, "SELECT id FROM sessions WHERE gate_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
				   -1, &st, NULL) != SQLITE_OK)
		return db_error(s, ctx, "cannot read the sessions of the gate");
	bg_sym_sqlite3_bind_text(st, 1, gate_id, -1, SQLITE_TRANSIENT);
	bg_sym_sqlite3_bind_int64(st, 2, after);
	bg_sym_sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	while ((rc = bg_sym_sqlite3_step(st)) == SQLITE_ROW && *n < max)
		ids[(*n)++] = bg_sym_sqlite3_column_int64(st, 0);
	bg_sym_sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_error(s, ctx, "cannot read the sessions of the gate");
	return BG_OK;
}

static const struct bg_store_ops sqlite_ops = {
	put_session, put_decided_session, list_sessions, get_session, set_decision, baseline, curate,
	history, keys_with_prefix, each_key, key_history, read_begin, read_end, verdict, last_of_gate,
	gate_sessions_after, schema_version, close_store,
};

/* The folder of a store path ("." for a bare file name); the caller frees it. */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return bg_xstrdup(".");
	if (slash == path)
		return bg_xstrdup("/");
	return bg_xstrndup(path, (size_t)(slash - path));
}

/*
 * 0 when this user may write the store (the file, when there, and its
 * folder, where SQLite makes the -wal and -shm files; for a store not made
 * yet, the nearest folder above it that is there), else the errno of what
 * may not be written, named in *what (after display's folder).
 */
static int write_denied(const char *path, const char *display, bool exists, struct bg_strbuf *what)
{
	char *dir = folder_of(path), *shown = folder_of(display), *up;
	bool made = true;
	int err = 0;

	/* a folder still to be made: the one it would be made in */
	while (!exists && !bg_is_dir(dir) && strcmp(dir, ".") != 0 && strcmp(dir, "/") != 0) {
		made = false;
		up = folder_of(dir);
		free(dir);
		dir = up;
		up = folder_of(shown);
		free(shown);
		shown = up;
	}
	if (exists && access(path, W_OK) != 0) {
		err = errno;
		bg_strbuf_adds(what, "the file");
	} else if (access(dir, W_OK | X_OK) != 0) {
		err = errno;
		bg_strbuf_addf(what, made ? "its folder '%s', where SQLite keeps the -wal and -shm files"
				     : "the folder '%s', where its folder would be made", shown);
	}
	free(dir);
	free(shown);
	return err;
}

/* BG_EIO when this user may not write the store at path (write_denied). */
static int refuse_writer(const char *path, const char *display, bool exists, struct bg_ctx *ctx)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	int err = write_denied(path, display, exists, &what), rc = BG_OK;

	if (err)
		rc = bg_error(ctx, BG_EIO, "%s: cannot write the store: %s (%s); run this as a user who may "
			      "write the store and its folder, or name another store in 'store' of benchgate.json",
			      display, strerror(err), what.buf);
	bg_strbuf_release(&what);
	return rc;
}

static bool beside(const char *path, const char *suffix, off_t *size);

/*
 * BG_OK when the store's path is a regular file (*exists true) or nothing
 * (*exists false), else BG_EIO: there, but not a file SQLite can use (a
 * folder, a link to nothing, one that cannot be looked at), never taken
 * for no store.
 */
static int store_file(const char *path, const char *display, bool *exists, struct bg_ctx *ctx)
{
	struct stat st;
	off_t wal = 0;

	*exists = false;
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return bg_error(ctx, BG_EIO, "%s: cannot open the store: %s, not a file; name a file in 'store' "
					"of benchgate.json", display, S_ISDIR(st.st_mode) ? "a folder" : "a device or pipe");
		/* benchgate makes a store whole (create_store): an empty one was
		 * cut short, never a new store to write a schema into */
		if (st.st_size == 0)
			return bg_error(ctx, BG_EIO, "%s: the store is an empty file (0 bytes): it was truncated, or "
					"left by an older benchgate stopped while it created the store; if it never held "
					"sessions, remove it with any -wal and -shm file beside it (the next 'benchgate "
					"measure' or 'benchgate run' makes a new one), otherwise restore it from a backup",
					display);
		*exists = true;
	} else if (errno != ENOENT) {
		int e = errno;
		return bg_error(ctx, BG_EIO, "%s: cannot open the store: %s; %s", display, strerror(e),
				e == ENOTDIR ? "a name on its path is a file where a folder should be: move that file, "
					       "or name another store in benchgate.json"
				: e == EACCES ? "a folder on its path cannot be searched by this user: check the "
						"folders' permissions"
				: e == ENAMETOOLONG ? "name a shorter path in 'store' of benchgate.json"
						    : "check the path in 'store' of benchgate.json");
	} else if (lstat(path, &st) == 0) {
		return bg_error(ctx, BG_EIO, "%s: cannot open the store: a link to nothing; make it lead to the store "
				"(restore the file it named), or remove the link to start a new store", display);
	} else if (beside(path, "-wal", &wal) && wal > 0) {
		/* the store removed (or moved) without its log: what the log holds
		 * is lost with the file, and SQLite would replay it into a new one */
		return bg_error(ctx, BG_EIO, "%s: the store file is not there, but its -wal file (%lld bytes) is: "
				"the store was removed or moved without it; restore the store from a backup into "
				"its place, or, if its sessions are not wanted, remove the -wal and any -shm file "
				"beside it", display, (long long)wal);
	}
	return BG_OK;
}

/*
 * The file a store path names, links followed (malloc'd), where it is
 * there: SQLite keeps the -wal and -shm beside the file a link leads to,
 * so that is the folder to look in and to write. NULL when not there.
 */
static char *store_target(const char *path, bool exists)
{
	struct stat st;

	return exists && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
}

int bg_store_sqlite_check_write(const char *path, const char *display, struct bg_ctx *ctx)
{
	char *target;
	bool exists;
	int rc;

	if (!display)
		display = path;
	if ((rc = store_file(path, display, &exists, ctx)))
		return rc;
	target = store_target(path, exists);
	rc = refuse_writer(target ? target : path, display, exists, ctx);
	free(target);
	return rc;
}

/* Whether path + suffix is there; *size (when size is not NULL): its size, 0 when not there. */
static bool beside(const char *path, const char *suffix, off_t *size)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	struct stat st;
	bool there;

	bg_strbuf_addf(&p, "%s%s", path, suffix);
	there = lstat(p.buf, &st) == 0;
	if (size)
		*size = there ? st.st_size : 0;
	bg_strbuf_release(&p);
	return there;
}

/*
 * Opens s->db read-only, writing nothing into the store's folder: a reader
 * that made the -wal and -shm files (SQLite does, in a folder it may write)
 * would leave them owned by itself, and the store's owner could no longer
 * write the store. With both there, SQLite reads through them (read-only
 * ones too, since SQLite 3.22); with no -wal (or an empty one) the file
 * holds every committed session and is read as it is (immutable, the only
 * way SQLite reads a WAL database whose folder it may not write).
 */
static int open_read_only(struct sqlite_store *s, const char *path, struct bg_ctx *ctx)
{
	static const char hex[] = "0123456789ABCDEF";
	struct bg_strbuf uri = BG_STRBUF_INIT;
	off_t wal_size;
	bool wal = beside(path, "-wal", &wal_size), shm = beside(path, "-shm", NULL);
	int flags = SQLITE_OPEN_READONLY, rc = BG_OK;

	if (wal_size > 0 && !shm)
		/* SQLite reads a -wal only through its -shm, which a reader that
		 * may not write the folder cannot make; read without it, the file
		 * would lack the sessions still in the -wal */
		return bg_error(ctx, BG_EIO, "%s: cannot read the store: its -wal file holds sessions not yet in "
				"the store file, and its -shm file, through which they are read, is not there; run any "
				"verb that reads it (such as 'benchgate sessions') once as a user who may write the store "
				"and its folder, which moves them into the file", s->display);
	if (!(wal && shm) && wal_size == 0) {
		/* a URI: its path percent-encoded where URI syntax would read a byte */
		bg_strbuf_adds(&uri, "file:");
		for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
			if (*p == '?' || *p == '#' || *p == '%' || *p <= 0x20 || *p >= 0x7f)
				bg_strbuf_addf(&uri, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
			else
				bg_strbuf_addf(&uri, "%c", *p);
		}
		bg_strbuf_adds(&uri, "?immutable=1");
		flags |= SQLITE_OPEN_URI;
		/* the file as it is read: changed_under compares the file with it */
		if (stat(path, &s->opened) == 0) {
			s->immutable = true;
			s->path = bg_xstrdup(path);
		}
	}
	if (bg_sym_sqlite3_open_v2(uri.len ? uri.buf : path, &s->db, flags, NULL) != SQLITE_OK)
		rc = db_error(s, ctx, "cannot open the store");
	bg_strbuf_release(&uri);
	return rc;
}

/* Removes a temporary store and what SQLite keeps beside it. */
static void remove_temp(const char *tmp)
{
	static const char *const sides[] = {"", "-wal", "-shm", "-journal"};
	struct bg_strbuf p = BG_STRBUF_INIT;

	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s%s", tmp, sides[i]);
		unlink(p.buf);
	}
	bg_strbuf_release(&p);
}

/* Removes the temporary stores beside path (PATH.tmp.PID, regular files)
 * that a killed benchgate left: those of a PID that runs no more, as this
 * host sees it, and this process's own (an earlier holder of its PID; one
 * process makes one store at a time). */
static void remove_dead_temps(const char *path)
{
	char *dir = folder_of(path);
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	struct bg_strbuf p = BG_STRBUF_INIT;
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		long pid = bg_atomic_temp_pid(e->d_name, base);

		if (pid < 0 || (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM)))
			continue; /* not one, or a live benchgate's making a store */
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/%s", dir, e->d_name);
		if (lstat(p.buf, &st) == 0 && S_ISREG(st.st_mode)) /* never a link or a folder */
			remove_temp(p.buf);
	}
	if (d)
		closedir(d);
	bg_strbuf_release(&p);
	free(dir);
}

/*
 * Gives the finished store tmp the name path unless a store is there
 * already (another process made one meanwhile: then tmp is left, and
 * *taken set): renameat2 RENAME_NOREPLACE; where the file system lacks it,
 * link(2) and unlink; where it lacks hard links too, the name claimed with
 * O_EXCL and tmp renamed over the claim (an empty file for that instant
 * only, removed again when the rename fails). 0, or the errno of what failed.
 */
static int name_store(const char *tmp, const char *path, bool *taken)
{
	int fd;

	*taken = false;
#ifdef RENAME_NOREPLACE
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EEXIST) {
		*taken = true;
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return errno;
#endif
	if (link(tmp, path) == 0) {
		unlink(tmp);
		return 0;
	}
	if (errno == EEXIST) {
		*taken = true;
		return 0;
	}
	if (errno != EPERM && errno != ENOSYS && errno != EOPNOTSUPP)
		return errno;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		*taken = errno == EEXIST;
		return *taken ? 0 : errno;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		int e = errno;

		unlink(path); /* the claim, empty: never left as a store */
		return e;
	}
	return 0;
}

/*
 * Makes a new store at path whole or not at all, so that no reader ever
 * finds it half made and no stopped benchgate leaves an empty file there:
 * the schema is written into a temporary file beside it (PATH.tmp.PID, in
 * WAL mode as every store, all migrations applied), its connection closed
 * (SQLite then moves the -wal into the file and removes the -wal and
 * -shm, which must be gone: they hold what the file lacks), the file
 * synced, and then named path (name_store). A store another process made
 * meanwhile is kept, the temporary one removed: BG_OK either way, and the
 * caller opens what is there.
 */
static int create_store(const char *path, const char *display, struct bg_ctx *ctx)
{
	struct sqlite_store t = {0};
	struct bg_strbuf tmp = BG_STRBUF_INIT;
	bool taken = false;
	int rc = BG_OK, fd, e;
	off_t wal_size;

	/* SQLite would read a -wal left by a store removed without it as the new one's */
	if (beside(path, "-wal", &wal_size) && wal_size > 0)
		return bg_error(ctx, BG_EIO, "%s: cannot create the store: the -wal file of a store no longer there "
				"is beside it; restore that store from a backup, or remove its -wal and -shm files if "
				"it is gone for good", display);
	{
		/* made as NAME.tmp.PID, beside which SQLite makes its -journal:
		 * each name must fit the folder's limit */
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		size_t most = NAME_MAX - strlen(".tmp.4294967295-journal");

		if (strlen(base) > most)
			return bg_error(ctx, BG_EIO, "%s: cannot create the store: its file name is %zu bytes, and "
					"benchgate makes it under a name up to %zu bytes longer (a temporary one, and "
					"SQLite's -journal beside it) within the system's limit of %d; name a file of at "
					"most %zu bytes in 'store' of benchgate.json",
					display, strlen(base), NAME_MAX - most, NAME_MAX, most);
	}
	bg_strbuf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	remove_dead_temps(path); /* left by a benchgate killed while it made one */
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = bg_error(ctx, BG_EIO, "%s: cannot create the store: %s", display, strerror(errno));
		goto out;
	}
	close(fd);
	t.display = bg_xstrdup(display);
	if (bg_sym_sqlite3_open_v2(tmp.buf, &t.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = db_error(&t, ctx, "cannot create the store");
	} else {
		bg_sym_sqlite3_busy_timeout(t.db, 10000);
		rc = exec(&t, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;",
			  "cannot create the store", ctx);
		if (rc == BG_OK)
			rc = migrate(&t, ctx);
	}
	if (t.db && bg_sym_sqlite3_close(t.db) != SQLITE_OK && rc == BG_OK)
		rc = bg_error(ctx, BG_EIO, "%s: cannot create the store: %s", display, bg_sym_sqlite3_errmsg(t.db));
	if (rc == BG_OK && (beside(tmp.buf, "-wal", NULL) || beside(tmp.buf, "-shm", NULL)))
		rc = bg_error(ctx, BG_EIO, "%s: cannot create the store: SQLite left the -wal or -shm file of the new "
			      "store when it closed it; check the file system of the store's folder", display);
	if (rc == BG_OK) {
		fd = open(tmp.buf, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) != 0)
			rc = bg_error(ctx, BG_EIO, "%s: cannot create the store: %s", display, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (rc == BG_OK && (e = name_store(tmp.buf, path, &taken)) != 0)
		rc = bg_error(ctx, BG_EIO, "%s: cannot create the store: %s", display, strerror(e));
	if (rc == BG_OK && !taken) {
		char *dir = folder_of(path);

		/* the new name survives a crash too */
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
		free(dir);
	}
	if (rc != BG_OK || taken)
		remove_temp(tmp.buf);
out:
	free(t.display);
	bg_strbuf_release(&tmp);
	return rc;
}

static int sqlite_open_file(const char *path, const char *display, bool exists, enum bg_store_mode mode,
			    struct bg_store **out, struct bg_ctx *ctx);

int bg_store_sqlite_open(const char *path, const char *display, enum bg_store_mode mode,
			 struct bg_store **out, struct bg_ctx *ctx)
{
	char *target;
	bool exists;
	int rc;

	*out = NULL;
	if (!display)
		display = path;
	if ((rc = store_file(path, display, &exists, ctx)))
		return rc;
	target = store_target(path, exists);
	rc = sqlite_open_file(target ? target : path, display, exists, mode, out, ctx);
	free(target);
	return rc;
}

/* bg_store_sqlite_open of the file path (no link), after store_file found
 * it there (exists) or not. */
static int sqlite_open_file(const char *path, const char *display, bool exists, enum bg_store_mode mode,
			    struct bg_store **out, struct bg_ctx *ctx)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	struct sqlite_store *s;
	int rc, err;

	if (!exists) {
		char *dir;

		if (mode != BG_STORE_CREATE)
			return BG_OK;
		dir = folder_of(path);
		rc = bg_mkdirs(dir, ctx);
		free(dir);
		if (rc)
			return rc;
	}
	if (mode != BG_STORE_READ && (rc = refuse_writer(path, display, exists, ctx)))
		return rc;
	err = write_denied(path, display, exists, &what);
	bg_strbuf_release(&what);
	if ((rc = bg_sqlite_api_load(ctx)) != BG_OK)
		return rc;
	/* made whole beside it, then named: opened below as any store */
	if (!exists && (rc = create_store(path, display, ctx)) != BG_OK)
		return rc;
	s = bg_xcalloc(1, sizeof(*s));
	s->base.ops = &sqlite_ops;
	s->display = bg_xstrdup(display);
	s->read_only = err != 0;
	if (s->read_only) {
		rc = open_read_only(s, path, ctx);
	} else if (bg_sym_sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
		   SQLITE_OK) {
		rc = db_error(s, ctx, "cannot open the store");
	}
	if (rc == BG_OK) {
		bg_sym_sqlite3_busy_timeout(s->db, 10000);
		rc = refuse_foreign(s, ctx);
	}
	if (rc == BG_OK && (s->read_only || mode == BG_STORE_READ)) {
		/* a database without benchgate's schema yet (and no tables): no
		 * session stored, and a verb that only reads it leaves it as it is */
		rc = current_version(s, &s->version, ctx);
		if (rc == BG_OK && s->version == 0) {
			close_store(&s->base);
			return BG_OK;
		}
	}
	if (rc == BG_OK && s->read_only) {
		rc = schema_known(s, ctx);
		if (rc == BG_OK && s->version < READER_VERSION)
			rc = bg_error(ctx, BG_EIO, "%s: store schema version %d is older than this benchgate "
				      "reads (%d; it writes %d), and this user may not write the store to upgrade "
				      "it; run any verb that reads it (such as 'benchgate sessions') once as a user "
				      "who may write it",
				      s->display, s->version, READER_VERSION, NMIGRATIONS);
	} else if (rc == BG_OK) {
		/* a newer store is refused before anything is written to it (the
		 * journal mode too: it changes the file) */
		rc = current_version(s, &s->version, ctx);
		if (rc == BG_OK)
			rc = schema_known(s, ctx);
		if (rc == BG_OK)
			rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;",
				  "cannot configure the store", ctx);
		if (rc == BG_OK) {
			struct stat st;

			if (stat(path, &st) == 0) {
				s->wpath = bg_xstrdup(path);
				s->wdev = st.st_dev;
				s->wino = st.st_ino;
			}
		}
		if (rc == BG_OK)
			rc = migrate(s, ctx);
	}
	if (rc) {
		close_store(&s->base);
		return rc;
	}
	*out = &s->base;
	return BG_OK;
}
