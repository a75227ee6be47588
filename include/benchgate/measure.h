/*
 * measure.h - the measurement engine: run one command many times and report
 * its time, memory and outputs, with nothing invented and nothing hidden.
 *
 * bg_measure_session runs: setup (once), a smoke run whose exit status and
 * outputs must pass parity before anything else, warmups, timed runs (a
 * fixed count or an adaptive one), cleanup (once). Each run is spawned with
 * posix_spawn in its own process group (no shell unless opts.shell), timed
 * with CLOCK_MONOTONIC, reaped with wait4 for its own rusage, and watched by
 * a sampling thread that sums the RSS of the live process tree. The result
 * is one JSON document (schema in docs/measure.md) owned by the caller:
 *   {"schema_version":1, "status":"ok"|"blocked", "reason":..., "runs":[...],
 *    "statistics":{...}, "provenance":{...}, ...}
 * A blocked session is a normal result (BG_OK with status "blocked"); only a
 * command that cannot be started or a system failure is an error (BG_EIO),
 * and a bad option value is BG_EUSAGE. The library never prints: progress
 * is reported through opts.progress.
 */
#ifndef BENCHGATE_MEASURE_H
#define BENCHGATE_MEASURE_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"

#define BG_MEASURE_SCHEMA_VERSION 1

enum bg_parity_kind { BG_PARITY_NONE, BG_PARITY_SHA256, BG_PARITY_ALLCLOSE, BG_PARITY_COMMAND };

/* What the progress callback is told before each run and after the last. */
struct bg_measure_progress {
	const char *phase;  /* "smoke", "warmup", "timed", "done" */
	long index;         /* 1-based run index within the phase */
	long total;         /* planned runs in the phase (adaptive: current estimate) */
	double p50_seconds; /* running p50 of timed wall times, or -1 when none yet */
	double eta_seconds; /* estimated seconds left, or -1 when unknown */
};
typedef void (*bg_measure_progress_fn)(const struct bg_measure_progress *p, void *data);

struct bg_measure_opts {
	char *const *argv; /* the command; with shell, argv[0..argc) joined by spaces */
	int argc;
	bool shell;
	long warmups; /* default 1 */
	long runs;    /* default 7 (fixed count) */
	bool adaptive; /* min_runs/max_runs/min_time decide the count instead of runs */
	long min_runs, max_runs;
	double min_time; /* seconds of timed wall time to reach */
	double timeout;  /* seconds per run, 0 = none */
	const char *prepare, *setup, *cleanup; /* shell commands or NULL */
	const char *const *outputs; /* glob patterns, relative to the working directory */
	size_t noutputs;
	enum bg_parity_kind parity;
	const char *parity_sha256;    /* 64 hex */
	const char *parity_reference; /* .npy path */
	double rtol, atol;            /* allclose tolerances (numpy defaults 1e-5, 1e-8) */
	const char *parity_command;   /* shell command; output paths appended as "$@" */
	bool deterministic;
	const char *const *evict; /* files to make cold before each run */
	size_t nevict;
	const char *const *env_names; /* variables whose values are recorded */
	size_t nenv;
	long sample_interval_ms; /* default 5 */
	const char *root;        /* project root (absolute) for relative paths in provenance */
	const char *const *git_exclude; /* paths left out of the dirty check (provenance.h), or NULL */
	char *const *bg_argv;    /* benchgate's own argv, recorded in provenance */
	int bg_argc;
	bg_measure_progress_fn progress;
	void *progress_data;
	volatile sig_atomic_t *interrupted; /* set by the caller's SIGINT handler, or NULL */
	/*
	 * When set: each run's stdout and stderr go to CAPTURE_DIR/run-NNN.stdout
	 * and .stderr (NNN the ordinal), each capped at capture_cap bytes with a
	 * truncation marker; the run record names them ("stdout", "stderr").
	 * Unset: stdout to /dev/null, stderr inherited.
	 */
	const char *capture_dir;
	long long capture_cap; /* default 1 MiB */
};

/* Fills opts with the defaults above (argv, root and callbacks left NULL). */
void bg_measure_opts_init(struct bg_measure_opts *opts);
/* Runs the session; *out receives the session document (caller decrefs). */
int bg_measure_session(const struct bg_measure_opts *opts, json_t **out, struct bg_ctx *ctx);

#endif
