/*
 * cache.c - making a file, or every file of a folder, cold honestly: write
 * back and drop its pages (fdatasync, posix_fadvise DONTNEED) and measure
 * what stays resident with mincore on a private mapping. Nothing
 * machine-wide is touched.
 */
#include "measure/internal.h"
#include "benchgate/measure.h"
#include "benchgate/fsutil.h"
#include "benchgate/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The pages of the regular file of size bytes open on fd and how many are
 * resident (mincore on a private mapping). */
static int resident_fd(int fd, const char *path, off_t size, size_t *pages, size_t *resident, struct bg_ctx *ctx)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	void *map;

	*pages = *resident = 0;
	if (size == 0)
		return BG_OK;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return bg_error(ctx, BG_EIO, "'%s': cannot map to measure residency: %s", path,
				strerror(errno));
	*pages = ((size_t)size + (size_t)page - 1) / (size_t)page;
	vec = bg_xmalloc(*pages);
	if (mincore(map, (size_t)size, vec) != 0) {
		int e = errno;

		free(vec);
		munmap(map, (size_t)size);
		return bg_error(ctx, BG_EIO, "'%s': mincore failed: %s", path, strerror(e));
	}
	for (size_t i = 0; i < *pages; i++)
		*resident += vec[i] & 1;
	free(vec);
	munmap(map, (size_t)size);
	return BG_OK;
}

/*
 * BG_EPRECOND for a file on fs whose pages are its only storage (tmpfs,
 * ramfs: /dev/shm, often /tmp): dropping them would lose the file, so the
 * kernel keeps them, and no run of it can be cold.
 */
static int evictable_fs(const struct statfs *fs, const char *path, struct bg_ctx *ctx)
{
	const char *kind;

	if ((unsigned long)fs->f_type == (unsigned long)TMPFS_MAGIC)
		kind = "tmpfs";
	else if ((unsigned long)fs->f_type == (unsigned long)RAMFS_MAGIC)
		kind = "ramfs";
	else
		return BG_OK;
	return bg_error(ctx, BG_EPRECOND,
			"'%s': is on a memory file system (%s), whose pages are the file itself: they cannot be evicted, so no run of it can be cold; keep it on a disk to measure it cold, or measure it warm (no eviction)",
			path, kind);
}

/* The remote file system path lies on, or NULL (see bg_cache_remote_fs). */
static const char *remote_fs_of(const char *path)
{
	/* f_type magic numbers (linux/magic.h, and the file systems' own) */
	static const struct {
		unsigned long type;
		const char *name;
	} remote[] = {
		{0x6969, "nfs"},          {0x517b, "smb"},        {0xff534d42, "cifs"},
		{0xfe534d42, "smb2"},     {0x00c36400, "ceph"},   {0x5346414f, "afs"},
		{0x6b414653, "afs"},      {0x01021997, "9p"},     {0x73757245, "coda"},
		{0x7461636f, "ocfs2"},    {0x01161970, "gfs2"},   {0x0bd00bd0, "lustre"},
		{0x47504653, "gpfs"},     {0x19830326, "beegfs"}, {0x13661366, "orangefs"},
		{0xaad7aaea, "panfs"},    {0x65735546, "fuse"},
	};
	struct statfs fs;

	if (statfs(path, &fs) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((unsigned long)(unsigned int)fs.f_type == remote[i].type)
			return remote[i].name;
	return NULL;
}

/*
 * The first file under folder (bg_tree_files, in its order) for which
 * found(file, data) is true: true with its path in *where; false with
 * *where the folder itself when none is, or the folder cannot be read.
 */
static bool first_file(const char *folder, bool (*found)(const char *file, void *data), void *data,
		       struct bg_strbuf *where)
{
	struct bg_ctx ctx;
	char **rel;
	size_t n;
	bool hit = false;

	bg_ctx_init(&ctx);
	if (bg_tree_files(folder, folder, &rel, &n, &ctx) == BG_OK) {
		for (size_t i = 0; i < n && !hit; i++) {
			bg_strbuf_reset(where);
			bg_strbuf_addf(where, "%s/%s", folder, rel[i]);
			hit = found(where->buf, data);
		}
		bg_tree_files_free(rel, n);
	}
	bg_ctx_release(&ctx);
	if (!hit) {
		bg_strbuf_reset(where);
		bg_strbuf_adds(where, folder);
	}
	return hit;
}

static bool on_remote_fs(const char *file, void *data)
{
	return (*(const char **)data = remote_fs_of(file)) != NULL;
}

const char *bg_cache_remote_fs(const char *path, struct bg_strbuf *where)
{
	const char *fs = remote_fs_of(path);
	struct stat st;

	bg_strbuf_reset(where);
	bg_strbuf_adds(where, path);
	if (fs || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return fs;
	/* a local folder may hold a mount of another file system: each file's own */
	first_file(path, on_remote_fs, &fs, where);
	return fs;
}

int bg_measure_evictable(const char *path, struct bg_ctx *ctx)
{
	struct statfs fs;

	return statfs(path, &fs) == 0 ? evictable_fs(&fs, path, ctx) : BG_OK;
}

/* BG_EPRECOND for an eviction target without data: no run can be shown
 * cold by it (an empty file, or a folder, is_dir, without data in it). */
static int nothing_to_evict(const char *path, bool is_dir, struct bg_ctx *ctx)
{
	return bg_error(ctx, BG_EPRECOND,
			"'%s': %s: there is nothing to evict, so no run can be shown cold by it; name the data the command reads",
			path, is_dir ? "a folder with no data in it (no file, or only empty ones)" : "an empty file");
}

/* Whether the regular file at file is not empty (for first_file). */
static bool has_bytes(const char *file, void *data)
{
	struct stat st;

	(void)data;
	return stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int bg_measure_evict_target(const char *path, struct bg_ctx *ctx)
{
	struct bg_strbuf where = BG_STRBUF_INIT;
	struct stat st;
	bool data;

	if (stat(path, &st) != 0)
		return bg_error(ctx, BG_EPRECOND, "'%s': %s; name a file or folder the gate's command reads, there before "
				"the run (nothing of the run makes it before the first eviction)",
				path, strerror(errno));
	data = S_ISDIR(st.st_mode) ? first_file(path, has_bytes, NULL, &where) : st.st_size > 0 || !S_ISREG(st.st_mode);
	bg_strbuf_release(&where);
	if (!data)
		return nothing_to_evict(path, S_ISDIR(st.st_mode), ctx);
	return bg_measure_evictable(path, ctx);
}

/* One file: with evict, its pages written back and dropped first; then
 * its pages and resident pages added to *pages and *resident. */
static int file_pages(const char *path, bool evict, size_t *pages, size_t *resident, struct bg_ctx *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	size_t p, r;
	int rc, e;

	if (fd < 0)
		return bg_error(ctx, BG_EIO, "'%s': cannot open the file to evict: %s", path,
				strerror(errno));
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return bg_error(ctx, BG_EIO, "'%s': cannot stat: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return bg_error(ctx, BG_EIO, "'%s': not a regular file or a folder: only files' cached pages can be "
				"evicted", path);
	}
	if (evict) {
		struct statfs fs;

		if (fstatfs(fd, &fs) == 0 && (rc = evictable_fs(&fs, path, ctx))) {
			close(fd);
			return rc;
		}
	}
	if (evict) {
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
	}
	rc = resident_fd(fd, path, st.st_size, &p, &r, ctx);
	close(fd);
	*pages += p;
	*resident += r;
	return rc;
}

/* A file, or every file under a folder (bg_tree_files): evicted first
 * with evict; *fraction their resident pages over all their pages (0 for
 * none). */
static int path_pages(const char *path, bool evict, double *fraction, struct bg_ctx *ctx)
{
	struct stat st;
	size_t pages = 0, resident = 0;
	int rc;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct bg_strbuf file = BG_STRBUF_INIT;
		char **rel;
		size_t n;

		if ((rc = bg_tree_files(path, path, &rel, &n, ctx)))
			return rc;
		for (size_t i = 0; i < n && rc == BG_OK; i++) {
			bg_strbuf_reset(&file);
			bg_strbuf_addf(&file, "%s/%s", path, rel[i]);
			rc = file_pages(file.buf, evict, &pages, &resident, ctx);
		}
		bg_strbuf_release(&file);
		bg_tree_files_free(rel, n);
	} else {
		rc = file_pages(path, evict, &pages, &resident, ctx);
	}
	*fraction = pages ? (double)resident / (double)pages : 0;
	/* nothing to drop is no evidence of a cold run: an empty file, a
	 * folder without data (a mistyped dataset folder) */
	if (rc == BG_OK && evict && pages == 0)
		rc = nothing_to_evict(path, S_ISDIR(st.st_mode), ctx);
	return rc;
}

int bg_cache_resident(const char *path, double *fraction, struct bg_ctx *ctx)
{
	return path_pages(path, false, fraction, ctx);
}

int bg_cache_evict(const char *path, double *fraction, struct bg_ctx *ctx)
{
	return path_pages(path, true, fraction, ctx);
}

/* Whether a /proc/PID/maps line maps the file of device major:minor, inode ino. */
static bool maps_file(const char *line, unsigned maj, unsigned mnr, unsigned long long ino)
{
	unsigned a, b;
	unsigned long long i;

	/* ADDR PERMS OFFSET MAJ:MIN INODE PATH */
	line = strchr(line, ' ');
	for (int k = 0; k < 2 && line; k++)
		line = strchr(line + 1, ' ');
	return line && sscanf(line + 1, "%x:%x %llu", &a, &b, &i) == 3 && a == maj && b == mnr && i == ino && ino;
}

/* bg_cache_mappers of one regular file */
static size_t file_mappers(const char *path, struct bg_strbuf *out)
{
	struct stat st;
	struct dirent *e;
	size_t found = 0;
	DIR *d;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(d = opendir("/proc")))
		return 0;
	while ((e = readdir(d))) {
		char file[64], line[1024], comm[64] = "";
		long pid = strtol(e->d_name, NULL, 10);
		bool maps = false;
		FILE *f;

		if (pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(file, sizeof(file), "/proc/%ld/maps", pid);
		if (!(f = fopen(file, "re")))
			continue; /* gone, or another user's */
		while (!maps && fgets(line, sizeof(line), f))
			maps = maps_file(line, major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
		fclose(f);
		if (!maps)
			continue;
		if (found < 3) {
			bg_proc_comm((pid_t)pid, comm);
			bg_strbuf_addf(out, "%s%ld (%s)", found ? ", " : "", pid, comm[0] ? comm : "?");
		}
		found++;
	}
	closedir(d);
	if (found > 3)
		bg_strbuf_addf(out, " and %zu more", found - 3);
	return found;
}

struct mappers {
	struct bg_strbuf *out;
	size_t found;
};

static bool mapped(const char *file, void *data)
{
	struct mappers *m = data;

	return (m->found = file_mappers(file, m->out)) > 0;
}

size_t bg_cache_mappers(const char *path, struct bg_strbuf *out, struct bg_strbuf *file)
{
	struct mappers m = {out, 0};
	struct stat st;

	bg_strbuf_reset(file);
	bg_strbuf_adds(file, path);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return file_mappers(path, out);
	/* a folder: the first of its files that a process maps */
	first_file(path, mapped, &m, file);
	return m.found;
}
