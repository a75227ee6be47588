/*
 * bytes.h - word-at-a-time byte scanning, UTF-8 sequence checks and
 * hashing shared by the parser, the DOM, the renderer and the JSON
 * helpers. Library-internal; header-only (static inline),
 * no allocation, no state.
 */
#ifndef BENCHGATE_BYTES_H
#define BENCHGATE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define BG_ONES ((uint64_t)0x0101010101010101u)
#define BG_HIGHS ((uint64_t)0x8080808080808080u)

/* Eight bytes at p, in memory order as one little- or big-endian word. */
static inline uint64_t bg_load8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

/* Nonzero when some byte of w equals c (exact: no false positives). */
static inline uint64_t bg_has_byte(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (BG_ONES * c);

	return ~(((x & ~BG_HIGHS) + ~BG_HIGHS) | x) & BG_HIGHS;
}

#if defined(__SSE2__)
static inline __m128i bg_load16(const char *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* Bit i set: byte i of v is '"', '\\', a control byte or >= 0x80 (the
 * signed compare puts bytes >= 0x80 below ' '). */
static inline unsigned bg_stop_json_plain(__m128i v)
{
	__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				 _mm_cmplt_epi8(v, _mm_set1_epi8(' ')));
	return (unsigned)_mm_movemask_epi8(m);
}

/* Bit i set: byte i of v is not JSON whitespace. */
static inline unsigned bg_stop_json_space(__m128i v)
{
	__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
				 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
	return ~(unsigned)_mm_movemask_epi8(m) & 0xffffu;
}

/* Sixteen bytes at a time: the first stopping byte of s[0..n), or where
 * fewer than sixteen bytes remain (returned i + 16 > n: the caller's own
 * loop goes on from there). */
static inline size_t bg_span16(const char *s, size_t n, unsigned (*stop)(__m128i))
{
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		unsigned mask = stop(bg_load16(s + i));
		if (mask)
			return i + (size_t)__builtin_ctz(mask);
	}
	return i;
}
#endif

/* Length of the longest prefix of s[0..n) holding neither a nor b:
 * sixteen bytes at a time where SSE2 is there, then eight. */
static inline size_t bg_span_without2(const char *s, size_t n, unsigned char a, unsigned char b)
{
	size_t i = 0;

#if defined(__SSE2__)
	const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b);

	for (; i + 16 <= n; i += 16) {
		__m128i v = bg_load16(s + i);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, va), _mm_cmpeq_epi8(v, vb)));
		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#endif
	while (i + 8 <= n) {
		uint64_t w = bg_load8(s + i);
		if (bg_has_byte(w, a) | bg_has_byte(w, b))
			break;
		i += 8;
	}
	while (i < n && (unsigned char)s[i] != a && (unsigned char)s[i] != b)
		i++;
	return i;
}

/*
 * Length of the prefix of s[0..n) that a JSON string holds as it is: no
 * '"', no '\\', no control byte (< 0x20) and no byte >= 0x80. Sixteen bytes
 * at a time where SSE2 is there, eight otherwise.
 */
static inline size_t bg_span_json_plain(const char *s, size_t n)
{
	size_t i = 0;

#if defined(__SSE2__)
	i = bg_span16(s, n, bg_stop_json_plain);
	if (i + 16 <= n)
		return i;
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t w = bg_load8(s + i);
		uint64_t low = (w - BG_ONES * 0x20) & ~w; /* some byte < 0x20 (or a borrow past one) */
		if ((bg_has_byte(w, '"') | bg_has_byte(w, '\\') | low | w) & BG_HIGHS)
			break;
	}
	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x80 && s[i] != '"' &&
	       s[i] != '\\')
		i++;
	return i;
}

/* Length of the prefix of s[0..n) that is JSON whitespace (space, \n, \r, \t). */
static inline size_t bg_span_json_space(const char *s, size_t n)
{
	size_t i = 0;

#if defined(__SSE2__)
	i = bg_span16(s, n, bg_stop_json_space);
	if (i + 16 <= n)
		return i;
#endif
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	return i;
}

/* Whether a[0..n) and b[0..n) hold the same bytes: keys and short strings
 * are mostly under 24 bytes, where a call to memcmp costs more than the
 * comparison. Reads only inside both ranges. */
static inline bool bg_same_bytes(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		size_t i = 0;
		for (; i + 8 <= n; i += 8)
			if (bg_load8(a + i) != bg_load8(b + i))
				return false;
		return bg_load8(a + n - 8) == bg_load8(b + n - 8);
	}
	if (n >= 4) {
		uint32_t x, y, u, v;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		memcpy(&u, a + n - 4, 4);
		memcpy(&v, b + n - 4, 4);
		return x == y && u == v;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/*
 * The hash of s[0..n) used by object indexes and the parser's key table:
 * eight bytes at a time, then the tail (read overlapping; the length is
 * mixed in first); every input byte reaches the low bits that index tables. Not stable across versions; never stored.
 */
static inline uint32_t bg_hash_bytes(const char *s, size_t n)
{
	uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15u, w = 0;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		h = (h ^ bg_load8(s + i)) * 0xff51afd7ed558ccdu;
		h ^= h >> 29;
	}
	if (n >= 8) {
		w = bg_load8(s + n - 8); /* the tail, overlapping the last full word */
	} else if (n >= 4) {
		uint32_t lo, hi;
		memcpy(&lo, s, 4);
		memcpy(&hi, s + n - 4, 4);
		w = lo | (uint64_t)hi << 32;
	} else if (n > 0) {
		w = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
		    (uint64_t)(unsigned char)s[n - 1] << 16;
	}
	h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 32;
	return (uint32_t)h;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0: no
 * overlong form, no encoded surrogate, nothing above U+10FFFF (what jansson
 * accepts). Reads no byte past a NUL that ends the text early. */
static inline size_t bg_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c >= 0xc2 && c <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* Whether p starts a surrogate code point (U+D800..U+DFFF) encoded as
 * UTF-8 would encode it (ED A0..BF 80..BF): how a parsed string keeps a
 * lone surrogate escape (\ud800), as Python's json keeps one in a str. No
 * other way makes one: raw bytes of that form in a file are refused as
 * not UTF-8. Reads no byte past a NUL. */
static inline bool bg_surrogate_at(const unsigned char *p)
{
	return p[0] == 0xed && p[1] >= 0xa0 && p[1] <= 0xbf && (p[2] & 0xc0) == 0x80;
}

/* The code point of the surrogate at p (bg_surrogate_at). */
static inline unsigned bg_surrogate_value(const unsigned char *p)
{
	return ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
}

/* bg_utf8_len, and 3 for a lone surrogate kept from a JSON escape. */
static inline size_t bg_char_len(const unsigned char *p)
{
	size_t n = bg_utf8_len(p);

	return n ? n : bg_surrogate_at(p) ? 3 : 0;
}

/* Writes code point c (at most U+10FFFF) as UTF-8 at d (1 to 4 bytes, no
 * NUL); returns the byte after it. */
static inline char *bg_utf8_put(char *d, unsigned long c)
{
	if (c < 0x80) {
		*d++ = (char)c;
	} else if (c < 0x800) {
		*d++ = (char)(0xc0 | (c >> 6));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*d++ = (char)(0xe0 | (c >> 12));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else {
		*d++ = (char)(0xf0 | (c >> 18));
		*d++ = (char)(0x80 | ((c >> 12) & 0x3f));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	}
	return d;
}

#endif
