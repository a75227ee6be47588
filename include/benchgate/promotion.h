/*
 * promotion.h - promoting a qualified gate session into the registry
 * (docs/decisions.md, Promotion).
 *
 * bg_promotion_check reads one stored session (document and verdict), the
 * gate it measured, its experiment manifest and the RUNS.md index, and
 * judges the eight criteria:
 *   1 revisions  exact source and implementation revisions (full SHAs; a clean tree
 *                in the session's provenance or in its experiment manifest's code)
 *   2 machine    the gate's computer, the accelerator/device and runtime recorded,
 *                the device lease held throughout (the session's lease record, else
 *                an unblocked experiment session: run blocks on a lost lease)
 *   3 geometry   source and selected geometry, bins, crop and dtypes declared by
 *                the gate and equal in the session context
 *   4 cache      an explicit cache state, recorded by the session; a cold claim verified
 *   5 timing     run-level records with p50, p95, max and the timing boundary
 *   6 memory     logical resident bytes (where the gate declares them), accelerator
 *                peak (where there is an accelerator), process-tree peak, swap delta
 *   7 parity     parity passed and every timed run's outputs fingerprinted
 *   8 records    manifest completed, raw artifacts present with their SHA-256, a
 *                terminal ("ok") RUNS.md row
 * plus the preconditions: a gate session whose decision is not block, whose
 * curation is accepted or auto-accepted, of tier release-signoff or
 * scheduled-profile, whose gate's identity fields and runbook are still
 * what it ran with. Result: {"session", "gate", "tier", "preconditions":
 * [problems], "criteria": [{"number", "name", "title", "met", "problems"}],
 * "state": "measured"|"partial"|null, "refusals": [every unmet item as text],
 * "notes": [the lines of the session's decision that say where the machine
 * ran otherwise than its baseline (its "conditions"): no criterion, said to
 * whoever promotes it, and kept in the row's "benchgate" object when any]}.
 * All met and release-signoff: "measured"; all but memory (or a
 * scheduled-profile session): "partial"; else refused (state null).
 *
 * bg_promotion_run does the whole promotion: check, then append the
 * measurement row (and its artifact) to the evidence file benchgate owns
 * (PROFILE_EXPERIMENTS/benchgate-evidence.json, written atomically), edit the
 * registry (bg_promote_edit_registry: state, satisfied_by, the import once;
 * every other byte unchanged), write it atomically, re-render the generated
 * document, and validate; when validation or the resolved row disagrees,
 * every file is put back as it was and the error names the problem.
 * Returned JSON belongs to the caller. BG_ECHECK when refused (*report
 * says why), BG_EIO for files and the store.
 */
#ifndef BENCHGATE_PROMOTION_H
#define BENCHGATE_PROMOTION_H

#include <jansson.h>
#include <stdbool.h>

#include "benchgate/config.h"
#include "benchgate/status.h"
#include "benchgate/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a gate's cache_state text claims a cold cache: its first word
 * is "cold", in any case ("cold original source; no prepared index").
 * NULL claims none. */
bool bg_promotion_claims_cold(const char *cache_state);

/* The evidence file, relative to the project root, into out. */
void bg_promotion_evidence_path(const struct bg_config *cfg, struct bg_strbuf *out);
/*
 * Whether row, a measurement of the evidence index, was promoted from the
 * stored session id whose verdict (bg_store_verdict: key_id, wall_p50_ns,
 * wall_p95_ns, wall_max_ns) is given: the same session number and key, and
 * the same figures. A session number and an experiment id repeat in every
 * clone of a project (each has a store of its own, and ids are dated),
 * a session's figures do not.
 */
bool bg_promotion_row_of(const json_t *row, long long id, const json_t *verdict);

/*
 * Judges session (its document with "runs") with verdict (bg_store_verdict)
 * against gate (the resolved gate as JSON, or NULL when unknown) and its
 * runbook as the registry has it now (NULL: none): a session that recorded
 * its runbook's digest ("runbook_sha256", bg_lifecycle_runbook_sha256) is
 * refused once the runbook differs. Reads the manifest and RUNS.md under
 * cfg. *report receives the result above; BG_EIO when libcrypto cannot be
 * loaded.
 */
int bg_promotion_check(const struct bg_config *cfg, const json_t *gate, const json_t *runbook,
		       const json_t *session, const json_t *verdict, json_t **report, struct bg_ctx *ctx);

/*
 * The measurement row and artifact a promotion appends, and the public
 * measurement id the registry will resolve it to (what satisfied_by names).
 */
int bg_promotion_row(const struct bg_config *cfg, const json_t *gate, const json_t *session,
		     const json_t *verdict, const char *state, json_t **row, json_t **artifact,
		     struct bg_strbuf *measurement_id, struct bg_ctx *ctx);

/*
 * Promotes session id. *report as bg_promotion_check, plus on success
 * "measurement_id", "evidence" (the file), "registry", "generated".
 */
int bg_promotion_run(const struct bg_config *cfg, struct bg_store *store, long long id,
		     json_t **report, struct bg_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
