/*
 * load.c - reading the registry, overlaying configurations on gates, and
 * resolving measurement rows from evidence imports and additional
 * measurements exactly as the reference's resolved_gates and
 * resolved_measurements do.
 */
#include "benchgate/registry.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "core/pyval.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bg_problems_add(struct bg_problems *p, const char *fmt, ...)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	bg_strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 16;
		p->items = bg_xrealloc(p->items, p->cap * sizeof(*p->items));
	}
	p->items[p->n++] = bg_strbuf_detach(&sb, NULL);
}

void bg_problems_release(struct bg_problems *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->items[i]);
	free(p->items);
	memset(p, 0, sizeof(*p));
}

static int resolve_gates(struct bg_registry *reg, struct bg_ctx *ctx)
{
	json_t *gates = json_object_get(reg->root, "gates");
	json_t *configs = json_object_get(reg->root, "configurations");
	size_t i;
	json_t *gate;

	reg->gates = json_array();
	if (!gates)
		return BG_OK;
	if (!json_is_array(gates))
		return bg_error(ctx, BG_ECHECK, "%s: 'gates' must be a list of objects", reg->display);
	if (configs && !json_is_object(configs))
		return bg_error(ctx, BG_ECHECK, "%s: 'configurations' must be an object", reg->display);
	json_array_foreach(gates, i, gate) {
		json_t *resolved, *key, *base = NULL;

		if (!json_is_object(gate))
			return bg_error(ctx, BG_ECHECK, "%s: gates[%zu] must be an object", reg->display, i);
		key = json_object_get(gate, "configuration");
		if (key && (json_is_array(key) || json_is_object(key)))
			return bg_error(ctx, BG_ECHECK,
					"%s: gates[%zu]: 'configuration' must name a configuration",
					reg->display, i);
		if (key && json_is_string(key) && configs)
			base = json_object_get(configs, json_string_value(key));
		if (base && !json_is_object(base))
			return bg_error(ctx, BG_ECHECK, "%s: configuration '%s' must be an object",
					reg->display, json_string_value(key));
		resolved = json_object();
		if (base)
			json_object_update(resolved, base);
		json_object_update(resolved, gate);
		json_array_append_new(reg->gates, resolved);
	}
	return BG_OK;
}

static int finish_load(struct bg_registry *reg, struct bg_ctx *ctx)
{
	json_t *runbooks;
	const char *k;
	json_t *rb;
	int rc;

	if ((rc = bg_json_expect_object(reg->root, reg->display, ctx)))
		return rc;
	runbooks = json_object_get(reg->root, "runbooks");
	if (runbooks && !json_is_object(runbooks))
		return bg_error(ctx, BG_ECHECK, "%s: 'runbooks' must be an object", reg->display);
	reg->runbooks = runbooks ? json_incref(runbooks) : json_object();
	json_object_foreach(reg->runbooks, k, rb) {
		if (!json_is_object(rb))
			return bg_error(ctx, BG_ECHECK, "%s: runbook '%s' must be an object", reg->display, k);
	}
	return resolve_gates(reg, ctx);
}

int bg_registry_load(struct bg_registry *reg, const struct bg_config *cfg, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	memset(reg, 0, sizeof(*reg));
	reg->cfg = cfg;
	reg->display = bg_xstrdup(cfg->registry_path);
	bg_config_path(cfg, &path, cfg->registry_path);
	rc = bg_json_load_file(path.buf, reg->display, &reg->root, ctx);
	bg_strbuf_release(&path);
	if (rc)
		return rc;
	return finish_load(reg, ctx);
}

int bg_registry_load_buffer(struct bg_registry *reg, const struct bg_config *cfg, const char *data,
			    size_t len, const char *display, struct bg_ctx *ctx)
{
	int rc;

	memset(reg, 0, sizeof(*reg));
	reg->cfg = cfg;
	reg->display = bg_xstrdup(display);
	if ((rc = bg_json_load_buffer(data, len, display, &reg->root, ctx)))
		return rc;
	return finish_load(reg, ctx);
}

void bg_registry_release(struct bg_registry *reg)
{
	free(reg->display);
	json_decref(reg->root);
	json_decref(reg->runbooks);
	json_decref(reg->gates);
	json_decref(reg->measurements);
	memset(reg, 0, sizeof(*reg));
}

/* str(v or default) */
static void str_or(struct bg_strbuf *out, const json_t *v, const char *def)
{
	if (bg_py_truthy(v))
		bg_py_str(out, v);
	else
		bg_strbuf_adds(out, def);
}

/* The reference's _computer_label; the result is a new string. */
static json_t *computer_label(const struct bg_config *cfg, const json_t *device, const json_t *current)
{
	struct bg_strbuf cur = BG_STRBUF_INIT, dev = BG_STRBUF_INIT;
	json_t *out;

	str_or(&cur, current, "");
	str_or(&dev, device, "");
	out = json_string(bg_config_computer_label(cfg, dev.buf, cur.buf));
	bg_strbuf_release(&cur);
	bg_strbuf_release(&dev);
	return out;
}

/* The reference's _public_measurement_id; with no computers configured the id is kept. */
static void public_id(struct bg_strbuf *out, const struct bg_config *cfg, const json_t *raw,
		      const char *computer)
{
	struct bg_strbuf value = BG_STRBUF_INIT;
	const char *slug, *dash;
	size_t slen;

	str_or(&value, raw, "");
	if (cfg->ncomputers == 0) {
		bg_strbuf_addn(out, value.buf, value.len);
		bg_strbuf_release(&value);
		return;
	}
	slug = bg_config_computer_slug(cfg, computer);
	if (!slug)
		slug = "unspecified-device";
	slen = strlen(slug);
	if (strncmp(value.buf, slug, slen) == 0 && value.buf[slen] == '-') {
		bg_strbuf_addn(out, value.buf, value.len);
	} else {
		dash = strchr(value.buf, '-');
		bg_strbuf_addf(out, "%s-%s", slug, dash ? dash + 1 : value.buf);
	}
	bg_strbuf_release(&value);
}

static json_t *get_or_null(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return v ? json_incref(v) : json_null();
}

static bool is_none(const json_t *v)
{
	return !v || json_is_null(v);
}

static const char *measurement_state(const json_t *m)
{
	struct bg_strbuf parity = BG_STRBUF_INIT, lower = BG_STRBUF_INIT;
	bool timing = !is_none(json_object_get(m, "wall_p50_seconds")) &&
		      !is_none(json_object_get(m, "wall_p95_seconds")) &&
		      !is_none(json_object_get(m, "wall_max_seconds"));
	const char *state = "partial";

	str_or(&parity, json_object_get(m, "parity"), "");
	bg_py_lower(&lower, parity.buf);
	if (timing && lower.len && !strstr(lower.buf, "not performed") && !strstr(lower.buf, "incomplete"))
		state = "measured";
	bg_strbuf_release(&parity);
	bg_strbuf_release(&lower);
	return state;
}

static int selected_extent(const json_t *m, const char *start_key, const char *stop_key,
			   const char *fallback, json_t **out)
{
	json_t *start = json_object_get(m, start_key), *stop = json_object_get(m, stop_key);
	long long a, b;

	if (!is_none(start) && !is_none(stop)) {
		if (!bg_py_to_int(start, &a) || !bg_py_to_int(stop, &b))
			return -1;
		*out = json_integer(b - a);
		return 0;
	}
	*out = get_or_null(m, fallback);
	return 0;
}

static int measurement_row(const struct bg_registry *reg, const json_t *m, const char *evidence_path,
			   const json_t *artifacts, const json_t *overrides, size_t index, json_t **out,
			   struct bg_ctx *ctx)
{
	const struct bg_config *cfg = reg->cfg;
	struct bg_strbuf sb = BG_STRBUF_INIT, pid = BG_STRBUF_INIT;
	json_t *row = json_object(), *artifact = NULL, *computer, *override;
	json_t *id = json_object_get(m, "id");
	json_t *rows, *cols, *peak, *rev;
	const char *label;

	*out = NULL;
	if (!id) {
		json_decref(row);
		return bg_error(ctx, BG_ECHECK, "%s: measurements[%zu] has no 'id'", evidence_path, index);
	}
	bg_py_str(&sb, json_object_get(m, "artifact_id"));
	{
		size_t i;
		json_t *item;
		json_array_foreach(artifacts, i, item) {
			json_t *aid = json_object_get(item, "id");
			if (json_is_string(aid) && strcmp(json_string_value(aid), sb.buf) == 0)
				artifact = item;
		}
	}
	bg_strbuf_reset(&sb);
	if (selected_extent(m, "selected_scan_row_start", "selected_scan_row_stop", "source_scan_rows", &rows) ||
	    selected_extent(m, "selected_scan_column_start", "selected_scan_column_stop",
			    "source_scan_columns", &cols)) {
		json_decref(row);
		bg_py_str(&sb, id);
		bg_error(ctx, BG_ECHECK, "%s: measurement '%s': selected scan bounds must be integers",
			 evidence_path, sb.buf);
		bg_strbuf_release(&sb);
		return BG_ECHECK;
	}
	str_or(&sb, json_object_get(m, "functional_area"), "");
	label = bg_config_module_label(cfg, sb.buf);
	if (label) {
		json_object_set_new(row, "module", json_string(label));
	} else {
		bg_strbuf_reset(&sb);
		str_or(&sb, json_object_get(m, "functional_area"), "Unclassified");
		json_object_set_new(row, "module", json_string(sb.buf));
	}
	bg_strbuf_reset(&sb);
	str_or(&sb, json_object_get(m, "functional_area"), "measurement");
	json_object_set_new(row, "operation", json_string(sb.buf));
	bg_strbuf_reset(&sb);
	str_or(&sb, json_object_get(m, "platform"), "");
	label = bg_config_platform_label(cfg, sb.buf);
	json_object_set_new(row, "platform", json_string(label ? label : sb.buf));

	peak = json_object_get(m, "process_peak_rss_bytes");
	if (is_none(peak))
		peak = json_object_get(m, "host_peak_rss_p50_bytes");
	if (is_none(peak))
		peak = json_object_get(m, "process_rss_p50_bytes");
	if (!is_none(json_object_get(m, "browser_tree_peak_rss_bytes")))
		peak = json_object_get(m, "browser_tree_peak_rss_bytes");
	rev = artifact ? json_object_get(artifact, "implementation_revision") : NULL;
	if (!bg_py_truthy(rev))
		rev = artifact ? json_object_get(artifact, "observed_head") : NULL;

	computer = computer_label(cfg, json_object_get(m, "device"), json_object_get(m, "computer"));
	public_id(&pid, cfg, id, json_string_value(computer));
	bg_strbuf_reset(&sb);
	bg_strbuf_addf(&sb, "evidence::%s", pid.buf);
	json_object_set_new(row, "id", json_string(sb.buf));
	json_object_set_new(row, "measurement_id", json_string(pid.buf));
	json_object_set_new(row, "computer", computer);
	json_object_set_new(row, "device", get_or_null(m, "device"));
	json_object_set_new(row, "source_scan_rows", get_or_null(m, "source_scan_rows"));
	json_object_set_new(row, "source_scan_columns", get_or_null(m, "source_scan_columns"));
	json_object_set_new(row, "selected_scan_rows", rows);
	json_object_set_new(row, "selected_scan_columns", cols);
	json_object_set_new(row, "source_detector_rows", get_or_null(m, "source_detector_rows"));
	json_object_set_new(row, "source_detector_columns", get_or_null(m, "source_detector_columns"));
	json_object_set_new(row, "scan_bin", get_or_null(m, "scan_bin"));
	json_object_set_new(row, "detector_bin", get_or_null(m, "detector_bin"));
	json_object_set_new(row, "output_detector_rows", get_or_null(m, "working_detector_rows"));
	json_object_set_new(row, "output_detector_columns", get_or_null(m, "working_detector_columns"));
	json_object_set_new(row, "source_dtype", get_or_null(m, "source_dtype"));
	json_object_set_new(row, "working_dtype", get_or_null(m, "working_dtype"));
	json_object_set_new(row, "cache_state", get_or_null(m, "cache_state"));
	json_object_set_new(row, "timing_boundary", get_or_null(m, "timing_boundary"));
	json_object_set_new(row, "sample_count", get_or_null(m, "sample_count"));
	json_object_set_new(row, "p50_seconds", get_or_null(m, "wall_p50_seconds"));
	json_object_set_new(row, "p95_seconds", get_or_null(m, "wall_p95_seconds"));
	json_object_set_new(row, "max_seconds", get_or_null(m, "wall_max_seconds"));
	json_object_set_new(row, "logical_resident_bytes", get_or_null(m, "logical_resident_bytes"));
	json_object_set_new(row, "driver_allocated_after_load_bytes",
			    get_or_null(m, "driver_allocated_after_load_bytes"));
	json_object_set_new(row, "driver_allocated_after_release_bytes",
			    get_or_null(m, "driver_allocated_after_release_bytes"));
	json_object_set_new(row, "accelerator_peak_bytes", get_or_null(m, "accelerator_peak_bytes"));
	json_object_set_new(row, "total_device_peak_bytes", get_or_null(m, "total_card_peak_bytes"));
	json_object_set_new(row, "process_tree_peak_bytes", peak ? json_incref(peak) : json_null());
	json_object_set_new(row, "swap_delta_bytes", get_or_null(m, "swap_delta_bytes"));
	json_object_set_new(row, "parity", get_or_null(m, "parity"));
	json_object_set_new(row, "state", json_string(measurement_state(m)));
	json_object_set_new(row, "tested_date", get_or_null(m, "date"));
	json_object_set_new(row, "source_revision", rev ? json_incref(rev) : json_null());
	json_object_set_new(row, "fixture_id", get_or_null(m, "fixture_id"));
	json_object_set_new(row, "fixture_sha256", get_or_null(m, "fixture_sha256"));
	bg_strbuf_reset(&sb);
	bg_strbuf_addf(&sb, "%s#", evidence_path);
	bg_py_str(&sb, id);
	json_object_set_new(row, "evidence", json_string(sb.buf));
	json_object_set_new(row, "artifact_id", get_or_null(m, "artifact_id"));

	override = overrides ? json_object_get(overrides, pid.buf) : NULL;
	if (bg_py_truthy(override)) {
		if (!json_is_object(override)) {
			bg_error(ctx, BG_ECHECK, "%s: measurement_overrides['%s'] must be an object",
				 reg->display, pid.buf);
			json_decref(row);
			bg_strbuf_release(&sb);
			bg_strbuf_release(&pid);
			return BG_ECHECK;
		}
		json_object_update(row, override);
	}
	bg_strbuf_release(&sb);
	bg_strbuf_release(&pid);
	*out = row;
	return BG_OK;
}

static int import_evidence(struct bg_registry *reg, const json_t *source, size_t index, json_t *rows,
			   struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	json_t *rel, *evidence = NULL, *artifacts, *measurements, *overrides, *m;
	const char *display;
	size_t i;
	int rc;

	if (!json_is_object(source))
		return bg_error(ctx, BG_ECHECK, "%s: evidence_imports[%zu] must be an object", reg->display, index);
	rel = json_object_get(source, "path");
	if (!json_is_string(rel))
		return bg_error(ctx, BG_ECHECK, "%s: evidence_imports[%zu] needs a string 'path'",
				reg->display, index);
	display = json_string_value(rel);
	bg_config_path(reg->cfg, &path, display);
	rc = bg_json_load_file(path.buf, display, &evidence, ctx);
	bg_strbuf_release(&path);
	if (rc) {
		if (rc == BG_EIO) {
			char *msg = bg_xstrdup(bg_ctx_message(ctx));
			bg_error(ctx, BG_EIO, "%s (named by evidence_imports[%zu] of %s)", msg, index, reg->display);
			free(msg);
		}
		return rc;
	}
	rc = BG_ECHECK;
	if (!json_is_object(evidence)) {
		bg_error(ctx, rc, "%s: top level must be a JSON object", display);
		goto out;
	}
	artifacts = json_object_get(evidence, "artifacts");
	measurements = json_object_get(evidence, "measurements");
	overrides = json_object_get(source, "measurement_overrides");
	if (artifacts && !json_is_array(artifacts)) {
		bg_error(ctx, rc, "%s: 'artifacts' must be a list", display);
		goto out;
	}
	if (measurements && !json_is_array(measurements)) {
		bg_error(ctx, rc, "%s: 'measurements' must be a list", display);
		goto out;
	}
	if (overrides && !json_is_object(overrides)) {
		bg_error(ctx, rc, "%s: evidence_imports[%zu].measurement_overrides must be an object",
			 reg->display, index);
		goto out;
	}
	json_array_foreach(artifacts, i, m) {
		if (!json_is_object(m) || !json_object_get(m, "id")) {
			bg_error(ctx, rc, "%s: artifacts[%zu] must be an object with an 'id'", display, i);
			goto out;
		}
	}
	json_array_foreach(measurements, i, m) {
		json_t *row;

		if (!json_is_object(m)) {
			bg_error(ctx, rc, "%s: measurements[%zu] must be an object", display, i);
			goto out;
		}
		if (measurement_row(reg, m, display, artifacts, overrides, i, &row, ctx))
			goto out;
		json_array_append_new(rows, row);
	}
	rc = BG_OK;
out:
	json_decref(evidence);
	return rc;
}

static int cmp_row_id(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	int c = strcmp(json_string_value(json_object_get(x[0], "id")),
		       json_string_value(json_object_get(y[0], "id")));

	if (c)
		return c;
	return x[1] < y[1] ? -1 : x[1] > y[1]; /* stable: x[1] is the original index */
}

int bg_registry_resolve_measurements(struct bg_registry *reg, struct bg_ctx *ctx)
{
	json_t *imports = json_object_get(reg->root, "evidence_imports");
	json_t *extra = json_object_get(reg->root, "additional_measurements");
	json_t *rows, *item;
	const json_t **pairs;
	size_t i, n;
	int rc;

	if (reg->measurements)
		return BG_OK;
	rows = json_array();
	if (imports && !json_is_array(imports)) {
		json_decref(rows);
		return bg_error(ctx, BG_ECHECK, "%s: 'evidence_imports' must be a list", reg->display);
	}
	json_array_foreach(imports, i, item) {
		if ((rc = import_evidence(reg, item, i, rows, ctx))) {
			json_decref(rows);
			return rc;
		}
	}
	if (extra && !json_is_array(extra)) {
		json_decref(rows);
		return bg_error(ctx, BG_ECHECK, "%s: 'additional_measurements' must be a list", reg->display);
	}
	json_array_foreach(extra, i, item) {
		struct bg_strbuf pid = BG_STRBUF_INIT, id = BG_STRBUF_INIT;
		json_t *row, *computer;

		if (!json_is_object(item)) {
			json_decref(rows);
			return bg_error(ctx, BG_ECHECK, "%s: additional_measurements[%zu] must be an object",
					reg->display, i);
		}
		row = json_copy(item);
		computer = computer_label(reg->cfg, json_object_get(row, "device"), json_object_get(row, "computer"));
		json_object_set_new(row, "computer", computer);
		public_id(&pid, reg->cfg, json_object_get(row, "measurement_id"), json_string_value(computer));
		bg_strbuf_addf(&id, "evidence::%s", pid.buf);
		json_object_set_new(row, "measurement_id", json_string(pid.buf));
		json_object_set_new(row, "id", json_string(id.buf));
		bg_strbuf_release(&pid);
		bg_strbuf_release(&id);
		json_array_append_new(rows, row);
	}
	/* sorted(rows, key=lambda row: str(row["id"])) -- overrides may change "id" */
	n = json_array_size(rows);
	json_array_foreach(rows, i, item) {
		json_t *idv = json_object_get(item, "id");
		if (!json_is_string(idv)) {
			struct bg_strbuf sb = BG_STRBUF_INIT;
			bg_py_str(&sb, idv);
			json_object_set_new(item, "id", json_string(sb.buf));
			bg_strbuf_release(&sb);
		}
	}
	pairs = bg_xcalloc(2 * n + 1, sizeof(*pairs));
	for (i = 0; i < n; i++) {
		pairs[2 * i] = json_array_get(rows, i);
		pairs[2 * i + 1] = (const json_t *)(uintptr_t)i;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_row_id);
	reg->measurements = json_array();
	for (i = 0; i < n; i++)
		json_array_append(reg->measurements, (json_t *)pairs[2 * i]);
	free(pairs);
	json_decref(rows);
	return BG_OK;
}

json_t *bg_registry_find_gate(const struct bg_registry *reg, const char *id)
{
	size_t i;
	json_t *gate;

	json_array_foreach(reg->gates, i, gate) {
		json_t *gid = json_object_get(gate, "id");
		if (json_is_string(gid) && strcmp(json_string_value(gid), id) == 0)
			return gate;
	}
	return NULL;
}
