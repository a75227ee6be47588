/*
 * decide.c - comparison keys, envelopes and decisions (see decide.h).
 */
#include "benchgate/decide.h"
#include "benchgate/format.h"
#include "benchgate/json.h"
#include "benchgate/sha256.h"
#include "benchgate/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bg_default_key_fields[] = {
	"gate", "computer", "device", "runtime", "revision", "protocol_version", "cell",
	"cache_state", "timing_boundary", "measure", "inputs", NULL,
};

const char *const bg_metric_names[BG_NMETRICS] = {
	"wall_p50", "wall_p95", "wall_max", "tree_peak_bytes", "accelerator_peak_bytes",
};

void bg_decide_metric_text(struct bg_strbuf *out, const char *metric, double v)
{
	size_t n = strlen(metric);
	json_t *j;

	if (isinf(v)) {
		bg_strbuf_adds(out, v > 0 ? "inf" : "-inf");
	} else if (strncmp(metric, "wall_", 5) == 0) {
		j = json_real(v * 1e9);
		bg_format_duration(out, j);
		json_decref(j);
	} else if (n > 6 && strcmp(metric + n - 6, "_bytes") == 0) {
		j = json_real(v);
		bg_format_bytes(out, j);
		json_decref(j);
	} else {
		bg_py_float_repr(out, v);
	}
}

/* bg_decide_metric_text of metric m, for the reasons: in the units compare's table shows. */
static void metric_text(struct bg_strbuf *out, int m, double v)
{
	bg_decide_metric_text(out, bg_metric_names[m], v);
}

/*
 * When v and the bound it crossed read the same in the units shown (a
 * value just beyond the edge of a closed envelope), both in full, so that
 * the reason does not contradict itself: " (1.0400000000000003 s against
 * the bound 1.04 s)".
 */
static void exact_edge(struct bg_strbuf *out, int m, double v, double bound)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
	const char *unit = strncmp(bg_metric_names[m], "wall_", 5) == 0 ? " s" : " bytes";

	metric_text(&a, m, v);
	metric_text(&b, m, bound);
	if (isfinite(v) && isfinite(bound) && strcmp(a.buf, b.buf) == 0) {
		bg_strbuf_adds(out, " (");
		bg_py_float_repr(out, v);
		bg_strbuf_addf(out, "%s against the bound ", unit);
		bg_py_float_repr(out, bound);
		bg_strbuf_addf(out, "%s)", unit);
	}
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
}

const char *bg_decision_name(enum bg_decision d)
{
	switch (d) {
	case BG_DECISION_PASS: return "pass";
	case BG_DECISION_INVESTIGATE: return "investigate";
	case BG_DECISION_BLOCK: return "block";
	case BG_DECISION_NO_BASELINE: return "no-baseline";
	}
	return "unknown";
}

static int resolve_one(const json_t *context, const json_t *source, json_t **value, const char **from)
{
	if (json_is_string(source)) {
		json_t *v = json_object_get(context, json_string_value(source));
		if (v) {
			*value = v;
			*from = json_string_value(source);
		}
		return 0;
	}
	if (json_is_array(source)) {
		size_t i;
		json_t *s;
		json_array_foreach(source, i, s) {
			if (!json_is_string(s))
				return -1;
			if (!*value && json_object_get(context, json_string_value(s))) {
				*value = json_object_get(context, json_string_value(s));
				*from = json_string_value(s);
			}
		}
		return 0;
	}
	return -1;
}

int bg_key_compute(const json_t *fields, const json_t *context, const json_t *map, json_t **key,
		   char id[65], struct bg_ctx *ctx)
{
	json_t *list, *values;
	struct bg_strbuf canon = BG_STRBUF_INIT;
	size_t i;
	json_t *f;

	*key = NULL;
	if (!json_is_array(fields))
		return bg_error(ctx, BG_ECHECK, "comparison_key must be a list of field names");
	if (map && !json_is_object(map))
		return bg_error(ctx, BG_ECHECK, "benchgate.json: 'key_fields' must be an object");
	list = json_array();
	values = json_object();
	json_array_foreach(fields, i, f) {
		const char *name = json_string_value(f), *from = NULL;
		json_t *value = NULL, *src;
		char source[300];

		if (!name) {
			json_decref(list);
			json_decref(values);
			return bg_error(ctx, BG_ECHECK, "comparison_key[%zu] must be a field name", i);
		}
		src = map ? json_object_get(map, name) : NULL;
		if (src) {
			if (resolve_one(context, src, &value, &from)) {
				json_decref(list);
				json_decref(values);
				return bg_error(ctx, BG_ECHECK,
						"benchgate.json: key_fields.%s must name a context field or a list of them",
						name);
			}
			if (value)
				snprintf(source, sizeof(source), "key_fields: %s", from);
		}
		if (!value && (value = json_object_get(context, name)))
			snprintf(source, sizeof(source), "context: %s", name);
		if (!value)
			snprintf(source, sizeof(source), "unresolved");
		json_object_set(values, name, value ? value : json_null());
		json_array_append_new(list, json_pack("{s:s, s:O, s:s}", "field", name, "value",
						      value ? value : json_null(), "source", source));
	}
	{
		/* canonical JSON: sorted keys, compact separators, ASCII */
		char *text = json_dumps(values, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
		bg_strbuf_adds(&canon, text);
		free(text);
	}
	if (bg_sha256_hex(canon.buf, canon.len, id, ctx) != BG_OK) {
		json_decref(list);
		json_decref(values);
		bg_strbuf_release(&canon);
		return ctx->status;
	}
	*key = json_pack("{s:o, s:o, s:s, s:s}", "fields", list, "values", values, "id", id, "canonical",
			 canon.buf);
	bg_strbuf_release(&canon);
	return BG_OK;
}

void bg_envelope_compute(const double *values, size_t n, double k, double floor_rel,
			 struct bg_envelope *out)
{
	struct bg_stats st;

	/* the median and MAD of the engine's statistics (numpy's median) */
	bg_stats_compute(values, n, &st);
	out->n = n;
	out->centre = st.p50;
	out->mad = st.mad;
	out->scale = fmax(1.4826 * out->mad, floor_rel * fabs(out->centre));
	out->low = out->centre - k * out->scale;
	out->high = out->centre + k * out->scale;
}

void bg_decide_opts_init(struct bg_decide_opts *o)
{
	o->min_sessions = 5;
	o->window = 20;
	o->k = 4.0;
	o->floor_rel = 0.01;
	o->timing = NULL;
}

void bg_decide_opts_minimum(struct bg_decide_opts *o, size_t min_sessions)
{
	o->min_sessions = min_sessions;
	if (o->window < min_sessions)
		o->window = min_sessions;
}

/* A figure of the document: null when not measured (NaN) or beyond the range
 * of a double (an envelope bound of absurd values), which JSON cannot hold;
 * jansson's "f" would fail the whole entry and the metric would vanish. */
static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

enum bg_decision bg_decide(const struct bg_session_facts *s, const struct bg_session_facts *baseline,
			   size_t nbaseline, const struct bg_decide_opts *o, json_t **out)
{
	json_t *reasons = json_array(), *ids = json_array(), *metrics = json_array();
	struct bg_strbuf unmeasured = BG_STRBUF_INIT; /* names the baseline has and the session lacks */
	struct bg_strbuf few = BG_STRBUF_INIT;        /* names with fewer baseline values than the minimum */
	enum bg_decision d = BG_DECISION_PASS;
	size_t used = nbaseline < o->window ? nbaseline : o->window;

	for (size_t i = 0; i < used; i++)
		json_array_append_new(ids, json_integer(baseline[i].id));
	if (s->block_reasons && s->block_reasons[0]) {
		d = BG_DECISION_BLOCK;
		for (const char *const *r = s->block_reasons; *r; r++)
			json_array_append_new(reasons, json_string(*r));
	} else if (nbaseline < o->min_sessions) {
		char buf[200];
		d = BG_DECISION_NO_BASELINE;
		snprintf(buf, sizeof(buf),
			 "%zu accepted session%s of this key%s%s%s; no threshold applies before %zu (report only)",
			 nbaseline, nbaseline == 1 ? "" : "s", o->timing ? " timed as this one (" : "",
			 o->timing ? o->timing : "", o->timing ? "; those timed otherwise never count)" : "",
			 o->min_sessions);
		json_array_append_new(reasons, json_string(buf));
	} else {
		double *vals = bg_xmalloc((used + 1) * sizeof(*vals));
		size_t judged = 0;
		for (int m = 0; m < BG_NMETRICS; m++) {
			size_t n = 0;
			struct bg_envelope env;
			double v = s->metric[m], devn;
			const char *dir = "inside";
			bool outside;

			for (size_t i = 0; i < used; i++)
				if (!isnan(baseline[i].metric[m]))
					vals[n++] = baseline[i].metric[m];
			if (n == 0)
				continue;
			/* the minimum holds per metric too: a peak only a few baseline
			 * sessions measured has no envelope yet (one value has no spread) */
			if (n < o->min_sessions && !isnan(v)) {
				bg_strbuf_addf(&few, "%s%s (%zu)", few.len ? ", " : "", bg_metric_names[m], n);
				json_array_append_new(metrics,
						      json_pack("{s:s, s:o, s:s, s:b, s:I}", "metric", bg_metric_names[m],
								"value", num_or_null(v), "direction", "too-few-values",
								"outside", false, "baseline_values", (json_int_t)n));
				continue;
			}
			if (isnan(v)) {
				/* the baseline has it, this session does not: said, not judged */
				bg_strbuf_addf(&unmeasured, "%s%s", unmeasured.len ? ", " : "", bg_metric_names[m]);
				json_array_append_new(metrics,
						      json_pack("{s:s, s:n, s:s, s:b, s:I}", "metric", bg_metric_names[m],
								"value", "direction", "not-measured", "outside", false,
								"baseline_values", (json_int_t)n));
				continue;
			}
			judged++;
			bg_envelope_compute(vals, n, o->k, o->floor_rel, &env);
			devn = env.scale > 0 ? (v - env.centre) / env.scale : (v == env.centre ? 0 : INFINITY);
			outside = v < env.low || v > env.high;
			if (outside) {
				struct bg_strbuf why = BG_STRBUF_INIT;

				dir = v > env.high ? "slower-or-larger" : "faster-or-smaller";
				d = BG_DECISION_INVESTIGATE;
				/* in the units compare's table shows them in */
				bg_strbuf_addf(&why, "%s ", bg_metric_names[m]);
				metric_text(&why, m, v);
				bg_strbuf_adds(&why, " is outside ");
				metric_text(&why, m, env.low);
				bg_strbuf_adds(&why, " .. ");
				metric_text(&why, m, env.high);
				exact_edge(&why, m, v, v > env.high ? env.high : env.low);
				if (isfinite(devn)) {
					bg_strbuf_addf(&why, " (%.2f scales from the centre)", devn);
				} else if (env.scale > 0) { /* an infinite value (the API; run stores none) */
					bg_strbuf_adds(&why, " (beyond counting in scales of ");
					metric_text(&why, m, env.scale);
					bg_strbuf_addch(&why, ')');
				} else { /* MAD 0 and the floor 0 (a centre of 0): at least half
					  * the baseline is 0, not necessarily all of it */
					bg_strbuf_adds(&why, " (the baseline's median is ");
					metric_text(&why, m, env.centre);
					bg_strbuf_adds(&why, " and its MAD 0: no scale to count in)");
				}
				json_array_append_new(reasons, json_string(why.buf));
				bg_strbuf_release(&why);
			}
			json_array_append_new(metrics,
					      json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:o, s:s, s:b, s:I}",
							"metric", bg_metric_names[m], "value", num_or_null(v),
							"centre", num_or_null(env.centre), "mad", num_or_null(env.mad),
							"scale", num_or_null(env.scale), "low", num_or_null(env.low),
							"high", num_or_null(env.high), "k", o->k, "deviation",
							isfinite(devn) ? json_real(devn) : json_null(), "direction", dir,
							"outside", outside, "baseline_values", (json_int_t)n));
		}
		free(vals);
		/* nothing judged (an empty baseline under a minimum of 0, or one
		 * without this session's metrics): no pass without a comparison */
		if (d == BG_DECISION_PASS && judged == 0) {
			char buf[200];
			d = BG_DECISION_NO_BASELINE;
			if (used == 0)
				snprintf(buf, sizeof(buf), "0 accepted sessions of this key; nothing to compare with (report only)");
			else if (few.len)
				snprintf(buf, sizeof(buf), "no metric has %zu baseline values yet: %.120s (report only)",
					 o->min_sessions, few.buf);
			else
				snprintf(buf, sizeof(buf), "no metric of this session has a value in its baseline of %zu session%s "
					 "(report only)", used, used == 1 ? "" : "s");
			json_array_append_new(reasons, json_string(buf));
		} else if (d == BG_DECISION_PASS && few.len) {
			json_array_append_new(reasons, json_pack("s++++", "every judged metric is inside its envelope; too few "
								 "baseline values to judge ", few.buf, " yet",
								 unmeasured.len ? "; not measured in this session, though "
										  "the baseline has " : "",
								 unmeasured.len ? unmeasured.buf : ""));
		} else if (d == BG_DECISION_PASS && !unmeasured.len)
			json_array_append_new(reasons, json_string("every metric is inside its envelope"));
		else if (d == BG_DECISION_PASS)
			json_array_append_new(reasons, json_pack("s+", "every measured metric is inside its envelope; "
								       "not measured in this session, though the baseline has ",
								 unmeasured.buf));
	}
	bg_strbuf_release(&unmeasured);
	bg_strbuf_release(&few);
	*out = json_pack("{s:s, s:o, s:o, s:o, s:I, s:f, s:f, s:I}", "decision", bg_decision_name(d), "reasons",
			 reasons, "baseline", ids, "metrics", metrics, "window", (json_int_t)o->window, "k", o->k,
			 "floor", o->floor_rel, "minimum_sessions", (json_int_t)o->min_sessions);
	return d;
}
