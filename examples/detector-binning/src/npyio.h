/*
 * npyio.h - minimal .npy (format 1.0) reading of C-order uint16 4D arrays and
 * writing of uint32 arrays, for the detector-binning example.
 */
#ifndef DETBIN_NPYIO_H
#define DETBIN_NPYIO_H

#include <stddef.h>
#include <stdint.h>

struct npy4 {
	size_t shape[4];
	void *data; /* owned; free() */
};

/* Reads a little-endian uint16, C-order, 4D .npy. Returns 0 or prints why and returns -1. */
int npy_read_u16_4d(const char *path, struct npy4 *out);
/* Writes a little-endian uint32 C-order .npy of the given shape (atomically). */
int npy_write_u32(const char *path, const size_t *shape, int ndim, const uint32_t *data);
/* Writes a little-endian uint16 C-order .npy of the given shape (atomically). */
int npy_write_u16(const char *path, const size_t *shape, int ndim, const uint16_t *data);

#endif
