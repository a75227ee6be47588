/*
 * pysort.h - CPython 3.11's list.sort (timsort with powersort's merge
 * order), step for step, so that an order that is not consistent (a NaN
 * among numbers: neither below nor above anything) comes out as Python's
 * sorted() leaves it. With a consistent order it is an ordinary stable sort.
 * Library-internal.
 */
#ifndef BG_CORE_PYSORT_H
#define BG_CORE_PYSORT_H

#include <stddef.h>

/*
 * Python's `a < b` for two elements: 1 (true), 0 (false), or -1 when
 * Python would raise (a TypeError); arg is bg_py_sort's.
 */
typedef int (*bg_py_lt)(const void *a, const void *b, void *arg);

/*
 * Sorts base[0..n) (elements of size bytes) in place as CPython's list.sort
 * does with lt. Returns 0, or -1 as soon as lt returns -1 (then the
 * elements are a permutation of the input in an unspecified order, as
 * Python leaves a list whose sort raised). Allocation failure aborts, as
 * bg_xmalloc.
 */
int bg_py_sort(void *base, size_t n, size_t size, bg_py_lt lt, void *arg);

#endif
