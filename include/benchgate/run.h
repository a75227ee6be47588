/*
 * run.h - one experiment of the lifecycle for one gate (benchgate run):
 * fail-closed preflight, device lease, experiment manifest and RUNS.md row,
 * the measured session (smoke first, parity first), the stored session with
 * its comparison key and decision, and the terminal manifest and row.
 *
 * The gate and runbook come as JSON objects (the resolved gate and its
 * runbook); paths are relative to cfg->root, which must be the working
 * directory. A preflight refusal writes nothing but the lease folder and
 * returns BG_EPRECOND with the reason. A blocked session is a normal result
 * (BG_OK, res->decision "block"). An interruption (*interrupted set by the
 * caller's SIGINT/SIGTERM handler) kills the run's tree, records the
 * experiment as failed with reason "interrupted", releases the lease and
 * returns BG_EIO. With keep_lease, several runs hold the device as one
 * (run's repeats of an investigate decision).
 */
#ifndef BENCHGATE_RUN_H
#define BENCHGATE_RUN_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>

#include "benchgate/config.h"
#include "benchgate/lifecycle.h"
#include "benchgate/measure.h"
#include "benchgate/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bg_run_request {
	const struct bg_config *cfg;
	const json_t *gate;          /* resolved gate (configuration applied) */
	const json_t *runbook;       /* its runbook */
	/* the registry's runbooks, or NULL: what each declares in
	 * measure.outputs is left out of the git checks (any gate's outputs
	 * are what runs write, not source); run passes only that member */
	const json_t *runbooks;
	const char *protocol_version; /* the registry's, or NULL */
	const json_t *thresholds;    /* the registry's "thresholds" list, or NULL */
	const json_t *profile;       /* the profile matrix (its contract is checked), or NULL: none */
	const json_t *key_fields;    /* benchgate.json's key_fields map, or NULL */
	size_t registry_problems;    /* validate's problem count: non-zero refuses */
	const char *tier;            /* scheduled-profile, release-signoff, diagnostic, pr-smoke */
	const char *question;        /* NULL: the runbook's "question" */
	long warmups, runs;          /* < 0: the runbook's measure object decides */
	double timeout;              /* < 0: the runbook's */
	char *const *bg_argv;        /* benchgate's argv, for provenance */
	int bg_argc;
	bg_measure_progress_fn progress;
	void *progress_data;
	volatile sig_atomic_t *interrupted;
	/*
	 * NULL: the run takes the device lease and releases it at its end.
	 * Else a lease kept across runs (fd -1 before the first): the run uses
	 * it while it still holds this device's lock, else takes it there; it
	 * stays held when the run returns BG_OK (a blocked session too), so
	 * that no other run can take the device before the caller's next run,
	 * and is released when the run fails. The caller releases it with
	 * bg_lease_release after its last run.
	 */
	struct bg_lease *keep_lease;
	/*
	 * > 0: when the device or the machine is leased (another run, or
	 * diagnostic sessions), try again every quarter second for up to this
	 * many seconds instead of refusing at once; waiting(why, data) is told
	 * once, with the refusal that made it wait. An interruption meanwhile
	 * returns BG_EIO with nothing started; at the end of the wait the
	 * refusal is returned, saying how long it waited.
	 */
	double wait;
	void (*waiting)(const char *why, void *data);
	void *waiting_data;
};

struct bg_run_result {
	char experiment_id[256];
	long long session_id;  /* 0 when nothing was stored */
	json_t *session;       /* the stored session document (owned), or NULL */
	json_t *decision;      /* the decision document (owned), or NULL */
	char key_id[65];
	const char *computer;  /* detected computer label (points into cfg or a static) */
	bool replaced_stale_lease;      /* the lease of a holder that is gone was replaced */
	bool replaced_unreadable_lease; /* an unreadable owner record was replaced */
	/* which, when one was: the lease file (from the project root) and, for
	 * a stale one, the experiment its dead holder ran (owned; "" none) */
	char *replaced_lease_path, *replaced_lease_experiment;
};

void bg_run_result_release(struct bg_run_result *res);

/* The tiers run accepts. */
bool bg_run_tier_valid(const char *tier);

int bg_run_gate(const struct bg_run_request *req, struct bg_run_result *res, struct bg_ctx *ctx);

/*
 * The computer this machine is, from the host's CPU model and GPU names
 * (device_contains rules), its host name (computer_equals_ignoring_case) and
 * its OS and architecture (machine_in rules). *label is NULL when no rule
 * matches; why says what matched.
 */
void bg_run_detect_computer(const struct bg_config *cfg, const json_t *provenance, const char **label,
			    struct bg_strbuf *why);

#ifdef __cplusplus
}
#endif

#endif
