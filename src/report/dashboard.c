/*
 * dashboard.c - the static HTML dashboard and its SVG plots (see report.h).
 */
#include "benchgate/report.h"
#include "benchgate/format.h"
#include "benchgate/measure.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void bg_report_escape(struct bg_strbuf *out, const char *s)
{
	if (!s)
		s = "n/a";
	for (; *s; s++) {
		switch (*s) {
		case '&': bg_strbuf_adds(out, "&amp;"); break;
		case '<': bg_strbuf_adds(out, "&lt;"); break;
		case '>': bg_strbuf_adds(out, "&gt;"); break;
		case '"': bg_strbuf_adds(out, "&quot;"); break;
		case '\'': bg_strbuf_adds(out, "&#39;"); break;
		default: bg_strbuf_addch(out, *s);
		}
	}
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool num(const json_t *o, const char *k, double *v)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return isfinite(*v);
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

void bg_report_svg_plot(struct bg_strbuf *out, const char *title, const char *unit, const json_t *sessions,
			const char *const *fields, const char *const *labels, int nfields,
			const json_t *envelope)
{
	size_t n = json_array_size(sessions), i;
	double lo = INFINITY, hi = -INFINITY, v, scale;
	bool duration = strcmp(unit, "ns") == 0;
	struct bg_unit axis;
	const char *u;
	json_t *s;

	json_array_foreach(sessions, i, s)
		for (int f = 0; f < nfields; f++)
			if (num(s, fields[f], &v)) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
	if (envelope && num(envelope, "low", &v))
		lo = fmin(lo, v);
	if (envelope && num(envelope, "high", &v))
		hi = fmax(hi, v);
	bg_strbuf_addf(out, "<svg class=\"plot\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W, H);
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "\" xmlns=\"http://www.w3.org/2000/svg\">\n<title>");
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "</title>\n");
	bg_strbuf_addf(out, "<text x=\"%d\" y=\"16\" class=\"ptitle\">", L);
	bg_report_escape(out, title);
	bg_strbuf_adds(out, "</text>\n");
	if (!isfinite(lo)) {
		bg_strbuf_addf(out, "<text x=\"%d\" y=\"%d\" class=\"empty\">n/a: nothing measured</text>\n</svg>\n",
			       L, H / 2);
		return;
	}
	/* the axis in the unit the largest value is written in (format.h) */
	axis = duration ? bg_format_duration_unit(fmax(fabs(lo), fabs(hi))) : bg_format_bytes_unit(fmax(fabs(lo), fabs(hi)));
	scale = 1.0 / axis.factor;
	u = axis.name;
	if (hi - lo < 1e-12 * fmax(1.0, fabs(hi))) {
		double pad = fabs(hi) * 0.05 + 1e-9;
		lo -= pad;
		hi += pad;
	} else {
		double pad = (hi - lo) * 0.08;
		lo -= pad;
		hi += pad;
	}
#define PX(idx) ((double)L + ((n > 1) ? (double)(idx) * (double)(W - L - R) / (double)(n - 1) : (double)(W - L - R) / 2.0))
#define PY(val) ((double)T + ((hi) - (val)) * (double)(H - T - B) / ((hi) - (lo)))
	/* axes and grid */
	for (int g = 0; g <= 4; g++) {
		double gv = lo + (hi - lo) * g / 4.0;
		bg_strbuf_addf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
				    "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.4g</text>\n",
			       L, W - R, PY(gv), PY(gv), L - 6, PY(gv) + 4, gv * scale);
	}
	bg_strbuf_addf(out, "<text x=\"12\" y=\"%d\" class=\"tick\" transform=\"rotate(-90 12 %d)\">%s</text>\n",
		       H / 2, H / 2, u);
	bg_strbuf_addf(out, "<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">session (oldest to newest, %zu)</text>\n",
		       (L + W - R) / 2, H - 6, n);
	if (envelope && num(envelope, "low", &v)) {
		double elo = v, ehi, ec;
		if (num(envelope, "high", &ehi)) {
			bg_strbuf_addf(out, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" class=\"band\"><title>envelope ",
				       L, PY(ehi), W - L - R, PY(elo) - PY(ehi));
			figure(out, duration, json_object_get(envelope, "low"));
			bg_strbuf_adds(out, " .. ");
			figure(out, duration, json_object_get(envelope, "high"));
			bg_strbuf_adds(out, "</title></rect>\n");
		}
		if (num(envelope, "centre", &ec))
			bg_strbuf_addf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"centre\"/>\n",
				       L, W - R, PY(ec), PY(ec));
	}
	for (int f = nfields - 1; f >= 0; f--) {
		bool pen = false;
		bg_strbuf_addf(out, "<path class=\"series\" stroke=\"%s\" d=\"", series_colours[f % 3]);
		json_array_foreach(sessions, i, s) {
			if (num(s, fields[f], &v)) {
				bg_strbuf_addf(out, "%c%.1f %.1f ", pen ? 'L' : 'M', PX(i), PY(v));
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
			if (num(s, fields[f], &v)) {
				bg_strbuf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s ",
					       PX(i), PY(v), series_colours[f % 3], labels[f]);
				figure(out, duration, json_object_get(s, fields[f]));
				bg_strbuf_adds(out, "</title></circle>\n");
			}
	json_array_foreach(sessions, i, s) {
		if (!num(s, fields[0], &v))
			continue;
		bg_strbuf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" class=\"marker\"><title>session %lld: ",
			       PX(i), PY(v), decision_colour(str(s, "decision")),
			       (long long)json_integer_value(json_object_get(s, "id")));
		bg_strbuf_addf(out, "%s ", labels[0]);
		figure(out, duration, json_object_get(s, fields[0]));
		bg_strbuf_adds(out, ", ");
		bg_report_escape(out, str(s, "decision") ? str(s, "decision") : "no decision");
		bg_strbuf_adds(out, "</title></circle>\n");
	}
	/* legend */
	for (int f = 0; f < nfields; f++)
		bg_strbuf_addf(out, "<text x=\"%d\" y=\"16\" class=\"legend\" fill=\"%s\">%s</text>\n",
			       W - R - 70 * (nfields - f), series_colours[f % 3], labels[f]);
	bg_strbuf_adds(out, "</svg>\n");
#undef PX
#undef PY
}

static const char css[] =
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1f2328}\n"
	"h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}\n"
	"table{border-collapse:collapse;width:100%;margin:.5rem 0;font-size:.9rem}\n"
	"th,td{border:1px solid #d0d7de;padding:.25rem .45rem;text-align:left;vertical-align:top}\n"
	"th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	".state{white-space:nowrap;font-weight:600}.measured{color:#1a7f37}.partial,.blocked{color:#bf8700}\n"
	".refuted{color:#cf222e}.pending,.unsupported,.superseded{color:#57606a}\n"
	".key{border:1px solid #d0d7de;border-radius:6px;padding:.6rem;margin:1rem 0;break-inside:avoid}\n"
	".plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:.5rem}\n"
	"svg.plot{width:100%;height:auto;background:#fff}\n"
	".grid{stroke:#eaeef2}.tick{font-size:11px;fill:#57606a}.ptitle{font-size:13px;font-weight:600}\n"
	".legend{font-size:12px}.band{fill:#1a7f37;fill-opacity:.10}.centre{stroke:#1a7f37;stroke-dasharray:4 3}\n"
	".series{fill:none;stroke-width:1.8}.empty{font-size:13px;fill:#57606a}\n"
	".muted{color:#57606a;font-size:.85rem}code{font-size:.85rem}\n"
	"@media print{body{max-width:none;font-size:11px}.key{page-break-inside:avoid}a{color:inherit}}\n";

static void cell_text(struct bg_strbuf *out, const char *s)
{
	bg_strbuf_adds(out, "<td>");
	bg_report_escape(out, s && *s ? s : "n/a");
	bg_strbuf_adds(out, "</td>");
}

/* A table cell holding a duration (nanoseconds) or a size (bytes). */
static void cell_figure(struct bg_strbuf *out, bool duration, const json_t *o, const char *k)
{
	bg_strbuf_adds(out, "<td class=\"n\">");
	figure(out, duration, json_object_get(o, k));
	bg_strbuf_adds(out, "</td>");
}

int bg_report_dashboard(const json_t *model, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	static const char *const tfields[] = {"p50", "p95", "max"};
	static const char *const tlabels[] = {"p50", "p95", "max"};
	static const char *const mfields[] = {"tree_peak", "gpu_peak"};
	static const char *const mlabels[] = {"tree peak", "accelerator"};
	json_t *states = json_object_get(model, "states"), *plats = json_object_get(model, "platforms");
	json_t *gates = json_object_get(model, "gates"), *keys = json_object_get(model, "keys"), *x;
	size_t i;

	if (!json_is_object(model))
		return bg_error(ctx, BG_EUSAGE, "dashboard model must be an object");
	bg_strbuf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	bg_report_escape(out, str(model, "title"));
	bg_strbuf_addf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", css);
	bg_report_escape(out, str(model, "title"));
	bg_strbuf_adds(out, "</h1>\n<p class=\"muted\">Generated ");
	bg_report_escape(out, str(model, "generated_at"));
	bg_strbuf_adds(out, " by benchgate. Only parity-qualified sessions with complete provenance count; "
			    "a timing is compared only with sessions of exactly the same comparison key.</p>\n");

	bg_strbuf_adds(out, "<h2 id=\"coverage\">Coverage</h2>\n<table>\n<tr><th>Platform</th>");
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
	bg_strbuf_addf(out, "<th class=\"n\">%zu</th></tr>\n</table>\n", json_array_size(gates));

	bg_strbuf_adds(out, "<h2 id=\"gates\">Gates</h2>\n<table>\n<tr><th>Gate</th><th>State</th><th>Platform</th>"
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
	bg_strbuf_adds(out, "</table>\n");

	bg_strbuf_adds(out, "<h2 id=\"keys\">Sessions by comparison key</h2>\n");
	if (json_array_size(keys) == 0)
		bg_strbuf_adds(out, "<p class=\"muted\">No gate sessions with a comparison key are stored yet "
				    "(diagnostic <code>measure</code> sessions have none and are not shown here; "
				    "<code>benchgate sessions</code> lists them).</p>\n");
	json_array_foreach(keys, i, x) {
		json_t *ss = json_object_get(x, "sessions"), *s, *env = json_object_get(x, "envelope");
		bool reported = bg_measure_reported(x);
		size_t k;
		struct bg_strbuf t = BG_STRBUF_INIT;

		bg_strbuf_adds(out, "<section class=\"key\">\n<h3><code>");
		bg_report_escape(out, str(x, "gate"));
		bg_strbuf_adds(out, "</code></h3>\n<p class=\"muted\">key <code>");
		bg_report_escape(out, str(x, "id"));
		bg_strbuf_adds(out, "</code> on ");
		bg_report_escape(out, str(x, "computer"));
		if (reported)
			bg_strbuf_adds(out, "; timed by the program itself (its own samples, not process wall time)");
		bg_strbuf_adds(out, "</p>\n<div class=\"plots\">\n");
		bg_strbuf_adds(&t, reported ? "Reported time: p50 with p95 and maximum" : "Wall time: p50 with p95 and maximum");
		bg_report_svg_plot(out, t.buf, "ns", ss, tfields, tlabels, 3, json_is_object(env) ? env : NULL);
		bg_report_svg_plot(out, "Memory: process-tree and accelerator peaks", "B", ss, mfields, mlabels, 2, NULL);
		bg_strbuf_release(&t);
		bg_strbuf_adds(out, "</div>\n<table>\n<tr><th>Session</th><th>Started</th><th>Tier</th><th>p50</th>"
				    "<th>p95</th><th>Max</th><th>Tree peak</th><th>Decision</th><th>Curation</th></tr>\n");
		json_array_foreach(ss, k, s) {
			bg_strbuf_addf(out, "<tr><td class=\"n\">%lld</td>", (long long)json_integer_value(json_object_get(s, "id")));
			cell_text(out, str(s, "started"));
			cell_text(out, str(s, "tier"));
			cell_figure(out, true, s, "p50");
			cell_figure(out, true, s, "p95");
			cell_figure(out, true, s, "max");
			cell_figure(out, false, s, "tree_peak");
			bg_strbuf_addf(out, "<td style=\"color:%s\">", decision_colour(str(s, "decision")));
			bg_report_escape(out, str(s, "decision"));
			bg_strbuf_adds(out, "</td>");
			cell_text(out, str(s, "curation"));
			bg_strbuf_adds(out, "</tr>\n");
		}
		bg_strbuf_adds(out, "</table>\n</section>\n");
	}
	bg_strbuf_adds(out, "</body>\n</html>\n");
	return BG_OK;
}
