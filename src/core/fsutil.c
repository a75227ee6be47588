/*
 * fsutil.c - file reads, atomic writes, mkdir -p (see fsutil.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "benchgate/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * One fstat, a buffer of exactly the expected size, reads until EOF: a
 * regular file of known size costs one allocation (no growth copies) and
 * two reads (the second sees EOF, or the bytes appended meanwhile, which
 * are then read into a growing buffer as for pipes and /proc files).
 */
int bg_file_read(const char *path, const char *display, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	int fd;
	struct stat st;
	size_t chunk = 65536;

	if (!display)
		display = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			return bg_error(ctx, BG_EIO, "%s: cannot read: is a directory", display);
		}
		if (S_ISREG(st.st_mode) && st.st_size > 0) {
			bg_strbuf_grow(out, (size_t)st.st_size);
			chunk = 4096; /* growth only when the file grew since fstat */
		}
	}
	if (out->cap - out->len <= 1)
		bg_strbuf_grow(out, chunk);
	for (;;) {
		ssize_t n;
		char spare[4096];

		if (out->cap - out->len - 1 == 0) {
			/* full: the file may be complete; look before growing */
			n = read(fd, spare, sizeof(spare));
			if (n > 0) {
				bg_strbuf_addn(out, spare, (size_t)n);
				bg_strbuf_grow(out, chunk);
				continue;
			}
		} else {
			n = read(fd, out->buf + out->len, out->cap - out->len - 1);
			if (n > 0) {
				bg_strbuf_setlen(out, out->len + (size_t)n);
				continue;
			}
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(e));
		}
		break;
	}
	close(fd);
	return BG_OK;
}

static int fsync_parent(const char *path)
{
	struct bg_strbuf dir = BG_STRBUF_INIT;
	const char *slash = strrchr(path, '/');
	int fd, rc = 0;

	if (slash)
		bg_strbuf_addn(&dir, path, slash == path ? 1 : (size_t)(slash - path));
	else
		bg_strbuf_adds(&dir, ".");
	fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		rc = fsync(fd);
		close(fd);
	}
	bg_strbuf_release(&dir);
	return rc;
}

int bg_file_write_atomic(const char *path, const char *display, const char *data, size_t len,
			 struct bg_ctx *ctx)
{
	struct bg_strbuf tmp = BG_STRBUF_INIT;
	size_t off = 0;
	int fd;

	if (!display)
		display = path;
	{
		struct stat st;
		/* never replace a device, FIFO or directory with a regular file */
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return bg_error(ctx, BG_EIO, "%s: cannot write: it exists and is not a regular file",
					display);
	}
	bg_strbuf_addf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		bg_strbuf_release(&tmp);
		return bg_error(ctx, BG_EIO, "%s: cannot write: %s", display, strerror(e));
	}
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			unlink(tmp.buf);
			bg_strbuf_release(&tmp);
			return bg_error(ctx, BG_EIO, "%s: cannot write: %s", display, strerror(e));
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		int e = errno;
		unlink(tmp.buf);
		bg_strbuf_release(&tmp);
		return bg_error(ctx, BG_EIO, "%s: cannot write: %s", display, strerror(e));
	}
	if (rename(tmp.buf, path) != 0) {
		int e = errno;
		unlink(tmp.buf);
		bg_strbuf_release(&tmp);
		return bg_error(ctx, BG_EIO, "%s: cannot replace: %s", display, strerror(e));
	}
	fsync_parent(path);
	bg_strbuf_release(&tmp);
	return BG_OK;
}

int bg_mkdirs(const char *path, struct bg_ctx *ctx)
{
	char *p = bg_xstrdup(path);
	int rc = BG_OK;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) != 0 && errno != EEXIST) {
				rc = bg_error(ctx, BG_EIO, "%s: cannot create directory: %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	if (rc == BG_OK && !bg_is_dir(path))
		rc = bg_error(ctx, BG_EIO, "%s: cannot create directory: not a directory", path);
	free(p);
	return rc;
}

bool bg_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool bg_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void bg_path_join(struct bg_strbuf *out, const char *dir, const char *rel)
{
	if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0) {
		bg_strbuf_adds(out, rel);
		return;
	}
	bg_strbuf_adds(out, dir);
	if (out->len && out->buf[out->len - 1] != '/')
		bg_strbuf_addch(out, '/');
	bg_strbuf_adds(out, rel);
}
