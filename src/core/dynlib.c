/*
 * dynlib.c - load a shared library and bind its symbols on first use
 * (see dynlib.h).
 */
#include "core/dynlib.h"

#include <dlfcn.h>
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
		} else if ((lib->status = bind_all(lib, handle)) != BG_OK) {
			dlclose(handle);
		}
		/* a loaded library stays loaded for the life of the process */
	}
	rc = lib->status;
	pthread_mutex_unlock(&lib->lock);
	if (rc != BG_OK)
		return bg_error(ctx, rc, "cannot load %s: %s; install Debian's %s", lib->soname,
				lib->error, lib->package);
	return BG_OK;
}
