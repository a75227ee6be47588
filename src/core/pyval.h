/*
 * pyval.h - the few Python semantics the reference tools rely on, applied to
 * jansson values: ordering (with TypeError detection), str.strip,
 * float()/int() conversions, lower-casing, code-point slicing.
 * Library-internal; a NULL json_t * stands for a missing key (None).
 */
#ifndef BENCHGATE_PYVAL_H
#define BENCHGATE_PYVAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/strbuf.h"

/* Python a < b ordering; *type_error set when Python would raise TypeError. */
int bg_py_cmp(const json_t *a, const json_t *b, bool *type_error);
/* True for int, float or bool (isinstance(v, (int, float))). */
bool bg_py_is_number(const json_t *v);
/* isinstance(v, int): integers and booleans. */
bool bg_py_is_int(const json_t *v, long long *out);
/* float(v): numbers, bools, numeric strings; false when Python raises. */
bool bg_py_to_float(const json_t *v, double *out);
/* int(v): ints, bools, floats (truncated), integer strings; false when Python raises. */
bool bg_py_to_int(const json_t *v, long long *out);
/* Whether str(v).strip() is empty. */
bool bg_py_str_blank(const json_t *v);
/* Python str.strip() of a UTF-8 string: start/length of the stripped part. */
void bg_py_strip(const char *s, size_t len, size_t *start, size_t *out_len);
/* ASCII lower-casing of a UTF-8 string into out. */
void bg_py_lower(struct bg_strbuf *out, const char *s);
/* First n code points of s. */
void bg_py_prefix(struct bg_strbuf *out, const char *s, size_t n);

#endif
