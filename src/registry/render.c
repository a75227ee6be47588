/*
 * render.c - the generated Markdown coverage document (the reference's
 * render_document) and the staleness comparison that validate applies.
 */
#include "benchgate/registry.h"
#include "benchgate/fsutil.h"
#include "core/bigint.h"
#include "core/bytes.h"
#include "core/fmath.h"
#include "core/pyval.h"
#include "registry/keysort.h"

#include <math.h>
#include <stdarg.h>
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
	struct bg_arena *scratch; /* sort keys built while rendering */
	struct bg_strbuf tmp;     /* one cell's text, reused */
	/* where the text goes as it is produced (at most one; both NULL: all
	 * of it stays in out) */
	struct doc_cmp *cmp;          /* compared with a file */
	struct bg_atomic_file *file;  /* written to a file */
	size_t lines_out;             /* lines handed over to file so far */
};

static void flush_out(struct render *r, bool last);

/*
 * Records the render's first failure as "REGISTRY: cannot render the
 * coverage document: WHAT", WHAT (fmt) ending with what to do; later
 * failures are ignored.
 */
static void render_fail(struct render *r, const char *fmt, ...) BG_PRINTF(2, 3);
static void render_fail(struct render *r, const char *fmt, ...)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	bg_strbuf_vaddf(&what, fmt, ap);
	va_end(ap);
	bg_error(r->ctx, BG_ECHECK, "%s: cannot render the coverage document: %s", r->reg->display, what.buf);
	bg_strbuf_release(&what);
}

static void fail_missing(struct render *r, const char *kind, const struct bg_value *obj, const char *field)
{
	struct bg_strbuf id = BG_STRBUF_INIT;
	struct bg_value *conf = bg_value_get(obj, "configuration");

	bg_value_py_str(&id, bg_value_get(obj, "id"));
	if (bg_value_is_string(conf) &&
	    !bg_value_get(bg_value_get(r->reg->root, "configurations"), bg_value_str(conf)))
		render_fail(r,
			    "%s '%s' has no '%s' (its configuration '%s' does not exist); "
			    "add '%s' to 'configurations' or name one that exists",
			    kind, id.buf, field, bg_value_str(conf), bg_value_str(conf));
	else
		render_fail(r, "%s '%s' has no '%s'; add it to the %s", kind, id.buf, field, kind);
	bg_strbuf_release(&id);
}

/* "KIND 'ID' has FIELD VALUE WHAT; FIX" */
static void fail_value(struct render *r, const char *kind, const struct bg_value *obj, const char *field,
		       const char *what, const char *fix)
{
	struct bg_strbuf id = BG_STRBUF_INIT, v = BG_STRBUF_INIT;

	bg_value_py_str(&id, bg_value_get(obj, "id"));
	bg_value_py_repr(&v, bg_value_get(obj, field));
	render_fail(r, "%s '%s' has %s %s %s; %s", kind, id.buf, field, v.buf, what, fix);
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
	struct bg_strbuf *row = &r->row;
	char *d;

	/* at most two bytes out per byte in ("|" -> "\\|"), plus the separator and "n/a" */
	bg_strbuf_grow(row, 2 * len + 6);
	d = row->buf + row->len;
	if (r->ncells++) {
		memcpy(d, " | ", 3);
		d += 3;
	}
	if (len == 0) {
		memcpy(d, "n/a", 3);
		d += 3;
	}
	for (;;) {
		size_t run = bg_span_without2(s, len, '|', '\n');
		memcpy(d, s, run);
		d += run;
		if (run == len)
			break;
		if (s[run] == '|') {
			*d++ = '\\';
			*d++ = '|';
		} else {
			*d++ = ' ';
		}
		s += run + 1;
		len -= run + 1;
	}
	row->len = (size_t)(d - row->buf);
	*d = '\0';
}

static void cell_cstr(struct render *r, const char *s)
{
	cell_text(r, s, strlen(s));
}

static void cell_value(struct render *r, const struct bg_value *v)
{
	if (!v || bg_value_is_null(v)) {
		cell_cstr(r, "");
		return;
	}
	if (bg_value_is_string(v)) {
		cell_text(r, bg_value_str(v), bg_value_len(v));
		return;
	}
	bg_strbuf_reset(&r->tmp);
	bg_value_py_str(&r->tmp, v);
	cell_text(r, r->tmp.buf, r->tmp.len);
}

static void row_end(struct render *r)
{
	bg_strbuf_adds(&r->row, " |\n");
	bg_strbuf_addn(r->out, r->row.buf, r->row.len);
	if (r->cmp || r->file)
		flush_out(r, false);
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

/* f"{rows} × {cols}" of row (kind names it in a message). Only a
 * measurement's computed extent (int(stop) - int(start)) can have more
 * digits than Python's str() writes. */
static void cell_shape(struct render *r, const char *kind, const struct bg_value *row, const struct bg_value *rows,
		       const struct bg_value *cols)
{
	struct bg_strbuf *sb = &r->tmp;

	if (!rows || !cols || bg_value_is_null(rows) || bg_value_is_null(cols)) {
		cell_cstr(r, "n/a");
		return;
	}
	for (int k = 0; k < 2; k++) {
		const struct bg_value *v = k ? cols : rows;
		if (bg_value_is_bigint(v) && v->n - (v->u.s[0] == '-') > BG_BIGINT_MAX_DIGITS) {
			struct bg_strbuf id = BG_STRBUF_INIT;
			bg_value_py_str(&id, bg_value_get(row, "id"));
			render_fail(r, "%s '%s' has a selected scan extent (stop - start) of %u digits, more than the %u "
				       "Python's str() writes; check its selected scan bounds",
				    kind, id.buf, v->n - (v->u.s[0] == '-'), BG_BIGINT_MAX_DIGITS);
			bg_strbuf_release(&id);
			return;
		}
	}
	bg_strbuf_reset(sb);
	bg_value_py_str(sb, rows);
	bg_strbuf_adds(sb, " \xc3\x97 ");
	bg_value_py_str(sb, cols);
	cell_text(r, sb->buf, sb->len);
}

/* Decimal digits of u into the end of buf[0..24); returns the first digit. */
static char *utoa_end(char *end, unsigned long long u)
{
	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	return end;
}

/*
 * printf("%.*f", prec, x) (prec 3 or 6): computed directly when the
 * rounding is unambiguous (x * 10^prec well inside the exact range and not
 * near a tie), else by snprintf, so the text is always printf's.
 */
static void add_fixed(struct bg_strbuf *out, double x, int prec)
{
	static const double scale[] = {1, 10, 100, 1000, 1e4, 1e5, 1e6};
	static const unsigned long long iscale[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
	double ax = fabs(x), y = ax * scale[prec], fl = bg_floor(y), frac = y - fl;

	if (isfinite(x) && y < 1e12 && fabs(frac - 0.5) > 1e-3) {
		unsigned long long q = (unsigned long long)(frac > 0.5 ? fl + 1 : fl);
		unsigned long long ip = q / iscale[prec], fp = q % iscale[prec];
		char buf[48], *end = buf + sizeof(buf), *p;
		for (int i = 0; i < prec; i++) {
			*--end = (char)('0' + fp % 10);
			fp /= 10;
		}
		p = end;
		*--p = '.';
		p = utoa_end(p, ip);
		if (signbit(x))
			*--p = '-';
		bg_strbuf_addn(out, p, (size_t)(buf + sizeof(buf) - p));
		return;
	}
	bg_strbuf_addf(out, "%.*f", prec, x);
}

void bg_registry_format_seconds(struct bg_strbuf *out, double s)
{
	if (s < 0.1) {
		add_fixed(out, s * 1000, 3);
		bg_strbuf_addn(out, " ms", 3);
	} else {
		add_fixed(out, s, 6);
		bg_strbuf_addn(out, " s", 2);
	}
}

void bg_registry_format_bytes(struct bg_strbuf *out, long long n)
{
	if (n == 0)
		bg_strbuf_adds(out, "0 B");
	else {
		add_fixed(out, (double)n / (double)(1 << 30), 3);
		bg_strbuf_addn(out, " GiB", 4);
	}
}

/* v is row[field] (NULL when absent); row and field name it in messages. */
static void cell_seconds(struct render *r, const struct bg_value *row, const char *field,
			 const struct bg_value *v)
{
	double sec;

	if (!v || bg_value_is_null(v)) {
		cell_cstr(r, "n/a");
		return;
	}
	if (!bg_value_to_float(v, &sec)) {
		fail_value(r, "measurement", row, field,
			   bg_value_is_bigint(v) ? "which is beyond a real number's range" : "which is not a number",
			   "write a number of seconds, or null");
		return;
	}
	bg_strbuf_reset(&r->tmp);
	bg_registry_format_seconds(&r->tmp, sec);
	cell_text(r, r->tmp.buf, r->tmp.len);
}

/* int(v) / (1 << 30) for an integer beyond 64 bits, or an integer text
 * of one (int() reads any size up to 4300 digits): strtod rounds the
 * integer once, and the division by a power of two is exact, so this is
 * Python's correctly rounded int / int. False for any other text, or a
 * quotient beyond a double (Python's OverflowError). */
static bool big_int_gib(const struct bg_value *v, double *gib)
{
	struct bg_strbuf digits = BG_STRBUF_INIT;
	bool ok = false;

	if ((bg_value_is_string(v) || bg_value_is_bigint(v)) && bg_value_int_text(v, &digits)) {
		*gib = strtod(digits.buf, NULL) / (double)(1 << 30);
		ok = isfinite(*gib);
	}
	bg_strbuf_release(&digits);
	return ok;
}

static void cell_bytes(struct render *r, const struct bg_value *row, const char *field,
		       const struct bg_value *v)
{
	long long n;
	double gib;

	if (!v || bg_value_is_null(v)) {
		cell_cstr(r, "n/a");
		return;
	}
	bg_strbuf_reset(&r->tmp);
	if ((bg_value_is_real(v) && isfinite(bg_value_real(v)) && fabs(bg_value_real(v)) >= 9.2e18 &&
	     (gib = bg_value_real(v) / (double)(1 << 30), true)) ||
	    (!bg_value_to_int(v, &n) && big_int_gib(v, &gib))) {
		/* an integer beyond 64 bits: int() of a float this large is the
		 * float itself, and count / (1 << 30) is exact in double */
		add_fixed(&r->tmp, gib, 3);
		bg_strbuf_addn(&r->tmp, " GiB", 4);
		cell_text(r, r->tmp.buf, r->tmp.len);
		return;
	}
	if (!bg_value_to_int(v, &n)) {
		fail_value(r, "measurement", row, field, "which is not an integer byte count",
			   "write a whole number of bytes, or null");
		return;
	}
	bg_registry_format_bytes(&r->tmp, n);
	cell_text(r, r->tmp.buf, r->tmp.len);
}

static const char *parity_label(struct render *r, const struct bg_value *v)
{
	struct bg_strbuf *s = &r->tmp;
	const char *label = "Pass";
	size_t start;

	if (!bg_value_truthy(v))
		return "Pending";
	bg_strbuf_reset(s);
	bg_value_py_str(s, v);
	start = s->len;
	bg_strbuf_addch(s, '\0');
	bg_strbuf_grow(s, start + 1); /* no reallocation while lowering from s->buf */
	bg_py_lower(s, s->buf); /* lower-cased copy after the text */
	{
		const char *lower = s->buf + start + 1;
		if (strstr(lower, "not performed") || strstr(lower, "incomplete"))
			label = "Qualified probes";
		else if (strstr(lower, "failed") || strstr(lower, "mismatch") || strstr(lower, "violations"))
			label = "Failed";
	}
	return label;
}

/* render_fail with the two objects a sort could not order (bg_keysort). */
static void fail_clash(struct render *r, const char *kind, const char *field,
		       const struct bg_keysort_clash *clash)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_keysort_clash_message(&sb, kind, field, clash);
	render_fail(r, "%s", sb.buf);
	bg_strbuf_release(&sb);
}

static const char *state_label_of(struct render *r, const char *kind, const struct bg_value *obj,
				  const struct bg_value *st)
{
	const char *label = bg_value_is_string(st) ? bg_state_label(bg_value_str(st)) : NULL;

	if (!label)
		fail_value(r, kind, obj, "state", "which is not a known state",
			   "use one of 'measured', 'partial', 'pending', 'blocked', 'refuted', "
			   "'unsupported', 'superseded'");
	return label;
}

static void summary(struct render *r)
{
	static const char *const h1[] = {"State", "Gate count", NULL};
	static const char *const h2[] = {"Platform", "Tracked gates", NULL};
	size_t counts[7] = {0}, i, nplat = 0;
	struct bg_value *gate;
	struct bg_keysort_item *plats = bg_xcalloc(bg_value_size(r->reg->gates) + 1, sizeof(*plats));
	size_t *pcount = bg_xcalloc(bg_value_size(r->reg->gates) + 1, sizeof(*pcount));

	BG_VALUE_ARRAY_FOREACH(r->reg->gates, i, gate) {
		struct bg_value *st = bg_value_get(gate, "state"), *pl = bg_value_get(gate, "platform");
		size_t k;

		if (!st)
			fail_missing(r, "gate", gate, "state");
		if (!pl)
			fail_missing(r, "gate", gate, "platform");
		if (r->failed)
			break;
		if (bg_value_is_array(pl) || bg_value_is_object(pl)) {
			fail_value(r, "gate", gate, "platform", "which cannot be counted",
				   "make it a string");
			break;
		}
		for (int s = 0; s < 7; s++)
			if (bg_value_is_string(st) && strcmp(bg_value_str(st), bg_state_order[s]) == 0)
				counts[s]++;
		for (k = 0; k < nplat; k++)
			if (bg_value_equal(plats[k].keys[0], pl))
				break;
		if (k == nplat) {
			plats[nplat].obj = gate;
			plats[nplat].keys[0] = pl;
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
		struct bg_keysort_clash clash;
		if (!bg_keysort(plats, nplat, 1, &clash)) {
			fail_clash(r, "gate", "platform", &clash);
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
	free(plats);
}

/* gate_fields, then the rest a gate row shows; G_* index them. */
enum {
	G_STATE, G_MODULE, G_OPERATION, G_PLATFORM, G_COMPUTER, G_SEL_ROWS, G_SEL_COLS, G_SRC_ROWS,
	G_SRC_COLS, G_DET_BIN, G_OUT_ROWS, G_OUT_COLS, G_SRC_DTYPE, G_WORK_DTYPE, G_CACHE, G_BOUNDARY,
	G_PRIORITY, G_RUNBOOK, G_NEXT, G_ID, G_REASON, G_NFIELDS
};
static const char *const gate_row_fields[G_NFIELDS] = {
	"state", "module", "operation", "platform", "computer", "selected_scan_rows",
	"selected_scan_columns", "source_detector_rows", "source_detector_columns", "detector_bin",
	"output_detector_rows", "output_detector_columns", "source_dtype", "working_dtype",
	"cache_state", "timing_boundary", "priority", "runbook", "next_gate", "id", "reason",
};

/*
 * The columns the gate and measurement tables share, from a projection in
 * the common order (the first fields of gate_row_fields and
 * measurement_row_fields): state label, module ... timing boundary.
 */
static void shared_cells(struct render *r, const char *kind, const struct bg_value *row, const char *label,
			 struct bg_value *const *f)
{
	cell_cstr(r, label);
	cell_value(r, f[G_MODULE]);
	cell_value(r, f[G_OPERATION]);
	cell_value(r, f[G_PLATFORM]);
	cell_value(r, f[G_COMPUTER]);
	cell_shape(r, kind, row, f[G_SEL_ROWS], f[G_SEL_COLS]);
	cell_shape(r, kind, row, f[G_SRC_ROWS], f[G_SRC_COLS]);
	cell_value(r, f[G_DET_BIN]);
	cell_shape(r, kind, row, f[G_OUT_ROWS], f[G_OUT_COLS]);
	cell_value(r, f[G_SRC_DTYPE]);
	cell_value(r, f[G_WORK_DTYPE]);
	cell_value(r, f[G_CACHE]);
	cell_value(r, f[G_BOUNDARY]);
}

static void gate_table(struct render *r)
{
	static const char *const head[] = {
		"State", "Module", "Operation", "Platform", "Computer", "Selected scan", "Source detector",
		"Detector bin", "Output detector", "Source dtype", "Working dtype", "Cache/process state",
		"Wall boundary", "Priority", "Runbook", "Next gate", NULL,
	};
	static const int keys[] = {G_MODULE, G_PLATFORM, G_COMPUTER, G_PRIORITY, G_ID};
	struct bg_keysort_clash clash;
	size_t n = bg_value_size(r->reg->gates), i;
	struct bg_keysort_item *items = bg_xcalloc(n + 1, sizeof(*items));
	struct bg_value_proj proj;
	struct bg_value *gate;

	bg_value_proj_init(&proj, gate_row_fields, G_NFIELDS);
	BG_VALUE_ARRAY_FOREACH(r->reg->gates, i, gate) {
		struct bg_value *f[G_NFIELDS];

		bg_value_project(&proj, gate, f);
		for (int k = 0; k < G_REASON && !r->failed; k++) /* gate_fields, in their order */
			if (!f[k])
				fail_missing(r, "gate", gate, gate_row_fields[k]);
		items[i].obj = gate;
		items[i].index = i;
		for (int k = 0; k < 5; k++)
			items[i].keys[k] = f[keys[k]] ? f[keys[k]] : bg_value_null();
	}
	if (!r->failed && !bg_keysort(items, n, 5, &clash))
		fail_clash(r, "gate", gate_row_fields[keys[clash.key]], &clash);
	if (!r->failed)
		table_head(r, head);
	for (i = 0; i < n && !r->failed; i++) {
		struct bg_value *g = items[i].obj, *f[G_NFIELDS];
		const char *label;

		bg_value_project(&proj, g, f); /* again: cheaper than keeping every row's fields */
		label = state_label_of(r, "gate", g, f[G_STATE]);
		if (!label)
			break;
		row_begin(r);
		shared_cells(r, "gate", g, label, f);
		cell_value(r, f[G_PRIORITY]);
		bg_strbuf_reset(&r->tmp);
		bg_strbuf_addch(&r->tmp, '`');
		bg_value_py_str(&r->tmp, f[G_RUNBOOK]);
		bg_strbuf_addch(&r->tmp, '`');
		cell_text(r, r->tmp.buf, r->tmp.len);
		cell_value(r, bg_value_truthy(f[G_NEXT]) ? f[G_NEXT] : f[G_REASON]);
		row_end(r);
	}
	free(items);
}

/* What a measurement row shows; M_* index them. */
enum {
	M_STATE, M_MODULE, M_OPERATION, M_PLATFORM, M_COMPUTER, M_SEL_ROWS, M_SEL_COLS, M_SRC_ROWS,
	M_SRC_COLS, M_DET_BIN, M_OUT_ROWS, M_OUT_COLS, M_SRC_DTYPE, M_WORK_DTYPE, M_CACHE, M_BOUNDARY,
	M_SAMPLES, M_P50, M_P95, M_MAX, M_LOGICAL, M_DRV_LOAD, M_DRV_RELEASE, M_ACCEL, M_TOTAL_DEV,
	M_TREE, M_SWAP, M_PARITY, M_DEVICE, M_DATE, M_REV, M_MID, M_ID, M_NFIELDS
};
/* both enums list the shared columns first, in the same order */
_Static_assert((int)M_BOUNDARY == (int)G_BOUNDARY, "shared_cells reads measurement rows through the gate indices");
static const char *const measurement_row_fields[M_NFIELDS] = {
	"state", "module", "operation", "platform", "computer", "selected_scan_rows",
	"selected_scan_columns", "source_detector_rows", "source_detector_columns", "detector_bin",
	"output_detector_rows", "output_detector_columns", "source_dtype", "working_dtype",
	"cache_state", "timing_boundary", "sample_count", "p50_seconds", "p95_seconds", "max_seconds",
	"logical_resident_bytes", "driver_allocated_after_load_bytes",
	"driver_allocated_after_release_bytes", "accelerator_peak_bytes", "total_device_peak_bytes",
	"process_tree_peak_bytes", "swap_delta_bytes", "parity", "device", "tested_date",
	"source_revision", "measurement_id", "id",
};

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
	struct bg_value *rows = r->reg->measurements;
	size_t n = bg_value_size(rows), i;
	struct bg_keysort_item *items = bg_xcalloc(n + 1, sizeof(*items));
	struct bg_value_proj proj;
	/* module, platform, str(computer), str(id): only the first two can clash */
	static const char *const key_names[] = {"module", "platform", "computer", "id"};
	struct bg_keysort_clash clash;
	struct bg_value *m;

	bg_value_proj_init(&proj, measurement_row_fields, M_NFIELDS);
	BG_VALUE_ARRAY_FOREACH(rows, i, m) {
		struct bg_value *f[M_NFIELDS];

		bg_value_project(&proj, m, f);
		for (int k = M_STATE; k <= M_PLATFORM && !r->failed; k++) /* state, module, operation, platform */
			if (!f[k])
				fail_missing(r, "measurement", m, measurement_row_fields[k]);
		items[i].obj = m;
		items[i].index = i;
		items[i].keys[0] = f[M_MODULE];
		items[i].keys[1] = f[M_PLATFORM];
		for (int k = 0; k < 2; k++) { /* str(computer), str(id) */
			struct bg_value *v = f[k ? M_ID : M_COMPUTER];
			if (bg_value_is_string(v)) {
				items[i].keys[2 + k] = v;
				continue;
			}
			bg_strbuf_reset(&r->tmp);
			bg_value_py_str(&r->tmp, v);
			items[i].keys[2 + k] = bg_value_new_stringn(r->scratch, r->tmp.buf, r->tmp.len);
		}
	}
	if (!r->failed && !bg_keysort(items, n, 4, &clash))
		fail_clash(r, "measurement", key_names[clash.key], &clash);
	if (!r->failed)
		table_head(r, head);
	for (i = 0; i < n && !r->failed; i++) {
		struct bg_value *x = items[i].obj, *f[M_NFIELDS];
		const char *label;

		bg_value_project(&proj, x, f); /* again: cheaper than keeping every row's fields */
		label = state_label_of(r, "measurement", x, f[M_STATE]);
		if (!label)
			break;
		row_begin(r);
		shared_cells(r, "measurement", x, label, f);
		cell_value(r, f[M_SAMPLES]);
		for (int k = M_P50; k <= M_MAX; k++)
			cell_seconds(r, x, measurement_row_fields[k], f[k]);
		for (int k = M_LOGICAL; k <= M_SWAP; k++)
			cell_bytes(r, x, measurement_row_fields[k], f[k]);
		cell_cstr(r, parity_label(r, f[M_PARITY]));
		cell_value(r, f[M_DEVICE]);
		cell_value(r, f[M_DATE]);
		if (bg_value_truthy(f[M_REV])) {
			struct bg_strbuf full = BG_STRBUF_INIT;
			bg_value_py_str(&full, f[M_REV]);
			bg_strbuf_reset(&r->tmp);
			bg_py_prefix(&r->tmp, full.buf, 8);
			bg_strbuf_release(&full);
			cell_text(r, r->tmp.buf, r->tmp.len);
		} else {
			cell_cstr(r, "");
		}
		bg_strbuf_reset(&r->tmp);
		bg_strbuf_addch(&r->tmp, '`');
		bg_value_py_str(&r->tmp, f[M_MID]);
		bg_strbuf_addch(&r->tmp, '`');
		cell_text(r, r->tmp.buf, r->tmp.len);
		if (!r->failed)
			row_end(r);
	}
	free(items);
}

static void runbook_table(struct render *r)
{
	static const char *const head[] = {
		"Runbook", "Owner", "Tier", "Evidence level", "Command", "Required artifacts", NULL,
	};
	static const char *const required[] = {"owner", "tier", "evidence_level", "command",
					       "required_artifacts", NULL};
	size_t n;
	const char **ids;

	if (!bg_value_get(r->reg->root, "runbooks")) { /* registry["runbooks"]: KeyError */
		render_fail(r, "the registry has no 'runbooks'; add them (an object: runbook id -> runbook)");
		return;
	}
	if (bg_registry_runbooks_ok(r->reg, r->ctx)) {
		render_fail(r, "%s; make it one (runbook id -> runbook)", bg_ctx_message(r->ctx));
		return;
	}
	ids = bg_value_sorted_keys(r->reg->runbooks, &n);
	table_head(r, head);
	for (size_t i = 0; i < n && !r->failed; i++) {
		struct bg_value *rb = bg_value_get(r->reg->runbooks, ids[i]), *arts;
		struct bg_strbuf sb = BG_STRBUF_INIT;

		if (!bg_value_is_object(rb)) {
			render_fail(r, "runbook '%s' must be an object; make it one", ids[i]);
			bg_strbuf_release(&sb);
			break;
		}
		for (const char *const *f = required; *f; f++) {
			if (!bg_value_get(rb, *f)) {
				render_fail(r, "runbook '%s' has no '%s'; add it to the runbook", ids[i], *f);
				break;
			}
		}
		if (r->failed)
			break;
		arts = bg_value_get(rb, "required_artifacts");
		row_begin(r);
		bg_strbuf_addf(&sb, "`%s`", ids[i]);
		cell_text(r, sb.buf, sb.len);
		cell_value(r, bg_value_get(rb, "owner"));
		cell_value(r, bg_value_get(rb, "tier"));
		cell_value(r, bg_value_get(rb, "evidence_level"));
		bg_strbuf_reset(&sb);
		bg_strbuf_addch(&sb, '`');
		bg_value_py_str(&sb, bg_value_get(rb, "command"));
		bg_strbuf_addch(&sb, '`');
		cell_text(r, sb.buf, sb.len);
		bg_strbuf_reset(&sb);
		if (bg_value_is_array(arts)) {
			size_t k;
			struct bg_value *a;
			BG_VALUE_ARRAY_FOREACH(arts, k, a) {
				if (!bg_value_is_string(a)) {
					render_fail(r, "runbook '%s': items of 'required_artifacts' must be strings; "
						       "make every item a string", ids[i]);
					break;
				}
				if (k)
					bg_strbuf_adds(&sb, "; ");
				bg_strbuf_adds(&sb, bg_value_str(a));
			}
		} else if (bg_value_is_string(arts)) {
			const char *s = bg_value_str(arts);
			for (size_t k = 0; s[k]; k++) {
				if (k && (((unsigned char)s[k]) & 0xc0) != 0x80)
					bg_strbuf_adds(&sb, "; ");
				bg_strbuf_addch(&sb, s[k]);
			}
		} else if (bg_value_is_object(arts)) { /* "; ".join(a dict) joins its keys */
			const char *key;
			struct bg_value *a;
			size_t k = 0;
			BG_VALUE_OBJECT_FOREACH(arts, key, a) {
				(void)a;
				if (k++)
					bg_strbuf_adds(&sb, "; ");
				bg_strbuf_adds(&sb, key);
			}
		} else {
			render_fail(r, "runbook '%s': 'required_artifacts' must be a list; make it a list of strings",
				    ids[i]);
		}
		cell_text(r, sb.buf, sb.len);
		bg_strbuf_release(&sb);
		if (!r->failed)
			row_end(r);
	}
	free(ids);
}

/*
 * Comparing the document with a file while it is rendered: the rendered
 * text is handed over (and its buffer emptied) every CMP_CHUNK bytes, so
 * it is never held whole, and compared byte for byte with the file's view
 * (mapped when big), past both first lines (body_start). Equal bytes mean
 * equal documents, unless the rendered text holds a '\r' or a lone
 * surrogate, which no file read as the reference reads it can (stale); at
 * the first difference the caller lets bg_registry_document_matches decide
 * on whole texts, normalising the file's line ends (a file with CRLF line
 * ends still matches).
 */
#define CMP_CHUNK 16384

struct doc_cmp {
	bool open;        /* the file could be opened and read */
	struct bg_file_view view;
	size_t pos;       /* the file's bytes compared so far */
	bool started;     /* the rendered first line was left out */
	bool differs;     /* the bytes differ */
	bool surrogate;   /* the render holds a lone surrogate: no file can match */
	bool carriage;    /* the render holds a '\r': no file can match */
};

static size_t body_start(const char *s, size_t len);

/* Fails the render where s[0..len) (the document from its line first_line
 * on) holds a lone surrogate: Python cannot write one to a UTF-8 file
 * (its write_text raises), so neither the file nor standard output gets
 * the document. */
static bool refuse_surrogate(struct render *r, const char *s, size_t len, size_t first_line)
{
	size_t at = bg_value_surrogate_find(s, len);
	struct bg_strbuf why = BG_STRBUF_INIT;

	if (at == len)
		return false;
	bg_value_surrogate_say(&why, s, len, at, first_line);
	render_fail(r, "its %s; replace the escape in the JSON it came from", why.buf);
	bg_strbuf_release(&why);
	return true;
}

/* Hands the rendered text over to the comparison or the file once there
 * is a chunk of it (or all of it, when last), and empties the buffer. */
static void flush_out(struct render *r, bool last)
{
	struct doc_cmp *c = r->cmp;
	struct bg_strbuf *out = r->out;
	size_t from = 0, n;

	if (!last && out->len < CMP_CHUNK)
		return;
	if (r->file) {
		if (!refuse_surrogate(r, out->buf, out->len, r->lines_out + 1))
			bg_atomic_file_write(r->file, out->buf, out->len);
		for (const char *p = out->buf, *e = p + out->len; (p = memchr(p, '\n', (size_t)(e - p))); p++)
			r->lines_out++;
		bg_strbuf_reset(out);
		return;
	}
	/* Python's text holds the surrogate, which a file read as UTF-8 never
	 * does: the document is stale (rendered whole, it would be refused) */
	if (!c->surrogate && bg_value_surrogate_find(out->buf, out->len) < out->len)
		c->surrogate = c->differs = true;
	/* and a '\r' (a field's, which render keeps), which a file read in text
	 * mode never does: its line ends all read as '\n' */
	if (!c->carriage && memchr(out->buf, '\r', out->len))
		c->carriage = c->differs = true;
	if (!c->started) {
		c->started = true;
		from = body_start(out->buf, out->len);
	}
	n = out->len - from;
	if (c->open && !c->differs) {
		if (c->view.len - c->pos < n || memcmp(c->view.text + c->pos, out->buf + from, n) != 0)
			c->differs = true;
		else
			c->pos += n;
		if (last && c->pos != c->view.len) /* the file must end here too */
			c->differs = true;
	}
	bg_strbuf_reset(out);
}

static int render_doc(struct bg_registry *reg, struct bg_strbuf *out, struct doc_cmp *cmp,
		      struct bg_atomic_file *file, struct bg_ctx *ctx)
{
	struct render r = {reg, out, BG_STRBUF_INIT, 0, false, ctx, NULL, BG_STRBUF_INIT, cmp, file, 0};
	size_t from = out->len;
	int rc;

	if ((rc = bg_registry_resolve_measurements(reg, ctx)))
		return rc;
	r.scratch = bg_arena_new();
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
	bg_strbuf_release(&r.tmp);
	bg_arena_free(r.scratch);
	if (!r.failed && (cmp || file))
		flush_out(&r, true); /* which may refuse the text (refuse_surrogate) */
	else if (!r.failed && refuse_surrogate(&r, out->buf + from, out->len - from, 1))
		bg_strbuf_setlen(out, from);
	return r.failed ? BG_ECHECK : BG_OK;
}

int bg_registry_render(struct bg_registry *reg, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	return render_doc(reg, out, NULL, NULL, ctx);
}

int bg_registry_render_to_file(struct bg_registry *reg, const char *path, const char *display,
			       struct bg_ctx *ctx)
{
	struct bg_atomic_file f;
	struct bg_strbuf chunk = BG_STRBUF_INIT;
	int rc;

	if ((rc = bg_atomic_file_open(&f, path, display, ctx)))
		return rc;
	bg_strbuf_grow(&chunk, CMP_CHUNK + 4096);
	rc = render_doc(reg, &chunk, NULL, &f, ctx);
	bg_strbuf_release(&chunk);
	if (rc) {
		bg_atomic_file_abort(&f);
		return rc;
	}
	return bg_atomic_file_commit(&f, ctx);
}

int bg_registry_render_matches(struct bg_registry *reg, const char *path, bool *matches,
			       struct bg_ctx *ctx)
{
	struct doc_cmp c;
	struct bg_strbuf doc = BG_STRBUF_INIT;
	int rc;

	memset(&c, 0, sizeof(c));
	*matches = false;
	c.open = bg_file_view_open(&c.view, path, NULL, NULL) == BG_OK;
	if (c.open)
		c.pos = body_start(c.view.text, c.view.len);
	bg_strbuf_grow(&doc, CMP_CHUNK + 4096);
	rc = render_doc(reg, &doc, &c, NULL, ctx);
	if (rc == BG_OK && c.open && !c.surrogate && !c.carriage) {
		if (!c.differs) {
			*matches = true;
		} else {
			/* whole texts decide: line ends normalised */
			bg_strbuf_reset(&doc);
			rc = render_doc(reg, &doc, NULL, NULL, ctx);
			if (rc == BG_OK)
				*matches = bg_registry_document_matches(c.view.text, c.view.len, doc.buf);
		}
	}
	if (c.open)
		bg_file_view_release(&c.view);
	bg_strbuf_release(&doc);
	return rc;
}

/*
 * Where the text starts once a first line "<!-- Generated by ...; do not
 * edit by hand. -->" is left out: at that line's end (its line break kept),
 * or 0 when there is no such line. Line breaks are "\n", "\r\n" or "\r".
 */
static size_t body_start(const char *s, size_t len)
{
	static const char prefix[] = "<!-- Generated by ", suffix[] = "; do not edit by hand. -->";
	size_t pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1, first = 0;

	while (first < len && s[first] != '\n' && s[first] != '\r')
		first++;
	if (first >= pl + sl && strncmp(s, prefix, pl) == 0 && strncmp(s + first - sl, suffix, sl) == 0)
		return first;
	return 0;
}

/* The next character of s with "\r\n" and "\r" read as "\n" (Python's text
 * mode); -1 at the end. */
static int next_normalised(const char *s, size_t len, size_t *i)
{
	char c;

	if (*i >= len)
		return -1;
	c = s[(*i)++];
	if (c == '\r') {
		if (*i < len && s[*i] == '\n')
			(*i)++;
		return '\n';
	}
	return (unsigned char)c;
}

bool bg_registry_document_matches(const char *on_disk, size_t len, const char *rendered)
{
	size_t rlen = strlen(rendered);
	size_t i = body_start(on_disk, len), j = body_start(rendered, rlen);

	if (memchr(rendered + j, '\r', rlen - j)) /* the file, read in text mode, holds none */
		return false;
	if (!memchr(on_disk + i, '\r', len - i))
		return len - i == rlen - j && memcmp(on_disk + i, rendered + j, len - i) == 0;
	for (;;) {
		int a = next_normalised(on_disk, len, &i), b = j < rlen ? (unsigned char)rendered[j++] : -1;
		if (a != b)
			return false;
		if (a < 0)
			return true;
	}
}
