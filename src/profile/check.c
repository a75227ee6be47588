/*
 * check.c - check_profile_registry: profile matrix, experiment manifests,
 * RUNS.md (see profile.h).
 */
#include "benchgate/profile.h"
#include "benchgate/fsutil.h"
#include "core/bytes.h"
#include "core/pyval.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const cell_required[] = {
	"backend", "capability", "id", "pr_gate", "release_signoff", "runner", "scheduled_profile",
	"state", "support_level", NULL,
};
static const char *const manifest_required[] = {
	"code", "execution", "experiment_id", "inputs", "outputs", "paper", "parameters", "question",
	"schema_version", "status", "timestamps", NULL,
};

static bool is_hex(const struct bg_value *v, size_t len)
{
	const char *s;

	if (!bg_value_is_string(v) || bg_value_len(v) != len)
		return false;
	s = bg_value_str(v);
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool str_is(const struct bg_value *v, const char *s)
{
	return bg_value_is_string(v) && strcmp(bg_value_str(v), s) == 0;
}

/* A list, or what Python iterates as an empty one (an empty object or
 * string; the reference walks those without a finding). Anything else is
 * no list: a number the reference cannot walk, a non-empty object or string
 * whose keys or characters it takes for entries and fails on. */
static bool iterates_as_list(const struct bg_value *v)
{
	return bg_value_is_array(v) || (bg_value_is_object(v) && bg_value_size(v) == 0) ||
	       (bg_value_is_string(v) && bg_value_len(v) == 0);
}

/* A (capability, backend) pair as Python's repr of a tuple. */
static void pair_repr(struct bg_strbuf *out, const struct bg_value *a, const struct bg_value *b)
{
	bg_strbuf_addch(out, '(');
	bg_value_py_repr(out, a);
	bg_strbuf_adds(out, ", ");
	bg_value_py_repr(out, b);
	bg_strbuf_addch(out, ')');
}

/* A new array of the given values (NULL ends the list early). */
static struct bg_value *tuple(struct bg_arena *ar, struct bg_value *x, struct bg_value *y,
			      struct bg_value *z)
{
	struct bg_value *arr = bg_value_new_array(ar, 3);

	bg_value_append(ar, arr, x);
	bg_value_append(ar, arr, y);
	if (z)
		bg_value_append(ar, arr, z);
	return arr;
}

/* A key for the tuple (a, b) that is the same for two pairs exactly when a
 * Python dict or set takes them for one: (9, 'cpu') and (9.0, 'cpu') alike,
 * (true, 'cpu') and (1, 'cpu') too (bg_value_py_key); neither is a list or an
 * object. */
static void pair_key(struct bg_strbuf *out, const struct bg_value *a, const struct bg_value *b)
{
	struct bg_strbuf ka = BG_STRBUF_INIT;

	bg_value_py_key(&ka, a);
	bg_strbuf_addf(out, "%zu:", ka.len);
	bg_strbuf_addn(out, ka.buf, ka.len);
	bg_value_py_key(out, b);
	bg_strbuf_release(&ka);
}

static int load(struct bg_arena *ar, const struct bg_config *cfg, const char *rel,
		struct bg_value **out, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT;
	int rc;

	bg_config_path(cfg, &path, rel);
	rc = bg_value_parse_file(ar, path.buf, rel, out, ctx);
	bg_strbuf_release(&path);
	if (!rc && (rc = bg_value_expect_object(*out, rel, ctx)))
		*out = NULL;
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Strings, then numbers (true/false among them), then null, then the rest:
 * the order of values that Python cannot compare (the reference fails
 * there), kept total for qsort. */
static int py_rank(const struct bg_value *v)
{
	return bg_value_is_string(v) ? 0 : bg_value_is_pynumber(v) ? 1 : !v || bg_value_is_null(v) ? 2 : 3;
}

/* Python's < on two ids or two members of a tuple: strings by code point
 * (UTF-8 bytes compare the same), numbers (and true/false) by value, 9
 * before 10 and 5 before 100.0; values Python cannot order (a number among
 * strings, null: the reference fails there) by py_rank, then by JSON text. */
static int cmp_member(const struct bg_value *a, const struct bg_value *b)
{
	struct bg_strbuf x = BG_STRBUF_INIT, y = BG_STRBUF_INIT;
	bool type_error = false;
	int c;

	if (py_rank(a) != py_rank(b))
		return py_rank(a) - py_rank(b);
	if (bg_value_is_string(a))
		return bg_value_strcmp_cp(bg_value_str(a), bg_value_str(b));
	if (bg_value_is_pynumber(a))
		return bg_value_cmp(a, b, &type_error);
	bg_value_dump(&x, a, -1, false);
	bg_value_dump(&y, b, -1, false);
	c = strcmp(x.buf, y.buf);
	bg_strbuf_release(&x);
	bg_strbuf_release(&y);
	return c;
}

/* sorted() of ids (bg_value pointers) */
static int cmp_id(const void *a, const void *b)
{
	return cmp_member(*(const struct bg_value *const *)a, *(const struct bg_value *const *)b);
}

/* sorted() of (capability, backend) tuples: by the first member, then the
 * second; not by their JSON text, where '"' (0x22) would sort "a" after
 * "a b" */
static int cmp_pair(const void *a, const void *b)
{
	const struct bg_value *x = *(const struct bg_value *const *)a, *y = *(const struct bg_value *const *)b;
	int c = cmp_member(bg_value_at(x, 0), bg_value_at(y, 0));

	return c ? c : cmp_member(bg_value_at(x, 1), bg_value_at(y, 1));
}

/* Appends "[('a', 'b'), ...]" for the values of set (pair_key -> [a, b]) sorted as tuples. */
static void pair_list(struct bg_strbuf *out, struct bg_value *set)
{
	size_t n = bg_value_size(set), i = 0;
	struct bg_value **pairs = bg_xmalloc((n ? n : 1) * sizeof(*pairs)), *v;
	const char *k;

	BG_VALUE_OBJECT_FOREACH(set, k, v)
		pairs[i++] = v;
	qsort(pairs, n, sizeof(*pairs), cmp_pair);
	bg_strbuf_addch(out, '[');
	for (i = 0; i < n; i++) {
		if (i)
			bg_strbuf_adds(out, ", ");
		pair_repr(out, bg_value_at(pairs[i], 0), bg_value_at(pairs[i], 1));
	}
	bg_strbuf_addch(out, ']');
	free(pairs);
}

static int check_profile(struct bg_arena *ar, const struct bg_config *cfg, struct bg_problems *p, size_t *ncells,
			 struct bg_ctx *ctx)
{
	struct bg_value *profile = NULL, *parity = NULL, *caps, *cap, *cells, *cell, *expected, *seen;
	struct bg_value *contract, *defs;
	const char *parity_display = cfg->parity_matrix;
	size_t i;
	int rc;

	if ((rc = load(ar, cfg, cfg->profile_path, &profile, ctx)))
		return rc;
	if ((rc = load(ar, cfg, cfg->parity_matrix, &parity, ctx)))
		return rc;
	rc = BG_ECHECK;
	if (!bg_value_equal(bg_value_get(profile, "schema_version"), bg_value_new_int(ar, 1)))
		bg_problems_add(p, "profile matrix schema_version must be 1");
	if (cfg->profile_protocol && !str_is(bg_value_get(profile, "protocol_version"), cfg->profile_protocol)) {
		/* the reference's words for its own ".../v1"; another version
		 * (profile.protocol_version) is named, as the registry's is */
		size_t n = strlen(cfg->profile_protocol);
		if (n >= 3 && strcmp(cfg->profile_protocol + n - 3, "/v1") == 0)
			bg_problems_add(p, "profile matrix protocol_version is not frozen at v1");
		else
			bg_problems_add(p, "profile matrix protocol_version is not frozen at %s", cfg->profile_protocol);
	}
	if (!str_is(bg_value_get(profile, "parity_matrix"), cfg->parity_matrix))
		bg_problems_add(p, "profile matrix must name the canonical parity matrix");

	expected = bg_value_new_object(ar, 0);
	caps = bg_value_get(parity, "capabilities");
	if (!iterates_as_list(caps)) {
		bg_error(ctx, rc, "%s: 'capabilities' must be a list", parity_display);
		goto fail;
	}
	BG_VALUE_ARRAY_FOREACH(caps, i, cap) {
		struct bg_value *id = bg_value_get(cap, "id"), *cov = bg_value_get(cap, "coverage"), *entry;
		const char *backend;

		/* an id the reference can hash (a number, true/false, null) is
		 * taken as it takes it; a list or an object stops it */
		if (!bg_value_is_object(cap) || !id || bg_value_is_array(id) || bg_value_is_object(id) ||
		    !bg_value_is_object(cov)) {
			bg_error(ctx, rc, "%s: capabilities[%zu] needs a string 'id' and an object 'coverage'",
				 parity_display, i);
			goto fail;
		}
		BG_VALUE_OBJECT_FOREACH(cov, backend, entry) {
			struct bg_strbuf k = BG_STRBUF_INIT;
			struct bg_value *b = bg_value_new_string(ar, backend), *first;

			if (!bg_value_is_object(entry) || !bg_value_get(entry, "level")) {
				struct bg_strbuf idtext = BG_STRBUF_INIT;

				bg_value_py_str(&idtext, id);
				bg_error(ctx, rc, "%s: capability '%s' backend '%s' needs a 'level'",
					 parity_display, idtext.buf, backend);
				bg_strbuf_release(&idtext);
				goto fail;
			}
			pair_key(&k, id, b);
			/* expected[key] = level: a pair Python takes for one already
			 * there keeps its first key (9 before a later 9.0), the level
			 * is the last one's */
			if ((first = bg_value_get(expected, k.buf)))
				bg_value_set(ar, expected, k.buf, tuple(ar, bg_value_at(first, 0), bg_value_at(first, 1),
									 bg_value_get(entry, "level")));
			else
				bg_value_set(ar, expected, k.buf, tuple(ar, id, b, bg_value_get(entry, "level")));
			bg_strbuf_release(&k);
		}
	}
	cells = bg_value_get(profile, "cells");
	if (bg_value_is_object(cells) || bg_value_is_string(cells)) {
		/* enumerate(cells) of the reference: an object's keys, a string's
		 * characters, each a cell that is a string (reported below) */
		struct bg_value *items = bg_value_new_array(ar, 0), *x;
		const char *key, *c = bg_value_str(cells);

		BG_VALUE_OBJECT_FOREACH(cells, key, x)
			bg_value_append(ar, items, bg_value_new_string(ar, key));
		for (size_t n; c && *c; c += n) {
			n = (unsigned char)*c < 0x80 ? 1 : (unsigned char)*c >= 0xf0 ? 4 : (unsigned char)*c >= 0xe0 ? 3 : 2;
			bg_value_append(ar, items, bg_value_new_stringn(ar, c, n));
		}
		cells = items;
	} else if (cells && !bg_value_is_array(cells)) {
		bg_error(ctx, rc, "%s: 'cells' must be a list", cfg->profile_path);
		goto fail;
	}
	seen = bg_value_new_object(ar, 0);
	BG_VALUE_ARRAY_FOREACH(cells, i, cell) {
		struct bg_strbuf sb = BG_STRBUF_INIT, k = BG_STRBUF_INIT, want = BG_STRBUF_INIT;
		struct bg_value *capv, *backv, *exp, *support, *st, *sched, *signoff;
		const char *cid;

		if (!bg_value_is_object(cell)) {
			/* the reference takes set(cell): a list's items or a string's
			 * characters; it reports the names missing there and goes on
			 * (it fails only where none is missing or an item is a list
			 * or an object, and on anything else) */
			struct bg_value *have = bg_value_new_object(ar, 0), *x;
			bool names = bg_value_is_string(cell) || bg_value_is_array(cell);
			size_t j;

			BG_VALUE_ARRAY_FOREACH(cell, j, x) {
				if (bg_value_is_array(x) || bg_value_is_object(x))
					names = false;
				else if (bg_value_is_string(x))
					bg_value_set(ar, have, bg_value_str(x), bg_value_true());
			}
			if (names && bg_value_missing_list(&sb, have, cell_required)) {
				bg_problems_add(p, "profile cell %zu is missing %s", i, sb.buf);
				bg_strbuf_release(&sb);
				continue;
			}
			bg_strbuf_release(&sb);
			bg_error(ctx, rc, "%s: cells[%zu] must be an object", cfg->profile_path, i);
			goto fail;
		}
		if (bg_value_missing_list(&sb, cell, cell_required)) {
			bg_problems_add(p, "profile cell %zu is missing %s", i, sb.buf);
			bg_strbuf_release(&sb);
			continue;
		}
		capv = bg_value_get(cell, "capability");
		backv = bg_value_get(cell, "backend");
		if (bg_value_is_array(capv) || bg_value_is_object(capv) || bg_value_is_array(backv) || bg_value_is_object(backv)) {
			bg_strbuf_release(&sb);
			bg_error(ctx, rc, "%s: cells[%zu]: 'capability' and 'backend' must be strings",
				 cfg->profile_path, i);
			goto fail;
		}
		bg_value_py_str(&want, capv);
		bg_strbuf_adds(&want, "::");
		bg_value_py_str(&want, backv);
		if (!str_is(bg_value_get(cell, "id"), want.buf))
			bg_problems_add(p, "profile cell %zu id must be %s", i, want.buf);
		pair_key(&k, capv, backv);
		if (bg_value_get(seen, k.buf)) {
			bg_strbuf_reset(&sb);
			pair_repr(&sb, capv, backv);
			bg_problems_add(p, "duplicate profile cell for %s", sb.buf);
		}
		support = bg_value_get(cell, "support_level");
		if (!bg_value_get(seen, k.buf)) /* seen[key] = ...: the first key stays */
			bg_value_set(ar, seen, k.buf, tuple(ar, capv, backv, NULL));
		bg_strbuf_reset(&sb);
		bg_value_py_str(&sb, bg_value_get(cell, "id"));
		cid = sb.buf;
		exp = bg_value_get(expected, k.buf);
		if (!exp) {
			bg_problems_add(p, "profile cell %s is not in the parity matrix", cid);
		} else if (!bg_value_equal(support, bg_value_at(exp, 2))) {
			struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
			bg_value_py_str(&a, support);
			bg_value_py_str(&b, bg_value_at(exp, 2));
			bg_problems_add(p, "profile cell %s support level %s != %s", cid, a.buf, b.buf);
			bg_strbuf_release(&a);
			bg_strbuf_release(&b);
		}
		sched = bg_value_get(cell, "scheduled_profile");
		st = bg_value_get(cell, "state");
		signoff = bg_value_get(cell, "release_signoff");
		if (!str_is(sched, "weekly") && !str_is(sched, "none"))
			bg_problems_add(p, "profile cell %s has invalid schedule", cid);
		if (!str_is(st, "ready") && !str_is(st, "evidence-gap") && !str_is(st, "unsupported"))
			bg_problems_add(p, "profile cell %s has invalid state", cid);
		if (!bg_value_is_boolean(signoff))
			bg_problems_add(p, "profile cell %s release_signoff must be boolean", cid);
		if (str_is(support, "not-implemented")) {
			if (!str_is(st, "unsupported"))
				bg_problems_add(p, "unsupported cell %s must stay unsupported", cid);
			if (!str_is(sched, "none") || bg_value_truthy(signoff))
				bg_problems_add(p, "unsupported cell %s cannot schedule timing", cid);
			if (!str_is(bg_value_get(cell, "pr_gate"), "unsupported-contract"))
				bg_problems_add(p, "unsupported cell %s needs a fail-closed PR gate", cid);
		} else if (str_is(st, "unsupported")) {
			bg_problems_add(p, "implemented cell %s cannot be unsupported", cid);
		}
		bg_strbuf_release(&sb);
		bg_strbuf_release(&k);
		bg_strbuf_release(&want);
	}
	{
		struct bg_value *missing = bg_value_new_object(ar, 0), *extra = bg_value_new_object(ar, 0), *v;
		const char *k;
		struct bg_strbuf sb = BG_STRBUF_INIT;

		BG_VALUE_OBJECT_FOREACH(expected, k, v)
			if (!bg_value_get(seen, k))
				bg_value_set(ar, missing, k, tuple(ar, bg_value_at(v, 0), bg_value_at(v, 1), NULL));
		BG_VALUE_OBJECT_FOREACH(seen, k, v)
			if (!bg_value_get(expected, k))
				bg_value_set(ar, extra, k, v);
		if (bg_value_size(missing)) {
			pair_list(&sb, missing);
			bg_problems_add(p, "profile matrix is missing cells: %s", sb.buf);
		}
		if (bg_value_size(extra)) {
			bg_strbuf_reset(&sb);
			pair_list(&sb, extra);
			bg_problems_add(p, "profile matrix has extra cells: %s", sb.buf);
		}
		bg_strbuf_release(&sb);
	}

	defs = bg_value_get(profile, "capabilities");
	if (defs && !bg_value_is_object(defs)) {
		bg_error(ctx, rc, "%s: 'capabilities' must be an object", cfg->profile_path);
		goto fail;
	}
	{
		bool same = true;
		const char *k;
		struct bg_value *v;
		size_t nparity = 0;
		struct bg_value *pids = bg_value_new_object(ar, 0);

		/* the definitions' keys are strings: an id of another type is
		 * never among them */
		BG_VALUE_ARRAY_FOREACH(caps, i, cap) {
			if (bg_value_is_string(bg_value_get(cap, "id")))
				bg_value_set(ar, pids, bg_value_str(bg_value_get(cap, "id")), bg_value_true());
			else
				same = false;
		}
		nparity = bg_value_size(pids);
		if (bg_value_size(defs) != nparity)
			same = false;
		BG_VALUE_OBJECT_FOREACH(defs, k, v)
			if (!bg_value_get(pids, k))
				same = false;
		if (!same)
			bg_problems_add(p, "profile capability definitions must equal the parity capabilities");
		BG_VALUE_OBJECT_FOREACH(defs, k, v) {
			if (!bg_value_is_object(v)) {
				bg_error(ctx, rc, "%s: capability '%s' must be an object", cfg->profile_path, k);
				goto fail;
			}
			if (!bg_value_truthy(bg_value_get(v, "required_metrics")))
				bg_problems_add(p, "profile capability %s has no required metrics", k);
		}
	}
	contract = bg_value_get(profile, "comparison_contract");
	if (contract && !bg_value_is_object(contract)) {
		bg_error(ctx, rc, "%s: 'comparison_contract' must be an object", cfg->profile_path);
		goto fail;
	}
	if (!str_is(bg_value_get(contract, "cross_key_comparison"), "forbidden"))
		bg_problems_add(p, "cross-key performance comparisons must remain forbidden");
	if (!str_is(bg_value_get(contract, "parity_failure"), "block"))
		bg_problems_add(p, "scientific parity failures must block promotion");
	if (!str_is(bg_value_get(contract, "default_regression_mode"), "report-only"))
		bg_problems_add(p, "new hardware baselines must begin in report-only mode");
	{
		struct bg_value *m = bg_value_get(contract, "minimum_accepted_sessions_before_hard_threshold");
		double d = 0;
		if (m && !bg_value_is_pynumber(m)) {
			bg_error(ctx, rc, "%s: comparison_contract.minimum_accepted_sessions_before_hard_threshold must be a number",
				 cfg->profile_path);
			goto fail;
		}
		if (m)
			bg_value_to_float(m, &d);
		if (d < 5)
			bg_problems_add(p, "hard timing thresholds need at least five accepted sessions");
	}
	*ncells = bg_value_size(cells);
	rc = BG_OK;
fail:
	return rc;
}

/* Values (not keys) of every string in v, lower-cased search for private paths. */
bool bg_profile_private_path(const char *s)
{
	struct bg_strbuf l = BG_STRBUF_INIT;
	bool hit;

	bg_py_lower(&l, s);
	hit = strstr(l.buf, "/users/") || strstr(l.buf, "/home/");
	bg_strbuf_release(&l);
	return hit;
}

static bool has_private_path(const struct bg_value *v)
{
	if (bg_value_is_string(v))
		return bg_profile_private_path(bg_value_str(v));
	if (bg_value_is_object(v)) {
		const char *k;
		struct bg_value *x;
		BG_VALUE_OBJECT_FOREACH(v, k, x) {
			(void)k;
			if (has_private_path(x))
				return true;
		}
	} else if (bg_value_is_array(v)) {
		size_t i;
		struct bg_value *x;
		BG_VALUE_ARRAY_FOREACH(v, i, x)
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

static void check_manifest(struct bg_arena *ar, const char *dir, struct bg_value *m, struct bg_problems *p, struct bg_value *ids,
			   struct bg_value *statuses)
{
	struct bg_strbuf label = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
	struct bg_value *eid = bg_value_get(m, "experiment_id"), *code, *status, *v, *item;
	size_t i;
	const char *id;

	if (eid)
		bg_value_py_str(&sb, eid);
	else
		bg_strbuf_adds(&sb, "<missing>");
	id = sb.buf;
	/* experiment_ids.add(id): keyed as Python's set keys it (9 and 9.0,
	 * true and 1 one id; "9" and 9 two), the first one kept; a list or an
	 * object (the reference fails there) is an id of its own */
	{
		struct bg_strbuf key = BG_STRBUF_INIT;
		struct bg_value *idv = eid ? eid : bg_value_new_string(ar, id);

		if (!bg_value_py_key(&key, idv)) {
			bg_strbuf_addch(&key, 'u');
			bg_value_dump(&key, idv, -1, false);
		}
		if (!bg_value_get(ids, key.buf))
			bg_value_set(ar, ids, key.buf, idv);
		bg_strbuf_release(&key);
	}
	bg_strbuf_addf(&label, "experiment %s", id);
	status = bg_value_get(m, "status");
	/* by folder: RUNS.md's row for an id is judged by the manifest in the
	 * folder of that name (as the reference reads it), never by another
	 * folder's manifest that claims the same id */
	if (bg_value_is_string(status))
		bg_value_set(ar, statuses, dir, status);
	{
		struct bg_strbuf miss = BG_STRBUF_INIT;
		if (bg_value_missing_list(&miss, m, manifest_required)) {
			bg_problems_add(p, "%s is missing %s", label.buf, miss.buf);
			bg_strbuf_release(&miss);
			goto out;
		}
		bg_strbuf_release(&miss);
	}
	if (!bg_value_equal(bg_value_get(m, "schema_version"), bg_value_new_int(ar, 1)))
		bg_problems_add(p, "%s schema_version must be 1", label.buf);
	if (!str_is(eid, dir))
		bg_problems_add(p, "%s id must match its directory", label.buf);
	if (!bg_value_is_string(status) || !bg_profile_runs_status(bg_value_str(status))) {
		struct bg_strbuf s = BG_STRBUF_INIT;
		bg_value_py_str(&s, status);
		bg_problems_add(p, "%s has invalid status %s", label.buf, s.buf);
		bg_strbuf_release(&s);
	}
	v = bg_value_get(m, "question");
	if (!bg_value_is_string(v) || bg_value_str_blank(v))
		bg_problems_add(p, "%s needs a falsifiable question", label.buf);
	code = bg_value_get(m, "code");
	if (!bg_value_is_object(code)) {
		bg_problems_add(p, "%s code must be an object with revision and dirty", label.buf);
	} else {
		struct bg_value *dirty = bg_value_get(code, "dirty");
		if (!is_hex(bg_value_get(code, "revision"), 40))
			bg_problems_add(p, "%s code revision must be a full Git SHA", label.buf);
		if (!bg_value_is_boolean(dirty))
			bg_problems_add(p, "%s code.dirty must be boolean", label.buf);
		if (bg_value_truthy(dirty)) {
			struct bg_value *d = bg_value_get(code, "diff_sha256");
			if (!(bg_value_truthy(d) ? is_hex(d, 64) : false))
				bg_problems_add(p, "%s dirty source needs a diff SHA-256", label.buf);
		}
	}
	v = bg_value_get(m, "inputs");
	if (!iterates_as_list(v))
		bg_problems_add(p, "%s inputs must be a list", label.buf);
	else BG_VALUE_ARRAY_FOREACH(v, i, item) {
		struct bg_value *h = bg_value_is_object(item) ? bg_value_get(item, "sha256") : NULL;
		if (!is_hex(h, 64)) {
			struct bg_strbuf s = BG_STRBUF_INIT;
			bg_value_py_str(&s, bg_value_get(item, "dataset_id"));
			bg_problems_add(p, "%s input %s lacks SHA-256", label.buf, s.buf);
			bg_strbuf_release(&s);
		}
	}
	if (bg_value_is_string(status) && strcmp(bg_value_str(status), "planned") != 0 &&
	    strcmp(bg_value_str(status), "running") != 0 && bg_profile_runs_status(bg_value_str(status))) {
		struct bg_value *ts = bg_value_get(m, "timestamps");
		if (!bg_value_truthy(bg_value_get(ts, "finished")))
			bg_problems_add(p, "%s terminal status needs a finished timestamp", label.buf);
		if (!bg_value_truthy(bg_value_get(m, "outputs")))
			bg_problems_add(p, "%s terminal status needs retained outputs", label.buf);
	}
	v = bg_value_get(m, "outputs");
	if (!iterates_as_list(v))
		bg_problems_add(p, "%s outputs must be a list", label.buf);
	else BG_VALUE_ARRAY_FOREACH(v, i, item) {
		struct bg_value *h = bg_value_get(item, "sha256"), *res = bg_value_get(item, "result");
		struct bg_strbuf art = BG_STRBUF_INIT;

		if (!bg_value_truthy(h))
			h = bg_value_get(item, "sha256_manifest");
		bg_value_py_str(&art, bg_value_get(item, "artifact"));
		if (!is_hex(h, 64))
			bg_problems_add(p, "%s output %s lacks SHA-256", label.buf, art.buf);
		if (!bg_value_is_string(res) || bg_value_str_blank(res))
			bg_problems_add(p, "%s output %s lacks a result", label.buf, art.buf);
		bg_strbuf_release(&art);
	}
	if (has_private_path(m))
		bg_problems_add(p, "%s exposes an absolute private path", label.buf);
out:
	bg_strbuf_release(&label);
	bg_strbuf_release(&sb);
}

/* bg_file_problem of a manifest or RUNS.md path, but "" (none there) where
 * stat fails as Python's Path.exists and is_file take for no file: a link
 * to nothing, a loop of links. */
static const char *file_problem(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return "";
	return bg_file_problem(path);
}

static int check_experiments(struct bg_arena *ar, const struct bg_config *cfg, struct bg_problems *p, struct bg_value *ids,
			     struct bg_value *statuses, size_t *count, struct bg_ctx *ctx)
{
	struct bg_strbuf root = BG_STRBUF_INIT;
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = BG_OK;

	bg_config_path(cfg, &root, cfg->experiments);
	/* no folder: no experiments; one that cannot be listed, or an entry
	 * whose manifest cannot be looked at, is never taken for none */
	d = opendir(root.buf);
	if (!d && errno != ENOENT)
		rc = bg_error(ctx, BG_EIO, "%s: cannot list the experiments: %s; make 'profile.experiments' of benchgate.json name a folder benchgate can read", cfg->experiments, strerror(errno));
	if (d) {
		while (!rc && (e = readdir(d))) {
			struct bg_strbuf mp = BG_STRBUF_INIT;
			const char *why;
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			bg_strbuf_addf(&mp, "%s/%s/manifest.json", root.buf, e->d_name);
			/* a manifest.json that is a folder or a FIFO is there,
			 * unreadable: never skipped as absent; a link to nothing
			 * or a loop of links is no manifest, as the reference's
			 * glob (Path.exists) finds none there */
			why = file_problem(mp.buf);
			if (!why) {
				if (n == cap) {
					cap = cap ? 2 * cap : 32;
					names = bg_xrealloc(names, cap * sizeof(*names));
				}
				names[n++] = bg_xstrdup(e->d_name);
			} else if (*why) {
				rc = bg_error(ctx, BG_EIO,
					      "%s/%s/manifest.json: cannot read: %s; an experiment's manifest.json is a "
					      "JSON file: move what is there away", cfg->experiments, e->d_name, why);
			}
			bg_strbuf_release(&mp);
		}
		closedir(d);
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !rc; i++) {
		struct bg_strbuf mp = BG_STRBUF_INIT, disp = BG_STRBUF_INIT;
		struct bg_value *m = NULL;

		bg_strbuf_addf(&mp, "%s/%s/manifest.json", root.buf, names[i]);
		bg_strbuf_addf(&disp, "%s/%s/manifest.json", cfg->experiments, names[i]);
		rc = bg_value_parse_file(ar, mp.buf, disp.buf, &m, ctx);
		if (!rc && (rc = bg_value_expect_object(m, disp.buf, ctx)) == 0)
			check_manifest(ar, names[i], m, p, ids, statuses);
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

/* Python's str.splitlines boundaries: the end of the line from i, *next
 * where the next one starts. */
static size_t line_end(const char *s, size_t len, size_t i, size_t *next)
{
	for (; i < len; i++) {
		size_t n = bg_py_line_break(s + i, len - i);
		if (n) {
			*next = i + n;
			return i;
		}
	}
	*next = len;
	return len;
}

/*
 * RUNS.md as Python's read_text(encoding="utf-8") takes it: strict UTF-8,
 * else BG_ECHECK (the reference stops with a UnicodeDecodeError) naming
 * the line and column of the first byte that is not, or saying that the
 * file is UTF-16, as an editor on Windows may save it.
 */
static int runs_utf8(const struct bg_strbuf *text, const char *display, struct bg_ctx *ctx)
{
	const unsigned char *u = (const unsigned char *)text->buf;
	size_t line = 1, col = 1;

	if (text->len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)))
		return bg_error(ctx, BG_ECHECK, "%s: cannot read: the file is UTF-16 (it starts with a UTF-16 "
				"byte order mark); save it as UTF-8", display);
	for (size_t i = 0; i < text->len;) {
		size_t n = u[i] < 0x80 ? 1 : bg_utf8_len(u + i);

		if (!n)
			return bg_error(ctx, BG_ECHECK, "%s:%zu:%zu: cannot read: the byte 0x%02x is not UTF-8 "
					"text; save the file as UTF-8", display, line, col, u[i]);
		/* lines end as in Python's text mode: "\n", "\r\n" or "\r" */
		if (u[i] == '\n' || (u[i] == '\r' && !(i + 1 < text->len && u[i + 1] == '\n'))) {
			line++;
			col = 1;
		} else if (u[i] != '\r') {
			col++;
		}
		i += n;
	}
	return BG_OK;
}

struct bg_value *bg_profile_runs_rows(struct bg_arena *ar, const char *text, size_t text_len)
{
	struct bg_value *rows = bg_value_new_object(ar, 0);
	size_t i = 0;

	while (i < text_len) {
		size_t next, end = line_end(text, text_len, i, &next);
		const char *line = text + i;
		size_t len = end - i;

		if (len >= 4 && strncmp(line, "| 20", 4) == 0) {
			/* fields = [f.strip() for f in line.strip("|").split("|")] */
			size_t a = 0, b = len;
			struct bg_value *fields = bg_value_new_array(ar, 8);

			while (a < b && line[a] == '|')
				a++;
			while (b > a && line[b - 1] == '|')
				b--;
			for (size_t s = a;;) {
				const char *bar = memchr(line + s, '|', b - s);
				size_t e = bar ? (size_t)(bar - line) : b, st, sl;
				bg_py_strip(line + s, e - s, &st, &sl);
				bg_value_append(ar, fields, bg_value_new_stringn(ar, line + s + st, sl));
				if (!bar)
					break;
				s = e + 1;
			}
			/* an id cell holding a NUL names no experiment (a manifest's
			 * id never holds one); as a C string it would pass for one */
			if (bg_value_size(fields) >= 4 &&
			    strlen(bg_value_str(bg_value_at(fields, 0))) == bg_value_len(bg_value_at(fields, 0))) {
				const char *id = bg_value_str(bg_value_at(fields, 0));
				struct bg_value *list = bg_value_get(rows, id);
				if (!list) {
					list = bg_value_new_array(ar, 1);
					bg_value_set(ar, rows, id, list);
				}
				bg_value_append(ar, list, bg_value_at(fields, 3));
			}
		}
		i = next;
	}
	return rows;
}

static int check_runs(struct bg_arena *ar, const struct bg_config *cfg, struct bg_problems *p, struct bg_value *ids,
		      struct bg_value *statuses, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_value *rows = NULL;
	size_t n;
	struct bg_value **sorted;
	const char *why;
	int rc = BG_OK;

	bg_config_path(cfg, &path, cfg->runs_index);
	/* missing is the reference's finding; there but unreadable (a folder,
	 * a FIFO, never opened: no writer would ever come) is an I/O failure */
	if ((why = file_problem(path.buf)) && !*why) {
		bg_problems_add(p, "%s is missing", cfg->runs_index);
		goto out;
	}
	if (why) {
		rc = bg_error(ctx, BG_EIO, "%s: cannot read: %s; RUNS.md is a file ('profile.runs_index' of benchgate.json "
			      "names it): move what is there away, or name another file", cfg->runs_index, why);
		goto out;
	}
	if ((rc = bg_file_read(path.buf, cfg->runs_index, &text, ctx)) ||
	    (rc = runs_utf8(&text, cfg->runs_index, ctx)))
		goto out;
	rows = bg_profile_runs_rows(ar, text.buf, text.len);
	/* sorted(experiment_ids): the ids themselves, as Python orders them */
	n = bg_value_size(ids);
	sorted = bg_xmalloc((n ? n : 1) * sizeof(*sorted));
	{
		const char *key;
		struct bg_value *v;
		size_t k = 0;

		BG_VALUE_OBJECT_FOREACH(ids, key, v)
			sorted[k++] = v;
	}
	qsort(sorted, n, sizeof(*sorted), cmp_id);
	for (size_t k = 0; k < n; k++) {
		struct bg_value *list = NULL, *st;
		const char *want, *have, *id;
		struct bg_strbuf idtext = BG_STRBUF_INIT;

		/* rows.get(id): the rows are keyed by text, never by a number */
		if (bg_value_is_string(sorted[k]))
			list = bg_value_get(rows, bg_value_str(sorted[k]));
		bg_value_py_str(&idtext, sorted[k]);
		id = idtext.buf;
		if (!list || bg_value_size(list) == 0) {
			bg_problems_add(p, "%s is missing %s", cfg->runs_index, id);
		} else if (bg_value_size(list) != 1) {
			bg_problems_add(p, "%s repeats %s", cfg->runs_index, id);
		} else {
			st = bg_value_get(statuses, id);
			want = st ? bg_profile_runs_status(bg_value_str(st)) : NULL;
			/* no want: the manifest's invalid status was already reported */
			have = bg_value_str(bg_value_at(list, 0));
			if (want && strncmp(have, want, strlen(want)) != 0)
				bg_problems_add(p, "%s status for %s must start with %s", cfg->runs_index, id, want);
		}
		bg_strbuf_release(&idtext);
	}
	free(sorted);
out:
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	return rc;
}

int bg_profile_check(const struct bg_config *cfg, struct bg_problems *problems,
		     struct bg_profile_counts *counts, struct bg_ctx *ctx)
{
	struct bg_arena *ar = bg_arena_new(); /* every document and scratch value of the check */
	struct bg_value *ids = bg_value_new_object(ar, 0), *statuses = bg_value_new_object(ar, 0);
	int rc;

	counts->cells = counts->experiments = 0;
	rc = check_profile(ar, cfg, problems, &counts->cells, ctx);
	if (!rc)
		rc = check_experiments(ar, cfg, problems, ids, statuses, &counts->experiments, ctx);
	if (!rc)
		rc = check_runs(ar, cfg, problems, ids, statuses, ctx);
	bg_arena_free(ar);
	return rc;
}
