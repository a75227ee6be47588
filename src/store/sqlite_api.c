/*
 * sqlite_api.c - binds the store's SQLite functions on first use
 * (see sqlite_api.h).
 */
#include "store/sqlite_api.h"
#include "core/dynlib.h"

#ifndef BG_LIBSQLITE3_SONAME
#define BG_LIBSQLITE3_SONAME "libsqlite3.so.0"
#endif

#define BG_SQLITE_DEFINE(name) __typeof__(name) *bg_sym_##name;
BG_SQLITE_SYMBOLS(BG_SQLITE_DEFINE)
#undef BG_SQLITE_DEFINE

#define BG_SQLITE_ENTRY(name) {#name, &bg_sym_##name},
static const struct bg_dynsym sqlite_syms[] = {BG_SQLITE_SYMBOLS(BG_SQLITE_ENTRY){NULL, NULL}};
#undef BG_SQLITE_ENTRY

static struct bg_dynlib sqlite_lib = BG_DYNLIB_INIT(BG_LIBSQLITE3_SONAME, "libsqlite3-0", sqlite_syms);

int bg_sqlite_api_load(struct bg_ctx *ctx)
{
	return bg_dynlib_load(&sqlite_lib, ctx);
}
