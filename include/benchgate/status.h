/*
 * status.h - status codes and the error context every library call fills.
 *
 * The library never prints and never exits. A failing call returns a
 * bg_status and leaves one human-readable message on its struct bg_ctx;
 * src/cli/ alone prints it and maps the status to an exit code (the codes
 * are the exit statuses of DESIGN.md).
 */
#ifndef BENCHGATE_STATUS_H
#define BENCHGATE_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bg_status {
	BG_OK = 0,      /* success */
	BG_ECHECK = 1,  /* a check failed or a decision blocked */
	BG_EUSAGE = 2,  /* bad usage or arguments */
	BG_EPRECOND = 3, /* a fail-closed precondition was not met */
	BG_EIO = 4      /* I/O, store or system failure */
};

/* The error context: one message, owned by the context. */
struct bg_ctx {
	char *msg;  /* NULL when no error is recorded; owned */
	int status; /* status of the last recorded error */
};

#if defined(__GNUC__)
#define BG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define BG_PRINTF(a, b)
#endif

void bg_ctx_init(struct bg_ctx *ctx);
/* Frees the message; the context may be reused after bg_ctx_init. */
void bg_ctx_release(struct bg_ctx *ctx);
/* Records a message (replacing any earlier one) and returns status. The
 * arguments may include bg_ctx_message(ctx), to add to the message: the new
 * text is made before the old one is freed. */
int bg_error(struct bg_ctx *ctx, int status, const char *fmt, ...) BG_PRINTF(3, 4);
int bg_verror(struct bg_ctx *ctx, int status, const char *fmt, va_list ap);
/* The recorded message, or "" when none; owned by the context. */
const char *bg_ctx_message(const struct bg_ctx *ctx);

/* Allocation that stops the program on exhaustion: the handler given to
 * bg_set_out_of_memory (which must not return), else a message on stderr
 * and abort() (the only abort in the library). The library's jansson values
 * are allocated by jansson: a program should give jansson these too
 * (json_set_alloc_funcs(bg_xmalloc, free)), as benchgate does, because
 * jansson 2.14 does not survive an allocation that fails (a parse then
 * crashes or reports valid JSON as invalid, and a member is dropped). */
void bg_set_out_of_memory(void (*handler)(size_t n));
void *bg_xmalloc(size_t n);
/* bg_xmalloc for a big block that is filled a little at a time (an arena's):
 * its pages are left to fault in as they are touched. bg_xmalloc and
 * bg_xcalloc fault a block of 64 KiB or more in at once (bg_prefault). */
void *bg_xmalloc_lazy(size_t n);
/* The size from which bg_xmalloc, bg_xcalloc and a growing string buffer
 * fault a block's pages in at once. */
#define BG_PREFAULT_MIN ((size_t)64 << 10)
void *bg_xcalloc(size_t n, size_t size);
void *bg_xrealloc(void *p, size_t n);
char *bg_xstrdup(const char *s);
char *bg_xstrndup(const char *s, size_t n);

/* Faults in the pages holding [p, p + n) for writing, with one call
 * (MADV_POPULATE_WRITE), for memory about to be filled: touching fresh pages
 * one at a time costs a trap apiece, ten times more a page on the VMs
 * benchgate is measured on (docs/performance.md). A hint: a kernel without
 * it (before Linux 5.14) leaves the pages to fault in as they are touched. */
void bg_prefault(void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
