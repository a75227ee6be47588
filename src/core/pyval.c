/*
 * pyval.c - Python value semantics over jansson values (see pyval.h).
 */
#include "core/pyval.h"
#include "benchgate/json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool bg_py_is_number(const json_t *v)
{
	return v && (json_is_integer(v) || json_is_real(v) || json_is_boolean(v));
}

bool bg_py_is_int(const json_t *v, long long *out)
{
	if (!v)
		return false;
	if (json_is_integer(v)) {
		if (out)
			*out = json_integer_value(v);
		return true;
	}
	if (json_is_boolean(v)) {
		if (out)
			*out = json_is_true(v) ? 1 : 0;
		return true;
	}
	return false;
}

static double num(const json_t *v)
{
	if (json_is_integer(v))
		return (double)json_integer_value(v);
	if (json_is_real(v))
		return json_real_value(v);
	return json_is_true(v) ? 1.0 : 0.0;
}

static int type_rank(const json_t *v)
{
	if (!v || json_is_null(v))
		return 0;
	if (bg_py_is_number(v))
		return 1;
	if (json_is_string(v))
		return 2;
	if (json_is_array(v))
		return 3;
	return 4;
}

int bg_py_cmp(const json_t *a, const json_t *b, bool *type_error)
{
	int ra, rb;

	if (bg_py_equal(a, b))
		return 0;
	ra = type_rank(a);
	rb = type_rank(b);
	if (ra != rb || ra == 0 || ra == 4) {
		*type_error = true;
		return ra < rb ? -1 : ra > rb ? 1 : 0;
	}
	if (ra == 1) {
		long long x, y;
		if (bg_py_is_int(a, &x) && bg_py_is_int(b, &y))
			return x < y ? -1 : x > y;
		double p = num(a), q = num(b);
		return p < q ? -1 : p > q;
	}
	if (ra == 2)
		return strcmp(json_string_value(a), json_string_value(b)) < 0 ? -1 : 1;
	for (size_t i = 0;; i++) {
		json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
		int c;
		if (!x || !y)
			return !x && y ? -1 : (x && !y ? 1 : 0);
		c = bg_py_cmp(x, y, type_error);
		if (c)
			return c;
	}
}

/* Python's str.isspace for one code point. */
static bool py_space(unsigned long c)
{
	return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f) || c == 0x85 ||
	       c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

static size_t cp_len(unsigned char c)
{
	return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

static unsigned long cp_at(const unsigned char *s, size_t n)
{
	unsigned long c = s[0];
	if (n == 1)
		return c;
	c &= (unsigned long)(0xff >> (n + 1));
	for (size_t i = 1; i < n; i++)
		c = (c << 6) | (s[i] & 0x3f);
	return c;
}

void bg_py_strip(const char *s, size_t len, size_t *start, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, end = len, last_keep = 0;
	bool any = false;

	while (i < len) {
		size_t n = cp_len(p[i]);
		if (i + n > len)
			n = len - i;
		if (!py_space(cp_at(p + i, n)))
			break;
		i += n;
	}
	*start = i;
	for (size_t j = i; j < len;) {
		size_t n = cp_len(p[j]);
		if (j + n > len)
			n = len - j;
		if (!py_space(cp_at(p + j, n))) {
			last_keep = j + n;
			any = true;
		}
		j += n;
	}
	end = any ? last_keep : i;
	*out_len = end - i;
}

bool bg_py_str_blank(const json_t *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t start, n;

	bg_py_str(&sb, v);
	bg_py_strip(sb.buf, sb.len, &start, &n);
	bg_strbuf_release(&sb);
	return n == 0;
}

static bool parse_py_float_string(const char *s, size_t len, double *out)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t start, n;
	char *end;
	bool ok;

	bg_py_strip(s, len, &start, &n);
	for (size_t i = start; i < start + n; i++) {
		char c = s[i];
		if (c == '_') {
			/* Python allows one underscore between digits */
			if (i == start || i + 1 >= start + n || !isdigit((unsigned char)s[i - 1]) ||
			    !isdigit((unsigned char)s[i + 1])) {
				bg_strbuf_release(&sb);
				return false;
			}
			continue;
		}
		if (c == 'x' || c == 'X' || c == 'p' || c == 'P') {
			bg_strbuf_release(&sb);
			return false; /* strtod would accept hex; Python float() does not */
		}
		bg_strbuf_addch(&sb, c);
	}
	if (sb.len == 0) {
		bg_strbuf_release(&sb);
		return false;
	}
	errno = 0;
	*out = strtod(sb.buf, &end);
	ok = *end == '\0';
	if (ok && isalpha((unsigned char)sb.buf[sb.buf[0] == '-' || sb.buf[0] == '+'])) {
		/* only inf, infinity, nan in any case */
		const char *w = sb.buf + (sb.buf[0] == '-' || sb.buf[0] == '+');
		ok = strcasecmp(w, "inf") == 0 || strcasecmp(w, "infinity") == 0 ||
		     strcasecmp(w, "nan") == 0;
	}
	bg_strbuf_release(&sb);
	return ok;
}

bool bg_py_to_float(const json_t *v, double *out)
{
	if (!v)
		return false;
	if (bg_py_is_number(v)) {
		*out = num(v);
		return true;
	}
	if (json_is_string(v))
		return parse_py_float_string(json_string_value(v), json_string_length(v), out);
	return false;
}

bool bg_py_to_int(const json_t *v, long long *out)
{
	if (!v)
		return false;
	if (bg_py_is_int(v, out))
		return true;
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (!isfinite(d) || fabs(d) >= 9.2e18)
			return false;
		*out = (long long)d; /* truncation toward zero, as int() */
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t start, n;
		char buf[64];
		size_t k = 0;
		char *end;

		bg_py_strip(s, json_string_length(v), &start, &n);
		if (n == 0 || n >= sizeof(buf))
			return false;
		for (size_t i = start; i < start + n; i++) {
			if (s[i] == '_' && i > start && i + 1 < start + n && isdigit((unsigned char)s[i - 1]) &&
			    isdigit((unsigned char)s[i + 1]))
				continue;
			if (!isdigit((unsigned char)s[i]) && !(i == start && (s[i] == '+' || s[i] == '-')))
				return false;
			buf[k++] = s[i];
		}
		buf[k] = '\0';
		errno = 0;
		*out = strtoll(buf, &end, 10);
		return errno == 0 && *end == '\0' && k > 0 && isdigit((unsigned char)buf[k - 1]);
	}
	return false;
}

void bg_py_lower(struct bg_strbuf *out, const char *s)
{
	for (; *s; s++)
		bg_strbuf_addch(out, (char)tolower((unsigned char)*s));
}

void bg_py_prefix(struct bg_strbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, count = 0, len = strlen(s);

	while (i < len && count < n) {
		i += cp_len(p[i]);
		count++;
	}
	if (i > len)
		i = len;
	bg_strbuf_addn(out, s, i);
}
