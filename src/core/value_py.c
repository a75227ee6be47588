/*
 * value_py.c - the arena DOM as CPython sees it: json.dumps (sorted keys,
 * \uXXXX escapes, shortest round-trip floats), str and repr, truth,
 * equality, ordering and number conversions. See benchgate/value.h for
 * the contract.
 */
#include "core/value_internal.h"
#include "core/bigint.h"
#include "core/fmath.h"
#include "core/pyval.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ serialising */

static unsigned long utf8_next(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p;
	unsigned long c = s[0];
	int extra = 0;

	if (c >= 0xf0) {
		c &= 0x07;
		extra = 3;
	} else if (c >= 0xe0) {
		c &= 0x0f;
		extra = 2;
	} else if (c >= 0xc0) {
		c &= 0x1f;
		extra = 1;
	}
	s++;
	while (extra-- > 0 && s < end)
		c = (c << 6) | (*s++ & 0x3f);
	*p = s;
	return c;
}

static const char hexdig[] = "0123456789abcdef";

static void add_u4(struct bg_strbuf *out, unsigned long c)
{
	char b[6] = {'\\', 'u', hexdig[(c >> 12) & 15], hexdig[(c >> 8) & 15], hexdig[(c >> 4) & 15],
		     hexdig[c & 15]};
	bg_strbuf_addn(out, b, 6);
}

void bg_value_json_string(struct bg_strbuf *out, const char *str, size_t len)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + len;

	bg_strbuf_addch(out, '"');
	while (p < end) {
		const unsigned char *run = p;
		unsigned long c;

		while (p < end && *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			bg_strbuf_addn(out, (const char *)run, (size_t)(p - run));
		if (p >= end)
			break;
		c = *p;
		if (c < 0x80) {
			p++;
			switch (c) {
			case '"': bg_strbuf_addn(out, "\\\"", 2); break;
			case '\\': bg_strbuf_addn(out, "\\\\", 2); break;
			case '\n': bg_strbuf_addn(out, "\\n", 2); break;
			case '\r': bg_strbuf_addn(out, "\\r", 2); break;
			case '\t': bg_strbuf_addn(out, "\\t", 2); break;
			case '\b': bg_strbuf_addn(out, "\\b", 2); break;
			case '\f': bg_strbuf_addn(out, "\\f", 2); break;
			default: add_u4(out, c);
			}
			continue;
		}
		c = utf8_next(&p, end);
		if (c >= 0x10000) {
			unsigned long v = c - 0x10000;
			add_u4(out, 0xd800 | (v >> 10));
			add_u4(out, 0xdc00 | (v & 0x3ff));
		} else {
			add_u4(out, c);
		}
	}
	bg_strbuf_addch(out, '"');
}

size_t bg_value_missing_list(struct bg_strbuf *out, const struct bg_value *obj, const char *const *names)
{
	size_t n = 0;

	bg_strbuf_addch(out, '[');
	for (const char *const *k = names; *k; k++) {
		if (bg_value_get(obj, *k))
			continue;
		if (n++)
			bg_strbuf_adds(out, ", ");
		bg_value_repr_string(out, *k, strlen(*k));
	}
	bg_strbuf_addch(out, ']');
	return n;
}

int bg_value_strcmp_cp(const char *a, const char *b)
{
	return strcmp(a, b); /* C strcmp compares as unsigned char: code-point order for UTF-8 */
}

void bg_value_float_repr(struct bg_strbuf *out, double x)
{
	char buf[64], digits[32];
	int prec, exp10, nd = 0;
	char *e, *q;

	if (isnan(x)) {
		bg_strbuf_adds(out, "nan");
		return;
	}
	if (isinf(x)) {
		bg_strbuf_adds(out, x < 0 ? "-inf" : "inf");
		return;
	}
	/* the shortest %e text that reads back as x: Python's repr */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	q = buf;
	if (*q == '-') {
		bg_strbuf_addch(out, '-');
		q++;
	}
	e = strchr(q, 'e');
	exp10 = atoi(e + 1);
	for (; q < e; q++)
		if (*q != '.')
			digits[nd++] = *q;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	if (exp10 < -4 || exp10 >= 16) {
		bg_strbuf_addch(out, digits[0]);
		if (nd > 1) {
			bg_strbuf_addch(out, '.');
			bg_strbuf_adds(out, digits + 1);
		}
		bg_strbuf_addf(out, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	} else if (exp10 < 0) {
		bg_strbuf_adds(out, "0.");
		for (int i = -1; i > exp10; i--)
			bg_strbuf_addch(out, '0');
		bg_strbuf_adds(out, digits);
	} else {
		for (int i = 0; i <= exp10; i++)
			bg_strbuf_addch(out, i < nd ? digits[i] : '0');
		bg_strbuf_addch(out, '.');
		if (nd > exp10 + 1)
			bg_strbuf_adds(out, digits + exp10 + 1);
		else
			bg_strbuf_addch(out, '0');
	}
}

#include "core/pyprintable_table.h"

/*
 * Python's str.isprintable (what repr leaves as it is), as CPython 3.11
 * (Unicode 14.0) has it: false for the control, format, surrogate,
 * private-use and unassigned code points and the separators but the ASCII
 * space (scripts/gen-pyprintable).
 */
static bool py_printable(unsigned long c)
{
	size_t lo = 0, hi = sizeof(py_unprintable) / sizeof(py_unprintable[0]);

	if (c >= 0x20 && c < 0x7f)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c < py_unprintable[mid][0])
			hi = mid;
		else if (c > py_unprintable[mid][1])
			lo = mid + 1;
		else
			return false;
	}
	return true;
}

void bg_value_repr_string(struct bg_strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char quote = '\'';

	if (memchr(s, '\'', len) && !memchr(s, '"', len))
		quote = '"';
	bg_strbuf_addch(out, quote);
	while (p < end) {
		const unsigned char *start = p;
		unsigned long c = *p;

		if (c < 0x80)
			p++;
		else
			c = utf8_next(&p, end);
		if (c == (unsigned long)quote || c == '\\') {
			bg_strbuf_addch(out, '\\');
			bg_strbuf_addch(out, (char)c);
		} else if (c == '\n') {
			bg_strbuf_adds(out, "\\n");
		} else if (c == '\r') {
			bg_strbuf_adds(out, "\\r");
		} else if (c == '\t') {
			bg_strbuf_adds(out, "\\t");
		} else if (!py_printable(c)) {
			if (c < 0x100)
				bg_strbuf_addf(out, "\\x%02lx", c);
			else if (c < 0x10000)
				bg_strbuf_addf(out, "\\u%04lx", c);
			else
				bg_strbuf_addf(out, "\\U%08lx", c);
		} else {
			bg_strbuf_addn(out, (const char *)start, (size_t)(p - start));
		}
	}
	bg_strbuf_addch(out, quote);
}

size_t bg_value_surrogate_find(const char *s, size_t len)
{
	const char *p = s, *end = s + len, *e;

	if (!len)
		return 0;
	while ((e = memchr(p, 0xed, (size_t)(end - p)))) {
		if (end - e >= 3 && bg_surrogate_at((const unsigned char *)e))
			return (size_t)(e - s);
		p = e + 1;
	}
	return len;
}

void bg_value_surrogate_say(struct bg_strbuf *out, const char *s, size_t len, size_t at, size_t first_line)
{
	size_t start = at, stop = at, line = first_line;
	unsigned c = bg_surrogate_value((const unsigned char *)s + at);

	for (size_t i = 0; i < at; i++)
		line += s[i] == '\n';
	while (start > 0 && s[start - 1] != '\n')
		start--;
	while (stop < len && s[stop] != '\n')
		stop++;
	bg_strbuf_addf(out, "line %zu, ", line);
	if (stop - start > 120) { /* the part around it */
		start = at > start + 60 ? at - 60 : start;
		while (start > 0 && ((unsigned char)s[start] & 0xc0) == 0x80)
			start--;
		if (stop > start + 120)
			stop = start + 120;
		while (stop < len && ((unsigned char)s[stop] & 0xc0) == 0x80)
			stop++;
		bg_strbuf_adds(out, "near ");
	}
	bg_value_repr_string(out, s + start, stop - start);
	bg_strbuf_addf(out, ", holds the lone surrogate '\\u%04x' (a JSON escape \\u%04x without its pair), "
			    "which UTF-8 cannot encode",
		       c, c);
}

bool bg_value_py_stdio_escapes(const char *ctype, const char *pythonutf8)
{
	static const char *const escaping[] = {"C", "POSIX", "C.UTF-8", "C.utf8", "UTF-8"};

	if (pythonutf8 && strcmp(pythonutf8, "1") == 0)
		return true;
	if (!ctype)
		return true;
	for (size_t i = 0; i < sizeof(escaping) / sizeof(escaping[0]); i++)
		if (strcmp(ctype, escaping[i]) == 0)
			return true;
	return false;
}

static void add_int(struct bg_strbuf *out, int64_t i)
{
	char b[24], *p = b + sizeof(b);
	uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (i < 0)
		*--p = '-';
	bg_strbuf_addn(out, p, (size_t)(b + sizeof(b) - p));
}

static void newline_indent(struct bg_strbuf *out, int indent, int level)
{
	size_t n = (size_t)indent * (size_t)level;

	bg_strbuf_grow(out, n + 1);
	out->buf[out->len] = '\n';
	memset(out->buf + out->len + 1, ' ', n);
	bg_strbuf_setlen(out, out->len + n + 1);
}

/* What comes before item i of a container at level: ",", then a new line
 * indented one level deeper, or (without indent) a space between items. */
static void item_separator(struct bg_strbuf *out, uint32_t i, int indent, int level)
{
	if (i)
		bg_strbuf_addch(out, ',');
	if (indent >= 0)
		newline_indent(out, indent, level + 1);
	else if (i)
		bg_strbuf_addch(out, ' ');
}

static int cmp_member_key(const void *a, const void *b)
{
	const struct bg_member *x = *(const struct bg_member *const *)a;
	const struct bg_member *y = *(const struct bg_member *const *)b;
	return bg_value_strcmp_cp(x->key, y->key);
}

static void dump_value(struct bg_strbuf *out, const struct bg_value *v, int indent, bool sort, int level)
{
	switch (v->type) {
	case BG_VOBJECT: {
		const struct bg_member **ms;
		uint32_t n = v->n;

		if (n == 0) {
			bg_strbuf_addn(out, "{}", 2);
			return;
		}
		ms = bg_xmalloc(n * sizeof(*ms));
		for (uint32_t i = 0; i < n; i++)
			ms[i] = &v->u.members[i];
		if (sort)
			qsort(ms, n, sizeof(*ms), cmp_member_key);
		bg_strbuf_addch(out, '{');
		for (uint32_t i = 0; i < n; i++) {
			item_separator(out, i, indent, level);
			bg_value_json_string(out, ms[i]->key, ms[i]->klen);
			bg_strbuf_addn(out, ": ", 2);
			dump_value(out, ms[i]->value, indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, '}');
		free(ms);
		return;
	}
	case BG_VARRAY:
		if (v->n == 0) {
			bg_strbuf_addn(out, "[]", 2);
			return;
		}
		bg_strbuf_addch(out, '[');
		for (uint32_t i = 0; i < v->n; i++) {
			item_separator(out, i, indent, level);
			dump_value(out, v->u.items[i], indent, sort, level + 1);
		}
		if (indent >= 0)
			newline_indent(out, indent, level);
		bg_strbuf_addch(out, ']');
		return;
	case BG_VSTRING:
		bg_value_json_string(out, v->u.s, v->n);
		return;
	case BG_VINT:
		add_int(out, v->u.i);
		return;
	case BG_VBIGINT:
		bg_strbuf_addn(out, v->u.s, v->n);
		return;
	case BG_VREAL:
		if (isnan(v->u.d))
			bg_strbuf_adds(out, "NaN");
		else if (isinf(v->u.d))
			bg_strbuf_adds(out, v->u.d < 0 ? "-Infinity" : "Infinity");
		else
			bg_value_float_repr(out, v->u.d);
		return;
	case BG_VTRUE:
		bg_strbuf_addn(out, "true", 4);
		return;
	case BG_VFALSE:
		bg_strbuf_addn(out, "false", 5);
		return;
	default:
		bg_strbuf_addn(out, "null", 4);
		return;
	}
}

void bg_value_dump(struct bg_strbuf *out, const struct bg_value *v, int indent, bool sort_keys)
{
	dump_value(out, v ? v : &bg_value_null_v, indent, sort_keys, 0);
}

void bg_value_py_repr(struct bg_strbuf *out, const struct bg_value *v)
{
	if (!v) {
		bg_strbuf_adds(out, "None");
		return;
	}
	switch (v->type) {
	case BG_VSTRING:
		bg_value_repr_string(out, v->u.s, v->n);
		return;
	case BG_VOBJECT:
		bg_strbuf_addch(out, '{');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				bg_strbuf_adds(out, ", ");
			bg_value_repr_string(out, v->u.members[i].key, v->u.members[i].klen);
			bg_strbuf_adds(out, ": ");
			bg_value_py_repr(out, v->u.members[i].value);
		}
		bg_strbuf_addch(out, '}');
		return;
	case BG_VARRAY:
		bg_strbuf_addch(out, '[');
		for (uint32_t i = 0; i < v->n; i++) {
			if (i)
				bg_strbuf_adds(out, ", ");
			bg_value_py_repr(out, v->u.items[i]);
		}
		bg_strbuf_addch(out, ']');
		return;
	case BG_VINT:
		add_int(out, v->u.i);
		return;
	case BG_VBIGINT:
		bg_strbuf_addn(out, v->u.s, v->n);
		return;
	case BG_VREAL:
		bg_value_float_repr(out, v->u.d);
		return;
	case BG_VTRUE:
		bg_strbuf_adds(out, "True");
		return;
	case BG_VFALSE:
		bg_strbuf_adds(out, "False");
		return;
	default:
		bg_strbuf_adds(out, "None");
		return;
	}
}

void bg_value_py_str(struct bg_strbuf *out, const struct bg_value *v)
{
	if (v && v->type == BG_VSTRING)
		bg_strbuf_addn(out, v->u.s, v->n);
	else
		bg_value_py_repr(out, v);
}

bool bg_value_truthy(const struct bg_value *v)
{
	if (!v)
		return false;
	switch (v->type) {
	case BG_VOBJECT:
	case BG_VARRAY:
	case BG_VSTRING:
		return v->n > 0;
	case BG_VINT:
		return v->u.i != 0;
	case BG_VREAL:
		return v->u.d != 0.0;
	case BG_VTRUE:
	case BG_VBIGINT: /* never zero */
		return true;
	default:
		return false;
	}
}

bool bg_value_is_pynumber(const struct bg_value *v)
{
	/* BG_VFALSE to BG_VREAL: false, true, int, float (enum bg_vtype order) */
	return v && ((v->type >= BG_VFALSE && v->type <= BG_VREAL) || v->type == BG_VBIGINT);
}

bool bg_value_is_pyint(const struct bg_value *v, long long *out)
{
	if (!v)
		return false;
	if (v->type == BG_VINT || v->type == BG_VTRUE || v->type == BG_VFALSE) {
		if (out)
			*out = v->type == BG_VINT ? (long long)v->u.i : v->type == BG_VTRUE;
		return true;
	}
	if (v->type == BG_VBIGINT) {
		if (out)
			*out = v->u.s[0] == '-' ? LLONG_MIN : LLONG_MAX;
		return true;
	}
	return false;
}

/* float(v) of a number; a big integer beyond a double's range is an
 * infinity (where Python raises: bg_value_to_float tells). */
static double num(const struct bg_value *v)
{
	if (v->type == BG_VINT)
		return (double)v->u.i;
	if (v->type == BG_VREAL)
		return v->u.d;
	if (v->type == BG_VBIGINT)
		return strtod(v->u.s, NULL);
	return v->type == BG_VTRUE ? 1.0 : 0.0;
}

/*
 * Python's int/float comparison, exact: -1, 0 or 1 as i is below, equal to
 * or above d; 2 when d is NaN (unordered). Converting i to a double instead
 * would make 2**53 + 1 equal 2**53 + 0.0.
 */
static int cmp_int_real(long long i, double d)
{
	long long t;
	double frac;

	if (d != d)
		return 2;
	if (d >= 9223372036854775808.0)
		return -1;
	if (d < -9223372036854775808.0)
		return 1;
	t = (long long)d; /* toward zero; in range */
	if (i != t)
		return i < t ? -1 : 1;
	frac = d - (double)t; /* exact */
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/*
 * The comparison of a big integer's text with a number (b not a big
 * integer), exact as Python's: a big integer is beyond 64 bits, so any
 * other int and any real of magnitude below 2**63 lies between the
 * negative and the positive ones; a real beyond that is an integer, whose
 * exact decimal text %.0f writes.
 */
static int cmp_big_number(const char *a, const struct bg_value *b)
{
	int above = a[0] == '-' ? -1 : 1;
	char text[400];
	double d;

	if (b->type != BG_VREAL)
		return above;
	d = b->u.d;
	if (d != d)
		return 2;
	if (isinf(d))
		return d < 0 ? 1 : -1;
	if (fabs(d) < 9223372036854775808.0)
		return above;
	snprintf(text, sizeof(text), "%.0f", d);
	return bg_bigint_cmp(a, text);
}

/* Python's comparison of two numbers: -1, 0, 1, or 2 when unordered (NaN). */
static int cmp_numbers(const struct bg_value *a, const struct bg_value *b)
{
	long long x, y;
	bool ia, ib;

	if (a->type == BG_VINT && b->type == BG_VINT)
		return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	if (a->type == BG_VBIGINT && b->type == BG_VBIGINT)
		return bg_bigint_cmp(a->u.s, b->u.s);
	if (a->type == BG_VBIGINT)
		return cmp_big_number(a->u.s, b);
	if (b->type == BG_VBIGINT) {
		int c = cmp_big_number(b->u.s, a);
		return c == 2 ? 2 : -c;
	}
	ia = bg_value_is_pyint(a, &x);
	ib = bg_value_is_pyint(b, &y);
	if (ia && ib)
		return x < y ? -1 : x > y;
	if (ia)
		return cmp_int_real(x, b->u.d);
	if (ib) {
		int c = cmp_int_real(y, a->u.d);
		return c == 2 ? 2 : -c;
	}
	return a->u.d < b->u.d ? -1 : a->u.d > b->u.d ? 1 : a->u.d == b->u.d ? 0 : 2;
}

bool bg_value_equal(const struct bg_value *a, const struct bg_value *b)
{
	if (!a || !b)
		return (!a || a->type == BG_VNULL) && (!b || b->type == BG_VNULL);
	if (bg_value_is_pynumber(a) && bg_value_is_pynumber(b))
		return cmp_numbers(a, b) == 0;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case BG_VSTRING:
		return a->n == b->n && bg_same_bytes(a->u.s, b->u.s, a->n);
	case BG_VARRAY:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++)
			if (!bg_value_py_same(a->u.items[i], b->u.items[i]))
				return false;
		return true;
	case BG_VOBJECT:
		if (a->n != b->n)
			return false;
		for (uint32_t i = 0; i < a->n; i++) {
			const struct bg_member *m = &a->u.members[i];
			const struct bg_value *o = bg_value_getn(b, m->key, m->klen);
			if (!o || !bg_value_py_same(m->value, o))
				return false;
		}
		return true;
	default:
		return true; /* null */
	}
}

bool bg_value_py_same(const struct bg_value *a, const struct bg_value *b)
{
	if (a && b && a->type == BG_VREAL && b->type == BG_VREAL && isnan(a->u.d) && isnan(b->u.d))
		return true;
	return bg_value_equal(a, b);
}

int bg_value_py_lt(const struct bg_value *a, const struct bg_value *b)
{
	int ra = bg_value_order_rank(a), rb = bg_value_order_rank(b);

	if (ra != rb || ra == 0 || ra == 4)
		return -1;
	if (ra == 1)
		return cmp_numbers(a, b) == -1;
	if (ra == 2)
		return strcmp(a->u.s, b->u.s) < 0;
	for (uint32_t i = 0; i < a->n && i < b->n; i++)
		if (!bg_value_py_same(a->u.items[i], b->u.items[i]))
			return bg_value_py_lt(a->u.items[i], b->u.items[i]);
	return a->n < b->n;
}

bool bg_value_py_key(struct bg_strbuf *sb, const struct bg_value *v)
{
	long long n;

	if (bg_value_is_array(v) || bg_value_is_object(v))
		return false;
	if (bg_value_is_string(v)) {
		bg_strbuf_addch(sb, 's');
		bg_strbuf_addn(sb, v->u.s, v->n);
	} else if (bg_value_is_bigint(v)) {
		bg_strbuf_addch(sb, 'n');
		bg_strbuf_addn(sb, v->u.s, v->n);
	} else if (bg_value_is_pyint(v, &n)) {
		bg_strbuf_addf(sb, "n%lld", n);
	} else if (bg_value_is_real(v)) {
		double d = v->u.d;
		if (d == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(long long)d)
			bg_strbuf_addf(sb, "n%lld", (long long)d);
		else if (isfinite(d) && fabs(d) >= 9223372036854775808.0)
			bg_strbuf_addf(sb, "n%.0f", d); /* an integer: the key of the int it equals */
		else
			bg_strbuf_addf(sb, "r%.17g", d);
	} else {
		bg_strbuf_addch(sb, 'z');
	}
	return true;
}

int bg_value_order_rank(const struct bg_value *v)
{
	if (!v || v->type == BG_VNULL)
		return 0;
	if (bg_value_is_pynumber(v))
		return 1;
	if (v->type == BG_VSTRING)
		return 2;
	if (v->type == BG_VARRAY)
		return 3;
	return 4;
}

int bg_value_cmp(const struct bg_value *a, const struct bg_value *b, bool *type_error)
{
	int ra = bg_value_order_rank(a), rb = bg_value_order_rank(b);

	if (ra == 2 && rb == 2) {
		int c = strcmp(a->u.s, b->u.s);
		return c < 0 ? -1 : c > 0;
	}
	if (bg_value_equal(a, b))
		return 0;
	if (ra != rb || ra == 0 || ra == 4) {
		*type_error = true;
		return ra < rb ? -1 : ra > rb ? 1 : 0;
	}
	if (ra == 1) {
		int c = cmp_numbers(a, b);
		return c == 2 ? 0 : c; /* NaN: neither below nor above, as Python's < says */
	}
	for (size_t i = 0;; i++) {
		const struct bg_value *x = bg_value_at(a, i), *y = bg_value_at(b, i);
		int c;
		if (!x || !y)
			return !x && y ? -1 : (x && !y ? 1 : 0);
		c = bg_value_cmp(x, y, type_error);
		if (c)
			return c;
	}
}

bool bg_value_str_blank(const struct bg_value *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	size_t start, n;

	if (v && v->type == BG_VSTRING) {
		unsigned char c = v->n ? (unsigned char)v->u.s[0] : 0;
		if (c > ' ' && c < 0x7f) /* printable ASCII other than space is never Python whitespace */
			return false;
		bg_py_strip(v->u.s, v->n, &start, &n);
		return n == 0;
	}
	bg_value_py_str(&sb, v);
	bg_py_strip(sb.buf, sb.len, &start, &n);
	bg_strbuf_release(&sb);
	return n == 0;
}

/* The text int() and float() parse: bg_py_number_ascii of s, then ASCII
 * whitespace (Py_ISSPACE) stripped; start and length in *start, *n. */
static void py_number_text(struct bg_strbuf *t, const char *s, size_t len, size_t *start, size_t *n)
{
	size_t a = 0, b;

	bg_py_number_ascii(t, s, len);
	b = t->len;
	while (a < b && isspace((unsigned char)t->buf[a]))
		a++;
	while (b > a && isspace((unsigned char)t->buf[b - 1]))
		b--;
	*start = a;
	*n = b - a;
}

/* Python float() of a string: strip, one underscore between digits, no hex. */
static bool parse_py_float_string(const char *text, size_t len, double *out)
{
	struct bg_strbuf sb = BG_STRBUF_INIT, t = BG_STRBUF_INIT;
	size_t start, n;
	const char *s;
	char *end;
	bool ok;

	py_number_text(&t, text, len, &start, &n);
	s = t.buf;
	for (size_t i = start; i < start + n; i++) {
		char c = s[i];
		if (c == '_') {
			if (i == start || i + 1 >= start + n || !isdigit((unsigned char)s[i - 1]) ||
			    !isdigit((unsigned char)s[i + 1])) {
				bg_strbuf_release(&sb);
				bg_strbuf_release(&t);
				return false;
			}
			continue;
		}
		if (c == 'x' || c == 'X' || c == 'p' || c == 'P') {
			bg_strbuf_release(&sb);
			bg_strbuf_release(&t);
			return false;
		}
		bg_strbuf_addch(&sb, c);
	}
	bg_strbuf_release(&t);
	if (sb.len == 0) {
		bg_strbuf_release(&sb);
		return false;
	}
	errno = 0;
	*out = strtod(sb.buf, &end);
	ok = *end == '\0';
	if (ok && isalpha((unsigned char)sb.buf[sb.buf[0] == '-' || sb.buf[0] == '+'])) {
		const char *w = sb.buf + (sb.buf[0] == '-' || sb.buf[0] == '+');
		ok = strcasecmp(w, "inf") == 0 || strcasecmp(w, "infinity") == 0 ||
		     strcasecmp(w, "nan") == 0;
	}
	bg_strbuf_release(&sb);
	return ok;
}

bool bg_value_to_float(const struct bg_value *v, double *out)
{
	if (!v)
		return false;
	if (bg_value_is_pynumber(v)) {
		*out = num(v);
		return v->type != BG_VBIGINT || isfinite(*out);
	}
	if (v->type == BG_VSTRING)
		return parse_py_float_string(v->u.s, v->n, out);
	return false;
}

bool bg_value_to_int(const struct bg_value *v, long long *out)
{
	if (!v || v->type == BG_VBIGINT)
		return false;
	if (bg_value_is_pyint(v, out))
		return true;
	if (v->type == BG_VREAL) {
		double d = v->u.d;
		if (!isfinite(d) || fabs(d) >= 9.2e18)
			return false;
		*out = (long long)d;
		return true;
	}
	if (v->type == BG_VSTRING) {
		struct bg_strbuf t = BG_STRBUF_INIT;
		const char *s;
		size_t start, n, k = 0;
		char buf[64];
		char *end;
		bool ok = false;

		py_number_text(&t, v->u.s, v->n, &start, &n);
		s = t.buf;
		if (n == 0)
			goto done;
		for (size_t i = start; i < start + n; i++) {
			if (s[i] == '_' && i > start && i + 1 < start + n && isdigit((unsigned char)s[i - 1]) &&
			    isdigit((unsigned char)s[i + 1]))
				continue;
			if (!isdigit((unsigned char)s[i]) && !(i == start && (s[i] == '+' || s[i] == '-')))
				goto done;
			/* a leading zero gives way to the next digit, so buf holds
			 * only significant ones: int('0' * 70 + '5') is 5 */
			if (k > 0 && buf[k - 1] == '0' && (k == 1 || !isdigit((unsigned char)buf[k - 2])))
				k--;
			if (k + 1 >= sizeof(buf))
				goto done; /* more than 62 significant digits: beyond 64 bits */
			buf[k++] = s[i];
		}
		buf[k] = '\0';
		errno = 0;
		*out = strtoll(buf, &end, 10);
		ok = errno == 0 && *end == '\0' && k > 0 && isdigit((unsigned char)buf[k - 1]);
done:
		bg_strbuf_release(&t);
		return ok;
	}
	return false;
}

bool bg_value_int_text(const struct bg_value *v, struct bg_strbuf *out)
{
	struct bg_strbuf t = BG_STRBUF_INIT;
	size_t start, n, nd = 0, at = out->len;
	bool neg = false, ok = false;
	long long i;

	if (bg_value_to_int(v, &i)) {
		bg_strbuf_addf(out, "%lld", i);
		return true;
	}
	if (v && v->type == BG_VBIGINT) {
		bg_strbuf_addn(out, v->u.s, v->n);
		return true;
	}
	if (v && v->type == BG_VREAL) { /* a finite float is an integer exactly, printed so */
		if (!isfinite(v->u.d))
			return false;
		bg_strbuf_addf(out, "%.0f", bg_trunc(v->u.d));
		return true;
	}
	if (!v || v->type != BG_VSTRING)
		return false;
	py_number_text(&t, v->u.s, v->n, &start, &n);
	for (size_t k = start; k < start + n; k++) {
		char c = t.buf[k];
		if (k == start && (c == '+' || c == '-')) {
			neg = c == '-';
		} else if (c == '_' && nd && k + 1 < start + n && isdigit((unsigned char)t.buf[k + 1])) {
			continue;
		} else if (!isdigit((unsigned char)c) || ++nd > BG_BIGINT_MAX_DIGITS) {
			goto done;
		} else if (c != '0' || out->len > at + neg) {
			if (neg && out->len == at)
				bg_strbuf_addch(out, '-');
			bg_strbuf_addch(out, c);
		}
	}
	ok = nd > 0;
	if (ok && out->len == at)
		bg_strbuf_addch(out, '0');
done:
	if (!ok)
		bg_strbuf_setlen(out, at);
	bg_strbuf_release(&t);
	return ok;
}

static int cmp_key(const void *a, const void *b)
{
	return bg_value_strcmp_cp(*(const char *const *)a, *(const char *const *)b);
}

const char **bg_value_sorted_keys(const struct bg_value *obj, size_t *count)
{
	size_t n = bg_value_size(obj);
	const char **keys = bg_xcalloc(n ? n : 1, sizeof(*keys));

	if (bg_value_is_object(obj))
		for (size_t i = 0; i < n; i++)
			keys[i] = obj->u.members[i].key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	*count = n;
	return keys;
}
