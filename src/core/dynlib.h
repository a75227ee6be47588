/*
 * dynlib.h - shared libraries loaded when first needed (dlopen), not at
 * start-up. libcrypto (SHA-256) and SQLite (the store) are loaded this way:
 * the verbs that never hash or open a store, validate among them, then do
 * not pay for mapping and relocating them, nor for libcrypto's start-up
 * hook (`cpuid`, which traps to the hypervisor on a VM). Internal to the
 * library.
 *
 * A library is described once, statically, with the function pointers its
 * symbols are bound into; bg_dynlib_load binds them all or fails, once per
 * process (thread-safe), and every later call returns the same result;
 * but a process out of file descriptors (EMFILE, ENFILE) has not found the
 * library missing, and the next call tries again.
 */
#ifndef BENCHGATE_CORE_DYNLIB_H
#define BENCHGATE_CORE_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>

#include "benchgate/status.h"

struct bg_dynsym {
	const char *name;
	void *slot; /* the address of a function pointer, written on success */
};

struct bg_dynlib {
	const char *soname;        /* e.g. "libsqlite3.so.0" */
	const char *package;       /* the Debian package that provides it */
	const struct bg_dynsym *syms; /* ends with {NULL, NULL} */
	pthread_mutex_t lock;      /* PTHREAD_MUTEX_INITIALIZER */
	bool tried;
	int status;                /* BG_OK once loaded */
	char error[256];           /* why it failed */
};

#define BG_DYNLIB_INIT(soname, package, syms) \
	{(soname), (package), (syms), PTHREAD_MUTEX_INITIALIZER, false, BG_OK, ""}

/*
 * Loads lib and binds every symbol on the first call; BG_OK from then on,
 * or BG_EIO "cannot load SONAME: REASON; install Debian's PACKAGE" on every
 * call when it could not be loaded or a symbol is missing ("...; raise the
 * limit on open files (ulimit -n) or close some" when REASON is running out
 * of file descriptors, tried again on the next call).
 */
int bg_dynlib_load(struct bg_dynlib *lib, struct bg_ctx *ctx);
/* EMFILE or ENFILE when text (a dlerror() message) says the process or the
 * system may open no more files, else 0 (also for NULL). */
int bg_dynlib_out_of_files(const char *text);

#endif
