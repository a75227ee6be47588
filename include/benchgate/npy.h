/*
 * npy.h - NumPy .npy files (format 1.0, 2.0, 3.0) and numpy.allclose.
 *
 * An array's elements stay as the file stores them, never converted to
 * doubles as a whole: bg_npy_load and bg_npy_parse hold the file's bytes in
 * memory; bg_npy_open and bg_npy_open_fd read only the header and leave
 * the elements in the file, read a block at a time by bg_npy_allclose, so
 * that comparing two arrays of any size takes a few MiB of memory.
 * bg_npy_at gives one element in C order as doubles. Arrays of bool,
 * int8..int64, uint8..uint64, float32, float64, complex64 and complex128
 * (either byte order, C or Fortran order) are read. The caller releases an
 * array with bg_npy_release. Messages name the file (display) and what is
 * wrong.
 */
#ifndef BENCHGATE_NPY_H
#define BENCHGATE_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BG_NPY_MAX_DIMS 64

struct bg_npy {
	char dtype[16]; /* numpy name: "float64", "int8", "bool", "complex64", ... */
	size_t ndim;
	size_t shape[BG_NPY_MAX_DIMS];
	size_t count;    /* product of shape (1 for a 0-d array) */
	bool is_complex; /* complex64 or complex128: elements have an imaginary part */
	/* each element is itemsize bytes of kind (b i u f c) in byte order
	 * ('<', '>', '|'), stored in Fortran order when fortran (ndim > 1) */
	size_t itemsize;
	char kind, order;
	bool fortran;
	/* where the elements are: from body in file (file_len bytes of memory,
	 * owned), or, when in_fd, in the open file fd (owned) from body_offset */
	unsigned char *file;
	size_t file_len;
	const unsigned char *body;
	bool in_fd;
	int fd;
	uint64_t body_offset;
	char *display; /* the file's name in messages (owned) */
};

/* The whole file in memory. BG_EIO when unreadable, or when the file does
 * not fit in memory (saying how big it is); BG_ECHECK "DISPLAY: not a valid
 * .npy file: ..." when malformed (saying to write it with numpy.save) or of
 * a dtype not read (naming it). bg_npy_parse reads a copy of data's len
 * bytes. Whatever fails leaves out holding nothing (releasing it is
 * harmless). */
int bg_npy_load(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx);
int bg_npy_parse(const unsigned char *data, size_t len, const char *display, struct bg_npy *out,
		 struct bg_ctx *ctx);
/* The header only, the elements left in the file (the same errors; a FIFO,
 * a folder or a device is BG_EIO, never waited on). bg_npy_open_fd takes
 * fd, a regular file read from its start, also on failure. */
int bg_npy_open(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx);
int bg_npy_open_fd(int fd, const char *display, struct bg_npy *out, struct bg_ctx *ctx);
/*
 * A reference that nothing may change while it is compared with: the file
 * read once into a private copy (a sealed memory file, which adds nothing
 * to the process's resident memory; the process's own memory where the
 * system has none), sha256 receiving the SHA-256 of the very bytes kept,
 * then bg_npy_open_fd's reading. The same errors, and BG_EIO when the copy
 * does not fit in memory.
 */
int bg_npy_open_copy(const char *path, const char *display, struct bg_npy *out, char sha256[65],
		     struct bg_ctx *ctx);
void bg_npy_release(struct bg_npy *a);
/* Element i (C order, i < count): *re, and *im (0 unless is_complex);
 * false, both NaN, when an element left in the file cannot be read. */
bool bg_npy_at(const struct bg_npy *a, size_t i, double *re, double *im);
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
 * (nothing is broadcast or converted); BG_EIO naming the file whose
 * elements could not be read (one that shrank while compared). */
int bg_npy_allclose(const struct bg_npy *a, const struct bg_npy *b, double rtol, double atol,
		    struct bg_allclose *r, struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
