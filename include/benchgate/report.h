/*
 * report.h - the static HTML dashboard: one self-contained page (inline CSS
 * and SVG, no script, no network) that reads well on a laptop and prints on
 * paper.
 *
 * The page is rendered from a model the caller assembles from the registry
 * and the store:
 *   {"title": str, "generated_at": str, "project": str,
 *    "window": n (the decision window, 20: how many counting sessions a decision compares with),
 *    "states": [{"state", "label", "count"}],
 *    "platforms": [{"platform", "counts": {state: n}, "total"}],
 *    "gates": [{"id", "state", "label", "platform", "computer", "next"}],
 *    "keys": [{"id", "total", "gates": [str], "computers": [str|null], "timings": ["process"|"reported"],
 *              "envelope": {"centre","low","high"}|null (absent: asked of the caller,
 *                          bg_report_dashboard_with),
 *              "sessions": [{"id", "gate", "computer", "timing", "started", "tier", "p50", "p95", "max",
 *                            "tree_peak", "gpu_peak", "decision", "curation",
 *                            "parity": "pass"|"fail"|"not declared"|"not checked",
 *                            "counts": bool, "why_not": str|null, "notes": [str]|null}]}]}
 * A key's gates, computers and timings are those of its sessions, each once:
 * a key whose fields leave one out holds several, and then its heading
 * lists them, the plot is titled for both timings and the table gains a
 * Gate, Computer or Timing column.
 * "total" is the key's number of sessions when "sessions" holds only the
 * most recent of them (the page says so, and names `history --key`). Keys
 * are drawn in full in model order while the keys' part of the page is
 * under 4 MiB, then one line each (up to 2,000), and the rest counted; a
 * plot with nothing to draw is left out.
 * "counts" says whether the session counts toward its key's baseline
 * (bg_store_not_in_baseline; absent: it does), "why_not" why not, in words.
 * Sessions that do not count are drawn hollow, off the lines, and the axis
 * spans those that do.
 * "notes" are the lines of the session's decision that say where the
 * machine ran otherwise than its baseline (a decision's "conditions"):
 * a key with any gains a paragraph counting them, the notes in a row
 * under each such session's, and rings round those sessions in the plots,
 * whose titles hold them.
 * Times are nanoseconds and memory bytes, written as benchgate/format.h
 * writes them (as history does); null is drawn as a gap and shown as
 * "n/a". The caller owns the model; the page is appended to out.
 */
#ifndef BENCHGATE_REPORT_H
#define BENCHGATE_REPORT_H

#include <jansson.h>

#include "benchgate/status.h"
#include "benchgate/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

int bg_report_dashboard(const json_t *model, struct bg_strbuf *out, struct bg_ctx *ctx);
/*
 * The envelope of a key the page draws in full whose model entry has no
 * "envelope" member: *envelope a new reference ({"centre","low","high"}),
 * or NULL for none. A status other than BG_OK (its message on ctx) stops
 * the page, which is then incomplete and not to be written.
 */
typedef int (*bg_report_envelope_fn)(const json_t *key, void *data, json_t **envelope, struct bg_ctx *ctx);
/* bg_report_dashboard asking envelope_of (with data) for the envelopes it
 * draws, so that a caller with many keys finds only those. */
int bg_report_dashboard_with(const json_t *model, bg_report_envelope_fn envelope_of, void *data,
			     struct bg_strbuf *out, struct bg_ctx *ctx);
/*
 * The page's keys from the caller rather than the model's "keys": n of
 * them in page order. key(i, key_data, &entry, ctx) gives key i as a model
 * entry (a new reference, released by the page), asked in order and only
 * for the keys the page draws, in full or one line each: those beyond are
 * counted from n, so a caller with many keys builds only the drawn ones.
 * envelope (or NULL) is asked as bg_report_dashboard_with asks it. A
 * status other than BG_OK from either stops the page.
 */
struct bg_report_keys {
	size_t n;
	int (*key)(size_t i, void *key_data, json_t **entry, struct bg_ctx *ctx);
	void *key_data;
	bg_report_envelope_fn envelope;
	void *envelope_data;
};
/* bg_report_dashboard with the keys from keys; model's "keys" is not read. */
int bg_report_dashboard_keys(const json_t *model, const struct bg_report_keys *keys, struct bg_strbuf *out,
			     struct bg_ctx *ctx);
/* HTML-escapes s (& < > " ') into out, with its controls as \xNN (bg_format_control_at); NULL is "n/a". */
void bg_report_escape(struct bg_strbuf *out, const char *s);
/*
 * One SVG line plot: series of (x index, y) with nulls as gaps, an optional
 * band [low, high], markers coloured by decision; sessions whose "counts"
 * is false hollow and off the lines (a triangle at the edge when beyond
 * the axis, which spans the sessions that count). unit is "ns" (durations)
 * or "B" (sizes): the axis is in the unit format.h writes the largest value
 * in, the figures in titles as format.h writes them. Appended to out.
 */
void bg_report_svg_plot(struct bg_strbuf *out, const char *title, const char *unit, const json_t *sessions,
			const char *const *fields, const char *const *labels, int nfields,
			const json_t *envelope);

#ifdef __cplusplus
}
#endif

#endif
