/*
 * dynlib.c - load a shared library and bind its symbols on first use
 * (see dynlib.h).
 */
#include "core/dynlib.h"

#include "benchgate/fsutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Binds every symbol, or names the first missing one in lib->error. */
static int bind_all(struct bg_dynlib *lib, void *handle)
{
	for (const struct bg_dynsym *s = lib->syms; s->name; s++) {
		void *sym = dlsym(handle, s->name);
		if (!sym) {
			snprintf(lib->error, sizeof(lib->error), "symbol '%s' missing", s->name);
			return BG_EIO;
		}
		/* a data pointer into a function pointer, without the cast C forbids */
		memcpy(s->slot, &sym, sizeof(sym));
	}
	return BG_OK;
}

int bg_dynlib_out_of_files(const char *text)
{
	if (text && strstr(text, strerror(EMFILE)))
		return EMFILE;
	if (text && strstr(text, strerror(ENFILE)))
		return ENFILE;
	return 0;
}

int bg_dynlib_load(struct bg_dynlib *lib, struct bg_ctx *ctx)
{
	int rc;

	pthread_mutex_lock(&lib->lock);
	if (!lib->tried) {
		void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
		lib->tried = true;
		if (!handle) {
			const char *why = dlerror();
			snprintf(lib->error, sizeof(lib->error), "%s", why ? why : "not found");
			lib->status = BG_EIO;
			/* out of file descriptors is not the library's absence: a
			 * later call, with some closed, tries again */
			if (bg_dynlib_out_of_files(lib->error))
				lib->tried = false;
		} else if ((lib->status = bind_all(lib, handle)) != BG_OK) {
			dlclose(handle);
		}
		/* a loaded library stays loaded for the life of the process */
	}
	rc = lib->status;
	/* the message is made under the lock: a retry may rewrite lib->error */
	if (rc != BG_OK && bg_dynlib_out_of_files(lib->error))
		/* the library is there: the process may open no more files */
		bg_error(ctx, rc, "cannot load %s: %s; %s", lib->soname, lib->error,
			 bg_open_files_advice(bg_dynlib_out_of_files(lib->error)));
	else if (rc != BG_OK)
		bg_error(ctx, rc, "cannot load %s: %s; install Debian's %s", lib->soname, lib->error, lib->package);
	pthread_mutex_unlock(&lib->lock);
	return rc;
}
