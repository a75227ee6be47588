/*
 * test_npy.c - .npy parsing (versions, dtypes, byte orders, Fortran order,
 * malformed files) and allclose figures computed by hand, none where
 * nothing finite was compared or a figure is beyond a double.
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
#include <sys/stat.h>
#include <unistd.h>

#include "benchgate/npy.h"
#include "benchgate/sha256.h"

/* element i of a (C order): its real part, and its imaginary one in *im */
static double re_at(const struct bg_npy *a, size_t i)
{
	double re, im;

	bg_npy_at(a, i, &re, &im);
	return re;
}

static double im_at(const struct bg_npy *a, size_t i)
{
	double re, im;

	bg_npy_at(a, i, &re, &im);
	return im;
}

/* Builds a .npy image: header dict, padding, then raw data bytes. */
static size_t build(unsigned char *buf, int major, const char *dict, const void *data, size_t len)
{
	size_t pre = major == 1 ? 10 : 12, dl = strlen(dict), hl;
	size_t total = (pre + dl + 1 + 63) / 64 * 64;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	hl = total - pre;
	buf[8] = (unsigned char)(hl & 0xff);
	buf[9] = (unsigned char)(hl >> 8);
	if (major != 1) {
		buf[10] = 0;
		buf[11] = 0;
	}
	memset(buf + pre, ' ', hl);
	memcpy(buf + pre, dict, dl);
	buf[total - 1] = '\n';
	memcpy(buf + total, data, len);
	return total + len;
}

static void test_float64_c_order(void **state)
{
	unsigned char buf[512];
	const double d[] = {1, 2, 3, 4, 5, 6};
	size_t n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d,
			 sizeof(d));
	struct bg_npy a;
	struct bg_ctx ctx;
	char shape[64];

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_parse(buf, n, "a.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, "float64");
	assert_int_equal(a.ndim, 2);
	assert_int_equal(a.count, 6);
	assert_float_equal(re_at(&a, 5), 6, 0);
	bg_npy_shape_str(&a, shape, sizeof(shape));
	assert_string_equal(shape, "(2, 3)");
	bg_npy_release(&a);
	bg_ctx_release(&ctx);
}

static void test_fortran_big_endian_v2(void **state)
{
	unsigned char buf[512];
	/* logical [[1,2,3],[4,5,6]] as big-endian int32 in Fortran order: 1 4 2 5 3 6 */
	const unsigned char d[] = {0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 6};
	size_t n = build(buf, 2, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", d,
			 sizeof(d));
	struct bg_npy a;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_parse(buf, n, "f.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, "int32");
	for (int i = 0; i < 6; i++)
		assert_float_equal(re_at(&a, i), i + 1, 0);
	bg_npy_release(&a);
	bg_ctx_release(&ctx);
}

static void test_small_types_v3(void **state)
{
	unsigned char buf[512];
	const unsigned char i8[] = {0xff, 0x80, 0x7f};
	const unsigned char b1[] = {0, 1, 2};
	const float c8[] = {1.5f, -2.0f};
	struct bg_npy a;
	struct bg_ctx ctx;
	size_t n;

	(void)state;
	bg_ctx_init(&ctx);
	n = build(buf, 3, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", i8, 3);
	assert_int_equal(bg_npy_parse(buf, n, "i.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, "int8");
	assert_float_equal(re_at(&a, 0), -1, 0);
	assert_float_equal(re_at(&a, 1), -128, 0);
	assert_float_equal(re_at(&a, 2), 127, 0);
	bg_npy_release(&a);
	n = build(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b1, 3);
	assert_int_equal(bg_npy_parse(buf, n, "b.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, "bool");
	assert_float_equal(re_at(&a, 2), 1, 0);
	bg_npy_release(&a);
	n = build(buf, 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (), }", c8, 8);
	assert_int_equal(bg_npy_parse(buf, n, "c.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, "complex64");
	assert_int_equal(a.count, 1);
	assert_float_equal(re_at(&a, 0), 1.5, 0);
	assert_float_equal(im_at(&a, 0), -2.0, 0);
	bg_npy_release(&a);
	bg_ctx_release(&ctx);
}

static void expect_bad(const unsigned char *buf, size_t n, const char *part)
{
	struct bg_npy a;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_parse(buf, n, "bad.npy", &a, &ctx), BG_ECHECK);
	if (!strstr(bg_ctx_message(&ctx), part) || !strstr(bg_ctx_message(&ctx), "bad.npy"))
		fail_msg("message '%s' lacks '%s'", bg_ctx_message(&ctx), part);
	bg_ctx_release(&ctx);
}

static void test_malformed(void **state)
{
	unsigned char buf[512];
	const double d[] = {1, 2};
	size_t n;

	(void)state;
	expect_bad((const unsigned char *)"hello world!", 12, "magic");
	/* the magic, then the file ends: truncated, not "missing the magic" */
	expect_bad((const unsigned char *)"\x93NUMPY\x01\x00", 8, "truncated header");
	expect_bad((const unsigned char *)"\x93NUMPY\x01\x00\x10", 9, "truncated header");
	expect_bad((const unsigned char *)"\x93NU", 3, "truncated header");
	expect_bad((const unsigned char *)"", 0, "magic");
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof(d));
	expect_bad(buf, n, "data holds 16 bytes, shape and dtype need 24 (write it with numpy.save)");
	n = build(buf, 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", d,
		  sizeof(d));
	expect_bad(buf, n, "a structured dtype (a record of fields) is not supported");
	/* a dtype numpy writes but benchgate does not read is named, never called structured */
	n = build(buf, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (8,), }", d, sizeof(d));
	expect_bad(buf, n, "dtype '<f2' is not supported (read are bool,");
	n = build(buf, 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", d, sizeof(d));
	expect_bad(buf, n, "dtype '|O' is not supported");
	n = build(buf, 1, "{'descr': '<f\0338', 'fortran_order': False, 'shape': (2,), }", d,
		  sizeof(d));
	expect_bad(buf, n, "dtype '<f?8' is not supported");
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x\033': 1}", d,
		  sizeof(d));
	expect_bad(buf, n, "header has an unknown key 'x?' (write it with numpy.save)");
	/* a header that ends inside the shape, with nothing after it: not read beyond */
	{
		const char *h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1";
		size_t hl = strlen(h);
		unsigned char *exact = malloc(10 + hl);

		assert_non_null(exact);
		memcpy(exact, "\x93NUMPY\x01\x00", 8);
		exact[8] = (unsigned char)hl;
		exact[9] = 0;
		memcpy(exact + 10, h, hl);
		expect_bad(exact, 10 + hl, "'shape' is not closed by ')'");
		free(exact);
	}
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
		  d, sizeof(d));
	expect_bad(buf, n, "'shape' is too large");
	n = build(buf, 1, "{'descr': '<f8', 'shape': (2,), }", d, sizeof(d));
	expect_bad(buf, n, "lacks");
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d, sizeof(d));
	buf[6] = 9;
	expect_bad(buf, n, "version 9");
	expect_bad(buf, 20, "version");
	/* what numpy.load refuses is refused: a minor version, (N) (a number,
	 * not a tuple), text after the dictionary, a size with a sign */
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d, sizeof(d));
	buf[7] = 5;
	expect_bad(buf, n, "unsupported format version 1.5");
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }", d, sizeof(d));
	expect_bad(buf, n, "'shape' must be a tuple: (N) is a number; write (N,)");
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } junk", d, sizeof(d));
	expect_bad(buf, n, "header has text after its dictionary");
	n = build(buf, 1, "{'descr': '<f+8', 'fortran_order': False, 'shape': (2,), }", d, sizeof(d));
	expect_bad(buf, n, "dtype '<f+8' is not supported");
	/* and what it reads is read: no byte order is the machine's own; a
	 * dictionary over lines (Python reads it so); 64 dimensions (numpy 2) */
	{
		struct bg_npy a;
		struct bg_ctx ctx;
		char dict[400];
		size_t at;

		bg_ctx_init(&ctx);
		n = build(buf, 1, "{'descr': 'f8', 'fortran_order': False, 'shape': (2, ), }", d, sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "ok.npy", &a, &ctx), BG_OK);
		assert_int_equal(a.ndim, 1);
		assert_true(re_at(&a, 1) == 2.0);
		bg_npy_release(&a);
		/* Python 2 wrote its shapes as longs: numpy reads (2L,) in 1.0 and 2.0 */
		n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", d, sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "py2.npy", &a, &ctx), BG_OK);
		assert_int_equal(a.count, 2);
		bg_npy_release(&a);
		n = build(buf, 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }", d, sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "py2.npy", &a, &ctx), BG_OK);
		assert_int_equal(a.ndim, 2);
		bg_npy_release(&a);
		n = build(buf, 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", d, sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "py2.npy", &a, &ctx), BG_ECHECK);
		n = build(buf, 1, "{'descr': '<f8',\n 'fortran_order': False,\r\n 'shape': (\n2,\n),\n}", d,
			  sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "lines.npy", &a, &ctx), BG_OK);
		assert_int_equal(a.count, 2);
		bg_npy_release(&a);
		at = (size_t)snprintf(dict, sizeof(dict), "{'descr': '<f8', 'fortran_order': False, 'shape': (2,");
		for (int k = 1; k < 64; k++)
			at += (size_t)snprintf(dict + at, sizeof(dict) - at, "1,");
		snprintf(dict + at, sizeof(dict) - at, "), }");
		n = build(buf, 1, dict, d, sizeof(d));
		assert_int_equal(bg_npy_parse(buf, n, "deep.npy", &a, &ctx), BG_OK);
		assert_int_equal(a.ndim, 64);
		assert_true(re_at(&a, 1) == 2.0);
		bg_npy_release(&a);
		bg_ctx_release(&ctx);
		memcpy(dict + at, "1,), }", 7);
		n = build(buf, 1, dict, d, sizeof(d));
		expect_bad(buf, n, "'shape' has too many dimensions");
	}
}

/* A 1-d array of n elements (n <= 16) of dtype float64, float32 or
 * complex64 (imaginary parts 0) holding re, read as bg_npy_parse reads a
 * file; the caller releases it. */
static struct bg_npy vec(const double *re, size_t n, const char *dtype)
{
	unsigned char buf[512], data[16 * 8];
	char dict[128];
	const char *descr = strcmp(dtype, "float64") == 0   ? "<f8"
			    : strcmp(dtype, "float32") == 0 ? "<f4"
							    : "<c8";
	size_t esize = descr[2] == '4' ? 4 : 8, len;
	struct bg_npy a;
	struct bg_ctx ctx;

	assert_true(n <= 16);
	memset(data, 0, sizeof(data));
	for (size_t i = 0; i < n; i++) {
		if (esize == 8 && descr[1] == 'f') {
			memcpy(data + i * 8, &re[i], 8);
		} else {
			float f = (float)re[i];

			memcpy(data + i * esize, &f, 4);
		}
	}
	snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", descr,
		 n);
	len = build(buf, 1, dict, data, n * esize);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_parse(buf, len, "vec.npy", &a, &ctx), BG_OK);
	assert_string_equal(a.dtype, dtype);
	bg_ctx_release(&ctx);
	return a;
}

static void test_allclose_by_hand(void **state)
{
	/* out = [1.0, 2.00001, 3.1, 0.0], ref = [1.0, 2.0, 3.0, 0.0] */
	const double out[] = {1.0, 2.00001, 3.1, 0.0}, ref[] = {1.0, 2.0, 3.0, 0.0};
	struct bg_npy a = vec(out, 4, "float64"), b = vec(ref, 4, "float64");
	struct bg_allclose r;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_allclose(&a, &b, 1e-5, 1e-8, &r, &ctx), BG_OK);
	/* |2.00001-2| = 1e-5 <= 1e-8 + 2e-5: close; |3.1-3| = 0.1 > 3e-5 + 1e-8: not */
	assert_false(r.pass);
	assert_int_equal(r.beyond, 1);
	assert_int_equal(r.count, 4);
	assert_float_equal(r.max_abs, 0.1, 1e-12);
	assert_float_equal(r.max_rel, 0.1 / 3.0, 1e-12);
	/* sqrt(1e-10 + 0.01) / sqrt(1 + 4 + 9) */
	assert_float_equal(r.rel_l2, sqrt(1e-10 + 0.01) / sqrt(14.0), 1e-9);
	assert_true(r.rel_l2_valid);
	assert_int_equal(bg_npy_allclose(&a, &b, 0.05, 0, &r, &ctx), BG_OK);
	assert_true(r.pass);
	bg_npy_release(&a);
	bg_npy_release(&b);
	bg_ctx_release(&ctx);
}

/* allclose of two float64 vectors of n elements (rtol 1e-5, atol 1e-8), which must not fail */
static struct bg_allclose allclose_of(const double *out, const double *ref, size_t n)
{
	struct bg_npy a = vec(out, n, "float64"), b = vec(ref, n, "float64");
	struct bg_allclose r;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_allclose(&a, &b, 1e-5, 1e-8, &r, &ctx), BG_OK);
	bg_npy_release(&a);
	bg_npy_release(&b);
	bg_ctx_release(&ctx);
	return r;
}

/* The relative L2 error of values near the ends of a double's range: as
 * measured, never a 0 from a sum of squares that overflowed or underflowed. */
static void test_allclose_rel_l2_extremes(void **state)
{
	const double big[] = {1.1e155}, bigref[] = {1e155};
	const double tiny[] = {1e-200}, tinyref[] = {2e-200};
	struct bg_allclose r;

	(void)state;
	r = allclose_of(big, bigref, 1);
	assert_true(r.rel_l2_valid);
	assert_float_equal(r.rel_l2, 0.1, 1e-12);
	r = allclose_of(tiny, tinyref, 1);
	assert_true(r.rel_l2_valid);
	assert_float_equal(r.rel_l2, 0.5, 1e-12);
}

static void test_allclose_nonfinite_figures(void **state)
{
	/* a NaN beside finite elements: the figures are over the finite ones */
	const double out[] = {NAN, 1.1, 2.0}, ref[] = {1.0, 1.0, 2.0};
	/* finite values whose difference is beyond a double */
	const double big[] = {1e308, 1.0}, nbig[] = {-1e308, 1.0};
	const double nan2[] = {NAN, NAN}, zero2[] = {0.0, 0.0};
	struct bg_allclose r = allclose_of(out, ref, 3);

	(void)state;
	assert_int_equal(r.beyond, 2);
	assert_int_equal(r.nonfinite, 1);
	assert_int_equal(r.finite, 2);
	assert_true(r.max_abs_valid);
	assert_float_equal(r.max_abs, 0.1, 1e-12);
	assert_true(r.max_rel_valid);
	assert_float_equal(r.max_rel, 0.1, 1e-12);
	assert_true(r.rel_l2_valid);
	r = allclose_of(big, nbig, 2);
	assert_false(r.pass);
	assert_int_equal(r.beyond, 1);
	assert_int_equal(r.nonfinite, 0);
	assert_int_equal(r.finite, 2);
	assert_false(r.max_abs_valid);
	assert_true(isinf(r.max_abs));
	/* the relative figures from halves: 2e308 / 1e308 */
	assert_true(r.max_rel_valid);
	assert_float_equal(r.max_rel, 2.0, 1e-12);
	assert_true(r.rel_l2_valid);
	assert_float_equal(r.rel_l2, 2.0, 1e-12);
	{
		/* an error seen before the overflow is kept, halved with the rest */
		const double o3[] = {4.0, 1e308, 0.0}, r3[] = {3.0, -1e308, 2.0};

		r = allclose_of(o3, r3, 3);
		assert_int_equal(r.beyond, 3);
		assert_false(r.max_abs_valid);
		assert_float_equal(r.max_rel, 2.0, 1e-12);
		/* sqrt(1 + 4e616 + 4) / sqrt(9 + 1e616 + 4) */
		assert_float_equal(r.rel_l2, 2.0, 1e-12);
	}
	/* all NaN against zeros: nothing to compute a figure over */
	r = allclose_of(nan2, zero2, 2);
	assert_int_equal(r.beyond, 2);
	assert_int_equal(r.nonfinite, 2);
	assert_false(r.max_abs_valid || r.max_rel_valid || r.rel_l2_valid);
}

static void test_allclose_nan_inf_mismatch(void **state)
{
	const double out[] = {NAN, INFINITY, -INFINITY}, ref[] = {NAN, INFINITY, INFINITY};
	const double two[] = {1, 2};
	struct bg_npy a = vec(out, 3, "float64"), b = vec(ref, 3, "float64");
	struct bg_npy c = vec(two, 2, "float64"), f32 = vec(out, 3, "float32");
	struct bg_allclose r;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_allclose(&a, &b, 1e-5, 1e-8, &r, &ctx), BG_OK);
	/* NaN never passes; inf == inf passes; -inf vs inf fails */
	assert_int_equal(r.beyond, 2);
	assert_false(r.pass);
	/* no finite element: no error figure, never a 0 that reads as exact */
	assert_int_equal(r.nonfinite, 2);
	assert_int_equal(r.finite, 0);
	assert_false(r.max_abs_valid);
	assert_false(r.max_rel_valid);
	assert_false(r.rel_l2_valid);
	assert_int_equal(bg_npy_allclose(&a, &c, 1e-5, 1e-8, &r, &ctx), BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx),
			    "shape mismatch: output is (3,), reference is (2,) (shapes are not "
			    "broadcast: they must be equal)");
	assert_int_equal(bg_npy_allclose(&f32, &b, 1e-5, 1e-8, &r, &ctx), BG_ECHECK);
	assert_string_equal(bg_ctx_message(&ctx),
			    "dtype mismatch: output is float32, reference is float64 (not converted: "
			    "save both with the same dtype)");
	bg_npy_release(&a);
	bg_npy_release(&b);
	bg_npy_release(&c);
	bg_npy_release(&f32);
	bg_ctx_release(&ctx);
}

/* a float32 given by its bits, as a double (exact) */
static double f32_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return (double)f;
}

/* allclose of one element pair of dtype (0-d when zero_d), which must not fail */
static bool close1(double out, double ref, const char *dtype, bool zero_d, double rtol, double atol)
{
	struct bg_npy a = vec(&out, 1, dtype), b = vec(&ref, 1, dtype);
	struct bg_allclose r;
	struct bg_ctx ctx;

	if (zero_d)
		a.ndim = b.ndim = 0;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_npy_allclose(&a, &b, rtol, atol, &r, &ctx), BG_OK);
	bg_npy_release(&a);
	bg_npy_release(&b);
	bg_ctx_release(&ctx);
	assert_int_equal(r.beyond, r.pass ? 0 : 1);
	return r.pass;
}

/*
 * numpy computes float32 data in float32: a - b, |b| and the tolerance are
 * rounded to float32, and that decides. Cases found by comparing with
 * numpy.allclose itself.
 */
static void test_allclose_float32_as_numpy(void **state)
{
	/* 6347.7188 vs 6347.6553: |a - b| rounds to 0.06347656 in float32, beyond
	 * 1e-8 + 1e-5 * |b| = 0.063476555 there; numpy: not close (was a pass) */
	double x = f32_bits(1170628032), y = f32_bits(1170627902);
	double tiny = f32_bits(0x322bcc77); /* 1e-8 as float32 */

	(void)state;
	assert_false(close1(x, y, "float32", false, 1e-5, 1e-8));
	assert_false(close1(x, y, "complex64", false, 1e-5, 1e-8));
	/* the same values as float64 are close: only float32 rounds so */
	assert_true(close1(x, y, "float64", false, 1e-5, 1e-8));
	/* 1e-8 - (-1) is 1.0 in float32: within atol 1; numpy: close (was a fail) */
	assert_true(close1(tiny, -1.0, "float32", false, 0, 1.0));
	assert_false(close1(tiny, -1.0, "float64", false, 0, 1.0));
	/* a 0-d array: numpy before 2.0 computed it in float64 (not close),
	 * numpy 2 in float32 (close): only what both call close passes */
	assert_false(close1(tiny, -1.0, "float32", true, 0, 1.0));
	assert_false(close1(x, y, "float32", true, 1e-5, 1e-8));
	/* rtol beyond float32: an infinity for numpy 2 (close), float64 before
	 * (a - b overflowed to inf in float32: not close): not close */
	assert_false(close1(3e38, -3e38, "float32", false, 1e39, 0));
	assert_true(close1(1.0, 2.0, "float32", false, 1e39, 0));
	assert_false(close1(INFINITY, 1.0, "float32", false, 1e39, 0));
}

/* A temporary file holding len bytes of data; its name in path. */
static void temp_file(char path[64], const void *data, size_t len)
{
	int fd;

	snprintf(path, 64, "/tmp/test_npy.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* The elements of a file are read from it a block at a time; what reads
 * them in memory and what leaves them in the file agree. */
static void test_open_in_file(void **state)
{
	unsigned char buf[512];
	const double d[] = {1, 2, 3, 4, 5, 6}, e[] = {1, 2, 3.5, 4, 5, 6};
	size_t n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d, sizeof(d));
	char path[64], path2[64];
	struct bg_npy f, m;
	struct bg_allclose r;
	struct bg_ctx ctx;
	double re, im;

	(void)state;
	bg_ctx_init(&ctx);
	temp_file(path, buf, n);
	assert_int_equal(bg_npy_open(path, "f.npy", &f, &ctx), BG_OK);
	assert_true(f.in_fd);
	assert_int_equal(f.count, 6);
	assert_true(bg_npy_at(&f, 4, &re, &im));
	assert_true(re == 5 && im == 0);
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", e, sizeof(e));
	assert_int_equal(bg_npy_parse(buf, n, "m.npy", &m, &ctx), BG_OK);
	assert_int_equal(bg_npy_allclose(&f, &m, 1e-5, 1e-8, &r, &ctx), BG_OK);
	assert_false(r.pass);
	assert_int_equal(r.beyond, 1);
	assert_int_equal(r.first, 2);
	assert_float_equal(r.max_abs, 0.5, 0);
	/* a file that shrinks while compared: named, never a pass */
	assert_int_equal(truncate(path, 100), 0);
	assert_int_equal(bg_npy_allclose(&f, &m, 1e-5, 1e-8, &r, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "f.npy: cannot read: it shrank while it was read"));
	assert_false(r.pass);
	assert_false(bg_npy_at(&f, 5, &re, &im));
	assert_true(isnan(re) && isnan(im));
	bg_npy_release(&f);
	bg_npy_release(&m);
	bg_npy_release(&f); /* twice: harmless */
	/* neither a FIFO nor a folder is waited on or read */
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(bg_npy_open(path, "p.npy", &f, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "p.npy: cannot read: not a regular file (a FIFO); name a .npy file");
	bg_npy_release(&f);
	unlink(path);
	assert_int_equal(bg_npy_open("/tmp", "t.npy", &f, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "t.npy: cannot read: not a regular file (a folder); name a .npy file");
	assert_int_equal(bg_npy_open("/nonexistent/x.npy", NULL, &f, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "/nonexistent/x.npy: cannot read: No such file or directory");
	/* a header longer than is read */
	{
		size_t hl = ((size_t)1 << 20) + 64;
		unsigned char *big = calloc(1, 12 + hl);

		memcpy(big, "\x93NUMPY\x02\x00", 8);
		big[8] = (unsigned char)(hl & 0xff);
		big[9] = (unsigned char)(hl >> 8 & 0xff);
		big[10] = (unsigned char)(hl >> 16 & 0xff);
		temp_file(path2, big, 12 + hl);
		free(big);
		assert_int_equal(bg_npy_open(path2, "h.npy", &f, &ctx), BG_ECHECK);
		assert_non_null(strstr(bg_ctx_message(&ctx), "h.npy: not a valid .npy file: a header of 1048640 bytes"));
		unlink(path2);
	}
	bg_ctx_release(&ctx);
}

/* Fortran order: two Fortran files are walked in their own order, and the
 * first element beyond the tolerance is still the first in C order; a
 * Fortran file against a C-ordered array is read whole, either way round. */
static void test_fortran_in_file(void **state)
{
	unsigned char buf[512];
	/* logical [[1,2,3],[4,5,6]], Fortran order: 1 4 2 5 3 6 */
	const double fa[] = {1, 4, 2, 5, 3, 6};
	/* C index 3 (storage 1) and C index 1 (storage 2) differ */
	const double fb[] = {1, 40, 20, 5, 3, 6};
	const double c[] = {1, 2, 3, 4, 5, 6};
	char pa[64], pb[64];
	struct bg_npy a, b, m;
	struct bg_allclose r;
	struct bg_ctx ctx;
	size_t n;

	(void)state;
	bg_ctx_init(&ctx);
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", fa, sizeof(fa));
	temp_file(pa, buf, n);
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", fb, sizeof(fb));
	temp_file(pb, buf, n);
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", c, sizeof(c));
	assert_int_equal(bg_npy_parse(buf, n, "c.npy", &m, &ctx), BG_OK);
	assert_int_equal(bg_npy_open(pa, "a.npy", &a, &ctx), BG_OK);
	assert_int_equal(bg_npy_open(pb, "b.npy", &b, &ctx), BG_OK);
	assert_int_equal(bg_npy_allclose(&b, &a, 1e-5, 1e-8, &r, &ctx), BG_OK);
	assert_int_equal(r.beyond, 2);
	assert_int_equal(r.first, 1);
	assert_int_equal(bg_npy_allclose(&a, &m, 1e-5, 1e-8, &r, &ctx), BG_OK);
	assert_true(r.pass);
	assert_int_equal(bg_npy_allclose(&m, &a, 1e-5, 1e-8, &r, &ctx), BG_OK);
	assert_true(r.pass);
	assert_int_equal(bg_npy_allclose(&b, &m, 1e-5, 1e-8, &r, &ctx), BG_OK);
	assert_int_equal(r.beyond, 2);
	assert_int_equal(r.first, 1);
	bg_npy_release(&a);
	bg_npy_release(&b);
	bg_npy_release(&m);
	unlink(pa);
	unlink(pb);
	bg_ctx_release(&ctx);
}

/* The reference is a private copy: its hash is of the bytes kept, and a
 * file rewritten after the copy changes nothing compared with. */
static void test_open_copy(void **state)
{
	unsigned char buf[512];
	const double d[] = {1, 2, 3}, e[] = {7, 8, 9};
	size_t n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof(d));
	char path[64], hex[65], want[65];
	struct bg_npy ref, m;
	struct bg_allclose r;
	struct bg_ctx ctx;
	FILE *f;

	(void)state;
	bg_ctx_init(&ctx);
	temp_file(path, buf, n);
	assert_int_equal(bg_sha256_hex(buf, n, want, &ctx), BG_OK);
	assert_int_equal(bg_npy_open_copy(path, "ref.npy", &ref, hex, &ctx), BG_OK);
	assert_string_equal(hex, want);
	assert_int_equal(bg_npy_parse(buf, n, "m.npy", &m, &ctx), BG_OK);
	n = build(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", e, sizeof(e));
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
	assert_int_equal(bg_npy_allclose(&m, &ref, 0, 0, &r, &ctx), BG_OK);
	assert_true(r.pass);
	bg_npy_release(&ref);
	bg_npy_release(&m);
	unlink(path);
	assert_int_equal(bg_npy_open_copy(path, "gone.npy", &ref, hex, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "gone.npy: cannot read: No such file or directory");
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_float64_c_order),
		cmocka_unit_test(test_fortran_big_endian_v2),
		cmocka_unit_test(test_small_types_v3),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_allclose_by_hand),
		cmocka_unit_test(test_allclose_nan_inf_mismatch),
		cmocka_unit_test(test_allclose_rel_l2_extremes),
		cmocka_unit_test(test_allclose_nonfinite_figures),
		cmocka_unit_test(test_allclose_float32_as_numpy),
		cmocka_unit_test(test_open_in_file),
		cmocka_unit_test(test_fortran_in_file),
		cmocka_unit_test(test_open_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
