/*
 * validate.c - the reference's validate_registry: runbooks, measurement rows,
 * gates, then the generated document, each failure worded as the reference
 * words it and in the same order.
 */
#include "benchgate/registry.h"
#include "benchgate/fsutil.h"
#include "core/pyval.h"
#include "core/bigint.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const runbook_required[] = {
	"command", "evidence_level", "owner", "preflight", "required_artifacts",
	"required_environment", "tier", "title", NULL,
};

static const char *const gate_required[] = {
	"cache_state", "computer", "configuration", "detector_bin", "id", "module", "next_gate",
	"operation", "output_detector_columns", "output_detector_rows", "platform", "priority",
	"runbook", "scan_bin", "selected_scan_columns", "selected_scan_rows", "source_detector_columns",
	"source_detector_rows", "source_dtype", "source_scan_columns", "source_scan_rows", "state",
	"timing_boundary", "working_dtype", NULL,
};

static const char *const gate_fields[] = {
	"cache_state", "computer", "configuration", "detector_bin", "id", "module", "next_gate",
	"operation", "output_detector_columns", "output_detector_rows", "platform", "priority",
	"runbook", "scan_bin", "selected_scan_columns", "selected_scan_rows", "source_detector_columns",
	"source_detector_rows", "source_dtype", "source_scan_columns", "source_scan_rows", "state",
	"timing_boundary", "working_dtype", "satisfied_by", "reason",
};
/* The gate fields validation reads, gate_required first (same order); VG_* index them. */
enum { VG_CACHE_STATE, VG_COMPUTER, VG_CONFIGURATION, VG_DETECTOR_BIN, VG_ID, VG_MODULE, VG_NEXT_GATE, VG_OPERATION, VG_OUTPUT_DETECTOR_COLUMNS, VG_OUTPUT_DETECTOR_ROWS, VG_PLATFORM, VG_PRIORITY, VG_RUNBOOK, VG_SCAN_BIN, VG_SELECTED_SCAN_COLUMNS, VG_SELECTED_SCAN_ROWS, VG_SOURCE_DETECTOR_COLUMNS, VG_SOURCE_DETECTOR_ROWS, VG_SOURCE_DTYPE, VG_SOURCE_SCAN_COLUMNS, VG_SOURCE_SCAN_ROWS, VG_STATE, VG_TIMING_BOUNDARY, VG_WORKING_DTYPE, VG_SATISFIED_BY, VG_REASON, VG_NFIELDS };

static const int gate_positive[] = {
	VG_SOURCE_SCAN_ROWS, VG_SOURCE_SCAN_COLUMNS, VG_SELECTED_SCAN_ROWS, VG_SELECTED_SCAN_COLUMNS,
	VG_SOURCE_DETECTOR_ROWS, VG_SOURCE_DETECTOR_COLUMNS, VG_SCAN_BIN, VG_DETECTOR_BIN,
	VG_OUTPUT_DETECTOR_ROWS, VG_OUTPUT_DETECTOR_COLUMNS, -1,
};

/* bg_value_missing_list over projected fields: f[i] is the value of names[i] (NULL when absent). */
static size_t missing_fields(struct bg_strbuf *out, struct bg_value *const *f, const char *const *names)
{
	size_t n = 0;

	bg_strbuf_addch(out, '[');
	for (size_t i = 0; names[i]; i++) {
		if (f[i])
			continue;
		if (n++)
			bg_strbuf_adds(out, ", ");
		bg_value_repr_string(out, names[i], strlen(names[i]));
	}
	bg_strbuf_addch(out, ']');
	return n;
}

static bool full_hex(const struct bg_value *v, size_t len)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	bool ok;

	if (bg_value_is_string(v)) { /* str(v) is v */
		const char *s = bg_value_str(v);
		ok = bg_value_len(v) == len;
		for (size_t i = 0; ok && i < len; i++)
			ok = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
		return ok;
	}
	bg_value_py_str(&sb, v);
	ok = sb.len == len;
	for (size_t i = 0; ok && i < sb.len; i++)
		ok = (sb.buf[i] >= '0' && sb.buf[i] <= '9') || (sb.buf[i] >= 'a' && sb.buf[i] <= 'f');
	bg_strbuf_release(&sb);
	return ok;
}

static bool is_none(const struct bg_value *v)
{
	return !v || bg_value_is_null(v);
}

static bool allowed_state(const struct bg_value *v)
{
	return bg_value_is_string(v) && bg_state_label(bg_value_str(v)) != NULL;
}

/* The runbook rules. BG_ECHECK for a runbook that is not an object: the
 * reference's runbook.get() fails there. */
static int validate_runbooks(struct bg_registry *reg, struct bg_problems *p, struct bg_ctx *ctx)
{
	const char *id;
	struct bg_value *rb;

	BG_VALUE_OBJECT_FOREACH(reg->runbooks, id, rb) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		struct bg_value *command = bg_value_get(rb, "command");

		if (!bg_value_is_object(rb))
			return bg_error(ctx, BG_ECHECK, "%s: runbook '%s' must be an object", reg->display, id);

		if (bg_value_missing_list(&sb, rb, runbook_required))
			bg_problems_add(p, "runbook %s is missing %s", id, sb.buf);
		if (!bg_value_is_string(command) || bg_value_str_blank(command))
			bg_problems_add(p, "runbook %s command must be a nonempty string", id);
		else if (strchr(bg_value_str(command), '\n'))
			bg_problems_add(p, "runbook %s command must stay one line", id);
		if (!bg_value_is_array(bg_value_get(rb, "preflight")))
			bg_problems_add(p, "runbook %s preflight must be a list", id);
		bg_strbuf_release(&sb);
	}
	return BG_OK;
}

static bool finite_number(const struct bg_value *v)
{
	double d;

	if (!bg_value_is_pynumber(v))
		return false;
	bg_value_to_float(v, &d);
	return isfinite(d);
}

/* The row fields validation reads; VM_* index them. */
enum { VM_MID, VM_ID, VM_COMPUTER, VM_STATE, VM_REV, VM_FIXTURE, VM_P50, VM_P95, VM_MAX, VM_PARITY,
       VM_DATE, VM_DEVICE, VM_NFIELDS };
static const char *const row_fields[VM_NFIELDS] = {
	"measurement_id", "id", "computer", "state", "source_revision", "fixture_sha256",
	"p50_seconds", "p95_seconds", "max_seconds", "parity", "tested_date", "device",
};

/* The measurement rules; ids gets every measurement_id, keyed by
 * bg_value_py_key. BG_ECHECK when one cannot be in a set (the reference fails). */
static int validate_measurements(struct bg_registry *reg, struct bg_problems *p, struct bg_arena *a,
				 struct bg_value *ids, struct bg_ctx *ctx)
{
	size_t i, n = bg_value_size(reg->measurements);
	struct bg_strbuf label = BG_STRBUF_INIT, s = BG_STRBUF_INIT;
	struct bg_value_proj proj;
	struct bg_value *row;

	bg_value_proj_init(&proj, row_fields, VM_NFIELDS);
	BG_VALUE_ARRAY_FOREACH(reg->measurements, i, row) {
		struct bg_value *mid = bg_value_get(row, "measurement_id");

		bg_strbuf_reset(&s);
		if (!bg_value_py_key(&s, mid)) {
			bg_strbuf_reset(&s);
			bg_value_py_str(&s, bg_value_get(row, "id"));
			bg_error(ctx, BG_ECHECK, "%s: measurement '%s' has a measurement_id that is %s; "
				 "give it a string id", reg->display, s.buf, bg_value_is_array(mid) ? "a list" : "an object");
			bg_strbuf_release(&label);
			bg_strbuf_release(&s);
			return BG_ECHECK;
		}
		bg_value_set(a, ids, s.buf, bg_value_true());
	}
	if (bg_value_size(ids) != n)
		bg_problems_add(p, "retained measurement IDs must be unique");
	BG_VALUE_ARRAY_FOREACH(reg->measurements, i, row) {
		struct bg_value *f[VM_NFIELDS], *computer, *state, *rev, *fixture;

		bg_value_project(&proj, row, f);
		computer = f[VM_COMPUTER];
		state = f[VM_STATE];
		rev = f[VM_REV];
		fixture = f[VM_FIXTURE];
		bg_strbuf_reset(&label);
		bg_strbuf_adds(&label, "measurement ");
		bg_value_py_str(&label, f[VM_ID]);
		if (!bg_value_is_string(computer) || !bg_config_computer_known(reg->cfg, bg_value_str(computer)))
			bg_problems_add(p, "%s computer must identify a supported hardware configuration", label.buf);
		if (!allowed_state(state)) {
			bg_strbuf_reset(&s);
			bg_value_py_str(&s, state);
			bg_problems_add(p, "%s has invalid state %s", label.buf, s.buf);
		}
		if (!is_none(rev) && !full_hex(rev, 40))
			bg_problems_add(p, "%s source revision must be a full Git SHA", label.buf);
		if (!is_none(fixture) && !full_hex(fixture, 64))
			bg_problems_add(p, "%s fixture SHA-256 is invalid", label.buf);
		if (bg_value_is_string(state) && strcmp(bg_value_str(state), "measured") == 0) {
			for (int k = VM_P50; k <= VM_MAX; k++)
				if (!finite_number(f[k]))
					bg_problems_add(p, "%s measured row lacks finite %s", label.buf, row_fields[k]);
			if (!bg_value_truthy(f[VM_PARITY]))
				bg_problems_add(p, "%s measured row lacks parity", label.buf);
			if (!bg_value_truthy(f[VM_DATE]) || !bg_value_truthy(f[VM_DEVICE]))
				bg_problems_add(p, "%s measured row lacks date or device", label.buf);
		}
	}
	bg_strbuf_release(&label);
	bg_strbuf_release(&s);
	return BG_OK;
}

/* Python's a // b for numbers; false when Python would raise. */
static bool floordiv(struct bg_arena *arena, const struct bg_value *a, const struct bg_value *b,
		     struct bg_value **out)
{
	long long x, y;
	double p, q;

	if (bg_value_is_pyint(a, &x) && bg_value_is_pyint(b, &y)) {
		long long r;
		if (bg_value_is_bigint(a) || bg_value_is_bigint(b) || (x == LLONG_MIN && y == -1)) {
			/* beyond 64 bits, as Python's int goes on */
			struct bg_strbuf ta = BG_STRBUF_INIT, tb = BG_STRBUF_INIT, tq = BG_STRBUF_INIT;
			bool ok;
			bg_value_int_text(a, &ta);
			bg_value_int_text(b, &tb);
			if ((ok = bg_bigint_floordiv(&tq, ta.buf, tb.buf)))
				*out = bg_value_new_int_text(arena, tq.buf);
			bg_strbuf_release(&ta);
			bg_strbuf_release(&tb);
			bg_strbuf_release(&tq);
			return ok;
		}
		if (y == 0)
			return false;
		r = x / y;
		if ((x % y != 0) && ((x < 0) != (y < 0)))
			r--;
		*out = bg_value_new_int(arena, r);
		return true;
	}
	/* a float and an int: the int is converted, which raises beyond a double */
	if (!bg_value_is_pynumber(a) || !bg_value_is_pynumber(b) || !bg_value_to_float(a, &p) ||
	    !bg_value_to_float(b, &q))
		return false;
	if (q == 0.0)
		return false;
	*out = bg_value_new_real(arena, bg_py_floordiv(p, q));
	return true;
}

/* The values of satisfied_by as Python's set() would see them; false when it would raise. */
static bool satisfied_items(struct bg_arena *a, const struct bg_value *v, struct bg_value **out)
{
	*out = bg_value_new_array(a, bg_value_size(v));
	if (!v)
		return true;
	if (bg_value_is_array(v)) {
		size_t i;
		struct bg_value *x;
		BG_VALUE_ARRAY_FOREACH(v, i, x) {
			if (bg_value_is_array(x) || bg_value_is_object(x))
				return false;
			bg_value_append(a, *out, x);
		}
		return true;
	}
	if (bg_value_is_object(v)) {
		const char *k;
		struct bg_value *x;
		BG_VALUE_OBJECT_FOREACH((struct bg_value *)v, k, x)
			bg_value_append(a, *out, bg_value_new_string(a, k));
		return true;
	}
	if (bg_value_is_string(v)) {
		const char *s = bg_value_str(v);
		for (size_t i = 0; s[i];) {
			size_t n = 1;
			unsigned char c = (unsigned char)s[i];
			n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			bg_value_append(a, *out, bg_value_new_stringn(a, s + i, n));
			i += n;
		}
		return true;
	}
	return false;
}

/* Python's < on two unknown satisfied_by ids that sorted() can order:
 * strings by code point, numbers (and true/false) by value. */
static int cmp_sat_id(const void *a, const void *b)
{
	bool type_error = false;

	return bg_value_cmp(*(const struct bg_value *const *)a, *(const struct bg_value *const *)b, &type_error);
}

static void validate_gate(struct bg_registry *reg, struct bg_arena *a, struct bg_value_proj *proj,
			  struct bg_value *gate, struct bg_value *gate_ids, struct bg_value *ids,
			  struct bg_problems *p)
{
	struct bg_strbuf label = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
	struct bg_value *f[VG_NFIELDS], *id, *state, *runbook, *priority, *sat, *items;
	const char *st;
	long long prio;

	bg_value_project(proj, gate, f);
	id = f[VG_ID];
	bg_strbuf_adds(&label, "gate ");
	if (id)
		bg_value_py_str(&label, id);
	else
		bg_strbuf_adds(&label, "<missing>");
	if (missing_fields(&sb, f, gate_required)) {
		bg_problems_add(p, "%s is missing %s", label.buf, sb.buf);
		goto out;
	}
	bg_strbuf_reset(&sb);
	if (!bg_value_py_key(&sb, id)) { /* gate["id"] in gate_ids: TypeError, the reference stops */
		bg_problems_add(p, "%s id must be a string, not %s", label.buf,
				bg_value_is_array(id) ? "a list" : "an object");
		goto out;
	}
	if (bg_value_get(gate_ids, sb.buf)) {
		bg_strbuf_reset(&sb);
		bg_value_py_str(&sb, id);
		bg_problems_add(p, "duplicate gate %s", sb.buf);
	} else {
		bg_value_set(a, gate_ids, sb.buf, bg_value_true());
	}
	{
		struct bg_value *c = f[VG_COMPUTER];
		if (!bg_value_is_string(c) || !bg_config_computer_known(reg->cfg, bg_value_str(c)))
			bg_problems_add(p, "%s computer must identify a supported hardware configuration", label.buf);
	}
	state = f[VG_STATE];
	st = bg_value_is_string(state) ? bg_value_str(state) : "";
	if (!allowed_state(state)) {
		bg_strbuf_reset(&sb);
		bg_value_py_str(&sb, state);
		bg_problems_add(p, "%s has invalid state %s", label.buf, sb.buf);
	}
	runbook = f[VG_RUNBOOK];
	if (!bg_value_is_string(runbook) || !bg_value_get(reg->runbooks, bg_value_str(runbook))) {
		bg_strbuf_reset(&sb);
		bg_value_py_str(&sb, runbook);
		bg_problems_add(p, "%s names unknown runbook %s", label.buf, sb.buf);
	}
	priority = f[VG_PRIORITY];
	if (!bg_value_is_pyint(priority, &prio) || prio < 1 || prio > 5)
		bg_problems_add(p, "%s priority must be an integer from 1 to 5", label.buf);
	for (const int *k = gate_positive; *k >= 0; k++) {
		struct bg_value *v = f[*k];
		long long x;
		if (!is_none(v) && !(bg_value_is_pyint(v, &x) && x > 0))
			bg_problems_add(p, "%s %s must be a positive integer or null", label.buf, gate_fields[*k]);
	}
	{
		struct bg_value *sdr = f[VG_SOURCE_DETECTOR_ROWS];
		struct bg_value *db = f[VG_DETECTOR_BIN];
		if (!is_none(sdr) && !is_none(db)) {
			struct bg_value *er = NULL, *ec = NULL;
			if (floordiv(a, sdr, db, &er) &&
			    floordiv(a, f[VG_SOURCE_DETECTOR_COLUMNS], db, &ec)) {
				if (!bg_value_equal(f[VG_OUTPUT_DETECTOR_ROWS], er))
					bg_problems_add(p, "%s output detector rows do not match detector bin", label.buf);
				if (!bg_value_equal(f[VG_OUTPUT_DETECTOR_COLUMNS], ec))
					bg_problems_add(p, "%s output detector columns do not match detector bin", label.buf);
			}
		}
	}
	sat = f[VG_SATISFIED_BY];
	if (!satisfied_items(a, sat, &items)) {
		bg_problems_add(p, "%s satisfied_by must be a list of measurement ids", label.buf);
	} else {
		size_t i, j, n = 0;
		bool strings = false, numbers = false, none = false;
		struct bg_value *x;
		const struct bg_value **unknown = bg_xcalloc(bg_value_size(items) + 1, sizeof(*unknown));
		struct bg_value *seen = bg_value_new_object(a, 0);

		/* set(satisfied) - measurement_ids, both compared as Python's sets
		 * compare (1, 1.0 and true alike); of equal ids the first is kept */
		BG_VALUE_ARRAY_FOREACH(items, i, x) {
			bg_strbuf_reset(&sb);
			bg_value_py_key(&sb, x); /* satisfied_items holds no list or object */
			if (bg_value_get(ids, sb.buf))
				continue;
			if (bg_value_is_string(x)) {
				if (bg_value_get(seen, bg_value_str(x)))
					continue;
				bg_value_set(a, seen, bg_value_str(x), bg_value_true());
				strings = true;
			} else {
				for (j = 0; j < n && !(!bg_value_is_string(unknown[j]) && bg_value_equal(unknown[j], x)); j++)
					;
				if (j < n)
					continue;
				if (bg_value_is_pynumber(x))
					numbers = true;
				else
					none = true;
			}
			unknown[n++] = x;
		}
		if (n > 1 && (none || (strings && numbers))) {
			/* sorted() raises TypeError: the reference stops here */
			bg_problems_add(p, "%s satisfied_by holds %s, which cannot be sorted; "
					   "name measurements by their id strings", label.buf,
					none ? "null among other unknown ids" : "numbers among unknown id strings");
		} else if (n) {
			qsort(unknown, n, sizeof(*unknown), cmp_sat_id);
			bg_strbuf_reset(&sb);
			bg_strbuf_addch(&sb, '[');
			for (i = 0; i < n; i++) {
				if (i)
					bg_strbuf_adds(&sb, ", ");
				bg_value_py_repr(&sb, unknown[i]);
			}
			bg_strbuf_addch(&sb, ']');
			bg_problems_add(p, "%s names unknown measurements %s", label.buf, sb.buf);
		}
		free((void *)unknown);
	}
	if (strcmp(st, "measured") == 0 && !bg_value_truthy(sat))
		bg_problems_add(p, "%s measured gate needs satisfied_by evidence", label.buf);
	if (bg_state_is_open(st) && bg_value_str_blank(f[VG_NEXT_GATE]))
		bg_problems_add(p, "%s open gate needs a concrete next_gate", label.buf);
	if (strcmp(st, "unsupported") == 0) {
		struct bg_value *reason = f[VG_REASON];
		if (!bg_value_truthy(reason) || bg_value_str_blank(reason))
			bg_problems_add(p, "%s unsupported gate needs a reason", label.buf);
		if (bg_value_truthy(sat))
			bg_problems_add(p, "%s unsupported gate cannot name timing evidence", label.buf);
	}
out:
	bg_strbuf_release(&label);
	bg_strbuf_release(&sb);
}

static void check_render(struct bg_registry *reg, struct bg_problems *p)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	bool matches;

	bg_ctx_init(&ctx);
	bg_config_path(reg->cfg, &path, reg->cfg->generated_path);
	if (!bg_is_file(path.buf)) {
		bg_problems_add(p, "generated benchmark coverage is missing; run benchgate render");
	} else if (bg_registry_render_matches(reg, path.buf, &matches, &ctx)) {
		bg_problems_add(p, "%s", bg_ctx_message(&ctx));
	} else if (!matches) {
		bg_problems_add(p, "generated benchmark coverage is stale; run benchgate render");
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&path);
}

int bg_registry_validate(struct bg_registry *reg, bool render_check, struct bg_problems *p,
			 struct bg_registry_counts *counts, struct bg_ctx *ctx)
{
	struct bg_value *sv = bg_value_get(reg->root, "schema_version");
	struct bg_value *pv = bg_value_get(reg->root, "protocol_version");
	const char *want = reg->cfg->registry_protocol;
	struct bg_value *ids, *gate_ids;
	size_t i;
	struct bg_value *gate;
	int rc;

	struct bg_value one = {BG_VINT, 0, 0, 0, {.i = 1}};
	struct bg_value_proj proj;
	bool schema_ok = sv && bg_value_equal(sv, &one);
	struct bg_arena *a;

	if (!schema_ok)
		bg_problems_add(p, "benchmark registry schema_version must be 1");
	if (want && !(bg_value_is_string(pv) && strcmp(bg_value_str(pv), want) == 0)) {
		size_t n = strlen(want);
		if (n >= 3 && strcmp(want + n - 3, "/v1") == 0)
			bg_problems_add(p, "benchmark registry protocol_version must be frozen at v1");
		else
			bg_problems_add(p, "benchmark registry protocol_version must be frozen at %s", want);
	}
	if ((rc = bg_registry_runbooks_ok(reg, ctx)))
		return bg_error(ctx, rc, "%s: %s", reg->display, bg_ctx_message(ctx));
	if ((rc = validate_runbooks(reg, p, ctx)) ||
	    (rc = bg_registry_resolve_measurements(reg, ctx)))
		return rc;
	a = bg_arena_new(); /* scratch: id sets and intermediate values */
	ids = bg_value_new_object(a, bg_value_size(reg->measurements));
	if ((rc = validate_measurements(reg, p, a, ids, ctx))) {
		bg_arena_free(a);
		return rc;
	}
	gate_ids = bg_value_new_object(a, bg_value_size(reg->gates));
	bg_value_proj_init(&proj, gate_fields, VG_NFIELDS);
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate)
		validate_gate(reg, a, &proj, gate, gate_ids, ids, p);
	bg_arena_free(a);
	if (render_check)
		check_render(reg, p);
	if (counts) {
		counts->gates = bg_value_size(reg->gates);
		counts->measurements = bg_value_size(reg->measurements);
		counts->runbooks = bg_value_size(reg->runbooks);
	}
	return BG_OK;
}
