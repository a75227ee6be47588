/*
 * pyformat.h - Python's format(value, spec): the format-specification
 * mini-language of str.format (CPython 3.11) for the JSON values a runbook
 * command template names. Library-internal.
 */
#ifndef BENCHGATE_PYFORMAT_H
#define BENCHGATE_PYFORMAT_H

#include <stddef.h>

#include "benchgate/strbuf.h"
#include "benchgate/value.h"

/* Widths and precisions above this are refused (Python would build the
 * text, however long). */
#define BG_PY_FORMAT_MAX 1000000L

/*
 * Appends format(v, spec[0..n)) to out as CPython 3.11 writes it: fill,
 * align, sign, 'z', '#', '0', width, ',' or '_', precision and type, for a
 * string, an integer, a boolean (str() with an empty spec, an integer
 * otherwise) and a real (repr, e, f, g, n, % and their capitals). v NULL
 * is None. An empty spec is str(v).
 * Returns BG_OK, or BG_ECHECK with a lower-case sentence in why[0..size)
 * wherever Python raises (an unknown type code, a sign on a string,
 * precision on an integer, a spec on None, a list or an object, 'c' out of
 * range, ...) or the width or precision passes BG_PY_FORMAT_MAX; out is
 * then unchanged.
 */
int bg_py_format(struct bg_strbuf *out, const struct bg_value *v, const char *spec, size_t n, char *why,
		 size_t size);

#endif
