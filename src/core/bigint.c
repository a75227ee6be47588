/*
 * bigint.c - Python's int beyond 64 bits as decimal text (see bigint.h).
 * Arithmetic runs on limbs of 10^9, least significant first; division is
 * Knuth's algorithm D (TAOCP vol. 2, 4.3.1), so 4,300-digit operands (the
 * most Python's int() reads from a text) divide in well under a
 * millisecond.
 */
#include "core/bigint.h"
#include "benchgate/status.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BASE 1000000000u
#define BASE_DIGITS 9

/* A magnitude: n limbs (none for zero), least significant first. */
struct mag {
	uint32_t *d;
	size_t n;
};

static void mag_trim(struct mag *m)
{
	while (m->n && m->d[m->n - 1] == 0)
		m->n--;
}

/* The magnitude of the decimal text s (sign skipped); *neg its sign. */
static struct mag mag_parse(const char *s, bool *neg)
{
	struct mag m;
	size_t len, i;

	*neg = *s == '-';
	s += *neg;
	while (*s == '0')
		s++;
	len = strlen(s);
	m.n = (len + BASE_DIGITS - 1) / BASE_DIGITS;
	m.d = bg_xcalloc(m.n + 1, sizeof(*m.d));
	for (i = 0; i < m.n; i++) {
		size_t end = len - i * BASE_DIGITS, start = end > BASE_DIGITS ? end - BASE_DIGITS : 0;
		uint32_t limb = 0;
		for (size_t k = start; k < end; k++)
			limb = limb * 10 + (uint32_t)(s[k] - '0');
		m.d[i] = limb;
	}
	return m;
}

static void mag_write(struct bg_strbuf *out, const struct mag *m, bool neg)
{
	if (m->n == 0) {
		bg_strbuf_addch(out, '0');
		return;
	}
	if (neg)
		bg_strbuf_addch(out, '-');
	bg_strbuf_addf(out, "%u", m->d[m->n - 1]);
	for (size_t i = m->n - 1; i-- > 0;)
		bg_strbuf_addf(out, "%09u", m->d[i]);
}

static int mag_cmp(const struct mag *a, const struct mag *b)
{
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	for (size_t i = a->n; i-- > 0;)
		if (a->d[i] != b->d[i])
			return a->d[i] < b->d[i] ? -1 : 1;
	return 0;
}

/* a + b, or a - b when a is not below b. */
static struct mag mag_combine(const struct mag *a, const struct mag *b, bool subtract)
{
	struct mag r;
	int64_t carry = 0;

	r.n = (a->n > b->n ? a->n : b->n) + 1;
	r.d = bg_xcalloc(r.n, sizeof(*r.d));
	for (size_t i = 0; i < r.n; i++) {
		int64_t x = (i < a->n ? a->d[i] : 0) + carry, y = i < b->n ? b->d[i] : 0;
		int64_t t = subtract ? x - y : x + y;
		carry = subtract ? (t < 0 ? -1 : 0) : (t >= BASE ? 1 : 0);
		r.d[i] = (uint32_t)(subtract ? (t < 0 ? t + BASE : t) : (t >= BASE ? t - BASE : t));
	}
	mag_trim(&r);
	return r;
}

/* m = m * f + add, in place (m has a limb to spare at m->d[m->n]). */
static void mag_mul_small(struct mag *m, uint32_t f)
{
	uint64_t carry = 0;

	for (size_t i = 0; i < m->n; i++) {
		uint64_t t = (uint64_t)m->d[i] * f + carry;
		m->d[i] = (uint32_t)(t % BASE);
		carry = t / BASE;
	}
	m->d[m->n] = (uint32_t)carry;
}

/* m = m / f in place (f below 2^32); the remainder. */
static uint32_t mag_div_small(struct mag *m, uint32_t f)
{
	uint64_t rem = 0;

	for (size_t i = m->n; i-- > 0;) {
		uint64_t t = rem * BASE + m->d[i];
		m->d[i] = (uint32_t)(t / f);
		rem = t % f;
	}
	mag_trim(m);
	return (uint32_t)rem;
}

/* q = a / b truncated, and whether the remainder is zero; b not zero. */
static struct mag mag_div(const struct mag *a, const struct mag *b, bool *exact)
{
	struct mag q, u, v;
	size_t n = b->n, m;
	uint32_t f;

	q.n = a->n >= n ? a->n - n + 1 : 1;
	q.d = bg_xcalloc(q.n + 1, sizeof(*q.d));
	if (mag_cmp(a, b) < 0) {
		q.n = 0;
		*exact = a->n == 0;
		return q;
	}
	u.n = a->n;
	u.d = bg_xcalloc(a->n + 2, sizeof(*u.d));
	memcpy(u.d, a->d, a->n * sizeof(*u.d));
	if (n == 1) {
		*exact = mag_div_small(&u, b->d[0]) == 0;
		free(q.d);
		return u;
	}
	m = a->n - n;
	/* scale both so that v's top limb is at least BASE / 2 */
	f = BASE / (b->d[n - 1] + 1);
	v.n = n;
	v.d = bg_xcalloc(n + 1, sizeof(*v.d));
	memcpy(v.d, b->d, n * sizeof(*v.d));
	mag_mul_small(&u, f);
	mag_mul_small(&v, f);
	for (size_t j = m + 1; j-- > 0;) {
		uint64_t num = (uint64_t)u.d[j + n] * BASE + u.d[j + n - 1];
		uint64_t qhat = num / v.d[n - 1], rhat = num % v.d[n - 1];
		int64_t borrow = 0, carry = 0;

		while (qhat >= BASE || qhat * v.d[n - 2] > rhat * BASE + u.d[j + n - 2]) {
			qhat--;
			rhat += v.d[n - 1];
			if (rhat >= BASE)
				break;
		}
		for (size_t i = 0; i <= n; i++) { /* u[j..j+n] -= qhat * v */
			uint64_t p = qhat * (i < n ? v.d[i] : 0) + (uint64_t)carry;
			int64_t t = (int64_t)u.d[i + j] - (int64_t)(p % BASE) + borrow;
			carry = (int64_t)(p / BASE);
			borrow = t < 0 ? -1 : 0;
			u.d[i + j] = (uint32_t)(t < 0 ? t + BASE : t);
		}
		if (borrow) { /* qhat was one too many: add v back */
			uint32_t c = 0;
			qhat--;
			for (size_t i = 0; i <= n; i++) {
				uint64_t t = (uint64_t)u.d[i + j] + (i < n ? v.d[i] : 0) + c;
				c = t >= BASE;
				u.d[i + j] = (uint32_t)(c ? t - BASE : t);
			}
		}
		q.d[j] = (uint32_t)qhat;
	}
	u.n = n;
	mag_trim(&u);
	*exact = u.n == 0;
	q.n = m + 1;
	mag_trim(&q);
	free(u.d);
	free(v.d);
	return q;
}

int bg_bigint_cmp(const char *a, const char *b)
{
	bool na = *a == '-', nb = *b == '-';
	size_t la = strlen(a), lb = strlen(b);
	int c;

	if (na != nb)
		return na ? -1 : 1;
	c = la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
	c = c < 0 ? -1 : c > 0;
	return na ? -c : c;
}

void bg_bigint_sub(struct bg_strbuf *out, const char *a, const char *b)
{
	bool na, nb;
	struct mag x = mag_parse(a, &na), y = mag_parse(b, &nb), r;

	if (na != nb) { /* a - b = sign(a) * (|a| + |b|) */
		r = mag_combine(&x, &y, false);
		mag_write(out, &r, na);
	} else if (mag_cmp(&x, &y) >= 0) {
		r = mag_combine(&x, &y, true);
		mag_write(out, &r, na);
	} else { /* |a| < |b|: the sign flips */
		r = mag_combine(&y, &x, true);
		mag_write(out, &r, !na);
	}
	free(x.d);
	free(y.d);
	free(r.d);
}

bool bg_bigint_floordiv(struct bg_strbuf *out, const char *a, const char *b)
{
	bool na, nb, exact;
	struct mag x = mag_parse(a, &na), y = mag_parse(b, &nb), q = {NULL, 0};
	bool ok = y.n > 0;

	if (ok) {
		q = mag_div(&x, &y, &exact);
		if (na != nb && !exact) { /* the floor of a negative quotient: one further down */
			struct mag one = {(uint32_t[]){1}, 1}, t = mag_combine(&q, &one, false);
			free(q.d);
			q = t;
		}
		mag_write(out, &q, na != nb);
	}
	free(x.d);
	free(y.d);
	free(q.d);
	return ok;
}

void bg_bigint_to_base(struct bg_strbuf *out, const char *a, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned bits = base == 2 ? 1 : base == 8 ? 3 : 4, per = 24 / bits;
	bool neg;
	struct mag m = mag_parse(a, &neg);
	struct bg_strbuf rev = BG_STRBUF_INIT;

	/* 2^24 at a time, least significant digits first */
	do {
		uint32_t chunk = mag_div_small(&m, 1u << 24);
		for (unsigned k = 0; k < per && (m.n || chunk); k++) {
			bg_strbuf_addch(&rev, digits[chunk & (base - 1)]);
			chunk >>= bits;
		}
		if (m.n)
			while (rev.len % per)
				bg_strbuf_addch(&rev, '0');
	} while (m.n);
	if (rev.len == 0)
		bg_strbuf_addch(&rev, '0');
	for (size_t i = rev.len; i-- > 0;)
		bg_strbuf_addch(out, rev.buf[i]);
	bg_strbuf_release(&rev);
	free(m.d);
}

bool bg_bigint_to_double(const char *a, double *out)
{
	/* strtod rounds the exact decimal to nearest, ties to even, as
	 * Python's int -> float does */
	*out = strtod(a, NULL);
	return isfinite(*out);
}
