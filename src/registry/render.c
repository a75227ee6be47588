/*
 * render.c - the generated Markdown coverage document (the reference's
 * render_document) and the staleness comparison that validate applies.
 */
#include "benchgate/registry.h"
#include "benchgate/json.h"
#include "core/pyval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bg_state_order[7] = {
	"measured", "partial", "pending", "blocked", "refuted", "unsupported", "superseded",
};
static const char *const state_labels[7] = {
	"\xe2\x9c\x93 Measured", "\xe2\x97\x90 Partial", "\xe2\x97\x8b Pending", "! Blocked",
	"\xc3\x97 Refuted", "Not supported", "\xe2\x86\xba Superseded",
};

const char *bg_state_label(const char *state)
{
	for (int i = 0; i < 7; i++)
		if (strcmp(bg_state_order[i], state) == 0)
			return state_labels[i];
	return NULL;
}

bool bg_state_is_open(const char *state)
{
	return strcmp(state, "partial") == 0 || strcmp(state, "pending") == 0 ||
	       strcmp(state, "blocked") == 0;
}

/* Rendering stops at the first thing the reference could not render. */
struct render {
	struct bg_registry *reg;
	struct bg_strbuf *out;
	struct bg_strbuf row;
	int ncells;
	bool failed;
	struct bg_ctx *ctx;
};

static void fail_missing(struct render *r, const char *kind, const json_t *obj, const char *field)
{
	struct bg_strbuf id = BG_STRBUF_INIT;
	json_t *conf = json_object_get(obj, "configuration");

	if (r->failed)
		return;
	r->failed = true;
	bg_py_str(&id, json_object_get(obj, "id"));
	if (json_is_string(conf) &&
	    !json_object_get(json_object_get(r->reg->root, "configurations"), json_string_value(conf)))
		bg_error(r->ctx, BG_ECHECK,
			 "cannot render the coverage document: %s '%s' has no '%s' (its configuration '%s' does not exist)",
			 kind, id.buf, field, json_string_value(conf));
	else
		bg_error(r->ctx, BG_ECHECK, "cannot render the coverage document: %s '%s' has no '%s'",
			 kind, id.buf, field);
	bg_strbuf_release(&id);
}

static void fail_value(struct render *r, const char *kind, const json_t *obj, const char *field,
		       const char *what)
{
	struct bg_strbuf id = BG_STRBUF_INIT, v = BG_STRBUF_INIT;

	if (r->failed)
		return;
	r->failed = true;
	bg_py_str(&id, json_object_get(obj, "id"));
	bg_py_repr(&v, json_object_get(obj, field));
	bg_error(r->ctx, BG_ECHECK, "cannot render the coverage document: %s '%s' has %s %s %s",
		 kind, id.buf, field, v.buf, what);
	bg_strbuf_release(&id);
	bg_strbuf_release(&v);
}

static void row_begin(struct render *r)
{
	bg_strbuf_reset(&r->row);
	bg_strbuf_adds(&r->row, "| ");
	r->ncells = 0;
}

static void cell_text(struct render *r, const char *s, size_t len)
{
	if (r->ncells++)
		bg_strbuf_adds(&r->row, " | ");
	if (len == 0) {
		bg_strbuf_adds(&r->row, "n/a");
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '|')
			bg_strbuf_adds(&r->row, "\\|");
		else if (s[i] == '\n')
			bg_strbuf_addch(&r->row, ' ');
		else
			bg_strbuf_addch(&r->row, s[i]);
	}
}

static void cell_cstr(struct render *r, const char *s)
{
	cell_text(r, s, strlen(s));
}

static void cell_value(struct render *r, const json_t *v)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (!v || json_is_null(v)) {
		cell_cstr(r, "");
		return;
	}
	bg_py_str(&sb, v);
	cell_text(r, sb.buf, sb.len);
	bg_strbuf_release(&sb);
}

static void row_end(struct render *r)
{
	bg_strbuf_adds(&r->row, " |\n");
	bg_strbuf_addn(r->out, r->row.buf, r->row.len);
}

static void table_head(struct render *r, const char *const *headers)
{
	size_t n = 0;

	bg_strbuf_adds(r->out, "| ");
	for (; headers[n]; n++) {
		if (n)
			bg_strbuf_adds(r->out, " | ");
		bg_strbuf_adds(r->out, headers[n]);
	}
	bg_strbuf_adds(r->out, " |\n|");
	for (size_t i = 0; i < n; i++)
		bg_strbuf_adds(r->out, i ? "|---" : "---");
	bg_strbuf_adds(r->out, "|\n");
}

static void cell_shape(struct render *r, const json_t *rows, const json_t *cols)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (!rows || !cols || json_is_null(rows) || json_is_null(cols)) {
		cell_cstr(r, "n/a");
		return;
	}
	bg_py_str(&sb, rows);
	bg_strbuf_adds(&sb, " \xc3\x97 ");
	bg_py_str(&sb, cols);
	cell_text(r, sb.buf, sb.len);
	bg_strbuf_release(&sb);
}

void bg_registry_format_seconds(struct bg_strbuf *out, double s)
{
	if (s < 0.1)
		bg_strbuf_addf(out, "%.3f ms", s * 1000);
	else
		bg_strbuf_addf(out, "%.6f s", s);
}

void bg_registry_format_bytes(struct bg_strbuf *out, long long n)
{
	if (n == 0)
		bg_strbuf_adds(out, "0 B");
	else
		bg_strbuf_addf(out, "%.3f GiB", (double)n / (double)(1 << 30));
}

static void cell_seconds(struct render *r, const json_t *row, const char *field)
{
	const json_t *v = json_object_get(row, field);
	struct bg_strbuf sb = BG_STRBUF_INIT;
	double s;

	if (!v || json_is_null(v)) {
		cell_cstr(r, "n/a");
		return;
	}
	if (!bg_py_to_float(v, &s)) {
		fail_value(r, "measurement", row, field, "which is not a number");
		return;
	}
	bg_registry_format_seconds(&sb, s);
	cell_text(r, sb.buf, sb.len);
	bg_strbuf_release(&sb);
}

static void cell_bytes(struct render *r, const json_t *row, const char *field)
{
	const json_t *v = json_object_get(row, field);
	struct bg_strbuf sb = BG_STRBUF_INIT;
	long long n;

	if (!v || json_is_null(v)) {
		cell_cstr(r, "n/a");
		return;
	}
	if (!bg_py_to_int(v, &n)) {
		fail_value(r, "measurement", row, field, "which is not an integer byte count");
		return;
	}
	bg_registry_format_bytes(&sb, n);
	cell_text(r, sb.buf, sb.len);
	bg_strbuf_release(&sb);
}

static const char *parity_label(const json_t *v)
{
	struct bg_strbuf s = BG_STRBUF_INIT, lower = BG_STRBUF_INIT;
	const char *label = "Pass";

	if (!bg_py_truthy(v))
		return "Pending";
	bg_py_str(&s, v);
	bg_py_lower(&lower, s.buf);
	if (strstr(lower.buf, "not performed") || strstr(lower.buf, "incomplete"))
		label = "Qualified probes";
	else if (strstr(lower.buf, "failed") || strstr(lower.buf, "mismatch") || strstr(lower.buf, "violations"))
		label = "Failed";
	bg_strbuf_release(&s);
	bg_strbuf_release(&lower);
	return label;
}

/* Sorting by a tuple of fields, as Python's sorted(key=...) (stable). */
#define MAX_KEYS 5
struct sort_item {
	json_t *obj;
	json_t *keys[MAX_KEYS];
	size_t index;
};
static int g_nkeys;
static bool g_type_error;

static int cmp_items(const void *a, const void *b)
{
	const struct sort_item *x = a, *y = b;

	for (int i = 0; i < g_nkeys; i++) {
		int c = bg_py_cmp(x->keys[i], y->keys[i], &g_type_error);
		if (c)
			return c;
	}
	return x->index < y->index ? -1 : x->index > y->index;
}

static bool sort_items(struct sort_item *items, size_t n, int nkeys)
{
	g_nkeys = nkeys;
	g_type_error = false;
	qsort(items, n, sizeof(*items), cmp_items);
	return !g_type_error;
}

static void free_items(struct sort_item *items, size_t n, int nkeys)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < nkeys; k++)
			json_decref(items[i].keys[k]);
	free(items);
}

static const char *const gate_fields[] = {
	"state", "module", "operation", "platform", "computer", "selected_scan_rows",
	"selected_scan_columns", "source_detector_rows", "source_detector_columns", "detector_bin",
	"output_detector_rows", "output_detector_columns", "source_dtype", "working_dtype",
	"cache_state", "timing_boundary", "priority", "runbook", "next_gate", "id", NULL,
};

static const char *state_label_of(struct render *r, const char *kind, const json_t *obj)
{
	const json_t *st = json_object_get(obj, "state");
	const char *label = json_is_string(st) ? bg_state_label(json_string_value(st)) : NULL;

	if (!label)
		fail_value(r, kind, obj, "state", "which is not a known state");
	return label;
}

static void summary(struct render *r)
{
	static const char *const h1[] = {"State", "Gate count", NULL};
	static const char *const h2[] = {"Platform", "Tracked gates", NULL};
	size_t counts[7] = {0}, i, nplat = 0;
	json_t *gate;
	struct sort_item *plats = bg_xcalloc(json_array_size(r->reg->gates) + 1, sizeof(*plats));
	size_t *pcount = bg_xcalloc(json_array_size(r->reg->gates) + 1, sizeof(*pcount));

	json_array_foreach(r->reg->gates, i, gate) {
		json_t *st = json_object_get(gate, "state"), *pl = json_object_get(gate, "platform");
		size_t k;

		if (!st)
			fail_missing(r, "gate", gate, "state");
		if (!pl)
			fail_missing(r, "gate", gate, "platform");
		if (r->failed)
			break;
		if (json_is_array(pl) || json_is_object(pl)) {
			fail_value(r, "gate", gate, "platform", "which cannot be counted");
			break;
		}
		for (int s = 0; s < 7; s++)
			if (json_is_string(st) && strcmp(json_string_value(st), bg_state_order[s]) == 0)
				counts[s]++;
		for (k = 0; k < nplat; k++)
			if (bg_py_equal(plats[k].keys[0], pl))
				break;
		if (k == nplat) {
			plats[nplat].keys[0] = json_incref(pl);
			plats[nplat].index = nplat;
			nplat++;
		}
		pcount[plats[k].index]++;
	}
	if (!r->failed) {
		table_head(r, h1);
		for (int s = 0; s < 7; s++) {
			char buf[32];
			row_begin(r);
			cell_cstr(r, state_labels[s]);
			snprintf(buf, sizeof(buf), "%zu", counts[s]);
			cell_cstr(r, buf);
			row_end(r);
		}
		bg_strbuf_adds(r->out, "\n");
		if (!sort_items(plats, nplat, 1)) {
			r->failed = true;
			bg_error(r->ctx, BG_ECHECK, "cannot render the coverage document: gate platforms mix types");
		} else {
			table_head(r, h2);
			for (i = 0; i < nplat; i++) {
				char buf[32];
				row_begin(r);
				cell_value(r, plats[i].keys[0]);
				snprintf(buf, sizeof(buf), "%zu", pcount[plats[i].index]);
				cell_cstr(r, buf);
				row_end(r);
			}
		}
	}
	free(pcount);
	free_items(plats, nplat, 1);
}

static void gate_table(struct render *r)
{
	static const char *const head[] = {
		"State", "Module", "Operation", "Platform", "Computer", "Selected scan", "Source detector",
		"Detector bin", "Output detector", "Source dtype", "Working dtype", "Cache/process state",
		"Wall boundary", "Priority", "Runbook", "Next gate", NULL,
	};
	static const char *const keys[] = {"module", "platform", "computer", "priority", "id"};
	size_t n = json_array_size(r->reg->gates), i;
	struct sort_item *items = bg_xcalloc(n + 1, sizeof(*items));
	json_t *gate;

	json_array_foreach(r->reg->gates, i, gate) {
		for (const char *const *f = gate_fields; *f && !r->failed; f++)
			if (!json_object_get(gate, *f))
				fail_missing(r, "gate", gate, *f);
		items[i].obj = gate;
		items[i].index = i;
		for (int k = 0; k < 5; k++) {
			json_t *v = json_object_get(gate, keys[k]);
			items[i].keys[k] = v ? json_incref(v) : json_null();
		}
	}
	if (!r->failed && !sort_items(items, n, 5)) {
		r->failed = true;
		bg_error(r->ctx, BG_ECHECK,
			 "cannot render the coverage document: gates cannot be ordered (module, platform, computer, priority and id must each have one type)");
	}
	if (!r->failed)
		table_head(r, head);
	for (i = 0; i < n && !r->failed; i++) {
		json_t *g = items[i].obj, *next;
		const char *label = state_label_of(r, "gate", g);
		struct bg_strbuf rb = BG_STRBUF_INIT;

		if (!label)
			break;
		row_begin(r);
		cell_cstr(r, label);
		cell_value(r, json_object_get(g, "module"));
		cell_value(r, json_object_get(g, "operation"));
		cell_value(r, json_object_get(g, "platform"));
		cell_value(r, json_object_get(g, "computer"));
		cell_shape(r, json_object_get(g, "selected_scan_rows"), json_object_get(g, "selected_scan_columns"));
		cell_shape(r, json_object_get(g, "source_detector_rows"), json_object_get(g, "source_detector_columns"));
		cell_value(r, json_object_get(g, "detector_bin"));
		cell_shape(r, json_object_get(g, "output_detector_rows"), json_object_get(g, "output_detector_columns"));
		cell_value(r, json_object_get(g, "source_dtype"));
		cell_value(r, json_object_get(g, "working_dtype"));
		cell_value(r, json_object_get(g, "cache_state"));
		cell_value(r, json_object_get(g, "timing_boundary"));
		cell_value(r, json_object_get(g, "priority"));
		bg_strbuf_addch(&rb, '`');
		bg_py_str(&rb, json_object_get(g, "runbook"));
		bg_strbuf_addch(&rb, '`');
		cell_text(r, rb.buf, rb.len);
		bg_strbuf_release(&rb);
		next = json_object_get(g, "next_gate");
		cell_value(r, bg_py_truthy(next) ? next : json_object_get(g, "reason"));
		row_end(r);
	}
	free_items(items, n, 5);
}

static void measurement_table(struct render *r)
{
	static const char *const head[] = {
		"State", "Module", "Operation", "Platform", "Computer", "Selected scan", "Source detector",
		"Detector bin", "Output detector", "Source dtype", "Working dtype", "Cache/process state",
		"Wall boundary", "Samples", "p50", "p95", "Maximum", "Logical resident",
		"Driver allocated after load", "Driver allocated after release", "Accelerator peak",
		"Total-device peak", "Process/tree peak", "Swap delta", "Parity", "Device tested",
		"Date tested", "Revision", "Measurement ID", NULL,
	};
	static const char *const required[] = {"state", "module", "operation", "platform", NULL};
	json_t *rows = r->reg->measurements;
	size_t n = json_array_size(rows), i;
	struct sort_item *items = bg_xcalloc(n + 1, sizeof(*items));
	json_t *m;

	json_array_foreach(rows, i, m) {
		struct bg_strbuf s = BG_STRBUF_INIT;
		for (const char *const *f = required; *f && !r->failed; f++)
			if (!json_object_get(m, *f))
				fail_missing(r, "measurement", m, *f);
		items[i].obj = m;
		items[i].index = i;
		items[i].keys[0] = json_incref(json_object_get(m, "module"));
		items[i].keys[1] = json_incref(json_object_get(m, "platform"));
		bg_py_str(&s, json_object_get(m, "computer"));
		items[i].keys[2] = json_string(s.buf);
		bg_strbuf_reset(&s);
		bg_py_str(&s, json_object_get(m, "id"));
		items[i].keys[3] = json_string(s.buf);
		bg_strbuf_release(&s);
	}
	if (!r->failed && !sort_items(items, n, 4)) {
		r->failed = true;
		bg_error(r->ctx, BG_ECHECK,
			 "cannot render the coverage document: measurements cannot be ordered (module and platform must be strings)");
	}
	if (!r->failed)
		table_head(r, head);
	for (i = 0; i < n && !r->failed; i++) {
		json_t *x = items[i].obj, *rev;
		const char *label = state_label_of(r, "measurement", x);
		struct bg_strbuf sb = BG_STRBUF_INIT;

		if (!label)
			break;
		row_begin(r);
		cell_cstr(r, label);
		cell_value(r, json_object_get(x, "module"));
		cell_value(r, json_object_get(x, "operation"));
		cell_value(r, json_object_get(x, "platform"));
		cell_value(r, json_object_get(x, "computer"));
		cell_shape(r, json_object_get(x, "selected_scan_rows"), json_object_get(x, "selected_scan_columns"));
		cell_shape(r, json_object_get(x, "source_detector_rows"), json_object_get(x, "source_detector_columns"));
		cell_value(r, json_object_get(x, "detector_bin"));
		cell_shape(r, json_object_get(x, "output_detector_rows"), json_object_get(x, "output_detector_columns"));
		cell_value(r, json_object_get(x, "source_dtype"));
		cell_value(r, json_object_get(x, "working_dtype"));
		cell_value(r, json_object_get(x, "cache_state"));
		cell_value(r, json_object_get(x, "timing_boundary"));
		cell_value(r, json_object_get(x, "sample_count"));
		cell_seconds(r, x, "p50_seconds");
		cell_seconds(r, x, "p95_seconds");
		cell_seconds(r, x, "max_seconds");
		cell_bytes(r, x, "logical_resident_bytes");
		cell_bytes(r, x, "driver_allocated_after_load_bytes");
		cell_bytes(r, x, "driver_allocated_after_release_bytes");
		cell_bytes(r, x, "accelerator_peak_bytes");
		cell_bytes(r, x, "total_device_peak_bytes");
		cell_bytes(r, x, "process_tree_peak_bytes");
		cell_bytes(r, x, "swap_delta_bytes");
		cell_cstr(r, parity_label(json_object_get(x, "parity")));
		cell_value(r, json_object_get(x, "device"));
		cell_value(r, json_object_get(x, "tested_date"));
		rev = json_object_get(x, "source_revision");
		if (bg_py_truthy(rev)) {
			struct bg_strbuf full = BG_STRBUF_INIT;
			bg_py_str(&full, rev);
			bg_py_prefix(&sb, full.buf, 8);
			bg_strbuf_release(&full);
			cell_text(r, sb.buf, sb.len);
		} else {
			cell_cstr(r, "");
		}
		bg_strbuf_reset(&sb);
		bg_strbuf_addch(&sb, '`');
		bg_py_str(&sb, json_object_get(x, "measurement_id"));
		bg_strbuf_addch(&sb, '`');
		cell_text(r, sb.buf, sb.len);
		bg_strbuf_release(&sb);
		if (!r->failed)
			row_end(r);
	}
	free_items(items, n, 4);
}

static void runbook_table(struct render *r)
{
	static const char *const head[] = {
		"Runbook", "Owner", "Tier", "Evidence level", "Command", "Required artifacts", NULL,
	};
	static const char *const required[] = {"owner", "tier", "evidence_level", "command",
					       "required_artifacts", NULL};
	size_t n;
	const char **ids = bg_json_sorted_keys(r->reg->runbooks, &n);

	table_head(r, head);
	for (size_t i = 0; i < n && !r->failed; i++) {
		json_t *rb = json_object_get(r->reg->runbooks, ids[i]), *arts;
		struct bg_strbuf sb = BG_STRBUF_INIT;

		for (const char *const *f = required; *f; f++) {
			if (!json_object_get(rb, *f)) {
				r->failed = true;
				bg_error(r->ctx, BG_ECHECK,
					 "cannot render the coverage document: runbook '%s' has no '%s'", ids[i], *f);
				break;
			}
		}
		if (r->failed)
			break;
		arts = json_object_get(rb, "required_artifacts");
		row_begin(r);
		bg_strbuf_addf(&sb, "`%s`", ids[i]);
		cell_text(r, sb.buf, sb.len);
		cell_value(r, json_object_get(rb, "owner"));
		cell_value(r, json_object_get(rb, "tier"));
		cell_value(r, json_object_get(rb, "evidence_level"));
		bg_strbuf_reset(&sb);
		bg_strbuf_addch(&sb, '`');
		bg_py_str(&sb, json_object_get(rb, "command"));
		bg_strbuf_addch(&sb, '`');
		cell_text(r, sb.buf, sb.len);
		bg_strbuf_reset(&sb);
		if (json_is_array(arts)) {
			size_t k;
			json_t *a;
			json_array_foreach(arts, k, a) {
				if (!json_is_string(a)) {
					r->failed = true;
					bg_error(r->ctx, BG_ECHECK,
						 "cannot render the coverage document: runbook '%s' required_artifacts must be strings",
						 ids[i]);
					break;
				}
				if (k)
					bg_strbuf_adds(&sb, "; ");
				bg_strbuf_adds(&sb, json_string_value(a));
			}
		} else if (json_is_string(arts)) {
			const char *s = json_string_value(arts);
			for (size_t k = 0; s[k]; k++) {
				if (k && (((unsigned char)s[k]) & 0xc0) != 0x80)
					bg_strbuf_adds(&sb, "; ");
				bg_strbuf_addch(&sb, s[k]);
			}
		} else {
			r->failed = true;
			bg_error(r->ctx, BG_ECHECK,
				 "cannot render the coverage document: runbook '%s' required_artifacts must be a list",
				 ids[i]);
		}
		cell_text(r, sb.buf, sb.len);
		bg_strbuf_release(&sb);
		if (!r->failed)
			row_end(r);
	}
	free(ids);
}

int bg_registry_render(struct bg_registry *reg, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	struct render r = {reg, out, BG_STRBUF_INIT, 0, false, ctx};
	int rc;

	if ((rc = bg_registry_resolve_measurements(reg, ctx)))
		return rc;
	bg_strbuf_adds(out, "<!-- Generated by benchgate; do not edit by hand. -->\n\n"
			    "## Coverage summary\n\n<!-- benchmark-coverage-summary-start -->\n\n");
	summary(&r);
	if (!r.failed)
		bg_strbuf_adds(out, "\n<!-- benchmark-coverage-summary-end -->\n\n## Required coverage gates\n\n"
				    "Every row is one exact scientific and device configuration. A pending row is "
				    "work to do, not an implicit failure and not evidence that a backend is supported "
				    "on that device.\n\n");
	if (!r.failed)
		gate_table(&r);
	if (!r.failed)
		bg_strbuf_adds(out, "\n## Retained atomic measurements\n\n"
				    "These rows are imported from immutable evidence or explicitly registered "
				    "follow-up evidence. A partial row is retained but does not satisfy a complete "
				    "timing-and-parity gate.\n\n");
	if (!r.failed)
		measurement_table(&r);
	if (!r.failed) {
		bg_strbuf_adds(out, "\n## Reproducible runbooks\n\n");
		runbook_table(&r);
	}
	bg_strbuf_release(&r.row);
	if (r.failed)
		return BG_ECHECK;
	return BG_OK;
}

/* Normalises newlines and drops a generated-by first line. */
static void normalise(struct bg_strbuf *out, const char *s, size_t len)
{
	size_t i = 0;
	const char *prefix = "<!-- Generated by ", *suffix = "; do not edit by hand. -->";
	struct bg_strbuf tmp = BG_STRBUF_INIT;

	for (i = 0; i < len; i++) {
		if (s[i] == '\r') {
			bg_strbuf_addch(&tmp, '\n');
			if (i + 1 < len && s[i + 1] == '\n')
				i++;
		} else {
			bg_strbuf_addch(&tmp, s[i]);
		}
	}
	{
		char *nl = memchr(tmp.buf, '\n', tmp.len);
		size_t first = nl ? (size_t)(nl - tmp.buf) : tmp.len;
		size_t pl = strlen(prefix), sl = strlen(suffix);

		if (first >= pl + sl && strncmp(tmp.buf, prefix, pl) == 0 &&
		    strncmp(tmp.buf + first - sl, suffix, sl) == 0)
			bg_strbuf_addn(out, tmp.buf + first, tmp.len - first);
		else
			bg_strbuf_addn(out, tmp.buf, tmp.len);
	}
	bg_strbuf_release(&tmp);
}

bool bg_registry_document_matches(const char *on_disk, size_t len, const char *rendered)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
	bool same;

	normalise(&a, on_disk, len);
	normalise(&b, rendered, strlen(rendered));
	same = a.len == b.len && memcmp(a.buf, b.buf, a.len) == 0;
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
	return same;
}
