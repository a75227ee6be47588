/*
 * promotion.c - the eight promotion criteria, the evidence row, and the
 * whole promotion with roll-back (see benchgate/promotion.h). Registry
 * values are converted to jansson JSON once (bg_value_to_json), so this file
 * only depends on the registry's public calls.
 */
#include "benchgate/promotion.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/measure.h"
#include "benchgate/promote.h"
#include "benchgate/provenance.h"
#include "benchgate/registry.h"
#include "benchgate/sha256.h"
#include "core/stops.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum { C_REVISIONS, C_MACHINE, C_GEOMETRY, C_CACHE, C_TIMING, C_MEMORY, C_PARITY, C_RECORDS, C_N };
static const char *const criterion_names[C_N] = {
	"revisions", "machine", "geometry", "cache", "timing", "memory", "parity", "records",
};
static const char *const criterion_titles[C_N] = {
	"exact source and implementation revisions",
	"computer, accelerator, runtime and lease held throughout",
	"source and selected geometry, bins, crop and dtypes",
	"an explicit cache state",
	"run-level records with p50, p95, maximum and the timing boundary",
	"memory layers",
	"parity and output fingerprints",
	"manifest, raw artifacts and a terminal RUNS.md row",
};
/* The gate fields naming what is measured (besides geometry, cache state
 * and timing boundary, which criteria 3 to 5 compare). */
static const char *const identity_fields[] = {
	"module", "operation", "platform", "runbook", "configuration", NULL,
};

static const char *const geometry_fields[] = {
	"source_scan_rows", "source_scan_columns", "selected_scan_rows", "selected_scan_columns",
	"source_detector_rows", "source_detector_columns", "scan_bin", "detector_bin",
	"output_detector_rows", "output_detector_columns", "source_dtype", "working_dtype", NULL,
};

void bg_promotion_evidence_path(const struct bg_config *cfg, struct bg_strbuf *out)
{
	bg_strbuf_addf(out, "%s/benchgate-evidence.json", cfg->experiments);
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Whether seconds (a row's figure) is ns (a stored one) / 1e9, as the row was written. */
static bool same_figure(const json_t *seconds, const json_t *ns)
{
	double a = json_number_value(seconds), b = json_number_value(ns) / 1e9;

	if (!json_is_number(seconds) || !json_is_number(ns))
		return !json_is_number(seconds) && !json_is_number(ns);
	return a == b || fabs(a - b) <= 1e-12 * fabs(b);
}

bool bg_promotion_row_of(const json_t *row, long long id, const json_t *verdict)
{
	const json_t *b = json_object_get(row, "benchgate");
	const char *rk = str(b, "key_id"), *key = str(verdict, "key_id");

	return json_is_integer(json_object_get(b, "session_id")) &&
	       json_integer_value(json_object_get(b, "session_id")) == id && rk && key && strcmp(rk, key) == 0 &&
	       same_figure(json_object_get(row, "wall_p50_seconds"), json_object_get(verdict, "wall_p50_ns")) &&
	       same_figure(json_object_get(row, "wall_p95_seconds"), json_object_get(verdict, "wall_p95_ns")) &&
	       same_figure(json_object_get(row, "wall_max_seconds"), json_object_get(verdict, "wall_max_ns"));
}

static bool full_hex(const char *s, size_t n)
{
	size_t i;

	if (!s || strlen(s) != n)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static bool blank(const json_t *v)
{
	const char *s = json_string_value(v);

	if (!v || json_is_null(v))
		return true;
	if (!s)
		return false;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return !*s;
}

static void add(json_t *list, const char *fmt, ...) BG_PRINTF(2, 3);
static void add(json_t *list, const char *fmt, ...)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	bg_strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	json_array_append_new(list, json_string(sb.buf));
	bg_strbuf_release(&sb);
}

/* Compact JSON text of v for messages. */
static void show(struct bg_strbuf *out, const json_t *v)
{
	char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	bg_strbuf_adds(out, t ? t : "missing");
	free(t);
}

static bool is_timed(const json_t *run)
{
	const char *p = str(run, "phase");

	return p && strcmp(p, "timed") == 0;
}

/* The status cell of experiment id's RUNS.md row, or NULL (caller frees). */
static char *runs_md_status(const struct bg_config *cfg, const char *id)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	char *status = NULL;
	const char *line;

	bg_ctx_init(&ctx);
	bg_config_path(cfg, &path, cfg->runs_index);
	if (bg_file_read(path.buf, cfg->runs_index, &text, &ctx) == BG_OK) {
		for (line = text.buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			const char *p = line, *cell[5];
			int n = 0;

			if (*p != '|')
				continue;
			/* | id | hypothesis | setup | status | ... ; cells split on unescaped '|' */
			for (; *p && *p != '\n' && n < 5; p++)
				if (*p == '|' && (p == line || p[-1] != '\\'))
					cell[n++] = p + 1;
			if (n < 5)
				continue;
			{
				const char *a = cell[0], *b = cell[1] - 1;
				while (a < b && *a == ' ')
					a++;
				while (b > a && b[-1] == ' ')
					b--;
				if ((size_t)(b - a) != strlen(id) || strncmp(a, id, strlen(id)) != 0)
					continue;
				a = cell[3];
				b = cell[4] - 1;
				while (a < b && *a == ' ')
					a++;
				while (b > a && b[-1] == ' ')
					b--;
				free(status);
				status = bg_xstrndup(a, (size_t)(b - a));
			}
		}
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
	return status;
}

bool bg_promotion_claims_cold(const char *state)
{
	while (state && (*state == ' ' || *state == '\t'))
		state++;
	return state && strncasecmp(state, "cold", 4) == 0 && !isalnum((unsigned char)state[4]);
}

/*
 * Whether the experiment's manifest records a clean tree at revision rev.
 * The manifest's code block is captured before benchgate writes anything
 * (the running RUNS.md row makes the tree dirty by the time the engine
 * captures the session's own provenance).
 */
static bool manifest_clean(const struct bg_config *cfg, const json_t *session, const char *rev)
{
	const char *eid = str(session, "experiment_id");
	struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *m = NULL, *code;
	bool clean = false;

	if (!eid || !rev)
		return false;
	bg_ctx_init(&ctx);
	bg_strbuf_addf(&rel, "%s/%s/manifest.json", cfg->experiments, eid);
	bg_config_path(cfg, &abs, rel.buf);
	if (bg_json_load_file(abs.buf, rel.buf, &m, &ctx) == BG_OK) {
		code = json_object_get(m, "code");
		clean = json_is_false(json_object_get(code, "dirty")) && str(code, "revision") &&
			strcmp(str(code, "revision"), rev) == 0;
	}
	json_decref(m);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&abs);
	bg_ctx_release(&ctx);
	return clean;
}

static void check_records(const struct bg_config *cfg, const json_t *session, json_t *p)
{
	const char *eid = str(session, "experiment_id");
	struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *manifest = NULL, *o;
	char *status;
	size_t i;

	if (!eid) {
		add(p, "the session names no experiment (experiment_id is missing)");
		return;
	}
	bg_ctx_init(&ctx);
	bg_strbuf_addf(&rel, "%s/%s/manifest.json", cfg->experiments, eid);
	bg_config_path(cfg, &abs, rel.buf);
	if (bg_json_load_file(abs.buf, rel.buf, &manifest, &ctx) != BG_OK) {
		add(p, "the manifest cannot be read: %s", bg_ctx_message(&ctx));
	} else if (json_object_get(session, "id") &&
		   !json_equal(json_object_get(manifest, "session_id"), json_object_get(session, "id"))) {
		/* an experiment id used again (its first folder removed): these
		 * records are another run's */
		add(p, "%s records session %lld, not this session %lld: the experiment's records are another run's",
		    rel.buf, (long long)json_integer_value(json_object_get(manifest, "session_id")),
		    (long long)json_integer_value(json_object_get(session, "id")));
	} else if (!str(manifest, "status") || strcmp(str(manifest, "status"), "completed") != 0) {
		add(p, "%s has status '%s', not 'completed'", rel.buf,
		    str(manifest, "status") ? str(manifest, "status") : "missing");
	} else if (json_array_size(json_object_get(manifest, "outputs")) == 0) {
		add(p, "%s retains no outputs (raw artifacts)", rel.buf);
	} else {
		json_array_foreach(json_object_get(manifest, "outputs"), i, o) {
			const char *art = str(o, "artifact"), *sha = str(o, "sha256");
			char got[65];

			if (!art) {
				add(p, "%s outputs[%zu] names no artifact", rel.buf, i);
				continue;
			}
			bg_strbuf_reset(&abs);
			bg_config_path(cfg, &abs, art);
			if (!bg_is_file(abs.buf)) { /* relative to the experiment folder */
				bg_strbuf_reset(&abs);
				bg_strbuf_reset(&rel);
				bg_strbuf_addf(&rel, "%s/%s/%s", cfg->experiments, eid, art);
				bg_config_path(cfg, &abs, rel.buf);
			}
			if (!bg_is_file(abs.buf))
				add(p, "raw artifact '%s' of experiment %s is missing", art, eid);
			else if (bg_sha256_file(abs.buf, art, got, &ctx) != BG_OK || !sha || strcmp(sha, got) != 0)
				add(p, "raw artifact '%s' of experiment %s does not match its SHA-256 in the manifest",
				    art, eid);
		}
	}
	status = runs_md_status(cfg, eid);
	if (!status)
		add(p, "%s has no row for experiment %s", cfg->runs_index, eid);
	else if (strncmp(status, "ok", 2) != 0)
		add(p, "the %s row of experiment %s is '%s', not a terminal 'ok'", cfg->runs_index, eid, status);
	free(status);
	json_decref(manifest);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&abs);
	bg_ctx_release(&ctx);
}

/*
 * The notes of the session's decision (verdict's decision document's
 * "conditions": where the machine ran otherwise than its baseline) that are
 * text, as a new array, empty when none: no criterion, but the promoted
 * figures are that session's, and whoever promotes it is told.
 */
static json_t *decision_notes(const json_t *verdict)
{
	json_t *notes = json_array(), *x;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(verdict, "decision_document"), "conditions"), i, x)
		if (json_is_string(x))
			json_array_append(notes, x);
	return notes;
}

int bg_promotion_check(const struct bg_config *cfg, const json_t *gate, const json_t *runbook,
		       const json_t *session, const json_t *verdict, json_t **report, struct bg_ctx *ctx)
{
	json_t *pre = json_array(), *crit[C_N], *criteria = json_array(), *refusals = json_array(), *x;
	const json_t *ctxt = json_object_get(session, "context"), *prov = json_object_get(session, "provenance");
	const json_t *stats = json_object_get(session, "statistics"), *runs = json_object_get(session, "runs"), *r;
	const char *tier = str(session, "tier"), *decision = str(verdict, "decision");
	const char *curation = str(verdict, "curation"), *state = NULL;
	long long id = (long long)json_integer_value(json_object_get(verdict, "id"));
	size_t i, ntimed = 0;
	bool other_unmet = false;

	for (int c = 0; c < C_N; c++)
		crit[c] = json_array();
	/* preconditions */
	if (!str(session, "gate_id"))
		add(pre, "session %lld is not a gate session (a diagnostic 'benchgate measure' session "
		    "never promotes)", id);
	else if (!gate)
		add(pre, "gate '%s' is not in the registry", str(session, "gate_id"));
	else if (str(gate, "state") && (strcmp(str(gate, "state"), "unsupported") == 0 ||
					 strcmp(str(gate, "state"), "superseded") == 0))
		add(pre, "gate '%s' is %s; it takes no timing evidence", str(session, "gate_id"), str(gate, "state"));
	/* what the gate says was measured must be what the session ran: its
	 * evidence row is built from the gate as the registry has it now */
	for (i = 0; gate && ctxt && identity_fields[i]; i++) {
		const json_t *now = json_object_get(gate, identity_fields[i]);
		const json_t *then = json_object_get(ctxt, identity_fields[i]);

		if (!json_equal(now ? now : json_null(), then ? then : json_null())) {
			struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;

			bg_py_str(&a, then ? then : json_null());
			bg_py_str(&b, now ? now : json_null());
			add(pre, "the gate's %s is now %s; session %lld ran with %s: run the gate again", identity_fields[i],
			    b.buf, id, a.buf);
			bg_strbuf_release(&a);
			bg_strbuf_release(&b);
		}
	}
	/* so must its runbook (command, measure object, inputs, question): the
	 * row says the gate was measured by it. A session of a benchgate that
	 * did not record the digest is not compared. */
	if (gate && json_is_string(json_object_get(ctxt, "runbook_sha256"))) {
		const char *then = str(ctxt, "runbook_sha256");
		char now[65];
		int rc;

		*report = NULL;
		if ((rc = bg_lifecycle_runbook_sha256(runbook, now, ctx))) {
			json_decref(pre);
			json_decref(criteria);
			json_decref(refusals);
			for (int c = 0; c < C_N; c++)
				json_decref(crit[c]);
			return rc;
		}
		if (strcmp(now, then) != 0)
			add(pre, "runbook '%s' has changed since session %lld ran (its SHA-256 then %.12s, now %.12s): "
			    "a promotion would credit the runbook as it is now with a timing of the old one; run the gate again",
			    str(gate, "runbook") ? str(gate, "runbook") : "?", id, then, runbook ? now : "none");
	}
	if (!tier || (strcmp(tier, "release-signoff") != 0 && strcmp(tier, "scheduled-profile") != 0))
		add(pre, "tier '%s' never promotes (release-signoff promotes to measured, scheduled-profile "
		    "to partial)", tier ? tier : "none");
	if (!decision)
		add(pre, "session %lld has no decision", id);
	else if (strcmp(decision, "block") == 0)
		add(pre, "session %lld is blocked (see 'benchgate compare %lld')", id, id);
	if (decision && curation && strcmp(curation, "accepted") != 0 && strcmp(curation, "auto-accepted") != 0)
		add(pre, "session %lld is %s; only an accepted session promotes%s", id, curation,
		    strcmp(curation, "pending") == 0 ? " ('benchgate accept SESSION --why TEXT')" : "");

	/* 1 revisions */
	{
		const json_t *git = json_object_get(prov, "git");
		const char *rev = str(git, "revision");
		const char *impl = str(ctxt, "implementation_revision");

		if (!rev)
			add(crit[C_REVISIONS], "the source revision was not recorded (not a Git checkout?)");
		else if (!full_hex(rev, 40))
			add(crit[C_REVISIONS], "source revision '%s' is not a full Git SHA (40 lower-case hexadecimal "
			    "digits, as git records it): promote a session run in a Git checkout", rev);
		if (!json_is_false(json_object_get(git, "dirty")) && !manifest_clean(cfg, session, rev)) {
			struct bg_strbuf u = BG_STRBUF_INIT;
			bg_provenance_untracked_text(git, &u);
			add(crit[C_REVISIONS], "the working tree was %s%s%s%s: promote a session of a clean, committed revision",
			    json_is_true(json_object_get(git, "dirty")) ? "dirty" : "of unknown cleanliness",
			    u.len ? " (" : "", u.buf, u.len ? ")" : "");
			bg_strbuf_release(&u);
		}
		if (impl && !full_hex(impl, 40))
			add(crit[C_REVISIONS], "implementation revision '%s' is not a full Git SHA (40 lower-case "
			    "hexadecimal digits): give the whole commit in the gate's implementation_revision", impl);
	}
	/* 2 machine */
	{
		const char *computer = str(session, "computer");
		const json_t *lease = json_object_get(session, "lease");

		if (!computer)
			add(crit[C_MACHINE], "the session records no computer");
		else if (gate && str(gate, "computer") && strcmp(computer, str(gate, "computer")) != 0)
			add(crit[C_MACHINE], "the session ran on '%s', the gate's computer is '%s'", computer,
			    str(gate, "computer"));
		else if (!bg_config_computer_known(cfg, computer))
			add(crit[C_MACHINE], "computer '%s' is not one of benchgate.json's computers", computer);
		if (blank(json_object_get(ctxt, "device")))
			add(crit[C_MACHINE], "the device (accelerator) identity was not recorded");
		if (blank(json_object_get(ctxt, "runtime")))
			add(crit[C_MACHINE], "the runtime versions were not recorded");
		/* run records a lease lost mid-session as a block reason, so an unblocked
		 * session of an experiment held it throughout; an explicit record wins */
		if (lease ? !json_is_true(json_object_get(lease, "held_throughout"))
			  : !(str(session, "experiment_id") && decision && strcmp(decision, "block") != 0))
			add(crit[C_MACHINE], "the device lease is not recorded as held for the whole session");
	}
	/* 3 geometry; 3 to 5 compare with the gate: none to compare with is said
	 * as such, never as a gate that declares nothing (nor as met) */
	for (int c = C_GEOMETRY; !gate && c <= C_TIMING; c++)
		if (str(session, "gate_id"))
			add(crit[c], "there is no gate to compare with: '%s' is not in the registry",
			    str(session, "gate_id"));
		else
			add(crit[c], "there is no gate to compare with: the session names none");
	for (i = 0; gate && geometry_fields[i]; i++) {
		const json_t *g = json_object_get(gate, geometry_fields[i]);
		const json_t *c = json_object_get(ctxt, geometry_fields[i]);

		if (!g || json_is_null(g))
			add(crit[C_GEOMETRY], "the gate does not declare %s", geometry_fields[i]);
		else if (!c || !json_equal((json_t *)g, (json_t *)c)) {
			struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
			show(&a, c);
			show(&b, g);
			add(crit[C_GEOMETRY], "%s of the session (%s) is not the gate's (%s)", geometry_fields[i], a.buf,
			    b.buf);
			bg_strbuf_release(&a);
			bg_strbuf_release(&b);
		}
	}
	if (gate && json_object_get(gate, "crop") &&
	    !json_equal(json_object_get(gate, "crop"), json_object_get(ctxt, "crop")))
		add(crit[C_GEOMETRY], "the session's crop is not the gate's");
	/* 4 cache */
	{
		const json_t *cache = json_object_get(session, "cache");

		if (gate && (blank(json_object_get(gate, "cache_state")) ||
			     !json_is_string(json_object_get(gate, "cache_state"))))
			add(crit[C_CACHE], "the gate declares no cache state");
		else if (gate && !json_equal(json_object_get(gate, "cache_state"), json_object_get(ctxt, "cache_state")))
			add(crit[C_CACHE], "the session does not record the gate's cache state '%s'",
			    str(gate, "cache_state"));
		if (str(cache, "requested") && strcmp(str(cache, "requested"), "cold") == 0 &&
		    (!str(cache, "state") || strcmp(str(cache, "state"), "cold") != 0))
			add(crit[C_CACHE], "a cold cache was claimed but not verified (state '%s')",
			    str(cache, "state") ? str(cache, "state") : "unknown");
		else if (gate && bg_promotion_claims_cold(str(gate, "cache_state")) &&
			 (!str(cache, "state") || strcmp(str(cache, "state"), "cold") != 0))
			/* the evidence row would carry the gate's cold claim */
			add(crit[C_CACHE], "the gate's cache state '%s' claims a cold cache, which the session did not "
					   "verify (cache state '%s'): evict the data before every run (the runbook's "
					   "measure.cache)",
			    str(gate, "cache_state"), str(cache, "state") ? str(cache, "state") : "none");
	}
	/* 5 timing */
	json_array_foreach(runs, i, r)
		if (is_timed(r))
			ntimed++;
	{
		const json_t *wall = bg_measure_timing_stats(session);

		if (ntimed == 0)
			add(crit[C_TIMING], "the session has no run-level records of timed runs");
		if (!json_is_number(json_object_get(wall, "p50")) || !json_is_number(json_object_get(wall, "p95")) ||
		    !json_is_number(json_object_get(wall, "max")))
			add(crit[C_TIMING], "the session lacks timing p50, p95 or max (wall time, or the reported samples)");
		if (gate && blank(json_object_get(gate, "timing_boundary")))
			add(crit[C_TIMING], "the gate declares no timing boundary");
		else if (gate && !json_equal(json_object_get(gate, "timing_boundary"), json_object_get(ctxt, "timing_boundary")))
			add(crit[C_TIMING], "the session does not record the gate's timing boundary");
	}
	/* 6 memory */
	{
		const json_t *gpu = json_object_get(prov, "gpu");
		bool accel = json_array_size(json_object_get(gpu, "devices")) > 0;
		const json_t *logical = json_object_get(json_object_get(session, "metrics"), "logical_resident_bytes");

		if (gate && json_is_number(json_object_get(gate, "logical_resident_bytes")) && !json_is_number(logical))
			add(crit[C_MEMORY], "logical resident bytes: the gate declares them, the session did not report them");
		if (accel && !json_is_number(json_object_get(json_object_get(stats, "gpu_process_peak_bytes"), "max")))
			add(crit[C_MEMORY], "accelerator peak: the machine has an accelerator, its peak was not measured");
		if (!json_is_number(json_object_get(json_object_get(stats, "tree_peak_bytes"), "max"))) {
			/* say so when the runs were too short for the sampler, the usual cause */
			size_t sampled = 0;
			json_int_t every = json_integer_value(json_object_get(json_object_get(session, "options"),
									     "sample_interval_ms"));

			json_array_foreach(runs, i, r)
				if (is_timed(r) && json_integer_value(json_object_get(r, "tree_samples")) > 0)
					sampled++;
			if (ntimed > 0 && sampled == 0 && every > 0)
				add(crit[C_MEMORY],
				    "process-tree peak: not measured: every timed run ended before the first memory "
				    "sample (one each %lld ms); give each run more work so that it lasts longer, or "
				    "sample more often (the runbook's measure.sample_interval_ms; --sample-interval "
				    "of measure)",
				    (long long)every);
			else
				add(crit[C_MEMORY], "process-tree peak: not measured");
		}
		json_array_foreach(runs, i, r)
			if (is_timed(r) && !json_is_number(json_object_get(r, "swap_delta_bytes"))) {
				add(crit[C_MEMORY], "swap delta: not measured on every timed run");
				break;
			}
	}
	/* 7 parity */
	{
		const json_t *par = json_object_get(session, "parity");
		bool bad = false;

		if (!str(par, "kind") || strcmp(str(par, "kind"), "none") == 0)
			add(crit[C_PARITY], "no parity was declared (the runbook's measure.parity)");
		else if (!str(par, "result") || strcmp(str(par, "result"), "pass") != 0)
			add(crit[C_PARITY], "parity did not pass");
		json_array_foreach(runs, i, r) {
			const json_t *outs = json_object_get(r, "outputs"), *o;
			size_t k;

			if (!is_timed(r))
				continue;
			if (json_array_size(outs) == 0)
				bad = true;
			json_array_foreach(outs, k, o)
				if (!full_hex(str(o, "sha256"), 64))
					bad = true;
		}
		if (bad || ntimed == 0)
			add(crit[C_PARITY], "not every timed run has its outputs fingerprinted (SHA-256)");
	}
	/* 8 records */
	check_records(cfg, session, crit[C_RECORDS]);

	json_array_foreach(pre, i, x)
		json_array_append(refusals, x);
	for (int c = 0; c < C_N; c++) {
		bool met = json_array_size(crit[c]) == 0;

		json_array_append_new(criteria, json_pack("{s:i, s:s, s:s, s:b, s:o}", "number", c + 1, "name",
							  criterion_names[c], "title", criterion_titles[c], "met",
							  met, "problems", crit[c]));
		if (!met && c != C_MEMORY) {
			other_unmet = true;
			json_array_foreach(crit[c], i, x)
				add(refusals, "%d %s: %s", c + 1, criterion_names[c], json_string_value(x));
		}
	}
	if (json_array_size(pre) == 0 && !other_unmet) {
		bool memory = json_array_size(crit[C_MEMORY]) == 0;

		state = memory && strcmp(tier, "release-signoff") == 0 ? "measured" : "partial";
		if (strcmp(state, "partial") == 0 && str(gate, "state") && strcmp(str(gate, "state"), "measured") == 0) {
			add(refusals, "gate '%s' is already measured; a partial promotion would lower it",
			    str(session, "gate_id"));
			json_array_append(pre, json_array_get(refusals, json_array_size(refusals) - 1));
			state = NULL;
		}
	}
	*report = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "session", (json_int_t)id, "gate",
			    str(session, "gate_id") ? json_string(str(session, "gate_id")) : json_null(), "tier",
			    tier ? json_string(tier) : json_null(), "preconditions", pre, "criteria", criteria, "state",
			    state ? json_string(state) : json_null(), "refusals", refusals, "notes",
			    decision_notes(verdict));
	return BG_OK;
}

/* The key of labels (config map key -> label) whose label is text, else text. */
static json_t *label_key(const struct bg_value *labels, const char *text)
{
	const char *k;
	struct bg_value *v;

	BG_VALUE_OBJECT_FOREACH(labels, k, v)
		if (bg_value_str(v) && strcmp(bg_value_str(v), text) == 0)
			return json_string(k);
	return json_string(text);
}

static void slugify(struct bg_strbuf *out, const char *s)
{
	for (; *s; s++) {
		/* a character, not a byte: the continuation bytes of a UTF-8
		 * sequence add nothing to its '-' */
		if (((unsigned char)*s & 0xc0) == 0x80)
			continue;
		bg_strbuf_addch(out, (unsigned char)*s < 0x80 && isalnum((unsigned char)*s)
					     ? (char)tolower((unsigned char)*s) : '-');
	}
}

int bg_promotion_row(const struct bg_config *cfg, const json_t *gate, const json_t *session,
		     const json_t *verdict, const char *state, json_t **row, json_t **artifact,
		     struct bg_strbuf *mid, struct bg_ctx *ctx)
{
	const json_t *ctxt = json_object_get(session, "context"), *stats = json_object_get(session, "statistics");
	const json_t *wall = bg_measure_timing_stats(session), *runs = json_object_get(session, "runs"), *r;
	const json_t *inputs = json_object_get(ctxt, "inputs"), *in0 = json_array_get(inputs, 0);
	const char *computer = str(session, "computer"), *slug = bg_config_computer_slug(cfg, computer);
	const char *eid = str(session, "experiment_id"), *rev;
	long long id = (long long)json_integer_value(json_object_get(verdict, "id"));
	struct bg_strbuf aid = BG_STRBUF_INIT, parity = BG_STRBUF_INIT;
	json_t *o, *swap = json_null(), *outs = NULL;
	char date[11] = "";
	size_t i;
	char sha[65] = "";

	*row = *artifact = NULL;
	bg_strbuf_reset(mid);
	if (slug)
		bg_strbuf_addf(mid, "%s-", slug);
	else if (cfg->ncomputers)
		bg_strbuf_adds(mid, "unspecified-device-");
	bg_strbuf_adds(mid, "benchgate-");
	slugify(mid, str(session, "gate_id") ? str(session, "gate_id") : "session");
	bg_strbuf_addf(mid, "-s%lld", id);
	rev = json_string_value(json_object_get(json_object_get(json_object_get(session, "provenance"), "git"), "revision"));
	if (str(session, "started_at"))
		snprintf(date, sizeof(date), "%s", str(session, "started_at"));
	json_array_foreach(runs, i, r) {
		const json_t *s = json_object_get(r, "swap_delta_bytes");
		if (is_timed(r) && json_is_number(s) && (json_is_null(swap) || json_number_value(s) > json_number_value(swap)))
			swap = (json_t *)s;
		if (is_timed(r) && !outs)
			outs = json_object_get(r, "outputs");
	}
	/* parity text: the reference marks a row partial when it reads "incomplete" */
	bg_strbuf_addf(&parity, "%s parity passed on every timed run (benchgate session %lld", str(json_object_get(session, "parity"), "kind"), id);
	json_array_foreach(outs, i, o)
		bg_strbuf_addf(&parity, "%s%s sha256 %s", i ? "; " : ": ", str(o, "path"), str(o, "sha256"));
	bg_strbuf_adds(&parity, ")");
	if (strcmp(state, "partial") == 0)
		bg_strbuf_adds(&parity, strcmp(str(session, "tier"), "release-signoff") == 0
					? "; evidence incomplete: memory layers missing"
					: "; evidence incomplete: a scheduled-profile session, not a release sign-off");
	bg_strbuf_addf(&aid, "benchgate-%s", eid ? eid : "session");
	{
		struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
		bg_strbuf_addf(&rel, "%s/%s/manifest.json", cfg->experiments, eid ? eid : "");
		bg_config_path(cfg, &abs, rel.buf);
		if (bg_sha256_file(abs.buf, rel.buf, sha, ctx) != BG_OK)
			sha[0] = '\0';
		/* the store's session number alone repeats in every clone of the
		 * project (each has a store of its own): the experiment manifest's
		 * digest makes the id this session's */
		if (sha[0])
			bg_strbuf_addf(mid, "-%.8s", sha);
		*artifact = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:b, s:o}", "id", aid.buf, "family",
				      "benchgate", "disposition", "accepted", "path", rel.buf, "sha256",
				      sha[0] ? json_string(sha) : json_null(), "implementation_revision",
				      json_string(str(ctxt, "implementation_revision") ? str(ctxt, "implementation_revision")
										: rev),
				      "observed_head", rev ? json_string(rev) : json_null(), "observed_clean", 1,
				      "evidence_revision", rev ? json_string(rev) : json_null());
		bg_strbuf_release(&rel);
		bg_strbuf_release(&abs);
	}
	o = json_object();
	json_object_set_new(o, "id", json_string(mid->buf));
	json_object_set_new(o, "artifact_id", json_string(aid.buf));
	json_object_set_new(o, "disposition", json_string("accepted"));
	json_object_set_new(o, "functional_area", label_key(cfg->module_labels, str(gate, "module") ? str(gate, "module") : ""));
	json_object_set_new(o, "platform", label_key(cfg->platform_labels, str(gate, "platform") ? str(gate, "platform") : ""));
	json_object_set_new(o, "computer", json_string(computer));
	json_object_set(o, "device", json_object_get(ctxt, "device"));
	json_object_set_new(o, "date", json_string(date));
	json_object_set(o, "fixture_id", in0 ? json_object_get(in0, "dataset_id") : json_null());
	json_object_set(o, "fixture_sha256", in0 ? json_object_get(in0, "sha256") : json_null());
	json_object_set(o, "source_scan_rows", json_object_get(gate, "source_scan_rows"));
	json_object_set(o, "source_scan_columns", json_object_get(gate, "source_scan_columns"));
	json_object_set_new(o, "selected_scan_row_start", json_integer(0));
	json_object_set(o, "selected_scan_row_stop", json_object_get(gate, "selected_scan_rows"));
	json_object_set_new(o, "selected_scan_column_start", json_integer(0));
	json_object_set(o, "selected_scan_column_stop", json_object_get(gate, "selected_scan_columns"));
	json_object_set(o, "source_detector_rows", json_object_get(gate, "source_detector_rows"));
	json_object_set(o, "source_detector_columns", json_object_get(gate, "source_detector_columns"));
	json_object_set(o, "working_detector_rows", json_object_get(gate, "output_detector_rows"));
	json_object_set(o, "working_detector_columns", json_object_get(gate, "output_detector_columns"));
	json_object_set(o, "source_dtype", json_object_get(gate, "source_dtype"));
	json_object_set(o, "working_dtype", json_object_get(gate, "working_dtype"));
	json_object_set(o, "scan_bin", json_object_get(gate, "scan_bin"));
	json_object_set(o, "detector_bin", json_object_get(gate, "detector_bin"));
	if (json_object_get(gate, "crop"))
		json_object_set(o, "crop", json_object_get(gate, "crop"));
	json_object_set(o, "cache_state", json_object_get(gate, "cache_state"));
	json_object_set(o, "timing_boundary", json_object_get(gate, "timing_boundary"));
	json_object_set(o, "sample_count", json_object_get(wall, "count"));
	json_object_set_new(o, "wall_p50_seconds", json_real(json_number_value(json_object_get(wall, "p50")) / 1e9));
	json_object_set_new(o, "wall_p95_seconds", json_real(json_number_value(json_object_get(wall, "p95")) / 1e9));
	json_object_set_new(o, "wall_max_seconds", json_real(json_number_value(json_object_get(wall, "max")) / 1e9));
	json_object_set(o, "logical_resident_bytes",
			json_object_get(json_object_get(session, "metrics"), "logical_resident_bytes")
				? json_object_get(json_object_get(session, "metrics"), "logical_resident_bytes")
				: json_null());
	{
		const json_t *g = json_object_get(json_object_get(stats, "gpu_process_peak_bytes"), "max");
		const json_t *t = json_object_get(json_object_get(stats, "tree_peak_bytes"), "max");
		json_object_set_new(o, "accelerator_peak_bytes", json_is_number(g) ? json_integer((json_int_t)json_number_value(g)) : json_null());
		json_object_set_new(o, "process_peak_rss_bytes", json_is_number(t) ? json_integer((json_int_t)json_number_value(t)) : json_null());
	}
	json_object_set(o, "swap_delta_bytes", swap);
	json_object_set_new(o, "parity", json_string(parity.buf));
	json_object_set_new(o, "benchgate", json_pack("{s:I, s:o, s:o, s:o, s:o, s:s}", "session_id", (json_int_t)id,
						     "experiment_id", eid ? json_string(eid) : json_null(), "tier",
						     json_string(str(session, "tier")), "key_id",
						     json_incref(json_object_get(verdict, "key_id")), "decision",
						     json_incref(json_object_get(verdict, "decision")), "state", state));
	{
		/* the decision's notes travel with the figures (only when there are any) */
		json_t *notes = decision_notes(verdict);

		if (json_array_size(notes))
			json_object_set(json_object_get(o, "benchgate"), "notes", notes);
		json_decref(notes);
	}
	*row = o;
	bg_strbuf_release(&aid);
	bg_strbuf_release(&parity);
	return BG_OK;
}

struct saved {
	const char *rel;
	struct bg_strbuf abs, text;
	bool existed;
};

/* The files the registry imports as evidence, by device and inode (those
 * there when the promotion starts): never written through another name. */
struct imports {
	struct stat *st;
	char **path;
	size_t n;
};

static void imports_collect(const struct bg_config *cfg, const struct bg_registry *reg, struct imports *im)
{
	const struct bg_value *list = bg_value_get(reg->root, "evidence_imports"), *item;
	struct bg_strbuf p = BG_STRBUF_INIT;
	size_t i;

	memset(im, 0, sizeof(*im));
	im->st = bg_xcalloc(bg_value_size(list) + 1, sizeof(*im->st));
	im->path = bg_xcalloc(bg_value_size(list) + 1, sizeof(*im->path));
	BG_VALUE_ARRAY_FOREACH(list, i, item) {
		const char *path = bg_value_is_object(item) ? bg_value_str(bg_value_get(item, "path")) : NULL;

		if (!path || !*path)
			continue;
		bg_strbuf_reset(&p);
		bg_config_path(cfg, &p, path);
		if (stat(p.buf, &im->st[im->n]) == 0)
			im->path[im->n++] = bg_xstrdup(path);
	}
	bg_strbuf_release(&p);
}

static void imports_release(struct imports *im)
{
	for (size_t i = 0; i < im->n; i++)
		free(im->path[i]);
	free(im->path);
	free(im->st);
	memset(im, 0, sizeof(*im));
}

/*
 * Whether writing the file at abs (st, a regular file) would write, by
 * another name, a file a promotion must never write: BG_ECHECK saying
 * which. The evidence index (role 0) is never a link: through one it could
 * be an experiment's own evidence, which the promotion would reformat and
 * append to. The generated document is never a file of the experiments
 * folder (a manifest) nor an evidence import.
 */
static int written_elsewhere(const struct bg_config *cfg, const char *abs, const char *rel, const struct stat *st,
			     unsigned role, const struct imports *im, struct bg_ctx *ctx)
{
	struct stat lst;
	int rc = BG_OK;

	if (role == 0) {
		if (lstat(abs, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			char *to = realpath(abs, NULL);

			rc = bg_error(ctx, BG_ECHECK,
				      "%s: a link (to '%s'): promote keeps benchgate's evidence index as a file of its "
				      "own and writes no other file through it; replace the link with a copy of the "
				      "file it leads to, or remove it; nothing was changed",
				      rel, to ? bg_config_relative(cfg, to) : "?");
			free(to);
		}
		return rc;
	}
	if (role != BG_FILE_GENERATED)
		return BG_OK;
	for (size_t i = 0; i < im->n; i++)
		if (im->st[i].st_dev == st->st_dev && im->st[i].st_ino == st->st_ino)
			return bg_error(ctx, BG_ECHECK,
					"%s: it is the evidence import '%s' too (one file under two names); make it a "
					"file of its own; nothing was changed",
					rel, im->path[i]);
	if (cfg->experiments) {
		struct bg_strbuf ex = BG_STRBUF_INIT;
		char *top, *real = realpath(abs, NULL);
		size_t n;

		bg_config_path(cfg, &ex, cfg->experiments);
		top = realpath(ex.buf, NULL);
		if (top && real && (n = strlen(top)) && strncmp(real, top, n) == 0 && (real[n] == '/' || n == 1))
			rc = bg_error(ctx, BG_ECHECK,
				      "%s: it is '%s' too, a file of the experiments folder (one file under two "
				      "names); make it a file of its own; nothing was changed",
				      rel, bg_config_relative(cfg, real));
		free(top);
		free(real);
		bg_strbuf_release(&ex);
	}
	return rc;
}

/*
 * Keeps the text of rel so that a failed promotion can put it back. A path
 * that exists but is not a regular file, or cannot be read, fails (nothing
 * is written then): taking it for absent would start the evidence index
 * afresh over the retained rows, or remove the file on the way back. One
 * that is, through a link, another of the project's files than role (a
 * BG_FILE_* bit, 0 for the evidence index) fails too (BG_ECHECK), as
 * does one written_elsewhere refuses.
 */
static int save(const struct bg_config *cfg, struct saved *s, const char *rel, unsigned role,
		const struct imports *im, struct bg_ctx *ctx)
{
	struct stat st;
	const char *other;
	int rc;

	s->rel = rel;
	s->existed = false;
	bg_strbuf_init(&s->abs);
	bg_strbuf_init(&s->text);
	bg_config_path(cfg, &s->abs, rel);
	if (stat(s->abs.buf, &st) != 0) {
		struct bg_strbuf target = BG_STRBUF_INIT;
		int e = errno;

		/* a link to nothing is there: never taken for absent (removed on
		 * the way back); it, or a loop, is said as the writer says it */
		if (e == ENOENT && lstat(s->abs.buf, &st) != 0)
			return BG_OK;
		rc = bg_atomic_target(s->abs.buf, rel, &target, ctx);
		bg_strbuf_release(&target);
		if (rc)
			return bg_error(ctx, rc, "%s; nothing was changed", bg_ctx_message(ctx));
		return bg_error(ctx, BG_EIO, "%s: cannot stat: %s; nothing was changed", rel, strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return bg_error(ctx, BG_EIO, "%s: not a regular file; nothing was changed", rel);
	/* through a link, another file of the project's: writing it would write over that one */
	if ((other = bg_config_file_role(cfg, &st, BG_FILE_ALL & ~role)))
		return bg_error(ctx, BG_ECHECK, "%s: it is %s too (one file under two names); make it a file of "
				"its own; nothing was changed", rel, other);
	if ((rc = written_elsewhere(cfg, s->abs.buf, rel, &st, role, im, ctx)))
		return rc;
	if (bg_file_read(s->abs.buf, rel, &s->text, ctx) != BG_OK)
		return BG_EIO;
	s->existed = true;
	return BG_OK;
}

/* Puts the file back as it was; false when it cannot. */
static bool restore(struct saved *s)
{
	struct bg_strbuf now = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	bool ok;

	bg_ctx_init(&ctx);
	if (s->existed) /* one that still holds its text (its write failed) is left alone */
		ok = (bg_file_read(s->abs.buf, s->rel, &now, &ctx) == BG_OK && now.len == s->text.len &&
		      memcmp(now.buf, s->text.buf, now.len) == 0) ||
		     bg_file_write_atomic(s->abs.buf, s->rel, s->text.buf, s->text.len, &ctx) == BG_OK;
	else
		ok = remove(s->abs.buf) == 0 || errno == ENOENT;
	bg_ctx_release(&ctx);
	bg_strbuf_release(&now);
	return ok;
}

static void saved_release(struct saved *s)
{
	bg_strbuf_release(&s->abs);
	bg_strbuf_release(&s->text);
}

/*
 * The journal of a promotion under way, so that one killed between its
 * writes (SIGKILL, a crash, a power cut) can be undone: STATE/promote-journal/
 * holds the three files' texts from before it ("0", "1", "2") and then
 * index.json, which names them ({"files": [{"path", "existed"}]}) and makes
 * the journal count. Written before the first change, removed after the
 * last (or after putting the files back). The next promotion, under the
 * same lock, puts back what a journal it finds names.
 */
static void journal_dir(const struct bg_config *cfg, struct bg_strbuf *out)
{
	bg_lifecycle_state_dir(cfg, out);
	bg_strbuf_adds(out, "/promote-journal");
}

static void journal_remove(const struct bg_config *cfg)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, p = BG_STRBUF_INIT;
	static const char *const names[] = {"index.json", "0", "1", "2", "undo"};

	journal_dir(cfg, &dir);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) { /* the index first: it makes it count */
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/%s", dir.buf, names[i]);
		unlink(p.buf);
	}
	rmdir(dir.buf);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&p);
}

/* Marks the journal as one of a promotion that failed and said it would
 * be undone: the next promotion undoes it even where both its writes were
 * made (journal_recover). */
static void journal_mark_undo(const struct bg_config *cfg)
{
	struct bg_strbuf p = BG_STRBUF_INIT;
	int fd;

	journal_dir(cfg, &p);
	bg_strbuf_adds(&p, "/undo");
	if ((fd = open(p.buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
		close(fd);
	bg_strbuf_release(&p);
}

/*
 * written[k] is the text the promotion is about to write to file k (NULL
 * when not known beforehand: the generated document); its SHA-256 goes in
 * the index ("written_sha256"), so that the undo can tell a file the
 * killed promotion left from one edited since, and one it finished
 * writing; the row it promotes (mid, as state) too, so that a promotion
 * killed after both writes can be finished rather than undone.
 */
static int journal_write(const struct bg_config *cfg, const struct saved *sv, const struct bg_strbuf *const *written,
			 int n, const char *mid, const char *state, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, p = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	json_t *files = json_array(), *index;
	int rc;

	journal_remove(cfg); /* an index never written: a journal that never counted */
	journal_dir(cfg, &dir);
	rc = bg_mkdirs(dir.buf, ctx);
	for (int k = 0; k < n && rc == BG_OK; k++) {
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/%d", dir.buf, k);
		if (sv[k].existed)
			rc = bg_file_write_atomic(p.buf, bg_config_relative(cfg, p.buf), sv[k].text.buf, sv[k].text.len,
						  ctx);
		json_array_append_new(files, json_pack("{s:s, s:b}", "path", sv[k].rel, "existed", sv[k].existed));
		if (rc == BG_OK && written[k]) {
			char hex[65];

			if ((rc = bg_sha256_hex(written[k]->buf, written[k]->len, hex, ctx)) == BG_OK)
				json_object_set_new(json_array_get(files, (size_t)k), "written_sha256", json_string(hex));
		}
	}
	index = json_pack("{s:o, s:s, s:s}", "files", files, "measurement_id", mid, "state", state);
	if (rc == BG_OK) {
		bg_json_dump_py(&text, index, 2, false);
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/index.json", dir.buf);
		rc = bg_file_write_atomic(p.buf, bg_config_relative(cfg, p.buf), text.buf, text.len, ctx);
	}
	json_decref(index);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&p);
	bg_strbuf_release(&text);
	return rc;
}

/*
 * Whether the file the journal's entry f (number k) names holds what the
 * killed promotion left there: its text from before, or the text the
 * promotion wrote (by the SHA-256 the index holds; an entry without one,
 * the generated document, always does). *changed is false when it does;
 * *written is true when it holds the text the promotion wrote.
 */
static int journal_file_as_left(const char *dir, size_t k, const json_t *f, const char *abs, bool *changed,
				bool *written, struct bg_ctx *ctx)
{
	const char *want = json_string_value(json_object_get(f, "written_sha256"));
	bool existed = json_is_true(json_object_get(f, "existed"));
	struct bg_strbuf p = BG_STRBUF_INIT;
	char now[65], before[65];
	struct stat st;
	int rc = BG_OK;

	*changed = false;
	*written = false;
	if (!want)
		return BG_OK;
	if (stat(abs, &st) != 0) {
		*changed = existed; /* removed since (the promotion only writes it) */
		return BG_OK;
	}
	if ((rc = bg_sha256_file(abs, NULL, now, ctx)) || (*written = strcmp(now, want) == 0))
		return rc;
	*changed = true;
	if (existed) {
		bg_strbuf_addf(&p, "%s/%zu", dir, k);
		if ((rc = bg_sha256_file(p.buf, NULL, before, ctx)) == BG_OK)
			*changed = strcmp(now, before) != 0;
	}
	bg_strbuf_release(&p);
	return rc;
}

/* The temporary files a killed promotion's writer left beside the file
 * abs (or the file a link there leads to): removed once its journal is
 * ended, so that none lingers as an untracked file. */
static void remove_dead_temps(const char *abs)
{
	struct bg_strbuf target = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	char *slash;

	bg_ctx_init(&ctx);
	if (bg_atomic_target(abs, abs, &target, &ctx) == BG_OK && (slash = strrchr(target.buf, '/'))) {
		const char *base[2] = {slash + 1, NULL};

		*slash = '\0';
		bg_atomic_remove_dead(*target.buf ? target.buf : "/", base);
	}
	bg_ctx_release(&ctx);
	bg_strbuf_release(&target);
}

/* What journal_recover found and did, and how a failure after it says so. */
enum journal_outcome { JOURNAL_NONE, JOURNAL_UNDONE, JOURNAL_FINISHED };
#define JOURNAL_UNDONE_TEXT                                                                                  \
	"before that, an interrupted promotion (killed between its writes) was undone: the evidence index, " \
	"the registry and the generated document are as they were before it"
#define JOURNAL_FINISHED_TEXT                                                                               \
	"before that, an interrupted promotion (killed after its writes) was finished: its row is in the " \
	"evidence index and the registry, the generated document re-rendered, and the registry validates"

static int revalidate(const struct bg_config *cfg, bool render, const char *mid, const char *state,
		      char **problem, struct bg_ctx *ctx);

/*
 * Whether a killed promotion that wrote both its files (the evidence index
 * and the registry: the journal's mid row as state) is finished by
 * rendering the generated document, the registry validating with the row
 * resolving as promoted: what the promotion itself would have done next.
 */
static bool journal_finish(const struct bg_config *cfg, const json_t *index)
{
	const char *mid = json_string_value(json_object_get(index, "measurement_id"));
	const char *state = json_string_value(json_object_get(index, "state"));
	char *problem = NULL;
	struct bg_ctx c2;
	bool done;

	if (!mid || !state)
		return false; /* a journal of an older benchgate: undone */
	bg_ctx_init(&c2);
	done = revalidate(cfg, true, mid, state, &problem, &c2) == BG_OK &&
	       revalidate(cfg, false, mid, state, &problem, &c2) == BG_OK;
	free(problem);
	bg_ctx_release(&c2);
	return done;
}

/*
 * Ends what a journal left by a killed promotion names, *outcome saying
 * what was done: a promotion killed after writing the evidence index and
 * the registry (both hold what it wrote) is finished (journal_finish);
 * one killed before, or one that cannot be finished, is undone (the files
 * put back). A file edited since the promotion was killed (neither its
 * text from before nor what the promotion wrote) is never overwritten:
 * nothing is put back, and the message says what to do.
 */
static int journal_recover(const struct bg_config *cfg, enum journal_outcome *outcome, struct bg_ctx *ctx)
{
	struct bg_strbuf dir = BG_STRBUF_INIT, p = BG_STRBUF_INIT, text = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
	struct bg_strbuf ev = BG_STRBUF_INIT;
	json_t *index = NULL, *f;
	struct stat st;
	size_t k, nwritten = 0;
	int rc = BG_OK;

	*outcome = JOURNAL_NONE;
	journal_dir(cfg, &dir);
	bg_strbuf_addf(&p, "%s/index.json", dir.buf);
	if (stat(p.buf, &st) != 0) {
		journal_remove(cfg); /* copies without an index: nothing had changed yet */
		goto out;
	}
	if ((rc = bg_json_load_file(p.buf, NULL, &index, ctx))) {
		rc = bg_error(ctx, BG_EIO,
			      "%s; a promotion was interrupted: put the evidence index, the registry and the generated document back by hand (the journal holds their texts as 0, 1, 2), then remove '%s'",
			      bg_ctx_message(ctx), dir.buf);
		goto out;
	}
	bg_promotion_evidence_path(cfg, &ev);
	/* first, each file: one a promotion writes, and as the promotion left it */
	json_array_foreach(json_object_get(index, "files"), k, f) {
		const char *rel = json_string_value(json_object_get(f, "path"));
		bool changed, written;

		/* only the three files a promotion writes, in their order */
		if (k > 2 || !rel || strcmp(rel, k == 0 ? ev.buf : k == 1 ? cfg->registry_path : cfg->generated_path) != 0) {
			rc = bg_error(ctx, BG_EIO,
				      "%s: files[%zu] is not the %s a promotion writes; put the files back by hand, then remove '%s'",
				      p.buf, k, k == 0 ? "evidence index" : k == 1 ? "registry" : "generated document", dir.buf);
			goto out;
		}
		bg_strbuf_reset(&abs);
		bg_config_path(cfg, &abs, rel);
		if ((rc = journal_file_as_left(dir.buf, k, f, abs.buf, &changed, &written, ctx)))
			goto out;
		nwritten += written;
		if (changed) {
			rc = bg_error(ctx, BG_EIO,
				      "%s has changed since a promotion was interrupted (it holds neither its text from "
				      "before the promotion nor what the promotion wrote), so the promotion is not "
				      "undone and nothing was changed: if the project's files are as they should be "
				      "('benchgate validate' passes), remove '%s' and promote again; else put back the "
				      "journal's copies by hand (0 the evidence index, 1 the registry, 2 the generated "
				      "document), then remove it",
				      rel, bg_config_relative(cfg, dir.buf));
			goto out;
		}
	}
	/* both of its writes made: finished, as it would have been; never one
	 * that failed and said so (its "undo" mark): it is undone, as said */
	bg_strbuf_reset(&p);
	bg_strbuf_addf(&p, "%s/undo", dir.buf);
	if (nwritten == 2 && json_array_size(json_object_get(index, "files")) == 3 && stat(p.buf, &st) != 0 &&
	    journal_finish(cfg, index)) {
		journal_remove(cfg);
		*outcome = JOURNAL_FINISHED;
		goto out;
	}
	json_array_foreach(json_object_get(index, "files"), k, f) {
		const char *rel = json_string_value(json_object_get(f, "path"));

		bg_strbuf_reset(&abs);
		bg_config_path(cfg, &abs, rel);
		if (json_is_true(json_object_get(f, "existed"))) {
			bg_strbuf_reset(&p);
			bg_strbuf_addf(&p, "%s/%zu", dir.buf, k);
			bg_strbuf_reset(&text);
			if ((rc = bg_file_read(p.buf, NULL, &text, ctx)) ||
			    (rc = bg_file_write_atomic(abs.buf, rel, text.buf, text.len, ctx)))
				goto out;
		} else if (remove(abs.buf) != 0 && errno != ENOENT) {
			rc = bg_error(ctx, BG_EIO, "%s: cannot remove it to undo an interrupted promotion: %s", rel,
				      strerror(errno));
			goto out;
		}
	}
	journal_remove(cfg);
	*outcome = JOURNAL_UNDONE;
out:
	if (*outcome != JOURNAL_NONE)
		json_array_foreach(json_object_get(index, "files"), k, f) {
			bg_strbuf_reset(&abs);
			bg_config_path(cfg, &abs, json_string_value(json_object_get(f, "path")));
			remove_dead_temps(abs.buf);
		}
	json_decref(index);
	bg_strbuf_release(&ev);
	bg_strbuf_release(&dir);
	bg_strbuf_release(&p);
	bg_strbuf_release(&text);
	bg_strbuf_release(&abs);
	return rc;
}

/* Whether the registry as it is now (the promotion put back) has problem
 * among its validate problems, or does not load at all: a registry invalid
 * before the promotion; *before receives what was wrong then. */
static bool invalid_before(const struct bg_config *cfg, const char *problem, struct bg_strbuf *before)
{
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_ctx ctx;
	bool found = false;

	memset(&reg, 0, sizeof(reg));
	bg_ctx_init(&ctx);
	if (bg_registry_load(&reg, cfg, &ctx) != BG_OK || bg_registry_validate(&reg, true, &problems, NULL, &ctx) != BG_OK) {
		/* it could not even be read (an evidence file it imports
		 * removed): what the promotion then found is not its doing */
		bg_strbuf_adds(before, bg_ctx_message(&ctx));
		found = true;
	} else {
		for (size_t i = 0; i < problems.n && !found; i++)
			found = strcmp(problems.items[i], problem) == 0;
		if (found)
			bg_strbuf_adds(before, problem);
	}
	bg_problems_release(&problems);
	bg_registry_release(&reg);
	bg_ctx_release(&ctx);
	return found;
}

/* Loads, validates (with the render check when render is false) and, with
 * render, re-renders. *problem: the first validate problem (owned by the
 * caller), when that is what failed. */
static int revalidate(const struct bg_config *cfg, bool render, const char *mid, const char *state,
		      char **problem, struct bg_ctx *ctx)
{
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_registry_counts counts;
	struct bg_strbuf doc = BG_STRBUF_INIT, path = BG_STRBUF_INIT;
	int rc;

	memset(&reg, 0, sizeof(reg));
	rc = bg_registry_load(&reg, cfg, ctx);
	if (rc == BG_OK && render) {
		rc = bg_registry_render(&reg, &doc, ctx);
		if (rc == BG_OK) {
			bg_config_path(cfg, &path, cfg->generated_path);
			rc = bg_file_write_atomic(path.buf, cfg->generated_path, doc.buf, doc.len, ctx);
		}
	}
	if (rc == BG_OK && !render) {
		rc = bg_registry_validate(&reg, true, &problems, &counts, ctx);
		if (rc == BG_OK && problems.n) {
			rc = bg_error(ctx, BG_ECHECK, "the promoted registry does not validate: %s; nothing was "
				      "changed", problems.items[0]);
			*problem = bg_xstrdup(problems.items[0]);
		}
	}
	if (rc == BG_OK && !render) {
		size_t i;
		struct bg_value *m;
		bool found = false;

		rc = bg_registry_resolve_measurements(&reg, ctx);
		BG_VALUE_ARRAY_FOREACH(reg.measurements, i, m) {
			const char *s = bg_value_str(bg_value_get(m, "measurement_id"));
			if (s && strcmp(s, mid) == 0) {
				const char *st = bg_value_str(bg_value_get(m, "state"));
				found = true;
				if (!st || strcmp(st, state) != 0)
					rc = bg_error(ctx, BG_ECHECK, "the promoted row '%s' resolves to state '%s', not "
						      "'%s'; nothing was changed", mid, st ? st : "none", state);
			}
		}
		if (rc == BG_OK && !found)
			rc = bg_error(ctx, BG_ECHECK, "the promoted row '%s' does not resolve in the registry; "
				      "nothing was changed", mid);
	}
	bg_problems_release(&problems);
	bg_registry_release(&reg);
	bg_strbuf_release(&doc);
	bg_strbuf_release(&path);
	return rc;
}

/* path, joined to the project root, as bg_path_named_later names it
 * (path itself when nothing of it is there); the caller frees it. */
static char *path_by_name(const struct bg_config *cfg, const char *path)
{
	struct bg_strbuf joined = BG_STRBUF_INIT;
	char *named;

	bg_config_path(cfg, &joined, path);
	named = bg_path_named_later(joined.buf);
	if (!named)
		named = bg_strbuf_detach(&joined, NULL);
	bg_strbuf_release(&joined);
	return named;
}

/*
 * The path the registry's evidence_imports already give the evidence file
 * ev_rel, where it is written otherwise ("./experiments/x.json"): an
 * import that is the same file, or the same path by name. The promotion
 * then names it once, as it is written. NULL when none; the caller frees it.
 */
static char *imported_as(const struct bg_config *cfg, const struct bg_registry *reg, const char *ev_rel)
{
	const struct bg_value *imports = bg_value_get(reg->root, "evidence_imports"), *item;
	char *want = path_by_name(cfg, ev_rel), *have, *hit = NULL;
	struct stat a, b;
	bool there = stat(want, &a) == 0;
	size_t i;

	BG_VALUE_ARRAY_FOREACH(imports, i, item) {
		const char *p = bg_value_is_object(item) ? bg_value_str(bg_value_get(item, "path")) : NULL;

		if (hit || !p || !*p || strcmp(p, ev_rel) == 0)
			continue;
		have = path_by_name(cfg, p);
		if (strcmp(have, want) == 0 || (there && stat(have, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino))
			hit = bg_xstrdup(p);
		free(have);
	}
	free(want);
	return hit;
}

int bg_promotion_run(const struct bg_config *cfg, struct bg_store *store, long long id, json_t **report,
		     struct bg_ctx *ctx)
{
	struct bg_registry reg;
	struct bg_strbuf ev_rel = BG_STRBUF_INIT, mid = BG_STRBUF_INIT, text = BG_STRBUF_INIT, edited = BG_STRBUF_INIT;
	json_t *session = NULL, *verdict = NULL, *gate = NULL, *runbook = NULL, *row = NULL, *artifact = NULL, *evidence = NULL;
	struct saved sv[3];
	const char *state, *gate_id;
	char *gen_dir = NULL, *made = NULL, *slash, *ev_import = NULL, *problem = NULL;
	bool saved = false;
	enum journal_outcome journal = JOURNAL_NONE;
	struct imports im = {0};
	int rc, lock = -1;

	*report = NULL;
	memset(&reg, 0, sizeof(reg));
	/* the artifacts are checked by their SHA-256: a missing libcrypto is a
	 * system failure (exit 4), not a mismatch of every artifact */
	if ((rc = bg_sha256_ready(ctx)) != BG_OK)
		return rc;
	/* one promotion at a time: each reads the registry, the evidence index
	 * and the document, and writes them back */
	{
		struct bg_strbuf at = BG_STRBUF_INIT;

		bg_lifecycle_state_dir(cfg, &at);
		bg_strbuf_adds(&at, "/promote.lock");
		if ((rc = bg_lifecycle_lock(cfg, "promote.lock", bg_config_relative(cfg, at.buf), &lock, ctx))) {
			/* the advice only where it helps: not after a wait for another promotion */
			bg_strbuf_reset(&at);
			bg_lifecycle_state_dir(cfg, &at);
			if (access(at.buf, W_OK) != 0 && errno != ENOENT)
				bg_error(ctx, rc, "%s; promote keeps its lock and journal in the store's folder: run "
					 "it as a user who may write there", bg_ctx_message(ctx));
		}
		bg_strbuf_release(&at);
		if (rc)
			return rc;
	}
	/* a promotion killed between its writes is undone before anything is read */
	if ((rc = journal_recover(cfg, &journal, ctx)))
		goto out;
	if ((rc = bg_store_get_session(store, id, &session, ctx)) || (rc = bg_store_verdict(store, id, &verdict, ctx)))
		goto out;
	if ((rc = bg_registry_load(&reg, cfg, ctx)))
		goto out;
	gate_id = str(session, "gate_id");
	/* a NaN in either is refused: the promoted row copies them */
	rc = bg_registry_gate_json(&reg, gate_id ? bg_registry_find_gate(&reg, gate_id) : NULL, &gate, &runbook, ctx);
	bg_promotion_evidence_path(cfg, &ev_rel);
	ev_import = imported_as(cfg, &reg, ev_rel.buf);
	imports_collect(cfg, &reg, &im);
	bg_registry_release(&reg);
	if (rc)
		goto out;
	if ((rc = bg_promotion_check(cfg, gate, runbook, session, verdict, report, ctx)))
		goto out;
	if (journal != JOURNAL_NONE)
		json_object_set_new(*report, journal == JOURNAL_UNDONE ? "undid_interrupted_promotion"
								       : "finished_interrupted_promotion",
				    json_true());
	state = str(*report, "state");
	if (!state) {
		const json_t *refusals = json_object_get(*report, "refusals");
		struct bg_strbuf why = BG_STRBUF_INIT;
		size_t k;
		json_t *x;

		json_array_foreach(refusals, k, x)
			bg_strbuf_addf(&why, "%s%s", k ? "; " : "", json_string_value(x));
		rc = bg_error(ctx, BG_ECHECK, "session %lld cannot be promoted: %s", id,
			      why.len ? why.buf : "no state it could take");
		bg_strbuf_release(&why);
		goto out;
	}
	bg_promotion_row(cfg, gate, session, verdict, state, &row, &artifact, &mid, ctx);
	memset(sv, 0, sizeof(sv));
	saved = true;
	if ((rc = save(cfg, &sv[0], ev_rel.buf, 0, &im, ctx)) ||
	    (rc = save(cfg, &sv[1], cfg->registry_path, BG_FILE_REGISTRY, &im, ctx)) ||
	    (rc = save(cfg, &sv[2], cfg->generated_path, BG_FILE_GENERATED, &im, ctx)))
		goto out;
	if (sv[0].existed) {
		size_t i;
		json_t *m;

		if ((rc = bg_json_load_buffer(sv[0].text.buf, sv[0].text.len, ev_rel.buf, &evidence, ctx))) {
			bg_error(ctx, rc, "%s; the evidence index is benchgate's own file: put back what it wrote "
				 "(git checkout -- %s), or move the file away; nothing was changed",
				 bg_ctx_message(ctx), ev_rel.buf);
			goto out;
		}
		if (!json_is_string(json_object_get(evidence, "schema")) ||
		    strcmp(json_string_value(json_object_get(evidence, "schema")), "benchgate-evidence/v1") != 0) {
			struct bg_strbuf seen = BG_STRBUF_INIT;

			if (json_is_string(json_object_get(evidence, "schema")))
				bg_strbuf_addf(&seen, "its schema is '%s'",
					       json_string_value(json_object_get(evidence, "schema")));
			else
				bg_strbuf_adds(&seen, "it has no \"schema\"");
			rc = bg_error(ctx, BG_ECHECK,
				      "%s: not benchgate's evidence index (%s, not 'benchgate-evidence/v1'): benchgate "
				      "keeps this file for itself; move the file away, or give benchgate.json another "
				      "experiments folder; nothing was changed",
				      ev_rel.buf, seen.buf);
			bg_strbuf_release(&seen);
			goto out;
		}
		if (!json_is_array(json_object_get(evidence, "measurements")) ||
		    !json_is_array(json_object_get(evidence, "artifacts"))) {
			rc = bg_error(ctx, BG_ECHECK, "%s: 'artifacts' and 'measurements' must be lists; the evidence "
				      "index is benchgate's own file: put back what it wrote (git checkout -- %s), or "
				      "move the file away; nothing was changed", ev_rel.buf, ev_rel.buf);
			goto out;
		}
		json_array_foreach(json_object_get(evidence, "measurements"), i, m) {
			const json_t *bg = json_object_get(m, "benchgate");

			if (str(m, "id") && strcmp(str(m, "id"), mid.buf) == 0) {
				rc = bg_error(ctx, BG_ECHECK, "session %lld is already promoted as '%s' in %s: "
					      "nothing to do; nothing was changed", id, mid.buf, ev_rel.buf);
				goto out;
			}
			/* the id holds the manifest's hash: a manifest whose bytes
			 * changed since (reformatted, a newline added) gives another
			 * id, but the experiment's manifest names one session, and
			 * its figures are that session's (a clone's session of the
			 * same number and experiment id, promoted there, is not) */
			if (str(bg, "experiment_id") && str(session, "experiment_id") &&
			    strcmp(str(bg, "experiment_id"), str(session, "experiment_id")) == 0 &&
			    bg_promotion_row_of(m, id, verdict)) {
				rc = bg_error(ctx, BG_ECHECK, "session %lld is already promoted as '%s' in %s (its "
					      "experiment's manifest has changed since, so it would now be '%s')", id,
					      str(m, "id") ? str(m, "id") : "n/a", ev_rel.buf, mid.buf);
				goto out;
			}
		}
	} else {
		evidence = json_pack("{s:s, s:s, s:[], s:[]}", "schema", "benchgate-evidence/v1", "generated_by",
				     "benchgate promote", "artifacts", "measurements");
	}
	{
		size_t i;
		json_t *a;
		bool have = false;

		json_array_foreach(json_object_get(evidence, "artifacts"), i, a)
			if (str(a, "id") && strcmp(str(a, "id"), str(artifact, "id")) == 0)
				have = true;
		if (!have)
			json_array_append(json_object_get(evidence, "artifacts"), artifact);
		json_array_append(json_object_get(evidence, "measurements"), row);
	}
	bg_json_dump_py(&text, evidence, 2, false);
	bg_strbuf_addch(&text, '\n');
	/* the generated document's folder, made as 'render' makes it (a
	 * project never rendered yet); removed again when the promotion fails */
	gen_dir = bg_xstrdup(sv[2].abs.buf);
	if ((slash = strrchr(gen_dir, '/')) && slash != gen_dir)
		*slash = '\0';
	else
		gen_dir[0] = '\0';
	if (gen_dir[0] && (rc = bg_mkdirs_made(gen_dir, bg_config_relative(cfg, gen_dir), &made, ctx))) {
		bg_error(ctx, rc, "%s; choose another 'registry.generated' in benchgate.json", bg_ctx_message(ctx));
		goto out;
	}
	if ((rc = bg_promote_edit_registry(sv[1].text.buf, sv[1].text.len, str(session, "gate_id"), state, mid.buf,
					   ev_import ? ev_import : ev_rel.buf, &edited, ctx))) {
		bg_error(ctx, rc, "%s: %s; nothing was changed", cfg->registry_path, bg_ctx_message(ctx));
		goto out;
	}
	/*
	 * The three files change together or not at all: the signals that end
	 * a program politely wait until they are written and checked (or put
	 * back), so that an interrupted promotion leaves no evidence row that
	 * the registry does not name (which would refuse the promotion again
	 * as "already promoted").
	 */
	{
		sigset_t old;
		bool put_back = true;
		const struct bg_strbuf *written[3] = {&text, &edited, NULL};

		bg_stops_hold(&old);
		if ((rc = journal_write(cfg, sv, written, 3, mid.buf, state, ctx)) ||
		    (rc = bg_file_write_atomic(sv[0].abs.buf, ev_rel.buf, text.buf, text.len, ctx)) ||
		    (rc = bg_file_write_atomic(sv[1].abs.buf, cfg->registry_path, edited.buf, edited.len, ctx)) ||
		    (rc = revalidate(cfg, true, mid.buf, state, &problem, ctx)) ||
		    (rc = revalidate(cfg, false, mid.buf, state, &problem, ctx))) {
			for (int k = 0; k < 3; k++)
				put_back &= restore(&sv[k]);
		}
		if (put_back) /* else the journal stays, marked, and the next promotion puts them back */
			journal_remove(cfg);
		else
			journal_mark_undo(cfg);
		bg_stops_release(&old);
		/* a registry that did not validate before: said so, not blamed on the promotion */
		if (rc && problem && put_back) {
			struct bg_strbuf before = BG_STRBUF_INIT;

			if (invalid_before(cfg, problem, &before))
				bg_error(ctx, rc, "%s does not validate, before the promotion too: %s; fix it "
					 "('benchgate validate' lists every problem), then promote again; nothing was "
					 "changed", cfg->registry_path, before.buf);
			bg_strbuf_release(&before);
		}
		/* a write that failed (a full disk, a read-only file): what became
		 * of the three files, and what to do */
		if (rc && !strstr(bg_ctx_message(ctx), "nothing was changed")) {
			struct bg_strbuf jd = BG_STRBUF_INIT;

			journal_dir(cfg, &jd);
			if (put_back)
				bg_error(ctx, rc, "%s; the promotion was undone, nothing was changed: make the file "
					 "writable (or free space), then promote again", bg_ctx_message(ctx));
			else
				bg_error(ctx, rc, "%s; the promotion could not be undone either: its journal '%s' "
					 "holds the files as they were, and the next 'benchgate promote' puts them back "
					 "once they can be written (or copy them back by hand: 0 the evidence index, 1 "
					 "the registry, 2 the generated document)",
					 bg_ctx_message(ctx), bg_config_relative(cfg, jd.buf));
			bg_strbuf_release(&jd);
		}
		if (rc)
			goto out;
	}
	json_object_set_new(*report, "measurement_id", json_string(mid.buf));
	json_object_set_new(*report, "evidence", json_string(ev_rel.buf));
	json_object_set_new(*report, "registry", json_string(cfg->registry_path));
	json_object_set_new(*report, "generated", json_string(cfg->generated_path));
out:
	/* what was done to an interrupted promotion is said whatever became of this one */
	if (rc && journal != JOURNAL_NONE && !*report)
		bg_error(ctx, rc, "%s (%s)", bg_ctx_message(ctx),
			 journal == JOURNAL_UNDONE ? JOURNAL_UNDONE_TEXT : JOURNAL_FINISHED_TEXT);
	if (rc && gen_dir && gen_dir[0])
		bg_rmdirs_made(made); /* only while empty: never a document put back */
	free(gen_dir);
	free(made);
	if (saved)
		for (int k = 0; k < 3; k++)
			saved_release(&sv[k]);
	json_decref(session);
	json_decref(verdict);
	json_decref(gate);
	json_decref(runbook);
	json_decref(row);
	json_decref(artifact);
	json_decref(evidence);
	free(ev_import);
	free(problem);
	imports_release(&im);
	bg_strbuf_release(&ev_rel);
	bg_strbuf_release(&mid);
	bg_strbuf_release(&text);
	bg_strbuf_release(&edited);
	bg_unlock(lock);
	return rc;
}
