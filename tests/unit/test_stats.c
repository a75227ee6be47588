/*
 * test_stats.c - order statistics against values numpy computes
 * (numpy.percentile default method 'linear').
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "benchgate/stats.h"

static void test_quantiles(void **state)
{
	const double v[] = {4, 1, 3, 2};
	struct bg_stats st;

	(void)state;
	/* numpy.percentile([1,2,3,4], 50) == 2.5; 95 -> 3.85 */
	assert_float_equal(bg_stats_quantile(v, 4, 0.5), 2.5, 1e-12);
	assert_float_equal(bg_stats_quantile(v, 4, 0.95), 3.85, 1e-12);
	assert_true(bg_stats_compute(v, 4, &st));
	assert_int_equal(st.count, 4);
	assert_float_equal(st.min, 1, 0);
	assert_float_equal(st.max, 4, 0);
	assert_float_equal(st.mean, 2.5, 1e-12);
	/* numpy.std([1,2,3,4]) == sqrt(1.25) */
	assert_float_equal(st.stddev, 1.118033988749895, 1e-12);
	/* |x - 2.5| = 1.5 .5 .5 1.5 -> median 1.0 */
	assert_float_equal(st.mad, 1.0, 1e-12);
}

static void test_single_and_odd(void **state)
{
	const double one[] = {7};
	const double odd[] = {10, 100, 11, 12, 13}; /* sorted 10 11 12 13 100 */
	struct bg_stats st;

	(void)state;
	assert_true(bg_stats_compute(one, 1, &st));
	assert_float_equal(st.p50, 7, 0);
	assert_float_equal(st.p95, 7, 0);
	assert_float_equal(st.mad, 0, 0);
	assert_true(bg_stats_compute(odd, 5, &st));
	assert_float_equal(st.p50, 12, 0);
	/* numpy.percentile([10,11,12,13,100], 95) == 82.6 */
	assert_float_equal(st.p95, 82.6, 1e-9);
	/* deviations 2 1 0 1 88 -> median 1 */
	assert_float_equal(st.mad, 1, 0);
	assert_false(bg_stats_compute(one, 0, &st));
	assert_int_equal(st.count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_single_and_odd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
