/*
 * test_report.c - the dashboard page: self-contained, escaped, plots present,
 * nulls shown as n/a, figures as history writes them, sessions that do not
 * count drawn apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "benchgate/format.h"
#include "benchgate/report.h"

static const char model_json[] =
	"{\"title\": \"Bench <b>&</b>\", \"generated_at\": \"2026-11-30T10:00:00Z\","
	" \"states\": [{\"state\": \"measured\", \"label\": \"Measured\", \"count\": 1},"
	"              {\"state\": \"pending\", \"label\": \"Pending\", \"count\": 1}],"
	" \"platforms\": [{\"platform\": \"CPU\", \"counts\": {\"measured\": 1, \"pending\": 1}, \"total\": 2}],"
	" \"gates\": [{\"id\": \"g.1\", \"state\": \"measured\", \"label\": \"Measured\", \"platform\": \"CPU\","
	"              \"computer\": \"box\", \"next\": null},"
	"             {\"id\": \"g.2\", \"state\": \"pending\", \"label\": \"Pending\", \"platform\": \"CPU\","
	"              \"computer\": \"box\", \"next\": \"run it\"}],"
	" \"keys\": [{\"id\": \"abc\", \"gates\": [\"g.1\"], \"computers\": [\"box\"], \"timings\": [\"process\"], \"total\": 500,"
	"            \"envelope\": {\"centre\": 10000000, \"low\": 9000000, \"high\": 11000000},"
	"            \"sessions\": ["
	"   {\"id\": 1, \"started\": \"t1\", \"tier\": \"scheduled-profile\", \"p50\": 10000000, \"p95\": 12000000, \"max\": 13000000, \"tree_peak\": 1048576, \"gpu_peak\": null, \"decision\": \"no-baseline\", \"curation\": null},"
	"   {\"id\": 2, \"started\": \"t2\", \"tier\": \"scheduled-profile\", \"p50\": null, \"p95\": null, \"max\": null, \"tree_peak\": null, \"gpu_peak\": null, \"decision\": \"block\", \"curation\": \"rejected\"},"
	"   {\"id\": 3, \"started\": \"2026-11-30T10:00:05.123456Z\", \"tier\": \"release-signoff\", \"p50\": 10100000, \"p95\": 11100000, \"max\": 20000000, \"tree_peak\": 2097152, \"gpu_peak\": null, \"decision\": \"pass\", \"curation\": \"accepted\"},"
	"   {\"id\": 4, \"started\": \"t4\", \"tier\": \"scheduled-profile\", \"p50\": 250000, \"p95\": 812400, \"max\": 999, \"tree_peak\": 1000, \"gpu_peak\": null, \"decision\": \"investigate\", \"curation\": \"pending\"}]},"
	"   {\"id\": \"def\", \"gates\": [\"g.2\"], \"computers\": [\"box\"], \"timings\": [], \"envelope\": null, \"sessions\": []}]}";

/* The page of the model in text json (which must render) into out. */
static void render(const char *text, struct bg_strbuf *out)
{
	json_error_t err;
	json_t *model = json_loads(text, 0, &err);
	struct bg_ctx ctx;

	assert_non_null(model);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_report_dashboard(model, out, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	json_decref(model);
}

static void test_page(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;

	(void)state;
	render(model_json, &out);
	assert_non_null(strstr(out.buf, "<!DOCTYPE html>"));
	assert_non_null(strstr(out.buf, "<title>Bench &lt;b&gt;&amp;&lt;/b&gt;</title>"));
	assert_null(strstr(out.buf, "<b>"));
	assert_null(strstr(out.buf, "<script"));
	assert_null(strstr(out.buf, "https://"));
	assert_null(strstr(out.buf, "src="));
	assert_non_null(strstr(out.buf, "<svg class=\"plot\""));
	assert_non_null(strstr(out.buf, "class=\"band\""));        /* the envelope band */
	assert_non_null(strstr(out.buf, "color:#cf222e")); /* the blocked session's decision cell */
	/* a start time to the second, the whole of it in the title; other text as it is */
	assert_non_null(strstr(out.buf, "<td class=\"t\" title=\"2026-11-30T10:00:05.123456Z\">2026-11-30 10:00:05</td>"));
	assert_non_null(strstr(out.buf, "<td>t1</td>"));
	/* a decision or tier cell has room for "investigate" as one word */
	assert_non_null(strstr(out.buf, "td.w{min-width:11ch}"));
	assert_non_null(strstr(out.buf, "<td class=\"w\" style=\"color:#cf222e\">"));
	assert_non_null(strstr(out.buf, "<td class=\"w\">release-signoff</td>"));
	assert_non_null(strstr(out.buf, "fill=\"#1a7f37\""));      /* a pass marker */
	/* a plot with nothing to draw is left out: the key without sessions has none */
	assert_null(strstr(out.buf, "n/a: nothing measured"));
	assert_null(strstr(strstr(out.buf, "<code>g.2</code></h3>"), "<svg"));
	/* the model holds the most recent sessions of a key; the page says how many there are */
	assert_non_null(strstr(out.buf, "The most recent 4 of its 500 sessions are shown; older sessions: "
					"<code>benchgate history --key abc</code>"));
	assert_non_null(strstr(out.buf, "<td class=\"n\">n/a</td>"));
	assert_non_null(strstr(out.buf, "M")); /* a path was drawn */
	/* figures as history writes them (format.h), not "0.250 ms" and "0.0 MiB" */
	assert_non_null(strstr(out.buf, "<td class=\"n\">10.00 ms</td><td class=\"n\">12.00 ms</td>"));
	assert_non_null(strstr(out.buf, "<td class=\"n\">1.000 MiB</td>"));
	assert_non_null(strstr(out.buf, "<td class=\"n\">250.0 us</td><td class=\"n\">812.4 us</td>"
				      "<td class=\"n\">999 ns</td><td class=\"n\">1000 B</td>"));
	assert_non_null(strstr(out.buf, "<title>envelope 9.00 ms .. 11.00 ms</title>"));
	bg_strbuf_release(&out);
}

static void test_gap_in_series(void **state)
{
	json_error_t err;
	json_t *ss = json_loads("[{\"id\": 1, \"p50\": 1.0}, {\"id\": 2, \"p50\": null}, {\"id\": 3, \"p50\": 2.0}]", 0, &err);
	const char *const f[] = {"p50"};
	struct bg_strbuf out = BG_STRBUF_INIT;
	const char *d, *end;
	int moves = 0;

	(void)state;
	bg_report_svg_plot(&out, "t", "ns", ss, f, f, 1, NULL);
	d = strstr(out.buf, "d=\"");
	assert_non_null(d);
	end = strchr(d + 3, '"');
	/* two separate moves, no line across the gap */
	for (const char *p = d + 3; p < end; p++)
		moves += *p == 'M';
	assert_int_equal(moves, 2);
	assert_null(memchr(d, 'L', (size_t)(end - d)));
	bg_strbuf_release(&out);
	json_decref(ss);
}

/*
 * A session that does not count (blocked, say) is drawn hollow, off the
 * line, and does not stretch the axis: far above it, it is a triangle at
 * the top edge whose title says why it does not count.
 */
static void test_not_counting(void **state)
{
	json_error_t err;
	json_t *ss = json_loads("[{\"id\": 1, \"p50\": 1000000, \"decision\": \"pass\"},"
				" {\"id\": 2, \"p50\": 5000000000, \"decision\": \"block\", \"counts\": false,"
				"  \"why_not\": \"blocked\"},"
				" {\"id\": 3, \"p50\": 1100000, \"decision\": \"pass\", \"counts\": true}]", 0, &err);
	const char *const f[] = {"p50"};
	struct bg_strbuf out = BG_STRBUF_INIT;
	const char *d, *end;
	int points = 0;

	(void)state;
	assert_non_null(ss);
	bg_report_svg_plot(&out, "t", "ns", ss, f, f, 1, NULL);
	d = strstr(out.buf, "class=\"series\"");
	assert_non_null(d);
	d = strstr(d, "d=\"");
	end = strchr(d + 3, '"');
	for (const char *p = d + 3; p < end; p++)
		points += *p == 'M' || *p == 'L';
	assert_int_equal(points, 2); /* sessions 1 and 3 */
	assert_non_null(strstr(out.buf, ">ms</text>")); /* not stretched to seconds */
	assert_non_null(strstr(out.buf, "class=\"marker hollow\"><title>session 2: p50 5.000 s, block; "
					"does not count: blocked (above the axis)</title></path>"));
	assert_null(strstr(strstr(out.buf, "hollow") + 1, "hollow")); /* one hollow marker only */
	bg_strbuf_release(&out);
	json_decref(ss);
}

/*
 * A decision's notes (where the machine ran otherwise than the baseline):
 * counted above the plots, each under its session's row (escaped, spanning
 * the other columns), a ring round the session's marker with the notes in
 * its title; a key without notes has none of it.
 */
static void test_notes(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;
	const char *row, *ring;

	(void)state;
	render("{\"title\": \"t\", \"generated_at\": \"now\", \"states\": [], \"platforms\": [], \"gates\": [],"
	       " \"keys\": [{\"id\": \"k\", \"gates\": [\"g\"], \"computers\": [\"box\"], \"timings\": [\"process\"],"
	       "  \"envelope\": null, \"sessions\": ["
	       "   {\"id\": 1, \"p50\": 1000000, \"decision\": \"pass\", \"notes\": []},"
	       "   {\"id\": 2, \"p50\": 1100000, \"decision\": \"investigate\", \"counts\": false,"
	       "    \"why_not\": \"pending review\", \"notes\": [\"power_source battery here, ac in 5 of the 5\","
	       "    \"gpu 0 <b>hot</b> & slow\", 7]},"
	       "   {\"id\": 3, \"p50\": 1000000, \"decision\": \"pass\", \"notes\": null}]},"
	       "  {\"id\": \"q\", \"gates\": [\"g2\"], \"computers\": [\"box\"], \"timings\": [\"process\"],"
	       "   \"envelope\": null, \"sessions\": [{\"id\": 4, \"p50\": 1000000, \"decision\": \"pass\","
	       "   \"notes\": []}]}]}",
	       &out);
	assert_non_null(strstr(out.buf, "<p class=\"muted\">1 of these sessions ran otherwise than their baseline"));
	row = strstr(out.buf, "<tr class=\"notes out\"><td></td><td colspan=\"10\">note: power_source battery "
			      "here, ac in 5 of the 5<br>note: gpu 0 &lt;b&gt;hot&lt;/b&gt; &amp; slow</td></tr>");
	assert_non_null(row);
	/* right under session 2's row, and the only such row */
	assert_true(strstr(out.buf, "<td class=\"n\">2</td>") < row);
	assert_true(strstr(out.buf, "<td class=\"n\">3</td>") > row);
	assert_null(strstr(row + 1, "<tr class=\"notes"));
	ring = strstr(out.buf, "class=\"noted\"/>");
	assert_non_null(ring);
	assert_null(strstr(ring + 1, "class=\"noted\"/>")); /* session 2's marker only */
	assert_non_null(strstr(ring, "<title>session 2: p50 1.10 ms, investigate; does not count: pending review; "
				     "note: power_source battery here, ac in 5 of the 5; note: gpu 0 &lt;b&gt;hot&lt;/b&gt; "
				     "&amp; slow</title>"));
	/* key q: no paragraph, no notes row (the page holds one of each) */
	assert_null(strstr(strstr(out.buf, "ran otherwise than their baseline") + 1, "ran otherwise than their baseline"));
	bg_strbuf_release(&out);
}

/*
 * The page of one key "k" on "box" whose two sessions are of gates g1 and
 * g2 (the same gate or two), the first timed by process wall time, the
 * second by the program's own samples.
 */
static void render_timed_both_ways(const char *g1, const char *g2, struct bg_strbuf *out)
{
	struct bg_strbuf model = BG_STRBUF_INIT;
	bool two = strcmp(g1, g2) != 0;

	bg_strbuf_addf(&model,
		       "{\"title\": \"t\", \"generated_at\": \"now\", \"states\": [], \"platforms\": [], \"gates\": [],"
		       " \"keys\": [{\"id\": \"k\", \"gates\": [\"%s\"%s%s%s], \"computers\": [\"box\"],"
		       "  \"timings\": [\"process\", \"reported\"], \"envelope\": null, \"sessions\": ["
		       "   {\"id\": 1, \"gate\": \"%s\", \"computer\": \"box\", \"timing\": \"process\", \"p50\": 1000},"
		       "   {\"id\": 2, \"gate\": \"%s\", \"computer\": \"box\", \"timing\": \"reported\", \"p50\": 2000}]}]}",
		       g1, two ? ", \"" : "", two ? g2 : "", two ? "\"" : "", g1, g2);
	render(model.buf, out);
	bg_strbuf_release(&model);
}

/*
 * A key whose sessions are of two gates and both timings: heading, notes,
 * plot title and columns true of all of them.
 */
static void test_mixed_key(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;

	(void)state;
	render_timed_both_ways("a", "b", &out);
	assert_non_null(strstr(out.buf, "<h3>2 gates: <code>a</code>, <code>b</code></h3>"));
	assert_non_null(strstr(out.buf, "</code> on box</p>"));
	assert_non_null(strstr(out.buf, "do not tell apart the gates or how sessions are timed"));
	/* a baseline is of one timing: sessions timed otherwise are never compared */
	assert_non_null(strstr(out.buf, "a decision compares these sessions with one another, but only those "
					"timed the same way; the table says which is which."));
	assert_non_null(strstr(out.buf, "Time (mixed: wall and reported)"));
	assert_null(strstr(out.buf, "Wall time"));
	assert_non_null(strstr(out.buf, "<tr><th>Session</th><th>Gate</th><th>Timing</th><th>Started (UTC)</th>"));
	assert_non_null(strstr(out.buf, "<td class=\"n\">2</td><td><code>b</code></td><td>reported</td>"));
	bg_strbuf_release(&out);
}

/* A key of one gate and computer whose sessions are timed both ways: the
 * note never says they are compared with one another (it did). */
static void test_mixed_timing_only(void **state)
{
	struct bg_strbuf out = BG_STRBUF_INIT;

	(void)state;
	render_timed_both_ways("a", "a", &out);
	assert_non_null(strstr(out.buf, "<h3><code>a</code></h3>"));
	assert_non_null(strstr(out.buf, "This key's fields do not tell apart how sessions are timed (some by process "
					"wall time, others by the program's own samples): a decision compares a session "
					"only with those timed the same way; the table says which is which."));
	assert_null(strstr(out.buf, "compares these sessions with one another"));
	bg_strbuf_release(&out);
}

/* The units history, sessions and the dashboard share; a figure beyond a
 * million of the largest unit (an absurd stored value) in scientific
 * notation, not hundreds of digits. */
static void test_format_units(void **state)
{
	static const struct {
		double v;
		bool bytes;
		const char *want;
	} cases[] = {
		{812.4e3, false, "812.4 us"}, {50.314e6, false, "50.31 ms"}, {1.2041e9, false, "1.204 s"},
		{999.96e3, false, "1.00 ms"}, {-2500, false, "-2.5 us"}, {512, true, "512 B"},
		{1.1 * 1048576, true, "1.100 MiB"}, {999999e9, false, "999999.000 s"},
		{1e308, false, "1.000e+299 s"}, {-1e300, false, "-1.000e+291 s"},
		{1e30, true, "9.313e+20 GiB"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		json_t *v = json_real(cases[i].v);

		if (cases[i].bytes)
			bg_format_bytes(&sb, v);
		else
			bg_format_duration(&sb, v);
		assert_string_equal(sb.buf, cases[i].want);
		json_decref(v);
		bg_strbuf_release(&sb);
	}
}

/* A signal as a person reads it: number, name and description; only the
 * number for one the system does not name. */
static void test_format_signal(void **state)
{
	static const struct {
		int sig;
		const char *want;
	} cases[] = {
		{11, "11 (SIGSEGV: Segmentation fault)"}, {9, "9 (SIGKILL: Killed)"},
		{19, "19 (SIGSTOP: Stopped (signal))"}, {40, "40"}, {0, "0"}, {-1, "-1"}, {1000, "1000"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bg_strbuf sb = BG_STRBUF_INIT;

		bg_format_signal(&sb, cases[i].sig);
		assert_string_equal(sb.buf, cases[i].want);
		bg_strbuf_release(&sb);
	}
}

/* bg_format_line_problem: a reason or an id reads back as one line that shows. */
static void test_format_line_problem(void **state)
{
	static const struct {
		const char *text;
		const char *starts; /* NULL: accepted */
	} cases[] = {
		{"flaky runner", NULL},
		{"\xe2\x80\x8b ok", NULL},				/* U+200B beside a word */
		{"\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe2\x80\x8f", NULL},	/* Hebrew with RLM */
		{"", "it is blank"},
		{" \t", "it holds a control character"},
		{"\xe3\x80\x80 \xc2\xa0", "it is blank"},		/* U+3000, U+00A0 */
		{"\xe2\x80\x8b", "it is blank"},			/* zero-width space */
		{"\xef\xbb\xbf", "it is blank"},			/* byte order mark */
		{"\xe3\x85\xa4 \xe2\xa0\x80", "it is blank"},		/* U+3164, U+2800 */
		{"\xc2\xad\xe2\x81\xa0\xf3\xa0\x80\x81", "it is blank"},	/* U+00AD, U+2060, U+E0001 */
		{" \xcc\x81", "it is blank"},				/* U+0301 alone: marks nothing */
		{"\xef\xbf\xb9 \xe2\x83\x9d", "it is blank"},		/* U+FFF9, U+20DD */
		{"e\xcc\x81", NULL},					/* e and U+0301: an e acute */
		{"\xe2\x80\xae evil", "it holds a bidirectional control"},	/* U+202E */
		{"ok \xe2\x81\xa6x", "it holds a bidirectional control"},	/* U+2066 */
		{"a\nb", "it holds a control character"},
		{"a\xc2\x85", "it holds a control character or a line break"},
		{"\xff", "it is not valid UTF-8"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = bg_format_line_problem(cases[i].text);

		if (!cases[i].starts) {
			assert_null(got);
			continue;
		}
		assert_non_null(got);
		assert_memory_equal(got, cases[i].starts, strlen(cases[i].starts));
	}
}

/* bg_report_envelope_fn of the test: counts the keys asked for; key "k0"
 * gets an envelope, "stop" fails the page. */
static int count_envelope(const json_t *key, void *data, json_t **envelope, struct bg_ctx *ctx)
{
	const char *id = json_string_value(json_object_get(key, "id"));

	++*(size_t *)data;
	*envelope = NULL;
	if (strcmp(id, "stop") == 0)
		return bg_error(ctx, BG_EIO, "session 9: cannot be placed");
	if (strcmp(id, "k0") == 0)
		*envelope = json_pack("{s:i, s:i, s:i}", "centre", 10000000, "low", 9000000, "high", 11000000);
	return BG_OK;
}

/* A key source over nkeys made-up keys that counts what the page asks for
 * and checks that it asks in order. */
struct made_keys {
	size_t nkeys, asked, next;
	int fail_at; /* a key whose asking fails, or -1 */
	int noted;   /* a key whose latest session has notes, or -1 */
};

static int made_key(size_t i, void *data, json_t **entry, struct bg_ctx *ctx)
{
	struct made_keys *m = data;
	json_t *ss = json_array();
	char id[32];

	assert_int_equal(i, m->next);
	m->next = i + 1;
	m->asked++;
	if ((int)i == m->fail_at) {
		json_decref(ss);
		*entry = NULL;
		return bg_error(ctx, BG_EIO, "key %zu: cannot be read", i);
	}
	for (int k = 0; k < 3; k++)
		json_array_append_new(ss, json_pack("{s:I, s:s, s:s, s:i, s:s, s:s}", "id", (json_int_t)(i * 10 + (size_t)k),
						     "started", "t", "tier", "scheduled-profile", "p50", 1000 + k,
						     "decision", "pass", "curation", "auto-accepted"));
	if ((int)i == m->noted)
		json_object_set_new(json_array_get(ss, 2), "notes",
				    json_pack("[s, s]", "cpus_allowed 1 here, 2 in 5 of the 5", "gpu 0 <b>hot</b>"));
	snprintf(id, sizeof(id), "key%zu", i);
	*entry = json_pack("{s:s, s:[s], s:[s], s:[s], s:i, s:o, s:n}", "id", id, "gates", "g", "computers", "box",
			   "timings", "process", "total", 3, "sessions", ss, "envelope");
	return BG_OK;
}

/* Keys from the caller are asked for in order, only those the page draws
 * (in full, then 2,000 one line each); the rest are counted, never asked. */
static void test_keys_from_caller(void **state)
{
	static const char noted_row[] = "<tr class=\"notes\"><td></td><td colspan=\"7\">note: cpus_allowed 1 here, "
					"2 in 5 of the 5<br>note: gpu 0 &lt;b&gt;hot&lt;/b&gt;</td></tr>\n";
	json_t *model = json_pack("{s:s, s:s, s:[], s:[], s:[]}", "title", "t", "generated_at", "now", "states",
				  "platforms", "gates");
	struct made_keys m = {50000, 0, 0, -1, -1};
	struct bg_report_keys keys = {m.nkeys, made_key, &m, NULL, NULL};
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	size_t full = 0;
	char want[128];
	const char *p;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_report_dashboard_keys(model, &keys, &out, &ctx), BG_OK);
	for (p = out.buf; (p = strstr(p, "<section class=\"key\">")); p++)
		full++;
	assert_true(full > 1 && full + 2000 < m.nkeys);
	assert_int_equal(m.asked, full + 2000);
	snprintf(want, sizeof(want), "<p class=\"muted\">%zu more keys, the least recently measured, are not listed",
		 m.nkeys - full - 2000);
	assert_non_null(strstr(out.buf, want));
	snprintf(want, sizeof(want), "<code>key%zu</code>", full + 1999);
	assert_non_null(strstr(out.buf, want)); /* the last one listed */
	snprintf(want, sizeof(want), "<code>key%zu</code>", full + 2000);
	assert_null(strstr(out.buf, want));
	assert_null(strstr(out.buf, "<tr class=\"notes"));
	/* a key listed in one line whose latest session has notes: they follow its line */
	m.noted = (int)full + 5;
	m.asked = m.next = 0;
	bg_strbuf_reset(&out);
	assert_int_equal(bg_report_dashboard_keys(model, &keys, &out, &ctx), BG_OK);
	snprintf(want, sizeof(want), "<code>key%zu</code>", full + 5);
	p = strstr(out.buf, want);
	assert_non_null(p);
	p = strstr(p, "</tr>\n");
	assert_non_null(p);
	/* right after its line, before the next key's */
	assert_ptr_equal(strstr(p, noted_row), p + 6);
	assert_true(strncmp(p + 6 + strlen(noted_row), "<tr><td><code>key", 17) == 0);
	assert_null(strstr(p + 7, "<tr class=\"notes"));
	m.noted = -1;
	/* no keys: said so, nothing asked */
	keys.n = 0;
	m.asked = m.next = 0;
	bg_strbuf_reset(&out);
	assert_int_equal(bg_report_dashboard_keys(model, &keys, &out, &ctx), BG_OK);
	assert_int_equal(m.asked, 0);
	assert_non_null(strstr(out.buf, "No gate sessions with a comparison key are stored yet"));
	/* a key that cannot be read stops the page with its message */
	keys.n = 10;
	m.fail_at = 3;
	m.asked = m.next = 0;
	bg_strbuf_reset(&out);
	assert_int_equal(bg_report_dashboard_keys(model, &keys, &out, &ctx), BG_EIO);
	assert_int_equal(m.asked, 4);
	assert_string_equal(bg_ctx_message(&ctx), "key 3: cannot be read");
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
	json_decref(model);
}

/* The envelopes of a model without them are asked for the keys the page
 * draws in full alone, not for those listed one line each or counted. */
static void test_envelope_asked_for_full_keys(void **state)
{
	json_t *model = json_pack("{s:s, s:s, s:[], s:[], s:[], s:[]}", "title", "t", "generated_at", "now", "states",
				  "platforms", "gates", "keys");
	struct bg_strbuf out = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	size_t asked = 0, full = 0, nkeys = 3000;
	const char *p;

	(void)state;
	for (size_t k = 0; k < nkeys; k++) {
		json_t *ss = json_array();
		char id[32];

		for (int i = 0; i < 12; i++)
			json_array_append_new(ss, json_pack("{s:I, s:s, s:s, s:i, s:i, s:i, s:s, s:s}", "id",
							     (json_int_t)(k * 100 + (size_t)i), "started", "t",
							     "tier", "scheduled-profile", "p50", 10000000 + i, "p95",
							     12000000, "max", 13000000, "decision", "pass", "curation",
							     "auto-accepted"));
		snprintf(id, sizeof(id), "k%zu", k);
		json_array_append_new(json_object_get(model, "keys"),
				      json_pack("{s:s, s:[s], s:[s], s:[s], s:i, s:o}", "id", id, "gates", "g", "computers",
						"box", "timings", "process", "total", 12, "sessions", ss));
	}
	bg_ctx_init(&ctx);
	assert_int_equal(bg_report_dashboard_with(model, count_envelope, &asked, &out, &ctx), BG_OK);
	for (p = out.buf; (p = strstr(p, "<section class=\"key\">")); p++)
		full++;
	assert_true(full > 1 && full < nkeys); /* the page's budget drew some in full */
	assert_int_equal(asked, full);
	assert_non_null(strstr(out.buf, "<title>envelope 9.00 ms .. 11.00 ms</title>")); /* k0's */
	assert_non_null(strstr(out.buf, "More keys, one line each"));
	/* a failure of the caller's stops the page */
	json_object_set_new(json_array_get(json_object_get(model, "keys"), 1), "id", json_string("stop"));
	bg_strbuf_reset(&out);
	asked = 0;
	assert_int_equal(bg_report_dashboard_with(model, count_envelope, &asked, &out, &ctx), BG_EIO);
	assert_int_equal(asked, 2);
	assert_string_equal(bg_ctx_message(&ctx), "session 9: cannot be placed");
	bg_strbuf_release(&out);
	bg_ctx_release(&ctx);
	json_decref(model);
}

/* The grid is drawn at round figures of the axis's unit, from a multiple of
 * the step below the values to one above, and a time or a size never gets
 * an axis below 0. */
static void test_axis_ticks(void **state)
{
	json_error_t err;
	json_t *ms = json_loads("[{\"id\": 1, \"p50\": 30000000}, {\"id\": 2, \"p50\": 33000000}]", 0, &err);
	json_t *one = json_loads("[{\"id\": 1, \"p50\": 1153433}]", 0, &err);
	json_t *wide = json_loads("[{\"id\": 1, \"p50\": 1153433}, {\"id\": 2, \"p50\": 2147483648}]", 0, &err);
	json_t *zero = json_loads("[{\"id\": 1, \"p50\": 0}, {\"id\": 2, \"p50\": 0}]", 0, &err);
	json_t *neg = json_loads("[{\"id\": 1, \"p50\": -1e300}, {\"id\": 2, \"p50\": 1153433}]", 0, &err);
	const char *const f[] = {"p50"};
	struct bg_strbuf out = BG_STRBUF_INIT;

	(void)state;
	assert_non_null(ms);
	/* 30 and 33 ms: a grid of whole milliseconds, 29 to 34 */
	bg_report_svg_plot(&out, "t", "ns", ms, f, f, 1, NULL);
	for (int t = 29; t <= 34; t++) {
		char want[64];
		snprintf(want, sizeof(want), "class=\"tick\" text-anchor=\"end\">%d</text>", t);
		assert_non_null(strstr(out.buf, want));
	}
	assert_null(strstr(out.buf, "text-anchor=\"end\">28</text>"));
	assert_null(strstr(out.buf, "text-anchor=\"end\">35</text>"));
	assert_non_null(strstr(out.buf, ">ms</text>"));
	/* one value of 1.1 MiB: 1.00 to 1.20 in steps of 0.05 */
	bg_strbuf_reset(&out);
	bg_report_svg_plot(&out, "t", "B", one, f, f, 1, NULL);
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">1.00</text>"));
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">1.10</text>"));
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">1.20</text>"));
	assert_non_null(strstr(out.buf, ">MiB</text>"));
	/* 1.1 MiB and 2 GiB: from 0, never below it */
	bg_strbuf_reset(&out);
	bg_report_svg_plot(&out, "t", "B", wide, f, f, 1, NULL);
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">0</text>"));
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">2</text>"));
	assert_null(strstr(out.buf, "text-anchor=\"end\">-"));
	assert_non_null(strstr(out.buf, ">GiB</text>"));
	/* every figure 0: an axis of one unit (0 to 1 B), not five lines
	 * all labelled 0 */
	bg_strbuf_reset(&out);
	bg_report_svg_plot(&out, "t", "B", zero, f, f, 1, NULL);
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">0.00</text>"));
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">1.00</text>"));
	assert_non_null(strstr(out.buf, ">B</text>"));
	/* a negative figure (a store changed outside benchgate) lies below
	 * the axis, which is in the unit of what is on it: MiB for 1.1 MiB,
	 * not GiB ticks of 0.0000 chosen for -1e300 */
	bg_strbuf_reset(&out);
	bg_report_svg_plot(&out, "t", "B", neg, f, f, 1, NULL);
	assert_non_null(strstr(out.buf, ">MiB</text>"));
	assert_non_null(strstr(out.buf, "text-anchor=\"end\">1.0</text>"));
	assert_null(strstr(out.buf, "0.0005"));
	bg_strbuf_release(&out);
	json_decref(ms);
	json_decref(one);
	json_decref(wide);
	json_decref(zero);
	json_decref(neg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_units),
		cmocka_unit_test(test_format_signal),
		cmocka_unit_test(test_format_line_problem),
		cmocka_unit_test(test_envelope_asked_for_full_keys),
		cmocka_unit_test(test_keys_from_caller),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_gap_in_series),
		cmocka_unit_test(test_axis_ticks),
		cmocka_unit_test(test_not_counting),
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_mixed_key),
		cmocka_unit_test(test_mixed_timing_only),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
