/*
 * test_bigint.c - src/core/bigint.c against CPython 3.11's int: a - b,
 * a // b, base 2, 8 and 16, float(a) on the cases bigint_cases.py wrote
 * (bigint_cases.h), among them divisions where algorithm D adds back and
 * a 4,300-digit dividend; and the comparison.
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

#include "core/bigint.h"
#include "bigint_cases.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void test_sub_and_floordiv(void **state)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < N_OF(bigint_pairs); i++) {
		bg_strbuf_reset(&sb);
		bg_bigint_sub(&sb, bigint_pairs[i].a, bigint_pairs[i].b);
		if (strcmp(sb.buf, bigint_pairs[i].sub) != 0)
			fail_msg("%s - %s: got %s, want %s", bigint_pairs[i].a, bigint_pairs[i].b, sb.buf,
				 bigint_pairs[i].sub);
		bg_strbuf_reset(&sb);
		if (!*bigint_pairs[i].floordiv) {
			assert_false(bg_bigint_floordiv(&sb, bigint_pairs[i].a, bigint_pairs[i].b));
			assert_int_equal(sb.len, 0);
		} else if (!bg_bigint_floordiv(&sb, bigint_pairs[i].a, bigint_pairs[i].b) ||
			   strcmp(sb.buf, bigint_pairs[i].floordiv) != 0) {
			fail_msg("%s // %s: got %s, want %s", bigint_pairs[i].a, bigint_pairs[i].b,
				 sb.buf ? sb.buf : "(false)", bigint_pairs[i].floordiv);
		}
	}
	bg_strbuf_release(&sb);
}

static void test_bases_and_float(void **state)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < N_OF(bigint_singles); i++) {
		const char *a = bigint_singles[i].a;
		double d;

		bg_strbuf_reset(&sb);
		bg_bigint_to_base(&sb, a, 16, false);
		assert_string_equal(sb.buf, bigint_singles[i].hex);
		bg_strbuf_reset(&sb);
		bg_bigint_to_base(&sb, a, 8, false);
		assert_string_equal(sb.buf, bigint_singles[i].oct);
		bg_strbuf_reset(&sb);
		bg_bigint_to_base(&sb, a, 2, false);
		assert_string_equal(sb.buf, bigint_singles[i].bin);
		if (!*bigint_singles[i].flt) {
			assert_false(bg_bigint_to_double(a, &d));
		} else {
			assert_true(bg_bigint_to_double(a, &d));
			assert_true(d == strtod(bigint_singles[i].flt, NULL));
		}
	}
	bg_strbuf_reset(&sb);
	bg_bigint_to_base(&sb, "-3054198966", 16, true);
	assert_string_equal(sb.buf, "B60B60B6");
	bg_strbuf_reset(&sb);
	bg_bigint_to_base(&sb, "0", 2, false);
	assert_string_equal(sb.buf, "0");
	bg_strbuf_release(&sb);
}

static void test_cmp(void **state)
{
	/* in ascending order */
	static const char *const order[] = {
		"-100000000000000000000", "-99999999999999999999", "-9223372036854775809", "-1", "0", "1",
		"9", "10", "9223372036854775808", "18446744073709551616", "100000000000000000000",
	};

	(void)state;
	for (size_t i = 0; i < N_OF(order); i++)
		for (size_t j = 0; j < N_OF(order); j++)
			assert_int_equal(bg_bigint_cmp(order[i], order[j]), i < j ? -1 : i > j ? 1 : 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sub_and_floordiv),
		cmocka_unit_test(test_bases_and_float),
		cmocka_unit_test(test_cmp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
