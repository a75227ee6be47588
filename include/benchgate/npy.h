/*
 * npy.h - NumPy .npy files (format 1.0, 2.0, 3.0) and numpy.allclose.
 *
 * bg_npy_load reads a whole array of bool, int8..int64, uint8..uint64,
 * float32, float64, complex64 or complex128 (either byte order, C or Fortran
 * order) into doubles in C order; the caller releases it with
 * bg_npy_release. Messages name the file (display) and what is wrong.
 */
#ifndef BENCHGATE_NPY_H
#define BENCHGATE_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_NPY_MAX_DIMS 32

struct bg_npy {
	char dtype[16]; /* numpy name: "float64", "int8", "bool", "complex64", ... */
	size_t ndim;
	size_t shape[BG_NPY_MAX_DIMS];
	size_t count; /* product of shape (1 for a 0-d array) */
	double *re;   /* count values, C order; owned */
	double *im;   /* count imaginary parts for complex dtypes, else NULL; owned */
};

/* BG_EIO when unreadable, BG_ECHECK "DISPLAY: not a valid .npy file: ..." when malformed
 * (saying to write it with numpy.save) or of a dtype not read (naming it). */
int bg_npy_load(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx);
int bg_npy_parse(const unsigned char *data, size_t len, const char *display, struct bg_npy *out,
		 struct bg_ctx *ctx);
void bg_npy_release(struct bg_npy *a);
/* "(3, 4)" / "(5,)" / "()" like numpy's shape repr, into buf. */
void bg_npy_shape_str(const struct bg_npy *a, char *buf, size_t size);

/*
 * numpy.allclose(a, b, rtol, atol): |a - b| <= atol + rtol * |b| for every
 * element; NaN never passes, equal infinities do. Rounded as numpy rounds:
 * float32 and complex64 in float32, all else in float64; where numpy
 * before and after 2.0 differ (0-d float32 arrays, tolerances beyond
 * float32), an element is close only when both call it close (docs/measure.md). beyond counts elements
 * not close; nonfinite those of them that hold a NaN (on either side) or
 * an infinity the other side does not equal. Errors are computed over the
 * finite elements (finite counts those where both sides are): max_abs =
 * max |a - b|; max_rel = max |a - b| / |b| over elements with b != 0;
 * rel_l2 = ||a - b||2 / ||b||2. A *_valid flag is false when its figure
 * has no element to be computed over (none finite, or for max_rel none
 * with b != 0; for rel_l2 also ||b||2 == 0 with a != b) or is beyond the
 * range of a double (then max_abs or max_rel holds infinity).
 */
struct bg_allclose {
	bool pass;
	size_t count;
	size_t beyond;
	size_t nonfinite;
	size_t finite;
	double max_abs;
	double max_rel;
	double rel_l2;
	bool max_abs_valid;
	bool max_rel_valid;
	bool rel_l2_valid;
	size_t first; /* the first element beyond the tolerance (C order), when beyond > 0 */
};
/* a: the output, b: the reference. BG_ECHECK naming both on a shape or dtype mismatch
 * (nothing is broadcast or converted). */
int bg_npy_allclose(const struct bg_npy *a, const struct bg_npy *b, double rtol, double atol,
		    struct bg_allclose *r, struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
