/*
 * npy.c - .npy reading and numpy.allclose (see benchgate/npy.h): the
 * elements stay as stored, in memory or in their file, and are compared a
 * block at a time.
 */
#include "benchgate/npy.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"
#include "measure/internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct npy_header {
	char order;   /* '<' little, '>' big, '|' not applicable */
	char kind;    /* b i u f c */
	size_t size;  /* item size in bytes */
	bool fortran;
	bool have_descr, have_order, have_shape;
	bool long_ints; /* Python 2's 3L is read as 3 (numpy does so in format 1.0 and 2.0) */
	char msg[256]; /* a message naming what is not supported */
	bool unsupported; /* msg is a valid file benchgate does not read (it says what to do) */
};

/* A malformed file: says what is wrong and to write it again. */
static int bad(struct bg_ctx *ctx, const char *display, const char *what)
{
	bg_error(ctx, BG_ECHECK, "%s: not a valid .npy file: %s (write it with numpy.save)", display, what);
	return BG_ECHECK;
}

/* No byte or control character of the file reaches a message as it is. */
static void printable(char *s)
{
	for (; *s; s++)
		if (*s < ' ' || *s > '~')
			*s = '?';
}

/* Python's whitespace within brackets: a header may break its dictionary over lines. */
static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v'))
		p++;
	return p;
}

/* Reads a quoted Python string literal (no escapes needed for .npy headers). */
static const char *read_quoted(const char *p, const char *end, char *buf, size_t size)
{
	char q;
	size_t n = 0;

	if (p >= end || (*p != '\'' && *p != '"'))
		return NULL;
	q = *p++;
	while (p < end && *p != q) {
		if (n + 1 >= size)
			return NULL;
		buf[n++] = *p++;
	}
	if (p >= end)
		return NULL;
	buf[n] = '\0';
	return p + 1;
}

static bool parse_descr(const char *d, struct npy_header *h)
{
	char *end;
	unsigned long size;

	/* no byte order ('f8') is the machine's own, as numpy reads it */
	if (d[0] && strchr("biufc", d[0])) {
		h->order = '<';
		d--;
	} else if (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=') {
		return false;
	} else {
		h->order = d[0] == '=' ? '<' : d[0];
	}
	h->kind = d[1];
	if (!h->kind || !strchr("biufc", h->kind))
		return false;
	/* digits only: strtoul would take a sign or a space ('<f+8') */
	if (!isdigit((unsigned char)d[2]) || strspn(d + 2, "0123456789") != strlen(d + 2))
		return false;
	size = strtoul(d + 2, &end, 10);
	if (*end)
		return false;
	h->size = size;
	switch (h->kind) {
	case 'b':
		return size == 1;
	case 'i':
	case 'u':
		return size == 1 || size == 2 || size == 4 || size == 8;
	case 'f':
		return size == 4 || size == 8;
	default:
		return size == 8 || size == 16;
	}
}

static void dtype_name(const struct npy_header *h, char *buf, size_t size)
{
	switch (h->kind) {
	case 'b':
		snprintf(buf, size, "bool");
		break;
	case 'i':
		snprintf(buf, size, "int%zu", h->size * 8);
		break;
	case 'u':
		snprintf(buf, size, "uint%zu", h->size * 8);
		break;
	case 'f':
		snprintf(buf, size, "float%zu", h->size * 8);
		break;
	default:
		snprintf(buf, size, "complex%zu", h->size * 8);
		break;
	}
}

/* Parses the header dict: {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } */
static const char *parse_dict(const char *p, const char *end, struct npy_header *h,
			      struct bg_npy *out)
{
	char key[32], val[32];

	p = skip_ws(p, end);
	if (p >= end || *p++ != '{')
		return "header is not a dictionary";
	for (;;) {
		p = skip_ws(p, end);
		if (p < end && *p == '}')
			break;
		p = read_quoted(p, end, key, sizeof(key));
		if (!p)
			return "header key is not a string";
		p = skip_ws(p, end);
		if (p >= end || *p++ != ':')
			return "expected ':' in header";
		p = skip_ws(p, end);
		if (strcmp(key, "descr") == 0) {
			if (p < end && *p == '[') {
				h->unsupported = true;
				return "a structured dtype (a record of fields) is not supported: save "
				       "each field as an array of its own";
			}
			p = read_quoted(p, end, val, sizeof(val));
			if (!p)
				return "'descr' is not a dtype string";
			if (!parse_descr(val, h)) {
				printable(val);
				h->unsupported = true;
				snprintf(h->msg, sizeof(h->msg),
					 "dtype '%.31s' is not supported (read are bool, int8-int64, "
					 "uint8-uint64, float32, float64, complex64, complex128): save "
					 "the array as one of them, e.g. a.astype('float64')",
					 val);
				return h->msg;
			}
			h->have_descr = true;
		} else if (strcmp(key, "fortran_order") == 0) {
			if (end - p >= 4 && strncmp(p, "True", 4) == 0) {
				h->fortran = true;
				p += 4;
			} else if (end - p >= 5 && strncmp(p, "False", 5) == 0) {
				h->fortran = false;
				p += 5;
			} else {
				return "'fortran_order' must be True or False";
			}
			h->have_order = true;
		} else if (strcmp(key, "shape") == 0) {
			bool comma = false;

			if (p >= end || *p++ != '(')
				return "'shape' must be a tuple";
			out->ndim = 0;
			for (;;) {
				size_t v;

				p = skip_ws(p, end);
				if (p < end && *p == ')') {
					p++;
					/* (3) is the number 3 to Python, not a tuple */
					if (out->ndim == 1 && !comma)
						return "'shape' must be a tuple: (N) is a number; write (N,)";
					break;
				}
				if (p >= end)
					return "'shape' is not closed by ')'";
				if (*p < '0' || *p > '9')
					return "'shape' must hold non-negative integers";
				/* digits within the header only: the buffer need not end in a NUL */
				for (v = 0; p < end && *p >= '0' && *p <= '9'; p++) {
					if (v > (SIZE_MAX - 9) / 10)
						return "'shape' is too large";
					v = v * 10 + (size_t)(*p - '0');
				}
				if (h->long_ints && p < end && *p == 'L')
					p++;
				if (out->ndim >= BG_NPY_MAX_DIMS)
					return "'shape' has too many dimensions";
				out->shape[out->ndim++] = v;
				p = skip_ws(p, end);
				comma = p < end && *p == ',';
				if (comma)
					p++;
				else if (p < end && *p != ')')
					return "'shape' is malformed";
			}
			h->have_shape = true;
		} else {
			printable(key);
			snprintf(h->msg, sizeof(h->msg), "header has an unknown key '%s'", key);
			return h->msg;
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',')
			p++;
		else if (p < end && *p != '}')
			return "expected ',' or '}' in header";
	}
	if (!h->have_descr || !h->have_order || !h->have_shape)
		return "header lacks 'descr', 'fortran_order' or 'shape'";
	/* after the dictionary only the padding and the line's end */
	for (p++; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return "header has text after its dictionary";
	return NULL;
}

/* A header longer than this is refused (numpy itself reads 10,000 bytes
 * unless told otherwise; 64 dimensions need under 1,500). */
#define HEADER_MAX ((size_t)1 << 20)

/* Elements read from a file per block while two arrays are compared. */
#define BLOCK_BYTES ((size_t)1 << 20)

/* Whether bytes of this order are the machine's own. */
static bool native_order(char order)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return order != '<';
#else
	return order != '>';
#endif
}

static uint64_t load_uint(const unsigned char *p, size_t size, char order)
{
	uint64_t v = 0;

	if (native_order(order)) {
		uint16_t x2;
		uint32_t x4;

		switch (size) {
		case 1:
			return p[0];
		case 2:
			memcpy(&x2, p, sizeof(x2));
			return x2;
		case 4:
			memcpy(&x4, p, sizeof(x4));
			return x4;
		default:
			break;
		}
	}
	for (size_t i = 0; i < size; i++) {
		size_t k = order == '>' ? i : size - 1 - i;

		v = (v << 8) | p[k];
	}
	return v;
}

/* One number of size bytes at p, of kind (b i u f, or c's halves). */
static double load_value(const unsigned char *p, char kind, char order, size_t size)
{
	uint64_t u;

	if (native_order(order)) {
		if (kind == 'f' || kind == 'c') {
			if (size == 4) {
				float f;

				memcpy(&f, p, sizeof(f));
				return (double)f;
			} else {
				double d;

				memcpy(&d, p, sizeof(d));
				return d;
			}
		}
		if (kind == 'i' && size == 8) {
			int64_t x;

			memcpy(&x, p, sizeof(x));
			return (double)x;
		}
		if (kind == 'u' && size == 8) {
			uint64_t x;

			memcpy(&x, p, sizeof(x));
			return (double)x;
		}
	}
	u = load_uint(p, size, order);
	switch (kind) {
	case 'b':
		return u ? 1.0 : 0.0;
	case 'u':
		return (double)u;
	case 'i':
		if (size > 0 && size < 8 && (u >> (size * 8 - 1)) & 1)
			u |= ~(uint64_t)0 << (size * 8);
		return (double)(int64_t)u;
	default:
		if (size == 4) {
			uint32_t w = (uint32_t)u;
			float f;

			memcpy(&f, &w, sizeof(f));
			return (double)f;
		} else {
			double d;

			memcpy(&d, &u, sizeof(d));
			return d;
		}
	}
}

/* The element stored at p: *re, *im (0 unless complex). */
static void decode(const struct bg_npy *a, const unsigned char *p, double *re, double *im)
{
	size_t csize = a->is_complex ? a->itemsize / 2 : a->itemsize;

	*re = load_value(p, a->kind, a->order, csize);
	*im = a->is_complex ? load_value(p + csize, a->kind, a->order, csize) : 0;
}

/*
 * Where the header of a file of file_size bytes, whose first avail bytes
 * (at least 12, or all) are at data, lies: the magic and version checked,
 * *hstart and *hlen.
 */
static int header_span(const unsigned char *data, size_t avail, uint64_t file_size, const char *display,
		       size_t *hstart, size_t *hlen, struct bg_ctx *ctx)
{
	*hstart = *hlen = 0;
	if (memcmp(data, "\x93NUMPY", avail < 6 ? avail : 6) != 0 || avail == 0)
		return bad(ctx, display, "missing the \\x93NUMPY magic");
	if (avail < 10)
		return bad(ctx, display, "truncated header");
	if (data[7] != 0 || data[6] < 1 || data[6] > 3) {
		char what[96];

		snprintf(what, sizeof(what), "unsupported format version %u.%u (numpy writes 1.0, 2.0 and 3.0)",
			 data[6], data[7]);
		return bad(ctx, display, what);
	}
	if (data[6] == 1) {
		*hlen = (size_t)data[8] | (size_t)data[9] << 8;
		*hstart = 10;
	} else {
		if (avail < 12)
			return bad(ctx, display, "truncated header");
		*hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
			(size_t)data[11] << 24;
		*hstart = 12;
	}
	if (*hlen > file_size - *hstart)
		return bad(ctx, display, "truncated header");
	return BG_OK;
}

/*
 * Reads the header at data (its first bytes, the header whole) of a file
 * of file_size bytes into out: the shape, the dtype, where the elements
 * begin (body_offset), and that the file holds exactly them.
 */
static int parse_header(const unsigned char *data, size_t avail, uint64_t file_size, const char *display,
			struct bg_npy *out, struct bg_ctx *ctx)
{
	struct npy_header h = {0};
	size_t hstart, hlen, count = 1;
	const char *err;
	int rc;

	if ((rc = header_span(data, avail, file_size, display, &hstart, &hlen, ctx)) != BG_OK)
		return rc;
	h.long_ints = data[6] <= 2;
	err = parse_dict((const char *)data + hstart, (const char *)data + hstart + hlen, &h, out);
	if (err && h.unsupported)
		return bg_error(ctx, BG_ECHECK, "%s: not a valid .npy file: %s", display, err);
	if (err)
		return bad(ctx, display, err);
	for (size_t i = 0; i < out->ndim; i++) {
		if (out->shape[i] && count > SIZE_MAX / 16 / out->shape[i])
			return bad(ctx, display, "shape too large");
		count *= out->shape[i];
	}
	if (file_size - hstart - hlen != (uint64_t)count * h.size) {
		char what[128];

		snprintf(what, sizeof(what), "data holds %ju bytes, shape and dtype need %zu",
			 (uintmax_t)(file_size - hstart - hlen), count * h.size);
		return bad(ctx, display, what);
	}
	dtype_name(&h, out->dtype, sizeof(out->dtype));
	out->count = count;
	out->itemsize = h.size;
	out->kind = h.kind;
	out->order = h.order;
	out->fortran = h.fortran && out->ndim > 1;
	out->is_complex = h.kind == 'c';
	out->body_offset = hstart + hlen;
	return BG_OK;
}

/* An array holding nothing: what a failed read leaves (releasing it is harmless). */
static void empty(struct bg_npy *out)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
}

static void init_array(struct bg_npy *out, const char *display)
{
	memset(out, 0, sizeof(*out));
	out->fd = -1;
	out->display = bg_xstrdup(display ? display : "");
}

/* Reads the .npy image data (len bytes from malloc, owned by out from then
 * on, also on failure) into out. */
static int parse_image(unsigned char *data, size_t len, const char *display, struct bg_npy *out,
		       struct bg_ctx *ctx)
{
	int rc;

	init_array(out, display);
	out->file = data;
	out->file_len = len;
	if ((rc = parse_header(data, len, len, display, out, ctx)) != BG_OK)
		return rc;
	out->body = data + out->body_offset;
	return BG_OK;
}

int bg_npy_parse(const unsigned char *data, size_t len, const char *display, struct bg_npy *out,
		 struct bg_ctx *ctx)
{
	unsigned char *copy = bg_xmalloc(len ? len : 1);
	int rc;

	if (len)
		memcpy(copy, data, len);
	if ((rc = parse_image(copy, len, display, out, ctx)) != BG_OK)
		bg_npy_release(out);
	return rc;
}

/* Reads n bytes at offset at of fd into buf; a file that ends first shrank
 * since it was measured. */
static int read_at(int fd, unsigned char *buf, size_t n, uint64_t at, const char *display,
		   struct bg_ctx *ctx)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(at + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
		if (r == 0)
			return bg_error(ctx, BG_EIO,
					"%s: cannot read: it shrank while it was read; read it when nothing writes it",
					display);
		got += (size_t)r;
	}
	return BG_OK;
}

/* fstat of fd: a regular file of *size bytes, or BG_EIO saying what it is. */
static int regular_size(int fd, const char *display, uint64_t *size, struct bg_ctx *ctx)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return bg_error(ctx, BG_EIO, "%s: cannot read: not a regular file (%s); name a .npy file",
				display,
				S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
	*size = (uint64_t)st.st_size;
	return BG_OK;
}

/* open(2) for reading into out, which holds nothing when it fails; never
 * waits on a FIFO (to be refused as one). */
static int open_read(const char *path, const char *display, int *fd, struct bg_npy *out,
		     struct bg_ctx *ctx)
{
	empty(out);
	*fd = -1;
	if (!path)
		return bg_error(ctx, BG_EUSAGE, "no .npy file was named");
	if ((*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	return BG_OK;
}

int bg_npy_open_fd(int fd, const char *display, struct bg_npy *out, struct bg_ctx *ctx)
{
	unsigned char prefix[12], *head;
	uint64_t size = 0;
	size_t hstart, hlen;
	int rc;

	init_array(out, display);
	out->in_fd = true;
	out->fd = fd;
	if ((rc = regular_size(fd, display, &size, ctx)) != BG_OK)
		goto fail;
	if ((rc = read_at(fd, prefix, size < 12 ? (size_t)size : 12, 0, display, ctx)) != BG_OK ||
	    (rc = header_span(prefix, size < 12 ? (size_t)size : 12, size, display, &hstart, &hlen, ctx)) != BG_OK)
		goto fail;
	if (hlen > HEADER_MAX) {
		char what[96];

		snprintf(what, sizeof(what), "a header of %zu bytes (benchgate reads up to %zu)", hlen, HEADER_MAX);
		rc = bad(ctx, display, what);
		goto fail;
	}
	head = bg_xmalloc(hstart + hlen);
	if ((rc = read_at(fd, head, hstart + hlen, 0, display, ctx)) == BG_OK)
		rc = parse_header(head, hstart + hlen, size, display, out, ctx);
	free(head);
	if (rc == BG_OK)
		return BG_OK;
fail:
	bg_npy_release(out);
	return rc;
}

int bg_npy_open(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx)
{
	int fd, rc;

	if (!display)
		display = path;
	if ((rc = open_read(path, display, &fd, out, ctx)) != BG_OK)
		return rc;
	return bg_npy_open_fd(fd, display, out, ctx);
}

/* Copies the size bytes of src into mfd (both from offset 0). */
static int copy_file(int src, int mfd, uint64_t size, const char *display, struct bg_ctx *ctx)
{
	unsigned char *buf = bg_xmalloc(BLOCK_BYTES);
	uint64_t at = 0;
	int rc = BG_OK;

	while (rc == BG_OK && at < size) {
		size_t n = size - at < BLOCK_BYTES ? (size_t)(size - at) : BLOCK_BYTES;

		if ((rc = read_at(src, buf, n, at, display, ctx)) != BG_OK)
			break;
		for (size_t done = 0; done < n;) {
			ssize_t w = write(mfd, buf + done, n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = bg_error(ctx, BG_EIO,
					      "%s: cannot keep a copy of its %ju bytes (%.1f MiB) in memory: %s; run "
					      "where more memory is free",
					      display, (uintmax_t)size, (double)size / 1048576.0, strerror(errno));
				break;
			}
			done += (size_t)w;
		}
		at += n;
	}
	free(buf);
	return rc;
}

int bg_npy_open_copy(const char *path, const char *display, struct bg_npy *out, char sha256[65],
		     struct bg_ctx *ctx)
{
	struct bg_npy src;
	uint64_t size, avail;
	int mfd, rc;

	if (!display)
		display = path;
	/* the header first: a file that is no array is refused before a byte is copied */
	if ((rc = bg_npy_open(path, display, &src, ctx)) != BG_OK) {
		empty(out);
		return rc;
	}
	size = (uint64_t)src.body_offset + (uint64_t)src.count * src.itemsize;
	if (bg_sys_memory_available(&avail) && size > avail) {
		bg_npy_release(&src);
		empty(out);
		return bg_error(ctx, BG_EIO,
				"%s: cannot keep a copy of its %ju bytes (%.1f MiB) in memory: %.1f MiB is free; run "
				"where more memory is free",
				display, (uintmax_t)size, (double)size / 1048576.0, (double)avail / 1048576.0);
	}
	mfd = memfd_create("benchgate-reference", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) {
		/* no memory files here: the copy is this process's memory */
		bg_npy_release(&src);
		if ((rc = bg_npy_load(path, display, out, ctx)) == BG_OK &&
		    (rc = bg_sha256_hex(out->file, out->file_len, sha256, ctx)) != BG_OK)
			bg_npy_release(out);
		return rc;
	}
	rc = copy_file(src.fd, mfd, size, display, ctx);
	bg_npy_release(&src);
	if (rc != BG_OK) {
		close(mfd);
		empty(out);
		return rc;
	}
	/* nothing writes the copy from now on (the seals say so where they can) */
	(void)fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	if ((rc = bg_sha256_fd(mfd, display, sha256, ctx)) != BG_OK) {
		close(mfd);
		empty(out);
		return rc;
	}
	/* the copy is read again: a file that grew or changed while copied is judged as copied */
	return bg_npy_open_fd(mfd, display, out, ctx);
}

/* A buffer of n bytes, or BG_EIO naming the file they do not fit for. */
static int alloc_for(size_t n, const char *display, unsigned char **buf, struct bg_ctx *ctx)
{
	if (!(*buf = malloc(n ? n : 1)))
		return bg_error(ctx, BG_EIO,
				"%s: cannot read: its %zu bytes (%.1f MiB) do not fit in the memory this process may "
				"use; run where more memory is free",
				display, n, (double)n / 1048576.0);
	return BG_OK;
}

int bg_npy_load(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx)
{
	unsigned char *data;
	uint64_t size = 0;
	int fd, rc;

	if (!display)
		display = path;
	if ((rc = open_read(path, display, &fd, out, ctx)) != BG_OK)
		return rc;
	if ((rc = regular_size(fd, display, &size, ctx)) == BG_OK && size >= SIZE_MAX / 2)
		rc = bg_error(ctx, BG_EIO, "%s: cannot read: it is too big to hold in memory", display);
	if (rc == BG_OK && (rc = alloc_for((size_t)size, display, &data, ctx)) == BG_OK &&
	    (rc = read_at(fd, data, (size_t)size, 0, display, ctx)) != BG_OK) {
		free(data);
	}
	close(fd);
	if (rc != BG_OK) {
		empty(out);
		return rc;
	}
	if ((rc = parse_image(data, (size_t)size, display, out, ctx)) != BG_OK)
		bg_npy_release(out);
	return rc;
}

void bg_npy_release(struct bg_npy *a)
{
	free(a->file);
	free(a->display);
	if (a->in_fd && a->fd >= 0)
		close(a->fd);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

/* The storage index of C-order element i of a Fortran-ordered array. */
static size_t fortran_at(const struct bg_npy *a, size_t i)
{
	size_t idx[BG_NPY_MAX_DIMS], rem = i, stride = 1, at = 0;

	for (size_t d = a->ndim; d-- > 0;) {
		idx[d] = rem % a->shape[d];
		rem /= a->shape[d];
	}
	for (size_t d = 0; d < a->ndim; d++) {
		at += idx[d] * stride;
		stride *= a->shape[d];
	}
	return at;
}

/* The C-order index of storage element s of a Fortran-ordered array. */
static size_t c_index(const struct bg_npy *a, size_t s)
{
	size_t idx[BG_NPY_MAX_DIMS], rem = s, stride = 1, at = 0;

	for (size_t d = 0; d < a->ndim; d++) {
		idx[d] = rem % a->shape[d];
		rem /= a->shape[d];
	}
	for (size_t d = a->ndim; d-- > 0;) {
		at += idx[d] * stride;
		stride *= a->shape[d];
	}
	return at;
}

bool bg_npy_at(const struct bg_npy *a, size_t i, double *re, double *im)
{
	size_t at = a->fortran ? fortran_at(a, i) : i;
	unsigned char buf[16];

	if (!a->in_fd) {
		if (!a->body) { /* (an array that holds nothing) */
			*re = *im = NAN;
			return false;
		}
		decode(a, a->body + at * a->itemsize, re, im);
		return true;
	}
	{
		struct bg_ctx ctx;
		bool ok;

		bg_ctx_init(&ctx);
		ok = a->itemsize <= sizeof(buf) &&
		     read_at(a->fd, buf, a->itemsize, a->body_offset + (uint64_t)at * a->itemsize, a->display,
			     &ctx) == BG_OK;
		bg_ctx_release(&ctx);
		if (!ok) {
			*re = *im = NAN;
			return false;
		}
	}
	decode(a, buf, re, im);
	return true;
}

void bg_npy_shape_str(const struct bg_npy *a, char *buf, size_t size)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_strbuf_addch(&sb, '(');
	for (size_t i = 0; i < a->ndim; i++)
		bg_strbuf_addf(&sb, "%s%zu", i ? ", " : "", a->shape[i]);
	if (a->ndim == 1)
		bg_strbuf_addch(&sb, ',');
	bg_strbuf_addch(&sb, ')');
	snprintf(buf, size, "%s", sb.buf);
	bg_strbuf_release(&sb);
}

/*
 * numpy's test for two finite elements of float64, an integer type or bool
 * (numpy turns them into float64): |a - b| <= atol + rtol * |b|, each
 * operation rounded as numpy rounds it (one statement each, so that no
 * compiler fuses the multiply and the add).
 */
static bool close_double(double diff, double babs, double rtol, double atol)
{
	double tol = rtol * babs;

	tol = atol + tol;
	return diff <= tol;
}

/* A double as float32 rounds it: beyond FLT_MAX (rounded) it is an infinity. */
static float to_single(double v)
{
	if (v >= 0x1.ffffffp127)
		return HUGE_VALF;
	if (v <= -0x1.ffffffp127)
		return -HUGE_VALF;
	return (float)v;
}

/* Fits numpy's value-based casting of a Python float into float32 (before 2.0). */
static bool fits_single(double v)
{
	return v > -3.4e38 && v < 3.4e38;
}

/*
 * The same for float32 and complex64, which numpy computes in float32.
 * numpy 2 (NEP 50): a - b, |a - b|, |b|, rtol * |b| and atol + ... each
 * rounded to float32 (the tolerances too, beyond FLT_MAX an infinity), or
 * a == b. numpy before 2.0 (value-based casting): the same, except that a
 * tolerance beyond +-3.4e38 made the rest float64, and a 0-d array was
 * computed in float64 throughout. The two differ where a difference rounds
 * to the tolerance's edge, so an element is close only when both call it
 * close: no numpy says "not close" where benchgate passes.
 */
static bool close_single(double ar, double ai, double br, double bi, double rtol, double atol,
			 bool zero_d)
{
	float xr = (float)ar, xi = (float)ai, yr = (float)br, yi = (float)bi;
	float dr = xr - yr, di = xi - yi;
	float diff = hypotf(dr, di), babs = hypotf(yr, yi); /* |x| when the imaginary part is 0 */
	float tol = to_single(rtol) * babs;
	double tol64;

	tol = to_single(atol) + tol;
	if (!(diff <= tol || (xr == yr && xi == yi)))
		return false; /* numpy 2 */
	if (zero_d)
		return close_double(hypot(ar - br, ai - bi), hypot(br, bi), rtol, atol);
	if (fits_single(rtol) && fits_single(atol))
		return diff <= tol;
	tol64 = fits_single(rtol) ? (double)(to_single(rtol) * babs) : rtol * (double)babs;
	tol64 = atol + tol64;
	return (double)diff <= tol64;
}

/*
 * A sum of squares kept as scale^2 * ssq (LAPACK's dnrm2), so that the
 * norm of values near the ends of a double's range neither overflows nor
 * underflows on the way: x >= 0.
 */
struct sumsq {
	double scale, ssq;
};

static void sumsq_add(struct sumsq *q, double x)
{
	if (x == 0)
		return;
	if (q->scale < x) {
		double t = q->scale / x;

		q->ssq = 1 + q->ssq * t * t;
		q->scale = x;
	} else {
		double t = x / q->scale;

		q->ssq += t * t;
	}
}

/* What allclose gathers over the elements. */
struct tally {
	struct sumsq num, den;
	size_t rel; /* finite elements with b != 0 */
	bool halved; /* num and den hold half of each figure: an a - b beyond a double's range was seen */
	bool single, zero_d;
	double rtol, atol;
	const struct bg_npy *fortran; /* elements come in this array's Fortran order, or NULL: C order */
};

/* An element not close: the first in C order is kept. */
static void beyond(struct bg_allclose *r, const struct tally *t, size_t s)
{
	size_t c = t->fortran ? c_index(t->fortran, s) : s;

	if (r->beyond++ == 0 || c < r->first)
		r->first = c;
}

/* Element s (in the walk's order) of the output (ar, ai) and the reference (br, bi). */
static void tally_element(struct bg_allclose *r, struct tally *t, size_t s, double ar, double ai, double br,
			  double bi)
{
	bool close;
	double diff, babs;

	if (isnan(ar) || isnan(br) || isnan(ai) || isnan(bi)) {
		beyond(r, t, s);
		r->nonfinite++;
		return;
	}
	if (isinf(ar) || isinf(br) || isinf(ai) || isinf(bi)) {
		if (!(ar == br && ai == bi)) {
			beyond(r, t, s);
			r->nonfinite++;
		}
		return;
	}
	r->finite++;
	/* hypot(x, 0) is |x| exactly: the cheaper form where nothing is complex */
	diff = ai == 0 && bi == 0 ? fabs(ar - br) : hypot(ar - br, ai - bi);
	babs = bi == 0 ? fabs(br) : hypot(br, bi);
	close = t->single ? close_single(ar, ai, br, bi, t->rtol, t->atol, t->zero_d)
			  : close_double(diff, babs, t->rtol, t->atol);
	if (!close)
		beyond(r, t, s);
	if (diff > r->max_abs)
		r->max_abs = diff; /* infinite where a - b is beyond a double's range: no figure */
	if (!isfinite(diff) || !isfinite(babs)) {
		/* the relative figures from halves, which stay in range: a ratio
		 * is the same, and the sums switch to halves for good */
		diff = ai == 0 && bi == 0 ? fabs(ar / 2 - br / 2) : hypot(ar / 2 - br / 2, ai / 2 - bi / 2);
		babs = bi == 0 ? fabs(br / 2) : hypot(br / 2, bi / 2);
		if (!t->halved) {
			t->num.scale /= 2;
			t->den.scale /= 2;
			t->halved = true;
		}
	} else if (t->halved) {
		diff /= 2;
		babs /= 2;
	}
	if (babs > 0) {
		t->rel++;
		if (diff / babs > r->max_rel)
			r->max_rel = diff / babs;
	}
	sumsq_add(&t->num, diff);
	sumsq_add(&t->den, babs);
}

/* A copy in memory of src, whose elements are in its file. */
static int to_memory(const struct bg_npy *src, struct bg_npy *dst, struct bg_ctx *ctx)
{
	size_t n = src->count * src->itemsize;
	int rc;

	*dst = *src;
	dst->in_fd = false;
	dst->fd = -1;
	dst->file = NULL;
	dst->display = bg_xstrdup(src->display);
	if (!(dst->file = malloc(n ? n : 1)))
		rc = bg_error(ctx, BG_EIO,
			      "%s: cannot read: stored in Fortran order and compared in C order, it is read whole, "
			      "and its %zu bytes (%.1f MiB) do not fit in the memory this process may use; save "
			      "both arrays in one order, or run where more memory is free",
			      src->display, n, (double)n / 1048576.0);
	else {
		dst->file_len = n;
		dst->body = dst->file;
		rc = read_at(src->fd, dst->file, n, src->body_offset, src->display, ctx);
	}
	if (rc != BG_OK)
		bg_npy_release(dst);
	return rc;
}

/* Elements s..s+n of a's storage: in memory, or read from its file into buf. */
static int block_at(const struct bg_npy *a, unsigned char *buf, size_t s, size_t n, const unsigned char **p,
		    struct bg_ctx *ctx)
{
	if (!a->in_fd) {
		if (!a->body)
			return bg_error(ctx, BG_EIO, "%s: holds no elements to compare", a->display);
		*p = a->body + s * a->itemsize;
		return BG_OK;
	}
	*p = buf;
	return read_at(a->fd, buf, n * a->itemsize, a->body_offset + (uint64_t)s * a->itemsize, a->display, ctx);
}

int bg_npy_allclose(const struct bg_npy *a, const struct bg_npy *b, double rtol, double atol,
		    struct bg_allclose *r, struct bg_ctx *ctx)
{
	struct tally t = {{0, 0}, {0, 0}, 0, false, false, false, 0, 0, NULL};
	struct bg_npy ma, mb;
	const struct bg_npy *pa, *pb;
	unsigned char *bufa = NULL, *bufb = NULL;
	size_t per;
	bool single, walk_f;
	int rc = BG_OK;

	memset(r, 0, sizeof(*r));
	if (strcmp(a->dtype, b->dtype) != 0)
		return bg_error(ctx, BG_ECHECK,
				"dtype mismatch: output is %s, reference is %s (not converted: save "
				"both with the same dtype)",
				a->dtype, b->dtype);
	single = strcmp(b->dtype, "float32") == 0 || strcmp(b->dtype, "complex64") == 0;
	if (a->ndim != b->ndim || memcmp(a->shape, b->shape, a->ndim * sizeof(size_t)) != 0) {
		char sa[128], sb[128];

		bg_npy_shape_str(a, sa, sizeof(sa));
		bg_npy_shape_str(b, sb, sizeof(sb));
		return bg_error(ctx, BG_ECHECK,
				"shape mismatch: output is %s, reference is %s (shapes are not "
				"broadcast: they must be equal)",
				sa, sb);
	}
	r->count = a->count;
	t.single = single;
	t.zero_d = b->ndim == 0;
	t.rtol = rtol;
	t.atol = atol;
	/*
	 * The elements are walked in the order both store them (C, or both
	 * Fortran), a block at a time. An array stored otherwise is read
	 * element by element in C order, from memory: one in its file is
	 * read in whole first.
	 */
	walk_f = a->fortran && b->fortran;
	t.fortran = walk_f ? a : NULL;
	pa = a;
	pb = b;
	if (a->fortran != b->fortran) {
		if (a->fortran && a->in_fd && (rc = to_memory(a, &ma, ctx)) == BG_OK)
			pa = &ma;
		if (rc == BG_OK && b->fortran && b->in_fd && (rc = to_memory(b, &mb, ctx)) == BG_OK)
			pb = &mb;
	}
	per = BLOCK_BYTES / (a->itemsize ? a->itemsize : 1);
	if (per == 0)
		per = 1;
	if (pa->in_fd)
		bufa = bg_xmalloc(per * a->itemsize);
	if (pb->in_fd)
		bufb = bg_xmalloc(per * b->itemsize);
	for (size_t s = 0; rc == BG_OK && s < a->count; s += per) {
		size_t n = a->count - s < per ? a->count - s : per;
		const unsigned char *xa = NULL, *xb = NULL;

		if (pa->fortran == walk_f && (rc = block_at(pa, bufa, s, n, &xa, ctx)) != BG_OK)
			break;
		if (pb->fortran == walk_f && (rc = block_at(pb, bufb, s, n, &xb, ctx)) != BG_OK)
			break;
		for (size_t k = 0; k < n; k++) {
			double ar, ai, br, bi;

			if (xa)
				decode(pa, xa + k * pa->itemsize, &ar, &ai);
			else
				bg_npy_at(pa, s + k, &ar, &ai); /* in memory, C order */
			if (xb)
				decode(pb, xb + k * pb->itemsize, &br, &bi);
			else
				bg_npy_at(pb, s + k, &br, &bi);
			tally_element(r, &t, s + k, ar, ai, br, bi);
		}
	}
	free(bufa);
	free(bufb);
	if (pa == &ma)
		bg_npy_release(&ma);
	if (pb == &mb)
		bg_npy_release(&mb);
	if (rc != BG_OK) {
		memset(r, 0, sizeof(*r));
		return rc;
	}
	if (t.den.scale > 0) {
		/* ||a - b|| / ||b||, each scaled: a true 0.1 of values near 1e155
		 * or 1e-200 is 0.1, never a 0 from a sum that overflowed */
		r->rel_l2 = t.num.scale > 0 ? t.num.scale / t.den.scale * sqrt(t.num.ssq / t.den.ssq) : 0;
		r->rel_l2_valid = !(t.num.scale > 0 && r->rel_l2 == 0); /* a ratio below a double's range */
	} else {
		r->rel_l2 = 0;
		r->rel_l2_valid = t.num.scale == 0;
	}
	/* a figure over no element, or beyond the range of a double, is none */
	r->max_abs_valid = r->finite > 0 && isfinite(r->max_abs);
	r->max_rel_valid = t.rel > 0 && isfinite(r->max_rel);
	r->rel_l2_valid = r->rel_l2_valid && r->finite > 0 && isfinite(r->rel_l2);
	r->pass = r->beyond == 0;
	return BG_OK;
}
