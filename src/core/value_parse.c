/*
 * value_parse.c - the strict recursive-descent JSON parser of the arena
 * DOM: jansson's grammar and messages, Python's duplicate keys (first
 * position, last value) and non-finite numbers (NaN, Infinity, 1e400),
 * keep lists that build only what a caller reads.
 * See benchgate/value.h for the contract.
 */
#include "core/value_internal.h"
#include "core/bigint.h"
#include "benchgate/fsutil.h"
#include "benchgate/format.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ parser */

#if defined(__GNUC__)
#define BG_NOINLINE __attribute__((noinline))
#else
#define BG_NOINLINE
#endif

#define SHARED_INT_MAX 1024      /* integers 0..1023 are one static value each */
#define SHARED_STR_LEN 24        /* strings this long or shorter are shared... */
#define SHARED_STR_MAX (1u << 16) /* ...the first this many distinct ones */

/* The integers 0..SHARED_INT_MAX-1, shared by every document (values are
 * never modified once built, as bg_value_true_v) */
#define SMALL_INT(n) {.type = BG_VINT, .u = {.i = (n)}}
#define SMALL_INT4(n) SMALL_INT(n), SMALL_INT((n) + 1), SMALL_INT((n) + 2), SMALL_INT((n) + 3)
#define SMALL_INT16(n) SMALL_INT4(n), SMALL_INT4((n) + 4), SMALL_INT4((n) + 8), SMALL_INT4((n) + 12)
#define SMALL_INT64(n) SMALL_INT16(n), SMALL_INT16((n) + 16), SMALL_INT16((n) + 32), SMALL_INT16((n) + 48)
#define SMALL_INT256(n) SMALL_INT64(n), SMALL_INT64((n) + 64), SMALL_INT64((n) + 128), SMALL_INT64((n) + 192)
static struct bg_value small_ints[SHARED_INT_MAX] = {
	SMALL_INT256(0), SMALL_INT256(256), SMALL_INT256(512), SMALL_INT256(768),
};

/* A shared string: its hash and length are kept beside it, so that a probe
 * reads only the table until they match (the strings are scattered over the
 * arena; at 100,000 gates most probes are for strings met once). */
struct shared_slot {
	uint32_t hash, len;
	const struct bg_value *v;
};

struct parser {
	struct bg_arena *a;
	const char *start, *p, *end; /* *end == '\0'; the text is never written */
	struct bg_strbuf scratch;    /* a string with escapes or non-ASCII text, decoded */
	const char *display;
	struct bg_ctx *ctx;
	struct bg_value **vstack;
	size_t vn, vcap;
	struct bg_member *mstack;
	size_t mn, mcap;
	struct intern *itab; /* interned keys, open addressing */
	uint32_t icap, icount;
	/* short strings shared within the document (values are never
	 * modified once built), open addressing; small integers are
	 * small_ints */
	struct shared_slot *stab;
	uint32_t scap, scount;
	bool failed;
	bool skip; /* checking a value that is not kept: no values are built */
	bool reject_dups; /* BG_VALUE_REJECT_DUPLICATES */
	bool finite; /* BG_VALUE_FINITE: no NaN, infinities, overflowing reals, big integers or lone surrogates */
};

#define INTERN_MAX 8192 /* distinct keys interned per document; later ones are not */

/* An interned key: its text and its member hash (hash_key), computed once
 * per distinct key. */
struct intern {
	const char *key;
	uint32_t klen;
	uint32_t hash;
	const struct bg_value_keep *keep_list; /* the keep list last looked up for this key */
	const struct bg_value_keep *keep_hit;  /* its entry for the key, or NULL */
};

/*
 * The arena copy of a key, made the first time the document uses it, so
 * that every object's members point at one copy of each key: lookups then
 * compare against a few hot cache lines. *hash receives the key's member
 * hash (hash_key), computed once per occurrence.
 */
static const char *intern_key(struct parser *ps, const char *key, uint32_t klen, uint32_t *hash,
			      struct intern **entry)
{
	uint32_t mask, i, h;

	if (ps->icount >= INTERN_MAX) {
		*hash = hash_key(key, klen);
		*entry = NULL;
		return bg_arena_strndup(ps->a, key, klen);
	}
	if (2 * (ps->icount + 1) > ps->icap) {
		struct intern *old = ps->itab;
		uint32_t oldcap = ps->icap;
		ps->icap = oldcap ? 2 * oldcap : 256;
		ps->itab = bg_xcalloc(ps->icap, sizeof(*ps->itab));
		for (uint32_t j = 0; j < oldcap; j++) {
			if (!old[j].key)
				continue;
			i = old[j].hash & (ps->icap - 1);
			while (ps->itab[i].key)
				i = (i + 1) & (ps->icap - 1);
			ps->itab[i] = old[j];
		}
		free(old);
	}
	h = hash_key(key, klen);
	mask = ps->icap - 1;
	for (i = h & mask; ps->itab[i].key; i = (i + 1) & mask) {
		const struct intern *e = &ps->itab[i];
		if (e->hash == h && e->klen == klen && bg_same_bytes(e->key, key, klen)) {
			*hash = e->hash;
			*entry = &ps->itab[i];
			return e->key;
		}
	}
	key = bg_arena_strndup(ps->a, key, klen);
	ps->itab[i].key = key;
	ps->itab[i].klen = klen;
	ps->itab[i].hash = *hash = h;
	ps->itab[i].keep_list = NULL;
	*entry = &ps->itab[i];
	ps->icount++;
	return key;
}

/* Appends p[0..n) quoted for a message: control bytes, DEL and bytes that
 * are not valid UTF-8 as \xNN. */
static void quote_token(char *buf, size_t size, const char *p, size_t n)
{
	size_t o = 0;

	buf[o++] = '\'';
	for (size_t i = 0; i < n && o + 8 < size;) {
		unsigned char c = (unsigned char)p[i];
		size_t k = c >= 0x80 ? bg_utf8_len((const unsigned char *)p + i) : 1;
		if (c >= 0x80 && k && i + k <= n) {
			memcpy(buf + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		if (c < 0x20 || c >= 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
		i++;
	}
	buf[o++] = '\'';
	buf[o] = '\0';
}

/* The text of the token at p, for "near '...'" (jansson's wording); *last
 * receives its last byte (end for the end of the text). */
static void token_text(const char *p, const char *end, char *buf, size_t size, const char **last)
{
	size_t n = 0;

	if (p >= end) {
		snprintf(buf, size, "end of file");
		*last = end;
		return;
	}
	if (*p == '"') {
		n = 1;
		while (p + n < end && n < 40 && p[n] != '"' && p[n] != '\n') {
			if (p[n] == '\\' && p + n + 1 < end)
				n++;
			n++;
		}
		if (p + n < end && p[n] == '"')
			n++;
	} else if (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.') {
		while (p + n < end && n < 40 &&
		       (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '+' || p[n] == '.'))
			n++;
	} else {
		n = 1;
	}
	quote_token(buf, size, p, n);
	*last = p + n - 1;
}

/* Records "DISPLAY:LINE:COL: invalid JSON: WHAT near TOKEN"; at is the
 * token's first byte; the position is that of its last byte. When near is
 * not NULL it replaces the token text (from the token's start to at). */
static void perr_record(struct parser *ps, const char *at, const char *near_from, const char *fmt, ...)
	BG_PRINTF(4, 5);
/* perr_record, then BG_ECHECK: a status every caller (and a static
 * analyser, which does not follow a variadic call) sees is not BG_OK */
#define perr(...) (perr_record(__VA_ARGS__), BG_ECHECK)
/* The 1-based line and column (in code points) of the byte at in the text. */
static void text_pos(const struct parser *ps, const char *at, long *line, long *col)
{
	*line = 1;
	*col = 0;
	for (const char *q = ps->start; q < at; q++) {
		if (*q == '\n') {
			++*line;
			*col = 0;
		} else if (((unsigned char)*q & 0xc0) != 0x80) {
			++*col;
		}
	}
	++*col;
}

static void perr_record(struct parser *ps, const char *at, const char *near_from, const char *fmt, ...)
{
	char what[160], tok[200];
	const char *last;
	long line, col;
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (near_from) {
		size_t n = (size_t)(at - near_from) + (at < ps->end ? 1 : 0);
		if (n > 40)
			n = 40;
		quote_token(tok, sizeof(tok), near_from, n);
		last = at;
	} else {
		token_text(at, ps->end, tok, sizeof(tok), &last);
	}
	text_pos(ps, last, &line, &col);
	/* the line of the error: a merge's conflict marker, say so */
	if (bg_format_conflict_line(ps->start, (size_t)(ps->end - ps->start), line)) {
		bg_error(ps->ctx, BG_ECHECK,
			 "%s:%ld:%ld: invalid JSON: %s near %s; the line is a merge conflict marker: resolve the conflict, then run again",
			 ps->display, line, col, what, tok);
		return;
	}
	bg_error(ps->ctx, BG_ECHECK, "%s:%ld:%ld: invalid JSON: %s near %s", ps->display, line, col, what, tok);
}

/* Skips JSON whitespace (a value usually follows at once). */
static inline void skip_ws(struct parser *ps)
{
	const char *p = ps->p;

	if ((unsigned char)*p > ' ')
		return;
	ps->p = p + bg_span_json_space(p, (size_t)(ps->end - p));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long read_hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = (v << 4) | h;
	}
	return v;
}



/*
 * Parses the string at ps->p (on its opening quote). *out receives its text
 * (*len bytes, not NUL-terminated): the input itself when the string is
 * plain ASCII without escapes, else the decoded copy in ps->scratch, valid
 * until the next string. Inline: most strings are plain ASCII, and this
 * path is small enough to inline where keys and values are read; the rest
 * is parse_string_slow's.
 */
static int parse_string_slow(struct parser *ps, const char *p, const char **out, uint32_t *len);

static inline int parse_string(struct parser *ps, const char **out, uint32_t *len)
{
	const char *open = ps->p, *p = open + 1;

	p += bg_span_json_plain(p, (size_t)(ps->end - p));
	if (*p == '"') {
		*out = open + 1;
		*len = (uint32_t)(p - (open + 1));
		ps->p = p + 1;
		return BG_OK;
	}
	return parse_string_slow(ps, p, out, len);
}

/* parse_string past its plain ASCII prefix (open + 1 .. p): an escape, a
 * byte >= 0x80, a control byte or the end of the text at p. */
static BG_NOINLINE int parse_string_slow(struct parser *ps, const char *p, const char **out,
							uint32_t *len)
{
	const char *open = ps->p;
	struct bg_strbuf *sb = &ps->scratch;

	bg_strbuf_reset(sb);
	bg_strbuf_addn(sb, open + 1, (size_t)(p - (open + 1)));
	for (;;) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			break;
		if (c >= 0x20 && c < 0x80 && c != '\\') {
			size_t run = bg_span_json_plain(p, (size_t)(ps->end - p));
			bg_strbuf_addn(sb, p, run);
			p += run;
			continue;
		}
		if (c == '\\') {
			char e = p[1], ch;
			switch (e) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case '/': ch = '/'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u': {
				char u8[4];
				long u = read_hex4(p + 2);
				if (u < 0)
					return perr(ps, p + 1, open, "invalid escape");
				if (u == 0)
					return perr(ps, p + 5, open, "\\u0000 is not allowed");
				/* a high surrogate escape and a low one after it are one
				 * character; any other surrogate escape stays alone, as
				 * Python's json keeps it (bytes.h, bg_surrogate_at) */
				if (u >= 0xd800 && u <= 0xdbff && p[6] == '\\' && p[7] == 'u') {
					long lo = read_hex4(p + 8);
					if (lo >= 0xdc00 && lo <= 0xdfff) {
						u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
						p += 6;
					}
				}
				if (u >= 0xd800 && u <= 0xdfff && ps->finite) /* as jansson */
					return perr(ps, p + 5, open, "invalid Unicode '\\u%04lX'", u);
				bg_strbuf_addn(sb, u8, (size_t)(bg_utf8_put(u8, (unsigned long)u) - u8));
				p += 6;
				continue;
			}
			default:
				if (p + 1 >= ps->end)
					return perr(ps, ps->end, NULL, "premature end of input");
				return perr(ps, p + 1, open, "invalid escape");
			}
			bg_strbuf_addch(sb, ch);
			p += 2;
			continue;
		}
		if (c < 0x20) {
			if (p >= ps->end)
				return perr(ps, p, NULL, "premature end of input");
			return perr(ps, p, open, "control character 0x%x", c);
		}
		{
			size_t n = bg_utf8_len((const unsigned char *)p);
			if (!n)
				return perr(ps, p, open, "unable to decode byte 0x%x", c);
			bg_strbuf_addn(sb, p, n);
			p += n;
		}
	}
	*out = sb->buf;
	*len = (uint32_t)sb->len;
	ps->p = p + 1;
	return BG_OK;
}

static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int parse_number(struct parser *ps, struct bg_value **out)
{
	const char *s = ps->p, *p = s;
	bool neg = false, real = false;
	uint64_t mant = 0;
	int ndig = 0, frac = 0, overflow = 0;
	long exp10 = 0, ilen = 1; /* ilen: digits before the point */

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		const char *first = p;
		while (*p >= '0' && *p <= '9') {
			if (mant > (UINT64_MAX - 9) / 10)
				overflow = 1;
			else
				mant = mant * 10 + (uint64_t)(*p - '0');
			if (mant || ndig)
				ndig++;
			p++;
		}
		ilen = p - first;
	} else {
		return perr(ps, s, NULL, "invalid token");
	}
	if (*p == '.') {
		real = true;
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return perr(ps, s, NULL, "invalid token");
		while (*p >= '0' && *p <= '9') {
			if (ndig < 19) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				frac++;
				if (mant)
					ndig++;
			} else {
				overflow = 1;
			}
			p++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		bool eneg = false;
		long e = 0;
		real = true;
		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		if (!(*p >= '0' && *p <= '9'))
			return perr(ps, s, NULL, "invalid token");
		while (*p >= '0' && *p <= '9') {
			if (e < 100000)
				e = e * 10 + (*p - '0');
			p++;
		}
		exp10 = eneg ? -e : e;
	}
	ps->p = p;
	if (!real) {
		struct bg_value *v;
		if (overflow || (!neg && mant > (uint64_t)INT64_MAX) ||
		    (neg && mant > (uint64_t)INT64_MAX + 1)) {
			/* beyond 64 bits: Python's int keeps it, as its text does here */
			if (ps->finite)
				return perr(ps, s, NULL, neg ? "too big negative integer" : "too big integer");
			if ((unsigned long)ilen > BG_BIGINT_MAX_DIGITS)
				return perr(ps, s, NULL,
					    "too big integer: more than %u digits, which Python's json refuses",
					    BG_BIGINT_MAX_DIGITS);
			if (ps->skip) {
				*out = NULL;
				return BG_OK;
			}
			v = new_value(ps->a, BG_VBIGINT);
			v->n = (uint32_t)(p - s);
			v->u.s = bg_arena_strndup(ps->a, s, v->n);
			*out = v;
			return BG_OK;
		}
		if (ps->skip) {
			*out = NULL;
			return BG_OK;
		}
		if (!neg && mant < SHARED_INT_MAX) {
			*out = &small_ints[mant];
			return BG_OK;
		}
		v = new_value(ps->a, BG_VINT);
		v->u.i = neg ? (int64_t)(0 - mant) : (int64_t)mant;
		*out = v;
		return BG_OK;
	}
	{
		double d;
		long e = exp10 - frac;
		if (!overflow && ndig <= 15 && e >= -22 && e <= 22) {
			d = (double)mant;
			d = e < 0 ? d / pow10_exact[-e] : d * pow10_exact[e];
			if (neg)
				d = -d;
		} else if (ps->skip && ilen + exp10 <= 308) {
			/* not built, and below 10^308 (< DBL_MAX): cannot overflow */
			*out = NULL;
			return BG_OK;
		} else {
			/* the token, NUL-terminated for strtod */
			char small[64], *copy = small;
			size_t n = (size_t)(p - s);
			if (n >= sizeof(small))
				copy = bg_xmalloc(n + 1);
			memcpy(copy, s, n);
			copy[n] = '\0';
			d = strtod(copy, NULL);
			if (copy != small)
				free(copy);
			if (isinf(d) && ps->finite)
				return perr(ps, s, NULL, "real number overflow");
		}
		if (ps->skip) {
			*out = NULL;
			return BG_OK;
		}
		*out = new_value(ps->a, BG_VREAL);
		(*out)->u.d = d;
	}
	return BG_OK;
}

static int parse_value(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep);

/* The document's one value for the short string s[0..len): documents repeat
 * their vocabulary (dtypes, states, platforms, dates) thousands of times. */
static struct bg_value *shared_string(struct parser *ps, const char *s, uint32_t len)
{
	uint32_t h = hash_key(s, len), mask, i;
	struct bg_value *v;

	if (2 * (ps->scount + 1) > ps->scap && ps->scount < SHARED_STR_MAX) {
		struct shared_slot *old = ps->stab;
		uint32_t oldcap = ps->scap;
		ps->scap = oldcap ? 2 * oldcap : 256;
		ps->stab = bg_xcalloc(ps->scap, sizeof(*ps->stab));
		for (uint32_t j = 0; j < oldcap; j++) {
			if (!old[j].v)
				continue;
			i = old[j].hash & (ps->scap - 1);
			while (ps->stab[i].v)
				i = (i + 1) & (ps->scap - 1);
			ps->stab[i] = old[j];
		}
		free(old);
	}
	mask = ps->scap - 1;
	for (i = h & mask; ps->stab[i].v; i = (i + 1) & mask) {
		const struct shared_slot *e = &ps->stab[i];
		if (e->hash == h && e->len == len && bg_same_bytes(e->v->u.s, s, len))
			return (struct bg_value *)e->v;
	}
	v = new_value(ps->a, BG_VSTRING);
	v->u.s = bg_arena_strndup(ps->a, s, len);
	v->n = len;
	if (ps->scount < SHARED_STR_MAX) {
		ps->stab[i].hash = h;
		ps->stab[i].len = len;
		ps->stab[i].v = v;
		ps->scount++;
	}
	return v;
}

/* The string value at ps->p (on its opening quote). */
static inline int parse_string_value(struct parser *ps, struct bg_value **out)
{
	struct bg_value *v;
	const char *s;
	uint32_t len;

	if (parse_string(ps, &s, &len))
		return BG_ECHECK;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	if (len <= SHARED_STR_LEN) {
		*out = shared_string(ps, s, len);
		return BG_OK;
	}
	v = new_value(ps->a, BG_VSTRING);
	v->u.s = bg_arena_strndup(ps->a, s, len);
	v->n = len;
	*out = v;
	return BG_OK;
}

/* parse_value, a string's path inline: most members and elements are
 * strings, read here without a call */
static inline int parse_element(struct parser *ps, struct bg_value **out, int depth,
				const struct bg_value_keep *keep)
{
	skip_ws(ps);
	if (*ps->p == '"')
		return parse_string_value(ps, out);
	return parse_value(ps, out, depth, keep);
}


/*
 * After an element of an array or object: consumes ',' (another element
 * follows) or stops at the closing bracket (*done, not consumed); anything
 * else is the error "'CLOSE' expected".
 */
static int after_element(struct parser *ps, char close, bool *done)
{
	skip_ws(ps);
	if (*ps->p == ',') {
		ps->p++;
		skip_ws(ps);
		*done = false;
		return BG_OK;
	}
	if (*ps->p == close) {
		*done = true;
		return BG_OK;
	}
	return perr(ps, ps->p, NULL, "'%c' expected", close);
}

/* keep (or NULL) applies to the objects among the elements */
static int parse_array(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep)
{
	size_t base = ps->vn, n;
	struct bg_value *arr;
	bool done;

	ps->p++;
	skip_ws(ps);
	if (*ps->p != ']') {
		for (;;) {
			struct bg_value *item;
			if (ps->p >= ps->end) /* jansson: an element missing at the end */
				return perr(ps, ps->p, NULL, "']' expected");
			if (parse_element(ps, &item, depth, keep))
				return BG_ECHECK;
			if (ps->skip)
				goto next_item;
			if (ps->vn == ps->vcap) {
				ps->vcap = ps->vcap ? 2 * ps->vcap : 256;
				ps->vstack = bg_xrealloc(ps->vstack, ps->vcap * sizeof(*ps->vstack));
			}
			ps->vstack[ps->vn++] = item;
		next_item:
			if (after_element(ps, ']', &done))
				return BG_ECHECK;
			if (done)
				break;
		}
	}
	ps->p++;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	n = ps->vn - base;
	arr = new_value(ps->a, BG_VARRAY);
	arr->n = (uint32_t)n;
	arr->u.items = arena_alloc(ps->a, (n ? n : 1) * sizeof(*arr->u.items));
	if (n) /* (the stack is NULL until the first element anywhere) */
		memcpy(arr->u.items, ps->vstack + base, n * sizeof(*arr->u.items));
	ps->vn = base;
	*out = arr;
	return BG_OK;
}

/* The entry of keep (a list ended by a NULL key) for key[0..klen), or NULL. */
static const struct bg_value_keep *keep_entry(const struct bg_value_keep *keep, const char *key,
					      uint32_t klen)
{
	char first = klen ? key[0] : '\0';

	for (; keep->key; keep++) /* (the first byte first: most differ there) */
		if (keep->key[0] == first && strncmp(keep->key, key, klen) == 0 && keep->key[klen] == '\0')
			return keep;
	return NULL;
}

/* The first repeated key of a document, as find_repeat finds it. */
struct repeat {
	const char *at, *first_at; /* the repeat's opening quote, and the first one's */
	char name[120];		   /* the key as messages quote it */
};

/*
 * Reads the value at ps->p again (ps->skip set: nothing is built), in the
 * order of the text, for the first key that an object repeats: true with
 * *r filled as soon as one is met, so a repeat nested in an earlier member
 * is found before a later repeat of the object around it. Only called on a
 * document known to repeat a key, whose text up to that repeat parsed.
 */
static bool find_repeat(struct parser *ps, int depth, struct repeat *r)
{
	struct seen {
		const char *key, *at;
		uint32_t klen;
	} *seen = NULL;
	size_t nseen = 0, cap = 0;
	struct bg_value *ignored;
	bool done = false, found = false;

	skip_ws(ps);
	if ((*ps->p != '{' && *ps->p != '[') || depth >= BG_VALUE_MAX_DEPTH) {
		(void)parse_value(ps, &ignored, depth, NULL);
		return false;
	}
	if (*ps->p++ == '[') {
		skip_ws(ps);
		if (*ps->p == ']')
			done = true;
		while (!done && !found && ps->p < ps->end)
			if (!(found = find_repeat(ps, depth + 1, r)) && after_element(ps, ']', &done))
				break;
		ps->p += done;
		return found;
	}
	skip_ws(ps);
	if (*ps->p == '}')
		done = true;
	while (!done && !found && *ps->p == '"') {
		const char *at = ps->p, *key;
		uint32_t klen;

		if (parse_string(ps, &key, &klen))
			break;
		for (size_t i = 0; i < nseen && !found; i++) {
			if (seen[i].klen != klen || memcmp(seen[i].key, key, klen) != 0)
				continue;
			quote_token(r->name, sizeof(r->name), key, klen);
			r->at = at;
			r->first_at = seen[i].at;
			found = true;
		}
		if (found)
			break;
		if (nseen == cap) {
			cap = cap ? 2 * cap : 16;
			seen = bg_xrealloc(seen, cap * sizeof(*seen));
		}
		seen[nseen].key = bg_arena_strndup(ps->a, key, klen); /* key may be the scratch */
		seen[nseen].klen = klen;
		seen[nseen++].at = at;
		skip_ws(ps);
		ps->p++; /* ':' */
		if ((found = find_repeat(ps, depth + 1, r)) || after_element(ps, '}', &done))
			break;
	}
	free(seen);
	ps->p += done && !found;
	return found;
}

/*
 * The error for a document found to repeat a key (BG_VALUE_REJECT_DUPLICATES;
 * an object parsed whole that folded one): "DISPLAY:LINE:COL: duplicate key
 * 'KEY' (first at LINE:COL); remove one of them" for the first repeat in the
 * text, at its opening quote, wherever it is nested. Only this error path
 * reads the document a second time (without building values).
 */
static int duplicate_error(struct parser *ps)
{
	struct repeat r;
	long line, col, line1, col1;

	ps->p = ps->start;
	ps->skip = true;
	if (!find_repeat(ps, 0, &r)) { /* not reached for a document that repeats a key */
		ps->failed = true;
		return bg_error(ps->ctx, BG_ECHECK, "%s: duplicate key; remove one of them", ps->display);
	}
	text_pos(ps, r.at, &line, &col);
	text_pos(ps, r.first_at, &line1, &col1);
	ps->failed = true;
	return bg_error(ps->ctx, BG_ECHECK, "%s:%ld:%ld: duplicate key %s (first at %ld:%ld); remove one of them",
			ps->display, line, col, r.name, line1, col1);
}

/* keep (or NULL: every member) names the members that are built; the others
 * are checked as strictly but leave nothing behind. */
static int parse_object(struct parser *ps, struct bg_value **out, int depth,
			const struct bg_value_keep *keep)
{
	size_t base = ps->mn, n;
	struct bg_value *obj;
	bool done, left_out = false;

	ps->p++;
	skip_ws(ps);
	if (*ps->p != '}') {
		for (;;) {
			struct bg_member m;
			if (*ps->p != '"')
				return perr(ps, ps->p, NULL, "string or '}' expected");
			const struct bg_value_keep *sub = NULL;
			bool dropped = false;
			m.hash = 0;
			if (parse_string(ps, &m.key, &m.klen))
				return BG_ECHECK;
			if (!ps->skip) {
				struct intern *ie;
				m.key = intern_key(ps, m.key, m.klen, &m.hash, &ie);
				if (keep) {
					const struct bg_value_keep *e;
					if (ie && ie->keep_list == keep) {
						e = ie->keep_hit;
					} else {
						e = keep_entry(keep, m.key, m.klen);
						if (ie) {
							ie->keep_list = keep;
							ie->keep_hit = e;
						}
					}
					if (e)
						sub = e->members;
					else
						dropped = true;
				}
			}
			skip_ws(ps);
			if (*ps->p != ':')
				return perr(ps, ps->p, NULL, "':' expected");
			ps->p++;
			if (dropped) {
				int rc;
				left_out = true;
				ps->skip = true;
				rc = parse_value(ps, &m.value, depth, NULL);
				ps->skip = false;
				if (rc)
					return rc;
				goto next_member;
			}
			if (parse_element(ps, &m.value, depth, sub))
				return BG_ECHECK;
			if (ps->skip)
				goto next_member;
			if (ps->mn == ps->mcap) {
				ps->mcap = ps->mcap ? 2 * ps->mcap : 256;
				ps->mstack = bg_xrealloc(ps->mstack, ps->mcap * sizeof(*ps->mstack));
			}
			ps->mstack[ps->mn++] = m;
		next_member:
			if (after_element(ps, '}', &done))
				return BG_ECHECK;
			if (done)
				break;
		}
	}
	ps->p++;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	n = ps->mn - base;
	obj = new_value(ps->a, BG_VOBJECT);
	obj->n = (uint32_t)n;
	if (left_out)
		obj->flags = F_LEFT_OUT;
	obj->u.members = alloc_members(ps->a, n);
	if (n)
		memcpy(obj->u.members, ps->mstack + base, n * sizeof(*obj->u.members));
	ps->mn = base;
	if (n > SMALL_OBJECT) {
		bg_value_build_index(ps->a, obj, 0); /* also folds duplicate keys */
	} else {
		/* duplicate keys: first position, last value (Python's dict) */
		struct bg_member *m = obj->u.members;
		uint64_t seen = 0;
		uint32_t w = 0;
		for (uint32_t r = 0; r < obj->n; r++) {
			uint64_t bit = (uint64_t)1 << (m[r].hash & 63);
			uint32_t j = w;
			if (seen & bit)
				for (j = 0; j < w; j++)
				if (m[j].hash == m[r].hash && m[j].klen == m[r].klen &&
				    memcmp(m[j].key, m[r].key, m[r].klen) == 0)
					break;
			seen |= bit;
			if (j < w)
				m[j].value = m[r].value;
			else
				m[w++] = m[r];
		}
		obj->n = w;
	}
	if (obj->n != n && ps->reject_dups)
		return duplicate_error(ps);
	*out = obj;
	return BG_OK;
}

static int parse_literal(struct parser *ps, const char *word, size_t n, struct bg_value *v,
			 struct bg_value **out)
{
	const char *p = ps->p;

	if (strncmp(p, word, n) == 0 && !isalnum((unsigned char)p[n])) {
		ps->p = p + n;
		*out = v;
		return BG_OK;
	}
	return perr(ps, p, NULL, "invalid token");
}

/*
 * NaN, Infinity or -Infinity at ps->p, which Python's json reads as floats
 * (a Python script that wrote numpy.nan); refused under BG_VALUE_FINITE,
 * saying so (jansson says "invalid token").
 */
static int parse_nonfinite(struct parser *ps, struct bg_value **out)
{
	const char *p = ps->p;
	bool neg = *p == '-';
	const char *word = p[neg] == 'N' ? "NaN" : "Infinity";
	size_t n = strlen(word);

	if (strncmp(p + neg, word, n) != 0 || isalnum((unsigned char)p[neg + n]))
		return neg ? parse_number(ps, out) : perr(ps, p, NULL, "invalid token");
	if (ps->finite)
		return perr(ps, p, NULL, "%s%s is not a number this file takes; write a finite number", neg ? "-" : "",
			    word);
	ps->p = p + neg + n;
	if (ps->skip) {
		*out = NULL;
		return BG_OK;
	}
	*out = new_value(ps->a, BG_VREAL);
	(*out)->u.d = word[0] == 'N' ? NAN : neg ? -INFINITY : INFINITY;
	return BG_OK;
}

static int parse_value(struct parser *ps, struct bg_value **out, int depth,
		       const struct bg_value_keep *keep)
{
	skip_ws(ps);
	switch (*ps->p) {
	case '{':
	case '[':
		if (depth >= BG_VALUE_MAX_DEPTH)
			return perr(ps, ps->p, NULL, "maximum parsing depth reached");
		return *ps->p == '{' ? parse_object(ps, out, depth + 1, keep)
				     : parse_array(ps, out, depth + 1, keep);
	case '"':
		return parse_string_value(ps, out);
	case '-':
		if (ps->p[1] == 'I')
			return parse_nonfinite(ps, out);
		return parse_number(ps, out);
	case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		return parse_number(ps, out);
	case 'N':
	case 'I':
		return parse_nonfinite(ps, out);
	case 't':
		return parse_literal(ps, "true", 4, &bg_value_true_v, out);
	case 'f':
		return parse_literal(ps, "false", 5, &bg_value_false_v, out);
	case 'n':
		return parse_literal(ps, "null", 4, &bg_value_null_v, out);
	default:
		if (ps->p < ps->end && isalpha((unsigned char)*ps->p))
			return perr(ps, ps->p, NULL, "invalid token");
		return perr(ps, ps->p, NULL, "unexpected token");
	}
}

/* Parses text[0..len); text[len] must be '\0'. The text is only read:
 * what the values keep of it is copied into the arena. */
static int parse_text(struct bg_arena *a, const char *text, size_t len, const char *display,
		      const struct bg_value_keep *keep, unsigned flags, struct bg_value **out,
		      struct bg_ctx *ctx)
{
	struct parser ps;
	int rc;

	*out = NULL;
	if (len == 0)
		return bg_error(ctx, BG_ECHECK, "%s: file is empty; expected a JSON object", display);
	if (len < UINT32_MAX && bg_span_json_space(text, len) == len)
		return bg_error(ctx, BG_ECHECK, "%s: file holds only whitespace; expected a JSON object", display);
	if (len >= UINT32_MAX) /* lengths and counts are 32-bit */
		return bg_error(ctx, BG_ECHECK, "%s: too large to read (4 GiB or more)", display);
	/* an editor's byte order mark: JSON has none, and Python refuses it too */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		return bg_error(ctx, BG_ECHECK,
				"%s:1:1: invalid JSON: the file starts with a UTF-8 byte order mark (BOM); save it without one",
				display);
	memset(&ps, 0, sizeof(ps));
	ps.a = a;
	ps.start = ps.p = text;
	ps.end = text + len;
	ps.display = display;
	ps.ctx = ctx;
	ps.reject_dups = (flags & BG_VALUE_REJECT_DUPLICATES) != 0;
	ps.finite = (flags & BG_VALUE_FINITE) != 0;
	bg_strbuf_init(&ps.scratch);
	rc = parse_value(&ps, out, 0, keep);
	if (!rc) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			rc = perr(&ps, ps.p, NULL, "end of file expected");
	}
	free(ps.vstack);
	free(ps.mstack);
	free(ps.itab);
	free(ps.stab);
	bg_strbuf_release(&ps.scratch);
	if (rc)
		*out = NULL;
	return rc;
}

int bg_value_parse(struct bg_arena *a, const char *data, size_t len, const char *display,
		   struct bg_value **out, struct bg_ctx *ctx)
{
	return bg_value_parse_keep(a, data, len, display, NULL, out, ctx);
}

int bg_value_parse_keep(struct bg_arena *a, const char *data, size_t len, const char *display,
			const struct bg_value_keep *keep, struct bg_value **out, struct bg_ctx *ctx)
{
	char *text = bg_xmalloc(len + 1); /* the parser reads one byte past the end */
	int rc;

	memcpy(text, data, len);
	text[len] = '\0';
	rc = parse_text(a, text, len, display, keep, 0, out, ctx);
	free(text);
	return rc;
}

int bg_value_parse_file(struct bg_arena *a, const char *path, const char *display,
			struct bg_value **out, struct bg_ctx *ctx)
{
	return bg_value_parse_file_keep(a, path, display, NULL, out, ctx);
}

/* bg_value_parse_file_keep with parse flags (BG_VALUE_*). */
static int parse_file(struct bg_arena *a, const char *path, const char *display,
		      const struct bg_value_keep *keep, unsigned flags, struct bg_value **out,
		      struct bg_ctx *ctx)
{
	struct bg_file_view view;
	int rc;

	if (!display)
		display = path;
	*out = NULL;
	if ((rc = bg_file_view_open(&view, path, display, ctx)))
		return rc;
	rc = parse_text(a, view.text, view.len, display, keep, flags, out, ctx);
	bg_file_view_release(&view);
	return rc;
}

int bg_value_parse_file_keep(struct bg_arena *a, const char *path, const char *display,
			     const struct bg_value_keep *keep, struct bg_value **out, struct bg_ctx *ctx)
{
	return parse_file(a, path, display, keep, 0, out, ctx);
}

int bg_value_parse_file_flags(struct bg_arena *a, const char *path, const char *display,
			      unsigned flags, struct bg_value **out, struct bg_ctx *ctx)
{
	return parse_file(a, path, display, NULL, flags, out, ctx);
}

int bg_value_expect_object(const struct bg_value *v, const char *display, struct bg_ctx *ctx)
{
	if (bg_value_is_object(v))
		return BG_OK;
	return bg_error(ctx, BG_ECHECK, "%s: top level must be a JSON object", display);
}

