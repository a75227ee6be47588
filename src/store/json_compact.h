/*
 * json_compact.h - the store's compact JSON writer (json_compact.c):
 * jansson values as compact JSON text appended to a caller's buffer, as
 * json_dumps(v, JSON_COMPACT) writes them. Store-internal. Nothing here
 * fails (the buffer grows, or the program stops out of memory) or takes
 * ownership: the caller keeps its values and its buffer.
 */
#ifndef BG_STORE_JSON_COMPACT_H
#define BG_STORE_JSON_COMPACT_H

#include "benchgate/strbuf.h"

#include <jansson.h>
#include <stddef.h>

/* One byte, without a call: the writers add several per member. */
static inline void bg_store_put_byte(struct bg_strbuf *out, char c)
{
	if (out->len + 1 >= out->cap)
		bg_strbuf_grow(out, 1);
	out->buf[out->len++] = c;
	out->buf[out->len] = '\0';
}

/* s[0..n) as a JSON string, quotes included. */
void bg_store_json_string(struct bg_strbuf *out, const char *s, size_t n);
/* Object o without its members named skip1 and skip2 (either may be NULL). */
void bg_store_json_object(struct bg_strbuf *out, const json_t *o, const char *skip1,
			  const char *skip2);
/* Any value. */
void bg_store_json_compact(struct bg_strbuf *out, const json_t *v);

#endif
