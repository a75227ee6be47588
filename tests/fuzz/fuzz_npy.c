/*
 * fuzz_npy.c - fuzz target for the .npy reader (header dictionary, shape,
 * dtype, byte order, Fortran order, data size) and numpy.allclose on what
 * it reads: an array against itself and against the same bytes read again
 * with one data byte changed, in memory and left in a file (a memory file:
 * read a block at a time, Fortran order walked or read whole).
 *
 * With -fsanitize=fuzzer (make fuzz FUZZ_TARGET=fuzz_npy) this is a
 * libFuzzer target; without, main() replays files (tests/fuzz/replay.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "benchgate/npy.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct bg_npy a, b;
	struct bg_allclose r;
	struct bg_ctx ctx;
	char shape[256];
	unsigned char *copy;

	bg_ctx_init(&ctx);
	if (bg_npy_parse(data, size, "fuzz.npy", &a, &ctx) != BG_OK) {
		bg_ctx_release(&ctx);
		return 0;
	}
	bg_npy_shape_str(&a, shape, sizeof(shape));
	bg_npy_allclose(&a, &a, 1e-5, 1e-8, &r, &ctx);
	copy = malloc(size);
	memcpy(copy, data, size);
	copy[size - 1] ^= 0x5a; /* the last byte is data unless the array is empty */
	if (bg_npy_parse(copy, size, "fuzz-b.npy", &b, &ctx) == BG_OK) {
		bg_npy_allclose(&a, &b, 1e-5, 1e-8, &r, &ctx);
		bg_npy_allclose(&b, &a, 0, 0, &r, &ctx);
		bg_npy_release(&b);
	}
	{
		int fd = memfd_create("fuzz-npy", MFD_CLOEXEC);

		if (fd >= 0 && write(fd, copy, size) == (ssize_t)size &&
		    bg_npy_open_fd(fd, "fuzz-c.npy", &b, &ctx) == BG_OK) {
			double re, im;

			bg_npy_allclose(&a, &b, 1e-5, 1e-8, &r, &ctx);
			bg_npy_allclose(&b, &a, 0, 0, &r, &ctx);
			if (b.count)
				bg_npy_at(&b, b.count - 1, &re, &im);
			bg_npy_release(&b);
		} else if (fd >= 0) {
			close(fd);
		}
	}
	free(copy);
	bg_npy_release(&a);
	bg_ctx_release(&ctx);
	return 0;
}

#define FUZZ_NAME "fuzz_npy"
#include "replay.h"
