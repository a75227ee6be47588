/*
 * validate.c - the reference's validate_registry: runbooks, measurement rows,
 * gates, then the generated document, each failure worded as the reference
 * words it and in the same order.
 */
#include "benchgate/registry.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "core/pyval.h"

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

static const char *const gate_positive[] = {
	"source_scan_rows", "source_scan_columns", "selected_scan_rows", "selected_scan_columns",
	"source_detector_rows", "source_detector_columns", "scan_bin", "detector_bin",
	"output_detector_rows", "output_detector_columns", NULL,
};

/* Appends "['a', 'b']" for the names (already sorted) missing from obj; returns how many. */
static size_t missing_list(struct bg_strbuf *out, const json_t *obj, const char *const *names)
{
	size_t n = 0;

	bg_strbuf_addch(out, '[');
	for (const char *const *k = names; *k; k++) {
		if (json_object_get(obj, *k))
			continue;
		if (n++)
			bg_strbuf_adds(out, ", ");
		bg_py_repr_string(out, *k, strlen(*k));
	}
	bg_strbuf_addch(out, ']');
	return n;
}

static bool full_hex(const json_t *v, size_t len)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	bool ok;

	bg_py_str(&sb, v);
	ok = sb.len == len;
	for (size_t i = 0; ok && i < sb.len; i++)
		ok = (sb.buf[i] >= '0' && sb.buf[i] <= '9') || (sb.buf[i] >= 'a' && sb.buf[i] <= 'f');
	bg_strbuf_release(&sb);
	return ok;
}

static bool is_none(const json_t *v)
{
	return !v || json_is_null(v);
}

static bool allowed_state(const json_t *v)
{
	return json_is_string(v) && bg_state_label(json_string_value(v)) != NULL;
}

static void validate_runbooks(struct bg_registry *reg, struct bg_problems *p)
{
	const char *id;
	json_t *rb;

	json_object_foreach(reg->runbooks, id, rb) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		json_t *command = json_object_get(rb, "command");

		if (missing_list(&sb, rb, runbook_required))
			bg_problems_add(p, "runbook %s is missing %s", id, sb.buf);
		if (!json_is_string(command) || bg_py_str_blank(command))
			bg_problems_add(p, "runbook %s command must be a nonempty string", id);
		else if (strchr(json_string_value(command), '\n'))
			bg_problems_add(p, "runbook %s command must stay one line", id);
		if (!json_is_array(json_object_get(rb, "preflight")))
			bg_problems_add(p, "runbook %s preflight must be a list", id);
		bg_strbuf_release(&sb);
	}
}

static bool finite_number(const json_t *v)
{
	double d;

	if (!bg_py_is_number(v))
		return false;
	bg_py_to_float(v, &d);
	return isfinite(d);
}

static void validate_measurements(struct bg_registry *reg, struct bg_problems *p, json_t *ids)
{
	size_t i, n = json_array_size(reg->measurements);
	json_t *row;

	json_array_foreach(reg->measurements, i, row) {
		struct bg_strbuf s = BG_STRBUF_INIT;
		json_t *mid = json_object_get(row, "measurement_id");

		bg_py_str(&s, mid);
		json_object_set_new(ids, s.buf, json_true());
		bg_strbuf_release(&s);
	}
	if (json_object_size(ids) != n)
		bg_problems_add(p, "retained measurement IDs must be unique");
	json_array_foreach(reg->measurements, i, row) {
		struct bg_strbuf label = BG_STRBUF_INIT, s = BG_STRBUF_INIT;
		json_t *computer = json_object_get(row, "computer"), *state = json_object_get(row, "state");
		json_t *rev = json_object_get(row, "source_revision");
		json_t *fixture = json_object_get(row, "fixture_sha256");

		bg_strbuf_adds(&label, "measurement ");
		bg_py_str(&label, json_object_get(row, "id"));
		if (!json_is_string(computer) || !bg_config_computer_known(reg->cfg, json_string_value(computer)))
			bg_problems_add(p, "%s computer must identify a supported hardware configuration", label.buf);
		if (!allowed_state(state)) {
			bg_py_str(&s, state);
			bg_problems_add(p, "%s has invalid state %s", label.buf, s.buf);
		}
		if (!is_none(rev) && !full_hex(rev, 40))
			bg_problems_add(p, "%s source revision must be a full Git SHA", label.buf);
		if (!is_none(fixture) && !full_hex(fixture, 64))
			bg_problems_add(p, "%s fixture SHA-256 is invalid", label.buf);
		if (json_is_string(state) && strcmp(json_string_value(state), "measured") == 0) {
			static const char *const timing[] = {"p50_seconds", "p95_seconds", "max_seconds"};
			for (int k = 0; k < 3; k++)
				if (!finite_number(json_object_get(row, timing[k])))
					bg_problems_add(p, "%s measured row lacks finite %s", label.buf, timing[k]);
			if (!bg_py_truthy(json_object_get(row, "parity")))
				bg_problems_add(p, "%s measured row lacks parity", label.buf);
			if (!bg_py_truthy(json_object_get(row, "tested_date")) ||
			    !bg_py_truthy(json_object_get(row, "device")))
				bg_problems_add(p, "%s measured row lacks date or device", label.buf);
		}
		bg_strbuf_release(&label);
		bg_strbuf_release(&s);
	}
}

/* Python's a // b for numbers; false when Python would raise. */
static bool floordiv(const json_t *a, const json_t *b, json_t **out)
{
	long long x, y;
	double p, q;

	if (bg_py_is_int(a, &x) && bg_py_is_int(b, &y)) {
		long long r;
		if (y == 0)
			return false;
		r = x / y;
		if ((x % y != 0) && ((x < 0) != (y < 0)))
			r--;
		*out = json_integer(r);
		return true;
	}
	if (!bg_py_is_number(a) || !bg_py_is_number(b))
		return false;
	bg_py_to_float(a, &p);
	bg_py_to_float(b, &q);
	if (q == 0.0)
		return false;
	*out = json_real(floor(p / q));
	return true;
}

/* The values of satisfied_by as Python's set() would see them; false when it would raise. */
static bool satisfied_items(const json_t *v, json_t **out)
{
	*out = json_array();
	if (!v)
		return true;
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (json_is_array(x) || json_is_object(x))
				return false;
			json_array_append(*out, x);
		}
		return true;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			json_array_append_new(*out, json_string(k));
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		for (size_t i = 0; s[i];) {
			size_t n = 1;
			unsigned char c = (unsigned char)s[i];
			n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			json_array_append_new(*out, json_stringn(s + i, n));
			i += n;
		}
		return true;
	}
	return false;
}

static int cmp_json_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void validate_gate(struct bg_registry *reg, json_t *gate, json_t *gate_ids, json_t *ids,
			  struct bg_problems *p)
{
	struct bg_strbuf label = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
	json_t *id = json_object_get(gate, "id"), *state, *runbook, *priority, *sat, *items;
	const char *st;
	long long prio;

	bg_strbuf_adds(&label, "gate ");
	if (id)
		bg_py_str(&label, id);
	else
		bg_strbuf_adds(&label, "<missing>");
	if (missing_list(&sb, gate, gate_required)) {
		bg_problems_add(p, "%s is missing %s", label.buf, sb.buf);
		goto out;
	}
	bg_strbuf_reset(&sb);
	bg_py_str(&sb, id);
	if (json_object_get(gate_ids, sb.buf))
		bg_problems_add(p, "duplicate gate %s", sb.buf);
	json_object_set_new(gate_ids, sb.buf, json_true());
	{
		json_t *c = json_object_get(gate, "computer");
		if (!json_is_string(c) || !bg_config_computer_known(reg->cfg, json_string_value(c)))
			bg_problems_add(p, "%s computer must identify a supported hardware configuration", label.buf);
	}
	state = json_object_get(gate, "state");
	st = json_is_string(state) ? json_string_value(state) : "";
	if (!allowed_state(state)) {
		bg_strbuf_reset(&sb);
		bg_py_str(&sb, state);
		bg_problems_add(p, "%s has invalid state %s", label.buf, sb.buf);
	}
	runbook = json_object_get(gate, "runbook");
	if (!json_is_string(runbook) || !json_object_get(reg->runbooks, json_string_value(runbook))) {
		bg_strbuf_reset(&sb);
		bg_py_str(&sb, runbook);
		bg_problems_add(p, "%s names unknown runbook %s", label.buf, sb.buf);
	}
	priority = json_object_get(gate, "priority");
	if (!bg_py_is_int(priority, &prio) || prio < 1 || prio > 5)
		bg_problems_add(p, "%s priority must be an integer from 1 to 5", label.buf);
	for (const char *const *f = gate_positive; *f; f++) {
		json_t *v = json_object_get(gate, *f);
		long long x;
		if (!is_none(v) && !(bg_py_is_int(v, &x) && x > 0))
			bg_problems_add(p, "%s %s must be a positive integer or null", label.buf, *f);
	}
	{
		json_t *sdr = json_object_get(gate, "source_detector_rows");
		json_t *db = json_object_get(gate, "detector_bin");
		if (!is_none(sdr) && !is_none(db)) {
			json_t *er = NULL, *ec = NULL;
			if (floordiv(sdr, db, &er) && floordiv(json_object_get(gate, "source_detector_columns"), db, &ec)) {
				if (!bg_py_equal(json_object_get(gate, "output_detector_rows"), er))
					bg_problems_add(p, "%s output detector rows do not match detector bin", label.buf);
				if (!bg_py_equal(json_object_get(gate, "output_detector_columns"), ec))
					bg_problems_add(p, "%s output detector columns do not match detector bin", label.buf);
			}
			json_decref(er);
			json_decref(ec);
		}
	}
	sat = json_object_get(gate, "satisfied_by");
	if (!satisfied_items(sat, &items)) {
		bg_problems_add(p, "%s satisfied_by must be a list of measurement ids", label.buf);
	} else {
		size_t i, n = 0;
		json_t *x;
		const char **unknown = bg_xcalloc(json_array_size(items) + 1, sizeof(*unknown));
		json_t *seen = json_object();

		json_array_foreach(items, i, x) {
			if (!json_is_string(x)) {
				/* a non-string id can never match; shown as its repr */
				continue;
			}
			if (!json_object_get(ids, json_string_value(x)) &&
			    !json_object_get(seen, json_string_value(x))) {
				json_object_set_new(seen, json_string_value(x), json_true());
				unknown[n++] = json_string_value(x);
			}
		}
		if (n) {
			qsort(unknown, n, sizeof(*unknown), cmp_json_str);
			bg_strbuf_reset(&sb);
			bg_strbuf_addch(&sb, '[');
			for (i = 0; i < n; i++) {
				if (i)
					bg_strbuf_adds(&sb, ", ");
				bg_py_repr_string(&sb, unknown[i], strlen(unknown[i]));
			}
			bg_strbuf_addch(&sb, ']');
			bg_problems_add(p, "%s names unknown measurements %s", label.buf, sb.buf);
		}
		free(unknown);
		json_decref(seen);
	}
	json_decref(items);
	if (strcmp(st, "measured") == 0 && !bg_py_truthy(sat))
		bg_problems_add(p, "%s measured gate needs satisfied_by evidence", label.buf);
	if (bg_state_is_open(st) && bg_py_str_blank(json_object_get(gate, "next_gate")))
		bg_problems_add(p, "%s open gate needs a concrete next_gate", label.buf);
	if (strcmp(st, "unsupported") == 0) {
		json_t *reason = json_object_get(gate, "reason");
		if (!bg_py_truthy(reason) || bg_py_str_blank(reason))
			bg_problems_add(p, "%s unsupported gate needs a reason", label.buf);
		if (bg_py_truthy(sat))
			bg_problems_add(p, "%s unsupported gate cannot name timing evidence", label.buf);
	}
out:
	bg_strbuf_release(&label);
	bg_strbuf_release(&sb);
}

static void check_render(struct bg_registry *reg, struct bg_problems *p)
{
	struct bg_strbuf path = BG_STRBUF_INIT, disk = BG_STRBUF_INIT, doc = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	bg_config_path(reg->cfg, &path, reg->cfg->generated_path);
	if (!bg_is_file(path.buf)) {
		bg_problems_add(p, "generated benchmark coverage is missing; run benchgate render");
	} else if (bg_registry_render(reg, &doc, &ctx)) {
		bg_problems_add(p, "%s", bg_ctx_message(&ctx));
	} else if (bg_file_read(path.buf, reg->cfg->generated_path, &disk, &ctx) ||
		   !bg_registry_document_matches(disk.buf, disk.len, doc.buf)) {
		bg_problems_add(p, "generated benchmark coverage is stale; run benchgate render");
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&path);
	bg_strbuf_release(&disk);
	bg_strbuf_release(&doc);
}

int bg_registry_validate(struct bg_registry *reg, bool render_check, struct bg_problems *p,
			 struct bg_registry_counts *counts, struct bg_ctx *ctx)
{
	json_t *sv = json_object_get(reg->root, "schema_version");
	json_t *pv = json_object_get(reg->root, "protocol_version");
	const char *want = reg->cfg->registry_protocol;
	json_t *ids, *gate_ids;
	size_t i;
	json_t *gate;
	int rc;

	json_t *one = json_integer(1);
	bool schema_ok = sv && bg_py_equal(sv, one);

	json_decref(one);
	if (!schema_ok)
		bg_problems_add(p, "benchmark registry schema_version must be 1");
	if (want && !(json_is_string(pv) && strcmp(json_string_value(pv), want) == 0)) {
		size_t n = strlen(want);
		if (n >= 3 && strcmp(want + n - 3, "/v1") == 0)
			bg_problems_add(p, "benchmark registry protocol_version must be frozen at v1");
		else
			bg_problems_add(p, "benchmark registry protocol_version must be frozen at %s", want);
	}
	validate_runbooks(reg, p);
	if ((rc = bg_registry_resolve_measurements(reg, ctx)))
		return rc;
	ids = json_object();
	validate_measurements(reg, p, ids);
	gate_ids = json_object();
	json_array_foreach(reg->gates, i, gate)
		validate_gate(reg, gate, gate_ids, ids, p);
	json_decref(ids);
	json_decref(gate_ids);
	if (render_check)
		check_render(reg, p);
	if (counts) {
		counts->gates = json_array_size(reg->gates);
		counts->measurements = json_array_size(reg->measurements);
		counts->runbooks = json_object_size(reg->runbooks);
	}
	return BG_OK;
}
