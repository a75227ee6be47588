/*
 * profile.h - the profile matrix against the parity matrix, the experiment
 * manifests and experiments/RUNS.md: the reference's check_profile_registry,
 * with the same messages in the same order.
 */
#ifndef BENCHGATE_PROFILE_H
#define BENCHGATE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "benchgate/config.h"
#include "benchgate/registry.h"
#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_profile_counts {
	size_t cells;
	size_t experiments;
};

/*
 * Appends each failure to problems. Returns BG_OK when the checks ran, or an
 * error (unreadable or malformed profile/parity matrix or manifest, with the
 * file named) when they could not.
 */
int bg_profile_check(const struct bg_config *cfg, struct bg_problems *problems,
		     struct bg_profile_counts *counts, struct bg_ctx *ctx);

/*
 * Whether check calls text an absolute private path in a manifest: it holds
 * "/users/" or "/home/" in any case (the reference's rule).
 */
bool bg_profile_private_path(const char *text);

/*
 * RUNS.md's rows as check reads them, as the reference does: each line
 * that starts "| 20", stripped of '|' at both ends and cut at every '|'
 * (a "\|" too), its cells stripped; one of 4 cells or more counts for the
 * id in its first. An object (in ar) from each id to the list of its rows'
 * status cells (the fourth), in the order of the text.
 */
struct bg_value *bg_profile_runs_rows(struct bg_arena *ar, const char *text, size_t len);

/* The RUNS.md status word a manifest status maps to ("completed" -> "ok"), or NULL. */
const char *bg_profile_runs_status(const char *manifest_status);

#ifdef __cplusplus
}
#endif

#endif
