/*
 * outputs.c - a run's outputs: the files its patterns match, hashed by
 * their real bytes, compared with the smoke run's (--deterministic) and
 * checked for parity (sha256, allclose against a .npy reference, or a
 * command). See measure/internal.h and docs/measure.md.
 */
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/measure.h"
#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"
#include "measure/internal.h"

#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

static json_t *jreal_or_null(bool ok, double v)
{
	return ok && isfinite(v) ? json_real(v) : json_null();
}

void bg_outputs_release(struct bg_outputs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct bg_output *outputs_add(struct bg_outputs *l, const char *path)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->v = bg_xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].path = bg_xstrdup(path);
	l->v[l->n].hex[0] = '\0';
	return &l->v[l->n++];
}

/* Whether path is among the first n entries of l. */
static bool outputs_have(const struct bg_outputs *l, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l->v[i].path, path) == 0)
			return true;
	return false;
}

/* The first folder glob(3) could not read, and why (GLOB_ERR stops there). */
static int glob_errno;
static char glob_path[512];

static int glob_error(const char *path, int err)
{
	glob_errno = err;
	snprintf(glob_path, sizeof(glob_path), "%s", path);
	return 1;
}

json_t *bg_outputs_hash(const char *const *patterns, size_t npatterns, const struct bg_stale *stale,
			struct bg_outputs *list, char **err)
{
	json_t *out = json_array();
	struct bg_strbuf e = BG_STRBUF_INIT;

	for (size_t i = 0; i < npatterns; i++) {
		glob_t g;
		int rc, gerr;
		size_t earlier = list->n; /* matched by the patterns before this one */

		glob_errno = 0;
		rc = glob(patterns[i], GLOB_ERR, glob_error, &g);
		gerr = glob_errno;
		if (rc != 0) {
			if (!e.len && rc == GLOB_ABORTED)
				bg_strbuf_addf(&e, "output pattern '%s': a folder on its path cannot be read (%s): %s; "
						   "check that folder",
					       patterns[i], glob_path, strerror(gerr ? gerr : EIO));
			else if (!e.len)
				bg_strbuf_addf(&e, "output pattern '%s' matched no file", patterns[i]);
			if (rc != GLOB_NOMATCH)
				globfree(&g);
			continue;
		}
		for (size_t k = 0; k < g.gl_pathc; k++) {
			struct bg_ctx ctx;
			struct bg_output *one;
			json_t *f;

			if (outputs_have(list, earlier, g.gl_pathv[k]))
				continue;
			one = outputs_add(list, g.gl_pathv[k]);
			f = json_object();

			bg_ctx_init(&ctx);
			json_object_set_new(f, "path", bg_json_text(g.gl_pathv[k]));
			if (!e.len && bg_stale_unwritten(stale, g.gl_pathv[k]))
				bg_strbuf_addf(&e, "output '%s' was not written by the run: it is the file that was there before (stale)",
					       g.gl_pathv[k]);
			if (bg_is_dir(g.gl_pathv[k])) {
				/* a folder matched: the files in it were surely meant */
				one->hex[0] = '\0';
				json_object_set_new(f, "sha256", json_null());
				if (!e.len)
					bg_strbuf_addf(&e, "output '%s' is a folder, not a file: name the files a run "
						       "writes (those in it: '%s/*')", g.gl_pathv[k], g.gl_pathv[k]);
			} else if (bg_sha256_file(g.gl_pathv[k], NULL, one->hex, &ctx) == BG_OK) {
				json_object_set_new(f, "sha256", json_string(one->hex));
			} else {
				one->hex[0] = '\0';
				json_object_set_new(f, "sha256", json_null());
				if (!e.len)
					bg_strbuf_adds(&e, bg_ctx_message(&ctx));
			}
			bg_ctx_release(&ctx);
			json_array_append_new(out, f);
		}
		globfree(&g);
	}
	*err = e.len ? bg_strbuf_detach(&e, NULL) : NULL;
	bg_strbuf_release(&e);
	return out;
}

/* The value --parity sha256:HEX is compared with (see docs/measure.md):
 * the listing holds each path's real bytes, as sha256sum writes it. */
static int outputs_digest(const struct bg_outputs *outputs, char hex[65], struct bg_ctx *ctx)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	int rc;

	if (outputs->n == 1) {
		memcpy(hex, outputs->v[0].hex, 65);
		return BG_OK;
	}
	for (size_t i = 0; i < outputs->n; i++)
		bg_sha256sum_line(&sb, outputs->v[i].hex, outputs->v[i].path);
	rc = bg_sha256_hex(sb.buf, sb.len, hex, ctx);
	bg_strbuf_release(&sb);
	return rc;
}

/* Why allclose failed: how many elements, the largest error ("n/a" over
 * no finite element, "inf" beyond a double) and how many are NaN or infinite. */
/* Element k of a as numpy prints a scalar: 3.1, or (1+2j) for a complex. */
static void add_element(struct bg_strbuf *d, const struct bg_npy *a, size_t k)
{
	double re, im;

	bg_npy_at(a, k, &re, &im);
	if (a->is_complex)
		bg_strbuf_addf(d, "(%.10g%+.10gj)", re, im);
	else
		bg_strbuf_addf(d, "%.10g", re);
}

static void allclose_detail(struct bg_strbuf *d, const struct bg_allclose *r, const char *path,
			    const struct bg_measure_opts *o, const struct bg_npy *a, const struct bg_npy *b)
{
	size_t idx[BG_NPY_MAX_DIMS], k = r->first;

	bg_strbuf_addf(d, "%zu of %zu elements of %s beyond rtol=%g atol=%g (max abs error ", r->beyond,
		       r->count, path, o->rtol, o->atol);
	if (r->finite)
		bg_strbuf_addf(d, "%g", r->max_abs);
	else
		bg_strbuf_adds(d, "n/a");
	if (r->nonfinite)
		bg_strbuf_addf(d, "; %zu of them NaN or infinite", r->nonfinite);
	bg_strbuf_addch(d, ')');
	/* the first, by its index in the array, beside the reference's */
	for (size_t i = a->ndim; i-- > 0;) {
		idx[i] = a->shape[i] ? k % a->shape[i] : 0;
		k = a->shape[i] ? k / a->shape[i] : 0;
	}
	bg_strbuf_adds(d, "; the first at [");
	for (size_t i = 0; i < a->ndim; i++)
		bg_strbuf_addf(d, "%s%zu", i ? ", " : "", idx[i]);
	bg_strbuf_adds(d, "]: ");
	add_element(d, a, r->first);
	bg_strbuf_addf(d, " against %s's ", o->parity_reference);
	add_element(d, b, r->first);
}

/* Whether two stats are of one file as it was: same file, size, times. */
static bool same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int bg_parity_ref_open(const struct bg_measure_opts *o, struct bg_parity_ref *ref, struct bg_ctx *ctx)
{
	struct bg_ctx c2;
	int rc;

	if (o->parity != BG_PARITY_ALLCLOSE || ref->loaded)
		return BG_OK;
	bg_ctx_init(&c2);
	/* a private copy, hashed: the very bytes compared with (the file's
	 * state is taken first, so that any later change shows) */
	if (stat(o->parity_reference, &ref->st) != 0)
		rc = bg_error(&c2, BG_EIO, "%s: cannot read: %s", o->parity_reference, strerror(errno));
	else if ((rc = bg_npy_open_copy(o->parity_reference, NULL, &ref->npy, ref->sha256, &c2)) == BG_OK)
		ref->loaded = true;
	if (rc != BG_OK)
		rc = bg_error(ctx, BG_ECHECK, "the allclose reference: %s", bg_ctx_message(&c2));
	bg_ctx_release(&c2);
	return rc;
}

/*
 * Whether the reference is no longer what was read before the runs (a run
 * rewrote it), or the output is the reference itself: either proves
 * nothing. detail says which. A file only touched, its bytes the same,
 * still counts as the reference.
 */
static bool ref_moved(const struct bg_measure_opts *o, struct bg_parity_ref *ref, const char *output,
		      struct bg_strbuf *detail)
{
	struct stat now, out;
	char hex[65];
	struct bg_ctx ctx;
	bool moved = false;

	/* the reference as it is now: an output written where a moved
	 * reference was may have its inode number, and is not it */
	if (stat(o->parity_reference, &now) != 0) {
		bg_strbuf_addf(detail, "the reference, read before the runs, is no longer there to compare with "
				       "(%s: cannot read: %s): a run may not remove or replace it",
			       o->parity_reference, strerror(errno));
		return true;
	}
	if (stat(output, &out) == 0 && out.st_dev == now.st_dev && out.st_ino == now.st_ino) {
		bg_strbuf_addf(detail, "the output '%s' is the reference file itself: an output cannot prove itself; "
				       "compare it with a reference the command does not write",
			       output);
		return true;
	}
	if (same_file_state(&now, &ref->st))
		return false;
	bg_ctx_init(&ctx);
	if (bg_sha256_file(o->parity_reference, NULL, hex, &ctx) != BG_OK) {
		bg_strbuf_addf(detail, "the reference, read before the runs, is no longer there to compare with "
				       "(%s): a run may not remove or replace it",
			       bg_ctx_message(&ctx));
		moved = true;
	} else if (strcmp(hex, ref->sha256) != 0) {
		bg_strbuf_addf(detail, "the reference '%s' changed during the session (SHA-256 %.12s... before the "
				       "runs, %.12s... now): a run may not write what its outputs are compared with; "
				       "keep the reference out of the command's reach",
			       o->parity_reference, ref->sha256, hex);
		moved = true;
	} else {
		ref->st = now; /* rewritten with the same bytes */
	}
	bg_ctx_release(&ctx);
	return moved;
}

json_t *bg_parity_check(const struct bg_measure_opts *o, const struct bg_outputs *outputs, const char *out_err,
			struct bg_parity_ref *ref)
{
	json_t *p = json_object();
	bool pass = false;
	struct bg_strbuf detail = BG_STRBUF_INIT;

	if (out_err) {
		bg_strbuf_adds(&detail, out_err);
	} else if (o->parity == BG_PARITY_SHA256) {
		struct bg_ctx ctx;
		char hex[65];

		bg_ctx_init(&ctx);
		if (outputs_digest(outputs, hex, &ctx) != BG_OK) {
			bg_strbuf_adds(&detail, bg_ctx_message(&ctx));
		} else {
			pass = strcasecmp(hex, o->parity_sha256) == 0;
			json_object_set_new(p, "sha256", json_string(hex));
			if (!pass)
				bg_strbuf_addf(&detail, "sha256 %s differs from the expected %s", hex,
					       o->parity_sha256);
		}
		bg_ctx_release(&ctx);
	} else if (o->parity == BG_PARITY_ALLCLOSE) {
		struct bg_ctx ctx;
		struct bg_npy a;
		struct bg_allclose r;
		const char *path;

		bg_ctx_init(&ctx);
		if (outputs->n != 1) {
			bg_strbuf_addf(&detail, "allclose needs exactly one output file, %zu matched", outputs->n);
			for (size_t i = 0; i < outputs->n && i < 3; i++)
				bg_strbuf_addf(&detail, "%s'%s'", i ? ", " : " (", outputs->v[i].path);
			if (outputs->n > 1)
				bg_strbuf_addf(&detail, "%s); name the one file to compare", outputs->n > 3 ? ", ..." : "");
		} else if (!ref->loaded) {
			bg_strbuf_adds(&detail, "the reference was not read before the runs");
		} else if (ref_moved(o, ref, outputs->v[0].path, &detail)) {
			/* (detail says how) */
		} else {
			path = outputs->v[0].path;
			if (bg_npy_open(path, NULL, &a, &ctx) != BG_OK) {
				bg_strbuf_adds(&detail, bg_ctx_message(&ctx));
			} else {
				if (bg_npy_allclose(&a, &ref->npy, o->rtol, o->atol, &r, &ctx) != BG_OK) {
					bg_strbuf_addf(&detail, "%s vs %s: %s", path, o->parity_reference,
						       bg_ctx_message(&ctx));
				} else {
					pass = r.pass;
					json_object_set_new(p, "rtol", json_real(o->rtol));
					json_object_set_new(p, "atol", json_real(o->atol));
					json_object_set_new(p, "elements", json_integer((json_int_t)r.count));
					json_object_set_new(p, "beyond_tolerance",
							    json_integer((json_int_t)r.beyond));
					json_object_set_new(p, "nonfinite_mismatches",
							    json_integer((json_int_t)r.nonfinite));
					json_object_set_new(p, "max_abs_error",
							    jreal_or_null(r.max_abs_valid, r.max_abs));
					json_object_set_new(p, "max_rel_error",
							    jreal_or_null(r.max_rel_valid, r.max_rel));
					json_object_set_new(p, "rel_l2_error",
							    jreal_or_null(r.rel_l2_valid, r.rel_l2));
					if (!pass)
						allclose_detail(&detail, &r, path, o, &a, &ref->npy);
				}
				bg_npy_release(&a);
			}
		}
		bg_ctx_release(&ctx);
	} else if (o->parity == BG_PARITY_COMMAND) {
		size_t n = outputs->n;
		const char **paths = bg_xcalloc(n + 1, sizeof(char *));
		struct bg_ctx ctx;
		int st = -1, sig = 0;

		/* every output by its real bytes: none may drop out of the check */
		for (size_t i = 0; i < n; i++)
			paths[i] = outputs->v[i].path;
		bg_ctx_init(&ctx);
		if (bg_spawn_shell(o->parity_command, paths, n, o->interrupted, &st, &sig, NULL, &ctx) != BG_OK) {
			bg_strbuf_adds(&detail, bg_ctx_message(&ctx));
		} else if (st != 0) {
			bg_strbuf_adds(&detail, "parity command ");
			bg_measure_shell_ended(&detail, st, sig);
		}
		pass = st == 0;
		json_object_set_new(p, "exit_status", json_integer(st));
		json_object_set_new(p, "signal", sig ? json_integer(sig) : json_null());
		bg_ctx_release(&ctx);
		free(paths);
	}
	json_object_set_new(p, "result", json_string(pass ? "pass" : "fail"));
	json_object_set_new(p, "detail", detail.len ? bg_json_text(detail.buf) : json_null());
	bg_strbuf_release(&detail);
	return p;
}

bool bg_outputs_same(const struct bg_outputs *a, const struct bg_outputs *b, struct bg_strbuf *why)
{
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++) {
		if (strcmp(a->v[i].path, b->v[i].path) != 0)
			break;
		if (strcmp(a->v[i].hex, b->v[i].hex) != 0) {
			bg_strbuf_addf(why, "'%s' differs from the smoke run's (SHA-256 %.12s... against %.12s...)",
				       a->v[i].path, a->v[i].hex, b->v[i].hex);
			return false;
		}
	}
	if (i == a->n && i == b->n)
		return true;
	/* the same patterns match in the same order: the first name that
	 * differs is one that only one of the runs left */
	if (i < a->n && !outputs_have(b, b->n, a->v[i].path))
		bg_strbuf_addf(why, "'%s' is an output the smoke run did not have", a->v[i].path);
	else if (i < b->n && !outputs_have(a, a->n, b->v[i].path))
		bg_strbuf_addf(why, "'%s', an output of the smoke run, is not there", b->v[i].path);
	else
		bg_strbuf_adds(why, "the set of output files differs from the smoke run's");
	return false;
}

void bg_parity_ref_release(struct bg_parity_ref *ref)
{
	if (ref->loaded)
		bg_npy_release(&ref->npy);
	memset(ref, 0, sizeof(*ref));
}
