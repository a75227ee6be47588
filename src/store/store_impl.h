/*
 * store_impl.h - the back-end side of benchgate/store.h: each back end
 * fills a struct bg_store_ops and embeds struct bg_store first in its own
 * handle. sqlite.c now; postgres.c later adds bg_store_postgres_open.
 */
#ifndef BENCHGATE_STORE_IMPL_H
#define BENCHGATE_STORE_IMPL_H

#include "benchgate/store.h"

struct bg_store_ops {
	int (*put_session)(struct bg_store *st, const json_t *session, long long *id,
			   struct bg_ctx *ctx);
	int (*put_decided_session)(struct bg_store *st, const json_t *session, const char *key_id,
				   const json_t *key, const json_t *decision, const char *curation, long long *id,
				   struct bg_ctx *ctx);
	int (*list_sessions)(struct bg_store *st, long last, bg_store_row_fn fn, void *data, struct bg_ctx *ctx);
	int (*get_session)(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx);
	int (*set_decision)(struct bg_store *st, long long id, const char *key_id, const json_t *key,
			    const json_t *decision, const char *curation, struct bg_ctx *ctx);
	int (*baseline)(struct bg_store *st, const char *key_id, const char *timing, long long exclude_id, long limit,
			json_t **out, struct bg_ctx *ctx);
	int (*curate)(struct bg_store *st, long long id, const char *curation, const char *why,
		      const char *who, struct bg_ctx *ctx);
	int (*history)(struct bg_store *st, const char *gate_id, const char *key_id, long last, bg_store_row_fn fn,
		       void *data, struct bg_ctx *ctx);
	int (*keys_with_prefix)(struct bg_store *st, const char *prefix, json_t **out, struct bg_ctx *ctx);
	int (*each_key)(struct bg_store *st, bg_store_row_fn fn, void *data, struct bg_ctx *ctx);
	int (*key_history)(struct bg_store *st, long long session_id, bg_store_row_fn fn, void *data,
			   struct bg_ctx *ctx);
	int (*read_begin)(struct bg_store *st, struct bg_ctx *ctx);
	void (*read_end)(struct bg_store *st);
	int (*verdict)(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx);
	int (*last_of_gate)(struct bg_store *st, const char *gate_id, long long *id, struct bg_ctx *ctx);
	int (*gate_sessions_after)(struct bg_store *st, const char *gate_id, long long after, long long *ids,
				   size_t max, size_t *n, struct bg_ctx *ctx);
	int (*schema_version)(struct bg_store *st);
	void (*close)(struct bg_store *st);
};

struct bg_store {
	const struct bg_store_ops *ops;
};

/* Whether name is a decision benchgate makes (bg_decide: decide.h); false for NULL. */
bool bg_store_known_decision(const char *name);

/* path: absolute or relative to the working directory; display: shown in messages. */
int bg_store_sqlite_open(const char *path, const char *display, enum bg_store_mode mode,
			 struct bg_store **out, struct bg_ctx *ctx);
/* bg_store_check_write for a SQLite store at path. */
int bg_store_sqlite_check_write(const char *path, const char *display, struct bg_ctx *ctx);

#endif
