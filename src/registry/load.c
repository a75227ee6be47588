/*
 * load.c - reading the registry, overlaying configurations on gates, and
 * resolving measurement rows from evidence imports and additional
 * measurements exactly as the reference's resolved_gates and
 * resolved_measurements do.
 */
#include "benchgate/registry.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "core/bytes.h"
#include "core/pyval.h"
#include "core/bigint.h"

#include <errno.h>
#include <limits.h>
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

static bool py_dict_update(struct bg_arena *a, struct bg_value *row, const struct bg_value *src);

/* True when the reference's "for x in registry.get(KEY, [])" loops over
 * nothing without raising: the member absent, an empty list, an empty
 * object (Python iterates its keys; one read through a keep list must have
 * been empty in the text too) or an empty text. Anything else that is not
 * a list raises there (a key or a character is not a row): the caller names
 * the member instead. */
static bool py_iterates_nothing(const struct bg_value *v)
{
	return !v || (bg_value_is_array(v) && !bg_value_size(v)) ||
	       (bg_value_is_object(v) && !bg_value_size(v) && !bg_value_kept_partly(v)) ||
	       (bg_value_is_string(v) && !*bg_value_str(v));
}

static int resolve_gates(struct bg_registry *reg, struct bg_ctx *ctx)
{
	struct bg_value *gates = bg_value_get(reg->root, "gates");
	struct bg_value *configs = bg_value_get(reg->root, "configurations");
	size_t i;
	struct bg_value *gate;

	reg->gates = bg_value_new_array(reg->arena, bg_value_size(gates));
	if (py_iterates_nothing(gates))
		return BG_OK;
	if (!bg_value_is_array(gates))
		return bg_error(ctx, BG_ECHECK, "%s: 'gates' must be a list of objects", reg->display);
	if (bg_value_size(gates) && configs && !bg_value_is_object(configs))
		return bg_error(ctx, BG_ECHECK, "%s: 'configurations' must be an object", reg->display);
	BG_VALUE_ARRAY_FOREACH(gates, i, gate) {
		struct bg_value *resolved, *key, *base = NULL;

		if (!bg_value_is_object(gate))
			return bg_error(ctx, BG_ECHECK, "%s: gates[%zu] must be an object", reg->display, i);
		key = bg_value_get(gate, "configuration");
		if (key && (bg_value_is_array(key) || bg_value_is_object(key)))
			return bg_error(ctx, BG_ECHECK,
					"%s: gates[%zu]: 'configuration' must name a configuration",
					reg->display, i);
		if (key && bg_value_is_string(key) && configs)
			base = bg_value_get(configs, bg_value_str(key));
		if (base && !bg_value_is_object(base)) { /* dict(base): pairs, or "" */
			struct bg_value *pairs = bg_value_new_object(reg->arena, bg_value_size(base));
			if (!(bg_value_is_string(base) && !*bg_value_str(base)) &&
			    !(bg_value_is_array(base) && py_dict_update(reg->arena, pairs, base)))
				return bg_error(ctx, BG_ECHECK,
						"%s: configuration '%s' must be an object (or a list of key, value pairs)",
						reg->display, bg_value_str(key));
			base = pairs;
		}
		/* gates are never modified: a gate without a configuration is its own resolution */
		if (base && bg_value_size(base)) {
			resolved = bg_value_merged(reg->arena, base, gate);
		} else {
			resolved = gate;
		}
		bg_value_append(reg->arena, reg->gates, resolved);
	}
	return BG_OK;
}

static int finish_load(struct bg_registry *reg, struct bg_ctx *ctx)
{
	struct bg_value *runbooks;
	int rc;

	if ((rc = bg_value_expect_object(reg->root, reg->display, ctx)))
		return rc;
	runbooks = bg_value_get(reg->root, "runbooks");
	if (runbooks && !bg_value_is_object(runbooks))
		runbooks = NULL; /* refused where runbooks are read: bg_registry_runbooks_ok */
	/* a runbook that is not an object is refused where one is read
	 * (validate, render, command, next --performance-entrypoint-only), as
	 * the reference fails only there */
	reg->runbooks = runbooks ? runbooks : bg_value_new_object(reg->arena, 0);
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
	reg->arena = bg_arena_new();
	rc = bg_value_parse_file(reg->arena, path.buf, reg->display, &reg->root, ctx);
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
	reg->arena = bg_arena_new();
	if ((rc = bg_value_parse(reg->arena, data, len, display, &reg->root, ctx)))
		return rc;
	return finish_load(reg, ctx);
}

void bg_registry_release(struct bg_registry *reg)
{
	free(reg->display);
	bg_arena_free(reg->arena);
	memset(reg, 0, sizeof(*reg));
}

/* str(v or default) */
static void str_or(struct bg_strbuf *out, const struct bg_value *v, const char *def)
{
	if (bg_value_truthy(v))
		bg_value_py_str(out, v);
	else
		bg_strbuf_adds(out, def);
}

/* The reference's _computer_label as a string value: current itself or the
 * previous label (*last) when the text is the same, else a new string. */
static struct bg_value *computer_label(struct bg_arena *a, const struct bg_config *cfg,
				       const struct bg_value *device, const struct bg_value *current,
				       struct bg_value **last)
{
	struct bg_strbuf cur = BG_STRBUF_INIT, dev = BG_STRBUF_INIT;
	struct bg_value *out;
	const char *label;

	str_or(&cur, current, "");
	str_or(&dev, device, "");
	label = bg_config_computer_label(cfg, dev.buf, cur.buf);
	if (bg_value_is_string(current) && strcmp(label, bg_value_str(current)) == 0)
		out = (struct bg_value *)current;
	else if (*last && strcmp(label, bg_value_str(*last)) == 0)
		out = *last;
	else
		out = *last = bg_value_new_string(a, label);
	bg_strbuf_release(&cur);
	bg_strbuf_release(&dev);
	return out;
}

/* The reference's _public_measurement_id; with no computers configured the id is kept. */
static void public_id(struct bg_strbuf *out, const struct bg_config *cfg, const struct bg_value *raw,
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

static bool is_none(const struct bg_value *v)
{
	return !v || bg_value_is_null(v);
}

/* The evidence fields a measurement row is built from; E_* index them. */
enum {
	E_ID, E_ARTIFACT_ID, E_ROW_START, E_ROW_STOP, E_COL_START, E_COL_STOP, E_SRC_SCAN_ROWS,
	E_SRC_SCAN_COLS, E_AREA, E_PLATFORM, E_PEAK_PROCESS, E_PEAK_HOST, E_PEAK_RSS, E_PEAK_BROWSER,
	E_DEVICE, E_COMPUTER, E_SRC_DET_ROWS, E_SRC_DET_COLS, E_SCAN_BIN, E_DET_BIN, E_WORK_DET_ROWS,
	E_WORK_DET_COLS, E_SRC_DTYPE, E_WORK_DTYPE, E_CACHE, E_BOUNDARY, E_SAMPLES, E_P50, E_P95, E_MAX,
	E_LOGICAL, E_DRV_LOAD, E_DRV_RELEASE, E_ACCEL, E_TOTAL_CARD, E_SWAP, E_PARITY, E_DATE,
	E_FIXTURE_ID, E_FIXTURE_SHA, E_NFIELDS
};
static const char *const evidence_fields[E_NFIELDS] = {
	"id", "artifact_id", "selected_scan_row_start", "selected_scan_row_stop",
	"selected_scan_column_start", "selected_scan_column_stop", "source_scan_rows",
	"source_scan_columns", "functional_area", "platform", "process_peak_rss_bytes",
	"host_peak_rss_p50_bytes", "process_rss_p50_bytes", "browser_tree_peak_rss_bytes", "device",
	"computer", "source_detector_rows", "source_detector_columns", "scan_bin", "detector_bin",
	"working_detector_rows", "working_detector_columns", "source_dtype", "working_dtype",
	"cache_state", "timing_boundary", "sample_count", "wall_p50_seconds", "wall_p95_seconds",
	"wall_max_seconds", "logical_resident_bytes", "driver_allocated_after_load_bytes",
	"driver_allocated_after_release_bytes", "accelerator_peak_bytes", "total_card_peak_bytes",
	"swap_delta_bytes", "parity", "date", "fixture_id", "fixture_sha256",
};

/* What the rows read from an evidence index: everything else in it (most of
 * each artifact, the other lists) is checked by the parser but not built. */
static const struct bg_value_keep evidence_measurement_keep[E_NFIELDS + 1] = {
	{"id", NULL}, {"artifact_id", NULL}, {"selected_scan_row_start", NULL},
	{"selected_scan_row_stop", NULL}, {"selected_scan_column_start", NULL},
	{"selected_scan_column_stop", NULL}, {"source_scan_rows", NULL}, {"source_scan_columns", NULL},
	{"functional_area", NULL}, {"platform", NULL}, {"process_peak_rss_bytes", NULL},
	{"host_peak_rss_p50_bytes", NULL}, {"process_rss_p50_bytes", NULL},
	{"browser_tree_peak_rss_bytes", NULL}, {"device", NULL}, {"computer", NULL},
	{"source_detector_rows", NULL}, {"source_detector_columns", NULL}, {"scan_bin", NULL},
	{"detector_bin", NULL}, {"working_detector_rows", NULL}, {"working_detector_columns", NULL},
	{"source_dtype", NULL}, {"working_dtype", NULL}, {"cache_state", NULL}, {"timing_boundary", NULL},
	{"sample_count", NULL}, {"wall_p50_seconds", NULL}, {"wall_p95_seconds", NULL},
	{"wall_max_seconds", NULL}, {"logical_resident_bytes", NULL},
	{"driver_allocated_after_load_bytes", NULL}, {"driver_allocated_after_release_bytes", NULL},
	{"accelerator_peak_bytes", NULL}, {"total_card_peak_bytes", NULL}, {"swap_delta_bytes", NULL},
	{"parity", NULL}, {"date", NULL}, {"fixture_id", NULL}, {"fixture_sha256", NULL}, {NULL, NULL},
};
static const struct bg_value_keep evidence_artifact_keep[] = {
	{"id", NULL}, {"implementation_revision", NULL}, {"observed_head", NULL}, {NULL, NULL},
};
static const struct bg_value_keep evidence_keep[] = {
	{"artifacts", evidence_artifact_keep}, {"measurements", evidence_measurement_keep}, {NULL, NULL},
};

/* Shared immutable state strings of the rows. */
static struct bg_value state_measured = {BG_VSTRING, 0, 0, 8, {.s = "measured"}};
static struct bg_value state_partial = {BG_VSTRING, 0, 0, 7, {.s = "partial"}};

static struct bg_value *measurement_state(struct bg_value *const *f, struct bg_strbuf *tmp)
{
	bool timing = !is_none(f[E_P50]) && !is_none(f[E_P95]) && !is_none(f[E_MAX]);
	struct bg_value *state = &state_partial;
	size_t start;

	if (!timing)
		return state;
	bg_strbuf_reset(tmp);
	str_or(tmp, f[E_PARITY], "");
	start = tmp->len;
	bg_strbuf_addch(tmp, '\0');
	bg_strbuf_grow(tmp, start + 1); /* no reallocation while lowering from tmp->buf */
	bg_py_lower(tmp, tmp->buf);
	{
		const char *lower = tmp->buf + start + 1;
		if (*lower && !strstr(lower, "not performed") && !strstr(lower, "incomplete"))
			state = &state_measured;
	}
	return state;
}

/* int(stop) - int(start) where one is beyond 64 bits, as Python's int.
 * False where int() raises. */
static bool big_extent(struct bg_arena *arena, const struct bg_value *start, const struct bg_value *stop,
		       struct bg_value **out)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT, r = BG_STRBUF_INIT;
	bool ok = bg_value_int_text(start, &a) && bg_value_int_text(stop, &b);

	if (ok) {
		bg_bigint_sub(&r, b.buf, a.buf);
		*out = bg_value_new_int_text(arena, r.buf);
	}
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
	bg_strbuf_release(&r);
	return ok;
}

static int selected_extent(struct bg_arena *arena, const struct bg_value *start, const struct bg_value *stop,
			   struct bg_value *fallback, struct bg_value **out)
{
	long long a, b;

	if (!is_none(start) && !is_none(stop)) {
		unsigned long long mag;
		char text[32];

		if (!bg_value_to_int(start, &a) || !bg_value_to_int(stop, &b))
			return big_extent(arena, start, stop, out) ? 0 : -1;
		/* |b - a| < 2**64 is exact in unsigned arithmetic; beyond 64 bits
		 * signed, Python's int goes on, and so does the row's */
		mag = b >= a ? (unsigned long long)b - (unsigned long long)a : (unsigned long long)a - (unsigned long long)b;
		if (b >= a ? mag <= (unsigned long long)LLONG_MAX : mag <= (unsigned long long)LLONG_MAX + 1) {
			*out = bg_value_new_int(arena, b >= a ? (long long)mag
							     : mag > (unsigned long long)LLONG_MAX ? LLONG_MIN
							     : -(long long)mag);
		} else {
			snprintf(text, sizeof(text), "%s%llu", b >= a ? "" : "-", mag);
			*out = bg_value_new_int_text(arena, text);
		}
		return 0;
	}
	*out = fallback ? fallback : bg_value_null();
	return 0;
}

/* str(v or def) as text: v's own bytes when it is a non-empty string, else in tmp. */
static const char *text_or(const struct bg_value *v, const char *def, struct bg_strbuf *tmp)
{
	if (!bg_value_truthy(v))
		return def;
	if (bg_value_is_string(v))
		return bg_value_str(v);
	bg_strbuf_reset(tmp);
	bg_value_py_str(tmp, v);
	return tmp->buf;
}

/* A string value holding text: v itself when text is v's own bytes. */
static struct bg_value *string_value(struct bg_arena *a, const struct bg_value *v, const char *text)
{
	if (bg_value_is_string(v) && bg_value_str(v) == text)
		return (struct bg_value *)v;
	return bg_value_new_string(a, text);
}

static struct bg_value *or_null(struct bg_value *v)
{
	return v ? v : bg_value_null();
}

/* The working state of one import: scratch text and the last label built. */
struct row_builder {
	struct bg_value_proj proj;
	struct bg_strbuf tmp, pid, sb;
	struct bg_value *last_computer;
};

/* The length of the character text starts with (valid UTF-8, or a lone
 * surrogate, as a parsed string is); 0 at its end. */
static size_t char_len(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;

	return !*p ? 0 : *p < 0x80 ? 1 : bg_char_len(p);
}

/* Python's dict.update(src) on row: an object's members, or a list whose
 * every element iterates to exactly two items (a [key, value] list, a
 * two-character string, an object with two keys), as Python takes them;
 * an empty text adds nothing.
 * False where Python raises (anything else, or a key that is a list or an
 * object). A key that is not a string is dropped: no row field is read by
 * such a key. */
static bool py_dict_update(struct bg_arena *a, struct bg_value *row, const struct bg_value *src)
{
	size_t i;
	struct bg_value *item;

	if (bg_value_is_object(src)) {
		bg_value_update(a, row, src);
		return true;
	}
	if (bg_value_is_string(src) && !*bg_value_str(src))
		return true; /* an empty text iterates to nothing: dict("") is {} */
	if (!bg_value_is_array(src))
		return false;
	BG_VALUE_ARRAY_FOREACH(src, i, item) {
		struct bg_value *k = NULL, *v = NULL;
		if (bg_value_is_array(item) && bg_value_size(item) == 2) {
			k = bg_value_at(item, 0);
			v = bg_value_at(item, 1);
		} else if (bg_value_is_object(item) && bg_value_size(item) == 2) {
			const char *key;
			struct bg_value *x;
			BG_VALUE_OBJECT_FOREACH(item, key, x) {
				(void)x;
				if (!k)
					k = bg_value_new_string(a, key);
				else
					v = bg_value_new_string(a, key);
			}
		} else if (bg_value_is_string(item)) {
			const char *t = bg_value_str(item);
			size_t n1 = char_len(t), n2 = n1 ? char_len(t + n1) : 0;
			if (n2 == 0 || t[n1 + n2] != '\0')
				return false;
			k = bg_value_new_stringn(a, t, n1);
			v = bg_value_new_stringn(a, t + n1, n2);
		} else {
			return false;
		}
		if (bg_value_is_array(k) || bg_value_is_object(k))
			return false;
		if (bg_value_is_string(k))
			bg_value_set(a, row, bg_value_str(k), v);
	}
	return true;
}

static int measurement_row(const struct bg_registry *reg, struct row_builder *rb, const struct bg_value *m,
			   const char *evidence_path, const struct bg_value *artifacts_by_id,
			   const struct bg_value *overrides, size_t index, struct bg_value **out,
			   struct bg_ctx *ctx)
{
	const struct bg_config *cfg = reg->cfg;
	struct bg_strbuf *sb = &rb->sb, *pid = &rb->pid, *tmp = &rb->tmp;
	struct bg_arena *a = reg->arena;
	struct bg_value *f[E_NFIELDS], *row, *artifact, *computer, *override, *rows, *cols, *peak, *rev;
	struct bg_value *idv;
	const char *label, *text;
	size_t plen;

	*out = NULL;
	bg_value_project(&rb->proj, m, f);
	if (!f[E_ID])
		return bg_error(ctx, BG_ECHECK, "%s: measurements[%zu] has no 'id'", evidence_path, index);
	/* the last artifact whose string id is str(artifact_id) */
	bg_strbuf_reset(sb);
	bg_value_py_str(sb, f[E_ARTIFACT_ID]);
	artifact = bg_value_getn(artifacts_by_id, sb->buf, sb->len);
	if (selected_extent(a, f[E_ROW_START], f[E_ROW_STOP], f[E_SRC_SCAN_ROWS], &rows) ||
	    selected_extent(a, f[E_COL_START], f[E_COL_STOP], f[E_SRC_SCAN_COLS], &cols)) {
		bg_strbuf_reset(sb);
		bg_value_py_str(sb, f[E_ID]);
		return bg_error(ctx, BG_ECHECK, "%s: measurement '%s': selected scan bounds must be integers",
				evidence_path, sb->buf);
	}
	row = bg_value_new_object(a, 40);
	text = text_or(f[E_AREA], "", tmp);
	label = bg_config_module_label(cfg, text);
	if (label)
		bg_value_set_new_key(a, row, "module", bg_value_new_string(a, label));
	else
		bg_value_set_new_key(a, row, "module",
				     string_value(a, f[E_AREA], text_or(f[E_AREA], "Unclassified", tmp)));
	bg_value_set_new_key(a, row, "operation",
			     string_value(a, f[E_AREA], text_or(f[E_AREA], "measurement", tmp)));
	text = text_or(f[E_PLATFORM], "", tmp);
	label = bg_config_platform_label(cfg, text);
	bg_value_set_new_key(a, row, "platform", label ? bg_value_new_string(a, label)
						       : string_value(a, f[E_PLATFORM], text));

	peak = f[E_PEAK_PROCESS];
	if (is_none(peak))
		peak = f[E_PEAK_HOST];
	if (is_none(peak))
		peak = f[E_PEAK_RSS];
	if (!is_none(f[E_PEAK_BROWSER]))
		peak = f[E_PEAK_BROWSER];
	rev = artifact ? bg_value_get(artifact, "implementation_revision") : NULL;
	if (!bg_value_truthy(rev))
		rev = artifact ? bg_value_get(artifact, "observed_head") : NULL;

	computer = computer_label(a, cfg, f[E_DEVICE], f[E_COMPUTER], &rb->last_computer);
	bg_strbuf_reset(pid);
	bg_strbuf_adds(pid, "evidence::");
	public_id(pid, cfg, f[E_ID], bg_value_str(computer));
	/* "id" is "evidence::" + measurement_id: one copy of the text serves both */
	plen = sizeof("evidence::") - 1;
	idv = bg_value_new_stringn(a, pid->buf, pid->len);
	bg_value_set_new_key(a, row, "id", idv);
	bg_value_set_new_key(a, row, "measurement_id",
			     bg_value_new_string_shared(a, bg_value_str(idv) + plen, pid->len - plen));
	bg_value_set_new_key(a, row, "computer", computer);
	bg_value_set_new_key(a, row, "device", or_null(f[E_DEVICE]));
	bg_value_set_new_key(a, row, "source_scan_rows", or_null(f[E_SRC_SCAN_ROWS]));
	bg_value_set_new_key(a, row, "source_scan_columns", or_null(f[E_SRC_SCAN_COLS]));
	bg_value_set_new_key(a, row, "selected_scan_rows", rows);
	bg_value_set_new_key(a, row, "selected_scan_columns", cols);
	bg_value_set_new_key(a, row, "source_detector_rows", or_null(f[E_SRC_DET_ROWS]));
	bg_value_set_new_key(a, row, "source_detector_columns", or_null(f[E_SRC_DET_COLS]));
	bg_value_set_new_key(a, row, "scan_bin", or_null(f[E_SCAN_BIN]));
	bg_value_set_new_key(a, row, "detector_bin", or_null(f[E_DET_BIN]));
	bg_value_set_new_key(a, row, "output_detector_rows", or_null(f[E_WORK_DET_ROWS]));
	bg_value_set_new_key(a, row, "output_detector_columns", or_null(f[E_WORK_DET_COLS]));
	bg_value_set_new_key(a, row, "source_dtype", or_null(f[E_SRC_DTYPE]));
	bg_value_set_new_key(a, row, "working_dtype", or_null(f[E_WORK_DTYPE]));
	bg_value_set_new_key(a, row, "cache_state", or_null(f[E_CACHE]));
	bg_value_set_new_key(a, row, "timing_boundary", or_null(f[E_BOUNDARY]));
	bg_value_set_new_key(a, row, "sample_count", or_null(f[E_SAMPLES]));
	bg_value_set_new_key(a, row, "p50_seconds", or_null(f[E_P50]));
	bg_value_set_new_key(a, row, "p95_seconds", or_null(f[E_P95]));
	bg_value_set_new_key(a, row, "max_seconds", or_null(f[E_MAX]));
	bg_value_set_new_key(a, row, "logical_resident_bytes", or_null(f[E_LOGICAL]));
	bg_value_set_new_key(a, row, "driver_allocated_after_load_bytes", or_null(f[E_DRV_LOAD]));
	bg_value_set_new_key(a, row, "driver_allocated_after_release_bytes", or_null(f[E_DRV_RELEASE]));
	bg_value_set_new_key(a, row, "accelerator_peak_bytes", or_null(f[E_ACCEL]));
	bg_value_set_new_key(a, row, "total_device_peak_bytes", or_null(f[E_TOTAL_CARD]));
	bg_value_set_new_key(a, row, "process_tree_peak_bytes", or_null(peak));
	bg_value_set_new_key(a, row, "swap_delta_bytes", or_null(f[E_SWAP]));
	bg_value_set_new_key(a, row, "parity", or_null(f[E_PARITY]));
	bg_value_set_new_key(a, row, "state", measurement_state(f, tmp));
	bg_value_set_new_key(a, row, "tested_date", or_null(f[E_DATE]));
	bg_value_set_new_key(a, row, "source_revision", or_null(rev));
	bg_value_set_new_key(a, row, "fixture_id", or_null(f[E_FIXTURE_ID]));
	bg_value_set_new_key(a, row, "fixture_sha256", or_null(f[E_FIXTURE_SHA]));
	bg_strbuf_reset(sb);
	bg_strbuf_adds(sb, evidence_path);
	bg_strbuf_addch(sb, '#');
	bg_value_py_str(sb, f[E_ID]);
	bg_value_set_new_key(a, row, "evidence", bg_value_new_stringn(a, sb->buf, sb->len));
	bg_value_set_new_key(a, row, "artifact_id", or_null(f[E_ARTIFACT_ID]));

	bg_value_index(a, row);
	override = overrides ? bg_value_get(overrides, pid->buf + plen) : NULL;
	if (bg_value_truthy(override) && !py_dict_update(a, row, override))
		return bg_error(ctx, BG_ECHECK,
				"%s: measurement_overrides['%s'] must be an object (or a list of key, value pairs)",
				reg->display, pid->buf + plen);
	*out = row;
	return BG_OK;
}

static int import_evidence(struct bg_registry *reg, const struct bg_value *source, size_t index, struct bg_value *rows,
			   struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	struct bg_value *rel, *evidence = NULL, *artifacts, *measurements, *overrides, *m, *by_id;
	struct row_builder rb = {.tmp = BG_STRBUF_INIT, .pid = BG_STRBUF_INIT, .sb = BG_STRBUF_INIT};
	const char *display;
	size_t i;
	int rc;

	if (!bg_value_is_object(source))
		return bg_error(ctx, BG_ECHECK, "%s: evidence_imports[%zu] must be an object", reg->display, index);
	rel = bg_value_get(source, "path");
	if (!bg_value_is_string(rel))
		return bg_error(ctx, BG_ECHECK, "%s: evidence_imports[%zu] needs a string 'path'",
				reg->display, index);
	display = bg_value_str(rel);
	bg_config_path(reg->cfg, &path, display);
	rc = bg_value_parse_file_keep(reg->arena, path.buf, display, evidence_keep, &evidence, ctx);
	bg_strbuf_release(&path);
	if (rc) {
		if (rc == BG_EIO)
			bg_error(ctx, BG_EIO, "%s (named by evidence_imports[%zu] of %s)", bg_ctx_message(ctx), index,
				 reg->display);
		return rc;
	}
	rc = BG_ECHECK;
	if (!bg_value_is_object(evidence)) {
		bg_error(ctx, rc, "%s: top level must be a JSON object", display);
		goto out;
	}
	artifacts = bg_value_get(evidence, "artifacts");
	measurements = bg_value_get(evidence, "measurements");
	overrides = bg_value_get(source, "measurement_overrides");
	if (py_iterates_nothing(artifacts))
		artifacts = NULL;
	else if (!bg_value_is_array(artifacts)) {
		bg_error(ctx, rc, "%s: 'artifacts' must be a list", display);
		goto out;
	}
	if (py_iterates_nothing(measurements))
		measurements = NULL;
	else if (!bg_value_is_array(measurements)) {
		bg_error(ctx, rc, "%s: 'measurements' must be a list", display);
		goto out;
	}
	/* the reference looks the overrides up per measurement: with none, they
	 * are never looked at, whatever they are */
	if (measurements && overrides && !bg_value_is_object(overrides)) {
		bg_error(ctx, rc, "%s: evidence_imports[%zu].measurement_overrides must be an object",
			 reg->display, index);
		goto out;
	}
	by_id = bg_value_new_object(reg->arena, bg_value_size(artifacts));
	BG_VALUE_ARRAY_FOREACH(artifacts, i, m) {
		struct bg_value *aid = bg_value_get(m, "id");
		if (!bg_value_is_object(m) || !aid) {
			bg_error(ctx, rc, "%s: artifacts[%zu] must be an object with an 'id'", display, i);
			goto out;
		}
		if (bg_value_is_array(aid) || bg_value_is_object(aid)) { /* unhashable: the reference fails */
			bg_error(ctx, rc, "%s: artifacts[%zu] has an 'id' that is %s; give each artifact a string id",
				 display, i, bg_value_is_array(aid) ? "a list" : "an object");
			goto out;
		}
		if (bg_value_is_string(aid)) /* a later artifact with the same id wins */
			bg_value_set(reg->arena, by_id, bg_value_str(aid), m);
	}
	bg_value_proj_init(&rb.proj, evidence_fields, E_NFIELDS);
	BG_VALUE_ARRAY_FOREACH(measurements, i, m) {
		struct bg_value *row;

		if (!bg_value_is_object(m)) {
			bg_error(ctx, rc, "%s: measurements[%zu] must be an object", display, i);
			goto out;
		}
		if (measurement_row(reg, &rb, m, display, by_id, overrides, i, &row, ctx))
			goto out;
		bg_value_append(reg->arena, rows, row);
	}
	rc = BG_OK;
out:
	bg_strbuf_release(&rb.tmp);
	bg_strbuf_release(&rb.pid);
	bg_strbuf_release(&rb.sb);
	return rc;
}

struct row_key {
	const char *id; /* str(row["id"]) */
	size_t index;   /* original position: keeps the sort stable */
	struct bg_value *row;
};

static int cmp_row_id(const void *a, const void *b)
{
	const struct row_key *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

int bg_registry_resolve_measurements(struct bg_registry *reg, struct bg_ctx *ctx)
{
	struct bg_value *imports = bg_value_get(reg->root, "evidence_imports");
	struct bg_value *extra = bg_value_get(reg->root, "additional_measurements");
	struct bg_value *rows, *item, *last_computer = NULL;
	struct row_key *keys;
	size_t i, n;
	int rc;

	if (reg->measurements)
		return BG_OK;
	rows = bg_value_new_array(reg->arena, 1024);
	if (py_iterates_nothing(imports))
		imports = NULL;
	else if (!bg_value_is_array(imports))
		return bg_error(ctx, BG_ECHECK, "%s: 'evidence_imports' must be a list", reg->display);
	BG_VALUE_ARRAY_FOREACH(imports, i, item) {
		if ((rc = import_evidence(reg, item, i, rows, ctx)))
			return rc;
	}
	if (py_iterates_nothing(extra))
		extra = NULL;
	else if (!bg_value_is_array(extra))
		return bg_error(ctx, BG_ECHECK, "%s: 'additional_measurements' must be a list", reg->display);
	BG_VALUE_ARRAY_FOREACH(extra, i, item) {
		struct bg_strbuf pid = BG_STRBUF_INIT, id = BG_STRBUF_INIT;
		struct bg_value *row, *computer;

		if (bg_value_is_object(item)) {
			row = bg_value_copy(reg->arena, item, 3); /* computer, measurement_id, id may be new */
		} else { /* dict(item): a list of key, value pairs too */
			row = bg_value_new_object(reg->arena, bg_value_size(item) + 3);
			if (!py_dict_update(reg->arena, row, item))
				return bg_error(ctx, BG_ECHECK,
						"%s: additional_measurements[%zu] must be an object (or a list of key, value pairs)",
						reg->display, i);
		}
		computer = computer_label(reg->arena, reg->cfg, bg_value_get(row, "device"),
					  bg_value_get(row, "computer"), &last_computer);
		bg_value_set(reg->arena, row, "computer", computer);
		public_id(&pid, reg->cfg, bg_value_get(row, "measurement_id"), bg_value_str(computer));
		bg_strbuf_addf(&id, "evidence::%s", pid.buf);
		bg_value_set(reg->arena, row, "measurement_id", bg_value_new_string(reg->arena, pid.buf));
		bg_value_set(reg->arena, row, "id", bg_value_new_string(reg->arena, id.buf));
		bg_strbuf_release(&pid);
		bg_strbuf_release(&id);
		bg_value_append(reg->arena, rows, row);
	}
	/* sorted(rows, key=lambda row: str(row["id"])) -- overrides may change "id" */
	n = bg_value_size(rows);
	BG_VALUE_ARRAY_FOREACH(rows, i, item) {
		struct bg_value *idv = bg_value_get(item, "id");
		if (!bg_value_is_string(idv)) {
			struct bg_strbuf sb = BG_STRBUF_INIT;
			bg_value_py_str(&sb, idv);
			bg_value_set(reg->arena, item, "id", bg_value_new_string(reg->arena, sb.buf));
			bg_strbuf_release(&sb);
		}
	}
	keys = bg_xcalloc(n + 1, sizeof(*keys));
	for (i = 0; i < n; i++) {
		keys[i].row = bg_value_at(rows, i);
		keys[i].id = bg_value_str(bg_value_get(keys[i].row, "id"));
		keys[i].index = i;
	}
	qsort(keys, n, sizeof(*keys), cmp_row_id);
	reg->measurements = bg_value_new_array(reg->arena, n);
	for (i = 0; i < n; i++)
		bg_value_append(reg->arena, reg->measurements, keys[i].row);
	free(keys);
	return BG_OK;
}

struct bg_value *bg_registry_find_gate(const struct bg_registry *reg, const char *id)
{
	size_t i;
	struct bg_value *gate;

	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		struct bg_value *gid = bg_value_get(gate, "id");
		if (bg_value_is_string(gid) && strcmp(bg_value_str(gid), id) == 0)
			return gate;
	}
	return NULL;
}

int bg_registry_gate_json(const struct bg_registry *reg, const struct bg_value *gate, json_t **gate_out,
			  json_t **runbook_out, struct bg_ctx *ctx)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	const char *name = bg_value_str(bg_value_get(gate, "runbook"));
	int rc;

	*runbook_out = NULL;
	bg_strbuf_adds(&what, "gate '");
	bg_value_py_str(&what, bg_value_get(gate, "id"));
	bg_strbuf_addch(&what, '\'');
	rc = bg_value_to_json(gate, what.buf, gate_out, ctx);
	if (!rc && name) {
		bg_strbuf_reset(&what);
		bg_strbuf_addf(&what, "runbook '%s'", name);
		if ((rc = bg_value_to_json(bg_value_get(reg->runbooks, name), what.buf, runbook_out, ctx))) {
			json_decref(*gate_out);
			*gate_out = NULL;
		}
	}
	bg_strbuf_release(&what);
	return rc;
}

int bg_registry_lookup_gate(const struct bg_registry *reg, const char *id, struct bg_value **out,
			    struct bg_ctx *ctx)
{
	size_t i;
	struct bg_value *gate;

	*out = NULL;
	BG_VALUE_ARRAY_FOREACH(reg->gates, i, gate) {
		struct bg_value *gid = bg_value_get(gate, "id");
		if (!gid)
			return bg_error(ctx, BG_ECHECK,
					"%s: gates[%zu] has no 'id', so gate '%s' cannot be looked up; give every gate an 'id'",
					reg->display, i, id);
		if (bg_value_is_string(gid) && strcmp(bg_value_str(gid), id) == 0) {
			*out = gate;
			return BG_OK;
		}
	}
	return BG_OK;
}

int bg_registry_runbooks_ok(const struct bg_registry *reg, struct bg_ctx *ctx)
{
	struct bg_value *runbooks = bg_value_get(reg->root, "runbooks");

	if (runbooks && !bg_value_is_object(runbooks))
		return bg_error(ctx, BG_ECHECK, "'runbooks' must be an object");
	return BG_OK;
}
