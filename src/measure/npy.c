/*
 * npy.c - .npy reading and numpy.allclose (see benchgate/npy.h).
 */
#include "benchgate/npy.h"
#include "benchgate/fsutil.h"
#include "benchgate/strbuf.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct npy_header {
	char order;   /* '<' little, '>' big, '|' not applicable */
	char kind;    /* b i u f c */
	size_t size;  /* item size in bytes */
	bool fortran;
	bool have_descr, have_order, have_shape;
	char msg[256]; /* a message naming what is not supported */
	bool unsupported; /* msg is a valid file benchgate does not read (it says what to do) */
};

/* A malformed file: says what is wrong and to write it again. */
static int bad(struct bg_ctx *ctx, const char *display, const char *what)
{
	return bg_error(ctx, BG_ECHECK, "%s: not a valid .npy file: %s (write it with numpy.save)",
			display, what);
}

/* No byte or control character of the file reaches a message as it is. */
static void printable(char *s)
{
	for (; *s; s++)
		if (*s < ' ' || *s > '~')
			*s = '?';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
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

static uint64_t load_uint(const unsigned char *p, size_t size, bool big)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++) {
		size_t k = big ? i : size - 1 - i;

		v = (v << 8) | p[k];
	}
	return v;
}

static double load_value(const unsigned char *p, const struct npy_header *h, size_t size)
{
	bool big = h->order == '>';
	uint64_t u = load_uint(p, size, big);

	switch (h->kind) {
	case 'b':
		return u ? 1.0 : 0.0;
	case 'u':
		return (double)u;
	case 'i':
		if (size < 8 && (u >> (size * 8 - 1)) & 1)
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

int bg_npy_parse(const unsigned char *data, size_t len, const char *display, struct bg_npy *out,
		 struct bg_ctx *ctx)
{
	struct npy_header h = {0};
	size_t hlen = 0, hstart = 0, count = 1, esize, csize;
	const char *err;
	const unsigned char *body;

	memset(out, 0, sizeof(*out));
	if (len < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
		return bad(ctx, display, "missing the \\x93NUMPY magic");
	if (data[7] != 0 || data[6] < 1 || data[6] > 3) {
		char what[96];

		snprintf(what, sizeof(what), "unsupported format version %u.%u (numpy writes 1.0, 2.0 and 3.0)",
			 data[6], data[7]);
		return bad(ctx, display, what);
	}
	if (data[6] == 1) {
		hlen = (size_t)data[8] | (size_t)data[9] << 8;
		hstart = 10;
	} else if (data[6] == 2 || data[6] == 3) {
		if (len < 12)
			return bad(ctx, display, "truncated header");
		hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
		       (size_t)data[11] << 24;
		hstart = 12;
	}
	if (hlen > len - hstart)
		return bad(ctx, display, "truncated header");
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
	esize = h.size;
	csize = h.kind == 'c' ? esize / 2 : esize;
	body = data + hstart + hlen;
	if (len - hstart - hlen != count * esize) {
		char what[128];

		snprintf(what, sizeof(what), "data holds %zu bytes, shape and dtype need %zu",
			 len - hstart - hlen, count * esize);
		return bad(ctx, display, what);
	}
	dtype_name(&h, out->dtype, sizeof(out->dtype));
	out->count = count;
	out->re = bg_xmalloc((count ? count : 1) * sizeof(double));
	if (h.kind == 'c')
		out->im = bg_xmalloc((count ? count : 1) * sizeof(double));
	for (size_t i = 0; i < count; i++) {
		size_t dst = i;

		if (h.fortran && out->ndim > 1) {
			/* element i of Fortran order: first index fastest; find its C-order position */
			size_t rem = i, idx, stride = 1;

			dst = 0;
			for (size_t d = 0; d < out->ndim; d++) {
				idx = rem % out->shape[d];
				rem /= out->shape[d];
				stride = 1;
				for (size_t e = d + 1; e < out->ndim; e++)
					stride *= out->shape[e];
				dst += idx * stride;
			}
		}
		out->re[dst] = load_value(body + i * esize, &h, csize);
		if (out->im)
			out->im[dst] = load_value(body + i * esize + csize, &h, csize);
	}
	return BG_OK;
}

int bg_npy_load(const char *path, const char *display, struct bg_npy *out, struct bg_ctx *ctx)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	int rc;

	memset(out, 0, sizeof(*out));
	{
		/* never a FIFO or a device: reading one would wait without end */
		struct stat st;

		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return bg_error(ctx, BG_EIO, "%s: cannot read: not a regular file (%s); name a .npy file",
					display ? display : path,
					S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket");
	}
	rc = bg_file_read(path, display, &sb, ctx);
	if (rc == BG_OK)
		rc = bg_npy_parse((const unsigned char *)sb.buf, sb.len, display ? display : path, out,
				  ctx);
	bg_strbuf_release(&sb);
	return rc;
}

void bg_npy_release(struct bg_npy *a)
{
	free(a->re);
	free(a->im);
	memset(a, 0, sizeof(*a));
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

int bg_npy_allclose(const struct bg_npy *a, const struct bg_npy *b, double rtol, double atol,
		    struct bg_allclose *r, struct bg_ctx *ctx)
{
	struct sumsq num = {0, 0}, den = {0, 0};
	size_t rel = 0; /* finite elements with b != 0 */
	bool single;

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
	for (size_t i = 0; i < a->count; i++) {
		double ar = a->re[i], br = b->re[i];
		double ai = a->im ? a->im[i] : 0, bi = b->im ? b->im[i] : 0;
		bool nan = isnan(ar) || isnan(br) || isnan(ai) || isnan(bi);
		bool inf = isinf(ar) || isinf(br) || isinf(ai) || isinf(bi);
		double diff, babs;
		bool close;

		if (nan) {
			if (!r->beyond++)
				r->first = i;
			r->nonfinite++;
			continue;
		}
		if (inf) {
			if (!(ar == br && ai == bi)) {
				if (!r->beyond++)
					r->first = i;
				r->nonfinite++;
			}
			continue;
		}
		r->finite++;
		diff = hypot(ar - br, ai - bi);
		babs = hypot(br, bi);
		close = single ? close_single(ar, ai, br, bi, rtol, atol, b->ndim == 0)
			       : close_double(diff, babs, rtol, atol);
		if (!close && !r->beyond++)
			r->first = i;
		if (diff > r->max_abs)
			r->max_abs = diff;
		if (babs > 0) {
			rel++;
			if (diff / babs > r->max_rel)
				r->max_rel = diff / babs;
		}
		sumsq_add(&num, diff);
		sumsq_add(&den, babs);
	}
	if (den.scale > 0) {
		/* ||a - b|| / ||b||, each scaled: a true 0.1 of values near 1e155
		 * or 1e-200 is 0.1, never a 0 from a sum that overflowed */
		r->rel_l2 = num.scale > 0 ? num.scale / den.scale * sqrt(num.ssq / den.ssq) : 0;
		r->rel_l2_valid = !(num.scale > 0 && r->rel_l2 == 0); /* a ratio below a double's range */
	} else {
		r->rel_l2 = 0;
		r->rel_l2_valid = num.scale == 0;
	}
	/* a figure over no element, or beyond the range of a double, is none */
	r->max_abs_valid = r->finite > 0 && isfinite(r->max_abs);
	r->max_rel_valid = rel > 0 && isfinite(r->max_rel);
	r->rel_l2_valid = r->rel_l2_valid && r->finite > 0 && isfinite(r->rel_l2);
	r->pass = r->beyond == 0;
	return BG_OK;
}
