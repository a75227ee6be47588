/*
 * fmath.h - floor(), ceil() and trunc() without libm's run-time CPU dispatch. glibc's floor,
 * ceil and trunc choose an SSE4.1 variant through an IFUNC that needs
 * ld.so's internal CPU data, so a static libm cannot provide them to a
 * dynamic program, and the program links libm statically (CMakeLists.txt).
 * Compilers inline floor at -O2 (GCC) or not (clang, -O0); this does not
 * depend on that. Library-internal.
 */
#ifndef BENCHGATE_FMATH_H
#define BENCHGATE_FMATH_H

/* floor(x), exactly as C's: integral values, infinities, NaN and -0.0
 * unchanged; otherwise the largest integer below x. */
static inline double bg_floor(double x)
{
	double t;

	/* 2^52 and beyond every double is integral; NaN fails the comparison */
	if (!(x < 4503599627370496.0 && x > -4503599627370496.0) || x == 0)
		return x;
	t = (double)(long long)x; /* toward zero, exact in this range */
	return t > x ? t - 1.0 : t;
}

/* ceil(x), exactly as C's (-0.0 for x in (-1, 0), as C gives). */
static inline double bg_ceil(double x)
{
	return -bg_floor(-x);
}

/* trunc(x), exactly as C's (-0.0 for x in (-1, 0)). */
static inline double bg_trunc(double x)
{
	return x < 0 ? bg_ceil(x) : bg_floor(x);
}

#endif
