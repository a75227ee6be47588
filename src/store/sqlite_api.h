/*
 * sqlite_api.h - the SQLite functions the store calls, bound from
 * libsqlite3 when the first store is opened (core/dynlib.h): verbs that
 * never open a store do not load SQLite, nor libm with it. Call sites use
 * bg_sym_sqlite3_NAME exactly as sqlite3_NAME. Internal to src/store.
 */
#ifndef BENCHGATE_STORE_SQLITE_API_H
#define BENCHGATE_STORE_SQLITE_API_H

#include <sqlite3.h>

#include "benchgate/status.h"

#define BG_SQLITE_SYMBOLS(X) \
	X(sqlite3_bind_double) \
	X(sqlite3_bind_int) \
	X(sqlite3_bind_int64) \
	X(sqlite3_bind_null) \
	X(sqlite3_bind_text) \
	X(sqlite3_busy_timeout) \
	X(sqlite3_changes) \
	X(sqlite3_clear_bindings) \
	X(sqlite3_close) \
	X(sqlite3_column_count) \
	X(sqlite3_column_double) \
	X(sqlite3_column_int) \
	X(sqlite3_column_int64) \
	X(sqlite3_column_name) \
	X(sqlite3_column_text) \
	X(sqlite3_column_type) \
	X(sqlite3_errcode) \
	X(sqlite3_errmsg) \
	X(sqlite3_exec) \
	X(sqlite3_finalize) \
	X(sqlite3_get_autocommit) \
	X(sqlite3_last_insert_rowid) \
	X(sqlite3_open_v2) \
	X(sqlite3_prepare_v2) \
	X(sqlite3_reset) \
	X(sqlite3_step) \
	X(sqlite3_system_errno)

#define BG_SQLITE_DECLARE(name) extern __typeof__(name) *bg_sym_##name;
BG_SQLITE_SYMBOLS(BG_SQLITE_DECLARE)
#undef BG_SQLITE_DECLARE

/* Loads libsqlite3 once and binds the symbols above; BG_EIO "cannot load
 * libsqlite3.so.0: ...; install Debian's libsqlite3-0" when it cannot. */
int bg_sqlite_api_load(struct bg_ctx *ctx);

#endif
