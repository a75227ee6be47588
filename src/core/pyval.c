/*
 * pyval.c - Python string semantics over UTF-8 text (see pyval.h).
 */
#include "core/pyval.h"
#include "core/fmath.h"
#include "benchgate/status.h"
#include "benchgate/value.h"

#include <math.h>

#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
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

/* The code point of the well-formed UTF-8 sequence at p[0..len), its
 * length in *n; false (and *n 1) for a byte that starts none. */
static bool utf8_decode(const unsigned char *p, size_t len, unsigned *cp, size_t *n)
{
	unsigned c = p[0], min;
	size_t k;

	*n = 1;
	*cp = c;
	if (c < 0x80)
		return true;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, min = 0x80, c &= 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, min = 0x800, c &= 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, min = 0x10000, c &= 0x07;
	else
		return false;
	if (k > len)
		return false;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return false;
		c = (c << 6) | (p[i] & 0x3fu);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return false;
	*cp = c;
	*n = k;
	return true;
}

#include "core/pylower_table.h"

static bool in_ranges(const struct bg_cp_range *r, size_t n, unsigned cp)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cp < r[mid].lo)
			hi = mid;
		else if (cp > r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static int cmp_lower_map(const void *key, const void *entry)
{
	unsigned cp = *(const unsigned *)key, at = ((const struct bg_lower_map *)entry)->cp;

	return cp < at ? -1 : cp > at;
}

/* str.lower() of the character cp as UTF-8, or NULL when it is cp itself. */
static const char *lower_of(unsigned cp)
{
	const struct bg_lower_map *m = bsearch(&cp, lower_map, sizeof(lower_map) / sizeof(lower_map[0]),
					       sizeof(lower_map[0]), cmp_lower_map);

	return m ? m->utf8 : NULL;
}

#define IGNORABLE(c) in_ranges(case_ignorable, sizeof(case_ignorable) / sizeof(case_ignorable[0]), (c))
#define CASED(c) in_ranges(cased, sizeof(cased) / sizeof(cased[0]), (c))

/* CPython's handle_capital_sigma: U+03A3 at cps[i] lowers to final sigma
 * after a cased letter (case-ignorables between) and not before one. A
 * byte that is no UTF-8 character (cps[] holds it as is) is neither. */
static bool final_sigma(const unsigned *cps, size_t n, size_t i)
{
	size_t j;
	bool fin;

	for (j = i; j > 0 && IGNORABLE(cps[j - 1]); j--)
		;
	fin = j > 0 && CASED(cps[j - 1]);
	if (fin) {
		for (j = i + 1; j < n && IGNORABLE(cps[j]); j++)
			;
		fin = j == n || !CASED(cps[j]);
	}
	return fin;
}

void bg_py_lower(struct bg_strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, k, ncp = 0;
	struct bg_strbuf low = BG_STRBUF_INIT;
	unsigned *cps;
	size_t *lens;
	char *d;

	for (i = 0; i + 8 <= n; i += 8) { /* eight bytes at a time: any not ASCII? */
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (w & 0x8080808080808080u)
			break;
	}
	while (i < n && p[i] < 0x80)
		i++;
	if (i == n) { /* ASCII: in place, the same length (s may lie in out) */
		bg_strbuf_grow(out, n);
		d = out->buf + out->len;
		for (i = 0; i < n; i++) {
			unsigned char c = p[i];
			d[i] = (char)((unsigned)(c - 'A') < 26u ? c + ('a' - 'A') : c);
		}
		bg_strbuf_setlen(out, out->len + n);
		return;
	}
	/* str.lower(): one character at a time, U+03A3 by its neighbours;
	 * built apart, as s may lie in out and the text may grow */
	cps = bg_xcalloc(n + 1, sizeof(*cps));
	lens = bg_xcalloc(n + 1, sizeof(*lens));
	for (i = 0; i < n; i += lens[ncp++])
		if (!utf8_decode(p + i, n - i, &cps[ncp], &lens[ncp]))
			cps[ncp] = 0x110000; /* no character: kept as it is */
	for (i = 0, k = 0; k < ncp; i += lens[k++]) {
		unsigned c = cps[k];
		const char *m;
		if (c < 0x80)
			bg_strbuf_addch(&low, (char)((unsigned)(c - 'A') < 26u ? c + ('a' - 'A') : c));
		else if (c == 0x3a3)
			bg_strbuf_adds(&low, final_sigma(cps, ncp, k) ? "\xcf\x82" : "\xcf\x83");
		else if (c < 0x110000 && (m = lower_of(c)))
			bg_strbuf_adds(&low, m);
		else
			bg_strbuf_addn(&low, s + i, lens[k]);
	}
	bg_strbuf_addn(out, low.buf, low.len);
	bg_strbuf_release(&low);
	free(cps);
	free(lens);
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

/* The first code point of every run of ten Unicode decimal digits (general
 * category Nd) outside ASCII, Unicode 14.0 as CPython 3.11 has it. */
static const unsigned decimal_zeros[] = {
	0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
	0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80,
	0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50,
	0xabf0, 0xff10, 0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450,
	0x114d0, 0x11650, 0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60,
	0x16ac0, 0x16b50, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950,
	0x1fbf0,
};

int bg_py_decimal(unsigned long cp)
{
	if (cp < 0x80)
		return cp >= '0' && cp <= '9' ? (int)(cp - '0') : -1;
	for (size_t i = 0; i < sizeof(decimal_zeros) / sizeof(decimal_zeros[0]); i++)
		if (cp >= decimal_zeros[i] && cp - decimal_zeros[i] < 10)
			return (int)(cp - decimal_zeros[i]);
	return -1;
}

void bg_py_number_ascii(struct bg_strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		unsigned cp;
		size_t n;
		int d;

		if (p[i] < 0x80) {
			bg_strbuf_addch(out, (char)p[i++]);
			continue;
		}
		if (!utf8_decode(p + i, len - i, &cp, &n)) {
			bg_strbuf_addch(out, '?');
			i++;
			continue;
		}
		i += n;
		if ((d = bg_py_decimal(cp)) >= 0)
			bg_strbuf_addch(out, (char)('0' + d));
		else if (py_space(cp))
			bg_strbuf_addch(out, ' ');
		else
			bg_strbuf_addch(out, '?');
	}
}
