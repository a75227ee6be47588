/*
 * measure_print.c - text rendering of sessions and runs (see measure_print.h).
 */
#include "cli/measure_print.h"
#include "cli/cli.h"
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/provenance.h"
#include <time.h>
#include <stdio.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void bg_mp_command(struct bg_strbuf *out, const json_t *command)
{
	size_t i;
	json_t *w;

	if (!json_is_array(command)) {
		bg_strbuf_adds(out, "n/a");
		return;
	}
	json_array_foreach(command, i, w) {
		const char *s = json_string_value(w);

		if (i)
			bg_strbuf_addch(out, ' ');
		if (bg_cli_needs_showing(s) || (s && strchr(s, '\''))) {
			/* as the shell's $'...' writes it: a control byte would end
			 * the line or drive the terminal, and '...' cannot hold a ' */
			bg_strbuf_adds(out, "$'");
			for (const char *p = s; *p;) {
				size_t k = bg_cli_control_at(p);

				if (!k && (*p == '\'' || *p == '\\'))
					bg_strbuf_addch(out, '\\');
				if (!k) {
					k = bg_cli_char_at(p);
					bg_strbuf_addn(out, p, k);
					p += k;
					continue;
				}
				for (; k; k--)
					bg_strbuf_addf(out, "\\x%02x", (unsigned char)*p++);
			}
			bg_strbuf_addch(out, '\'');
		} else if (s && (!*s || strpbrk(s, " \t'\"$\\")))
			bg_strbuf_addf(out, "'%s'", s);
		else
			bg_strbuf_adds(out, s ? s : "?");
	}
}

/* One statistic: p50 p95 max (and min, MAD when full), then the count of
 * what it counted ("run", "sample": made plural when not 1). */
static void stat_line(struct bg_strbuf *out, const char *label, const json_t *st, bool bytes,
		      bool full, const char *counted)
{
	void (*fmt)(struct bg_strbuf *, const json_t *) = bytes ? bg_format_bytes : bg_format_duration;

	bg_strbuf_addf(out, "  %-12s", label);
	if (!json_is_object(st)) {
		bg_strbuf_adds(out, "n/a\n");
		return;
	}
	if (full) {
		bg_strbuf_adds(out, "min ");
		fmt(out, json_object_get(st, "min"));
		bg_strbuf_adds(out, "  ");
	}
	bg_strbuf_adds(out, "p50 ");
	fmt(out, json_object_get(st, "p50"));
	bg_strbuf_adds(out, "  p95 ");
	fmt(out, json_object_get(st, "p95"));
	bg_strbuf_adds(out, "  max ");
	fmt(out, json_object_get(st, "max"));
	if (full) {
		bg_strbuf_adds(out, "  MAD ");
		fmt(out, json_object_get(st, "mad"));
	}
	{
		long long n = (long long)json_integer_value(json_object_get(st, "count"));
		bg_strbuf_addf(out, "  (%lld %s%s)\n", n, counted, n == 1 ? "" : "s");
	}
}

/* "  LABEL       runs 1, 4TEXT" for the runs whose flags hold flag; nothing when none do. */
static void runs_flagged(struct bg_strbuf *out, const json_t *doc, const char *flag, const char *label,
			 const char *text)
{
	const json_t *r, *f;
	size_t i, k, n = 0;

	json_array_foreach(json_object_get(doc, "runs"), i, r) {
		bool has = false;

		json_array_foreach(json_object_get(r, "flags"), k, f)
			has = has || (json_is_string(f) && strcmp(json_string_value(f), flag) == 0);
		if (!has)
			continue;
		if (n++ == 0)
			bg_strbuf_addf(out, "  %-12sruns", label);
		bg_strbuf_addf(out, "%s %lld", n > 1 ? "," : "",
			       (long long)json_integer_value(json_object_get(r, "ordinal")));
	}
	if (n)
		bg_strbuf_adds(out, text);
}

/* Each note note_of gives the session, on a line of its own under label. */
static void noted(struct bg_strbuf *out, const json_t *doc, const char *label,
		  void (*note_of)(const json_t *, json_t *))
{
	json_t *notes = json_array(), *n;
	size_t i;

	note_of(doc, notes);
	json_array_foreach(notes, i, n) {
		bg_strbuf_addf(out, "  %-12s", label);
		bg_cli_add_shown(out, json_string_value(n));
		bg_strbuf_addch(out, '\n');
	}
	json_decref(notes);
}

/* The runs flagged flag (runs_flagged), followed by the note note_of
 * gives the session; nothing when it gives none (only warmups flagged). */
static void runs_noted(struct bg_strbuf *out, const json_t *doc, const char *flag, const char *label,
		       void (*note_of)(const json_t *, json_t *))
{
	json_t *notes = json_array();
	struct bg_strbuf text = BG_STRBUF_INIT;

	note_of(doc, notes);
	if (json_is_string(json_array_get(notes, 0))) {
		bg_strbuf_adds(&text, ": ");
		bg_cli_add_shown(&text, json_string_value(json_array_get(notes, 0)));
		bg_strbuf_addch(&text, '\n');
		runs_flagged(out, doc, flag, label, text.buf);
	}
	bg_strbuf_release(&text);
	json_decref(notes);
}

/*
 * Under "peak RSS": when its median is no more than benchgate's own peak at
 * the spawn of a timed run (max_rss_floor_bytes, the largest), which a run
 * inherits until it execs, a line saying the figure is not the program's.
 */
static void rss_floor_note(struct bg_strbuf *out, const json_t *doc)
{
	const json_t *p50 = json_object_get(json_object_get(json_object_get(doc, "statistics"), "max_rss_bytes"), "p50");
	json_t *r, *floor = NULL;
	size_t i;

	json_array_foreach(json_object_get(doc, "runs"), i, r) {
		json_t *f = json_object_get(r, "max_rss_floor_bytes");
		const char *ph = json_string_value(json_object_get(r, "phase"));

		if (ph && strcmp(ph, "timed") == 0 && json_is_integer(f) &&
		    (!floor || json_integer_value(f) > json_integer_value(floor)))
			floor = f;
	}
	if (!json_is_number(p50) || !floor || json_number_value(p50) > (double)json_integer_value(floor))
		return;
	bg_strbuf_adds(out, "              at most benchgate's own peak at spawn (");
	bg_format_bytes(out, floor);
	bg_strbuf_adds(out, "), which a run inherits until it execs: not the program's peak (see tree peak)\n");
}

void bg_mp_summary(struct bg_strbuf *out, const json_t *doc)
{
	const json_t *stats = json_object_get(doc, "statistics"), *counts = json_object_get(doc, "counts");
	const json_t *parity = json_object_get(doc, "parity"), *cache = json_object_get(doc, "cache");
	const json_t *id = json_object_get(doc, "id"), *outl = json_object_get(doc, "outliers");
	const char *status = json_string_value(json_object_get(doc, "status"));
	const char *pres = json_string_value(json_object_get(parity, "result"));
	const char *pkind = json_string_value(json_object_get(parity, "kind"));
	const json_t *det = json_object_get(doc, "deterministic");

	/* every stored text with its controls as \xNN (bg_cli_add_shown): a
	 * store changed outside benchgate may hold anything */
	if (json_is_integer(id))
		bg_strbuf_addf(out, "session %lld: ", (long long)json_integer_value(id));
	else
		bg_strbuf_adds(out, "session: ");
	bg_cli_add_shown(out, status ? status : "?");
	bg_strbuf_addf(out, " (%lld smoke, %lld warmup, %lld timed run%s)\n",
		       (long long)json_integer_value(json_object_get(counts, "smoke")),
		       (long long)json_integer_value(json_object_get(counts, "warmup")),
		       (long long)json_integer_value(json_object_get(counts, "timed")),
		       json_integer_value(json_object_get(counts, "timed")) == 1 ? "" : "s");
	if (json_is_string(json_object_get(doc, "reason"))) {
		bg_strbuf_addf(out, "  %-12s", "reason");
		bg_cli_add_shown(out, json_string_value(json_object_get(doc, "reason")));
		bg_strbuf_addch(out, '\n');
	}
	bg_strbuf_addf(out, "  %-12s", "command");
	bg_mp_command(out, json_object_get(doc, "command"));
	bg_strbuf_addch(out, '\n');
	if (bg_measure_reported(doc)) {
		const char *name;
		const json_t *m;

		stat_line(out, "reported", json_object_get(stats, "reported_ns"), false, true, "sample");
		stat_line(out, "process", json_object_get(stats, "wall_ns"), false, false, "run");
		json_object_foreach((json_t *)json_object_get(stats, "metrics"), name, m) {
			bg_strbuf_addf(out, "  %-12s", "metric");
			bg_cli_add_shown(out, name); /* the program's own name for it */
			bg_strbuf_adds(out, ": p50 ");
			bg_py_float_repr(out, json_number_value(json_object_get(m, "p50")));
			bg_strbuf_adds(out, "  min ");
			bg_py_float_repr(out, json_number_value(json_object_get(m, "min")));
			bg_strbuf_adds(out, "  max ");
			bg_py_float_repr(out, json_number_value(json_object_get(m, "max")));
			bg_strbuf_addf(out, "  (%lld run%s)\n", (long long)json_integer_value(json_object_get(m, "count")),
				       json_integer_value(json_object_get(m, "count")) == 1 ? "" : "s");
		}
	} else {
		stat_line(out, "time", json_object_get(stats, "wall_ns"), false, true, "run");
	}
	stat_line(out, "cpu", json_object_get(stats, "cpu_ns"), false, false, "run");
	stat_line(out, "peak RSS", json_object_get(stats, "max_rss_bytes"), true, false, "run");
	rss_floor_note(out, doc);
	stat_line(out, "tree peak", json_object_get(stats, "tree_peak_bytes"), true, false, "run");
	if (json_is_object(json_object_get(stats, "cgroup_peak_bytes"))) /* only where a cgroup was used */
		stat_line(out, "cgroup peak", json_object_get(stats, "cgroup_peak_bytes"), true, false, "run");
	stat_line(out, "accelerator", json_object_get(stats, "gpu_process_peak_bytes"), true, false, "run");
	bg_strbuf_addf(out, "  %-12s", "parity");
	if (!pkind || strcmp(pkind, "none") == 0)
		bg_strbuf_adds(out, "n/a (no parity declared)");
	else {
		bg_cli_add_shown(out, pres);
		bg_strbuf_adds(out, " (");
		bg_cli_add_shown(out, pkind);
		bg_strbuf_addch(out, ')');
	}
	if (json_is_boolean(det))
		bg_strbuf_addf(out, ", deterministic: %s", json_is_true(det) ? "yes" : "no");
	else if (json_is_true(json_object_get(json_object_get(doc, "options"), "deterministic")))
		bg_strbuf_adds(out, ", deterministic: n/a (no run after the smoke run to compare)");
	bg_strbuf_addch(out, '\n');
	if (json_is_string(json_object_get(cache, "requested"))) {
		bg_strbuf_addf(out, "  %-12s", "cache");
		bg_cli_add_shown(out, json_string_value(json_object_get(cache, "requested")));
		bg_strbuf_adds(out, " requested, got ");
		bg_cli_add_shown(out, json_string_value(json_object_get(cache, "state")));
		bg_strbuf_addch(out, '\n');
	}
	/* an eviction that could not reach a file server's cache; a CPU that
	 * throttled for heat */
	noted(out, doc, "remote", bg_cache_notes);
	noted(out, doc, "thermal", bg_thermal_notes);
	/* what else ran meanwhile, when it was enough to matter: a build, a
	 * second benchmark, a noisy neighbour of a virtual machine */
	{
		const json_t *load = json_object_get(doc, "machine_load");
		double other = json_number_value(json_object_get(load, "other_cpu_cores"));
		double steal = json_number_value(json_object_get(load, "steal_cpu_cores"));

		if (json_is_object(load) && (other >= BG_LOAD_NOTABLE_CORES || steal >= BG_STEAL_NOTABLE_CORES))
			bg_strbuf_addf(out, "  %-12sother processes kept %.2f cores busy, the hypervisor took %.2f (over %.2f s of runs)\n",
				       "machine", other, steal, json_number_value(json_object_get(load, "seconds")));
	}
	if (json_array_size(outl)) {
		size_t i;
		json_t *o;

		bg_strbuf_addf(out, "  %-12sruns", "outliers");
		json_array_foreach(outl, i, o)
			bg_strbuf_addf(out, "%s %lld", i ? "," : "", (long long)json_integer_value(o));
		bg_strbuf_adds(out, " beyond p50 + 10 x MAD (kept)\n");
	}
	/* work a run left running is not in its time: it must not pass unseen */
	runs_flagged(out, doc, "left_running", "leftovers",
		     " left processes running after they exited: their work is not in the timing, and they "
		     "overlap later runs\n");
	/* nor what the prepare command left beside a run */
	runs_flagged(out, doc, "prepare_left_running", "prepare",
		     " began while processes their prepare command started still ran: their work ran beside the "
		     "runs, competing with them; make the prepare command wait for what it starts, or start what "
		     "the runs need in --setup\n");
	/* nor a run whose time holds a suspension */
	runs_flagged(out, doc, "suspended", "suspended",
		     " spanned a suspension (SIGTSTP, or a SIGSTOP of benchgate): their time holds it, so they are not in the statistics "
		     "(another timed run took each timed one's place)\n");
	/* nor one the machine slept through */
	runs_flagged(out, doc, "slept", "slept",
		     " spanned a system sleep (suspend): they ran partly on a machine coming back, with cold caches "
		     "and clocks, so they are not in the statistics (another timed run took each timed one's place)\n");
	/* nor a device whose clocks were held down (heat, a power cap), nor
	 * another's work on the same GPU */
	runs_noted(out, doc, "gpu_slowed", "gpu slowed", bg_slowdown_notes);
	runs_noted(out, doc, "gpu_shared", "gpu shared", bg_gpu_shared_notes);
	/* a failed cleanup does not change the timings, but it must not pass unseen */
	if (json_integer_value(json_object_get(doc, "cleanup_exit_status")) != 0) {
		json_int_t sig = json_integer_value(json_object_get(doc, "cleanup_signal"));

		bg_strbuf_addf(out, "  %-12sthe cleanup command ", "cleanup");
		bg_measure_shell_ended(out, (int)json_integer_value(json_object_get(doc, "cleanup_exit_status")),
				       sig > 0 && sig < 128 ? (int)sig : 0);
		bg_strbuf_adds(out, "\n");
	}
}

void bg_mp_runs(struct bg_strbuf *out, const json_t *runs)
{
	size_t i;
	json_t *r;

	bg_strbuf_adds(out, "  #    phase   wall        cpu         exit    peak RSS    tree peak   samples  parity  flags\n");
	json_array_foreach(runs, i, r) {
		struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT, c = BG_STRBUF_INIT,
				 d = BG_STRBUF_INIT, e = BG_STRBUF_INIT, t = BG_STRBUF_INIT, u = BG_STRBUF_INIT;
		const char *phase = json_string_value(json_object_get(r, "phase"));
		const json_t *exitv = json_object_get(r, "exit_status"), *flags = json_object_get(r, "flags");
		const json_t *par = json_object_get(r, "parity");
		json_t *cpu = NULL, *f;
		size_t k;

		if (json_is_integer(json_object_get(r, "user_ns")))
			cpu = json_integer(json_integer_value(json_object_get(r, "user_ns")) +
					   json_integer_value(json_object_get(r, "sys_ns")));
		bg_format_duration(&a, json_object_get(r, "wall_ns"));
		bg_format_duration(&b, cpu);
		json_decref(cpu);
		if (json_is_true(json_object_get(r, "timed_out")))
			bg_strbuf_adds(&c, "timeout");
		else if (json_is_integer(exitv))
			bg_strbuf_addf(&c, "%lld", (long long)json_integer_value(exitv));
		else
			bg_strbuf_addf(&c, "sig %lld",
				       (long long)json_integer_value(json_object_get(r, "signal")));
		bg_format_bytes(&d, json_object_get(r, "max_rss_bytes"));
		bg_format_bytes(&e, json_object_get(r, "tree_peak_bytes"));
		bg_strbuf_addf(out, "  %-4lld %-7s %-11s %-11s %-7s %-11s %-11s %-8lld %-7s ",
			       (long long)json_integer_value(json_object_get(r, "ordinal")),
			       bg_cli_shown(&t, phase ? phase : "?"), a.buf, b.buf, c.buf, d.buf, e.buf,
			       (long long)json_integer_value(json_object_get(r, "tree_samples")),
			       bg_cli_shown(&u, json_string_value(json_object_get(par, "result"))));
		json_array_foreach(flags, k, f) {
			bg_strbuf_adds(out, k ? "," : "");
			bg_cli_add_shown(out, json_is_string(f) ? json_string_value(f) : "?");
		}
		bg_cli_end_line(out);
		bg_strbuf_release(&a);
		bg_strbuf_release(&b);
		bg_strbuf_release(&c);
		bg_strbuf_release(&d);
		bg_strbuf_release(&e);
		bg_strbuf_release(&t);
		bg_strbuf_release(&u);
	}
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bg_mp_progress(const struct bg_measure_progress *p, void *data)
{
	struct bg_mp_progress_state *ps = data;
	char line[200];
	int n;

	if (strcmp(p->phase, "done") == 0) {
		if (ps->shown)
			fputs("\r\033[K", stderr);
		fflush(stderr);
		return;
	}
	/* at most 20 redraws a second, and always on a new phase */
	if (ps->phase && strcmp(ps->phase, p->phase) == 0 && now_seconds() - ps->last_drawn < 0.05)
		return;
	ps->phase = p->phase;
	ps->last_drawn = now_seconds();
	n = snprintf(line, sizeof(line), "\r\033[K%s%-6s%s run %ld of %ld", ps->color ? "\033[36m" : "",
		     p->phase, ps->color ? "\033[0m" : "", p->index, p->total);
	if (p->p50_seconds >= 0 && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, "  p50 %.4g ms", p->p50_seconds * 1e3);
	if (p->eta_seconds >= 0 && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, "  ETA %.1f s", p->eta_seconds);
	fputs(line, stderr);
	fflush(stderr);
	ps->shown = true;
}

/*
 * When id is not 0: whether the capture at path (relative to cfg's root) is
 * session id's, as the manifest of its experiment (the folder above runs/)
 * names it. Projects that share a store number their experiments each on
 * their own, so another project's session names a capture here that is this
 * project's. Else appends to why what the manifest names instead.
 */
static bool capture_of_session(const struct bg_config *cfg, const char *path, long long id, struct bg_strbuf *why)
{
	const char *runs = strstr(path, "/runs/");
	struct bg_strbuf rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	json_t *m = NULL, *sid;
	bool same;

	if (!id)
		return true;
	for (const char *p = runs; p; p = strstr(p + 1, "/runs/"))
		runs = p;
	if (!runs)
		return false;
	bg_strbuf_addn(&rel, path, (size_t)(runs - path));
	bg_strbuf_adds(&rel, "/manifest.json");
	bg_config_path(cfg, &abs, rel.buf);
	bg_ctx_init(&ctx);
	/* read as check reads a manifest (Python's json: NaN, 2**70) */
	(void)bg_json_load_file_py(abs.buf, rel.buf, true, &m, &ctx);
	sid = json_object_get(m, "session_id");
	same = json_is_integer(sid) && json_integer_value(sid) == id;
	if (!same) {
		bg_cli_add_shown(why, rel.buf);
		if (!m)
			bg_strbuf_adds(why, " cannot be read");
		else if (json_is_integer(sid))
			bg_strbuf_addf(why, " names session %lld", (long long)json_integer_value(sid));
		else
			bg_strbuf_adds(why, " names no session");
	}
	json_decref(m);
	bg_ctx_release(&ctx);
	bg_strbuf_release(&abs);
	bg_strbuf_release(&rel);
	return same;
}

void bg_mp_failed_stderr(struct bg_strbuf *out, const json_t *session, long long id, const struct bg_config *cfg)
{
	enum { TAIL_BYTES = 2048, TAIL_LINES = 10 };
	const char *status = json_string_value(json_object_get(session, "status"));
	const json_t *r;
	size_t i;

	if (!status || strcmp(status, "blocked") != 0)
		return;
	json_array_foreach(json_object_get(session, "runs"), i, r) {
		const json_t *st = json_object_get(r, "exit_status");
		const char *path = json_string_value(json_object_get(r, "stderr"));
		struct bg_strbuf text = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
		const char *start, *p;
		char run[96];
		size_t nlines = 0;
		int rc;

		if (!((json_is_integer(st) && json_integer_value(st) != 0) || json_is_integer(json_object_get(r, "signal")) ||
		      json_is_integer(json_object_get(r, "stop_signal")) || json_is_true(json_object_get(r, "timed_out"))))
			continue;
		if (!path)
			return;
		/* named as the reason names it: "timed run 2 (#3)" */
		{
			json_int_t k = json_integer_value(json_object_get(r, "ordinal")),
				   ix = json_integer_value(json_object_get(r, "phase_index"));

			bg_measure_run_name(run, sizeof(run), json_string_value(json_object_get(r, "phase")),
					    ix ? ix : k, k);
		}
		if (!capture_of_session(cfg, path, id, &abs)) {
			bg_strbuf_addf(out, "stderr of %s: not shown: ", run);
			bg_cli_add_shown(out, path);
			bg_strbuf_addf(out, " cannot be told to be this session's: %s (projects that share a store "
					    "number their experiments each on their own)\n", abs.buf);
			bg_strbuf_release(&abs);
			return;
		}
		bg_config_path(cfg, &abs, path);
		rc = bg_file_read(abs.buf, NULL, &text, NULL);
		bg_strbuf_release(&abs);
		if (rc != BG_OK) { /* gone since (a git clean): nothing to show */
			bg_strbuf_release(&text);
			return;
		}
		while (text.len && text.buf[text.len - 1] == '\n')
			bg_strbuf_setlen(&text, text.len - 1);
		start = text.buf + (text.len > TAIL_BYTES ? text.len - TAIL_BYTES : 0);
		if (start > text.buf && (p = strchr(start, '\n'))) /* from a whole line */
			start = p + 1;
		for (p = text.buf + text.len; p > start; p--) /* back to TAIL_LINES lines */
			if (p[-1] == '\n' && ++nlines == TAIL_LINES)
				break;
		start = p;
		nlines = *start ? 1 : 0;
		for (p = start; *p; p++)
			nlines += *p == '\n';
		bg_strbuf_addf(out, "stderr of %s", run);
		if (!nlines) {
			bg_strbuf_adds(out, ": empty (");
			bg_cli_add_shown(out, path);
			bg_strbuf_adds(out, ")\n");
		} else {
			bg_strbuf_addf(out, " (%s%zu line%s of ", start > text.buf ? "the last " : "", nlines,
				       nlines == 1 ? "" : "s");
			bg_cli_add_shown(out, path);
			bg_strbuf_adds(out, "):\n");
			while (*start) {
				const char *nl = strchr(start, '\n');
				size_t n = nl ? (size_t)(nl - start) : strlen(start);
				char *line = bg_xstrndup(start, n);

				bg_strbuf_adds(out, "  | ");
				bg_cli_add_shown(out, line);
				bg_strbuf_adds(out, "\n");
				free(line);
				start += n + (nl ? 1 : 0);
			}
		}
		bg_strbuf_release(&text);
		return;
	}
}
