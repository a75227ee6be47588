/*
 * inputs.h - a declared input's identity for `run` (internal to
 * src/lifecycle/): the SHA-256 of a file, or of a folder (a dataset kept as
 * many files: Zarr, an image sequence), and what it was when hashed, so
 * that a change during the session is seen afterwards.
 */
#ifndef BG_LIFECYCLE_INPUTS_H
#define BG_LIFECYCLE_INPUTS_H

#include "benchgate/status.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* What an input was when hashed: its stat, and for a folder a digest of
 * the relative path and stat of every file under it. */
struct bg_input_state {
	struct stat st;
	bool folder;
	uint64_t files; /* a folder's digest of its files' paths and stats */
};

/*
 * The SHA-256 of the input at path (display names it in messages) into
 * hex, and its state. A file: the SHA-256 of its bytes. A folder: the
 * SHA-256 of the listing `sha256sum` writes for every regular file under
 * it, "HEX  RELPATH\n" in the byte order of the relative paths (a link
 * to a file counts as that file), which is what
 *   cd DIR && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sed 's|  ./|  |' | sha256sum
 * prints for a folder without links. Errors (BG_EIO): "DISPLAY: cannot
 * read: REASON", also for what a folder holds that is neither a file nor
 * a folder, a link to a folder or to nothing, or a name with a line break.
 */
int bg_input_hash(const char *path, const char *display, char hex[65], struct bg_input_state *state,
		  struct bg_ctx *ctx);

/* Whether the input at path is still what state says: the same file (device,
 * inode, size, modification and change times), or a folder whose files are
 * the same paths with the same stats. */
bool bg_input_unchanged(const char *path, const struct bg_input_state *state);

#endif
