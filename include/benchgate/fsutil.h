/*
 * fsutil.h - whole-file reads, atomic whole-file writes, directories, paths.
 *
 * Writes that others read go through bg_file_write_atomic: a temporary file
 * beside the target, fsync, rename, fsync of the directory; a killed process
 * leaves either the old file or the new one, never half of either.
 * Messages name the path as given in display (or path when display is NULL).
 */
#ifndef BENCHGATE_FSUTIL_H
#define BENCHGATE_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

/* Appends the file's bytes to out. BG_EIO "PATH: cannot read: REASON". */
int bg_file_read(const char *path, const char *display, struct bg_strbuf *out, struct bg_ctx *ctx);
int bg_file_write_atomic(const char *path, const char *display, const char *data, size_t len,
			 struct bg_ctx *ctx);
/* mkdir -p; BG_EIO on failure. */
int bg_mkdirs(const char *path, struct bg_ctx *ctx);
bool bg_is_file(const char *path);
bool bg_is_dir(const char *path);
/* Joins dir and rel into out (rel returned as is when absolute). */
void bg_path_join(struct bg_strbuf *out, const char *dir, const char *rel);

#endif
