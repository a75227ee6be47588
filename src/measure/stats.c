/*
 * stats.c - order statistics (see benchgate/stats.h).
 */
#include "benchgate/stats.h"
#include "benchgate/status.h"
#include "core/fmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear interpolation on an already sorted array (numpy's default). */
static double sorted_quantile(const double *s, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)bg_floor(pos);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	double frac = pos - (double)lo;

	return s[lo] + (s[hi] - s[lo]) * frac;
}

double bg_stats_quantile(const double *values, size_t n, double q)
{
	double *s, r;

	if (n == 0)
		return NAN;
	s = bg_xmalloc(n * sizeof(*s));
	memcpy(s, values, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r = sorted_quantile(s, n, q);
	free(s);
	return r;
}

bool bg_stats_compute(const double *values, size_t n, struct bg_stats *st)
{
	double *s, sum = 0, var = 0;

	memset(st, 0, sizeof(*st));
	if (n == 0)
		return false;
	s = bg_xmalloc(n * sizeof(*s));
	memcpy(s, values, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	st->count = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->p50 = sorted_quantile(s, n, 0.5);
	st->p95 = sorted_quantile(s, n, 0.95);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	st->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		var += (s[i] - st->mean) * (s[i] - st->mean);
	st->stddev = sqrt(var / (double)n);
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(s[i] - st->p50);
	qsort(s, n, sizeof(*s), cmp_double);
	st->mad = sorted_quantile(s, n, 0.5);
	free(s);
	return true;
}
