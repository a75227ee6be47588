/*
 * inputs.c - a declared input's SHA-256 and state (see inputs.h). A
 * folder's files are listed first (sorted by relative path) and stat-ed,
 * then hashed, by as many threads as the process may run on (at most
 * HASH_THREADS) when they hold HASH_PARALLEL_BYTES or more, and their
 * sha256sum lines written in the listing's order; an error is that of the
 * first file in that order that fails, as a hash one by one reports it. The
 * listing, the paths, the digests and the threads are this file's own,
 * freed and joined before returning.
 */
#include "lifecycle/inputs.h"

#include "benchgate/fsutil.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define HASH_THREADS 8                     /* beyond this, memory and disk bound the hashing */
#define HASH_PARALLEL_BYTES (32ull << 20)  /* below this, threads cost more than they save */

/* A folder's files, relative to it, sorted (bg_tree_files). */
struct file_list {
	char **rel;
	size_t n;
};

static void list_release(struct file_list *l)
{
	bg_tree_files_free(l->rel, l->n);
	memset(l, 0, sizeof(*l));
}

#define FNV_PRIME 0x100000001b3ULL

/* FNV-1a over the 8 bytes of v, continuing h. */
static uint64_t fold_u64(uint64_t h, uint64_t v)
{
	for (int k = 0; k < 8; k++, v >>= 8)
		h = (h ^ (v & 0xff)) * FNV_PRIME;
	return h;
}

/* h folded (FNV-1a) with a file's path, with its NUL, and the stat fields
 * that tell a change. */
static uint64_t fold_file(uint64_t h, const char *rel, const struct stat *st)
{
	for (const char *c = rel;; c++) {
		h = (h ^ (unsigned char)*c) * FNV_PRIME;
		if (!*c)
			break;
	}
	h = fold_u64(h, (uint64_t)st->st_dev);
	h = fold_u64(h, (uint64_t)st->st_ino);
	h = fold_u64(h, (uint64_t)st->st_size);
	h = fold_u64(h, (uint64_t)st->st_mtim.tv_sec);
	h = fold_u64(h, (uint64_t)st->st_mtim.tv_nsec);
	h = fold_u64(h, (uint64_t)st->st_ctim.tv_sec);
	return fold_u64(h, (uint64_t)st->st_ctim.tv_nsec);
}

/* The sorted files under path, the digest of their stats (*files) and
 * their total size (*bytes, when not NULL), each file stat-ed as it is now. */
static int folder_files(const char *path, const char *display, struct file_list *l, uint64_t *files,
			uint64_t *bytes, struct bg_ctx *ctx)
{
	struct bg_strbuf full = BG_STRBUF_INIT;
	uint64_t h = 0xcbf29ce484222325ULL, total = 0;
	int rc;

	if ((rc = bg_tree_files(path, display, &l->rel, &l->n, ctx)))
		return rc;
	for (size_t i = 0; i < l->n && rc == BG_OK; i++) {
		struct stat st;

		bg_strbuf_reset(&full);
		bg_strbuf_addf(&full, "%s/%s", path, l->rel[i]);
		if (stat(full.buf, &st) != 0) {
			rc = bg_error(ctx, BG_EIO, "%s/%s: cannot read: %s", display, l->rel[i], strerror(errno));
		} else {
			h = fold_file(h, l->rel[i], &st);
			total += (uint64_t)st.st_size;
		}
	}
	bg_strbuf_release(&full);
	*files = h;
	if (bytes)
		*bytes = total;
	return rc;
}

/* The files of one folder hashed by several threads. */
struct hash_job {
	const char *path, *display;
	const struct file_list *l;
	char (*hex)[65];
	atomic_size_t next;   /* the next file to take */
	pthread_mutex_t lock; /* over the three below */
	size_t failed_at;     /* the first file in the listing's order that failed; l->n: none */
	int status;
	char *message;
};

/* Hashes file i; a failure is kept when it comes first in the listing. */
static void hash_one(struct hash_job *j, size_t i)
{
	struct bg_strbuf full = BG_STRBUF_INIT, shown = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	int rc;

	bg_ctx_init(&ctx);
	bg_strbuf_addf(&full, "%s/%s", j->path, j->l->rel[i]);
	bg_strbuf_addf(&shown, "%s/%s", j->display, j->l->rel[i]);
	if ((rc = bg_sha256_file(full.buf, shown.buf, j->hex[i], &ctx)) != BG_OK) {
		pthread_mutex_lock(&j->lock);
		if (i < j->failed_at) {
			j->failed_at = i;
			j->status = rc;
			free(j->message);
			j->message = bg_xstrdup(bg_ctx_message(&ctx));
		}
		pthread_mutex_unlock(&j->lock);
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&full);
	bg_strbuf_release(&shown);
}

/* Takes files in the listing's order until none is left, or until every
 * file left comes after one that failed. */
static void *hash_worker(void *arg)
{
	struct hash_job *j = arg;

	for (;;) {
		size_t i = atomic_fetch_add(&j->next, 1), failed_at;
		if (i >= j->l->n)
			break;
		pthread_mutex_lock(&j->lock);
		failed_at = j->failed_at;
		pthread_mutex_unlock(&j->lock);
		if (i > failed_at)
			break;
		hash_one(j, i);
	}
	return NULL;
}

/* How many threads this process may run on at once (1 when unknown). */
static size_t cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	return (size_t)CPU_COUNT(&set);
}

/* Each file's SHA-256 into hex[i], by up to nthreads threads (this one
 * among them); the first failure in the listing's order is the error. */
static int hash_files(const char *path, const char *display, const struct file_list *l, char (*hex)[65],
		      size_t nthreads, struct bg_ctx *ctx)
{
	struct hash_job j;
	pthread_t tid[HASH_THREADS];
	size_t started = 0;
	int rc = BG_OK;

	memset(&j, 0, sizeof(j));
	j.path = path;
	j.display = display;
	j.l = l;
	j.hex = hex;
	atomic_init(&j.next, 0);
	j.failed_at = l->n;
	pthread_mutex_init(&j.lock, NULL);
	/* libcrypto is loaded here, before any thread needs it */
	if (nthreads > 1 && bg_sha256_ready(ctx) != BG_OK)
		nthreads = 1; /* the first file's hash reports why */
	for (; started + 1 < nthreads; started++)
		if (pthread_create(&tid[started], NULL, hash_worker, &j) != 0)
			break; /* fewer threads: this one takes what they leave */
	hash_worker(&j);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (j.failed_at < l->n)
		rc = bg_error(ctx, j.status, "%s", j.message);
	free(j.message);
	pthread_mutex_destroy(&j.lock);
	return rc;
}

int bg_input_hash(const char *path, const char *display, char hex[65], struct bg_input_state *state,
		  struct bg_ctx *ctx)
{
	struct bg_strbuf listing = BG_STRBUF_INIT;
	struct file_list l = {0};
	char (*each)[65] = NULL;
	uint64_t bytes = 0;
	size_t nthreads = 1;
	int rc;

	memset(state, 0, sizeof(*state));
	if (stat(path, &state->st) != 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	if (!S_ISDIR(state->st.st_mode))
		return bg_sha256_file(path, display, hex, ctx);
	state->folder = true;
	rc = folder_files(path, display, &l, &state->files, &bytes, ctx);
	if (rc == BG_OK && l.n) {
		if (bytes >= HASH_PARALLEL_BYTES) {
			nthreads = cpus();
			nthreads = nthreads > HASH_THREADS ? HASH_THREADS : nthreads;
			nthreads = nthreads > l.n ? l.n : nthreads;
		}
		each = bg_xcalloc(l.n, sizeof(*each));
		rc = hash_files(path, display, &l, each, nthreads, ctx);
	}
	for (size_t i = 0; i < l.n && rc == BG_OK; i++)
		bg_sha256sum_line(&listing, each[i], l.rel[i]);
	if (rc == BG_OK)
		rc = bg_sha256_hex(listing.buf, listing.len, hex, ctx);
	free(each);
	list_release(&l);
	bg_strbuf_release(&listing);
	return rc;
}

/* Whether two stats are of the same file with the same contents as far as
 * the inode tells: device, inode, size, and modification and change times. */
static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

bool bg_input_unchanged(const char *path, const struct bg_input_state *state)
{
	struct file_list l = {0};
	struct stat st;
	struct bg_ctx ctx;
	uint64_t files = 0;
	bool same;

	if (stat(path, &st) != 0)
		return false;
	if (!state->folder)
		return !S_ISDIR(st.st_mode) && same_stat(&st, &state->st);
	/* a folder: the same one, holding the same files, each unchanged (its
	 * own times are not compared: its files are) */
	same = S_ISDIR(st.st_mode) && st.st_dev == state->st.st_dev && st.st_ino == state->st.st_ino;
	if (same) {
		bg_ctx_init(&ctx);
		same = folder_files(path, path, &l, &files, NULL, &ctx) == BG_OK && files == state->files;
		bg_ctx_release(&ctx);
		list_release(&l);
	}
	return same;
}
