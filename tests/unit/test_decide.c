/*
 * test_decide.c - envelopes and decisions with hand-computed values, and the
 * comparison key resolution table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "benchgate/decide.h"

static struct bg_session_facts facts(long long id, double p50)
{
	struct bg_session_facts f;

	f.id = id;
	for (int m = 0; m < BG_NMETRICS; m++)
		f.metric[m] = NAN;
	f.metric[BG_METRIC_P50] = p50;
	f.block_reasons = NULL;
	return f;
}

static enum bg_decision decide(double value, const double *base, size_t n, json_t **out)
{
	struct bg_session_facts s = facts(100, value), b[32];
	struct bg_decide_opts o;

	bg_decide_opts_init(&o);
	for (size_t i = 0; i < n; i++)
		b[i] = facts((long long)i + 1, base[i]);
	return bg_decide(&s, b, n, &o, out);
}

static double metric_field(json_t *d, const char *field)
{
	return json_number_value(json_object_get(json_array_get(json_object_get(d, "metrics"), 0), field));
}

static void test_identical_sessions(void **state)
{
	const double base[] = {1.0, 1.0, 1.0, 1.0, 1.0};
	json_t *d;

	(void)state;
	/* MAD 0: the 1 % floor gives scale 0.01, band 0.96 .. 1.04 */
	assert_int_equal(decide(1.03, base, 5, &d), BG_DECISION_PASS);
	assert_float_equal(metric_field(d, "centre"), 1.0, 1e-12);
	assert_float_equal(metric_field(d, "scale"), 0.01, 1e-12);
	assert_float_equal(metric_field(d, "low"), 0.96, 1e-12);
	assert_float_equal(metric_field(d, "high"), 1.04, 1e-12);
	json_decref(d);
	/* the bound itself is inside (docs/decisions.md's example), one ulp past it not */
	assert_int_equal(decide(1.04, base, 5, &d), BG_DECISION_PASS);
	json_decref(d);
	assert_int_equal(decide(nextafter(1.04, 2.0), base, 5, &d), BG_DECISION_INVESTIGATE);
	json_decref(d);
	assert_int_equal(decide(1.05, base, 5, &d), BG_DECISION_INVESTIGATE);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(d, "metrics"), 0), "direction")),
			    "slower-or-larger");
	json_decref(d);
}

static void test_one_outlier(void **state)
{
	/* sorted 0.9 1.0 1.0 1.1 5.0: median 1.0; |dev| 0 0 0.1 0.1 4.0: MAD 0.1;
	 * scale 0.14826; band 1.0 +- 0.59304 */
	const double base[] = {1.0, 1.1, 0.9, 1.0, 5.0};
	json_t *d;

	(void)state;
	assert_int_equal(decide(1.5, base, 5, &d), BG_DECISION_PASS);
	assert_float_equal(metric_field(d, "mad"), 0.1, 1e-12);
	assert_float_equal(metric_field(d, "scale"), 0.14826, 1e-12);
	assert_float_equal(metric_field(d, "high"), 1.59304, 1e-12);
	assert_float_equal(metric_field(d, "deviation"), 0.5 / 0.14826, 1e-9);
	json_decref(d);
	assert_int_equal(decide(1.6, base, 5, &d), BG_DECISION_INVESTIGATE);
	json_decref(d);
}

static void test_improvement_is_investigated(void **state)
{
	const double base[] = {1.0, 1.1, 0.9, 1.0, 5.0};
	json_t *d;

	(void)state;
	assert_int_equal(decide(0.3, base, 5, &d), BG_DECISION_INVESTIGATE);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(d, "metrics"), 0), "direction")),
			    "faster-or-smaller");
	/* the reason in the units compare's table uses, not bare seconds */
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "wall_p50 300.00 ms is outside 406.96 ms .. 1.593 s (-4.72 scales from the centre)");
	json_decref(d);
}

/* A bytes metric's reason is written in bytes' units. */
static void test_reason_bytes(void **state)
{
	struct bg_session_facts s = facts(100, NAN), b[5];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	s.metric[BG_METRIC_TREE_PEAK] = 3.0 * 1024 * 1024;
	for (size_t i = 0; i < 5; i++) {
		b[i] = facts((long long)i + 1, NAN);
		b[i].metric[BG_METRIC_TREE_PEAK] = 1024.0 * 1024;
	}
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_INVESTIGATE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "tree_peak_bytes 3.000 MiB is outside 983.04 KiB .. 1.040 MiB (200.00 scales from the centre)");
	json_decref(d);
}

/* A baseline of zeros has no scale: any other value is outside, and the
 * reason says why in words (no "inf scales"); the deviation is null. */
static void test_zero_baseline(void **state)
{
	const double base[] = {0, 0, 0, 0, 0}, mostly[] = {0, 0, 5, 0, 0};
	const char *why;
	json_t *d;

	(void)state;
	assert_int_equal(decide(0, base, 5, &d), BG_DECISION_PASS);
	json_decref(d);
	assert_int_equal(decide(0.5, base, 5, &d), BG_DECISION_INVESTIGATE);
	why = json_string_value(json_array_get(json_object_get(d, "reasons"), 0));
	assert_string_equal(why, "wall_p50 500.00 ms is outside 0 ns .. 0 ns (the baseline's median is 0 ns and "
				 "its MAD 0: no scale to count in)");
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(d, "metrics"), 0), "deviation")));
	json_decref(d);
	/* most of it 0, one value not: no scale either, never "every value is 0" */
	assert_int_equal(decide(3, mostly, 5, &d), BG_DECISION_INVESTIGATE);
	why = json_string_value(json_array_get(json_object_get(d, "reasons"), 0));
	assert_string_equal(why, "wall_p50 3.000 s is outside 0 ns .. 0 ns (the baseline's median is 0 ns and "
				 "its MAD 0: no scale to count in)");
	json_decref(d);
}

static void test_fewer_than_five(void **state)
{
	const double base[] = {1.0, 1.0, 1.0, 1.0};
	json_t *d;

	(void)state;
	assert_int_equal(decide(100.0, base, 4, &d), BG_DECISION_NO_BASELINE);
	assert_int_equal(json_array_size(json_object_get(d, "metrics")), 0);
	assert_int_equal(json_array_size(json_object_get(d, "baseline")), 4);
	json_decref(d);
	assert_int_equal(decide(100.0, base, 0, &d), BG_DECISION_NO_BASELINE);
	json_decref(d);
}

/* Under a minimum of 0, an empty baseline, or one with none of this
 * session's metrics, judges nothing: no-baseline, never pass. */
static void test_nothing_judged_is_no_baseline(void **state)
{
	struct bg_session_facts s = facts(9, 1.0), b[2];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	o.min_sessions = 0;
	assert_int_equal(bg_decide(&s, NULL, 0, &o, &d), BG_DECISION_NO_BASELINE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "0 accepted sessions of this key; nothing to compare with (report only)");
	json_decref(d);
	b[0] = facts(1, NAN);
	b[1] = facts(2, NAN);
	assert_int_equal(bg_decide(&s, b, 2, &o, &d), BG_DECISION_NO_BASELINE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "no metric of this session has a value in its baseline of 2 sessions (report only)");
	json_decref(d);
	/* one comparable session is enough under a minimum of 0 */
	b[0] = facts(1, 1.0);
	assert_int_equal(bg_decide(&s, b, 2, &o, &d), BG_DECISION_PASS);
	json_decref(d);
}

/* The minimum holds per metric: a peak that one baseline session measured
 * is reported, not judged (one value has no spread). */
static void test_too_few_values_per_metric(void **state)
{
	struct bg_session_facts s = facts(9, 1.0), b[5];
	struct bg_decide_opts o;
	json_t *d, *m;

	(void)state;
	bg_decide_opts_init(&o);
	for (int i = 0; i < 5; i++)
		b[i] = facts(i, 1.0);
	b[4].metric[BG_METRIC_GPU_PEAK] = 1e9;
	s.metric[BG_METRIC_GPU_PEAK] = 1.05e9; /* 5 scales of a 1% floor away */
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	m = json_array_get(json_object_get(d, "metrics"), 1);
	assert_string_equal(json_string_value(json_object_get(m, "metric")), "accelerator_peak_bytes");
	assert_string_equal(json_string_value(json_object_get(m, "direction")), "too-few-values");
	assert_int_equal(json_integer_value(json_object_get(m, "baseline_values")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "every judged metric is inside its envelope; too few baseline values to judge "
			    "accelerator_peak_bytes (1) yet");
	json_decref(d);
	/* no metric with enough values: no-baseline */
	for (int i = 0; i < 4; i++)
		b[i].metric[BG_METRIC_P50] = NAN;
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_NO_BASELINE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "no metric has 5 baseline values yet: wall_p50 (1), accelerator_peak_bytes (1) (report only)");
	json_decref(d);
}

static void test_block_wins(void **state)
{
	const char *const why[] = {"parity failed on run 3", NULL};
	struct bg_session_facts s = facts(9, 1.0), b[5];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	for (int i = 0; i < 5; i++)
		b[i] = facts(i, 1.0);
	s.block_reasons = why;
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_BLOCK);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)), "parity failed on run 3");
	json_decref(d);
	/* a block with no baseline at all is still a block */
	assert_int_equal(bg_decide(&s, NULL, 0, &o, &d), BG_DECISION_BLOCK);
	json_decref(d);
}

static void test_window_uses_most_recent(void **state)
{
	double base[25];
	json_t *d;

	(void)state;
	for (int i = 0; i < 20; i++)
		base[i] = 2.0; /* most recent first */
	for (int i = 20; i < 25; i++)
		base[i] = 1.0; /* older, outside the window of 20 */
	assert_int_equal(decide(2.0, base, 25, &d), BG_DECISION_PASS);
	assert_float_equal(metric_field(d, "centre"), 2.0, 1e-12);
	assert_int_equal(json_array_size(json_object_get(d, "baseline")), 20);
	json_decref(d);
}

/* A metric the baseline has and the session lacks is not judged, but the
 * decision says so; one that no session has is left out. */
static void test_missing_metric_is_said(void **state)
{
	struct bg_session_facts s = facts(9, 1.0), b[5];
	struct bg_decide_opts o;
	json_t *d, *m;

	(void)state;
	bg_decide_opts_init(&o);
	for (int i = 0; i < 5; i++) {
		b[i] = facts(i, 1.0);
		b[i].metric[BG_METRIC_GPU_PEAK] = 1e9;
	}
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	assert_int_equal(json_array_size(json_object_get(d, "metrics")), 2);
	m = json_array_get(json_object_get(d, "metrics"), 1);
	assert_string_equal(json_string_value(json_object_get(m, "metric")), "accelerator_peak_bytes");
	assert_true(json_is_null(json_object_get(m, "value")));
	assert_string_equal(json_string_value(json_object_get(m, "direction")), "not-measured");
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "every measured metric is inside its envelope; not measured in this session, though the "
			    "baseline has accelerator_peak_bytes");
	json_decref(d);
	/* the session has it and the baseline does not: nothing to compare, nothing said */
	s.metric[BG_METRIC_GPU_PEAK] = 1e9;
	for (int i = 0; i < 5; i++)
		b[i].metric[BG_METRIC_GPU_PEAK] = NAN;
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	assert_int_equal(json_array_size(json_object_get(d, "metrics")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "every metric is inside its envelope");
	json_decref(d);
}

static void test_key_resolution(void **state)
{
	json_error_t err;
	json_t *fields = json_loads("[\"gate\", \"computer\", \"revision\", \"missing\"]", 0, &err);
	json_t *context = json_loads("{\"gate\": \"g\", \"computer\": \"c\", \"git_revision\": \"abc\", \"revision\": \"zzz\"}", 0, &err);
	json_t *map = json_loads("{\"revision\": [\"source_revision\", \"git_revision\"]}", 0, &err);
	json_t *bad = json_loads("{\"revision\": 3}", 0, &err);
	json_t *one = json_loads("{\"revision\": \"git_revision\"}", 0, &err);
	json_t *absent = json_loads("{\"revision\": \"source_revision\"}", 0, &err);
	json_t *mixed = json_loads("{\"revision\": [\"source_revision\", 7]}", 0, &err);
	json_t *key;
	char id[65];
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_key_compute(fields, context, map, &key, id, &ctx), BG_OK);
	assert_string_equal(id, "ed7ffc47715d6c6192afcb3693f3c79d99c7fa5de519e0e324b2741ed171ad0a");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(key, "fields"), 2), "source")),
			    "key_fields: git_revision");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(key, "fields"), 0), "source")),
			    "context: gate");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(key, "fields"), 3), "source")),
			    "unresolved");
	json_decref(key);
	/* without the map, the context field of the same name */
	assert_int_equal(bg_key_compute(fields, context, NULL, &key, id, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(key, "values"), "revision")), "zzz");
	json_decref(key);
	assert_int_equal(bg_key_compute(fields, context, bad, &key, id, &ctx), BG_ECHECK);
	assert_int_equal(bg_key_compute(context, context, NULL, &key, id, &ctx), BG_ECHECK);
	/* one context field named as a string is the list of one: the same key */
	assert_int_equal(bg_key_compute(fields, context, one, &key, id, &ctx), BG_OK);
	assert_string_equal(id, "ed7ffc47715d6c6192afcb3693f3c79d99c7fa5de519e0e324b2741ed171ad0a");
	json_decref(key);
	/* a mapped field absent from the context falls back to the field of the same name */
	assert_int_equal(bg_key_compute(fields, context, absent, &key, id, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_object_get(key, "values"), "revision")), "zzz");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(key, "fields"), 2), "source")),
			    "context: revision");
	json_decref(key);
	/* a mapped field the context holds as null is present: null is the value */
	{
		json_t *nulled = json_loads("{\"gate\": \"g\", \"source_revision\": null, \"git_revision\": \"abc\"}", 0, &err);

		assert_int_equal(bg_key_compute(fields, nulled, map, &key, id, &ctx), BG_OK);
		assert_true(json_is_null(json_object_get(json_object_get(key, "values"), "revision")));
		assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(key, "fields"), 2),
								      "source")),
				    "key_fields: source_revision");
		json_decref(key);
		json_decref(nulled);
	}
	/* a list with a non-name, or a map that is not an object, is refused */
	assert_int_equal(bg_key_compute(fields, context, mixed, &key, id, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "key_fields.revision must name a context field or a list of them"));
	assert_int_equal(bg_key_compute(fields, context, fields, &key, id, &ctx), BG_ECHECK);
	assert_non_null(strstr(bg_ctx_message(&ctx), "'key_fields' must be an object"));
	bg_ctx_release(&ctx);
	json_decref(fields);
	json_decref(context);
	json_decref(map);
	json_decref(bad);
	json_decref(one);
	json_decref(absent);
	json_decref(mixed);
}

/* A value on a bound is inside: the envelope is low <= value <= high (a
 * floor of 0.25 makes every figure here exact: centre 4, scale 1, 0 .. 8). */
static void test_bound_is_inside(void **state)
{
	const double base[] = {4.0, 4.0, 4.0, 4.0, 4.0};
	struct bg_session_facts s, b[5];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	o.floor_rel = 0.25;
	for (size_t i = 0; i < 5; i++)
		b[i] = facts((long long)i + 1, base[i]);
	s = facts(9, 8.0);
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	assert_float_equal(metric_field(d, "high"), 8.0, 0);
	json_decref(d);
	s = facts(9, 0.0);
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	assert_float_equal(metric_field(d, "low"), 0.0, 0);
	json_decref(d);
	s = facts(9, nextafter(8.0, 9.0));
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_INVESTIGATE);
	json_decref(d);
	s = facts(9, nextafter(0.0, -1.0));
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_INVESTIGATE);
	json_decref(d);
}

/* A value just beyond a bound that reads as the bound in the units shown
 * (1.0400000000000003 s against 1.04 s, "1.040 s" both): the reason gives
 * both in full, so that it does not contradict itself; one that reads
 * otherwise gets no such words. */
static void test_edge_said_exactly(void **state)
{
	const double base[] = {1.0, 1.0, 1.0, 1.0, 1.0};
	struct bg_session_facts s, b[5];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	for (size_t i = 0; i < 5; i++)
		b[i] = facts((long long)i + 1, base[i]);
	s = facts(9, 1.0400000000000003);
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_INVESTIGATE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "wall_p50 1.040 s is outside 960.00 ms .. 1.040 s (1.0400000000000003 s against the "
			    "bound 1.04 s) (4.00 scales from the centre)");
	json_decref(d);
	s = facts(9, 1.5);
	assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_INVESTIGATE);
	assert_null(strstr(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)), "against the bound"));
	json_decref(d);
}

/* The window holds at least the contract's minimum, and a no-baseline
 * count beside sessions of the other timing says which timing it counts. */
static void test_minimum_and_timing(void **state)
{
	const double base[] = {1.0, 1.0};
	struct bg_session_facts s, b[2];
	struct bg_decide_opts o;
	json_t *d;

	(void)state;
	bg_decide_opts_init(&o);
	bg_decide_opts_minimum(&o, 25);
	assert_int_equal(o.window, 25);
	bg_decide_opts_minimum(&o, 3);
	assert_int_equal(o.window, 25); /* never lowered */
	assert_int_equal(o.min_sessions, 3);
	bg_decide_opts_init(&o);
	o.timing = "reported";
	for (size_t i = 0; i < 2; i++)
		b[i] = facts((long long)i + 1, base[i]);
	s = facts(9, 1.0);
	assert_int_equal(bg_decide(&s, b, 2, &o, &d), BG_DECISION_NO_BASELINE);
	assert_string_equal(json_string_value(json_array_get(json_object_get(d, "reasons"), 0)),
			    "2 accepted sessions of this key timed as this one (reported; those timed otherwise "
			    "never count); no threshold applies before 5 (report only)");
	json_decref(d);
}

/* An envelope bound beyond the range of a double (absurd figures, a store
 * changed outside benchgate, or the API) is null in the document; the
 * metric is still listed (it was dropped: jansson holds no infinity). */
static void test_bound_beyond_double(void **state)
{
	const double base[] = {1e308, 1e308, 1e308, 1e308, 1e308};
	json_t *d, *m;

	(void)state;
	assert_int_equal(decide(1e308, base, 5, &d), BG_DECISION_PASS); /* k 4 x scale 1e306: finite */
	json_decref(d);
	{
		struct bg_session_facts s = facts(9, 1.5e308), b[5];
		struct bg_decide_opts o;

		bg_decide_opts_init(&o);
		o.floor_rel = 0.5; /* 1e308 + 4 x 5e307: beyond a double */
		for (size_t i = 0; i < 5; i++)
			b[i] = facts((long long)i + 1, base[i]);
		assert_int_equal(bg_decide(&s, b, 5, &o, &d), BG_DECISION_PASS);
	}
	assert_int_equal(json_array_size(json_object_get(d, "metrics")), 1);
	m = json_array_get(json_object_get(d, "metrics"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "direction")), "inside");
	assert_float_equal(json_number_value(json_object_get(m, "centre")), 1e308, 0);
	assert_float_equal(json_number_value(json_object_get(m, "low")), -1e308, 0);
	assert_true(json_is_null(json_object_get(m, "high")));
	json_decref(d);
	/* an infinite value against a baseline with a scale: outside, and the
	 * reason does not blame a MAD of 0 the baseline does not have */
	{
		const double spread[] = {1.0, 1.1, 1.2, 1.3, 1.4};
		const char *why;

		assert_int_equal(decide(INFINITY, spread, 5, &d), BG_DECISION_INVESTIGATE);
		why = json_string_value(json_array_get(json_object_get(d, "reasons"), 0));
		assert_non_null(why);
		assert_null(strstr(why, "MAD 0"));
		assert_non_null(strstr(why, "inf is outside"));
		json_decref(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical_sessions),
		cmocka_unit_test(test_nothing_judged_is_no_baseline),
		cmocka_unit_test(test_too_few_values_per_metric),
		cmocka_unit_test(test_one_outlier),
		cmocka_unit_test(test_improvement_is_investigated),
		cmocka_unit_test(test_reason_bytes),
		cmocka_unit_test(test_zero_baseline),
		cmocka_unit_test(test_bound_is_inside),
		cmocka_unit_test(test_edge_said_exactly),
		cmocka_unit_test(test_minimum_and_timing),
		cmocka_unit_test(test_bound_beyond_double),
		cmocka_unit_test(test_fewer_than_five),
		cmocka_unit_test(test_block_wins),
		cmocka_unit_test(test_window_uses_most_recent),
		cmocka_unit_test(test_missing_metric_is_said),
		cmocka_unit_test(test_key_resolution),
	};
	return cmocka_run_group_tests_name("decide", tests, NULL, NULL);
}
