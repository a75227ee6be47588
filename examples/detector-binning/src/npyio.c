/*
 * npyio.c - .npy reading and writing for the detector-binning example.
 */
#define _POSIX_C_SOURCE 200809L
#include "npyio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_npy(const char *path, const char *descr, size_t item, const size_t *shape, int ndim,
		     const void *data)
{
	char header[256], tmp[4096];
	size_t n = 1, hlen, total;
	int len;
	FILE *f;

	len = snprintf(header, sizeof(header), "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < ndim; i++) {
		len += snprintf(header + len, sizeof(header) - (size_t)len, "%zu%s", shape[i],
				ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
		n *= shape[i];
	}
	len += snprintf(header + len, sizeof(header) - (size_t)len, "), }");
	hlen = (size_t)len;
	total = 10 + hlen + 1;
	while (total % 64)
		total++, hlen++;
	memset(header + len, ' ', hlen - (size_t)len);
	header[hlen] = '\n';
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "wb");
	if (!f) {
		fprintf(stderr, "detector-bin: %s: cannot write: %s\n", path, strerror(errno));
		return -1;
	}
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fputc((int)((hlen + 1) & 0xff), f);
	fputc((int)((hlen + 1) >> 8), f);
	fwrite(header, 1, hlen + 1, f);
	if (fwrite(data, item, n, f) != n || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fprintf(stderr, "detector-bin: %s: cannot write: %s\n", path, strerror(errno));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		fprintf(stderr, "detector-bin: %s: cannot write: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int npy_write_u32(const char *path, const size_t *shape, int ndim, const uint32_t *data)
{
	return write_npy(path, "<u4", 4, shape, ndim, data);
}

int npy_write_u16(const char *path, const size_t *shape, int ndim, const uint16_t *data)
{
	return write_npy(path, "<u2", 2, shape, ndim, data);
}

int npy_read_u16_4d(const char *path, struct npy4 *out)
{
	unsigned char magic[10];
	char header[1024], *p;
	size_t hlen, n = 1;
	FILE *f = fopen(path, "rb");

	memset(out, 0, sizeof(*out));
	if (!f) {
		fprintf(stderr, "detector-bin: %s: cannot read: %s\n", path, strerror(errno));
		return -1;
	}
	if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] != 1) {
		fprintf(stderr, "detector-bin: %s: not a version 1 .npy file\n", path);
		fclose(f);
		return -1;
	}
	hlen = (size_t)magic[8] | ((size_t)magic[9] << 8);
	if (hlen >= sizeof(header) || fread(header, 1, hlen, f) != hlen) {
		fprintf(stderr, "detector-bin: %s: truncated .npy header\n", path);
		fclose(f);
		return -1;
	}
	header[hlen] = '\0';
	if (!strstr(header, "'descr': '<u2'") || !strstr(header, "'fortran_order': False") ||
	    !(p = strstr(header, "'shape': ("))) {
		fprintf(stderr, "detector-bin: %s: expected a C-order little-endian uint16 array\n", path);
		fclose(f);
		return -1;
	}
	p += strlen("'shape': (");
	for (int i = 0; i < 4; i++) {
		char *end;
		out->shape[i] = strtoul(p, &end, 10);
		if (end == p || out->shape[i] == 0) {
			fprintf(stderr, "detector-bin: %s: expected a 4D shape\n", path);
			fclose(f);
			return -1;
		}
		n *= out->shape[i];
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	out->data = malloc(n * 2);
	if (!out->data || fread(out->data, 2, n, f) != n) {
		fprintf(stderr, "detector-bin: %s: truncated data (expected %zu values)\n", path, n);
		free(out->data);
		out->data = NULL;
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}
