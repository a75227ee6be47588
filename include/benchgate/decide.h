/*
 * decide.h - comparison keys and the four decisions (DESIGN.md, Decisions).
 *
 * A comparison key is the list of field names of the profile matrix's
 * comparison_contract.comparison_key, each resolved from a session context:
 * first through benchgate.json's key_fields map (key field -> one context
 * field or a list of them, the first present wins), then the context field
 * of the same name; an unresolved field is null. The key id is the SHA-256
 * of the key's canonical JSON (sorted keys, "," and ":" separators, ASCII).
 *
 * A decision compares one finished session with the accepted sessions of
 * the same key: Block (a fail-closed fact), No baseline (fewer accepted
 * sessions than the contract's minimum), else per metric an envelope
 * centre +- k * scale with centre = median of the most recent `window`
 * baseline values and scale = max(1.4826 * MAD, floor * |centre|); any
 * metric outside (value < low or value > high: a bound itself is inside),
 * in either direction, is Investigate; otherwise Pass.
 * Returned JSON belongs to the caller.
 */
#ifndef BENCHGATE_DECIDE_H
#define BENCHGATE_DECIDE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default key fields when there is no profile matrix. */
extern const char *const bg_default_key_fields[];

/*
 * Resolves fields (a JSON array of strings) against context through
 * key_fields_map (an object or NULL). *key receives {"fields": [{"field",
 * "value", "source"}...], "values": {field: value}} and id the key id.
 * BG_ECHECK when fields is not a list of strings or the map is malformed.
 */
int bg_key_compute(const json_t *fields, const json_t *context, const json_t *key_fields_map,
		   json_t **key, char id[65], struct bg_ctx *ctx);

enum bg_decision {
	BG_DECISION_PASS,
	BG_DECISION_INVESTIGATE,
	BG_DECISION_BLOCK,
	BG_DECISION_NO_BASELINE,
};
const char *bg_decision_name(enum bg_decision d); /* "pass", "investigate", "block", "no-baseline" */

struct bg_envelope {
	size_t n;       /* baseline values used */
	double centre;  /* median */
	double mad;     /* median absolute deviation */
	double scale;   /* max(1.4826 * mad, floor * |centre|) */
	double low, high;
};
/* The envelope of n > 0 values with k and the relative floor. */
void bg_envelope_compute(const double *values, size_t n, double k, double floor_rel,
			 struct bg_envelope *out);

struct bg_decide_opts {
	size_t min_sessions; /* 5: the contract's minimum_accepted_sessions_before_hard_threshold */
	size_t window;       /* 20 (never below min_sessions: bg_decide_opts_minimum) */
	double k;            /* 4 */
	double floor_rel;    /* 0.01 */
	/* NULL, or how the session was timed ("process", "reported") when its
	 * key holds accepted sessions timed the other way, which never count:
	 * a no-baseline reason then says its count is of this timing */
	const char *timing;
};
void bg_decide_opts_init(struct bg_decide_opts *o);
/* Sets the contract's minimum, and raises the window to it when it is
 * smaller: a window that cannot hold the minimum could never decide. */
void bg_decide_opts_minimum(struct bg_decide_opts *o, size_t min_sessions);

/* The metrics a decision looks at, in order. */
enum { BG_METRIC_P50, BG_METRIC_P95, BG_METRIC_MAX, BG_METRIC_TREE_PEAK, BG_METRIC_GPU_PEAK, BG_NMETRICS };
extern const char *const bg_metric_names[BG_NMETRICS];
/* Appends v, a value of the metric named metric, as every verb writes it
 * (benchgate/format.h): seconds for "wall_*" ("150.00 ms"), bytes for
 * "*_bytes" ("1.100 MiB"), a name benchgate does not know as Python's
 * repr of the number (no unit assumed); "inf" and "-inf" as such. */
void bg_decide_metric_text(struct bg_strbuf *out, const char *metric, double v);

/* What a decision needs to know about one session; NAN for a metric not measured. */
struct bg_session_facts {
	long long id;
	double metric[BG_NMETRICS];
	/* Block reasons (each a short sentence), NULL-terminated; empty: none. */
	const char *const *block_reasons;
};

/*
 * Decides session s against baseline (most recent first; only accepted
 * same-key sessions of a baseline tier). *out receives {"decision", "reasons":
 * [...], "baseline": [ids], "metrics": [{"metric", "value", "centre", "mad",
 * "scale", "low", "high", "k", "deviation", "direction", "outside"}...],
 * "window", "k", "floor", "minimum_sessions"}; a figure that is not finite
 * (a bound beyond the range of a double) is null.
 */
enum bg_decision bg_decide(const struct bg_session_facts *s, const struct bg_session_facts *baseline,
			   size_t nbaseline, const struct bg_decide_opts *o, json_t **out);

#ifdef __cplusplus
}
#endif

#endif
