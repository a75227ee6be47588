/*
 * strbuf.c - growable NUL-terminated string (see strbuf.h).
 */
#include "benchgate/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char bg_strbuf_empty[1];

void bg_strbuf_init(struct bg_strbuf *sb)
{
	sb->buf = bg_strbuf_empty;
	sb->len = 0;
	sb->cap = 0;
}

void bg_strbuf_release(struct bg_strbuf *sb)
{
	if (sb->cap)
		free(sb->buf);
	bg_strbuf_init(sb);
}

void bg_strbuf_reset(struct bg_strbuf *sb)
{
	bg_strbuf_setlen(sb, 0);
}

void bg_strbuf_grow(struct bg_strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	size_t cap;

	if (need <= sb->cap)
		return;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap / 2 * 3 + 16;
	if (sb->cap) {
		sb->buf = bg_xrealloc(sb->buf, cap);
		/* the new room is about to be filled (a file read, a page
		 * rendered): faulted in at once, as bg_xmalloc does a new buffer */
		if (cap - sb->len >= BG_PREFAULT_MIN)
			bg_prefault(sb->buf + sb->len, cap - sb->len);
	} else {
		sb->buf = bg_xmalloc(cap);
		sb->buf[0] = '\0';
	}
	sb->cap = cap;
}

void bg_strbuf_setlen(struct bg_strbuf *sb, size_t len)
{
	if (!sb->cap) {
		if (len == 0)
			return;
		bg_strbuf_grow(sb, len);
	}
	sb->len = len;
	sb->buf[len] = '\0';
}

void bg_strbuf_addn(struct bg_strbuf *sb, const char *s, size_t n)
{
	if (n == 0)
		return;
	bg_strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void bg_strbuf_adds(struct bg_strbuf *sb, const char *s)
{
	bg_strbuf_addn(sb, s, strlen(s));
}

void bg_strbuf_addch(struct bg_strbuf *sb, char c)
{
	bg_strbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void bg_strbuf_vaddf(struct bg_strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n <= 0)
		return;
	bg_strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void bg_strbuf_addf(struct bg_strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *bg_strbuf_detach(struct bg_strbuf *sb, size_t *len)
{
	char *p;

	if (!sb->cap)
		bg_strbuf_grow(sb, 0);
	p = sb->buf;
	if (len)
		*len = sb->len;
	bg_strbuf_init(sb);
	return p;
}
