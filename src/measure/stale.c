/*
 * stale.c - outputs a run did not write. Before each run, every existing
 * file that matches a declared output pattern gets a sentinel modification
 * time; any write by the run (or a new file in its place) replaces it.
 * After the run, a matched file that still carries the sentinel was there
 * before and was not written: a stale output, which must not pass parity.
 * Its own modification time is then put back, so a file the run did not
 * touch ends as it was (its ctime aside). A file whose time cannot be set
 * (not its owner) or that cannot hold the sentinel exactly (a file system
 * with coarse timestamps) is not marked and so never reported.
 */
#include "measure/internal.h"

#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* 1970-01-01T00:00:01.123456789Z: no build, copy or archive makes it */
static const struct timespec sentinel = {1, 123456789};

struct bg_stale_file {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;  /* its own, put back when the run did not write it */
	struct timespec marked; /* the sentinel as the file system stored it */
};

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static void put_back(const struct bg_stale_file *f)
{
	struct timespec t[2] = {{0, UTIME_OMIT}, f->mtime};
	struct stat st;

	if (stat(f->path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino &&
	    same_time(st.st_mtim, f->marked))
		utimensat(AT_FDCWD, f->path, t, 0);
}

void bg_stale_mark(struct bg_stale *s, const char *const *patterns, size_t n)
{
	bg_stale_restore(s);
	for (size_t i = 0; i < n; i++) {
		glob_t g;
		int rc = glob(patterns[i], GLOB_ERR, NULL, &g);

		if (rc != 0) {
			if (rc != GLOB_NOMATCH)
				globfree(&g);
			continue;
		}
		for (size_t k = 0; k < g.gl_pathc; k++) {
			struct timespec t[2] = {{0, UTIME_OMIT}, sentinel};
			struct bg_stale_file f;
			struct stat st;

			if (stat(g.gl_pathv[k], &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			f.dev = st.st_dev;
			f.ino = st.st_ino;
			/* a file a killed benchgate left marked holds the sentinel
			 * already: marked as it is (its own time is lost), never
			 * exempt from the check */
			f.mtime = st.st_mtim;
			if (!same_time(st.st_mtim, sentinel)) {
				if (utimensat(AT_FDCWD, g.gl_pathv[k], t, 0) != 0 || stat(g.gl_pathv[k], &st) != 0)
					continue;
				if (same_time(st.st_mtim, f.mtime)) /* the sentinel did not hold */
					continue;
			}
			f.marked = st.st_mtim;
			f.path = bg_xstrdup(g.gl_pathv[k]);
			if (s->n == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 8;
				s->files = bg_xrealloc(s->files, s->cap * sizeof(*s->files));
			}
			s->files[s->n++] = f;
		}
		globfree(&g);
	}
}

bool bg_stale_unwritten(const struct bg_stale *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct bg_stale_file *f = &s->files[i];
		struct stat st;

		if (strcmp(f->path, path) == 0)
			return stat(path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino &&
			       same_time(st.st_mtim, f->marked);
	}
	return false;
}

void bg_stale_restore(struct bg_stale *s)
{
	for (size_t i = 0; i < s->n; i++) {
		put_back(&s->files[i]);
		free(s->files[i].path);
	}
	s->n = 0;
}

void bg_stale_release(struct bg_stale *s)
{
	bg_stale_restore(s);
	free(s->files);
	s->files = NULL;
	s->cap = 0;
}
