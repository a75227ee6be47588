/*
 * dashboard.c - the static HTML dashboard and its SVG plots (see report.h).
 */
#include "benchgate/report.h"
#include "benchgate/format.h"
#include "core/bytes.h"
#include "core/fmath.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void bg_report_escape(struct bg_strbuf *out, const char *s)
{
	size_t k;

	if (!s)
		s = "n/a";
	while (*s) {
		/* a control (a newline, an escape, a C1 or bidirectional one) as
		 * \xNN, as history and the other readers show it: a page shows
		 * what is stored, and nothing stored reorders or splits a cell */
		if ((k = bg_format_control_at(s)) > 0) {
			for (; k; k--)
				bg_strbuf_addf(out, "\\x%02x", (unsigned char)*s++);
			continue;
		}
		switch (*s) {
		case '&': bg_strbuf_adds(out, "&amp;"); break;
		case '<': bg_strbuf_adds(out, "&lt;"); break;
		case '>': bg_strbuf_adds(out, "&gt;"); break;
		case '"': bg_strbuf_adds(out, "&quot;"); break;
		case '\'': bg_strbuf_adds(out, "&#39;"); break;
		default:
			/* a character of several bytes whole: its later bytes start none */
			k = (unsigned char)*s < 0x80 ? 1 : bg_utf8_len((const unsigned char *)s);
			bg_strbuf_addn(out, s, k);
			s += k;
			continue;
		}
		s++;
	}
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * A value to draw: a finite number within +-1e300 (no time or size comes
 * near; beyond it, a store changed outside benchgate, the axis's span
 * would overflow to a NaN coordinate). Anything else is a gap.
 */
static bool num(const json_t *o, const char *k, double *v)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return isfinite(*v) && fabs(*v) <= 1e300;
}

static const char *decision_colour(const char *d)
{
	if (!d)
		return "#777";
	if (strcmp(d, "pass") == 0)
		return "#1a7f37";
	if (strcmp(d, "investigate") == 0)
		return "#bf8700";
	if (strcmp(d, "block") == 0)
		return "#cf222e";
	return "#57606a"; /* no-baseline */
}

/* A duration (nanoseconds) or a size (bytes) as history writes it. */
static void figure(struct bg_strbuf *out, bool duration, const json_t *v)
{
	if (duration)
		bg_format_duration(out, v);
	else
		bg_format_bytes(out, v);
}

static const char *const series_colours[] = {"#0969da", "#8250df", "#57606a"};

enum { W = 640, H = 220, L = 64, R = 16, T = 28, B = 36 };

/* A session counts toward its key's baseline unless the model says it does not. */
static bool counts(const json_t *s)
{
	return !json_is_false(json_object_get(s, "counts"));
}

/* The range of fields over the sessions that count (all: every session). */
static void range(const json_t *sessions, const char *const *fields, int nfields, bool all, double *lo,
		  double *hi)
{
	size_t i;
	json_t *s;
	double v;

	json_array_foreach(sessions, i, s)
		if (all || counts(s))
			for (int f = 0; f < nfields; f++)
				if (num(s, fields[f], &v)) {
					*lo = fmin(*lo, v);
					*hi = fmax(*hi, v);
				}
}

/* How many notes the session's decision has (its "notes": the lines where
 * the machine ran otherwise than the baseline's sessions). */
static size_t note_count(const json_t *s)
{
	const json_t *x;
	size_t i, n = 0;

	json_array_foreach(json_object_get(s, "notes"), i, x)
		n += json_is_string(x);
	return n;
}

/* Each of the session's notes after "; note: " (a plot point's title). */
static void title_notes(struct bg_strbuf *out, const json_t *s)
{
	const json_t *x;
	size_t i;

	json_array_foreach(json_object_get(s, "notes"), i, x) {
		if (!json_is_string(x))
			continue;
		bg_strbuf_adds(out, "; note: ");
		bg_report_escape(out, json_string_value(x));
	}
}

struct frame {
	double lo, hi; /* the axis, padded */
	size_t n;      /* sessions along x */
};

static double px(const struct frame *fr, size_t i)
{
	return (double)L + (fr->n > 1 ? (double)i * (double)(W - L - R) / (double)(fr->n - 1) : (double)(W - L - R) / 2.0);
}

static double py(const struct frame *fr, double v)
{
	return (double)T + (fr->hi - v) * (double)(H - T - B) / (fr->hi - fr->lo);
}

/*
 * One point of session s: filled when it counts, hollow when it does not;
 * a value off the axis (a session that does not count, as the axis spans
 * those that do, or a figure below 0, where a time or size axis stops) is
 * a triangle at the edge, pointing where it lies. The title names the session, the figure and, for one
 * that does not count, why. A session marker (the first series) whose
 * decision has notes is ringed, and its title holds them.
 */
static void point(struct bg_strbuf *out, const struct frame *fr, size_t i, const json_t *s, double v, bool duration,
		  const json_t *figure_v, const char *label, const char *colour, double r, bool marker)
{
	bool hollow = !counts(s);
	double x = px(fr, i), y;
	int off = v > fr->hi ? 1 : v < fr->lo ? -1 : 0;

	y = py(fr, off > 0 ? fr->hi : off < 0 ? fr->lo : v);
	if (marker && note_count(s))
		bg_strbuf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" class=\"noted\"/>", x,
			       off ? y + off * 0.9 * r : y, r + 3.5);
	if (off)
		bg_strbuf_addf(out, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"", x, y, x - r, y + off * 1.8 * r, x + r,
			       y + off * 1.8 * r);
	else
		bg_strbuf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"", x, y, r);
	if (hollow)
		bg_strbuf_addf(out, " fill=\"#fff\" stroke=\"%s\" class=\"%shollow\"><title>", colour, marker ? "marker " : "");
	else
		bg_strbuf_addf(out, " fill=\"%s\"%s><title>", colour, marker ? " class=\"marker\"" : "");
	if (marker)
		bg_strbuf_addf(out, "session %lld: ", (long long)json_integer_value(json_object_get(s, "id")));
	bg_strbuf_addf(out, "%s ", label);
	figure(out, duration, figure_v);
	if (marker) {
		bg_strbuf_adds(out, ", ");
		bg_report_escape(out, str(s, "decision") ? str(s, "decision") : "no decision");
	}
	if (hollow) {
		bg_strbuf_adds(out, "; does not count: ");
		bg_report_escape(out, str(s, "why_not") ? str(s, "why_not") : "n/a");
	}
	if (off)
		bg_strbuf_adds(out, off > 0 ? " (above the axis)" : " (below the axis)");
	if (marker)
		title_notes(out, s);
	bg_strbuf_adds(out, "</title>");
	bg_strbuf_adds(out, off ? "</path>\n" : "</circle>\n");
}

/* The grid's step for a span of about raw (> 0) a line: 1, 2, 2.5 or 5
 * times a power of ten, the smallest at least raw. */
static double nice_step(double raw)
{
	double p = 1, m;

	/* the power of ten at or below raw (axis units span 1e-9 to 1e6) */
	while (p * 10 <= raw && p < 1e300)
		p *= 10;
	while (p > raw && p > 1e-300)
		p /= 10;
	m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

/* The decimals that write every multiple of step exactly (0 to 9). */
static int step_decimals(double step)
{
	int d = 0;

	for (double x = step; d < 9 && fabs(x - bg_floor(x + 0.5)) > 1e-9 * fmax(1.0, fabs(x)); x *= 10)
		d++;
	return d;
}

void bg_report_svg_plot(struct bg_strbuf *out, const char *title, const char *unit, const json_t *sessions,
			const char *const *fields, const char *const *labels, int nfields,
			const json_t *envelope)
{
	struct frame fr = {INFINITY, -INFINITY, json_array_size(sessions)};
	size_t i;
	double v, scale;
	bool duration = strcmp(unit, "ns") == 0;
	struct bg_unit axis;
	json_t *s;

	/* the axis spans the sessions that count (and the envelope); only when
	 * none of them has a value, the others */
	range(sessions, fields, nfields, false, &fr.lo, &fr.hi);
	if (!isfinite(fr.lo))
		range(sessions, fields, nfields, true, &fr.lo, &fr.hi);
	/* (an envelope's low may be below 0 where the baseline is noisy: the
	 * axis of a time or a size stops at 0, and the band with it) */
	if (envelope && num(envelope, "low", &v))
		fr.lo = fmin(fr.lo, fmax(v, 0));
	if (envelope && num(envelope, "high", &v))
		fr.hi = fmax(fr.hi, v);
	bg_strbuf_addf(out, "<svg class=\"plot\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W, H);
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>");
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "</title>\n");
	bg_strbuf_addf(out, "<text x=\"%d\" y=\"16\" class=\"ptitle\">", L);
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "</text>\n");
	if (!isfinite(fr.lo)) {
		bg_strbuf_addf(out, "<text x=\"%d\" y=\"%d\" class=\"empty\">n/a: nothing measured</text>\n</svg>\n",
			       L, H / 2);
		return;
	}
	/* a time or a size: never an axis below 0; a negative figure (a store
	 * changed outside benchgate) lies below the axis */
	fr.lo = fmax(fr.lo, 0);
	fr.hi = fmax(fr.hi, 0);
	/* the axis in the unit the largest value on it is written in (format.h) */
	axis = duration ? bg_format_duration_unit(fr.hi) : bg_format_bytes_unit(fr.hi);
	scale = 1.0 / axis.factor;
	{
		double pad;

		/* one value (all 0: one unit above it, not lines all labelled 0) */
		if (fr.hi - fr.lo < 1e-12 * fmax(1.0, fabs(fr.hi)))
			pad = fr.hi > 0 ? fr.hi * 0.05 + 1e-9 : axis.factor;
		else
			pad = (fr.hi - fr.lo) * 0.08;
		fr.lo = fmax(fr.lo - pad, 0);
		fr.hi += pad;
	}
	/* axes and grid: round figures of the unit, from a multiple of the
	 * step at or below the lowest value to one at or above the highest */
	{
		double step = nice_step((fr.hi - fr.lo) * scale / 4);
		double k0 = bg_floor(fr.lo * scale / step), k1 = bg_ceil(fr.hi * scale / step);
		int decimals = step_decimals(step);

		fr.lo = k0 * step / scale;
		fr.hi = k1 * step / scale;
		/* a handful of lines: nice_step is at least a quarter of the span */
		for (int n = 0; n <= 16 && k0 + n <= k1; n++) {
			double k = k0 + n, gv = k * step / scale, label = k * step + 0.0;
			bg_strbuf_addf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
					    "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">",
				       L, W - R, py(&fr, gv), py(&fr, gv), L - 6, py(&fr, gv) + 4);
			/* an absurd figure (a store changed outside benchgate) as the
			 * tables write it, not hundreds of digits */
			if (fabs(label) >= 1e15)
				bg_strbuf_addf(out, "%.3e</text>\n", label);
			else
				bg_strbuf_addf(out, "%.*f</text>\n", decimals, label);
		}
	}
	bg_strbuf_addf(out, "<text x=\"12\" y=\"%d\" class=\"tick\" transform=\"rotate(-90 12 %d)\">%s</text>\n",
		       H / 2, H / 2, axis.name);
	bg_strbuf_addf(out, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">session (oldest to newest, %zu)</text>\n",
		       (L + W - R) / 2, H - 6, fr.n);
	if (envelope && num(envelope, "low", &v)) {
		double elo = fmax(v, fr.lo), ehi, ec;
		if (num(envelope, "high", &ehi)) {
			bg_strbuf_addf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" class=\"band\"><title>envelope ",
				       L, py(&fr, ehi), W - L - R, py(&fr, elo) - py(&fr, ehi));
			figure(out, duration, json_object_get(envelope, "low"));
			bg_strbuf_adds(out, " .. ");
			figure(out, duration, json_object_get(envelope, "high"));
			bg_strbuf_adds(out, "</title></rect>\n");
		}
		if (num(envelope, "centre", &ec))
			bg_strbuf_addf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"centre\"/>\n",
				       L, W - R, py(&fr, ec), py(&fr, ec));
	}
	/* the lines join the sessions that count; one without the value is a gap */
	for (int f = nfields - 1; f >= 0; f--) {
		bool pen = false;
		bg_strbuf_addf(out, "<path class=\"series\" stroke=\"%s\" d=\"", series_colours[f % 3]);
		json_array_foreach(sessions, i, s) {
			if (!counts(s))
				continue;
			if (num(s, fields[f], &v)) {
				/* (at the axis's edge, as its marker, when beyond it) */
				bg_strbuf_addf(out, "%c%.1f %.1f ", pen ? 'L' : 'M', px(&fr, i),
					       py(&fr, fmin(fmax(v, fr.lo), fr.hi)));
				pen = true;
			} else {
				pen = false;
			}
		}
		bg_strbuf_adds(out, "\"/>\n");
	}
	/* small dots for the other series, so a lone session still shows them */
	for (int f = 1; f < nfields; f++)
		json_array_foreach(sessions, i, s)
			if (num(s, fields[f], &v))
				point(out, &fr, i, s, v, duration, json_object_get(s, fields[f]), labels[f],
				      series_colours[f % 3], 2.5, false);
	json_array_foreach(sessions, i, s)
		if (num(s, fields[0], &v))
			point(out, &fr, i, s, v, duration, json_object_get(s, fields[0]), labels[0],
			      decision_colour(str(s, "decision")), 4, true);
	/* legend */
	for (int f = 0; f < nfields; f++)
		bg_strbuf_addf(out, "<text x=\"%d\" y=\"16\" class=\"legend\" fill=\"%s\">%s</text>\n",
			       W - R - 70 * (nfields - f), series_colours[f % 3], labels[f]);
	bg_strbuf_adds(out, "</svg>\n");
}

static const char css[] =
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1f2328}\n"
	"h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}\n"
	"table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:.9rem}\n"
	"th,td{border:1px solid #d0d7de;padding:.25rem .45rem;text-align:left;vertical-align:top}\n"
	/* a long id, label or start time breaks inside itself rather than widen the page */
	"td,h3,p{overflow-wrap:anywhere}\n"
	/* ... but a word of benchgate's own (a decision such as "investigate", a
	 * tier such as "scheduled-profile") breaks at most at its hyphen */
	"td.w{min-width:11ch}td.t{white-space:nowrap}\n"
	"th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	".state{white-space:nowrap;font-weight:600}.measured{color:#1a7f37}.partial,.blocked{color:#bf8700}\n"
	".refuted{color:#cf222e}.pending,.unsupported,.superseded{color:#57606a}\n"
	".key{border:1px solid #d0d7de;border-radius:6px;padding:.6rem;margin:1rem 0;break-inside:avoid}\n"
	".plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:.5rem}\n"
	/* a table wider than a narrow window scrolls inside its box; the page does not widen */
	".tw{overflow-x:auto}\n"
	"svg.plot{width:100%;height:auto;background:#fff}\n"
	".grid{stroke:#eaeef2}.tick{font-size:11px;fill:#57606a}.ptitle{font-size:13px;font-weight:600}\n"
	".legend{font-size:12px}.band{fill:#1a7f37;fill-opacity:.10}.centre{stroke:#1a7f37;stroke-dasharray:4 3}\n"
	".series{fill:none;stroke-width:1.8}.empty{font-size:13px;fill:#57606a}.hollow{stroke-width:1.6}\n"
	".noted{fill:none;stroke:#bf8700;stroke-width:1.4}tr.notes td{font-size:.8rem;border-top:0}\n"
	"tr.out td{color:#57606a}\n"
	".muted{color:#57606a;font-size:.85rem}code{font-size:.85rem}\n"
	"@media print{body{max-width:none;font-size:11px}.key{page-break-inside:avoid}a{color:inherit}.tw{overflow:visible}}\n";

/* A table cell holding s (escaped; "n/a" for none), of class cls or none. */
static void cell_class_text(struct bg_strbuf *out, const char *cls, const char *s)
{
	if (cls)
		bg_strbuf_addf(out, "<td class=\"%s\">", cls);
	else
		bg_strbuf_adds(out, "<td>");
	bg_report_escape(out, s && *s ? s : "n/a");
	bg_strbuf_adds(out, "</td>");
}

static void cell_text(struct bg_strbuf *out, const char *s)
{
	cell_class_text(out, NULL, s);
}

/* A start time: "2026-11-30T10:00:00.123456Z" shown to the second as
 * "2026-11-30 10:00:00" (UTC, as the column says), the whole of it in the
 * cell's title; any other text (a store changed outside benchgate) as it is. */
static void cell_time(struct bg_strbuf *out, const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;

	for (; s && shape[i]; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			break;
	if (shape[i]) {
		cell_text(out, s);
		return;
	}
	bg_strbuf_adds(out, "<td class=\"t\" title=\"");
	bg_report_escape(out, s);
	bg_strbuf_addf(out, "\">%.10s %.8s</td>", s, s + 11);
}

/* A table cell holding a duration (nanoseconds) or a size (bytes). */
/* The session's notes in a row under its own, one a line, spanning the
 * span columns after the session's id (a column of its own would squeeze
 * them into a narrow one, or widen the page). */
static void row_notes(struct bg_strbuf *out, const json_t *s, int span)
{
	const json_t *x;
	size_t i, n = 0;

	bg_strbuf_addf(out, "<tr class=\"notes%s\"><td></td><td colspan=\"%d\">", counts(s) ? "" : " out", span);
	json_array_foreach(json_object_get(s, "notes"), i, x) {
		if (!json_is_string(x))
			continue;
		bg_strbuf_adds(out, n++ ? "<br>note: " : "note: ");
		bg_report_escape(out, json_string_value(x));
	}
	bg_strbuf_adds(out, "</td></tr>\n");
}

static void cell_figure(struct bg_strbuf *out, bool duration, const json_t *o, const char *k)
{
	bg_strbuf_adds(out, "<td class=\"n\">");
	figure(out, duration, json_object_get(o, k));
	bg_strbuf_adds(out, "</td>");
}

static const char *const tfields[] = {"p50", "p95", "max"};
static const char *const tlabels[] = {"p50", "p95", "max"};
static const char *const mfields[] = {"tree_peak", "gpu_peak"};
static const char *const mlabels[] = {"tree peak", "accelerator"};

/*
 * The page's bound: keys are drawn in full (the model holds at most the
 * most recent sessions of each, its caller's choice) while the keys' part
 * of the page is under FULL_BYTES; each further key is one line, up to
 * MAX_LINES of them; the rest are counted.
 */
enum { FULL_BYTES = 4 << 20, MAX_LINES = 2000 };

/* Whether any session has a value for one of the fields. */
static bool has_values(const json_t *sessions, const char *const *fields, int nfields)
{
	size_t i;
	json_t *s;
	double v;

	json_array_foreach(sessions, i, s)
		for (int f = 0; f < nfields; f++)
			if (num(s, fields[f], &v))
				return true;
	return false;
}

/* How a key's sessions are timed: all by process wall time, all by the program's own samples, or both. */
enum timing { TIMING_PROCESS, TIMING_REPORTED, TIMING_MIXED };

static enum timing timing_of(const json_t *timings)
{
	size_t i, reported = 0;
	json_t *t;

	json_array_foreach(timings, i, t)
		reported += json_is_string(t) && strcmp(json_string_value(t), "reported") == 0;
	return reported == 0 ? TIMING_PROCESS : reported == json_array_size(timings) ? TIMING_REPORTED : TIMING_MIXED;
}

/* The first max texts of list, comma-separated, in code or not; "and N more" for the rest. */
static void list_texts(struct bg_strbuf *out, const json_t *list, size_t max, bool code)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v) {
		if (i == max) {
			bg_strbuf_addf(out, " and %zu more", json_array_size(list) - max);
			break;
		}
		bg_strbuf_adds(out, i ? ", " : "");
		bg_strbuf_adds(out, code ? "<code>" : "");
		bg_report_escape(out, json_string_value(v));
		bg_strbuf_adds(out, code ? "</code>" : "");
	}
}

/* A key in full: heading, notes, plots of its sessions that have values, its table. */
static void key_section(struct bg_strbuf *out, const json_t *x, const json_t *env)
{
	json_t *ss = json_object_get(x, "sessions"), *s;
	json_int_t total = json_integer_value(json_object_get(x, "total"));
	json_t *kgates = json_object_get(x, "gates"), *kcomputers = json_object_get(x, "computers");
	enum timing timing = timing_of(json_object_get(x, "timings"));
	size_t k, noted = 0;

	json_array_foreach(ss, k, s)
		noted += note_count(s) > 0;

	bg_strbuf_adds(out, "<section class=\"key\">\n<h3>");
	if (json_array_size(kgates) <= 1) {
		bg_strbuf_adds(out, "<code>");
		bg_report_escape(out, json_string_value(json_array_get(kgates, 0)));
		bg_strbuf_adds(out, "</code>");
	} else {
		bg_strbuf_addf(out, "%zu gates: ", json_array_size(kgates));
		list_texts(out, kgates, 6, true);
	}
	bg_strbuf_adds(out, "</h3>\n<p class=\"muted\">key <code>");
	bg_report_escape(out, str(x, "id"));
	bg_strbuf_adds(out, "</code> on ");
	if (json_array_size(kcomputers) <= 1) {
		bg_report_escape(out, json_string_value(json_array_get(kcomputers, 0)));
	} else {
		bg_strbuf_addf(out, "%zu computers: ", json_array_size(kcomputers));
		list_texts(out, kcomputers, 6, false);
	}
	if (timing == TIMING_REPORTED)
		bg_strbuf_adds(out, "; timed by the program itself (its own samples, not process wall time)");
	bg_strbuf_adds(out, "</p>\n");
	if (json_array_size(kgates) > 1 || json_array_size(kcomputers) > 1 || timing == TIMING_MIXED) {
		bg_strbuf_adds(out, "<p class=\"muted\">This key's fields do not tell apart");
		if (json_array_size(kgates) > 1)
			bg_strbuf_adds(out, " the gates");
		if (json_array_size(kcomputers) > 1)
			bg_strbuf_addf(out, "%s the computers", json_array_size(kgates) > 1 ? "," : "");
		if (timing == TIMING_MIXED)
			bg_strbuf_addf(out, "%s how sessions are timed (some by process wall time, others by "
					    "the program's own samples)",
				       json_array_size(kgates) > 1 || json_array_size(kcomputers) > 1 ? " or" : "");
		/* a baseline is of one timing (store.h): sessions timed otherwise are never compared */
		if (timing != TIMING_MIXED)
			bg_strbuf_adds(out, ": a decision compares these sessions with one another, and the table "
					    "says which is which.</p>\n");
		else if (json_array_size(kgates) > 1 || json_array_size(kcomputers) > 1)
			bg_strbuf_adds(out, ": a decision compares these sessions with one another, but only those "
					    "timed the same way; the table says which is which.</p>\n");
		else
			bg_strbuf_adds(out, ": a decision compares a session only with those timed the same way; "
					    "the table says which is which.</p>\n");
	}
	if (total > (json_int_t)json_array_size(ss)) {
		bg_strbuf_addf(out, "<p class=\"muted\">The most recent %zu of its %lld sessions are shown; "
				    "older sessions: <code>benchgate history --key ",
			       json_array_size(ss), (long long)total);
		bg_report_escape(out, str(x, "id"));
		bg_strbuf_adds(out, "</code></p>\n");
	}
	if (noted)
		bg_strbuf_addf(out, "<p class=\"muted\">%zu of these sessions ran otherwise than their baseline "
				    "(the machine's conditions their decisions noted: under their rows, and ringed in "
				    "the plots). The notes change no decision; they say where to look first.</p>\n",
			       noted);
	/* a plot with nothing to draw is left out */
	if (has_values(ss, tfields, 3) || has_values(ss, mfields, 2)) {
		bg_strbuf_adds(out, "<div class=\"plots\">\n");
		if (has_values(ss, tfields, 3))
			bg_report_svg_plot(out,
					   timing == TIMING_REPORTED ? "Reported time: p50 with p95 and maximum"
					   : timing == TIMING_MIXED  ? "Time (mixed: wall and reported): p50 with p95 and maximum"
								     : "Wall time: p50 with p95 and maximum",
					   "ns", ss, tfields, tlabels, 3, json_is_object(env) ? env : NULL);
		/* no accelerator peak in any session (a CPU key): no empty series,
		 * legend or title for one */
		if (has_values(ss, mfields + 1, 1))
			bg_report_svg_plot(out, "Memory: process-tree and accelerator peaks", "B", ss, mfields, mlabels,
					   2, NULL);
		else if (has_values(ss, mfields, 1))
			bg_report_svg_plot(out, "Memory: process-tree peak", "B", ss, mfields, mlabels, 1, NULL);
		bg_strbuf_adds(out, "</div>\n");
	}
	bg_strbuf_adds(out, "<div class=\"tw\"><table>\n<tr><th>Session</th>");
	if (json_array_size(kgates) > 1)
		bg_strbuf_adds(out, "<th>Gate</th>");
	if (json_array_size(kcomputers) > 1)
		bg_strbuf_adds(out, "<th>Computer</th>");
	if (timing == TIMING_MIXED)
		bg_strbuf_adds(out, "<th>Timing</th>");
	bg_strbuf_adds(out, "<th>Started (UTC)</th><th>Tier</th><th>p50</th>"
			    "<th>p95</th><th>Max</th><th>Tree peak</th><th>Parity</th><th>Decision</th>"
			    "<th>Curation</th><th>Counts</th></tr>\n");
	json_array_foreach(ss, k, s) {
		bg_strbuf_addf(out, "<tr%s><td class=\"n\">%lld</td>", counts(s) ? "" : " class=\"out\"",
			       (long long)json_integer_value(json_object_get(s, "id")));
		if (json_array_size(kgates) > 1) {
			bg_strbuf_adds(out, "<td><code>");
			bg_report_escape(out, str(s, "gate"));
			bg_strbuf_adds(out, "</code></td>");
		}
		if (json_array_size(kcomputers) > 1)
			cell_text(out, str(s, "computer"));
		if (timing == TIMING_MIXED)
			cell_text(out, str(s, "timing"));
		cell_time(out, str(s, "started"));
		cell_class_text(out, "w", str(s, "tier"));
		cell_figure(out, true, s, "p50");
		cell_figure(out, true, s, "p95");
		cell_figure(out, true, s, "max");
		cell_figure(out, false, s, "tree_peak");
		cell_text(out, str(s, "parity"));
		bg_strbuf_addf(out, "<td class=\"w\" style=\"color:%s\">", decision_colour(str(s, "decision")));
		bg_report_escape(out, str(s, "decision"));
		bg_strbuf_adds(out, "</td>");
		cell_text(out, str(s, "curation"));
		if (counts(s)) {
			bg_strbuf_adds(out, "<td>yes</td>");
		} else {
			bg_strbuf_adds(out, "<td>no: ");
			bg_report_escape(out, str(s, "why_not"));
			bg_strbuf_adds(out, "</td>");
		}
		bg_strbuf_adds(out, "</tr>\n");
		if (note_count(s))
			row_notes(out, s, 10 + (json_array_size(kgates) > 1) + (json_array_size(kcomputers) > 1) +
						  (timing == TIMING_MIXED));
	}
	bg_strbuf_adds(out, "</table></div>\n</section>\n");
}

/* A key in one line: its id, gates, computers, number of sessions, and its
 * latest session; that session's notes, when it has any, in a row under it. */
static void key_line(struct bg_strbuf *out, const json_t *x)
{
	const json_t *ss = json_object_get(x, "sessions");
	const json_t *last = json_array_get(ss, json_array_size(ss) - 1);

	bg_strbuf_adds(out, "<tr><td><code>");
	bg_report_escape(out, str(x, "id"));
	bg_strbuf_adds(out, "</code></td><td>");
	list_texts(out, json_object_get(x, "gates"), 3, true);
	bg_strbuf_adds(out, "</td><td>");
	list_texts(out, json_object_get(x, "computers"), 3, false);
	bg_strbuf_addf(out, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
		       (long long)json_integer_value(json_object_get(x, "total")),
		       (long long)json_integer_value(json_object_get(last, "id")));
	cell_figure(out, true, last, "p50");
	bg_strbuf_addf(out, "<td class=\"w\" style=\"color:%s\">", decision_colour(str(last, "decision")));
	bg_report_escape(out, str(last, "decision"));
	bg_strbuf_adds(out, counts(last) ? "</td><td>yes</td></tr>\n" : "</td><td>no: ");
	if (!counts(last)) {
		bg_report_escape(out, str(last, "why_not"));
		bg_strbuf_adds(out, "</td></tr>\n");
	}
	if (note_count(last))
		row_notes(out, last, 7);
}

/* The keys of the model, as a source: key i a new reference to its entry. */
static int model_key(size_t i, void *list, json_t **key, struct bg_ctx *ctx)
{
	(void)ctx;
	*key = json_incref(json_array_get(list, i));
	return BG_OK;
}

int bg_report_dashboard(const json_t *model, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	return bg_report_dashboard_with(model, NULL, NULL, out, ctx);
}

int bg_report_dashboard_with(const json_t *model, bg_report_envelope_fn envelope_of, void *data,
			     struct bg_strbuf *out, struct bg_ctx *ctx)
{
	json_t *list = json_object_get(model, "keys");
	struct bg_report_keys keys = {json_array_size(list), model_key, list, envelope_of, data};

	return bg_report_dashboard_keys(model, &keys, out, ctx);
}

int bg_report_dashboard_keys(const json_t *model, const struct bg_report_keys *keys, struct bg_strbuf *out,
			     struct bg_ctx *ctx)
{
	json_t *states = json_object_get(model, "states"), *plats = json_object_get(model, "platforms");
	json_t *gates = json_object_get(model, "gates"), *x;
	json_int_t window;
	size_t i, keys_start, listed = 0, unlisted = 0;

	if (!json_is_object(model))
		return bg_error(ctx, BG_EUSAGE, "dashboard model must be an object");
	bg_strbuf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			    "<meta name=\"generator\" content=\"benchgate\">\n"
			    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	bg_report_escape(out, str(model, "title"));
	bg_strbuf_addf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	bg_report_escape(out, str(model, "title"));
	bg_strbuf_adds(out, "</h1>\n<p class=\"muted\">Generated ");
	bg_report_escape(out, str(model, "generated_at"));
	bg_strbuf_adds(out, " by benchgate. A timing is compared only with sessions of exactly the same "
			    "comparison key; which of them count is said under <a href=\"#keys\">Sessions by "
			    "comparison key</a>.</p>\n");

	bg_strbuf_adds(out, "<h2 id=\"coverage\">Coverage</h2>\n<div class=\"tw\"><table>\n<tr><th>Platform</th>");
	json_array_foreach(states, i, x) {
		bg_strbuf_adds(out, "<th>");
		bg_report_escape(out, str(x, "label"));
		bg_strbuf_adds(out, "</th>");
	}
	bg_strbuf_adds(out, "<th>Total</th></tr>\n");
	json_array_foreach(plats, i, x) {
		size_t k;
		json_t *st;
		bg_strbuf_adds(out, "<tr>");
		cell_text(out, str(x, "platform"));
		json_array_foreach(states, k, st)
			bg_strbuf_addf(out, "<td class=\"n\">%lld</td>",
				       (long long)json_integer_value(json_object_get(json_object_get(x, "counts"),
										     str(st, "state"))));
		bg_strbuf_addf(out, "<td class=\"n\">%lld</td></tr>\n", (long long)json_integer_value(json_object_get(x, "total")));
	}
	bg_strbuf_adds(out, "<tr><th>All</th>");
	json_array_foreach(states, i, x)
		bg_strbuf_addf(out, "<th class=\"n\">%lld</th>", (long long)json_integer_value(json_object_get(x, "count")));
	bg_strbuf_addf(out, "<th class=\"n\">%zu</th></tr>\n</table></div>\n", json_array_size(gates));

	bg_strbuf_adds(out, "<h2 id=\"gates\">Gates</h2>\n<div class=\"tw\"><table>\n<tr><th>Gate</th><th>State</th><th>Platform</th>"
			    "<th>Computer</th><th>Next step</th></tr>\n");
	json_array_foreach(gates, i, x) {
		bg_strbuf_adds(out, "<tr><td><code>");
		bg_report_escape(out, str(x, "id"));
		bg_strbuf_adds(out, "</code></td><td class=\"state ");
		bg_report_escape(out, str(x, "state"));
		bg_strbuf_adds(out, "\">");
		bg_report_escape(out, str(x, "label"));
		bg_strbuf_adds(out, "</td>");
		cell_text(out, str(x, "platform"));
		cell_text(out, str(x, "computer"));
		cell_text(out, str(x, "next"));
		bg_strbuf_adds(out, "</tr>\n");
	}
	bg_strbuf_adds(out, "</table></div>\n");

	bg_strbuf_adds(out, "<h2 id=\"keys\">Sessions by comparison key</h2>\n");
	window = json_integer_value(json_object_get(model, "window"));
	bg_strbuf_addf(out, "<p class=\"rule\">A gate session's decision compares it only with sessions of exactly "
			    "the same comparison key: the most recent %lld of them that count toward the key's "
			    "baseline (or the comparison contract's minimum of accepted sessions when that is more; the registry's thresholds may give the gate or key another window). A session counts when its decision is not block, its status is ok, it is "
			    "accepted (automatically on pass or no-baseline of committed source, or by a person: an "
			    "investigate session, and one of uncommitted source, is pending review until accepted, "
			    "a rejected one never counts) and its tier is "
			    "scheduled-profile or release-signoff. Parity is no part of this rule: a runbook may "
			    "declare none (Parity &ldquo;not declared&rdquo;), and such sessions count. Promotion "
			    "additionally needs parity declared and passed. In the plots, filled markers joined by "
			    "the lines are sessions that count; hollow markers are sessions that do not, and a hollow "
			    "triangle at an edge is one whose value lies beyond the axis, which spans the sessions "
			    "that count.</p>\n",
		       window > 0 ? (long long)window : 20LL);
	keys_start = out->len;
	if (keys->n == 0)
		bg_strbuf_adds(out, "<p class=\"muted\">No gate sessions with a comparison key are stored yet "
				    "(diagnostic <code>measure</code> sessions have none and are not shown here; "
				    "<code>benchgate sessions</code> lists them).</p>\n");
	for (i = 0; i < keys->n; i++) {
		bool full = out->len - keys_start < FULL_BYTES;
		int rc;

		/* the rest counted, never asked for */
		if (!full && listed == MAX_LINES) {
			unlisted = keys->n - i;
			break;
		}
		if ((rc = keys->key(i, keys->key_data, &x, ctx)))
			return rc;
		/* in full while the keys' part of the page is under its budget, then one line each */
		if (full) {
			json_t *env = json_object_get(x, "envelope"), *asked = NULL;

			/* asked of the caller for the keys drawn in full alone */
			if (!env && keys->envelope && (rc = keys->envelope(x, keys->envelope_data, &asked, ctx))) {
				json_decref(x);
				return rc;
			}
			key_section(out, x, asked ? asked : env);
			json_decref(asked);
			json_decref(x);
			continue;
		}
		if (listed == 0)
			bg_strbuf_adds(out, "<h3 id=\"more-keys\">More keys, one line each</h3>\n<p class=\"muted\">"
					    "The keys above fill this page's budget for keys in full (4 MiB); these "
					    "keys, measured less recently, are listed one line each: "
					    "<code>benchgate history --key ID</code> shows every session of one.</p>\n"
					    "<div class=\"tw\"><table>\n<tr><th>Key</th><th>Gate</th><th>Computer</th><th>Sessions</th>"
					    "<th>Latest</th><th>p50</th><th>Decision</th><th>Counts</th></tr>\n");
		key_line(out, x);
		listed++;
		json_decref(x);
	}
	if (listed)
		bg_strbuf_adds(out, "</table></div>\n");
	if (unlisted)
		bg_strbuf_addf(out, "<p class=\"muted\">%zu more keys, the least recently measured, are not listed: "
				    "<code>benchgate history GATE</code> lists a gate's sessions with their keys.</p>\n",
			       unlisted);
	bg_strbuf_adds(out, "</body>\n</html>\n");
	return BG_OK;
}
