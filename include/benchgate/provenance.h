/*
 * provenance.h - what a session was measured with, captured once per session.
 *
 * The document (a new JSON object owned by the caller) holds: git
 * {revision (full SHA or null), dirty, diff_sha256 (of `git diff HEAD
 * --binary` when dirty, else null), excluded (the paths left out of both)}, benchgate_version, argv, cwd (relative
 * to the project root, or null outside it), environment {NAME: value or
 * null} (values only for the names asked for; names containing TOKEN,
 * SECRET, PASSWORD, KEY or CREDENTIAL always "<redacted>"), host {cpu_model,
 * logical_cores, memory_total_bytes, kernel_release, os_release,
 * cpu_governor, load_average [1, 5, 15]} and gpu (NVML facts, or null).
 * What cannot be read is null; capture itself does not fail.
 */
#ifndef BENCHGATE_PROVENANCE_H
#define BENCHGATE_PROVENANCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct bg_provenance_opts {
	const char *root;             /* project root, absolute */
	char *const *argv;            /* benchgate's argv */
	int argc;
	const char *const *env_names; /* names whose values are recorded */
	size_t nenv;
	json_t *gpu;                  /* borrowed NVML description or NULL */
	/*
	 * Paths (relative to root) left out of the dirty check and the diff:
	 * benchgate's own records (the experiments folder), which every run
	 * writes. Recorded in git.excluded. NULL-terminated, or NULL.
	 */
	const char *const *git_exclude;
};

json_t *bg_provenance_capture(const struct bg_provenance_opts *opts);
/* True when an environment variable name looks secret. */
bool bg_provenance_secret_name(const char *name);

#endif
