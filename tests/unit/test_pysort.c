/*
 * test_pysort.c - bg_py_sort against CPython 3.11's list.sort: with NaN
 * among the numbers the order is not consistent, and only the same
 * algorithm, comparison for comparison, leaves the same order
 * (py_sort_cases.h, written by py_sort_cases.py); with a consistent order
 * it is stable; a comparison that raises stops it and leaves a permutation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pysort.h"
#include "py_sort_cases.h"

struct elem {
	double v;
	size_t pos;
};

static int lt_value(const void *a, const void *b, void *arg)
{
	(void)arg;
	return ((const struct elem *)a)->v < ((const struct elem *)b)->v;
}

static size_t parse_case(const char *in, struct elem *out)
{
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	size_t n = 0;

	for (; *in; in++, n++) {
		out[n].v = *in == 'n' ? NAN : (double)(strchr(alphabet, *in) - alphabet);
		out[n].pos = n;
	}
	return n;
}

static void test_cpython_order(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(py_sort_cases) / sizeof(py_sort_cases[0]); c++) {
		size_t len = strlen(py_sort_cases[c].in);
		struct elem *e = calloc(len + 1, sizeof(*e));
		const char *p = py_sort_cases[c].order;
		size_t n = parse_case(py_sort_cases[c].in, e);

		assert_int_equal(bg_py_sort(e, n, sizeof(*e), lt_value, NULL), 0);
		for (size_t i = 0; i < n; i++) {
			char *end;
			unsigned long want = strtoul(p, &end, 10);
			if (e[i].pos != want)
				fail_msg("case %zu (%zu elements), position %zu: %zu, CPython %lu", c, n, i, e[i].pos,
					 want);
			p = end;
		}
		free(e);
	}
}

static int cmp_stable(const void *a, const void *b)
{
	const struct elem *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A consistent order: the same as any stable sort, on runs that gallop. */
static void test_stable(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(rand() % 3000);
		struct elem *a = calloc(n + 1, sizeof(*a)), *b = calloc(n + 1, sizeof(*b));
		int range = 1 + rand() % 1000;
		for (size_t i = 0; i < n; i++) {
			a[i].v = round % 3 == 0 ? (double)(i / (size_t)(1 + rand() % 50)) : (double)(rand() % range);
			if (round % 5 == 1 && rand() % 3 == 0)
				a[i].v = -a[i].v;
			a[i].pos = i;
		}
		memcpy(b, a, n * sizeof(*a));
		assert_int_equal(bg_py_sort(a, n, sizeof(*a), lt_value, NULL), 0);
		qsort(b, n, sizeof(*b), cmp_stable);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(a[i].pos, b[i].pos);
		free(a);
		free(b);
	}
}

/* e[0..n) holds each position 0..n-1 once: nothing lost or repeated. */
static void assert_permutation(const struct elem *e, size_t n)
{
	unsigned char *mark = calloc(n + 1, 1);
	size_t seen = 0;

	for (size_t i = 0; i < n; i++)
		if (e[i].pos < n && !mark[e[i].pos]++)
			seen++;
	assert_int_equal(seen, n);
	free(mark);
}

static int lt_raises_at(const void *a, const void *b, void *arg)
{
	int *left = arg;
	if ((*left)-- == 0)
		return -1;
	return lt_value(a, b, NULL);
}

/* A comparison that raises stops the sort; nothing is lost or repeated. */
static void test_raises(void **state)
{
	int comparisons = 1; /* counted by the first round, which never raises */
	(void)state;
	for (int at = -1; at < comparisons; at += 37) {
		size_t n = 500;
		struct elem *e = calloc(n, sizeof(*e));
		int left = at < 0 ? INT32_MAX : at;
		for (size_t i = 0; i < n; i++) {
			e[i].v = (double)((i * 7919) % 101);
			e[i].pos = i;
		}
		assert_int_equal(bg_py_sort(e, n, sizeof(*e), lt_raises_at, &left), at < 0 ? 0 : -1);
		if (at < 0)
			comparisons = INT32_MAX - left;
		assert_permutation(e, n);
		free(e);
	}
	assert_true(comparisons > 1000);
}

static int lt_random(const void *a, const void *b, void *arg)
{
	unsigned *seed = arg;
	(void)a;
	(void)b;
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 1;
}

/* An order that answers at random (worse than any NaN): the sort still ends,
 * stays within its array (the sanitizer build checks) and loses nothing. */
static void test_random_order(void **state)
{
	(void)state;
	for (unsigned round = 0; round < 300; round++) {
		size_t n = round < 100 ? round : 64 + (size_t)(round * 37) % 3000;
		struct elem *e = calloc(n + 1, sizeof(*e));
		unsigned seed = round;
		for (size_t i = 0; i < n; i++)
			e[i].pos = i;
		assert_int_equal(bg_py_sort(e, n, sizeof(*e), lt_random, &seed), 0);
		assert_permutation(e, n);
		free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpython_order),
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_raises),
		cmocka_unit_test(test_random_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
