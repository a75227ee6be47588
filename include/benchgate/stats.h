/*
 * stats.h - order statistics of one series of samples, numpy-compatible.
 *
 * Quantiles interpolate linearly between closest ranks (numpy.percentile's
 * default "linear" method). MAD is the median of absolute deviations from
 * the median (unscaled). Nothing is discarded; NaN samples are not expected.
 */
#ifndef BENCHGATE_STATS_H
#define BENCHGATE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bg_stats {
	size_t count;
	double min, p50, p95, max, mean, stddev, mad; /* stddev: population (ddof=0) */
};

/* q in [0, 1] of values[0..n) (n > 0); sorts a private copy. */
double bg_stats_quantile(const double *values, size_t n, double q);
/* Fills st from values[0..n); returns false (st zeroed, count 0) when n == 0. */
bool bg_stats_compute(const double *values, size_t n, struct bg_stats *st);

#ifdef __cplusplus
}
#endif

#endif
