/*
 * json.c - JSON loading with file:line:col errors and CPython-compatible
 * serialisation (json.dumps, str, repr). See json.h.
 */
#include "benchgate/json.h"
#include "benchgate/fsutil.h"
#include "benchgate/format.h"
#include "benchgate/value.h"
#include "core/bytes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load_buffer(const char *data, size_t len, const char *display, size_t flags, json_t **out,
		       struct bg_ctx *ctx);

int bg_json_load_buffer(const char *data, size_t len, const char *display,
			json_t **out, struct bg_ctx *ctx)
{
	return load_buffer(data, len, display, 0, out, ctx);
}

int bg_json_load_buffer_unique(const char *data, size_t len, const char *display, json_t **out,
			       struct bg_ctx *ctx)
{
	return load_buffer(data, len, display, JSON_REJECT_DUPLICATES, out, ctx);
}

const char *bg_json_error_text(const json_error_t *err)
{
	if (strstr(err->text, "JSON_ALLOW_NUL"))
		return "a string holds \\u0000, a NUL character, which benchgate never writes nor reads";
	return err->text;
}

static int load_buffer(const char *data, size_t len, const char *display, size_t flags, json_t **out,
		       struct bg_ctx *ctx)
{
	json_error_t err;
	json_t *v;

	*out = NULL;
	if (len == 0)
		return bg_error(ctx, BG_ECHECK, "%s: file is empty; expected a JSON object", display);
	if (bg_span_json_space(data, len) == len)
		return bg_error(ctx, BG_ECHECK, "%s: file holds only whitespace; expected a JSON object", display);
	v = json_loadb(data, len, JSON_DECODE_ANY | flags, &err);
	if (!v) {
		int line = err.line > 0 ? err.line : 1;
		int col = err.column > 0 ? err.column : 1;

		/* the line of the error: a merge's conflict marker, say so */
		if (bg_format_conflict_line(data, len, line))
			return bg_error(ctx, BG_ECHECK,
					"%s:%d:%d: invalid JSON: %s; the line is a merge conflict marker: resolve the conflict, then run again",
					display, line, col, bg_json_error_text(&err));
		return bg_error(ctx, BG_ECHECK, "%s:%d:%d: invalid JSON: %s", display, line, col,
				bg_json_error_text(&err));
	}
	*out = v;
	return BG_OK;
}

int bg_json_load_file(const char *path, const char *display, json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	int rc;

	if (!display)
		display = path;
	*out = NULL;
	rc = bg_file_read(path, display, &sb, ctx);
	if (rc)
		return rc;
	rc = bg_json_load_buffer(sb.buf, sb.len, display, out, ctx);
	bg_strbuf_release(&sb);
	return rc;
}

int bg_json_expect_object(const json_t *v, const char *display, struct bg_ctx *ctx)
{
	if (json_is_object(v))
		return BG_OK;
	return bg_error(ctx, BG_ECHECK, "%s: top level must be a JSON object", display);
}

json_t *bg_json_text(const char *s)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	json_t *v;
	size_t i = 0;

	if (!s)
		return json_null();
	v = json_string(s);
	if (v)
		return v;
	while (s[i]) {
		unsigned char c = (unsigned char)s[i];
		size_t k = c < 0x80 ? 1 : bg_utf8_len((const unsigned char *)s + i);

		if (k) {
			bg_strbuf_addn(&sb, s + i, k);
			i += k;
		} else {
			bg_strbuf_addf(&sb, "\\x%02x", c);
			i++;
		}
	}
	v = json_stringn(sb.buf, sb.len);
	bg_strbuf_release(&sb);
	/* the checks above are jansson's own; should they ever differ, the
	 * text keeps only its ASCII rather than vanish */
	if (!v) {
		for (i = 0; s[i]; i++)
			if ((unsigned char)s[i] >= 0x80)
				bg_strbuf_addf(&sb, "\\x%02x", (unsigned char)s[i]);
			else
				bg_strbuf_addch(&sb, s[i]);
		v = json_stringn(sb.buf, sb.len);
		bg_strbuf_release(&sb);
	}
	return v;
}

void bg_py_float_repr(struct bg_strbuf *out, double x)
{
	bg_value_float_repr(out, x);
}

/*
 * A DOM copy of a jansson value in arena a, sharing jansson's strings (valid
 * while v lives): the serialisers below are the DOM's, so jansson documents
 * and registry documents are written by one implementation.
 */
static struct bg_value *to_value(struct bg_arena *a, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		struct bg_value *obj = bg_value_new_object(a, json_object_size(v));
		const char *k;
		json_t *x;

		json_object_foreach((json_t *)v, k, x)
			bg_value_set_new_key(a, obj, k, to_value(a, x));
		return obj;
	}
	case JSON_ARRAY: {
		struct bg_value *arr = bg_value_new_array(a, json_array_size(v));
		size_t i;
		json_t *x;

		json_array_foreach(v, i, x)
			bg_value_append(a, arr, to_value(a, x));
		return arr;
	}
	case JSON_STRING:
		return bg_value_new_string_shared(a, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return bg_value_new_int(a, (int64_t)json_integer_value(v));
	case JSON_REAL:
		return bg_value_new_real(a, json_real_value(v));
	case JSON_TRUE:
		return bg_value_true();
	case JSON_FALSE:
		return bg_value_false();
	case JSON_NULL:
		break;
	}
	return bg_value_null();
}

/* s[0..len) with each lone surrogate written as its escape (\udc80), for a message. */
static void add_surrogates_escaped(struct bg_strbuf *out, const char *s, size_t len)
{
	size_t at;

	while ((at = bg_value_surrogate_find(s, len)) < len) {
		bg_strbuf_addn(out, s, at);
		bg_strbuf_addf(out, "\\u%04x", bg_surrogate_value((const unsigned char *)s + at));
		s += at + 3;
		len -= at + 3;
	}
	bg_strbuf_addn(out, s, len);
}

/* Whether s[0..len) holds a lone surrogate (bg_value_surrogate_find). */
static bool has_surrogate(const char *s, size_t len)
{
	return bg_value_surrogate_find(s, len) < len;
}

/* jansson's copy of v, or NULL at the first non-finite real, integer
 * beyond 64 bits or text holding a lone surrogate (a key's: *bad is the
 * object): its member path is then left in path and it in *bad. */
/* s[0..len) with each lone surrogate (bg_value_surrogate_find) replaced by
 * U+FFFD, which is as long (3 bytes); the caller frees it. */
static char *surrogates_replaced(const char *s, size_t len)
{
	char *copy = bg_xstrndup(s, len);
	size_t at = 0, k;

	while (at < len && (k = bg_value_surrogate_find(copy + at, len - at)) < len - at) {
		memcpy(copy + at + k, "\xef\xbf\xbd", 3);
		at += k + 3;
	}
	return copy;
}

/* lossy: what JSON cannot hold is read as nearly as it can (bg_value_to_json_lossy) */
static json_t *from_value(const struct bg_value *v, struct bg_strbuf *path, const struct bg_value **bad, bool lossy)
{
	size_t at = path->len;

	switch (v ? v->type : BG_VNULL) {
	case BG_VOBJECT: {
		json_t *obj = json_object(), *x;
		const char *k;
		struct bg_value *m;
		BG_VALUE_OBJECT_FOREACH(v, k, m) {
			bg_strbuf_addf(path, "%s%s", at ? "." : "", k);
			if (has_surrogate(k, strlen(k)) && !lossy) {
				*bad = v;
				json_decref(obj);
				return NULL;
			}
			if (!(x = from_value(m, path, bad, lossy))) {
				json_decref(obj);
				return NULL;
			}
			bg_strbuf_setlen(path, at);
			if (has_surrogate(k, strlen(k))) {
				char *kk = surrogates_replaced(k, strlen(k));
				json_object_set_new_nocheck(obj, kk, x);
				free(kk);
			} else {
				json_object_set_new_nocheck(obj, k, x);
			}
		}
		return obj;
	}
	case BG_VARRAY: {
		json_t *arr = json_array(), *x;
		struct bg_value *item;
		size_t i;
		BG_VALUE_ARRAY_FOREACH(v, i, item) {
			bg_strbuf_addf(path, "[%zu]", i);
			if (!(x = from_value(item, path, bad, lossy))) {
				json_decref(arr);
				return NULL;
			}
			bg_strbuf_setlen(path, at);
			json_array_append_new(arr, x);
		}
		return arr;
	}
	case BG_VSTRING:
		*bad = v;
		if (has_surrogate(v->u.s, v->n)) {
			char *t;
			json_t *x;
			if (!lossy)
				return NULL;
			t = surrogates_replaced(v->u.s, v->n);
			x = json_stringn_nocheck(t, v->n);
			free(t);
			return x;
		}
		return json_stringn_nocheck(v->u.s, v->n);
	case BG_VINT:
		return json_integer((json_int_t)v->u.i);
	case BG_VREAL:
		*bad = v;
		return isfinite(v->u.d) ? json_real(v->u.d) : lossy ? json_null() : NULL;
	case BG_VBIGINT:
		*bad = v;
		return lossy ? json_stringn_nocheck(v->u.s, v->n) : NULL;
	case BG_VTRUE:
		return json_true();
	case BG_VFALSE:
		return json_false();
	default:
		return json_null();
	}
}

int bg_value_to_json(const struct bg_value *v, const char *what, json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, shown = BG_STRBUF_INIT, where = BG_STRBUF_INIT;
	const struct bg_value *bad = NULL;
	const char *why = "which JSON cannot hold; write a number or null";
	int rc = BG_OK;

	*out = NULL;
	if (v && !(*out = from_value(v, &path, &bad, false))) {
		if (bg_value_is_object(bad) || bg_value_is_string(bad))
			why = "which benchgate's records cannot hold (UTF-8 cannot encode it); replace the escape";
		if (bg_value_is_object(bad)) {
			bg_strbuf_adds(&shown, "a key holding a lone surrogate");
		} else if (bg_value_is_string(bad)) {
			size_t at = bg_value_surrogate_find(bad->u.s, bad->n);
			bg_strbuf_addf(&shown, "a text holding the lone surrogate '\\u%04x' (a JSON escape without its pair)",
				       bg_surrogate_value((const unsigned char *)bad->u.s + at));
		} else if (bg_value_is_bigint(bad)) {
			if (bad->n <= 40)
				bg_strbuf_addn(&shown, bad->u.s, bad->n);
			else
				bg_strbuf_addf(&shown, "an integer of %u digits", bad->n - (bad->u.s[0] == '-'));
			why = "beyond the 64 bits benchgate's records hold; write it as a string";
		} else {
			bg_value_float_repr(&shown, bg_value_real(bad));
		}
		if (path.len) {
			add_surrogates_escaped(&where, path.buf, path.len); /* a key's, as its escape */
			rc = bg_error(ctx, BG_EPRECOND, "%s: '%s' is %s, %s", what, where.buf, shown.buf, why);
		} else {
			rc = bg_error(ctx, BG_EPRECOND, "%s is %s, %s", what, shown.buf, why);
		}
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&where);
	bg_strbuf_release(&shown);
	return rc;
}

json_t *bg_value_to_json_lossy(const struct bg_value *v)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	const struct bg_value *bad = NULL;
	json_t *out = v ? from_value(v, &path, &bad, true) : NULL;

	bg_strbuf_release(&path);
	return out;
}

int bg_json_load_file_py(const char *path, const char *display, bool lossy, json_t **out, struct bg_ctx *ctx)
{
	struct bg_arena *a = bg_arena_new();
	struct bg_value *v;
	int rc;

	*out = NULL;
	if (!(rc = bg_value_parse_file(a, path, display, &v, ctx)) && lossy)
		*out = bg_value_to_json_lossy(v);
	else if (!rc)
		rc = bg_value_to_json(v, display, out, ctx);
	bg_arena_free(a);
	return rc;
}

void bg_json_dump_py(struct bg_strbuf *out, const json_t *v, int indent, bool sort_keys)
{
	struct bg_arena *a = bg_arena_new();

	bg_value_dump(out, to_value(a, v), indent, sort_keys);
	bg_arena_free(a);
}

void bg_py_repr(struct bg_strbuf *out, const json_t *v)
{
	struct bg_arena *a;

	if (!v) {
		bg_strbuf_adds(out, "None");
		return;
	}
	a = bg_arena_new();
	bg_value_py_repr(out, to_value(a, v));
	bg_arena_free(a);
}

void bg_py_str(struct bg_strbuf *out, const json_t *v)
{
	if (v && json_is_string(v))
		bg_strbuf_addn(out, json_string_value(v), json_string_length(v));
	else
		bg_py_repr(out, v);
}

bool bg_py_truthy(const json_t *v)
{
	if (!v)
		return false;
	switch (json_typeof(v)) {
	case JSON_OBJECT: return json_object_size(v) > 0;
	case JSON_ARRAY: return json_array_size(v) > 0;
	case JSON_STRING: return json_string_length(v) > 0;
	case JSON_INTEGER: return json_integer_value(v) != 0;
	case JSON_REAL: return json_real_value(v) != 0.0;
	case JSON_TRUE: return true;
	case JSON_FALSE: return false;
	case JSON_NULL: return false;
	}
	return false;
}

static bool py_number(const json_t *v, double *d)
{
	if (json_is_integer(v)) {
		*d = (double)json_integer_value(v);
		return true;
	}
	if (json_is_real(v)) {
		*d = json_real_value(v);
		return true;
	}
	if (json_is_boolean(v)) { /* Python: True == 1 */
		*d = json_is_true(v) ? 1.0 : 0.0;
		return true;
	}
	return false;
}

bool bg_py_equal(const json_t *a, const json_t *b)
{
	double x, y;

	if (!a || !b)
		return (!a || json_is_null(a)) && (!b || json_is_null(b));
	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	if (py_number(a, &x) && py_number(b, &y))
		return x == y;
	return json_equal((json_t *)a, (json_t *)b) != 0;
}
