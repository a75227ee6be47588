/*
 * run.c - the experiment lifecycle of one gate (see run.h): preflight,
 * lease, manifest, session, store, key and decision, finish.
 */
#include "benchgate/run.h"
#include "benchgate/decide.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/promotion.h"
#include "benchgate/profile.h"
#include "benchgate/provenance.h"
#include "benchgate/registry.h"
#include "benchgate/sha256.h"
#include "benchgate/store.h"
#include "core/fmath.h"
#include "core/pyval.h"
#include "lifecycle/inputs.h"
#include "lifecycle/runbook.h"

#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static const char *const tiers[] = {"scheduled-profile", "release-signoff", "diagnostic", "pr-smoke", NULL};

bool bg_run_tier_valid(const char *tier)
{
	for (const char *const *t = tiers; *t; t++)
		if (strcmp(*t, tier) == 0)
			return true;
	return false;
}

void bg_run_result_release(struct bg_run_result *res)
{
	json_decref(res->session);
	json_decref(res->decision);
	free(res->replaced_lease_path);
	free(res->replaced_lease_experiment);
	memset(res, 0, sizeof(*res));
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * Substitutes the template's fields as str.format_map(gate) does, the way
 * `command` shows it (bg_registry_format_with: {name}, {name[KEY]},
 * {name[0]}, !r, !s, !a, format specifications; {{ and }} are braces),
 * with quote each field's text one shell word. BG_EPRECOND on what Python
 * would raise and on a field the gate does not have: a placeholder left in
 * the command, a path or the question would run or record the wrong thing.
 * The message names the gate's runbook and the template, where it is
 * written.
 */
static int subst(const char *tmpl, const json_t *gate, bool quote, struct bg_strbuf *out, struct bg_ctx *ctx)
{
	const char *rb = jstr(gate, "runbook") ? jstr(gate, "runbook") : "?";
	struct bg_strbuf what = BG_STRBUF_INIT;
	struct bg_format_how how = {NULL, BG_EPRECOND, true, quote};
	struct bg_value *values = NULL;
	struct bg_arena *a;
	char *text;
	int rc;

	if (!strpbrk(tmpl, "{}")) { /* nothing to substitute */
		bg_strbuf_adds(out, tmpl);
		return BG_OK;
	}
	/* the gate as the registry's values, which the formatter reads */
	if (!(text = json_dumps(gate, JSON_COMPACT | JSON_ENCODE_ANY)))
		return bg_error(ctx, BG_EIO, "cannot substitute runbook '%s': out of memory", rb);
	a = bg_arena_new();
	rc = bg_value_parse(a, text, strlen(text), "the gate", &values, ctx);
	free(text);
	if (rc == BG_OK) {
		bg_strbuf_addf(&what, "template '%s'", tmpl);
		how.what = what.buf;
		if ((rc = bg_registry_format_with(tmpl, values, &how, out, ctx)))
			bg_error(ctx, rc, "runbook '%s': %s", rb, bg_ctx_message(ctx));
	}
	bg_strbuf_release(&what);
	bg_arena_free(a);
	return rc;
}

/* A copy of v with every string {field}-substituted (no quoting). */
static int subst_json(const json_t *v, const json_t *gate, json_t **out, struct bg_ctx *ctx)
{
	int rc = BG_OK;

	if (json_is_string(v)) {
		struct bg_strbuf sb = BG_STRBUF_INIT;
		rc = subst(json_string_value(v), gate, false, &sb, ctx);
		*out = rc ? NULL : json_string(sb.buf);
		bg_strbuf_release(&sb);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x, *y;
		*out = json_array();
		json_array_foreach(v, i, x) {
			if ((rc = subst_json(x, gate, &y, ctx)))
				break;
			json_array_append_new(*out, y);
		}
	} else if (json_is_object(v)) {
		const char *k;
		json_t *x, *y;
		*out = json_object();
		json_object_foreach((json_t *)v, k, x) {
			if ((rc = subst_json(x, gate, &y, ctx)))
				break;
			json_object_set_new(*out, k, y);
		}
	} else {
		*out = json_incref((json_t *)v);
	}
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* Whether " machine " is one of the words of pattern (" a b "). */
static bool machine_listed(const char *pattern, const char *machine)
{
	char word[80];

	snprintf(word, sizeof(word), " %s ", machine);
	return machine[0] && strstr(pattern, word) != NULL;
}

void bg_run_detect_computer(const struct bg_config *cfg, const json_t *prov, const char **label,
			    struct bg_strbuf *why)
{
	const json_t *host = json_object_get(prov, "host");
	const char *cpu = jstr(host, "cpu_model");
	const json_t *devices = json_object_get(json_object_get(prov, "gpu"), "devices");
	char hostname[256] = "";
	struct utsname u;

	gethostname(hostname, sizeof(hostname) - 1);
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	*label = NULL;
	for (size_t i = 0; i < cfg->nrules && !*label; i++) {
		const struct bg_computer_rule *r = &cfg->rules[i];

		switch (r->kind) {
		case BG_RULE_DEVICE_CONTAINS: {
			size_t k;
			json_t *d;
			if (cpu && strstr(cpu, r->pattern)) {
				*label = r->computer;
				bg_strbuf_addf(why, "CPU model '%s' contains '%s'", cpu, r->pattern);
			}
			json_array_foreach(devices, k, d) {
				const char *name = jstr(d, "name");
				if (!*label && name && strstr(name, r->pattern)) {
					*label = r->computer;
					bg_strbuf_addf(why, "GPU '%s' contains '%s'", name, r->pattern);
				}
			}
			break;
		}
		case BG_RULE_COMPUTER_EQUALS_IGNORING_CASE:
			if (strcasecmp(hostname, r->pattern) == 0) {
				*label = r->computer;
				bg_strbuf_addf(why, "host name '%s' is '%s'", hostname, r->pattern);
			}
			break;
		case BG_RULE_MACHINE_IN:
			if (strcmp(u.sysname, "Linux") == 0 && machine_listed(r->pattern, u.machine)) {
				*label = r->computer;
				/* the words are kept as " a b ": shown as "a, b" */
				bg_strbuf_addf(why, "%s on %s, one of the rule's machine_in:", u.sysname, u.machine);
				for (const char *w = r->pattern; *w;) {
					size_t n;
					while (*w == ' ')
						w++;
					if (!(n = strcspn(w, " ")))
						break;
					bg_strbuf_addf(why, "%s %.*s", why->buf[why->len - 1] == ':' ? "" : ",", (int)n, w);
					w += n;
				}
			}
			break;
		}
	}
}

struct run {
	const struct bg_run_request *req;
	struct bg_run_result *res;
	const struct bg_config *cfg;
	const char *gate_id;
	struct bg_lease *lease; /* &own_lease, or the request's keep_lease */
	struct bg_lease own_lease;
	json_t *provenance;
	json_t *manifest;
	json_t *measure; /* the substituted measure object */
	json_t *inputs;  /* [{dataset_id, path, sha256}] */
	struct bg_input_state *input_st; /* each input as it was when hashed, in order */
	struct bg_strbuf command;
	struct bg_strbuf exp_rel; /* experiments/ID */
	char **outputs, **evict;
	size_t noutputs, nevict;
	const char *question;
	struct bg_strbuf question_text;
	/* left out of the git checks, NULL-terminated (build_git_exclude):
	 * benchgate's records and state, the declared inputs and outputs */
	const char **git_exclude;
	char **owned_exclude; /* the strings of git_exclude that are the run's */
	size_t nowned_exclude;
	const char *computer_slug;
	char slug_buf[300];
};

static int refuse(struct bg_ctx *ctx, const char *fmt, ...) BG_PRINTF(2, 3);
static int refuse(struct bg_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bg_verror(ctx, BG_EPRECOND, fmt, ap);
	va_end(ap);
	return BG_EPRECOND;
}

/* A question where nothing shows: spaces and invisible characters only. */
static bool question_blank(const char *q)
{
	return bg_format_blank(q);
}

/* The first string value in v that check calls a private path, or NULL
 * (check, like the reference, looks at values, not keys). */
static const char *private_path_in(const json_t *v)
{
	const char *k, *hit = NULL;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return bg_profile_private_path(json_string_value(v)) ? json_string_value(v) : NULL;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x) {
			if ((hit = private_path_in(x)))
				return hit;
		}
	}
	json_array_foreach(v, i, x) {
		if ((hit = private_path_in(x)))
			return hit;
	}
	return NULL;
}

/*
 * Refuses when the manifest would hold a text that check rejects as an
 * absolute private path: it is written before the session, and a failing
 * check would then blame the experiment for what the request held.
 */
static int refuse_private_paths(struct run *r, struct bg_ctx *ctx)
{
	const struct bg_run_request *q = r->req;
	const char *const what[] = {"the question", "the runbook's command", "the measure object",
				    "the declared inputs", "the gate"};
	json_t *question = json_string(r->question), *command = json_string(r->command.buf);
	const json_t *parts[] = {question, command, r->measure, r->inputs, q->gate};
	int rc = BG_OK;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && rc == BG_OK; i++) {
		const char *hit = private_path_in(parts[i]);
		if (hit)
			rc = refuse(ctx, "%s holds an absolute private path ('%s'), which 'benchgate check' rejects in a manifest; name it relative to the project (or through an environment variable the command reads)",
				    what[i], hit);
	}
	json_decref(question);
	json_decref(command);
	return rc;
}

/*
 * Whether RUNS.md lies outside the experiments folder, named from the root
 * and inside it (a git pathspec can leave it out): run writes its rows
 * there, so it is no part of the source under test either.
 */
static bool runs_index_apart(const struct bg_config *cfg)
{
	const char *ri = bg_config_in_project(cfg, cfg->runs_index);
	const char *ex = bg_config_in_project(cfg, cfg->experiments);
	size_t n = ex ? strlen(ex) : 0;

	if (!ri)
		return false;
	return !(n && strncmp(ri, ex, n) == 0 && ri[n] == '/');
}

/*
 * A declared output as a pathspec of every file a gate of the runbook
 * could write there: each "{field}" a '*', so that "out/{id}.npy" matches
 * "out/g1.npy" and every other gate's; "{{" and "}}" a brace; NULL for one
 * not inside the project, and for one whose first name holds a field
 * ("{id}.json", "{dir}/x.bin"): its '*' would match sources anywhere at the
 * top ("*.json", every edited file under "*"), hiding their edits, so what
 * it writes is left to count as untracked (fail closed). New string.
 */
static char *outputs_pattern(const char *tmpl)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	const char *slash = strchr(tmpl, '/'), *field = strchr(tmpl, '{');

	if (!bg_path_stays_below(tmpl))
		return NULL;
	/* a "{{" before the first field is a brace, not a field */
	while (field && field[1] == '{')
		field = strchr(field + 2, '{');
	if (field && (!slash || field < slash))
		return NULL;
	for (const char *p = tmpl; *p; p++) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			bg_strbuf_addch(&sb, *p++);
		} else if (*p == '{' && strchr(p, '}')) {
			bg_strbuf_addch(&sb, '*');
			p = strchr(p, '}');
		} else {
			bg_strbuf_addch(&sb, *p);
		}
	}
	return bg_strbuf_detach(&sb, NULL);
}

/*
 * What the session's git checks leave out (provenance.h), none of it the
 * source under test: benchgate's records (the experiments folder, RUNS.md
 * kept apart from it), its state (bg_lifecycle_state_excludes) and what
 * runs write: this gate's declared outputs, and those any runbook of the
 * registry declares (another gate's output, left in the project by an
 * earlier run, is no change to the source), each where it is named inside
 * the project. Declared inputs are not left out: a changed dataset the
 * repository tracks is a change to what the revision names.
 */
static void build_git_exclude(struct run *r)
{
	const json_t *outputs = json_object_get(r->measure, "outputs"), *x, *rb;
	const char *name, *experiments;
	size_t n = 0, i, cap = 3 + BG_STATE_EXCLUDES_MAX + json_array_size(outputs);

	json_object_foreach((json_t *)r->req->runbooks, name, rb)
		cap += json_array_size(json_object_get(json_object_get(rb, "measure"), "outputs"));
	r->git_exclude = bg_xcalloc(cap, sizeof(*r->git_exclude));
	r->owned_exclude = bg_xcalloc(cap, sizeof(*r->owned_exclude));
	/* plain paths, escaped as globs (provenance.h) */
	if ((experiments = bg_config_in_project(r->cfg, r->cfg->experiments)))
		r->owned_exclude[r->nowned_exclude++] = bg_provenance_glob_escape(experiments);
	if (runs_index_apart(r->cfg))
		r->owned_exclude[r->nowned_exclude++] = bg_provenance_glob_escape(bg_config_in_project(r->cfg, r->cfg->runs_index));
	r->nowned_exclude += bg_lifecycle_state_excludes(r->cfg, r->owned_exclude + r->nowned_exclude,
							 BG_STATE_EXCLUDES_MAX);
	for (i = 0; i < r->nowned_exclude; i++)
		r->git_exclude[n++] = r->owned_exclude[i];
	json_array_foreach(outputs, i, x)
		if (json_is_string(x) && bg_path_stays_below(json_string_value(x)))
			r->git_exclude[n++] = json_string_value(x);
	json_object_foreach((json_t *)r->req->runbooks, name, rb) {
		json_array_foreach(json_object_get(json_object_get(rb, "measure"), "outputs"), i, x) {
			char *pat = json_is_string(x) ? outputs_pattern(json_string_value(x)) : NULL;
			bool have = false;
			for (size_t k = 0; pat && k < n && !have; k++)
				have = strcmp(r->git_exclude[k], pat) == 0;
			if (!pat || have) {
				free(pat);
				continue;
			}
			r->owned_exclude[r->nowned_exclude++] = pat;
			r->git_exclude[n++] = pat;
		}
	}
	r->git_exclude[n] = NULL;
}

/*
 * RUNS.md, when there, must be a file benchgate can read and replace (a new
 * one written beside it, then renamed; for a symbolic link, beside the file
 * it leads to, as the atomic writer does): checked before anything is
 * written, so that a failure cannot leave a running manifest without its
 * row. A link to nothing is refused too (the writer would refuse it).
 */
static int runs_index_writable(const struct bg_config *cfg, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, role = BG_STRBUF_INIT;
	struct stat st;
	const char *why = NULL, *same;
	char *real = NULL, *slash;
	int rc = BG_OK;

	bg_config_path(cfg, &path, cfg->runs_index);
	if (stat(path.buf, &st) == 0) {
		/* one file with another of the project's, through a link (benchgate.json
		 * refuses the same name): its row would be appended to that file */
		same = bg_config_file_role(cfg, &st, BG_FILE_ALL & ~BG_FILE_RUNS_INDEX);
		if (same)
			bg_strbuf_addf(&role, "it is %s", same);
		if (!S_ISREG(st.st_mode))
			why = "it is not a regular file";
		else if (same)
			why = role.buf;
		else if (access(path.buf, R_OK | W_OK) != 0)
			why = strerror(errno);
		else if (!(real = realpath(path.buf, NULL)))
			why = strerror(errno);
		else if ((slash = strrchr(real, '/')) && (*slash = '\0', access(*real ? real : "/", W_OK | X_OK) != 0))
			why = "its folder cannot be written";
	} else if (errno != ENOENT) {
		why = strerror(errno);
	} else if (lstat(path.buf, &st) == 0) {
		why = "it is a symbolic link to nothing";
	}
	if (why) {
		rc = refuse(ctx, "%s cannot be updated (%s); fix it before running, since every experiment gets its row there",
			    cfg->runs_index, why);
	} else if (real) { /* there, and writable: is it whole? */
		struct bg_strbuf text = BG_STRBUF_INIT;
		size_t line;

		if (bg_file_read(path.buf, cfg->runs_index, &text, ctx) != BG_OK)
			rc = refuse(ctx, "%s", bg_ctx_message(ctx));
		else if ((line = bg_runs_index_conflict(text.buf, text.len)))
			rc = refuse(ctx, "%s:%zu: a merge conflict marker: resolve the conflict (keep both sides' rows, one experiment a row) and commit it before running, since every experiment gets its row there",
				    cfg->runs_index, line);
		bg_strbuf_release(&text);
	}
	free(real);
	bg_strbuf_release(&path);
	bg_strbuf_release(&role);
	return rc;
}

/*
 * -w, -r and --timeout are part of what ran: the measure object, and so the
 * manifest, the key's measure field and a repeat, carries one only when it
 * changes the value in force (the runbook's, else the engine's default), so
 * that the same settings always give the same key; a whole number of
 * seconds is written as an integer, as a runbook would write it.
 */
static void apply_overrides(const struct bg_run_request *q, json_t *measure)
{
	const json_t *w = json_object_get(measure, "warmups"), *n = json_object_get(measure, "repetitions");
	const json_t *t = json_object_get(measure, "timeout_seconds");
	struct bg_measure_opts d;

	bg_measure_opts_init(&d);
	if (q->warmups >= 0 && q->warmups != (json_is_integer(w) ? (long)json_integer_value(w) : d.warmups))
		json_object_set_new(measure, "warmups", json_integer(q->warmups));
	if (q->runs > 0 && q->runs != (json_is_integer(n) ? (long)json_integer_value(n) : d.runs))
		json_object_set_new(measure, "repetitions", json_integer(q->runs));
	if (q->timeout > 0 && isfinite(q->timeout) && q->timeout != (json_is_number(t) ? json_number_value(t) : d.timeout))
		json_object_set_new(measure, "timeout_seconds",
				    q->timeout == bg_floor(q->timeout) && q->timeout < 1e15 ? json_integer((json_int_t)q->timeout)
											  : json_real(q->timeout));
}

static int preflight(struct run *r, struct bg_ctx *ctx)
{
	const struct bg_run_request *q = r->req;
	const json_t *rb = q->runbook, *env, *x, *measure;
	const char *state = jstr(q->gate, "state"), *label = NULL;
	struct bg_strbuf why = BG_STRBUF_INIT;
	size_t i;
	int rc;

	if (state && strcmp(state, "unsupported") == 0)
		return refuse(ctx, "gate '%s' is unsupported: %s", r->gate_id,
			      jstr(q->gate, "reason") ? jstr(q->gate, "reason") : "no reason given");
	if (q->registry_problems)
		return refuse(ctx, "the registry does not validate (%zu problem%s); run 'benchgate validate' and fix it first",
			      q->registry_problems, q->registry_problems == 1 ? "" : "s");
	if ((rc = bg_runbook_check_declared(rb, jstr(q->gate, "runbook"), ctx)))
		return rc;
	env = json_object_get(rb, "required_environment");
	json_array_foreach(env, i, x) {
		const char *name = json_string_value(x);
		if (name && !getenv(name))
			return refuse(ctx, "required environment variable '%s' is not set (runbook '%s'); export it and run again",
				      name, jstr(q->gate, "runbook"));
	}
	r->question = q->question && *q->question ? q->question : jstr(rb, "question");
	if (r->question && *r->question && !(q->question && *q->question)) {
		if ((rc = subst(r->question, q->gate, false, &r->question_text, ctx)))
			return rc;
		r->question = r->question_text.buf;
	}
	if (!r->question || question_blank(r->question))
		return refuse(ctx, "gate '%s' needs a falsifiable question: pass --question TEXT or give its runbook a \"question\"",
			      r->gate_id);
	/* the command and the measure object, substituted */
	if (!json_is_string(json_object_get(rb, "command")))
		return refuse(ctx, "runbook '%s' has no command", jstr(q->gate, "runbook"));
	if ((rc = subst(jstr(rb, "command"), q->gate, true, &r->command, ctx)))
		return rc;
	/* /bin/sh -c takes the command as one argument, which Linux caps at
	 * MAX_ARG_STRLEN (32 pages, the NUL included): a longer one can never
	 * start, so it is refused before anything is written */
	if (r->command.len >= (size_t)sysconf(_SC_PAGESIZE) * 32)
		return refuse(ctx,
			      "runbook '%s': the command of gate '%s' is %zu bytes once its fields are replaced, and "
			      "Linux passes at most %zu bytes in one argument to /bin/sh -c; shorten it (a long list "
			      "belongs in a file the command reads)",
			      jstr(q->gate, "runbook"), r->gate_id, r->command.len,
			      (size_t)sysconf(_SC_PAGESIZE) * 32 - 1);
	measure = json_object_get(rb, "measure");
	if (measure && !json_is_object(measure))
		return refuse(ctx, "runbook '%s': 'measure' must be an object", jstr(q->gate, "runbook"));
	if (!measure)
		r->measure = json_object();
	else if ((rc = subst_json(measure, q->gate, &r->measure, ctx)))
		return rc;
	/* the runbook as written: an override does not excuse a bad field */
	if ((rc = bg_runbook_check_measure(r->measure, jstr(q->gate, "runbook"), ctx)))
		return rc;
	apply_overrides(q, r->measure);
	/* the inputs, outputs and artifacts are all hashed: fail (exit 4) before
	 * anything is written when libcrypto cannot be loaded */
	if ((rc = bg_sha256_ready(ctx)) != BG_OK)
		return rc;
	/* declared inputs must exist: their SHA-256 is provenance */
	r->inputs = json_array();
	json_array_foreach(json_object_get(rb, "inputs"), i, x) {
		struct bg_strbuf path = BG_STRBUF_INIT; /* a string: bg_runbook_check_declared */
		char hex[65];
		struct bg_ctx c2;
		bool there;

		if ((rc = subst(jstr(x, "path"), q->gate, false, &path, ctx))) {
			bg_strbuf_release(&path);
			return rc;
		}
		bg_ctx_init(&c2);
		r->input_st = bg_xrealloc(r->input_st, (i + 1) * sizeof(*r->input_st));
		there = stat(path.buf, &r->input_st[i].st) == 0;
		if (!there)
			bg_error(&c2, BG_EIO, "%s", strerror(errno));
		if (!there || bg_input_hash(path.buf, path.buf, hex, &r->input_st[i], &c2)) {
			rc = refuse(ctx, "declared input '%s' cannot be hashed (%s); %s", path.buf, bg_ctx_message(&c2),
				    there ? "make it readable regular files and folders (no link to nothing, no pipe or "
					    "device), or declare another path"
					  : "create it first (see the runbook's preflight)");
			bg_ctx_release(&c2);
			bg_strbuf_release(&path);
			return rc;
		}
		bg_ctx_release(&c2);
		json_array_append_new(r->inputs, json_pack("{s:O, s:s, s:s}", "dataset_id",
							   json_object_get(x, "dataset_id") ? json_object_get(x, "dataset_id") : json_null(),
							   "path", path.buf, "sha256", hex));
		bg_strbuf_release(&path);
	}
	if ((rc = refuse_private_paths(r, ctx)))
		return rc;
	/* provenance and the computer */
	{
		struct bg_provenance_opts po = {0};
		build_git_exclude(r);
		po.git_exclude = r->git_exclude;
		po.root = r->cfg->root;
		po.argv = q->bg_argv;
		po.argc = q->bg_argc;
		r->provenance = bg_provenance_capture(&po);
	}
	if (!jstr(json_object_get(r->provenance, "git"), "revision")) {
		struct bg_strbuf gitsays = BG_STRBUF_INIT;

		/* git missing or refusing the repository (its owner is another
		 * user) is not "no repository": say what git says */
		const char *dubious = NULL;

		if (!bg_provenance_git_why(r->cfg->root, &gitsays))
			rc = refuse(ctx, "the source revision of the project at '%s' cannot be read: %s; install git, or put it on PATH",
				    ".", gitsays.buf);
		else if ((dubious = strstr(gitsays.buf, "dubious ownership in repository at '")) &&
			 gitsays.buf[gitsays.len - 1] == '\'') {
			/* git refuses a repository another user owns: say how to
			 * trust it, for the folder git names */
			const char *repo = dubious + strlen("dubious ownership in repository at '");
			rc = refuse(ctx, "git refuses the repository of the project at '.' (git: %s): a session needs its source revision; run benchgate as the user who owns the repository or, if you trust it, tell git so: git config --global --add safe.directory '%.*s'",
				    gitsays.buf, (int)(gitsays.buf + gitsays.len - 1 - repo), repo);
		} else
			rc = refuse(ctx, "the project at '%s' is not in a git repository with a commit%s%s%s: a session needs its source revision%s",
				    ".", gitsays.len ? " (git: " : "", gitsays.buf, gitsays.len ? ")" : "",
				    /* no repository, or one without a commit; not one git refuses (its owner) */
				    !gitsays.len || strstr(gitsays.buf, "not a git repository") ||
					    strstr(gitsays.buf, "Needed a single revision")
					    ? "; commit the project first (git init, git add, git commit)"
					    : "");
		bg_strbuf_release(&gitsays);
		return rc;
	}
	if (strlen(jstr(json_object_get(r->provenance, "git"), "revision")) != 40)
		return refuse(ctx, "the repository names its commits with SHA-256 ('%s'); a manifest's revision must be a 40-digit SHA-1, which 'benchgate check' requires as the reference does",
			      jstr(json_object_get(r->provenance, "git"), "revision"));
	{
		/* the dirty flag and the diff hash are provenance too: a tree git
		 * cannot diff (a filter of .gitattributes it cannot run) would run
		 * the whole session only to block it for want of them */
		const json_t *git = json_object_get(r->provenance, "git");
		const json_t *dirty = json_object_get(git, "dirty");

		if (!json_is_boolean(dirty) || (json_is_true(dirty) && !jstr(git, "diff_sha256"))) {
			struct bg_strbuf gitsays = BG_STRBUF_INIT;

			bg_provenance_git_state_why(r->cfg->root, r->git_exclude, &gitsays);
			if (!json_is_boolean(dirty))
				rc = refuse(ctx, "whether the project at '.' has uncommitted changes cannot be read (%s): a session needs it as provenance; make 'git status' work there",
					    gitsays.len ? gitsays.buf : "git status failed, and now succeeds: run it again");
			else
				rc = refuse(ctx, "the uncommitted changes of the project at '.' cannot be hashed (%s): a session needs their SHA-256 as provenance; make 'git diff HEAD' work there (install the program a filter it names runs), or commit them",
					    gitsays.len ? gitsays.buf : "git diff failed, and now succeeds: run it again");
			bg_strbuf_release(&gitsays);
			return rc;
		}
	}
	bg_run_detect_computer(r->cfg, r->provenance, &label, &why);
	r->res->computer = label;
	if (strcmp(q->tier, "diagnostic") != 0) {
		const char *want = jstr(q->gate, "computer");
		if (!label) {
			bg_strbuf_release(&why);
			return refuse(ctx, "this machine matches no computer rule of benchgate.json (CPU '%s'); gate '%s' is for '%s' (use --tier diagnostic to measure anyway: a diagnostic session never satisfies a gate)",
				      jstr(json_object_get(r->provenance, "host"), "cpu_model") ? jstr(json_object_get(r->provenance, "host"), "cpu_model") : "unknown",
				      r->gate_id, want ? want : "?");
		}
		if (!want || strcmp(want, label) != 0) {
			rc = refuse(ctx, "this machine is '%s' (%s), but gate '%s' is for '%s' (use --tier diagnostic to measure anyway: a diagnostic session never satisfies a gate)",
				    label, why.buf, r->gate_id, want ? want : "?");
			bg_strbuf_release(&why);
			return rc;
		}
	}
	bg_strbuf_release(&why);
	/* the device to lease */
	r->computer_slug = label ? bg_config_computer_slug(r->cfg, label) : NULL;
	if (!r->computer_slug) {
		char host[256] = "host";
		gethostname(host, sizeof(host) - 1);
		snprintf(r->slug_buf, sizeof(r->slug_buf), "host-");
		for (size_t k = 0, n = 5; host[k] && n + 1 < sizeof(r->slug_buf); k++)
			r->slug_buf[n++] = isalnum((unsigned char)host[k]) || host[k] == '-' ? host[k] : '_', r->slug_buf[n] = '\0';
		r->computer_slug = r->slug_buf;
	}
	return BG_OK;
}

static void add_strings(const json_t *list, char ***out, size_t *n)
{
	size_t i;
	json_t *x;

	*out = bg_xcalloc(json_array_size(list) + 1, sizeof(char *));
	*n = 0;
	json_array_foreach(list, i, x)
		if (json_is_string(x))
			(*out)[(*n)++] = (char *)json_string_value(x);
}

/* The contract's minimum_accepted_sessions_before_hard_threshold (checked
 * by bg_runbook_check_contract), or the default. */
static size_t contract_minimum(const struct bg_run_request *q)
{
	const json_t *m = json_object_get(json_object_get(q->profile, "comparison_contract"),
					  "minimum_accepted_sessions_before_hard_threshold");
	struct bg_decide_opts o;

	bg_decide_opts_init(&o);
	return json_is_number(m) ? (size_t)json_number_value(m) : o.min_sessions;
}

static int session_opts(struct run *r, struct bg_measure_opts *o, char **argv, struct bg_ctx *ctx)
{
	const struct bg_run_request *q = r->req;
	const json_t *m = r->measure, *parity = json_object_get(m, "parity"), *cache = json_object_get(m, "cache");
	int rc;

	if ((rc = bg_runbook_check_contract(q->profile, q->cfg->profile_path, ctx)) ||
	    (rc = bg_runbook_check_key_fields(q->profile, q->cfg->profile_path, q->key_fields,
					      q->cfg->config_path ? q->cfg->config_path : "benchgate.json", ctx)) ||
	    (rc = bg_runbook_check_thresholds(q->thresholds, contract_minimum(q), ctx)))
		return rc;
	bg_measure_opts_init(o);
	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)"-c";
	argv[2] = r->command.buf;
	argv[3] = NULL;
	o->argv = argv;
	o->argc = 3;
	if (json_is_integer(json_object_get(m, "warmups")))
		o->warmups = (long)json_integer_value(json_object_get(m, "warmups"));
	if (json_is_integer(json_object_get(m, "repetitions")))
		o->runs = (long)json_integer_value(json_object_get(m, "repetitions"));
	if (json_is_number(json_object_get(m, "timeout_seconds")))
		o->timeout = json_number_value(json_object_get(m, "timeout_seconds"));
	if (json_is_integer(json_object_get(m, "sample_interval_ms")))
		o->sample_interval_ms = (long)json_integer_value(json_object_get(m, "sample_interval_ms"));
	add_strings(json_object_get(m, "outputs"), &r->outputs, &r->noutputs);
	o->outputs = (const char *const *)r->outputs;
	o->noutputs = r->noutputs;
	if (json_is_object(parity)) {
		const char *kind = jstr(parity, "kind"); /* one of three: bg_runbook_check_measure */
		if (strcmp(kind, "sha256") == 0) {
			o->parity = BG_PARITY_SHA256;
			o->parity_sha256 = jstr(parity, "expected");
		} else if (strcmp(kind, "allclose") == 0) {
			o->parity = BG_PARITY_ALLCLOSE;
			o->parity_reference = jstr(parity, "reference");
			if (json_is_number(json_object_get(parity, "rtol")))
				o->rtol = json_number_value(json_object_get(parity, "rtol"));
			if (json_is_number(json_object_get(parity, "atol")))
				o->atol = json_number_value(json_object_get(parity, "atol"));
		} else {
			o->parity = BG_PARITY_COMMAND; /* bg_runbook_check_measure allows only these three */
			o->parity_command = jstr(parity, "command");
		}
		if (r->noutputs == 0)
			return refuse(ctx, "runbook '%s': parity needs measure.outputs", jstr(q->gate, "runbook"));
	}
	o->deterministic = json_is_true(json_object_get(m, "deterministic"));
	/* a claim nothing could check, as measure --deterministic without --output */
	if (o->deterministic && r->noutputs == 0)
		return refuse(ctx, "runbook '%s': deterministic needs measure.outputs (the files compared run by run)",
			      jstr(q->gate, "runbook"));
	if (bg_timing_parse(jstr(m, "timing"), &o->timing) != 0)
		o->timing = BG_TIMING_PROCESS; /* absent (bg_runbook_check_measure refused any other value) */
	add_strings(json_object_get(cache, "evict"), &r->evict, &r->nevict);
	o->evict = (const char *const *)r->evict;
	o->nevict = r->nevict;
	o->root = r->cfg->root;
	o->git_exclude = r->git_exclude;
	o->bg_argv = q->bg_argv;
	o->bg_argc = q->bg_argc;
	o->progress = q->progress;
	o->progress_data = q->progress_data;
	o->interrupted = q->interrupted;
	o->capture_dir = NULL; /* set by the caller once the folder exists */
	return BG_OK;
}

static json_t *or_null(json_t *v)
{
	return v ? v : json_null();
}

static json_t *context_of(struct run *r)
{
	const json_t *g = r->req->gate, *host = json_object_get(r->provenance, "host");
	json_t *c = json_deep_copy(g), *ids = json_array(), *x, *gpu = json_array(), *d;
	struct bg_strbuf dev = BG_STRBUF_INIT, rt = BG_STRBUF_INIT;
	size_t i;

	json_object_set_new(c, "gate", json_string(r->gate_id));
	json_object_set_new(c, "gate_id", json_string(r->gate_id));
	json_object_set_new(c, "computer", r->res->computer ? json_string(r->res->computer) : json_null());
	json_object_set(c, "cell_id", json_object_get(g, "cell") ? json_object_get(g, "cell") : json_null());
	json_object_set_new(c, "protocol_version",
			    bg_json_text(r->req->protocol_version));
	json_object_set(c, "source_revision", json_object_get(json_object_get(r->provenance, "git"), "revision"));
	json_object_set(c, "revision", json_object_get(json_object_get(r->provenance, "git"), "revision"));
	json_array_foreach(r->inputs, i, x)
		json_array_append(ids, json_object_get(x, "sha256"));
	json_object_set_new(c, "source_identity", ids);
	json_object_set(c, "inputs", r->inputs);
	json_object_set_new(c, "source_shape", json_pack("[OOOO]", or_null(json_object_get(g, "source_scan_rows")),
						       or_null(json_object_get(g, "source_scan_columns")),
						       or_null(json_object_get(g, "source_detector_rows")),
						       or_null(json_object_get(g, "source_detector_columns"))));
	json_object_set_new(c, "scan_region", json_pack("[OO]", or_null(json_object_get(g, "selected_scan_rows")),
						      or_null(json_object_get(g, "selected_scan_columns"))));
	json_object_set_new(c, "detector_region", json_pack("[OO]", or_null(json_object_get(g, "source_detector_rows")),
							  or_null(json_object_get(g, "source_detector_columns"))));
	json_object_set(c, "precision", json_object_get(g, "working_dtype") ? json_object_get(g, "working_dtype") : json_null());
	if (!json_object_get(c, "mask_signature"))
		json_object_set_new(c, "mask_signature", json_null());
	bg_py_str(&dev, json_object_get(host, "cpu_model"));
	json_array_foreach(json_object_get(json_object_get(r->provenance, "gpu"), "devices"), i, d) {
		json_array_append(gpu, json_object_get(d, "name"));
		bg_strbuf_adds(&dev, "; ");
		bg_py_str(&dev, json_object_get(d, "uuid") ? json_object_get(d, "uuid") : json_object_get(d, "name"));
	}
	json_object_set_new(c, "device_id", json_string(dev.buf));
	json_object_set_new(c, "device", json_string(dev.buf));
	json_object_set(c, "cpu_model", json_object_get(host, "cpu_model") ? json_object_get(host, "cpu_model") : json_null());
	json_object_set_new(c, "gpu", gpu);
	bg_py_str(&rt, json_object_get(host, "os_release"));
	bg_strbuf_adds(&rt, "; kernel ");
	bg_py_str(&rt, json_object_get(host, "kernel_release"));
	if (json_object_get(json_object_get(r->provenance, "gpu"), "driver_version")) {
		bg_strbuf_adds(&rt, "; driver ");
		bg_py_str(&rt, json_object_get(json_object_get(r->provenance, "gpu"), "driver_version"));
		bg_strbuf_adds(&rt, "; CUDA ");
		bg_py_str(&rt, json_object_get(json_object_get(r->provenance, "gpu"), "cuda_version"));
	}
	json_object_set_new(c, "runtime_version", json_string(rt.buf));
	json_object_set_new(c, "runtime", json_string(rt.buf));
	json_object_set(c, "measure", r->measure);
	{
		/* the runbook as written: promote refuses the session once it changes */
		char hex[65];
		struct bg_ctx c2;

		bg_ctx_init(&c2); /* libcrypto was loaded by preflight */
		json_object_set_new(c, "runbook_sha256", bg_lifecycle_runbook_sha256(r->req->runbook, hex, &c2) == BG_OK
							 ? json_string(hex) : json_null());
		bg_ctx_release(&c2);
	}
	bg_strbuf_release(&dev);
	bg_strbuf_release(&rt);
	return c;
}

/* "50.31 ms" style from nanoseconds; "n/a" for null. */
static void ns_text(struct bg_strbuf *out, const json_t *ns)
{
	double v;

	if (!json_is_number(ns)) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	v = json_number_value(ns) / 1e9;
	if (v < 1.0)
		bg_strbuf_addf(out, "%.3f ms", v * 1e3);
	else
		bg_strbuf_addf(out, "%.4f s", v);
}

static void bytes_text(struct bg_strbuf *out, const json_t *b)
{
	if (!json_is_number(b))
		bg_strbuf_adds(out, "n/a");
	else
		bg_strbuf_addf(out, "%.1f MiB", json_number_value(b) / 1048576.0);
}

/* The one-line result of a session for RUNS.md and the manifest. */
static void result_line(struct bg_strbuf *out, const json_t *session, const char *decision)
{
	const json_t *st = json_object_get(session, "statistics");
	const json_t *wall = bg_measure_timing_stats(session);
	const char *status = jstr(session, "status");

	if (status && strcmp(status, "blocked") == 0) {
		bg_strbuf_addf(out, "blocked: %s", jstr(session, "reason") ? jstr(session, "reason") : "see the session");
	} else {
		bg_strbuf_adds(out, bg_measure_reported(session) ? "reported p50 " : "p50 ");
		ns_text(out, json_object_get(wall, "p50"));
		bg_strbuf_adds(out, ", p95 ");
		ns_text(out, json_object_get(wall, "p95"));
		bg_strbuf_adds(out, ", max ");
		ns_text(out, json_object_get(wall, "max"));
		bg_strbuf_adds(out, "; tree peak ");
		bytes_text(out, json_object_get(json_object_get(st, "tree_peak_bytes"), "max"));
		bg_strbuf_adds(out, "; parity ");
		bg_strbuf_adds(out, jstr(json_object_get(session, "parity"), "result") ? jstr(json_object_get(session, "parity"), "result") : "not declared");
	}
	if (decision)
		bg_strbuf_addf(out, "; decision %s", decision);
}

static int add_output(const struct bg_config *cfg, json_t *outputs, const char *rel, const char *result,
		      struct bg_ctx *ctx)
{
	struct bg_strbuf abs = BG_STRBUF_INIT;
	char hex[65];
	int rc;

	bg_config_path(cfg, &abs, rel);
	rc = bg_sha256_file(abs.buf, rel, hex, ctx);
	if (!rc)
		json_array_append_new(outputs, json_pack("{s:s, s:s, s:s}", "artifact", rel, "sha256", hex, "result", result));
	bg_strbuf_release(&abs);
	return rc;
}

static int write_rel(const struct bg_config *cfg, const char *rel, const struct bg_strbuf *text, struct bg_ctx *ctx)
{
	struct bg_strbuf abs = BG_STRBUF_INIT;
	int rc;

	bg_config_path(cfg, &abs, rel);
	rc = bg_file_write_atomic(abs.buf, rel, text->buf, text->len, ctx);
	bg_strbuf_release(&abs);
	return rc;
}

static void collect_block_reasons(struct run *r, const json_t *session, json_t *reasons)
{
	const json_t *git = json_object_get(r->provenance, "git"), *m = r->measure;
	const json_t *cache = json_object_get(m, "cache"), *floor = json_object_get(m, "memory_floor_bytes");
	const json_t *stats = json_object_get(session, "statistics");
	const json_t *tree = json_object_get(json_object_get(stats, "tree_peak_bytes"), "max");
	const json_t *rss = json_object_get(json_object_get(stats, "max_rss_bytes"), "max");
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (jstr(session, "status") && strcmp(jstr(session, "status"), "blocked") == 0) {
		bg_strbuf_addf(&sb, "the session is blocked: %s", jstr(session, "reason") ? jstr(session, "reason") : "no reason recorded");
		json_array_append_new(reasons, json_string(sb.buf));
	}
	if (!jstr(git, "revision"))
		json_array_append_new(reasons, json_string("missing provenance: the source revision"));
	if (json_is_true(json_object_get(git, "dirty")) && !jstr(git, "diff_sha256"))
		json_array_append_new(reasons, json_string("missing provenance: the dirty diff's SHA-256"));
	{
		size_t i;
		json_t *x;
		json_array_foreach(r->inputs, i, x) {
			if (!jstr(x, "sha256")) {
				json_array_append_new(reasons, json_string("missing provenance: an input's SHA-256"));
				continue;
			}
			/* the SHA-256 (and the key) name the input as it was before
			 * the first run: it must still be that file, unchanged */
			if (!bg_input_unchanged(jstr(x, "path"), &r->input_st[i])) {
				bg_strbuf_reset(&sb);
				bg_strbuf_addf(&sb, "declared input '%s' changed during the session (its SHA-256 was taken before the first run); leave inputs alone while a gate runs",
					       jstr(x, "path"));
				json_array_append_new(reasons, json_string(sb.buf));
			}
		}
	}
	/* the tree's sampled peak, or, only when sampling missed every run,
	 * the largest single process's peak RSS (wait4): the tree held at least
	 * that, though it may be benchgate's own peak at the spawn, which a run
	 * inherits until it execs (max_rss_floor_bytes), and the reason says so */
	double inherited = 0;
	{
		size_t i;
		json_t *x;
		json_array_foreach(json_object_get(session, "runs"), i, x) {
			const json_t *f = json_object_get(x, "max_rss_floor_bytes");
			if (json_is_number(f) && json_number_value(f) > inherited)
				inherited = json_number_value(f);
		}
	}
	if (json_is_number(floor) && json_is_number(tree) && json_number_value(tree) > json_number_value(floor)) {
		bg_strbuf_reset(&sb);
		bg_strbuf_addf(&sb, "process-tree peak %.0f bytes is over the memory floor of %.0f bytes",
			       json_number_value(tree), json_number_value(floor));
		json_array_append_new(reasons, json_string(sb.buf));
	} else if (json_is_number(floor) && !json_is_number(tree) && json_is_number(rss) &&
		   json_number_value(rss) > json_number_value(floor)) {
		/* no sample: fail closed, saying when the figure may be benchgate's */
		bg_strbuf_reset(&sb);
		bg_strbuf_addf(&sb, "a process's peak RSS of %.0f bytes is over the memory floor of %.0f bytes",
			       json_number_value(rss), json_number_value(floor));
		if (json_number_value(rss) <= inherited)
			bg_strbuf_addf(&sb, " (no sample of the process tree, and no more than benchgate's own peak of %.0f bytes, "
					    "which a run inherits until it execs: sample more often, measure.sample_interval_ms)",
				       inherited);
		json_array_append_new(reasons, json_string(sb.buf));
	}
	if (jstr(cache, "state") && strcmp(jstr(cache, "state"), "cold") == 0) {
		const char *got = jstr(json_object_get(session, "cache"), "state");
		if (json_array_size(json_object_get(cache, "evict")) == 0)
			json_array_append_new(reasons, json_string("a cold cache state is claimed but nothing is evicted to verify it"));
		else if (!got || strcmp(got, "cold") != 0)
			json_array_append_new(reasons, json_string("a cold cache state is claimed but the eviction was not verified"));
	}
	if (!bg_lease_held(r->lease))
		json_array_append_new(reasons, json_string("the device lease was not held for the whole session"));
	if (!bg_lease_machine_held(r->lease))
		json_array_append_new(reasons, json_string("the machine lease was not held for the whole session"));
	bg_strbuf_release(&sb);
}

static double stat_of(const json_t *st, const char *layer, const char *which, double scale)
{
	const json_t *v = json_object_get(layer ? json_object_get(st, layer) : st, which);
	return json_is_number(v) ? json_number_value(v) * scale : NAN;
}

static double summary_num(const json_t *s, const char *k, double scale)
{
	const json_t *v = json_object_get(s, k);
	return json_is_number(v) ? json_number_value(v) * scale : NAN;
}

/* k, window and floor from the registry's thresholds for this gate or key. */
static void apply_thresholds(const struct bg_run_request *q, const char *gate_id, const char *key_id,
			     struct bg_decide_opts *o)
{
	size_t i;
	json_t *t;

	for (int pass = 0; pass < 2; pass++) /* gate entries first, then key entries win */
		json_array_foreach(q->thresholds, i, t) {
			const char *want = jstr(t, pass ? "key" : "gate");
			if (!want || strcmp(want, pass ? key_id : gate_id) != 0)
				continue;
			if (json_is_number(json_object_get(t, "k")))
				o->k = json_number_value(json_object_get(t, "k"));
			if (json_is_integer(json_object_get(t, "window")) && json_integer_value(json_object_get(t, "window")) > 0)
				o->window = (size_t)json_integer_value(json_object_get(t, "window"));
			if (json_is_number(json_object_get(t, "floor")))
				o->floor_rel = json_number_value(json_object_get(t, "floor"));
		}
}

/* Whether the session ran on a committed tree: git says clean (benchgate's
 * own records in experiments/ left out, provenance.c). */
static bool source_clean(const struct run *r)
{
	return json_is_false(json_object_get(json_object_get(r->provenance, "git"), "dirty"));
}

/*
 * A session of uncommitted (or unknown) source is decided against the
 * baseline, but does not join it by itself: its timing is of code that its
 * key's revision does not name. Adds the reason to the decision document;
 * returns the curation to store ("pending": a person may still accept it).
 */
static const char *note_unclean_source(const struct run *r, json_t *decision)
{
	const json_t *git = json_object_get(r->provenance, "git");
	const char *diff = jstr(git, "diff_sha256");
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (json_is_true(json_object_get(git, "dirty"))) {
		bg_strbuf_addf(&sb, "the source has uncommitted changes (diff SHA-256 %.12s", diff ? diff : "n/a");
		if (json_integer_value(json_object_get(git, "untracked_files")) > 0) {
			bg_strbuf_adds(&sb, "; ");
			bg_provenance_untracked_text(git, &sb);
		}
		bg_strbuf_addch(&sb, ')');
	} else {
		bg_strbuf_adds(&sb, "whether the source has uncommitted changes is unknown (git status failed)");
	}
	bg_strbuf_adds(&sb, ": not counted toward the baseline unless a person accepts it"
			    " (benchgate accept SESSION --why TEXT); commit to run sessions that count");
	if (json_integer_value(json_object_get(git, "untracked_files")) > 0)
		bg_strbuf_adds(&sb, ", and name in .gitignore the untracked files that are not source");
	json_array_append_new(json_object_get(decision, "reasons"), json_string(sb.buf));
	bg_strbuf_release(&sb);
	return "pending";
}

/*
 * Where the machine's conditions in this session (power source, boost,
 * quota, a GPU's power limit or clocks...) differ from those of most of the baseline sessions its
 * decision used:
 * a note for the person reading the decision, which it does not change. A
 * baseline session that cannot be read is left out.
 */
static json_t *conditions_differ(struct bg_store *store, const json_t *session, const json_t *decision)
{
	const json_t *ids = json_object_get(decision, "baseline"), *x;
	size_t n = 0, i;
	json_t **docs = bg_xcalloc(json_array_size(ids) + 1, sizeof(*docs)), *notes;
	const json_t **provs = bg_xcalloc(json_array_size(ids) + 1, sizeof(*provs));

	json_array_foreach(ids, i, x) {
		struct bg_ctx c2;

		bg_ctx_init(&c2);
		if (bg_store_get_session(store, (long long)json_integer_value(x), &docs[n], &c2) == BG_OK) {
			provs[n] = json_object_get(docs[n], "provenance");
			n++;
		}
		bg_ctx_release(&c2);
	}
	notes = bg_conditions_differ(json_object_get(session, "provenance"), provs, n);
	bg_load_notes(session, notes);
	bg_thermal_notes(session, notes);
	bg_slowdown_notes(session, notes);
	bg_gpu_shared_notes(session, notes);
	bg_cache_notes(session, notes);
	for (i = 0; i < n; i++)
		json_decref(docs[i]);
	free(docs);
	free(provs);
	return notes;
}

/*
 * A note where the gate's cache_state claims a cold cache ("cold original
 * source") but the runs were not made cold and the runbook claims no cold
 * cache (one that does and is not verified is a block reason): the
 * timings may be of data the page cache held, and the evidence row a
 * promotion writes would carry the gate's claim, which criterion 4 refuses.
 */
static void cold_claim_note(const struct run *r, const json_t *session, json_t *notes)
{
	const char *claim = jstr(r->req->gate, "cache_state");
	const char *rb = jstr(json_object_get(r->measure, "cache"), "state");
	const char *got = jstr(json_object_get(session, "cache"), "state");
	struct bg_strbuf sb = BG_STRBUF_INIT;

	if (!json_is_array(notes) || !bg_promotion_claims_cold(claim) || (rb && strcmp(rb, "cold") == 0) ||
	    (got && strcmp(got, "cold") == 0))
		return;
	bg_strbuf_addf(&sb, "the gate's cache_state '%s' claims a cold cache, but nothing made the runs cold "
			    "(cache state '%s'): they may have read data the page cache held, and the session cannot "
			    "be promoted until the runbook evicts the data before every run (measure.cache)",
		       claim, got ? got : "none");
	json_array_append_new(notes, json_string(sb.buf));
	bg_strbuf_release(&sb);
}

/* Decides against the key's baseline, then stores the session with its key
 * and decision in one transaction (res->session_id set). */
static int decide_and_store(struct run *r, struct bg_store *store, json_t *session, json_t *context,
			    struct bg_ctx *ctx)
{
	const struct bg_run_request *q = r->req;
	const json_t *contract = json_object_get(q->profile, "comparison_contract");
	json_t *fields = json_object_get(contract, "comparison_key"), *key = NULL, *base = NULL, *reasons = json_array();
	json_t *own_fields = NULL, *x;
	struct bg_decide_opts o;
	struct bg_session_facts me, *facts = NULL;
	const char **why = NULL, *curation;
	enum bg_decision d;
	size_t i, n;
	int rc;

	if (!json_is_array(fields)) {
		own_fields = json_array();
		for (const char *const *f = bg_default_key_fields; *f; f++)
			json_array_append_new(own_fields, json_string(*f));
		fields = own_fields;
	}
	rc = bg_key_compute(fields, context, q->key_fields, &key, r->res->key_id, ctx);
	json_decref(own_fields);
	if (rc)
		goto out;
	bg_decide_opts_init(&o);
	bg_decide_opts_minimum(&o, contract_minimum(q));
	apply_thresholds(q, r->gate_id, r->res->key_id, &o);
	/* the session is not stored yet: it is stored with its decision, below */
	/* timed the same way only: a key that does not hold the runbook's
	 * measure object may hold sessions of both timings */
	if ((rc = bg_store_baseline(store, r->res->key_id, bg_measure_reported(session) ? "reported" : "process", 0,
				    (long)o.window, &base, ctx)))
		goto out;
	{
		/* accepted sessions of the other timing: said beside the count */
		json_t *other = NULL;

		if ((rc = bg_store_baseline(store, r->res->key_id, bg_measure_reported(session) ? "process" : "reported",
					    0, 1, &other, ctx)))
			goto out;
		if (json_array_size(other))
			o.timing = bg_measure_reported(session) ? "reported" : "process";
		json_decref(other);
	}
	n = json_array_size(base);
	facts = bg_xcalloc(n + 1, sizeof(*facts));
	json_array_foreach(base, i, x) {
		facts[i].id = (long long)json_integer_value(json_object_get(x, "id"));
		facts[i].metric[BG_METRIC_P50] = summary_num(x, "wall_p50_ns", 1e-9);
		facts[i].metric[BG_METRIC_P95] = summary_num(x, "wall_p95_ns", 1e-9);
		facts[i].metric[BG_METRIC_MAX] = summary_num(x, "wall_max_ns", 1e-9);
		facts[i].metric[BG_METRIC_TREE_PEAK] = summary_num(x, "tree_peak_bytes", 1.0);
		facts[i].metric[BG_METRIC_GPU_PEAK] = summary_num(x, "gpu_peak_bytes", 1.0);
	}
	collect_block_reasons(r, session, reasons);
	why = bg_xcalloc(json_array_size(reasons) + 1, sizeof(*why));
	json_array_foreach(reasons, i, x)
		why[i] = json_string_value(x);
	{
		const json_t *st = json_object_get(session, "statistics");
		const json_t *timing = bg_measure_timing_stats(session); /* wall, or the reported samples */

		me.id = 0;
		me.metric[BG_METRIC_P50] = stat_of(timing, NULL, "p50", 1e-9);
		me.metric[BG_METRIC_P95] = stat_of(timing, NULL, "p95", 1e-9);
		me.metric[BG_METRIC_MAX] = stat_of(timing, NULL, "max", 1e-9);
		me.metric[BG_METRIC_TREE_PEAK] = stat_of(st, "tree_peak_bytes", "max", 1.0);
		me.metric[BG_METRIC_GPU_PEAK] = stat_of(st, "gpu_process_peak_bytes", "max", 1.0);
		me.block_reasons = why;
	}
	d = bg_decide(&me, facts, n, &o, &r->res->decision);
	json_object_set_new(r->res->decision, "conditions", conditions_differ(store, session, r->res->decision));
	cold_claim_note(r, session, json_object_get(r->res->decision, "conditions"));
	json_object_set_new(r->res->decision, "key_id", json_string(r->res->key_id));
	json_object_set_new(r->res->decision, "tier", json_string(q->tier));
	curation = d == BG_DECISION_BLOCK ? "rejected" : d == BG_DECISION_INVESTIGATE ? "pending" : "auto-accepted";
	if (d != BG_DECISION_BLOCK && !source_clean(r))
		curation = note_unclean_source(r, r->res->decision);
	rc = bg_store_put_decided_session(store, session, r->res->key_id, key, r->res->decision, curation,
					  &r->res->session_id, ctx);
out:
	free(why);
	free(facts);
	json_decref(reasons);
	json_decref(key);
	json_decref(base);
	return rc;
}

/*
 * The source as the session read it (after the wait for the leases and
 * after --setup) replaces the preflight's reading, which an edit or a
 * commit made meanwhile (minutes, with --wait) leaves behind: whether the
 * session counts as of committed source, the manifest's code and the key's
 * revision then describe what was measured.
 */
static void adopt_session_source(struct run *r, const json_t *session)
{
	json_t *now = json_object_get(json_object_get(session, "provenance"), "git"), *code;

	if (!json_is_object(now) || json_equal(now, json_object_get(r->provenance, "git")))
		return;
	json_object_set(r->provenance, "git", now);
	code = json_object_get(r->manifest, "code");
	json_object_set(code, "revision", or_null(json_object_get(now, "revision")));
	json_object_set(code, "dirty", or_null(json_object_get(now, "dirty")));
	json_object_set(code, "diff_sha256", or_null(json_object_get(now, "diff_sha256")));
}

static json_t *new_manifest(struct run *r)
{
	const struct bg_run_request *q = r->req;
	const json_t *git = json_object_get(r->provenance, "git"), *host = json_object_get(r->provenance, "host");
	struct bg_strbuf when = BG_STRBUF_INIT, mp = BG_STRBUF_INIT, dev = BG_STRBUF_INIT;
	struct bg_strbuf hostname = BG_STRBUF_INIT, user = BG_STRBUF_INIT;
	json_t *m;

	bg_lifecycle_hostname(&hostname);
	bg_lifecycle_username(&user);
	bg_lifecycle_now_rfc3339(&when);
	bg_strbuf_addf(&mp, "%s/manifest.json", r->exp_rel.buf);
	bg_py_str(&dev, or_null(json_object_get(host, "cpu_model")));
	{
		size_t i;
		json_t *d;
		json_array_foreach(json_object_get(json_object_get(r->provenance, "gpu"), "devices"), i, d) {
			bg_strbuf_adds(&dev, "; ");
			bg_py_str(&dev, json_object_get(d, "name"));
		}
	}
	m = json_pack("{s:i, s:s, s:s, s:s, s:{s:s}, s:{s:n, s:O, s:s, s:O, s:O}, s:O, "
		      "s:{s:O, s:O, s:O, s:s, s:o}, s:{s:s, s:O, s:s, s:s?, s:I, s:s, s:s}, s:[], s:{s:s, s:s}}",
		      "schema_version", 1, "experiment_id", r->res->experiment_id, "status", "running",
		      "question", r->question,
		      "paper", "manifest_path", mp.buf,
		      "code", "repository", "revision", or_null(json_object_get(git, "revision")),
		      "entrypoint", r->command.buf, "dirty", or_null(json_object_get(git, "dirty")),
		      "diff_sha256", or_null(json_object_get(git, "diff_sha256")),
		      "inputs", r->inputs,
		      "parameters", "gate", q->gate, "runbook", or_null(json_object_get(q->gate, "runbook")),
		      "measure", r->measure, "tier", q->tier,
		      "protocol_version", bg_json_text(q->protocol_version),
		      "execution", "host", hostname.buf, "backend", or_null(json_object_get(q->gate, "platform")),
		      "device", dev.buf, "computer", r->res->computer, "pid", (json_int_t)getpid(),
		      "user", user.buf, "lease", r->computer_slug,
		      "outputs", "timestamps", "created", when.buf, "started", when.buf);
	bg_strbuf_release(&hostname);
	bg_strbuf_release(&user);
	bg_strbuf_release(&when);
	bg_strbuf_release(&mp);
	bg_strbuf_release(&dev);
	return m;
}

/*
 * A run's captured output as the experiment keeps it: home directories and
 * secrets written as in the session document (bg_provenance_scrub_text),
 * since the records are committed and nothing written may hold an
 * absolute path of a home (a traceback's file names, a program printing
 * its working directory); NUL bytes kept, each piece between them
 * scrubbed. Rewritten only when that changes it.
 */
static int scrub_capture(const struct bg_config *cfg, const char *rel, struct bg_ctx *ctx)
{
	struct bg_strbuf abs = BG_STRBUF_INIT, text = BG_STRBUF_INIT, out = BG_STRBUF_INIT;
	int rc;

	bg_config_path(cfg, &abs, rel);
	if ((rc = bg_file_read(abs.buf, rel, &text, ctx)) == BG_OK) {
		for (size_t at = 0; at <= text.len;) {
			bg_provenance_scrub_text(text.buf + at, getenv("HOME"), NULL, &out);
			at += strlen(text.buf + at) + 1;
			if (at <= text.len)
				bg_strbuf_addch(&out, '\0');
		}
		if (out.len != text.len || memcmp(out.buf, text.buf, out.len) != 0)
			rc = bg_file_write_atomic(abs.buf, rel, out.buf, out.len, ctx);
	}
	bg_strbuf_release(&abs);
	bg_strbuf_release(&text);
	bg_strbuf_release(&out);
	return rc;
}

static int finish(struct run *r, const json_t *session, struct bg_ctx *ctx)
{
	struct bg_strbuf text = BG_STRBUF_INIT, rel = BG_STRBUF_INIT, result = BG_STRBUF_INIT, when = BG_STRBUF_INIT;
	const char *decision = jstr(r->res->decision, "decision");
	bool blocked = decision && strcmp(decision, "block") == 0;
	json_t *outputs = json_object_get(r->manifest, "outputs"), *copy, *run;
	struct bg_runs_row row = {.id = r->res->experiment_id, .status = blocked ? "failed" : "ok"};
	bool written = false;
	size_t i;
	int rc = BG_OK;

	result_line(&result, session, decision);
	/* run-level records */
	json_array_foreach(json_object_get(session, "runs"), i, run) {
		char *line;
		copy = json_copy(run);
		json_object_set_new(copy, "session_id", json_integer(r->res->session_id));
		line = json_dumps(copy, JSON_COMPACT | JSON_ENSURE_ASCII);
		bg_strbuf_adds(&text, line);
		bg_strbuf_addch(&text, '\n');
		free(line);
		json_decref(copy);
	}
	bg_strbuf_addf(&rel, "%s/runs.jsonl", r->exp_rel.buf);
	if ((rc = write_rel(r->cfg, rel.buf, &text, ctx)) || (rc = add_output(r->cfg, outputs, rel.buf, result.buf, ctx)))
		goto out;
	/* the session document without its runs, with its decision */
	copy = json_copy((json_t *)session);
	json_object_del(copy, "runs");
	json_object_set(copy, "decision", r->res->decision ? r->res->decision : json_null());
	bg_strbuf_reset(&text);
	bg_json_dump_py(&text, copy, 2, true);
	bg_strbuf_addch(&text, '\n');
	json_decref(copy);
	bg_strbuf_reset(&rel);
	bg_strbuf_addf(&rel, "%s/session.json", r->exp_rel.buf);
	if ((rc = write_rel(r->cfg, rel.buf, &text, ctx)))
		goto out;
	bg_strbuf_reset(&text);
	bg_strbuf_addf(&text, "session %lld: statistics, provenance and decision", r->res->session_id);
	if ((rc = add_output(r->cfg, outputs, rel.buf, text.buf, ctx)))
		goto out;
	/* each run's captured output */
	json_array_foreach(json_object_get(session, "runs"), i, run) {
		static const char *const streams[] = {"stdout", "stderr"};
		for (int k = 0; k < 2; k++) {
			const char *p = jstr(run, streams[k]);
			if (!p)
				continue;
			bg_strbuf_reset(&text);
			bg_strbuf_addf(&text, "%s run %lld %s", jstr(run, "phase"),
				       (long long)json_integer_value(json_object_get(run, "ordinal")), streams[k]);
			if ((rc = scrub_capture(r->cfg, p, ctx)) || (rc = add_output(r->cfg, outputs, p, text.buf, ctx)))
				goto out;
		}
	}
	bg_lifecycle_now_rfc3339(&when);
	json_object_set_new(r->manifest, "status", json_string(blocked ? "failed" : "completed"));
	if (blocked)
		json_object_set(r->manifest, "failure_reason", json_array_get(json_object_get(r->res->decision, "reasons"), 0));
	json_object_set_new(json_object_get(r->manifest, "timestamps"), "finished", json_string(when.buf));
	json_object_set_new(r->manifest, "session_id", json_integer(r->res->session_id));
	json_object_set_new(r->manifest, "decision", decision ? json_string(decision) : json_null());
	json_object_set_new(r->manifest, "key_id", json_string(r->res->key_id));
	row.result = result.buf;
	if ((rc = bg_experiment_write_pair(r->cfg, r->res->experiment_id, r->manifest, &row, &written, ctx))) {
		/* the session is stored whatever failed here: say so, and what
		 * brings the records in line */
		char *msg = bg_xstrdup(bg_ctx_message(ctx));

		if (written)
			bg_error(ctx, rc,
				 "%s; session %lld is stored and experiment %s's manifest says %s, but its %s row still says running: once %s can be written, run 'benchgate experiments repair %s' to write the row from the manifest",
				 msg, r->res->session_id, r->res->experiment_id, blocked ? "failed" : "completed",
				 r->cfg->runs_index, r->cfg->runs_index, r->res->experiment_id);
		else
			bg_error(ctx, rc,
				 "%s; session %lld is stored, but experiment %s's manifest still says running: abandon it ('benchgate experiments abandon %s --why TEXT'), which names the session",
				 msg, r->res->session_id, r->res->experiment_id, r->res->experiment_id);
		free(msg);
	}
out:
	bg_strbuf_release(&text);
	bg_strbuf_release(&rel);
	bg_strbuf_release(&result);
	bg_strbuf_release(&when);
	return rc;
}

/* Marks the experiment failed with REASON, writing the note NOTE_NAME
 * (with the measured SESSION under "session" when given); BG_OK when the
 * note and the manifest were written. Its own error is not the one to say:
 * when it fails, the caller's message on ctx gains that the experiment
 * stays running and how to abandon it. */
static int record_failure(struct run *r, const char *reason, const char *note_name, json_t *session,
			  struct bg_ctx *ctx)
{
	struct bg_ctx c2;
	struct bg_strbuf when = BG_STRBUF_INIT;
	bool written;
	json_t *note;
	int rc;

	bg_ctx_init(&c2);
	bg_lifecycle_now_rfc3339(&when);
	note = json_pack("{s:s, s:o, s:s}", "experiment_id", r->res->experiment_id, "reason", bg_json_text(reason),
			 "at", when.buf);
	if (session) /* measured, then not stored: the figures stay with the experiment */
		json_object_set(note, "session", session);
	rc = bg_experiment_mark_failed(r->cfg, r->res->experiment_id, r->manifest, reason, note_name, note, &written,
				       &c2);
	if (rc && written) /* the note and the manifest say failed; the row was lost */
		bg_error(ctx, ctx->status, "%s; experiment %s's manifest says failed (%s keeps what happened%s), but its %s "
			 "row could not be written (%s): once it can be, run 'benchgate experiments repair %s'",
			 bg_ctx_message(ctx), r->res->experiment_id, note_name, session ? " and what was measured" : "",
			 r->cfg->runs_index, bg_ctx_message(&c2), r->res->experiment_id);
	else if (rc)
		bg_error(ctx, ctx->status, "%s; experiment %s could not be marked failed either (%s)%s: it stays "
			 "'running' until you abandon it ('benchgate experiments abandon %s --why TEXT')",
			 bg_ctx_message(ctx), r->res->experiment_id, bg_ctx_message(&c2),
			 session ? ", and what was measured is not kept" : "", r->res->experiment_id);
	json_decref(note);
	bg_strbuf_release(&when);
	bg_ctx_release(&c2);
	return rc;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The device and machine leases, waited for up to req->wait seconds while
 * another run (or diagnostic sessions) holds them. */
static int lease_waiting(struct run *r, struct bg_ctx *ctx)
{
	const struct bg_run_request *req = r->req;
	double start = now_seconds();
	bool said = false;
	int rc;

	for (;;) {
		rc = bg_lease_acquire(r->cfg, r->computer_slug, "(starting)", r->lease, ctx);
		if (rc != BG_EPRECOND || req->wait <= 0)
			return rc;
		if (req->interrupted && *req->interrupted)
			return bg_error(ctx, BG_EIO, "interrupted while waiting for the lease; nothing was started");
		if (now_seconds() - start >= req->wait) {
			char *msg = bg_xstrdup(bg_ctx_message(ctx));
			bg_error(ctx, rc, "%s; gave up after waiting %g s (--wait)", msg, req->wait);
			free(msg);
			return rc;
		}
		if (!said && req->waiting) {
			req->waiting(bg_ctx_message(ctx), req->waiting_data);
			said = true;
		}
		usleep(250000); /* a signal ends it early: the flag is looked at first */
	}
}

/*
 * A preflight step that failed while a stop signal came: it failed for
 * the signal (a Ctrl-C reaches git, run in benchgate's process group, as
 * it reaches benchgate), so the run was interrupted, not refused.
 */
static int interrupted_instead(const struct bg_run_request *req, int rc, struct bg_ctx *ctx)
{
	if (!req->interrupted || !*req->interrupted)
		return rc;
	return bg_error(ctx, BG_EIO, "interrupted before the experiment started; nothing was recorded");
}

int bg_run_gate(const struct bg_run_request *req, struct bg_run_result *res, struct bg_ctx *ctx)
{
	struct run r;
	struct bg_measure_opts o;
	struct bg_store *store = NULL;
	struct bg_strbuf id = BG_STRBUF_INIT, cap = BG_STRBUF_INIT, capabs = BG_STRBUF_INIT;
	struct bg_runs_row row = {.status = "running", .result = "in progress"};
	struct bg_strbuf setup = BG_STRBUF_INIT, artifact = BG_STRBUF_INIT;
	json_t *session = NULL, *context = NULL;
	char *argv[4];
	bool manifest_written = false;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	r.req = req;
	r.res = res;
	r.cfg = req->cfg;
	r.own_lease.fd = -1;
	r.own_lease.machine_fd = -1;
	r.lease = req->keep_lease ? req->keep_lease : &r.own_lease;
	r.gate_id = jstr(req->gate, "id");
	if (!r.gate_id)
		return bg_error(ctx, BG_EUSAGE, "the gate has no id");
	if (!bg_run_tier_valid(req->tier))
		return bg_error(ctx, BG_EUSAGE, "unknown tier '%s' (scheduled-profile, release-signoff, diagnostic, pr-smoke)",
				req->tier);
	/* the session is stored at the end: a store this user may not write,
	 * or that cannot be opened (damaged, another program's, newer than
	 * this benchgate), stops the run before anything runs, as measure */
	if ((rc = preflight(&r, ctx)) || (rc = session_opts(&r, &o, argv, ctx)) ||
	    (rc = runs_index_writable(r.cfg, ctx)) || (rc = bg_store_check_write(r.cfg->store, r.cfg->root, ctx)) ||
	    (rc = bg_store_open(r.cfg->store, r.cfg->root, BG_STORE_CREATE, &store, ctx))) {
		rc = interrupted_instead(req, rc, ctx);
		goto out;
	}
	bg_store_close(store);
	store = NULL;
	/* a cold state cannot be had on a memory file system, nor from a file
	 * that is not there (nothing of the run makes it before the first
	 * eviction) or holds no data: refused before anything is written */
	for (size_t i = 0; i < r.nevict; i++) {
		if ((rc = bg_measure_evict_target(r.evict[i], ctx))) {
			char *msg;

			if (req->interrupted && *req->interrupted) {
				rc = interrupted_instead(req, rc, ctx);
				goto out;
			}
			msg = bg_xstrdup(bg_ctx_message(ctx));
			bg_error(ctx, rc, "runbook '%s', measure.cache.evict %s", jstr(req->gate, "runbook"), msg);
			free(msg);
			goto out;
		}
	}
	if (req->interrupted && *req->interrupted) {
		rc = interrupted_instead(req, BG_EIO, ctx);
		goto out;
	}
	/* a kept lease serves while it still holds this device's lock and the
	 * machine's: one whose lock file was removed (or another device's)
	 * is taken anew, both locks with it (a later session of --times ran
	 * with no machine lease, and another project's run beside it) */
	if (r.lease->fd >= 0 && (strcmp(r.lease->slug, r.computer_slug) != 0 || !bg_lease_held(r.lease) ||
				 !bg_lease_machine_held(r.lease)))
		bg_lease_release(r.lease);
	if (r.lease->fd < 0) {
		if ((rc = lease_waiting(&r, ctx)))
			goto out;
		res->replaced_stale_lease = r.lease->replaced_stale;
		res->replaced_unreadable_lease = r.lease->replaced_unreadable;
		if (res->replaced_stale_lease || res->replaced_unreadable_lease) {
			const char *e = jstr(r.lease->stale_owner, "experiment_id");

			res->replaced_lease_path = bg_xstrdup(bg_config_relative(r.cfg, r.lease->owner_path));
			res->replaced_lease_experiment = bg_xstrdup(e ? e : "");
		}
	}
	/* what runs killed mid-write left (their temporary files) goes */
	bg_experiment_remove_leftovers(r.cfg, NULL);
	if ((rc = bg_experiment_reserve(r.cfg, r.gate_id, &id, ctx)))
		goto out;
	snprintf(res->experiment_id, sizeof(res->experiment_id), "%s", id.buf);
	bg_lease_set_experiment(r.lease, res->experiment_id);
	bg_strbuf_addf(&r.exp_rel, "%s/%s", r.cfg->experiments, id.buf);
	r.manifest = new_manifest(&r);
	bg_strbuf_addf(&setup, "%s; gate %s; tier %s; %lld warmup(s), %ld run(s)", res->computer ? res->computer : "undetected computer",
		       r.gate_id, req->tier, (long long)o.warmups, o.runs);
	bg_experiment_manifest_link(r.cfg, id.buf, &artifact);
	row.id = id.buf;
	row.hypothesis = r.question;
	row.setup = setup.buf;
	row.artifact = artifact.buf;
	/* the running manifest and its row as a pair, RUNS.md's lock taken
	 * first: a wait for it that ends (a stop signal meanwhile, another
	 * holder for too long) leaves no experiment behind */
	if ((rc = bg_experiment_write_pair(r.cfg, id.buf, r.manifest, &row, &manifest_written, ctx)) && !manifest_written) {
		/* the folder reserved for it goes too (when nothing else is in it):
		 * an experiment without a manifest is no record of anything */
		struct bg_strbuf dir = BG_STRBUF_INIT;
		bg_config_path(r.cfg, &dir, r.exp_rel.buf);
		rmdir(dir.buf);
		bg_strbuf_release(&dir);
		goto out;
	}
	if (rc) {
		/* the manifest says running: it must not outlive this process so */
		char *msg = bg_xstrdup(bg_ctx_message(ctx));
		record_failure(&r, msg, "error.json", NULL, ctx);
		free(msg);
		goto out;
	}
	/* the session */
	bg_strbuf_addf(&cap, "%s/runs", r.exp_rel.buf);
	bg_config_path(r.cfg, &capabs, cap.buf);
	rc = bg_mkdirs(capabs.buf, ctx);
	o.capture_dir = cap.buf;
	/* the folders of declared outputs exist before the first run (that of
	 * a pattern too, where only its last name has wildcards) */
	for (size_t k = 0; k < r.noutputs && !rc; k++) {
		const char *slash = strrchr(r.outputs[k], '/');
		struct bg_strbuf dir = BG_STRBUF_INIT; /* relative: the root is the working directory */

		if (!slash)
			continue;
		bg_strbuf_addn(&dir, r.outputs[k], (size_t)(slash - r.outputs[k]));
		if (!strpbrk(dir.buf, "*?[") && (rc = bg_mkdirs(dir.buf, ctx))) {
			char *msg = bg_xstrdup(bg_ctx_message(ctx));

			bg_error(ctx, rc, "%s: the folder of the runbook's declared output '%s' cannot be made; make it "
					  "(or what it leads to) a folder benchgate can write",
				 msg, r.outputs[k]);
			free(msg);
		}
		bg_strbuf_release(&dir);
	}
	if (rc) {
		/* the manifest says running: recorded failed, never left so */
		char *msg = bg_xstrdup(bg_ctx_message(ctx));

		record_failure(&r, msg, "error.json", NULL, ctx);
		free(msg);
		goto out;
	}
	rc = bg_measure_session(&o, &session, ctx);
	if (!rc && ((req->interrupted && *req->interrupted) ||
		    (jstr(session, "status") && strcmp(jstr(session, "status"), "interrupted") == 0)))
		rc = BG_EIO;
	if (rc) {
		if (req->interrupted && *req->interrupted) {
			rc = bg_error(ctx, BG_EIO, "interrupted; the lease is released");
			if (record_failure(&r, "interrupted", "interrupted.json", NULL, ctx) == BG_OK)
				bg_error(ctx, BG_EIO, "interrupted: experiment %s recorded as failed (interrupted); the lease is released",
					 id.buf);
		} else {
			char *msg = bg_xstrdup(bg_ctx_message(ctx));
			record_failure(&r, msg, "error.json", NULL, ctx);
			free(msg);
		}
		goto out;
	}
	adopt_session_source(&r, session);
	context = context_of(&r);
	json_object_set_new(session, "kind", json_string(strcmp(req->tier, "diagnostic") == 0 ? "diagnostic" : "gate"));
	json_object_set_new(session, "experiment_id", json_string(id.buf));
	json_object_set_new(session, "gate_id", json_string(r.gate_id));
	json_object_set_new(session, "tier", json_string(req->tier));
	json_object_set_new(session, "computer", res->computer ? json_string(res->computer) : json_null());
	json_object_set(session, "context", context);
	json_object_set_new(session, "question", json_string(r.question));
	/* held throughout: the device's lease and the machine's */
	json_object_set_new(session, "lease", json_pack("{s:s, s:b, s:b}", "device", r.computer_slug, "held_throughout",
							bg_lease_held(r.lease) && bg_lease_machine_held(r.lease),
							"machine_held_throughout", bg_lease_machine_held(r.lease)));
	if ((rc = bg_store_open(r.cfg->store, r.cfg->root, BG_STORE_CREATE, &store, ctx)) ||
	    (rc = decide_and_store(&r, store, session, context, ctx))) {
		char *msg = bg_xstrdup(bg_ctx_message(ctx));
		if (record_failure(&r, msg, "error.json", session, ctx) == BG_OK)
			bg_error(ctx, rc, "%s; what was measured is kept in %s/error.json (\"session\"), not stored",
				 msg, r.exp_rel.buf);
		free(msg);
		goto out;
	}
	json_object_set_new(session, "id", json_integer(res->session_id));
	rc = finish(&r, session, ctx);
	res->session = session;
	session = NULL;
out:
	/* a kept lease stays held for the caller's next run, unless this one failed */
	if (r.lease != req->keep_lease || rc != BG_OK)
		bg_lease_release(r.lease);
	if (store)
		bg_store_close(store);
	json_decref(session);
	json_decref(context);
	json_decref(r.provenance);
	json_decref(r.manifest);
	json_decref(r.measure);
	json_decref(r.inputs);
	free(r.input_st);
	free(r.outputs);
	free(r.evict);
	free(r.git_exclude);
	for (size_t k = 0; k < r.nowned_exclude; k++)
		free(r.owned_exclude[k]);
	free(r.owned_exclude);
	bg_strbuf_release(&r.command);
	bg_strbuf_release(&r.question_text);
	bg_strbuf_release(&r.exp_rel);
	bg_strbuf_release(&id);
	bg_strbuf_release(&cap);
	bg_strbuf_release(&capabs);
	bg_strbuf_release(&setup);
	bg_strbuf_release(&artifact);
	return rc;
}
