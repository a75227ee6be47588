/*
 * pyval.c - Python string semantics over UTF-8 text (see pyval.h).
 */
#include "core/pyval.h"
#include "core/fmath.h"

#include <math.h>

#include <stdbool.h>
#include <string.h>

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

size_t bg_py_line_break(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!len)
		return 0;
	if (p[0] == '\r')
		return len > 1 && p[1] == '\n' ? 2 : 1;
	if (p[0] == '\n' || p[0] == '\v' || p[0] == '\f' || (p[0] >= 0x1c && p[0] <= 0x1e))
		return 1;
	if (p[0] == 0xc2 && len > 1 && p[1] == 0x85)
		return 2;
	if (p[0] == 0xe2 && len > 2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
		return 3;
	return 0;
}

void bg_py_lower(struct bg_strbuf *out, const char *s)
{
	size_t n = strlen(s);
	char *d;

	bg_strbuf_grow(out, n);
	d = out->buf + out->len;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		d[i] = (char)((unsigned)(c - 'A') < 26u ? c + ('a' - 'A') : c);
	}
	bg_strbuf_setlen(out, out->len + n);
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

double bg_py_floordiv(double p, double q)
{
	double mod = fmod(p, q), div = (p - mod) / q, fl;

	/* fmod is exact, so p - mod is mathematically a multiple of q; the
	 * remainder takes the sign of the divisor */
	if (mod != 0 && (q < 0) != (mod < 0))
		div -= 1.0;
	if (div == 0)
		return copysign(0.0, p / q); /* the sign of the true quotient */
	/* snap the quotient to the nearest integral value */
	fl = bg_floor(div);
	if (div - fl > 0.5)
		fl += 1.0;
	return fl;
}
