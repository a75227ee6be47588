/*
 * cmd_repeat.c - `benchgate repeat SESSION`: runs two more sessions of the
 * same gate, tier and question (what an investigate decision asks for) and
 * keeps all three. It executes this same program (/proc/self/exe) once as
 * `benchgate -C ROOT [--config FILE] run GATE --tier TIER --times 2
 * --question Q [-w N] [-r N] [--timeout S] [--wait S]` (the warmups,
 * repetitions and timeout the session ran with; --wait as given), so the two sessions take the device lease
 * once and hold it from the first to the second, write their experiments
 * and store their sessions and decisions exactly as a run started by hand;
 * its output passes through. Then it lists the three sessions with their
 * decisions.
 * Exit: 0 when both sessions finished unblocked; 1 when one was blocked
 * (both still run); the run's own status 2, 3 or 4 is returned, and its 1
 * when it stored fewer than two sessions (said so, nothing listed);
 * 1 for a session that is not a gate session; 2 usage.
 */
#include "cli/cli.h"
#include "cli/verdict_print.h"
#include "benchgate/format.h"
#include "benchgate/lifecycle.h"
#include "benchgate/measure.h"
#include "benchgate/value.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --wait S: passed on to the run, as given once it is a valid number */
static const char *on_opt(int id, const char *v, void *data)
{
	double s;

	(void)id;
	if (!bg_cli_parse_seconds(v, &s))
		return "--wait needs a positive number of seconds, at most " BG_TIMEOUT_MAX_TEXT;
	*(const char **)data = v;
	return NULL;
}

static volatile sig_atomic_t interrupted;

/*
 * The first two sessions of gate after id after that the run child (its
 * pid, on this host) stored, into ids: its experiments' manifests name
 * it. Another run of the gate may store sessions meanwhile (one waited
 * for with --wait, another checkout sharing the store): they are not
 * this repeat's. *n receives how many were found.
 */
static int own_sessions_after(const struct bg_config *cfg, struct bg_store *store, const char *gate, long long after,
			      pid_t child, long long *ids, size_t *n, struct bg_ctx *ctx)
{
	enum { LOOK = 64 }; /* the gate's sessions after it looked at */
	long long cand[LOOK];
	size_t got = 0;
	struct bg_strbuf host = BG_STRBUF_INIT;
	int rc;

	*n = 0;
	if ((rc = bg_store_gate_sessions_after(store, gate, after, cand, LOOK, &got, ctx)))
		return rc;
	bg_lifecycle_hostname(&host);
	for (size_t i = 0; i < got && *n < 2; i++) {
		json_t *v = NULL, *m = NULL, *ex;
		struct bg_ctx c;
		const char *exp;

		bg_ctx_init(&c);
		if (bg_store_verdict(store, cand[i], &v, &c) == BG_OK &&
		    (exp = json_string_value(json_object_get(v, "experiment_id"))) &&
		    bg_experiment_read_manifest_view(cfg, exp, &m, &c) == BG_OK) {
			ex = json_object_get(m, "execution");
			if (json_integer_value(json_object_get(ex, "pid")) == (json_int_t)child &&
			    json_is_string(json_object_get(ex, "host")) &&
			    strcmp(json_string_value(json_object_get(ex, "host")), host.buf) == 0)
				ids[(*n)++] = cand[i];
		}
		json_decref(v);
		json_decref(m);
		bg_ctx_release(&c);
	}
	bg_strbuf_release(&host);
	return BG_OK;
}

/*
 * Runs argv (argv[0] is /proc/self/exe) and returns its exit status, or 4.
 * A SIGINT, SIGTERM, SIGQUIT or SIGHUP meanwhile is passed on to it (as SIGTERM: it
 * records its experiment as interrupted), and this process waits for it;
 * a death it cannot catch (SIGKILL) is passed on by the kernel, as
 * SIGTERM (PR_SET_PDEATHSIG).
 * When it stops (it suspends itself on Ctrl-Z: bg_measure_suspend), this
 * process stops too, so that the shell sees the job stopped, and goes on
 * with it when continued.
 */
static int run_child(char **argv, pid_t *child)
{
	bool passed_on = false;
	pid_t pid, parent;
	int status, err;

	fflush(stdout);
	fflush(stderr);
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		/* this process gone (SIGKILL), the run stops as on a
		 * SIGTERM: its experiment recorded, its leases released */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(BG_EIO);
		execv("/proc/self/exe", argv);
		err = errno;
		fprintf(stderr, "benchgate: cannot start '/proc/self/exe run': %s\n", strerror(err));
		_exit(BG_EIO);
	}
	if (pid < 0) {
		fprintf(stderr, "benchgate: cannot start '/proc/self/exe run': %s\n", strerror(errno));
		return BG_EIO;
	}
	*child = pid;
	for (;;) {
		if (waitpid(pid, &status, WUNTRACED) == pid) {
			if (!WIFSTOPPED(status))
				break;
			kill(getpid(), SIGSTOP);
			kill(pid, SIGCONT);
			continue;
		}
		if (errno != EINTR)
			return BG_EIO;
		if (interrupted && !passed_on) {
			kill(pid, SIGTERM);
			passed_on = true;
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	{
		struct bg_strbuf sig = BG_STRBUF_INIT;

		bg_format_signal(&sig, WTERMSIG(status));
		fprintf(stderr, "benchgate: 'run' was killed by signal %s\n", sig.buf);
		bg_strbuf_release(&sig);
	}
	return BG_EIO;
}

/*
 * The child run's --config word into arg: "--config=PATH" of the file
 * cfg was read from, or, when that cannot be read again (a pipe, as
 * --config <(...) gives), of a copy of what was read, made in $TMPDIR
 * (*copy: its path, malloc'd, for the caller to remove and free).
 */
static int config_copy(const struct bg_config *cfg, char *arg, size_t size, char **copy, struct bg_ctx *ctx)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct stat st;
	const char *dir = getenv("TMPDIR");
	int rc = BG_OK, fd;

	bg_config_path(cfg, &path, cfg->config_path);
	if (stat(path.buf, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(arg, size, "--config=%s", cfg->config_path);
		bg_strbuf_release(&path);
		return BG_OK;
	}
	bg_strbuf_reset(&path);
	bg_strbuf_addf(&path, "%s/benchgate-config-XXXXXX.json", dir && *dir ? dir : "/tmp");
	bg_value_dump(&text, cfg->raw, 2, false);
	bg_strbuf_addch(&text, '\n');
	fd = mkstemps(path.buf, 5);
	if (fd >= 0) {
		bool whole = write(fd, text.buf, text.len) == (ssize_t)text.len;
		int e = errno;

		if (close(fd) != 0 && whole) {
			whole = false;
			e = errno;
		}
		errno = e;
		if (!whole) {
			unlink(path.buf);
			fd = -1;
		}
	}
	if (fd < 0) {
		rc = bg_error(ctx, BG_EIO, "'%s': cannot write a copy of the configuration for the runs, read from '%s' "
				 "(a pipe cannot be read twice): %s; set TMPDIR to a folder that can be written",
			      path.buf, cfg->config_path, strerror(errno));
	} else {
		snprintf(arg, size, "--config=%s", path.buf);
		*copy = bg_strbuf_detach(&path, NULL);
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	return rc;
}

static int run_repeat(struct bg_cli *cli, const struct bg_cmd *self)
{
	static const struct bg_opt opts[] = {{"wait", 0, BG_OPT_VALUE, 1, false}, {0}};
	const char *wait = NULL;
	struct bg_config cfg;
	struct bg_store *store = NULL;
	/* g, t: the gate and tier as a terminal shows them (cli.h) */
	struct bg_strbuf sb = BG_STRBUF_INIT, g = BG_STRBUF_INIT, t = BG_STRBUF_INIT, qarg = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *doc = NULL;
	const json_t *measure;
	const char *gate, *tier, *question;
	long long id, ids[3] = {0, 0, 0};
	struct bg_cli_stop stop;
	bool caught = false;
	char *tmp_config = NULL; /* a copy of a --config read from a pipe */
	int rc, worst = 0;

	if ((rc = bg_vp_parse_session(cli, self, opts, on_opt, &wait, &id)))
		return rc;
	if ((rc = bg_vp_open(cli, &cfg, BG_STORE_READ, &store)))
		return rc;
	bg_ctx_init(&ctx);
	if ((rc = bg_store_get_session(store, id, &doc, &ctx))) {
		bg_cli_fail(rc, bg_ctx_message(&ctx));
		goto out;
	}
	gate = json_string_value(json_object_get(doc, "gate_id"));
	tier = json_string_value(json_object_get(doc, "tier"));
	question = json_string_value(json_object_get(doc, "question"));
	if (!question)
		question = json_string_value(json_object_get(json_object_get(doc, "context"), "question"));
	if (!question && json_string_value(json_object_get(doc, "experiment_id"))) {
		/* run keeps the question in the experiment's manifest */
		json_t *m = NULL;

		if (bg_experiment_read_manifest_view(&cfg, json_string_value(json_object_get(doc, "experiment_id")), &m,
						&ctx) == BG_OK && json_string_value(json_object_get(m, "question")))
			json_object_set(doc, "question", json_object_get(m, "question"));
		json_decref(m);
		question = json_string_value(json_object_get(doc, "question"));
	}
	if (!gate || !tier) {
		bg_strbuf_addf(&sb, "session %lld is not a gate session (a diagnostic 'benchgate measure' "
			       "session); repeat runs gates: 'benchgate run GATE'", id);
		rc = bg_cli_fail(BG_ECHECK, sb.buf);
		goto out;
	}
	bg_cli_add_shown(&g, gate);
	bg_cli_add_shown(&t, tier);
	bg_store_close(store);
	store = NULL;
	ids[0] = id;
	bg_cli_catch_stop(&interrupted, &stop);
	caught = true;
	measure = json_object_get(json_object_get(doc, "context"), "measure");
	{
		char *argv[24], warmups[32], runs[32], timeout[40], cfgarg[PATH_MAX + 16];
		long long before = 0;
		pid_t child = 0;
		size_t got = 0;
		int n = 0, st;

		argv[n++] = (char *)"benchgate";
		argv[n++] = (char *)"-C";
		argv[n++] = cfg.root;
		if (cli->config_file && cfg.config_path) {
			/* as the root names it: the child reads it from -C ROOT, one
			 * word (a name that starts with '-'); one read from a pipe
			 * (--config <(...)) cannot be read again: a copy of what was
			 * read, removed after */
			if (config_copy(&cfg, cfgarg, sizeof(cfgarg), &tmp_config, &ctx)) {
				rc = bg_cli_fail(BG_EIO, bg_ctx_message(&ctx));
				goto out;
			}
			argv[n++] = cfgarg;
		}
		argv[n++] = (char *)"run";
		argv[n++] = (char *)gate;
		argv[n++] = (char *)"--tier";
		argv[n++] = (char *)tier;
		/* two sessions in one run, the device held across both, neither
		 * repeated again: repeat is itself the two more runs */
		argv[n++] = (char *)"--times";
		argv[n++] = (char *)"2";
		if (question) {
			/* one word: a question that starts with '-' is not an option */
			bg_strbuf_addf(&qarg, "--question=%s", question);
			argv[n++] = qarg.buf;
		}
		/* what the session ran with (its -w, -r and --timeout included), so
		 * that the repeats land on the same key */
		if (json_is_integer(json_object_get(measure, "warmups"))) {
			snprintf(warmups, sizeof(warmups), "%lld", (long long)json_integer_value(json_object_get(measure, "warmups")));
			argv[n++] = (char *)"-w";
			argv[n++] = warmups;
		}
		if (json_is_integer(json_object_get(measure, "repetitions"))) {
			snprintf(runs, sizeof(runs), "%lld", (long long)json_integer_value(json_object_get(measure, "repetitions")));
			argv[n++] = (char *)"-r";
			argv[n++] = runs;
		}
		if (json_is_number(json_object_get(measure, "timeout_seconds"))) {
			snprintf(timeout, sizeof(timeout), "%.17g", json_number_value(json_object_get(measure, "timeout_seconds")));
			argv[n++] = (char *)"--timeout";
			argv[n++] = timeout;
		}
		if (wait) {
			argv[n++] = (char *)"--wait";
			argv[n++] = (char *)wait;
		}
		argv[n] = NULL;
		/* the gate's newest session now: the two after it are the repeats */
		if ((rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx)) || !store ||
		    (rc = bg_store_last_of_gate(store, gate, &before, &ctx))) {
			rc = bg_cli_fail(rc ? rc : BG_EIO, rc ? bg_ctx_message(&ctx) : "the store disappeared");
			goto out;
		}
		/* the store is reopened by the run; close ours meanwhile */
		bg_store_close(store);
		store = NULL;
		fprintf(stderr, "benchgate repeat: two more sessions of gate %s (tier %s)\n", g.buf, t.buf);
		st = run_child(argv, &child);
		if (st == BG_EIO && bg_cli_stdout_reader_gone()) {
			/* the run stopped because the reader left (cmd_run.c): nothing to say to anyone */
			rc = st;
			goto out;
		}
		if (st >= 2) {
			bg_strbuf_reset(&sb);
			bg_strbuf_addf(&sb, "repeat of session %lld stopped: 'benchgate run %s' exited with status %d",
				       id, g.buf, st);
			rc = bg_cli_fail(st, sb.buf);
			goto out;
		}
		worst = st;
		/* the two sessions after it (the gate's index, not its history) */
		if ((rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx)) || !store ||
		    (rc = own_sessions_after(&cfg, store, gate, before, child, ids + 1, &got, &ctx))) {
			rc = bg_cli_fail(rc ? rc : BG_EIO, rc ? bg_ctx_message(&ctx) : "the store disappeared");
			goto out;
		}
		bg_store_close(store);
		store = NULL;
		/* a run that stopped before its sessions (exit 1 for a malformed
		 * registry) is no repeat whose session blocked */
		if (got < 2) {
			bg_strbuf_reset(&sb);
			bg_strbuf_addf(&sb, "repeat of session %lld stopped: 'benchgate run %s' exited with status %d "
				       "having stored %zu of the two sessions; its message above says why",
				       id, g.buf, st, got);
			rc = bg_cli_fail(st ? st : BG_EIO, sb.buf);
			goto out;
		}
	}
	if ((rc = bg_store_open(cfg.store, cfg.root, BG_STORE_READ, &store, &ctx)) || !store) {
		rc = bg_cli_fail(rc ? rc : BG_EIO, rc ? bg_ctx_message(&ctx) : "the store disappeared");
		goto out;
	}
	bg_strbuf_reset(&sb);
	bg_strbuf_addf(&sb, "gate %s, tier %s: the three sessions are kept\n", g.buf, t.buf);
	for (int k = 0; k < 3; k++) {
		json_t *v = NULL;

		if (bg_store_verdict(store, ids[k], &v, &ctx) == BG_OK) {
			const char *d = json_string_value(json_object_get(v, "decision"));
			bg_strbuf_addf(&sb, "  session %lld: %s, ", ids[k], d ? d : "no decision");
			bg_vp_curation(&sb, v);
			bg_strbuf_addch(&sb, '\n');
		}
		json_decref(v);
	}
	bg_strbuf_addf(&sb, "accept or reject each with 'benchgate accept|reject SESSION --why TEXT'\n");
	rc = bg_cli_write(&sb, false);
	if (worst) /* a block or a failure stands when stdout cannot be written */
		rc = worst;
out:
	if (tmp_config) {
		unlink(tmp_config);
		free(tmp_config);
	}
	if (caught)
		bg_cli_release_stop(&stop);
	json_decref(doc);
	bg_strbuf_release(&sb);
	bg_strbuf_release(&g);
	bg_strbuf_release(&t);
	bg_strbuf_release(&qarg);
	bg_store_close(store);
	bg_ctx_release(&ctx);
	bg_config_release(&cfg);
	return rc;
}

const struct bg_cmd bg_cmd_repeat = {
	"repeat",
	"run a gate session's gate twice more (same tier and question) and keep all three",
	"benchgate repeat SESSION [--wait S]",
	"  --wait S           while the device or the machine is leased, wait up to S\n"
	"                     seconds for it (run --wait) instead of refusing\n",
	run_repeat,
	bg_vp_check_session_pos,
	false,
};
