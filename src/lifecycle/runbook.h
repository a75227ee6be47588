/*
 * runbook.h - the checks `run` makes of a gate's runbook and of the
 * registry's decision settings before anything is written (internal to
 * src/lifecycle/). Each returns BG_OK, or BG_EPRECOND with a message on ctx
 * naming the runbook, the field and the shape it must have. Nothing is
 * allocated for the caller.
 */
#ifndef BG_LIFECYCLE_RUNBOOK_H
#define BG_LIFECYCLE_RUNBOOK_H

#include "benchgate/status.h"

#include <jansson.h>

/* The runbook rb (id names it): required_environment a list of variable
 * names, question a text, inputs a list of {"path", optional "dataset_id"}. */
int bg_runbook_check_declared(const json_t *rb, const char *id, struct bg_ctx *ctx);

/* The substituted measure object m of runbook rb: only DESIGN.md's fields,
 * each of its type and range, parity one of its three shapes. */
int bg_runbook_check_measure(const json_t *m, const char *rb, struct bg_ctx *ctx);

/* The registry's "thresholds" (NULL or null: none): a list of
 * {"gate" or "key": ID, "k" > 0, "window" >= 1, "floor" >= 0}. */
int bg_runbook_check_thresholds(const json_t *list, size_t min_sessions, struct bg_ctx *ctx);

/* The profile matrix (NULL: none; display names its file) as `run` reads
 * it: an object whose comparison_contract is an object with comparison_key,
 * a nonempty list of distinct field names, and, when present,
 * minimum_accepted_sessions_before_hard_threshold, a whole number >= 0. */
int bg_runbook_check_contract(const json_t *profile, const char *display, struct bg_ctx *ctx);

/* benchgate.json's key_fields (NULL: none) against the key fields of that
 * contract (checked first; bg_default_key_fields without a profile matrix):
 * BG_EPRECOND naming a key field it maps that the key does not have (a
 * typo, or a field since dropped from the contract), whose mapping would
 * never be used; config_display names benchgate.json's file. */
int bg_runbook_check_key_fields(const json_t *profile, const char *display, const json_t *key_fields,
				const char *config_display, struct bg_ctx *ctx);

#endif
