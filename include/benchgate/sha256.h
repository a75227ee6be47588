/*
 * sha256.h - SHA-256 of memory and of files (OpenSSL's libcrypto, loaded on
 * the first digest). Digests are written as 64 lower-case hex characters
 * plus NUL into hex[65].
 */
#ifndef BENCHGATE_SHA256_H
#define BENCHGATE_SHA256_H

#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

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
/* What the open file fd holds, from its start (its offset is left as it
 * is); BG_EIO "DISPLAY: cannot read: REASON". */
int bg_sha256_fd(int fd, const char *display, char hex[65], struct bg_ctx *ctx);
/*
 * Appends to out the line GNU sha256sum (coreutils 9) writes for a file
 * name whose digest is hex: HEX, two spaces, NAME, a line feed. A name
 * holding a backslash, a line feed or a carriage return is escaped as
 * sha256sum escapes it: the line starts with a backslash, and the name has
 * each backslash doubled and those two bytes written as backslash-n and
 * backslash-r. A listing of such lines hashes as `sha256sum FILES |
 * sha256sum` prints.
 */
void bg_sha256sum_line(struct bg_strbuf *out, const char hex[65], const char *name);

#ifdef __cplusplus
}
#endif

#endif
