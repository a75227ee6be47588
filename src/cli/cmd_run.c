/*
 * cmd_run.c - `benchgate run GATE`: one experiment of the lifecycle (see
 * include/benchgate/run.h). Exit 0 when the session counts (pass, no
 * baseline, investigate), 1 when it is blocked, 2 usage, 3 a refused
 * preflight, 4 an interruption or an I/O failure. An investigate decision is
 * repeated twice on the same key (all sessions kept) unless --no-repeat;
 * --times N runs N sessions in a row instead (none of them repeated). A
 * session that blocked makes the exit 1 whatever its place; a stop between
 * sessions is exit 4. The device lease is held from the first session to
 * the last (one lease kept across bg_run_gate calls), so no other run takes
 * the device between them. A reader that goes away (`run --times 5 | head
 * -1`) stops the run after the session it is in, the device released,
 * exit 4 without a word (SIGPIPE is ignored, main.c, so that run is not
 * killed holding the lease).
 */
#include "cli/cli.h"
#include "cli/measure_print.h"
#include "cli/verdict_print.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/run.h"
#include "benchgate/value.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_TIER = 1, O_QUESTION, O_WARMUPS, O_RUNS, O_TIMEOUT, O_QUIET, O_JSON, O_NO_REPEAT, O_TIMES, O_WAIT };

/* The most sessions one --times asks for. */
#define MAX_TIMES 1000

struct run_args {
	const char *tier, *question;
	long long warmups, runs, times;
	double timeout, wait;
	bool quiet, json, no_repeat;
};

static volatile sig_atomic_t interrupted;

static const char *on_opt(int id, const char *value, void *data)
{
	struct run_args *a = data;

	switch (id) {
	case O_TIER:
		if (!bg_run_tier_valid(value)) {
			static char msg[256]; /* the message returned, naming the value */
			snprintf(msg, sizeof(msg),
				 "invalid choice for '--tier': '%.60s' (choose from 'scheduled-profile', 'release-signoff', "
				 "'diagnostic', 'pr-smoke')", value);
			return msg;
		}
		a->tier = value;
		return NULL;
	case O_QUESTION: {
		/* it goes into the manifest, the session and a RUNS.md row: one
		 * line of UTF-8 text (tabs are spaces there; a blank one is the
		 * lifecycle's to refuse: a gate needs a falsifiable question) */
		static char msg[160];
		char *spaced = bg_xstrdup(value);
		const char *problem;

		for (char *c = spaced; *c; c++)
			if (*c == '\t')
				*c = ' ';
		problem = bg_format_line_problem(spaced);
		free(spaced);
		a->question = value;
		if (!*value)
			return "--question needs a text (leave it out to use the runbook's question)";
		if (!problem || strcmp(problem, BG_FORMAT_BLANK) == 0)
			return NULL;
		if (strncmp(problem, "it holds a control character (", 30) == 0)
			problem = "it holds a control character (a newline, an escape or another; a tab is allowed)";
		snprintf(msg, sizeof(msg), "--question must be one line of text: %s", problem);
		return msg;
	}
	case O_WARMUPS:
		return bg_cli_parse_int(value, &a->warmups) && a->warmups >= 0 && a->warmups <= BG_COUNT_MAX
			       ? NULL
			       : "--warmups needs a count from 0 to " BG_COUNT_MAX_TEXT;
	case O_RUNS:
		return bg_cli_parse_int(value, &a->runs) && a->runs >= 1 && a->runs <= BG_COUNT_MAX
			       ? NULL
			       : "--runs needs a count from 1 to " BG_COUNT_MAX_TEXT;
	case O_TIMEOUT:
		return bg_cli_parse_seconds(value, &a->timeout)
			       ? NULL
			       : "--timeout needs a positive number of seconds, at most " BG_TIMEOUT_MAX_TEXT;
	case O_QUIET:
		a->quiet = true;
		return NULL;
	case O_JSON:
		a->json = true;
		return NULL;
	case O_NO_REPEAT:
		a->no_repeat = true;
		return NULL;
	case O_TIMES:
		return bg_cli_parse_int(value, &a->times) && a->times >= 1 && a->times <= MAX_TIMES
			       ? NULL
			       : "--times needs a count from 1 to 1000";
	case O_WAIT:
		return bg_cli_parse_seconds(value, &a->wait)
			       ? NULL
			       : "--wait needs a positive number of seconds, at most " BG_TIMEOUT_MAX_TEXT;
	}
	return "unknown option";
}

/*
 * What run reads of the registry, as jansson values: the gate, its runbook,
 * the thresholds, and of every runbook what it declares in measure.outputs
 * (bg_run_request). A NaN, an infinity, an integer beyond 64 bits or a
 * lone surrogate there (Python's json reads them) is refused, naming where
 * it is: a session record cannot hold one.
 */
static int registry_json(const struct bg_registry *reg, const struct bg_value *gate_v, json_t **gate,
			 json_t **runbook, json_t **thresholds, json_t **runbooks, struct bg_ctx *ctx)
{
	struct bg_strbuf what = BG_STRBUF_INIT;
	const char *name;
	struct bg_value *rb;
	int rc = bg_registry_gate_json(reg, gate_v, gate, runbook, ctx);

	if (!rc)
		rc = bg_value_to_json(bg_value_get(reg->root, "thresholds"), "the registry's thresholds", thresholds, ctx);
	if (!rc) {
		/* an entry for a gate the registry does not have (a typo) would be ignored */
		size_t i;
		json_t *t;

		json_array_foreach(*thresholds, i, t) {
			const char *g = json_string_value(json_object_get(t, "gate"));
			struct bg_strbuf near = BG_STRBUF_INIT;

			if (rc || !g || bg_registry_find_gate(reg, g))
				continue;
			bg_cli_add_near_gate(&near, reg, g);
			rc = bg_error(ctx, BG_EPRECOND,
				      "the registry's thresholds[%zu].gate '%s' names no gate of the registry%s, and the "
				      "entry would be ignored; name a gate 'benchgate list' shows",
				      i, g, near.buf);
			bg_strbuf_release(&near);
		}
	}
	*runbooks = json_object();
	BG_VALUE_OBJECT_FOREACH(reg->runbooks, name, rb) {
		const struct bg_value *outputs = bg_value_get(bg_value_get(rb, "measure"), "outputs");
		json_t *copy;
		if (rc || !outputs)
			continue;
		bg_strbuf_reset(&what);
		bg_strbuf_addf(&what, "runbook '%s': measure.outputs", name);
		if (!(rc = bg_value_to_json(outputs, what.buf, &copy, ctx)))
			json_object_set_new(*runbooks, name, json_pack("{s:{s:o}}", "measure", "outputs", copy));
	}
	bg_strbuf_release(&what);
	return rc;
}

/* Said once when run starts to wait for a leased device or machine. */
static void say_waiting(const char *why, void *data)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_strbuf_addf(&sb, "benchgate: waiting up to %g s (--wait): ", *(const double *)data);
	bg_cli_add_shown(&sb, why);
	bg_strbuf_addch(&sb, '\n');
	bg_cli_write(&sb, true);
	bg_strbuf_release(&sb);
}

static void print_outcome(const struct bg_config *cfg, const struct bg_run_result *res, struct bg_strbuf *out)
{
	const json_t *s = res->session, *d = res->decision, *reasons = json_object_get(d, "reasons"), *x;
	size_t i;

	bg_strbuf_addf(out, "experiment %s, session %lld", res->experiment_id, res->session_id);
	if (res->computer) {
		bg_strbuf_adds(out, " on ");
		bg_cli_add_shown(out, res->computer);
	}
	bg_strbuf_adds(out, "\n");
	if (s)
		bg_mp_summary(out, s);
	bg_strbuf_addf(out, "decision: %s\n", json_string_value(json_object_get(d, "decision")));
	/* a block reason holds file names, metric names, a program's words */
	json_array_foreach(reasons, i, x) {
		bg_strbuf_adds(out, "  ");
		bg_cli_add_shown(out, json_string_value(x));
		bg_strbuf_adds(out, "\n");
	}
	bg_vp_conditions(out, d);
	bg_mp_failed_stderr(out, s, 0, cfg); /* this run's own capture */
	/* the experiments folder benchgate.json names (profile.experiments) */
	bg_strbuf_addf(out, "key: %.16s  manifest: %s/%s/manifest.json\n", res->key_id, cfg->experiments,
		       res->experiment_id);
}

static int run(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {
		{"tier", 0, BG_OPT_VALUE, O_TIER, false},
		{"question", 0, BG_OPT_VALUE, O_QUESTION, false},
		{"warmups", 'w', BG_OPT_VALUE, O_WARMUPS, false},
		{"runs", 'r', BG_OPT_VALUE, O_RUNS, false},
		{"timeout", 0, BG_OPT_VALUE, O_TIMEOUT, false},
		{"quiet", 'q', BG_OPT_FLAG, O_QUIET, false},
		{"json", 0, BG_OPT_FLAG, O_JSON, false},
		{"no-repeat", 0, BG_OPT_FLAG, O_NO_REPEAT, false},
		{"times", 0, BG_OPT_VALUE, O_TIMES, false},
		{"wait", 0, BG_OPT_VALUE, O_WAIT, false},
		{0},
	};
	struct run_args a = {.tier = "scheduled-profile", .warmups = -1, .runs = -1, .times = 1, .timeout = -1};
	struct bg_config cfg;
	struct bg_registry reg;
	struct bg_problems problems = {0};
	struct bg_registry_counts counts;
	struct bg_parsed parsed;
	struct bg_run_request q;
	struct bg_mp_progress_state ps = {false, false, NULL, 0};
	struct bg_cli_stop stop;
	struct bg_strbuf out = BG_STRBUF_INIT, profile_path = BG_STRBUF_INIT;
	struct bg_value *gate_v;
	json_t *gate = NULL, *runbook = NULL, *runbooks = NULL, *thresholds = NULL, *profile = NULL, *key_fields = NULL;
	json_t *all;
	struct bg_ctx ctx;
	struct bg_lease lease; /* held from the first session to the last repeat */
	int rc, wrote = BG_OK, attempts = 1;
	bool blocked = false;

	memset(&lease, 0, sizeof(lease));
	lease.fd = -1;
	lease.machine_fd = -1;

	if ((rc = bg_cli_parse(cli, self, opts, 1, false, on_opt, &a, &parsed)))
		return rc;
	if (parsed.npos != 1)
		return bg_cli_usage_error(self, "the following arguments are required: GATE");
	if ((rc = bg_cli_load_registry(cli, &cfg, &reg)))
		return rc;
	all = json_array(); /* every session's outcome, for --json */
	bg_ctx_init(&ctx);
	if (chdir(cfg.root) != 0) {
		rc = bg_cli_fail(BG_EIO, "cannot enter the project root");
		goto out;
	}
	gate_v = bg_registry_find_gate(&reg, parsed.pos[0]);
	if (!gate_v) {
		struct bg_strbuf near = BG_STRBUF_INIT;

		bg_cli_add_near_gate(&near, &reg, parsed.pos[0]);
		rc = bg_error(&ctx, BG_EUSAGE, "unknown gate '%s'%s; see 'benchgate list'", parsed.pos[0], near.buf);
		bg_strbuf_release(&near);
		bg_cli_fail_ctx(rc, &ctx);
		goto out;
	}
	if ((rc = bg_registry_validate(&reg, true, &problems, &counts, &ctx))) {
		bg_cli_fail_ctx(rc, &ctx);
		goto out;
	}
	if ((rc = registry_json(&reg, gate_v, &gate, &runbook, &thresholds, &runbooks, &ctx)) ||
	    (rc = bg_value_to_json(bg_value_get(cfg.raw, "key_fields"), "key_fields", &key_fields, &ctx))) {
		bg_cli_fail_ctx(rc, &ctx);
		goto out;
	}
	if (!runbook)
		runbook = json_object();
	bg_config_path(&cfg, &profile_path, cfg.profile_path);
	/* the comparison key comes from it: a file that does not parse is refused, never skipped */
	if (bg_is_file(profile_path.buf) &&
	    (rc = bg_json_load_file(profile_path.buf, cfg.profile_path, &profile, &ctx))) {
		if (rc == BG_ECHECK) /* unreadable stays exit 4 */
			rc = bg_error(&ctx, BG_EPRECOND, "%s; 'run' takes the comparison key from it: fix it and run again",
				      bg_ctx_message(&ctx));
		bg_cli_fail_ctx(rc, &ctx);
		goto out;
	}
	memset(&q, 0, sizeof(q));
	q.cfg = &cfg;
	q.gate = gate;
	q.runbook = runbook;
	q.runbooks = runbooks;
	q.protocol_version = bg_value_str(bg_value_get(reg.root, "protocol_version"));
	q.thresholds = thresholds;
	q.profile = profile;
	q.key_fields = key_fields;
	q.registry_problems = problems.n;
	q.tier = a.tier;
	q.question = a.question;
	q.warmups = (long)a.warmups;
	q.runs = (long)a.runs;
	q.timeout = a.timeout;
	q.bg_argv = cli->argv;
	q.bg_argc = cli->argc;
	q.interrupted = &interrupted;
	q.keep_lease = &lease;
	q.wait = a.wait;
	q.waiting = say_waiting;
	q.waiting_data = &a.wait;
	if (!a.quiet && !a.json && isatty(2)) {
		const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
		ps.color = !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
		q.progress = bg_mp_progress;
		q.progress_data = &ps;
	}
	bg_cli_catch_stop(&interrupted, &stop);
	bg_cli_catch_suspend(&stop);
	/* --times N sessions, or one and, on investigate, its two repeats; the
	 * device is held from the first to the last */
	attempts = (int)a.times;
	rc = BG_OK;
	for (int i = 0; i < attempts; i++) {
		struct bg_run_result res;
		const char *decision;
		int one;

		if ((one = bg_run_gate(&q, &res, &ctx))) {
			if (interrupted && i > 0) /* the sessions before it stand */
				bg_error(&ctx, one, "%s (session %d of %d); the sessions made are stored",
					 bg_ctx_message(&ctx), i + 1, attempts);
			bg_cli_fail_ctx(one, &ctx);
			bg_ctx_init(&ctx);
			bg_run_result_release(&res);
			rc = one;
			break;
		}
		/* (an owner that died before naming its experiment holds a
		 * placeholder, "(starting)": no experiment to abandon) */
		if (res.replaced_stale_lease && *res.replaced_lease_experiment && *res.replaced_lease_experiment != '(')
			fprintf(stderr, "benchgate: %s: replaced a lease left by a process that is gone, which ran experiment %s; if that experiment still says running, abandon it ('benchgate experiments abandon %s --why TEXT')\n",
				res.replaced_lease_path, res.replaced_lease_experiment, res.replaced_lease_experiment);
		else if (res.replaced_stale_lease)
			fprintf(stderr, "benchgate: %s: replaced a lease left by a process that is gone\n", res.replaced_lease_path);
		if (res.replaced_unreadable_lease)
			fprintf(stderr, "benchgate: %s: replaced an unreadable owner record of the device lease\n",
				res.replaced_lease_path);
		decision = json_string_value(json_object_get(res.decision, "decision"));
		if (a.json) {
			json_t *o = json_pack("{s:s, s:I, s:s, s:O, s:O}", "experiment_id", res.experiment_id, "session_id",
					      (json_int_t)res.session_id, "key_id", res.key_id, "decision", res.decision,
					      "session", res.session);
			json_array_append_new(all, o);
		} else {
			if (a.times > 1)
				bg_strbuf_addf(&out, "%ssession %d of %d:\n", i ? "\n" : "", i + 1, attempts);
			else if (i > 0)
				bg_strbuf_addf(&out, "\nrepeat %d of 2:\n", i);
			print_outcome(&cfg, &res, &out);
			wrote = bg_cli_write(&out, false);
			bg_strbuf_reset(&out);
		}
		/* a session that blocked makes the exit 1, whichever comes after it */
		if (decision && strcmp(decision, "block") == 0)
			blocked = true;
		if (i == 0 && a.times == 1 && decision && strcmp(decision, "investigate") == 0 && !a.no_repeat) {
			attempts = 3;
			if (!a.json)
				fprintf(stderr, "benchgate: investigate: repeating the session twice on the same key\n");
		}
		bg_run_result_release(&res);
		if (wrote != BG_OK) { /* said, unless the reader left */
			rc = wrote;
			break;
		}
		if (interrupted && i + 1 < attempts) {
			bg_strbuf_addf(&out, "interrupted after session %d of %d; the sessions made are stored", i + 1,
				       attempts);
			rc = bg_cli_fail(BG_EIO, out.buf);
			bg_strbuf_reset(&out);
			break;
		}
	}
	if (rc == BG_OK && blocked)
		rc = BG_ECHECK;
	bg_lease_release(&lease);
	bg_cli_release_stop(&stop);
	if (a.json && json_array_size(all)) {
		bg_json_dump_py(&out, json_array_size(all) == 1 ? json_array_get(all, 0) : all, 2, true);
		bg_strbuf_addch(&out, '\n');
		if (bg_cli_write(&out, false) != BG_OK && rc == BG_OK)
			rc = BG_EIO;
	}
out:
	json_decref(all);
	json_decref(gate);
	json_decref(runbook);
	json_decref(thresholds);
	json_decref(runbooks);
	json_decref(profile);
	json_decref(key_fields);
	bg_strbuf_release(&out);
	bg_strbuf_release(&profile_path);
	bg_problems_release(&problems);
	bg_ctx_release(&ctx);
	bg_registry_release(&reg);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_run = {
	"run",
	"run one gate's experiment: preflight, lease, measured session, decision, records",
	"benchgate run GATE [--tier TIER] [--question TEXT] [-w N] [-r N] [--timeout S] [--no-repeat] [--times N] [--wait S] [--json] [-q]",
	"  --tier TIER        scheduled-profile (default), release-signoff, diagnostic, pr-smoke\n"
	"  --question TEXT    the falsifiable question (default: the runbook's \"question\")\n"
	"  -w, --warmups N    override the runbook's warmups\n"
	"  -r, --runs N       override the runbook's repetitions\n"
	"  --timeout S        override the runbook's per-run timeout\n"
	"  --no-repeat        do not repeat an investigate decision twice\n"
	"  --times N          N sessions in a row, the device held throughout (1 to 1000;\n"
	"                     none of them is repeated)\n"
	"  --wait S           while the device or the machine is leased (another run,\n"
	"                     diagnostic sessions), wait up to S seconds for it\n"
	"                     instead of refusing (exit 3 after S)\n"
	"  --json             print the outcome as JSON\n"
	"  -q, --quiet        no progress line\n",
	run,
	NULL,
	false,
};
