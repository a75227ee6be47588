/*
 * sha256.h - SHA-256 of memory and of files (OpenSSL libcrypto underneath).
 * Digests are written as 64 lower-case hex characters plus NUL into hex[65].
 */
#ifndef BENCHGATE_SHA256_H
#define BENCHGATE_SHA256_H

#include <stddef.h>

#include "benchgate/status.h"

void bg_sha256_hex(const void *data, size_t len, char hex[65]);
/* BG_EIO "PATH: cannot read: REASON" when the file cannot be read. */
int bg_sha256_file(const char *path, const char *display, char hex[65], struct bg_ctx *ctx);

#endif
