/*
 * pyformat.c - format(value, spec) as CPython 3.11's Python/formatter_unicode.c
 * does it: the spec parsed as parse_internal_render_format_spec parses it,
 * numbers laid out as calc_number_widths and fill_number lay them out
 * (sign, prefix, grouped digits with the '0' padding inside the groups,
 * decimal point, remainder), reals written as PyOS_double_to_string writes
 * them (glibc's printf rounds exactly, as CPython's dtoa does).
 * See core/pyformat.h for the contract.
 */
#include "core/pyformat.h"
#include "core/bigint.h"
#include "core/bytes.h"
#include "core/pyval.h"
#include "benchgate/status.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spec {
	char fill[5];        /* one character, UTF-8 */
	char align;          /* '<', '>', '=', '^' */
	char sign;           /* '+', '-', ' ' or 0 */
	bool no_neg_0;       /* 'z' */
	bool alternate;      /* '#' */
	long width;          /* -1: none */
	char sep;            /* ',', '_' or 0 */
	int group;           /* digits a group: 3, 4 ('_' in b, o, x, X) or 0 */
	long precision;      /* -1: none */
	unsigned long type;  /* a code point; 0: none */
};

static int fail(char *why, size_t size, const char *fmt, ...) BG_PRINTF(3, 4);
static int fail(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return BG_ECHECK;
}

/* The code point at s[*i] (advanced past it); the text is valid UTF-8. */
static unsigned long next_cp(const char *s, size_t n, size_t *i)
{
	const unsigned char *p = (const unsigned char *)s + *i;
	unsigned long c = p[0];
	size_t k = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;

	if (*i + k > n)
		k = n - *i;
	if (k > 1) {
		c &= 0x3fu >> (k - 1);
		for (size_t j = 1; j < k; j++)
			c = (c << 6) | (p[j] & 0x3fu);
	}
	*i += k;
	return c;
}

/* c as UTF-8 in buf, NUL-terminated (buf holds 5 bytes). */
static void put_cp(char *buf, unsigned long c)
{
	*bg_utf8_put(buf, c) = '\0';
}

/* The type code as it is quoted in a message. */
static const char *type_text(unsigned long type, char buf[5])
{
	put_cp(buf, type);
	return buf;
}

/* Python's get_integer: Unicode decimal digits; the count read, or -1 past
 * BG_PY_FORMAT_MAX. */
static long get_integer(const unsigned long *cp, size_t n, size_t *pos, long *value)
{
	long count = 0, v = 0;
	int d;

	while (*pos < n && (d = bg_py_decimal(cp[*pos])) >= 0) {
		v = v * 10 + d;
		if (v > BG_PY_FORMAT_MAX)
			return -1;
		++*pos;
		count++;
	}
	*value = v;
	return count;
}

static bool is_align(unsigned long c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

/*
 * The spec parsed with the defaults of the value's type (default_type 's'
 * for a string, 'd' for an integer, 0 for a real; default_align '<' for a
 * string, '>' for a number), as parse_internal_render_format_spec.
 */
static int parse_spec(const char *text, size_t len, unsigned long default_type, char default_align,
		      struct spec *f, char *why, size_t size)
{
	unsigned long cp[64];
	size_t n = 0, pos = 0, i = 0;
	bool fill_given = false, align_given = false;
	char tbuf[5];

	memset(f, 0, sizeof(*f));
	f->fill[0] = ' ';
	f->align = default_align;
	f->width = f->precision = -1;
	f->type = default_type;
	while (i < len) {
		if (n == sizeof(cp) / sizeof(cp[0]))
			return fail(why, size, "invalid format specifier '%.*s'", (int)len, text);
		cp[n++] = next_cp(text, len, &i);
	}
	if (n >= 2 && is_align(cp[1])) {
		f->align = (char)cp[1];
		put_cp(f->fill, cp[0]);
		fill_given = align_given = true;
		pos = 2;
	} else if (n >= 1 && is_align(cp[0])) {
		f->align = (char)cp[0];
		align_given = true;
		pos = 1;
	}
	if (pos < n && (cp[pos] == '+' || cp[pos] == '-' || cp[pos] == ' '))
		f->sign = (char)cp[pos++];
	if (pos < n && cp[pos] == 'z') {
		f->no_neg_0 = true;
		pos++;
	}
	if (pos < n && cp[pos] == '#') {
		f->alternate = true;
		pos++;
	}
	if (!fill_given && pos < n && cp[pos] == '0') {
		strcpy(f->fill, "0");
		if (!align_given && default_align == '>')
			f->align = '=';
		pos++;
	}
	switch (get_integer(cp, n, &pos, &f->width)) {
	case -1: return fail(why, size, "the width is above %ld", BG_PY_FORMAT_MAX);
	case 0: f->width = -1; break;
	default: break;
	}
	if (pos < n && cp[pos] == ',') {
		f->sep = ',';
		pos++;
	}
	if (pos < n && cp[pos] == '_') {
		if (f->sep)
			return fail(why, size, "',' and '_' cannot both be given");
		f->sep = '_';
		pos++;
	}
	if (pos < n && cp[pos] == ',' && f->sep == '_')
		return fail(why, size, "',' and '_' cannot both be given");
	if (pos < n && cp[pos] == '.') {
		long got;
		pos++;
		got = get_integer(cp, n, &pos, &f->precision);
		if (got < 0)
			return fail(why, size, "the precision is above %ld", BG_PY_FORMAT_MAX);
		if (got == 0)
			return fail(why, size, "'.' must be followed by the precision");
	}
	if (n - pos > 1)
		return fail(why, size, "invalid format specifier '%.*s'", (int)len, text);
	if (n - pos == 1)
		f->type = cp[pos];
	if (f->sep) {
		switch (f->type) {
		case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
			f->group = 3;
			break;
		case 'b': case 'o': case 'x': case 'X':
			if (f->sep == '_') {
				f->group = 4;
				break;
			}
			/* fall through */
		default:
			return fail(why, size, "'%c' cannot be given with the type '%s'", f->sep,
				    type_text(f->type ? f->type : 's', tbuf));
		}
	}
	return BG_OK;
}

static void add_fill(struct bg_strbuf *out, const char *fill, long count)
{
	for (long i = 0; i < count; i++)
		bg_strbuf_adds(out, fill);
}

static size_t cp_count(const char *s, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		count += ((unsigned char)s[i] & 0xc0) != 0x80;
	return count;
}

/* format_string_internal */
static int format_string(struct bg_strbuf *out, const char *s, size_t len, const char *text, size_t n, char *why,
			 size_t size)
{
	struct spec f;
	struct bg_strbuf cut = BG_STRBUF_INIT;
	char tbuf[5];
	size_t count;
	long pad, left;
	int rc;

	if ((rc = parse_spec(text, n, 's', '<', &f, why, size)))
		return rc;
	if (f.type != 's')
		return fail(why, size, "unknown format code '%s' for a string", type_text(f.type, tbuf));
	if (f.sign)
		return fail(why, size, "a sign is not allowed for a string");
	if (f.no_neg_0)
		return fail(why, size, "'z' is not allowed for a string");
	if (f.alternate)
		return fail(why, size, "'#' is not allowed for a string");
	if (f.align == '=')
		return fail(why, size, "'=' alignment is not allowed for a string");
	if (f.precision >= 0) { /* the first precision code points */
		bg_py_prefix(&cut, s, (size_t)f.precision);
		s = cut.buf ? cut.buf : "";
		len = cut.len;
	}
	count = cp_count(s, len);
	pad = f.width > (long)count ? f.width - (long)count : 0;
	left = f.align == '>' ? pad : f.align == '^' ? pad / 2 : 0;
	add_fill(out, f.fill, left);
	bg_strbuf_addn(out, s, len);
	add_fill(out, f.fill, pad - left);
	bg_strbuf_release(&cut);
	return BG_OK;
}

/*
 * digits[0..n_digits) grouped as _PyUnicode_InsertThousandsGrouping groups
 * them (group 0: none), padded with '0' to min_width characters (the
 * separators count), appended to out.
 */
static void group_digits(struct bg_strbuf *out, const char *digits, long n_digits, long min_width, int group,
			 char sep)
{
	long cap = 2 * (n_digits + (min_width > 0 ? min_width : 0)) + 8, at = cap;
	char *buf = bg_xmalloc((size_t)cap);
	long remaining = n_digits, mw = min_width, len, zeros, chars;
	bool use_sep = false;

#define MAXL(a, b) ((a) > (b) ? (a) : (b))
#define MINL(a, b) ((a) < (b) ? (a) : (b))
	/* built right to left: a separator, the group's digits, its zeros;
	 * without grouping, one piece (CPython's loop is not entered) */
	for (;;) {
		len = MAXL(MAXL(remaining, mw), 1);
		if (group > 0)
			len = MINL(group, len);
		zeros = MAXL(0, len - remaining);
		chars = MAXL(0, MINL(remaining, len));
		if (use_sep)
			buf[--at] = sep;
		at -= chars;
		memcpy(buf + at, digits + remaining - chars, (size_t)chars);
		at -= zeros;
		memset(buf + at, '0', (size_t)zeros);
		use_sep = true;
		remaining -= chars;
		mw -= len;
		if (group <= 0 || (remaining <= 0 && mw <= 0))
			break;
		mw -= 1;
	}
#undef MAXL
#undef MINL
	bg_strbuf_addn(out, buf + at, (size_t)(cap - at));
	free(buf);
}

/*
 * calc_number_widths and fill_number: sign_char '-' or 0 (the number's own
 * sign), prefix ("0x", ...), digits[0..n_digits) (grouped), a decimal point
 * when has_decimal, then remainder[0..n_rem) (n_rem_cp code points).
 */
static void lay_out_number(struct bg_strbuf *out, const struct spec *f, char sign_char, const char *prefix,
			   const char *digits, long n_digits, bool has_decimal, const char *remainder, size_t n_rem,
			   long n_rem_cp)
{
	struct bg_strbuf grouped = BG_STRBUF_INIT;
	char sign = 0;
	long n_prefix = (long)strlen(prefix), lead, min_width = 0, n_padding, lpad = 0, spad = 0, rpad = 0;

	if (sign_char == '-')
		sign = '-';
	else if (f->sign == '+')
		sign = '+';
	else if (f->sign == ' ')
		sign = ' ';
	lead = (sign ? 1 : 0) + n_prefix;
	if (strcmp(f->fill, "0") == 0 && f->align == '=')
		min_width = f->width - lead - (has_decimal ? 1 : 0) - n_rem_cp;
	if (n_digits > 0)
		group_digits(&grouped, digits, n_digits, min_width, f->group, f->sep);
	n_padding = f->width - (lead + (has_decimal ? 1 : 0) + (long)grouped.len + n_rem_cp);
	if (n_padding > 0) {
		switch (f->align) {
		case '<': rpad = n_padding; break;
		case '^': lpad = n_padding / 2; rpad = n_padding - lpad; break;
		case '=': spad = n_padding; break;
		default: lpad = n_padding; break;
		}
	}
	add_fill(out, f->fill, lpad);
	if (sign)
		bg_strbuf_addch(out, sign);
	bg_strbuf_adds(out, prefix);
	add_fill(out, f->fill, spad);
	bg_strbuf_addn(out, grouped.buf ? grouped.buf : "", grouped.len);
	if (has_decimal)
		bg_strbuf_addch(out, '.');
	bg_strbuf_addn(out, remainder, n_rem);
	add_fill(out, f->fill, rpad);
	bg_strbuf_release(&grouped);
}

/* The text of a finite real for the type ('r' repr, 'e', 'f', 'g' and their
 * capitals), as PyOS_double_to_string writes it; add_dot_0 for the empty
 * type with a precision ('g' that keeps one decimal in fixed notation and
 * turns to an exponent one digit earlier). */
static void real_text(struct bg_strbuf *out, double x, char type, long precision, bool alt, bool add_dot_0)
{
	char fmt[8];
	bool upper = type == 'E' || type == 'F' || type == 'G';
	char lower = upper ? (char)(type + ('a' - 'A')) : type;

	if (lower == 'r') {
		struct bg_strbuf r = BG_STRBUF_INIT;
		bg_value_float_repr(&r, x);
		if (alt && !strchr(r.buf, '.')) { /* "1e+16" -> "1.e+16" */
			char *e = strchr(r.buf, 'e');
			size_t at = e ? (size_t)(e - r.buf) : r.len;
			bg_strbuf_addn(out, r.buf, at);
			bg_strbuf_addch(out, '.');
			bg_strbuf_adds(out, r.buf + at);
		} else {
			bg_strbuf_addn(out, r.buf, r.len);
		}
		bg_strbuf_release(&r);
		return;
	}
	if (lower == 'g' && precision == 0)
		precision = 1;
	if (lower != 'g' || !add_dot_0) {
		snprintf(fmt, sizeof(fmt), "%%%s.*%c", alt ? "#" : "", type);
		bg_strbuf_addf(out, fmt, (int)precision, x);
		return;
	}
	{
		/* the digits of %.{p-1}e, their trailing zeros dropped (unless
		 * alt), laid out as format_float_short lays them out */
		struct bg_strbuf e = BG_STRBUF_INIT;
		char *digits, *d;
		const char *q;
		long nd, decpt, exp10 = 0, vstart, vend;
		bool use_exp;

		bg_strbuf_addf(&e, "%.*e", (int)(precision - 1), signbit(x) ? -x : x);
		if (signbit(x))
			bg_strbuf_addch(out, '-');
		d = digits = bg_xmalloc(e.len + 1);
		for (q = e.buf; *q && *q != 'e'; q++)
			if (*q != '.')
				*d++ = *q;
		*d = 0;
		if (*q == 'e')
			exp10 = strtol(q + 1, NULL, 10);
		nd = (long)(d - digits);
		while (nd > 1 && digits[nd - 1] == '0') /* zero: "0" */
			nd--;
		decpt = exp10 + 1;
		vend = alt ? precision : nd;
		if (vend < nd)
			vend = nd;
		use_exp = decpt <= -4 || decpt > precision - 1;
		if (use_exp) {
			exp10 = decpt - 1;
			decpt = 1;
		}
		vstart = decpt <= 0 ? decpt - 1 : 0;
		if (!use_exp)
			vend = vend > decpt ? vend : decpt + 1;
		else
			vend = vend > decpt ? vend : decpt;
		if (decpt <= 0) {
			add_fill(out, "0", decpt - vstart);
			bg_strbuf_addch(out, '.');
			add_fill(out, "0", -decpt);
		} else {
			add_fill(out, "0", -vstart);
		}
		if (0 < decpt && decpt <= nd) {
			bg_strbuf_addn(out, digits, (size_t)decpt);
			bg_strbuf_addch(out, '.');
			bg_strbuf_addn(out, digits + decpt, (size_t)(nd - decpt));
		} else {
			bg_strbuf_addn(out, digits, (size_t)nd);
		}
		if (nd < decpt) {
			add_fill(out, "0", decpt - nd);
			bg_strbuf_addch(out, '.');
			add_fill(out, "0", vend - decpt);
		} else {
			add_fill(out, "0", vend - nd);
		}
		if (out->len && out->buf[out->len - 1] == '.' && !alt)
			out->buf[--out->len] = 0;
		if (use_exp)
			bg_strbuf_addf(out, "%c%+.02ld", upper ? 'E' : 'e', exp10);
		free(digits);
		bg_strbuf_release(&e);
	}
}

/* format_float_internal, for x (a real, or an integer's float()). */
static void format_real(struct bg_strbuf *out, double x, const struct spec *f)
{
	struct bg_strbuf t = BG_STRBUF_INIT;
	unsigned long type = f->type;
	long precision = f->precision;
	bool add_dot_0 = false, pct = false;
	const char *s, *q;
	char sign_char = 0, code;

	if (type == 0) {
		add_dot_0 = true;
		type = 'r';
	}
	if (type == 'n')
		type = 'g';
	if (type == '%') {
		type = 'f';
		x *= 100;
		pct = true;
	}
	if (precision < 0)
		precision = type == 'r' ? 0 : 6;
	else if (type == 'r')
		type = 'g'; /* add_dot_0 stays: the empty type with a precision */
	code = (char)type;
	if (isfinite(x))
		real_text(&t, x, code, precision, f->alternate, add_dot_0 && code == 'g');
	else /* Python: no digits, no sign for a NaN, upper case for E, F and G */
		bg_strbuf_addf(&t, "%s%s", isinf(x) && x < 0 ? "-" : "",
			       isnan(x) ? (code == 'E' || code == 'F' || code == 'G' ? "NAN" : "nan")
					: (code == 'E' || code == 'F' || code == 'G' ? "INF" : "inf"));
	if (pct)
		bg_strbuf_addch(&t, '%');
	s = t.buf;
	if (*s == '-') {
		sign_char = '-';
		s++;
	}
	if (f->no_neg_0 && sign_char && isfinite(x)) { /* 'z': a zero after rounding loses its sign */
		bool zero = true;
		for (q = s; *q && *q != 'e' && *q != 'E' && *q != '%'; q++)
			if (*q >= '1' && *q <= '9')
				zero = false;
		if (zero)
			sign_char = 0;
	}
	{
		const char *d = s, *rem;
		long nd;
		bool has_decimal = false;
		while (*d >= '0' && *d <= '9')
			d++;
		nd = (long)(d - s);
		rem = d;
		if (*rem == '.') {
			has_decimal = true;
			rem++;
		}
		lay_out_number(out, f, sign_char, "", s, nd, has_decimal, rem, strlen(rem), (long)strlen(rem));
	}
	bg_strbuf_release(&t);
}

/* format_long_internal, for an integer (or a boolean's 0 or 1): text is its
 * decimal text (bg_bigint form), beyond 64 bits too. */
static int format_int(struct bg_strbuf *out, const char *text_of_v, const char *type_name, const char *text,
		      size_t n, char *why, size_t size)
{
	struct spec f;
	struct bg_strbuf big = BG_STRBUF_INIT;
	char tbuf[5], digits[72], *d = digits + sizeof(digits), *end;
	const char *prefix = "", *mag_text = text_of_v + (text_of_v[0] == '-');
	bool neg = text_of_v[0] == '-', wide;
	unsigned long long mag;
	unsigned base = 10;
	int rc;

	if ((rc = parse_spec(text, n, 'd', '>', &f, why, size)))
		return rc;
	errno = 0;
	mag = strtoull(mag_text, &end, 10);
	wide = errno == ERANGE; /* a magnitude of 2**64 or more */
	switch (f.type) {
	case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%': {
		double x;
		if (!bg_bigint_to_double(text_of_v, &x))
			return fail(why, size, "an integer beyond a real number's range cannot be written with the type '%s'",
				    type_text(f.type, tbuf));
		format_real(out, x, &f);
		return BG_OK;
	}
	case 'b': case 'c': case 'd': case 'o': case 'x': case 'X': case 'n':
		break;
	default:
		return fail(why, size, "unknown format code '%s' for %s", type_text(f.type, tbuf), type_name);
	}
	if (f.precision >= 0)
		return fail(why, size, "a precision is not allowed for an integer");
	if (f.no_neg_0)
		return fail(why, size, "'z' is not allowed for an integer");
	if (f.type == 'c') {
		char ch[5];
		if (f.sign)
			return fail(why, size, "a sign is not allowed with the type 'c'");
		if (f.alternate)
			return fail(why, size, "'#' is not allowed with the type 'c'");
		if (neg || wide || mag < 1 || mag > 0x10ffff || (mag >= 0xd800 && mag <= 0xdfff))
			return fail(why, size, "%.40s%s is not the code point of a character 'c' can write", text_of_v,
				    strlen(text_of_v) > 40 ? "..." : "");
		put_cp(ch, (unsigned long)mag);
		lay_out_number(out, &f, 0, "", "", 0, false, ch, strlen(ch), 1);
		return BG_OK;
	}
	switch (f.type) {
	case 'b': base = 2; prefix = f.alternate ? "0b" : ""; break;
	case 'o': base = 8; prefix = f.alternate ? "0o" : ""; break;
	case 'x': base = 16; prefix = f.alternate ? "0x" : ""; break;
	case 'X': base = 16; prefix = f.alternate ? "0X" : ""; break;
	default: break;
	}
	if (!wide) {
		do {
			unsigned r = (unsigned)(mag % base);
			*--d = (char)(r < 10 ? '0' + r : (f.type == 'X' ? 'A' : 'a') + r - 10);
			mag /= base;
		} while (mag);
		lay_out_number(out, &f, neg ? '-' : 0, prefix, d, (long)(digits + sizeof(digits) - d), false, "", 0,
			       0);
		return BG_OK;
	}
	if (base == 10)
		bg_strbuf_adds(&big, mag_text);
	else
		bg_bigint_to_base(&big, mag_text, base, f.type == 'X');
	lay_out_number(out, &f, neg ? '-' : 0, prefix, big.buf, (long)big.len, false, "", 0, 0);
	bg_strbuf_release(&big);
	return BG_OK;
}

int bg_py_format(struct bg_strbuf *out, const struct bg_value *v, const char *spec, size_t n, char *why,
		 size_t size)
{
	struct bg_strbuf t = BG_STRBUF_INIT, digits = BG_STRBUF_INIT;
	struct spec f;
	int rc = BG_OK;

	if (n == 0) {
		bg_value_py_str(out, v);
		return BG_OK;
	}
	if (bg_value_is_string(v)) {
		rc = format_string(&t, bg_value_str(v), bg_value_len(v), spec, n, why, size);
	} else if (bg_value_is_integer(v) || bg_value_is_bigint(v)) {
		bg_value_int_text(v, &digits);
		rc = format_int(&t, digits.buf, "an integer", spec, n, why, size);
	} else if (bg_value_is_boolean(v)) {
		rc = format_int(&t, bg_value_is_true(v) ? "1" : "0", "a boolean", spec, n, why, size);
	} else if (bg_value_is_real(v)) {
		char tbuf[5];
		if (!(rc = parse_spec(spec, n, 0, '>', &f, why, size))) {
			switch (f.type) {
			case 0: case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'n': case '%':
				format_real(&t, bg_value_real(v), &f);
				break;
			default:
				rc = fail(why, size, "unknown format code '%s' for a real number",
					  type_text(f.type, tbuf));
			}
		}
	} else {
		rc = fail(why, size, "%s takes no format specification",
			  !v || bg_value_is_null(v) ? "null" : bg_value_is_array(v) ? "a list" : "an object");
	}
	if (!rc)
		bg_strbuf_addn(out, t.buf ? t.buf : "", t.len);
	bg_strbuf_release(&t);
	bg_strbuf_release(&digits);
	return rc;
}
