/*
 * sha256.c - SHA-256 through OpenSSL's EVP interface (see sha256.h).
 *
 * libcrypto is loaded on the first digest (core/dynlib.h), not linked: its
 * start-up hook (OPENSSL_cpuid_setup) would otherwise run in every process,
 * validate's included. The checksums identify files and keys; they are not
 * a security control. OpenSSL is initialised without reading the system's
 * openssl.cnf (providers, engines): that read is most of the first digest's
 * cost (about 0.45 ms of 1.2 ms here), and SHA-256 is the same everywhere.
 */
#include "benchgate/sha256.h"
#include "benchgate/fsutil.h"
#include "core/dynlib.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BG_LIBCRYPTO_SONAME
#define BG_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

static __typeof__(OPENSSL_init_crypto) *sym_OPENSSL_init_crypto;
static __typeof__(EVP_Digest) *sym_EVP_Digest;
static __typeof__(EVP_sha256) *sym_EVP_sha256;
static __typeof__(EVP_MD_CTX_new) *sym_EVP_MD_CTX_new;
static __typeof__(EVP_MD_CTX_free) *sym_EVP_MD_CTX_free;
static __typeof__(EVP_DigestInit_ex) *sym_EVP_DigestInit_ex;
static __typeof__(EVP_DigestUpdate) *sym_EVP_DigestUpdate;
static __typeof__(EVP_DigestFinal_ex) *sym_EVP_DigestFinal_ex;

static const struct bg_dynsym crypto_syms[] = {
	{"OPENSSL_init_crypto", &sym_OPENSSL_init_crypto},
	{"EVP_Digest", &sym_EVP_Digest},
	{"EVP_sha256", &sym_EVP_sha256},
	{"EVP_MD_CTX_new", &sym_EVP_MD_CTX_new},
	{"EVP_MD_CTX_free", &sym_EVP_MD_CTX_free},
	{"EVP_DigestInit_ex", &sym_EVP_DigestInit_ex},
	{"EVP_DigestUpdate", &sym_EVP_DigestUpdate},
	{"EVP_DigestFinal_ex", &sym_EVP_DigestFinal_ex},
	{NULL, NULL},
};

static struct bg_dynlib crypto = BG_DYNLIB_INIT(BG_LIBCRYPTO_SONAME, "libssl3", crypto_syms);

static void to_hex(const unsigned char *md, unsigned int n, char hex[65])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < n && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

/* Loads libcrypto and initialises it (OpenSSL runs that once). */
static int init_crypto(struct bg_ctx *ctx)
{
	int rc = bg_dynlib_load(&crypto, ctx);

	if (rc == BG_OK && !sym_OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL))
		rc = bg_error(ctx, BG_EIO, "cannot initialise %s", BG_LIBCRYPTO_SONAME);
	return rc;
}

int bg_sha256_ready(struct bg_ctx *ctx)
{
	return init_crypto(ctx);
}

/* A new digest context, or NULL with the reason on ctx. */
static EVP_MD_CTX *digest_new(struct bg_ctx *ctx)
{
	EVP_MD_CTX *md_ctx;

	if (init_crypto(ctx) != BG_OK)
		return NULL;
	md_ctx = sym_EVP_MD_CTX_new();
	if (!md_ctx || !sym_EVP_DigestInit_ex(md_ctx, sym_EVP_sha256(), NULL)) {
		sym_EVP_MD_CTX_free(md_ctx);
		bg_error(ctx, BG_EIO, "cannot start a SHA-256 digest (%s)", BG_LIBCRYPTO_SONAME);
		return NULL;
	}
	return md_ctx;
}

/* Finishes md_ctx into hex and frees it. */
static int digest_finish(EVP_MD_CTX *md_ctx, char hex[65], struct bg_ctx *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int ok = sym_EVP_DigestFinal_ex(md_ctx, md, &n);

	sym_EVP_MD_CTX_free(md_ctx);
	if (!ok || n != 32)
		return bg_error(ctx, BG_EIO, "cannot finish a SHA-256 digest (%s)", BG_LIBCRYPTO_SONAME);
	to_hex(md, n, hex);
	return BG_OK;
}

int bg_sha256_hex(const void *data, size_t len, char hex[65], struct bg_ctx *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int rc = init_crypto(ctx);

	if (rc != BG_OK)
		return rc;
	if (!sym_EVP_Digest(data, len, md, &n, sym_EVP_sha256(), NULL) || n != 32)
		return bg_error(ctx, BG_EIO, "cannot compute a SHA-256 digest (%s)", BG_LIBCRYPTO_SONAME);
	to_hex(md, n, hex);
	return BG_OK;
}

void bg_sha256sum_line(struct bg_strbuf *out, const char hex[65], const char *name)
{
	size_t n = strcspn(name, "\\\n\r");

	if (!name[n]) {
		bg_strbuf_addf(out, "%s  %s\n", hex, name);
		return;
	}
	bg_strbuf_addf(out, "\\%s  ", hex);
	for (const char *c = name; *c; c++) {
		if (*c == '\\')
			bg_strbuf_addn(out, "\\\\", 2);
		else if (*c == '\n')
			bg_strbuf_addn(out, "\\n", 2);
		else if (*c == '\r')
			bg_strbuf_addn(out, "\\r", 2);
		else
			bg_strbuf_addch(out, *c);
	}
	bg_strbuf_addch(out, '\n');
}

int bg_sha256_fd(int fd, const char *display, char hex[65], struct bg_ctx *ctx)
{
	unsigned char buf[1 << 16];
	EVP_MD_CTX *md_ctx = digest_new(ctx);
	off_t at = 0;

	if (!md_ctx)
		return ctx->status;
	for (;;) {
		ssize_t r = pread(fd, buf, sizeof(buf), at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			sym_EVP_MD_CTX_free(md_ctx);
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(e));
		}
		if (r == 0)
			break;
		if (!sym_EVP_DigestUpdate(md_ctx, buf, (size_t)r)) {
			sym_EVP_MD_CTX_free(md_ctx);
			return bg_error(ctx, BG_EIO, "%s: cannot compute its SHA-256 digest", display);
		}
		at += r;
	}
	return digest_finish(md_ctx, hex, ctx);
}

int bg_sha256_file(const char *path, const char *display, char hex[65], struct bg_ctx *ctx)
{
	struct stat st;
	const char *why;
	int fd, rc;

	if (!display)
		display = path;
	/* O_NONBLOCK: a FIFO opens without waiting for a writer, to be refused */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;

		/* out of descriptors: benchgate's limit, not the file's condition */
		if (bg_open_files_advice(e))
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s; %s", display, strerror(e),
					bg_open_files_advice(e));
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(e));
	}
	why = fstat(fd, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "it is not a regular file" : NULL;
	if (why) {
		close(fd);
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, why);
	}
	rc = bg_sha256_fd(fd, display, hex, ctx); /* (pread: from offset 0) */
	close(fd);
	return rc;
}
