/*
 * json.c - JSON loading with file:line:col errors and CPython-compatible
 * serialisation (json.dumps, str, repr). See json.h.
 */
#include "benchgate/json.h"
#include "benchgate/fsutil.h"
#include "benchgate/value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bg_json_load_buffer(const char *data, size_t len, const char *display,
			json_t **out, struct bg_ctx *ctx)
{
	json_error_t err;
	json_t *v;

	*out = NULL;
	if (len == 0)
		return bg_error(ctx, BG_ECHECK, "%s: file is empty; expected a JSON object", display);
	v = json_loadb(data, len, JSON_DECODE_ANY, &err);
	if (!v) {
		int line = err.line > 0 ? err.line : 1;
		int col = err.column > 0 ? err.column : 1;
		return bg_error(ctx, BG_ECHECK, "%s:%d:%d: invalid JSON: %s", display, line, col, err.text);
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

int bg_strcmp_cp(const char *a, const char *b)
{
	return strcmp(a, b); /* C strcmp compares as unsigned char */
}

static int cmp_key(const void *a, const void *b)
{
	return bg_strcmp_cp(*(const char *const *)a, *(const char *const *)b);
}

const char **bg_json_sorted_keys(const json_t *obj, size_t *count)
{
	size_t n = json_object_size(obj), i = 0;
	const char **keys = bg_xcalloc(n ? n : 1, sizeof(*keys));
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v) {
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, n, sizeof(*keys), cmp_key);
	*count = n;
	return keys;
}

static void dump_string(struct bg_strbuf *out, const char *str, size_t len)
{
	bg_value_json_string(out, str, len);
}

void bg_py_float_repr(struct bg_strbuf *out, double x)
{
	bg_value_float_repr(out, x);
}

void bg_py_repr_string(struct bg_strbuf *out, const char *s, size_t len)
{
	bg_value_repr_string(out, s, len);
}

static void dump_real(struct bg_strbuf *out, double x)
{
	if (isnan(x))
		bg_strbuf_adds(out, "NaN");
	else if (isinf(x))
		bg_strbuf_adds(out, x < 0 ? "-Infinity" : "Infinity");
	else
		bg_py_float_repr(out, x);
}

static void newline_indent(struct bg_strbuf *out, int indent, int level)
{
	bg_strbuf_addch(out, '\n');
	for (int i = 0; i < indent * level; i++)
		bg_strbuf_addch(out, ' ');
}

static void dump_value(struct bg_strbuf *out, const json_t *v, int indent, bool sort, int level)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n, i;
		const char **keys;

		if (json_object_size(v) == 0) {
			bg_strbuf_adds(out, "{}");
			return;
		}
		if (sort) {
			keys = bg_json_sorted_keys(v, &n);
		} else {
			const char *k;
			json_t *x;
			n = json_object_size(v);
			keys = bg_xcalloc(n, sizeof(*keys));
			i = 0;
			json_object_foreach((json_t *)v, k, x) {
				(void)x;
				keys[i++] = k;
			}
		}
		bg_strbuf_addch(out, '{');
		for (i = 0; i < n; i++) {
			if (i)
				bg_strbuf_addch(out, ',');
			if (indent >= 0)
				newline_indent(out, indent, level + 1);
			else if (i)
				bg_strbuf_addch(out, ' ');
			dump_string(out, keys[i], strlen(keys[i]));
			bg_strbuf_adds(out, ": ");
			dump_value(out, json_object_get(v, keys[i]), indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, '}');
		free(keys);
		return;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);

		if (n == 0) {
			bg_strbuf_adds(out, "[]");
			return;
		}
		bg_strbuf_addch(out, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				bg_strbuf_addch(out, ',');
			if (indent >= 0)
				newline_indent(out, indent, level + 1);
			else if (i)
				bg_strbuf_addch(out, ' ');
			dump_value(out, json_array_get(v, i), indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, ']');
		return;
	}
	case JSON_STRING:
		dump_string(out, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		bg_strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	case JSON_REAL:
		dump_real(out, json_real_value(v));
		return;
	case JSON_TRUE:
		bg_strbuf_adds(out, "true");
		return;
	case JSON_FALSE:
		bg_strbuf_adds(out, "false");
		return;
	case JSON_NULL:
		bg_strbuf_adds(out, "null");
		return;
	}
}

void bg_json_dump_py(struct bg_strbuf *out, const json_t *v, int indent, bool sort_keys)
{
	dump_value(out, v, indent, sort_keys, 0);
}

void bg_py_repr(struct bg_strbuf *out, const json_t *v)
{
	if (!v) {
		bg_strbuf_adds(out, "None");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_STRING:
		bg_py_repr_string(out, json_string_value(v), json_string_length(v));
		return;
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		int first = 1;

		bg_strbuf_addch(out, '{');
		json_object_foreach((json_t *)v, k, x) {
			if (!first)
				bg_strbuf_adds(out, ", ");
			first = 0;
			bg_py_repr_string(out, k, strlen(k));
			bg_strbuf_adds(out, ": ");
			bg_py_repr(out, x);
		}
		bg_strbuf_addch(out, '}');
		return;
	}
	case JSON_ARRAY:
		bg_strbuf_addch(out, '[');
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				bg_strbuf_adds(out, ", ");
			bg_py_repr(out, json_array_get(v, i));
		}
		bg_strbuf_addch(out, ']');
		return;
	case JSON_INTEGER:
		bg_strbuf_addf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	case JSON_REAL:
		bg_py_float_repr(out, json_real_value(v));
		return;
	case JSON_TRUE:
		bg_strbuf_adds(out, "True");
		return;
	case JSON_FALSE:
		bg_strbuf_adds(out, "False");
		return;
	case JSON_NULL:
		bg_strbuf_adds(out, "None");
		return;
	}
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
