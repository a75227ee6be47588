/*
 * bigint.h - Python's int beyond 64 bits, for the few things the registry
 * verbs do with one: compare, subtract, floor-divide, convert to a float
 * and write in base 2, 8 or 16. A number is its decimal text: an optional
 * '-', then digits without leading zeros ("0" for zero), NUL-terminated,
 * as bg_value_int_text writes it. Library-internal.
 *
 * Texts are read as given: one that is not of that form is a caller's
 * error. Results are appended to out in the same form; allocation failure
 * aborts, as bg_xmalloc.
 */
#ifndef BG_CORE_BIGINT_H
#define BG_CORE_BIGINT_H

#include <stdbool.h>

#include "benchgate/strbuf.h"

/* The most digits Python's int() reads from a text (so json.loads from an
 * integer literal) and str() writes: sys.int_info's default_max_str_digits. */
#define BG_BIGINT_MAX_DIGITS 4300u

/* -1, 0 or 1 as a is below, equal to or above b. */
int bg_bigint_cmp(const char *a, const char *b);
/* a - b. */
void bg_bigint_sub(struct bg_strbuf *out, const char *a, const char *b);
/* Python's a // b (the floor of the quotient); false, out unchanged, when
 * b is zero (Python's ZeroDivisionError). */
bool bg_bigint_floordiv(struct bg_strbuf *out, const char *a, const char *b);
/* The magnitude of a in base 2, 8 or 16 (lower-case digits unless upper),
 * without a sign or a prefix. */
void bg_bigint_to_base(struct bg_strbuf *out, const char *a, unsigned base, bool upper);
/* float(a): the nearest double, ties to even; false when that is beyond a
 * double's range (Python's OverflowError "int too large to convert to
 * float"). */
bool bg_bigint_to_double(const char *a, double *out);

#endif
