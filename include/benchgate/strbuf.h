/*
 * strbuf.h - the one growable string of benchgate.
 *
 * A struct bg_strbuf owns its buffer; buf is always NUL-terminated (also
 * when empty) and may hold NUL bytes inside len. bg_strbuf_detach hands the
 * buffer to the caller, who frees it with free().
 */
#ifndef BENCHGATE_STRBUF_H
#define BENCHGATE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

extern char bg_strbuf_empty[];
#define BG_STRBUF_INIT { bg_strbuf_empty, 0, 0 }

void bg_strbuf_init(struct bg_strbuf *sb);
void bg_strbuf_release(struct bg_strbuf *sb);
void bg_strbuf_reset(struct bg_strbuf *sb);
void bg_strbuf_grow(struct bg_strbuf *sb, size_t extra);
void bg_strbuf_addn(struct bg_strbuf *sb, const char *s, size_t n);
void bg_strbuf_adds(struct bg_strbuf *sb, const char *s);
void bg_strbuf_addch(struct bg_strbuf *sb, char c);
void bg_strbuf_addf(struct bg_strbuf *sb, const char *fmt, ...) BG_PRINTF(2, 3);
void bg_strbuf_vaddf(struct bg_strbuf *sb, const char *fmt, va_list ap);
void bg_strbuf_setlen(struct bg_strbuf *sb, size_t len);
/* Returns the buffer (caller frees) and leaves sb empty. */
char *bg_strbuf_detach(struct bg_strbuf *sb, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
