/*
 * status.c - the error context and the allocators that stop the program
 * when memory is exhausted (bg_set_out_of_memory says how).
 */
#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void bg_ctx_init(struct bg_ctx *ctx)
{
	ctx->msg = NULL;
	ctx->status = BG_OK;
}

void bg_ctx_release(struct bg_ctx *ctx)
{
	free(ctx->msg);
	ctx->msg = NULL;
	ctx->status = BG_OK;
}

int bg_verror(struct bg_ctx *ctx, int status, const char *fmt, va_list ap)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_strbuf_vaddf(&sb, fmt, ap);
	if (ctx) {
		free(ctx->msg);
		ctx->msg = bg_strbuf_detach(&sb, NULL);
		ctx->status = status;
	} else {
		bg_strbuf_release(&sb);
	}
	return status;
}

int bg_error(struct bg_ctx *ctx, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	bg_verror(ctx, status, fmt, ap);
	va_end(ap);
	return status;
}

const char *bg_ctx_message(const struct bg_ctx *ctx)
{
	return ctx->msg ? ctx->msg : "";
}

static void (*oom_handler)(size_t);

void bg_set_out_of_memory(void (*handler)(size_t n))
{
	oom_handler = handler;
}

static void out_of_memory(size_t n)
{
	if (oom_handler)
		oom_handler(n); /* does not return */
	fprintf(stderr, "benchgate: out of memory allocating %zu bytes\n", n);
	abort();
}

void bg_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	/* every page holding a byte of the range: a page is mapped whole, and
	 * faulting one in changes nothing it holds (4096: the smallest x86-64
	 * and arm64 page; a bigger page is faulted in by its first 4096) */
	const uintptr_t page = 4096;
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);

	if (n)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

void *bg_xmalloc_lazy(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *bg_xmalloc(size_t n)
{
	void *p = bg_xmalloc_lazy(n);

	if (n >= BG_PREFAULT_MIN) /* a file's text, a page being built, a sort's keys: filled at once */
		bg_prefault(p, n);
	return p;
}

void *bg_xcalloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size) /* the size asked for: SIZE_MAX, it does not fit a size_t */
		out_of_memory(SIZE_MAX);
	if (n * size >= BG_PREFAULT_MIN) /* faulted in before it is cleared */
		return memset(bg_xmalloc(n * size), 0, n * size);
	p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory(n * size);
	return p;
}

void *bg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

char *bg_xstrdup(const char *s)
{
	return bg_xstrndup(s, strlen(s));
}

char *bg_xstrndup(const char *s, size_t n)
{
	char *p = bg_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
