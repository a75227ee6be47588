/*
 * pyval.h - the few Python string semantics the reference tools rely on:
 * str.strip, str.lower, code-point slicing, and float floor
 * division. Library-internal.
 * (The value semantics -- ordering, float()/int(), truthiness -- live with
 * the DOM in benchgate/value.h.)
 */
#ifndef BENCHGATE_PYVAL_H
#define BENCHGATE_PYVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "benchgate/strbuf.h"

/* Python str.strip() of a UTF-8 string: start/length of the stripped part. */
void bg_py_strip(const char *s, size_t len, size_t *start, size_t *out_len);
/* The length in bytes of the line boundary Python's str.splitlines sees at
 * s[0..len) (\n, \r, \r\n, \v, \f, \x1c-\x1e, U+0085, U+2028, U+2029), or 0. */
size_t bg_py_line_break(const char *s, size_t len);
/* Python's str.lower() of a UTF-8 string into out (appended; s may lie in
 * out's own buffer). Bytes that are no UTF-8 character are kept as they are. */
void bg_py_lower(struct bg_strbuf *out, const char *s);
/* First n code points of s (appended to out). */
void bg_py_prefix(struct bg_strbuf *out, const char *s, size_t n);
/* Python's float p // q for q != 0 (CPython's float_floor_div: through
 * fmod, so 1 // 0.1 is 9.0, not floor(1 / 0.1) = 10.0). */
double bg_py_floordiv(double p, double q);

#endif
