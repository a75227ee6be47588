/*
 * sha256.c - SHA-256 through OpenSSL's EVP interface (see sha256.h).
 *
 * The checksums identify files and keys; they are not a security control.
 * OpenSSL is initialised without reading the system's openssl.cnf
 * (providers, engines): that read is most of the first digest's cost
 * (about 0.45 ms of 1.2 ms here), and SHA-256 is the same everywhere.
 */
#include "benchgate/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

static void to_hex(const unsigned char *md, unsigned int n, char hex[65])
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned int i = 0; i < n && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

/* Idempotent and thread-safe (OpenSSL runs its initialisation once). */
static void init_crypto(void)
{
	OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

void bg_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	init_crypto();
	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	to_hex(md, n, hex);
}

int bg_sha256_file(const char *path, const char *display, char hex[65], struct bg_ctx *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned char buf[1 << 16];
	unsigned int n = 0;
	EVP_MD_CTX *md_ctx;
	int fd;

	if (!display)
		display = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	init_crypto();
	md_ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md_ctx, EVP_sha256(), NULL);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			EVP_MD_CTX_free(md_ctx);
			close(fd);
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(e));
		}
		if (r == 0)
			break;
		EVP_DigestUpdate(md_ctx, buf, (size_t)r);
	}
	EVP_DigestFinal_ex(md_ctx, md, &n);
	EVP_MD_CTX_free(md_ctx);
	close(fd);
	to_hex(md, n, hex);
	return BG_OK;
}
