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

#ifdef __cplusplus
extern "C" {
#endif

#define BG_MEASURE_SCHEMA_VERSION 1

enum bg_parity_kind { BG_PARITY_NONE, BG_PARITY_SHA256, BG_PARITY_ALLCLOSE, BG_PARITY_COMMAND };

/* What the progress callback is told before each run and after the last. */
struct bg_measure_progress {
	const char *phase;  /* "smoke", "warmup", "timed", "done" */
	long index;         /* 1-based run index within the phase */
	long total;         /* planned runs in the phase (adaptive: current estimate) */
	double p50_seconds; /* running p50 of the timing (wall times, or reported samples), or -1 */
	double eta_seconds; /* estimated seconds left, or -1 when unknown */
};
typedef void (*bg_measure_progress_fn)(const struct bg_measure_progress *p, void *data);

/* What a session times: the process's wall time, or what each run reports. */
enum bg_timing { BG_TIMING_PROCESS, BG_TIMING_REPORTED };

/* The longest per-run timeout, in seconds (about 31 years): a deadline in
 * nanoseconds on the monotonic clock stays far inside int64_t. */
#define BG_TIMEOUT_MAX_SECONDS 1e9
#define BG_TIMEOUT_MAX_TEXT "1e9" /* the same, as messages write it */
/* The most warmups, or timed runs, one session may ask for (a typo of a
 * few more digits would otherwise run for days). */
#define BG_COUNT_MAX 100000000
#define BG_COUNT_MAX_TEXT "100000000" /* the same, as messages write it */

struct bg_measure_opts {
	char *const *argv; /* the command; with shell, argv[0..argc) joined by spaces */
	int argc;
	bool shell;
	long warmups; /* default 1 */
	long runs;    /* default 7 (fixed count) */
	bool adaptive; /* min_runs/max_runs/min_time decide the count instead of runs */
	long min_runs, max_runs;
	double min_time; /* seconds of timed wall time to reach */
	double timeout;  /* seconds per run, 0 = none; at most BG_TIMEOUT_MAX_SECONDS */
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
	/*
	 * Set by the caller's SIGINT handler, or NULL. The session clears it
	 * while opts.cleanup runs (so that a further signal stops the cleanup)
	 * and sets it again afterwards when it was set before.
	 */
	volatile sig_atomic_t *interrupted;
	/*
	 * When set: each run's stdout and stderr go to CAPTURE_DIR/run-NNN.stdout
	 * and .stderr (NNN the ordinal) through pipes the session drains while
	 * the run goes, keeping the first capture_cap bytes of each (the rest is
	 * discarded as it comes, a truncation marker appended after the run);
	 * the run record names them ("stdout", "stderr").
	 * Unset: stdout to /dev/null, stderr inherited.
	 */
	const char *capture_dir;
	long long capture_cap; /* default 1 MiB */
	/*
	 * BG_TIMING_REPORTED: every run gets $BENCHGATE_RESULT, the absolute path
	 * of a file it must write (bg_reported_check's format), CAPTURE_DIR/
	 * run-NNN.result.json when capture_dir is set, else in a temporary folder
	 * removed at the end. A run that exits 0 without a valid file blocks the
	 * session. The timed runs' samples, pooled, are statistics.reported_ns,
	 * the session's timing (bg_measure_timing_stats); each metric, which
	 * every timed run must report, gets statistics.metrics.NAME and its
	 * median in the document's "metrics".
	 */
	enum bg_timing timing;
};

/*
 * Suspends the session, for the caller's SIGTSTP handler (async-signal-
 * safe; errno is kept): stops the run or shell command being waited for
 * (SIGSTOP to its process group), stops the calling process (SIGSTOP) and,
 * once that is continued, continues the run's group (SIGCONT). With no run
 * going it only stops the calling process. Runs never hold the terminal,
 * so Ctrl-Z reaches the caller, not the run. A run that spans a suspension is recorded "suspended" and kept out of the
 * statistics, another timed run taking its place; its timeout does not
 * count the time the process was stopped.
 */
void bg_measure_suspend(void);
/*
 * For the caller's SIGCONT handler (async-signal-safe): a continue that
 * no bg_measure_suspend asked for ends a stop that benchgate did not see
 * begin (SIGSTOP sent to it by a job scheduler, a debugger, `kill -STOP`),
 * whose time the run being waited for then holds. That run, when the gap
 * shows the stop, is recorded "suspended" and kept out of the statistics as
 * above; its timeout does not count the gap.
 */
void bg_measure_continued(void);

/* Appends how a shell command (--setup, --cleanup, a parity command) ended,
 * as its status and signal are stored: "exited with status N", or, signal
 * not 0, "was killed by signal N (SIGNAME: ...)". */
struct bg_strbuf;
void bg_measure_shell_ended(struct bg_strbuf *out, int status, int signal);
/* A run's name in messages, into buf: "timed run 2", or with its ordinal
 * in the session where that differs, "timed run 2 (#3)". */
void bg_measure_run_name(char *buf, size_t size, const char *phase, long long index, long long ordinal);

/* Fills opts with the defaults above (argv, root and callbacks left NULL). */
void bg_measure_opts_init(struct bg_measure_opts *opts);
/*
 * Runs the session; *out receives the session document (caller decrefs).
 * For its length the process is a child subreaper (orphans of a run are
 * adopted, watched and reaped); the caller's setting is given back at the
 * end. The caller's children of the session's start are never reaped by
 * it; one that another thread of the caller starts during the session may
 * be, and so may one when the kernel does not list children
 * (/proc/self/task/TID/children). A run's process left running past the
 * session stays the caller's child.
 */
int bg_measure_session(const struct bg_measure_opts *opts, json_t **out, struct bg_ctx *ctx);
/*
 * BG_EPRECOND, saying so, when path (a file, or a folder, followed through
 * a link) is on a memory file system (tmpfs, ramfs), whose pages are the
 * file itself: nothing there can be evicted, so no run of it can be cold.
 * BG_OK otherwise, also when it is not there (yet) or cannot be examined
 * (the eviction before each run says so then).
 */
int bg_measure_evictable(const char *path, struct bg_ctx *ctx);
/*
 * For a target run names before anything is written (a runbook's
 * measure.cache.evict, which no step of the run makes): BG_EPRECOND when
 * path is not there, or holds no data (an empty file, a folder with no
 * file or only empty ones), since no run could then be shown cold by it;
 * else bg_measure_evictable's answer.
 */
int bg_measure_evict_target(const char *path, struct bg_ctx *ctx);

/*
 * The timing's name ("process", "reported"); the timing a name means
 * (0), or -1 for any other name or NULL.
 */
const char *bg_timing_name(enum bg_timing timing);
int bg_timing_parse(const char *name, enum bg_timing *timing);
/*
 * Whether obj, a session document or a stored session's summary row, has
 * the timing "reported" (its "timing" member).
 */
bool bg_measure_reported(const json_t *obj);

/*
 * The statistics a session is timed by (borrowed from doc): "reported_ns"
 * for a session of timing "reported", else "wall_ns"; NULL when absent.
 * Decisions, the store's summary columns, promotion and RUNS.md read this.
 */
const json_t *bg_measure_timing_stats(const json_t *doc);

/*
 * The reported-timing file, parsed JSON doc (shown in messages as display):
 *   {"samples_seconds": [s, ...], "metrics": {"name": number, ...}}
 * with 1 to 1,000,000 samples, each a number from 0 to 1e9, "metrics"
 * optional with numbers from -1e150 to 1e150, and no other field; a file may hold at
 * most 64 MiB. On success *samples (reals) and
 * *metrics (an object, empty when absent) are new references the caller
 * decrefs; on failure both are NULL and BG_ECHECK says "DISPLAY: what".
 * bg_reported_read parses the file first ("PATH:LINE:COL: what"; BG_EIO
 * when it cannot be read; BG_ECHECK, never opened for reading blocked nor
 * read, when it is not a regular file: a FIFO, a device, a folder).
 */
int bg_reported_check(const json_t *doc, const char *display, json_t **samples, json_t **metrics,
		      struct bg_ctx *ctx);
int bg_reported_read(const char *path, const char *display, json_t **samples, json_t **metrics,
		     struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
