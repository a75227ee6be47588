/*
 * cache.c - making a file cold honestly: write back and drop its pages
 * (fdatasync, posix_fadvise DONTNEED) and measure what stays resident with
 * mincore on a private mapping. Nothing machine-wide is touched.
 */
#include "measure/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int resident_fd(int fd, const char *path, double *fraction, struct bg_ctx *ctx)
{
	struct stat st;
	long page = sysconf(_SC_PAGESIZE);
	size_t pages, resident = 0;
	unsigned char *vec;
	void *map;

	if (fstat(fd, &st) != 0)
		return bg_error(ctx, BG_EIO, "'%s': cannot stat: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return bg_error(ctx, BG_EIO, "'%s': not a regular file: only a file's cached pages can be evicted", path);
	if (st.st_size == 0) {
		*fraction = 0;
		return BG_OK;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return bg_error(ctx, BG_EIO, "'%s': cannot map to measure residency: %s", path,
				strerror(errno));
	pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
	vec = bg_xmalloc(pages);
	if (mincore(map, (size_t)st.st_size, vec) != 0) {
		int e = errno;

		free(vec);
		munmap(map, (size_t)st.st_size);
		return bg_error(ctx, BG_EIO, "'%s': mincore failed: %s", path, strerror(e));
	}
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	free(vec);
	munmap(map, (size_t)st.st_size);
	*fraction = (double)resident / (double)pages;
	return BG_OK;
}

int bg_cache_resident(const char *path, double *fraction, struct bg_ctx *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return bg_error(ctx, BG_EIO, "'%s': cannot open the file to evict: %s", path,
				strerror(errno));
	rc = resident_fd(fd, path, fraction, ctx);
	close(fd);
	return rc;
}

int bg_cache_evict(const char *path, double *fraction, struct bg_ctx *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc, e;

	if (fd < 0)
		return bg_error(ctx, BG_EIO, "'%s': cannot open the file to evict: %s", path,
				strerror(errno));
	/* dirty pages cannot be dropped: write them back first */
	if (fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) {
		e = errno;
		close(fd);
		return bg_error(ctx, BG_EIO, "'%s': fdatasync failed: %s", path, strerror(e));
	}
	e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (e != 0) {
		close(fd);
		return bg_error(ctx, BG_EIO, "'%s': posix_fadvise(DONTNEED) failed: %s", path,
				strerror(e));
	}
	rc = resident_fd(fd, path, fraction, ctx);
	close(fd);
	return rc;
}
