/*
 * inputs.c - a declared input's SHA-256 and state (see inputs.h). A
 * folder's files are listed first (sorted by relative path), then each is
 * stat-ed and hashed in that order; the listing, the paths and the digest
 * of their stats are this file's own memory, freed before returning.
 */
#include "lifecycle/inputs.h"

#include "benchgate/fsutil.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* The sorted files under path and the digest of their stats (*files),
 * each file stat-ed as it is now. */
static int folder_files(const char *path, const char *display, struct file_list *l, uint64_t *files,
			struct bg_ctx *ctx)
{
	struct bg_strbuf full = BG_STRBUF_INIT;
	uint64_t h = 0xcbf29ce484222325ULL;
	int rc;

	if ((rc = bg_tree_files(path, display, &l->rel, &l->n, ctx)))
		return rc;
	for (size_t i = 0; i < l->n && rc == BG_OK; i++) {
		struct stat st;

		bg_strbuf_reset(&full);
		bg_strbuf_addf(&full, "%s/%s", path, l->rel[i]);
		if (stat(full.buf, &st) != 0)
			rc = bg_error(ctx, BG_EIO, "%s/%s: cannot read: %s", display, l->rel[i], strerror(errno));
		else
			h = fold_file(h, l->rel[i], &st);
	}
	bg_strbuf_release(&full);
	*files = h;
	return rc;
}

int bg_input_hash(const char *path, const char *display, char hex[65], struct bg_input_state *state,
		  struct bg_ctx *ctx)
{
	struct bg_strbuf listing = BG_STRBUF_INIT, full = BG_STRBUF_INIT, shown = BG_STRBUF_INIT;
	struct file_list l = {0};
	int rc;

	memset(state, 0, sizeof(*state));
	if (stat(path, &state->st) != 0)
		return bg_error(ctx, BG_EIO, "%s: cannot read: %s", display, strerror(errno));
	if (!S_ISDIR(state->st.st_mode))
		return bg_sha256_file(path, display, hex, ctx);
	state->folder = true;
	rc = folder_files(path, display, &l, &state->files, ctx);
	for (size_t i = 0; i < l.n && rc == BG_OK; i++) {
		char one[65];

		bg_strbuf_reset(&full);
		bg_strbuf_addf(&full, "%s/%s", path, l.rel[i]);
		bg_strbuf_reset(&shown);
		bg_strbuf_addf(&shown, "%s/%s", display, l.rel[i]);
		if ((rc = bg_sha256_file(full.buf, shown.buf, one, ctx)) == BG_OK)
			bg_sha256sum_line(&listing, one, l.rel[i]);
	}
	if (rc == BG_OK)
		rc = bg_sha256_hex(listing.buf, listing.len, hex, ctx);
	list_release(&l);
	bg_strbuf_release(&listing);
	bg_strbuf_release(&full);
	bg_strbuf_release(&shown);
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
		same = folder_files(path, path, &l, &files, &ctx) == BG_OK && files == state->files;
		bg_ctx_release(&ctx);
		list_release(&l);
	}
	return same;
}
