/*
 * sha256.h - SHA-256 of memory and of files (OpenSSL's libcrypto, loaded on
 * the first digest). Digests are written as 64 lower-case hex characters
 * plus NUL into hex[65].
 */
#ifndef BENCHGATE_SHA256_H
#define BENCHGATE_SHA256_H

#include <stddef.h>

#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads libcrypto now, so that a caller can fail before work whose results
 * it would need to hash: BG_OK, or BG_EIO "cannot load libcrypto.so.3: ...;
 * install Debian's libssl3". */
int bg_sha256_ready(struct bg_ctx *ctx);
/* The same BG_EIO when libcrypto cannot be loaded; hex is then unchanged. */
int bg_sha256_hex(const void *data, size_t len, char hex[65], struct bg_ctx *ctx);
/* Also BG_EIO "PATH: cannot read: REASON" when the file cannot be read or is
 * not a regular file (a FIFO, a device, a folder: never waited on). */
int bg_sha256_file(const char *path, const char *display, char hex[65], struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
