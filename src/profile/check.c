/*
 * check.c - check_profile_registry: profile matrix, experiment manifests,
 * RUNS.md (see profile.h).
 */
#include "benchgate/profile.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "core/pyval.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static const char *const cell_required[] = {
	"backend", "capability", "id", "pr_gate", "release_signoff", "runner", "scheduled_profile",
	"state", "support_level", NULL,
};
static const char *const manifest_required[] = {
	"code", "execution", "experiment_id", "inputs", "outputs", "paper", "parameters", "question",
	"schema_version", "status", "timestamps", NULL,
};

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

static bool is_hex(const json_t *v, size_t len)
{
	const char *s;

	if (!json_is_string(v) || json_string_length(v) != len)
		return false;
	s = json_string_value(v);
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && strcmp(json_string_value(v), s) == 0;
}

/* A (capability, backend) pair as Python's repr of a tuple. */
static void pair_repr(struct bg_strbuf *out, const json_t *a, const json_t *b)
{
	bg_strbuf_addch(out, '(');
	bg_py_repr(out, a);
	bg_strbuf_adds(out, ", ");
	bg_py_repr(out, b);
	bg_strbuf_addch(out, ')');
}

static void pair_key(struct bg_strbuf *out, const json_t *a, const json_t *b)
{
	json_t *arr = json_pack("[OO]", a, b);
	bg_json_dump_py(out, arr, -1, false);
	json_decref(arr);
}

static int load(const struct bg_config *cfg, const char *rel, json_t **out, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	bg_config_path(cfg, &path, rel);
	rc = bg_json_load_file(path.buf, rel, out, ctx);
	bg_strbuf_release(&path);
	if (!rc && (rc = bg_json_expect_object(*out, rel, ctx))) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends "[('a', 'b'), ...]" for the keys of set (pair_key -> [a, b]) sorted as tuples. */
static void pair_list(struct bg_strbuf *out, json_t *set)
{
	size_t n, i;
	const char **keys = bg_json_sorted_keys(set, &n);

	bg_strbuf_addch(out, '[');
	for (i = 0; i < n; i++) {
		json_t *pair = json_object_get(set, keys[i]);
		if (i)
			bg_strbuf_adds(out, ", ");
		pair_repr(out, json_array_get(pair, 0), json_array_get(pair, 1));
	}
	bg_strbuf_addch(out, ']');
	free(keys);
}

static int check_profile(const struct bg_config *cfg, struct bg_problems *p, size_t *ncells,
			 struct bg_ctx *ctx)
{
	json_t *profile = NULL, *parity = NULL, *caps, *cap, *cells, *cell, *expected, *seen;
	json_t *contract, *defs;
	const char *parity_display = cfg->parity_matrix;
	size_t i;
	int rc;

	if ((rc = load(cfg, cfg->profile_path, &profile, ctx)))
		return rc;
	if ((rc = load(cfg, cfg->parity_matrix, &parity, ctx))) {
		json_decref(profile);
		return rc;
	}
	rc = BG_ECHECK;
	{
		json_t *one = json_integer(1);
		if (!bg_py_equal(json_object_get(profile, "schema_version"), one))
			bg_problems_add(p, "profile matrix schema_version must be 1");
		json_decref(one);
	}
	if (cfg->profile_protocol && !str_is(json_object_get(profile, "protocol_version"), cfg->profile_protocol))
		bg_problems_add(p, "profile matrix protocol_version is not frozen at v1");
	if (!str_is(json_object_get(profile, "parity_matrix"), cfg->parity_matrix))
		bg_problems_add(p, "profile matrix must name the canonical parity matrix");

	expected = json_object();
	caps = json_object_get(parity, "capabilities");
	if (!json_is_array(caps)) {
		bg_error(ctx, rc, "%s: 'capabilities' must be a list", parity_display);
		goto fail;
	}
	json_array_foreach(caps, i, cap) {
		json_t *id = json_object_get(cap, "id"), *cov = json_object_get(cap, "coverage"), *entry;
		const char *backend;

		if (!json_is_object(cap) || !json_is_string(id) || !json_is_object(cov)) {
			bg_error(ctx, rc, "%s: capabilities[%zu] needs a string 'id' and an object 'coverage'",
				 parity_display, i);
			goto fail;
		}
		json_object_foreach(cov, backend, entry) {
			struct bg_strbuf k = BG_STRBUF_INIT;
			json_t *b = json_string(backend);

			if (!json_is_object(entry) || !json_object_get(entry, "level")) {
				json_decref(b);
				bg_error(ctx, rc, "%s: capability '%s' backend '%s' needs a 'level'",
					 parity_display, json_string_value(id), backend);
				goto fail;
			}
			pair_key(&k, id, b);
			json_object_set_new(expected, k.buf,
					    json_pack("[OOO]", id, b, json_object_get(entry, "level")));
			json_decref(b);
			bg_strbuf_release(&k);
		}
	}
	cells = json_object_get(profile, "cells");
	if (cells && !json_is_array(cells)) {
		bg_error(ctx, rc, "%s: 'cells' must be a list", cfg->profile_path);
		goto fail;
	}
	seen = json_object();
	json_array_foreach(cells, i, cell) {
		struct bg_strbuf sb = BG_STRBUF_INIT, k = BG_STRBUF_INIT, want = BG_STRBUF_INIT;
		json_t *capv, *backv, *exp, *support, *st, *sched, *signoff;
		const char *cid;

		if (!json_is_object(cell)) {
			json_decref(seen);
			bg_error(ctx, rc, "%s: cells[%zu] must be an object", cfg->profile_path, i);
			goto fail;
		}
		if (missing_list(&sb, cell, cell_required)) {
			bg_problems_add(p, "profile cell %zu is missing %s", i, sb.buf);
			bg_strbuf_release(&sb);
			continue;
		}
		capv = json_object_get(cell, "capability");
		backv = json_object_get(cell, "backend");
		if (json_is_array(capv) || json_is_object(capv) || json_is_array(backv) || json_is_object(backv)) {
			json_decref(seen);
			bg_strbuf_release(&sb);
			bg_error(ctx, rc, "%s: cells[%zu]: 'capability' and 'backend' must be strings",
				 cfg->profile_path, i);
			goto fail;
		}
		bg_py_str(&want, capv);
		bg_strbuf_adds(&want, "::");
		bg_py_str(&want, backv);
		if (!str_is(json_object_get(cell, "id"), want.buf))
			bg_problems_add(p, "profile cell %zu id must be %s", i, want.buf);
		pair_key(&k, capv, backv);
		if (json_object_get(seen, k.buf)) {
			bg_strbuf_reset(&sb);
			pair_repr(&sb, capv, backv);
			bg_problems_add(p, "duplicate profile cell for %s", sb.buf);
		}
		support = json_object_get(cell, "support_level");
		json_object_set_new(seen, k.buf, json_pack("[OO]", capv, backv));
		bg_strbuf_reset(&sb);
		bg_py_str(&sb, json_object_get(cell, "id"));
		cid = sb.buf;
		exp = json_object_get(expected, k.buf);
		if (!exp) {
			bg_problems_add(p, "profile cell %s is not in the parity matrix", cid);
		} else if (!bg_py_equal(support, json_array_get(exp, 2))) {
			struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
			bg_py_str(&a, support);
			bg_py_str(&b, json_array_get(exp, 2));
			bg_problems_add(p, "profile cell %s support level %s != %s", cid, a.buf, b.buf);
			bg_strbuf_release(&a);
			bg_strbuf_release(&b);
		}
		sched = json_object_get(cell, "scheduled_profile");
		st = json_object_get(cell, "state");
		signoff = json_object_get(cell, "release_signoff");
		if (!str_is(sched, "weekly") && !str_is(sched, "none"))
			bg_problems_add(p, "profile cell %s has invalid schedule", cid);
		if (!str_is(st, "ready") && !str_is(st, "evidence-gap") && !str_is(st, "unsupported"))
			bg_problems_add(p, "profile cell %s has invalid state", cid);
		if (!json_is_boolean(signoff))
			bg_problems_add(p, "profile cell %s release_signoff must be boolean", cid);
		if (str_is(support, "not-implemented")) {
			if (!str_is(st, "unsupported"))
				bg_problems_add(p, "unsupported cell %s must stay unsupported", cid);
			if (!str_is(sched, "none") || bg_py_truthy(signoff))
				bg_problems_add(p, "unsupported cell %s cannot schedule timing", cid);
			if (!str_is(json_object_get(cell, "pr_gate"), "unsupported-contract"))
				bg_problems_add(p, "unsupported cell %s needs a fail-closed PR gate", cid);
		} else if (str_is(st, "unsupported")) {
			bg_problems_add(p, "implemented cell %s cannot be unsupported", cid);
		}
		bg_strbuf_release(&sb);
		bg_strbuf_release(&k);
		bg_strbuf_release(&want);
	}
	{
		json_t *missing = json_object(), *extra = json_object(), *v;
		const char *k;
		struct bg_strbuf sb = BG_STRBUF_INIT;

		json_object_foreach(expected, k, v)
			if (!json_object_get(seen, k))
				json_object_set_new(missing, k, json_pack("[OO]", json_array_get(v, 0), json_array_get(v, 1)));
		json_object_foreach(seen, k, v)
			if (!json_object_get(expected, k))
				json_object_set(extra, k, v);
		if (json_object_size(missing)) {
			pair_list(&sb, missing);
			bg_problems_add(p, "profile matrix is missing cells: %s", sb.buf);
		}
		if (json_object_size(extra)) {
			bg_strbuf_reset(&sb);
			pair_list(&sb, extra);
			bg_problems_add(p, "profile matrix has extra cells: %s", sb.buf);
		}
		bg_strbuf_release(&sb);
		json_decref(missing);
		json_decref(extra);
	}
	json_decref(seen);

	defs = json_object_get(profile, "capabilities");
	if (defs && !json_is_object(defs)) {
		bg_error(ctx, rc, "%s: 'capabilities' must be an object", cfg->profile_path);
		goto fail;
	}
	{
		bool same = true;
		const char *k;
		json_t *v;
		size_t nparity = 0;
		json_t *pids = json_object();

		json_array_foreach(caps, i, cap)
			json_object_set_new(pids, json_string_value(json_object_get(cap, "id")), json_true());
		nparity = json_object_size(pids);
		if (json_object_size(defs) != nparity)
			same = false;
		json_object_foreach(defs, k, v)
			if (!json_object_get(pids, k))
				same = false;
		json_decref(pids);
		if (!same)
			bg_problems_add(p, "profile capability definitions must equal the parity capabilities");
		json_object_foreach(defs, k, v) {
			if (!json_is_object(v)) {
				bg_error(ctx, rc, "%s: capability '%s' must be an object", cfg->profile_path, k);
				goto fail;
			}
			if (!bg_py_truthy(json_object_get(v, "required_metrics")))
				bg_problems_add(p, "profile capability %s has no required metrics", k);
		}
	}
	contract = json_object_get(profile, "comparison_contract");
	if (contract && !json_is_object(contract)) {
		bg_error(ctx, rc, "%s: 'comparison_contract' must be an object", cfg->profile_path);
		goto fail;
	}
	if (!str_is(json_object_get(contract, "cross_key_comparison"), "forbidden"))
		bg_problems_add(p, "cross-key performance comparisons must remain forbidden");
	if (!str_is(json_object_get(contract, "parity_failure"), "block"))
		bg_problems_add(p, "scientific parity failures must block promotion");
	if (!str_is(json_object_get(contract, "default_regression_mode"), "report-only"))
		bg_problems_add(p, "new hardware baselines must begin in report-only mode");
	{
		json_t *m = json_object_get(contract, "minimum_accepted_sessions_before_hard_threshold");
		double d = 0;
		if (m && !bg_py_is_number(m)) {
			bg_error(ctx, rc, "%s: comparison_contract.minimum_accepted_sessions_before_hard_threshold must be a number",
				 cfg->profile_path);
			goto fail;
		}
		if (m)
			bg_py_to_float(m, &d);
		if (d < 5)
			bg_problems_add(p, "hard timing thresholds need at least five accepted sessions");
	}
	*ncells = json_array_size(cells);
	rc = BG_OK;
fail:
	json_decref(expected);
	json_decref(profile);
	json_decref(parity);
	return rc;
}

/* Values (not keys) of every string in v, lower-cased search for private paths. */
static bool has_private_path(const json_t *v)
{
	if (json_is_string(v)) {
		struct bg_strbuf l = BG_STRBUF_INIT;
		bool hit;
		bg_py_lower(&l, json_string_value(v));
		hit = strstr(l.buf, "/users/") || strstr(l.buf, "/home/");
		bg_strbuf_release(&l);
		return hit;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
			if (has_private_path(x))
				return true;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if (has_private_path(x))
				return true;
	}
	return false;
}

const char *bg_profile_runs_status(const char *s)
{
	static const char *const map[][2] = {
		{"planned", "planned"}, {"running", "running"}, {"completed", "ok"},
		{"failed", "failed"}, {"refuted", "refuted"}, {"superseded", "superseded"},
	};
	for (size_t i = 0; i < 6; i++)
		if (strcmp(map[i][0], s) == 0)
			return map[i][1];
	return NULL;
}

static void check_manifest(const char *dir, json_t *m, struct bg_problems *p, json_t *ids,
			   json_t *statuses)
{
	struct bg_strbuf label = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
	json_t *eid = json_object_get(m, "experiment_id"), *code, *status, *v, *item;
	size_t i;
	const char *id;

	if (eid)
		bg_py_str(&sb, eid);
	else
		bg_strbuf_adds(&sb, "<missing>");
	id = sb.buf;
	json_object_set_new(ids, id, json_true());
	bg_strbuf_addf(&label, "experiment %s", id);
	status = json_object_get(m, "status");
	if (json_is_string(status))
		json_object_set_new(statuses, id, json_string(json_string_value(status)));
	{
		struct bg_strbuf miss = BG_STRBUF_INIT;
		if (missing_list(&miss, m, manifest_required)) {
			bg_problems_add(p, "%s is missing %s", label.buf, miss.buf);
			bg_strbuf_release(&miss);
			goto out;
		}
		bg_strbuf_release(&miss);
	}
	{
		json_t *one = json_integer(1);
		if (!bg_py_equal(json_object_get(m, "schema_version"), one))
			bg_problems_add(p, "%s schema_version must be 1", label.buf);
		json_decref(one);
	}
	if (!str_is(eid, dir))
		bg_problems_add(p, "%s id must match its directory", label.buf);
	if (!json_is_string(status) || !bg_profile_runs_status(json_string_value(status))) {
		struct bg_strbuf s = BG_STRBUF_INIT;
		bg_py_str(&s, status);
		bg_problems_add(p, "%s has invalid status %s", label.buf, s.buf);
		bg_strbuf_release(&s);
	}
	v = json_object_get(m, "question");
	if (!json_is_string(v) || bg_py_str_blank(v))
		bg_problems_add(p, "%s needs a falsifiable question", label.buf);
	code = json_object_get(m, "code");
	if (!json_is_object(code)) {
		bg_problems_add(p, "%s code must be an object with revision and dirty", label.buf);
	} else {
		json_t *dirty = json_object_get(code, "dirty");
		if (!is_hex(json_object_get(code, "revision"), 40))
			bg_problems_add(p, "%s code revision must be a full Git SHA", label.buf);
		if (!json_is_boolean(dirty))
			bg_problems_add(p, "%s code.dirty must be boolean", label.buf);
		if (bg_py_truthy(dirty)) {
			json_t *d = json_object_get(code, "diff_sha256");
			if (!(bg_py_truthy(d) ? is_hex(d, 64) : false))
				bg_problems_add(p, "%s dirty source needs a diff SHA-256", label.buf);
		}
	}
	v = json_object_get(m, "inputs");
	json_array_foreach(v, i, item) {
		json_t *h = json_is_object(item) ? json_object_get(item, "sha256") : NULL;
		if (!is_hex(h, 64)) {
			struct bg_strbuf s = BG_STRBUF_INIT;
			bg_py_str(&s, json_object_get(item, "dataset_id"));
			bg_problems_add(p, "%s input %s lacks SHA-256", label.buf, s.buf);
			bg_strbuf_release(&s);
		}
	}
	if (json_is_string(status) && strcmp(json_string_value(status), "planned") != 0 &&
	    strcmp(json_string_value(status), "running") != 0 && bg_profile_runs_status(json_string_value(status))) {
		json_t *ts = json_object_get(m, "timestamps");
		if (!bg_py_truthy(json_object_get(ts, "finished")))
			bg_problems_add(p, "%s terminal status needs a finished timestamp", label.buf);
		if (!bg_py_truthy(json_object_get(m, "outputs")))
			bg_problems_add(p, "%s terminal status needs retained outputs", label.buf);
	}
	v = json_object_get(m, "outputs");
	json_array_foreach(v, i, item) {
		json_t *h = json_object_get(item, "sha256"), *res = json_object_get(item, "result");
		struct bg_strbuf art = BG_STRBUF_INIT;

		if (!bg_py_truthy(h))
			h = json_object_get(item, "sha256_manifest");
		bg_py_str(&art, json_object_get(item, "artifact"));
		if (!is_hex(h, 64))
			bg_problems_add(p, "%s output %s lacks SHA-256", label.buf, art.buf);
		if (!json_is_string(res) || bg_py_str_blank(res))
			bg_problems_add(p, "%s output %s lacks a result", label.buf, art.buf);
		bg_strbuf_release(&art);
	}
	if (has_private_path(m))
		bg_problems_add(p, "%s exposes an absolute private path", label.buf);
out:
	bg_strbuf_release(&label);
	bg_strbuf_release(&sb);
}

static int check_experiments(const struct bg_config *cfg, struct bg_problems *p, json_t *ids,
			     json_t *statuses, size_t *count, struct bg_ctx *ctx)
{
	struct bg_strbuf root = BG_STRBUF_INIT;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = BG_OK;

	bg_config_path(cfg, &root, cfg->experiments);
	d = opendir(root.buf);
	if (d) {
		while ((e = readdir(d))) {
			struct bg_strbuf mp = BG_STRBUF_INIT;
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			bg_strbuf_addf(&mp, "%s/%s/manifest.json", root.buf, e->d_name);
			if (bg_is_file(mp.buf)) {
				if (n == cap) {
					cap = cap ? 2 * cap : 32;
					names = bg_xrealloc(names, cap * sizeof(*names));
				}
				names[n++] = bg_xstrdup(e->d_name);
			}
			bg_strbuf_release(&mp);
		}
		closedir(d);
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !rc; i++) {
		struct bg_strbuf mp = BG_STRBUF_INIT, disp = BG_STRBUF_INIT;
		json_t *m = NULL;

		bg_strbuf_addf(&mp, "%s/%s/manifest.json", root.buf, names[i]);
		bg_strbuf_addf(&disp, "%s/%s/manifest.json", cfg->experiments, names[i]);
		rc = bg_json_load_file(mp.buf, disp.buf, &m, ctx);
		if (!rc && (rc = bg_json_expect_object(m, disp.buf, ctx)) == 0)
			check_manifest(names[i], m, p, ids, statuses);
		json_decref(m);
		bg_strbuf_release(&mp);
		bg_strbuf_release(&disp);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	bg_strbuf_release(&root);
	*count = n;
	return rc;
}

/* Python's str.splitlines boundaries (ASCII and the common Unicode ones). */
static size_t line_end(const char *s, size_t len, size_t i, size_t *next)
{
	for (; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) {
			*next = i + 1;
			return i;
		}
		if (c == '\r') {
			*next = (i + 1 < len && s[i + 1] == '\n') ? i + 2 : i + 1;
			return i;
		}
		if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] == 0x85) {
			*next = i + 2;
			return i;
		}
		if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
		    ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			*next = i + 3;
			return i;
		}
	}
	*next = len;
	return len;
}

static void check_runs(const struct bg_config *cfg, struct bg_problems *p, json_t *ids,
		       json_t *statuses)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	json_t *rows = json_object();
	size_t i = 0, n;
	const char **sorted;

	bg_config_path(cfg, &path, cfg->runs_index);
	if (!bg_is_file(path.buf) || bg_file_read(path.buf, NULL, &text, NULL)) {
		bg_problems_add(p, "%s is missing", cfg->runs_index);
		goto out;
	}
	while (i < text.len) {
		size_t next, end = line_end(text.buf, text.len, i, &next);
		const char *line = text.buf + i;
		size_t len = end - i;

		if (len >= 4 && strncmp(line, "| 20", 4) == 0) {
			/* fields = [f.strip() for f in line.strip("|").split("|")] */
			size_t a = 0, b = len;
			json_t *fields = json_array();

			while (a < b && line[a] == '|')
				a++;
			while (b > a && line[b - 1] == '|')
				b--;
			for (size_t s = a;;) {
				const char *bar = memchr(line + s, '|', b - s);
				size_t e = bar ? (size_t)(bar - line) : b, st, sl;
				bg_py_strip(line + s, e - s, &st, &sl);
				json_array_append_new(fields, json_stringn(line + s + st, sl));
				if (!bar)
					break;
				s = e + 1;
			}
			if (json_array_size(fields) >= 4) {
				const char *id = json_string_value(json_array_get(fields, 0));
				json_t *list = json_object_get(rows, id);
				if (!list) {
					list = json_array();
					json_object_set_new(rows, id, list);
				}
				json_array_append(list, json_array_get(fields, 3));
			}
			json_decref(fields);
		}
		i = next;
	}
	sorted = bg_json_sorted_keys(ids, &n);
	for (size_t k = 0; k < n; k++) {
		json_t *list = json_object_get(rows, sorted[k]), *st;
		const char *want, *have;

		if (!list || json_array_size(list) == 0) {
			bg_problems_add(p, "%s is missing %s", cfg->runs_index, sorted[k]);
			continue;
		}
		if (json_array_size(list) != 1) {
			bg_problems_add(p, "%s repeats %s", cfg->runs_index, sorted[k]);
			continue;
		}
		st = json_object_get(statuses, sorted[k]);
		want = st ? bg_profile_runs_status(json_string_value(st)) : NULL;
		if (!want)
			continue; /* the manifest's invalid status was already reported */
		have = json_string_value(json_array_get(list, 0));
		if (strncmp(have, want, strlen(want)) != 0)
			bg_problems_add(p, "%s status for %s must start with %s", cfg->runs_index, sorted[k], want);
	}
	free(sorted);
out:
	json_decref(rows);
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
}

int bg_profile_check(const struct bg_config *cfg, struct bg_problems *problems,
		     struct bg_profile_counts *counts, struct bg_ctx *ctx)
{
	json_t *ids = json_object(), *statuses = json_object();
	int rc;

	counts->cells = counts->experiments = 0;
	rc = check_profile(cfg, problems, &counts->cells, ctx);
	if (!rc)
		rc = check_experiments(cfg, problems, ids, statuses, &counts->experiments, ctx);
	if (!rc)
		check_runs(cfg, problems, ids, statuses);
	json_decref(ids);
	json_decref(statuses);
	return rc;
}
