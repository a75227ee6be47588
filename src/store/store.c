/*
 * store.c - choosing the back end from the store string, and what every back
 * end shares: the baseline rule for one row, the check of a curation reason
 * (see benchgate/store.h).
 */
#include "store/store_impl.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/strbuf.h"

#include <string.h>

/*
 * The file of a sqlite store spec (root-relative) into *path; BG_EIO for a
 * kind this build cannot open or a sqlite spec without a path, said as
 * bg_store_open says it (a PostgreSQL URL's credentials never shown).
 */
static int sqlite_path(const char *spec, const char *root, struct bg_strbuf *path, struct bg_ctx *ctx)
{
	if (strncmp(spec, "sqlite:", 7) == 0) {
		if (!spec[7])
			return bg_error(ctx, BG_EIO, "store '%s': the sqlite store needs a path, as in "
					"'sqlite:.benchgate/store.sqlite3'", spec);
		bg_path_join(path, root ? root : ".", spec + 7);
		return BG_OK;
	}
	if (strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0)
		return bg_error(ctx, BG_EIO, "store '%.*s...': PostgreSQL stores are not supported by "
				"this build yet; use 'sqlite:PATH' in benchgate.json",
				(int)(strchr(spec, ':') - spec), spec);
	return bg_error(ctx, BG_EIO, "store '%s': unknown store kind; use 'sqlite:PATH' or "
			"'postgresql://...' in benchgate.json", spec);
}

int bg_store_open(const char *spec, const char *root, enum bg_store_mode mode, struct bg_store **out,
		  struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	*out = NULL;
	if ((rc = sqlite_path(spec, root, &path, ctx)) == BG_OK)
		rc = bg_store_sqlite_open(path.buf, spec + 7, mode, out, ctx);
	bg_strbuf_release(&path);
	return rc;
}

int bg_store_check_write(const char *spec, const char *root, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	if ((rc = sqlite_path(spec, root, &path, ctx)) == BG_OK)
		rc = bg_store_sqlite_check_write(path.buf, spec + 7, ctx);
	bg_strbuf_release(&path);
	return rc;
}

void bg_store_close(struct bg_store *st)
{
	if (st)
		st->ops->close(st);
}

int bg_store_put_session(struct bg_store *st, const json_t *session, long long *id,
			 struct bg_ctx *ctx)
{
	return st->ops->put_session(st, session, id, ctx);
}

int bg_store_put_decided_session(struct bg_store *st, const json_t *session, const char *key_id, const json_t *key,
				 const json_t *decision, const char *curation, long long *id, struct bg_ctx *ctx)
{
	return st->ops->put_decided_session(st, session, key_id, key, decision, curation, id, ctx);
}

int bg_store_append_row(const json_t *row, void *array, struct bg_ctx *ctx)
{
	if (json_array_append((json_t *)array, (json_t *)row))
		return bg_error(ctx, BG_EIO, "out of memory while reading the store");
	return BG_OK;
}

/* Rows walked by each into a new array *out (NULL on an error). */
static int collect(int rc, json_t *arr, json_t **out)
{
	if (rc)
		json_decref(arr);
	*out = rc ? NULL : arr;
	return rc;
}

int bg_store_each_session(struct bg_store *st, long last, bg_store_row_fn fn, void *data, struct bg_ctx *ctx)
{
	return st->ops->list_sessions(st, last, fn, data, ctx);
}

int bg_store_list_sessions(struct bg_store *st, long last, json_t **out, struct bg_ctx *ctx)
{
	json_t *arr = json_array();

	return collect(bg_store_each_session(st, last, bg_store_append_row, arr, ctx), arr, out);
}

int bg_store_get_session(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx)
{
	return st->ops->get_session(st, id, out, ctx);
}

int bg_store_set_decision(struct bg_store *st, long long id, const char *key_id, const json_t *key,
			  const json_t *decision, const char *curation, struct bg_ctx *ctx)
{
	return st->ops->set_decision(st, id, key_id, key, decision, curation, ctx);
}

int bg_store_baseline(struct bg_store *st, const char *key_id, const char *timing, long long exclude_id,
		      long limit, json_t **out, struct bg_ctx *ctx)
{
	return st->ops->baseline(st, key_id, timing, exclude_id, limit, out, ctx);
}

bool bg_store_known_decision(const char *name)
{
	static const char *const names[] = {"pass", "investigate", "block", "no-baseline"};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool text_is(const json_t *v, const char *word)
{
	return json_is_string(v) && strcmp(json_string_value(v), word) == 0;
}

const char *bg_store_not_in_baseline(const json_t *summary)
{
	const json_t *curation = json_object_get(summary, "curation"), *tier = json_object_get(summary, "tier");

	if (!json_is_string(json_object_get(summary, "decision")))
		return "no decision";
	if (text_is(json_object_get(summary, "decision"), "block"))
		return "blocked";
	if (!bg_store_known_decision(json_string_value(json_object_get(summary, "decision"))))
		return "unknown decision";
	if (json_is_false(json_object_get(summary, "decision_document_agrees")))
		return "decision document disagrees";
	if (!text_is(json_object_get(summary, "status"), "ok"))
		return "status";
	if (text_is(curation, "rejected"))
		return "rejected";
	if (text_is(curation, "pending"))
		return "pending";
	if (!text_is(curation, "accepted") && !text_is(curation, "auto-accepted"))
		return "not accepted";
	if (!text_is(tier, "scheduled-profile") && !text_is(tier, "release-signoff"))
		return "tier";
	return NULL;
}

int bg_store_curate(struct bg_store *st, long long id, const char *curation, const char *why,
		    const char *who, struct bg_ctx *ctx)
{
	const char *problem = why ? bg_format_line_problem(why) : "it is missing";

	if (problem)
		return bg_error(ctx, BG_EUSAGE, "the reason (--why TEXT) must be one line of text: %s", problem);
	return st->ops->curate(st, id, curation, why, who, ctx);
}

int bg_store_each_history(struct bg_store *st, const char *gate_id, const char *key_id, bg_store_row_fn fn,
			  void *data, struct bg_ctx *ctx)
{
	return st->ops->history(st, gate_id, key_id, 0, fn, data, ctx);
}

int bg_store_each_history_last(struct bg_store *st, const char *gate_id, const char *key_id, long last,
			       bg_store_row_fn fn, void *data, struct bg_ctx *ctx)
{
	return st->ops->history(st, gate_id, key_id, last, fn, data, ctx);
}

int bg_store_history(struct bg_store *st, const char *gate_id, const char *key_id, json_t **out,
		     struct bg_ctx *ctx)
{
	json_t *arr = json_array();

	return collect(bg_store_each_history(st, gate_id, key_id, bg_store_append_row, arr, ctx), arr, out);
}

int bg_store_keys_with_prefix(struct bg_store *st, const char *prefix, json_t **out, struct bg_ctx *ctx)
{
	return st->ops->keys_with_prefix(st, prefix, out, ctx);
}

int bg_store_each_key(struct bg_store *st, bg_store_row_fn fn, void *data, struct bg_ctx *ctx)
{
	return st->ops->each_key(st, fn, data, ctx);
}

int bg_store_each_of_key(struct bg_store *st, long long session_id, bg_store_row_fn fn, void *data,
			 struct bg_ctx *ctx)
{
	return st->ops->key_history(st, session_id, fn, data, ctx);
}

int bg_store_read_begin(struct bg_store *st, struct bg_ctx *ctx)
{
	return st->ops->read_begin(st, ctx);
}

void bg_store_read_end(struct bg_store *st)
{
	st->ops->read_end(st);
}

int bg_store_verdict(struct bg_store *st, long long id, json_t **out, struct bg_ctx *ctx)
{
	return st->ops->verdict(st, id, out, ctx);
}

int bg_store_last_of_gate(struct bg_store *st, const char *gate_id, long long *id,
			  struct bg_ctx *ctx)
{
	return st->ops->last_of_gate(st, gate_id, id, ctx);
}

int bg_store_gate_sessions_after(struct bg_store *st, const char *gate_id, long long after, long long *ids,
				 size_t max, size_t *n, struct bg_ctx *ctx)
{
	return st->ops->gate_sessions_after(st, gate_id, after, ids, max, n, ctx);
}

int bg_store_schema_version(struct bg_store *st)
{
	return st->ops->schema_version(st);
}
