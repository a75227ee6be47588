/*
 * gen_data.c - writes the detector-binning example's deterministic synthetic
 * dataset: a 16 x 16 x 250 x 250 uint16 .npy (about 30.5 MiB) from a fixed
 * xorshift generator, with a bright disc like a diffraction pattern. The same
 * bytes on every machine, so the runbooks can pin output SHA-256s.
 *   gen-data OUT.npy
 */
#define _POSIX_C_SOURCE 200809L
#include "npyio.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const size_t shape[4] = {16, 16, 250, 250};
	size_t n = shape[0] * shape[1] * shape[2] * shape[3], i = 0;
	uint16_t *data;
	uint64_t s = 0x9e3779b97f4a7c15ULL;

	if (argc != 2) {
		fprintf(stderr, "usage: gen-data OUT.npy\n");
		return 2;
	}
	data = malloc(n * sizeof(*data));
	if (!data)
		return 1;
	for (size_t f = 0; f < shape[0] * shape[1]; f++)
		for (size_t r = 0; r < shape[2]; r++)
			for (size_t c = 0; c < shape[3]; c++) {
				long dy = (long)r - 125 - (long)(f % 7), dx = (long)c - 125 - (long)(f % 5);
				uint16_t base = (uint16_t)(dx * dx + dy * dy < 40 * 40 ? 3000 : 20);
				s ^= s << 13;
				s ^= s >> 7;
				s ^= s << 17;
				data[i++] = (uint16_t)(base + (s % 64));
			}
	{
		int rc = npy_write_u16(argv[1], shape, 4, data) ? 1 : 0;
		free(data);
		return rc;
	}
}
