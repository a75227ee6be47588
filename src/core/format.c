/*
 * format.c - durations and sizes as people read them, and outside text
 * judged as one line a person reads back (see format.h).
 */
#include "benchgate/format.h"
#include "core/bytes.h"
#include "core/pyval.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static const char *const duration_names[] = {"ns", "us", "ms", "s"};
static const double duration_factors[] = {1, 1e3, 1e6, 1e9};
static const int duration_decimals[] = {0, 1, 2, 3};

static const char *const bytes_names[] = {"B", "KiB", "MiB", "GiB"};
static const double bytes_factors[] = {1, 1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024};
/* three decimals of MiB: a 1% envelope of a 1 MiB peak shows */
static const int bytes_decimals[] = {0, 2, 3, 3};

/*
 * The largest of the n units in which v's magnitude, as printed with that
 * unit's decimals, is at least 1 (each factor a multiple of the one before).
 */
static struct bg_unit pick(double v, const char *const *names, const double *factors, const int *decimals,
			   int n)
{
	int u = 0;

	for (int k = 1; k < n; k++) {
		double p = 1;

		for (int d = 0; d < decimals[k - 1]; d++)
			p *= 10;
		/* past the next unit once rounding in this one would print 1000 or 1024 */
		if (fabs(v) / factors[k - 1] * p + 0.5 >= factors[k] / factors[k - 1] * p)
			u = k;
	}
	return (struct bg_unit){names[u], factors[u], decimals[u]};
}

struct bg_unit bg_format_duration_unit(double ns)
{
	return pick(ns, duration_names, duration_factors, duration_decimals, 4);
}

struct bg_unit bg_format_bytes_unit(double bytes)
{
	return pick(bytes, bytes_names, bytes_factors, bytes_decimals, 4);
}

static void put(struct bg_strbuf *out, const json_t *v, struct bg_unit (*unit)(double))
{
	struct bg_unit u;
	double x;

	if (!json_is_number(v)) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	x = json_number_value(v);
	u = unit(x);
	/* beyond a million of the largest unit (a figure edited by hand, or
	 * absurd): four significant digits, not hundreds of them */
	if (fabs(x / u.factor) >= 1e6)
		bg_strbuf_addf(out, "%.3e %s", x / u.factor, u.name);
	else
		bg_strbuf_addf(out, "%.*f %s", u.decimals, x / u.factor, u.name);
}

void bg_format_duration(struct bg_strbuf *out, const json_t *ns)
{
	put(out, ns, bg_format_duration_unit);
}

void bg_format_bytes(struct bg_strbuf *out, const json_t *bytes)
{
	put(out, bytes, bg_format_bytes_unit);
}

/* The length of the character at p and whether it is one a line cannot show
 * (C0, DEL, C1, U+2028, U+2029); 0 when p starts no valid UTF-8 sequence. */
static size_t next_char(const unsigned char *p, bool *control)
{
	size_t n;

	if (*p < 0x80) {
		*control = *p < 0x20 || *p == 0x7f;
		return 1;
	}
	if (!(n = bg_utf8_len(p)))
		return 0;
	*control = (p[0] == 0xc2 && p[1] <= 0x9f) || (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9));
	return n;
}

/* The code point of the valid UTF-8 sequence of n bytes at p. */
static unsigned long code_point(const unsigned char *p, size_t n)
{
	static const unsigned char lead_bits[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	unsigned long c = p[0] & lead_bits[n];

	for (size_t i = 1; i < n; i++)
		c = (c << 6) | (p[i] & 0x3f);
	return c;
}

/* The bidirectional embeddings, overrides and isolates (U+202A..U+202E,
 * U+2066..U+2069): they reorder the text shown after them. */
static bool bidi_control(unsigned long c)
{
	return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* A character that shows nothing: Unicode's Default_Ignorable_Code_Point
 * (soft hyphen, zero-width space and joiners, word joiner, variation
 * selectors, byte order mark, Hangul fillers, tags), the blank braille
 * pattern U+2800, the interlinear annotation marks U+FFF9..U+FFFB, and the
 * combining marks of the blocks that hold only them (alone, they have no
 * letter to mark: a text of nothing else shows nothing of its own). */
static bool invisible(unsigned long c)
{
	static const unsigned long ranges[][2] = {
		{0x00ad, 0x00ad}, {0x0300, 0x036f}, {0x061c, 0x061c}, {0x115f, 0x1160}, {0x17b4, 0x17b5},
		{0x180b, 0x180f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x202a, 0x202e},
		{0x2060, 0x206f}, {0x20d0, 0x20ff}, {0x2800, 0x2800}, {0x3164, 0x3164}, {0xfe00, 0xfe0f},
		{0xfe20, 0xfe2f}, {0xfeff, 0xfeff}, {0xffa0, 0xffa0}, {0xfff0, 0xfffb}, {0x1bca0, 0x1bca3},
		{0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(*ranges); i++)
		if (c >= ranges[i][0] && c <= ranges[i][1])
			return true;
	return false;
}

bool bg_format_blank(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		bool control;
		size_t n = next_char(p, &control), start, len;

		if (!n)
			return false; /* a byte that is no UTF-8 shows (as \xNN) */
		if (!invisible(code_point(p, n))) {
			bg_py_strip((const char *)p, n, &start, &len);
			if (len)
				return false;
		}
		p += n;
	}
	return true;
}

const char *bg_format_line_problem(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		bool control;
		size_t n = next_char(p, &control);

		if (!n)
			return "it is not valid UTF-8";
		if (control)
			return *p < 0x80 ? "it holds a control character (a newline, tab or escape)"
					 : "it holds a control character or a line break";
		if (bidi_control(code_point(p, n)))
			return "it holds a bidirectional control character (U+202A..U+202E, U+2066..U+2069), "
			       "which shows the text after it reordered";
		p += n;
	}
	return bg_format_blank(s) ? BG_FORMAT_BLANK : NULL;
}

size_t bg_format_control_at(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (u[0] < 0x20 || u[0] == 0x7f)
		return 1;
	if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
		return 2;
	if (u[0] == 0xe2 && ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) || (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)))
		return 3;
	if (u[0] >= 0x80 && !bg_utf8_len(u)) /* a lone 0x9b is CSI to an 8-bit terminal */
		return 1;
	return 0;
}

void bg_format_signal(struct bg_strbuf *out, int sig)
{
	const char *abbrev = sigabbrev_np(sig), *descr = sigdescr_np(sig);

	bg_strbuf_addf(out, "%d", sig);
	if (abbrev && descr)
		bg_strbuf_addf(out, " (SIG%s: %s)", abbrev, descr);
}

bool bg_format_conflict_marker(const char *l, size_t n)
{
	if (n && l[n - 1] == '\r')
		n--;
	return n >= 7 &&
	       (memcmp(l, "<<<<<<<", 7) == 0 || memcmp(l, "|||||||", 7) == 0 || memcmp(l, "=======", 7) == 0 ||
		memcmp(l, ">>>>>>>", 7) == 0) &&
	       (n == 7 || (l[7] == ' ' && l[0] != '='));
}

bool bg_format_conflict_line(const char *text, size_t len, long line)
{
	const char *b = text, *end = text + len, *e;

	for (long k = 1; k < line; k++) {
		if (!(e = memchr(b, '\n', (size_t)(end - b))))
			return false;
		b = e + 1;
	}
	e = memchr(b, '\n', (size_t)(end - b));
	return bg_format_conflict_marker(b, e ? (size_t)(e - b) : (size_t)(end - b));
}
