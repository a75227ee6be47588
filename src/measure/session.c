/*
 * session.c - one measurement session: setup, smoke run and parity,
 * warmups, timed runs, statistics, cleanup (see benchgate/measure.h and
 * docs/measure.md for the document it returns).
 */
#include "benchgate/format.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/measure.h"
#include "benchgate/provenance.h"
#include "benchgate/sha256.h"
#include "benchgate/stats.h"
#include "benchgate/strbuf.h"
#include "core/fmath.h"
#include "measure/internal.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;

#define COLD_LIMIT 0.01 /* resident fraction above which a run is not cold */

struct series {
	double *v;
	size_t n, cap;
};

struct session {
	const struct bg_measure_opts *o;
	struct bg_watch *watch;
	struct bg_nvml *nvml;
	int psi_fd; /* /proc/pressure/memory or -1 */
	bool after_valid, after_have_swap, after_have_psi; /* readings after the last run */
	uint64_t after_swap;
	double after_psi;
	char **argv; /* what is spawned */
	struct bg_spawn_prog prog; /* argv found on PATH, prepared once */
	bool prog_looked_up;       /* prog.path looked for, just before the first run */
	json_t *runs;
	long ordinal;
	struct bg_outputs smoke_outputs; /* the smoke run's, owned */
	bool have_smoke_outputs;
	struct bg_parity_ref ref; /* allclose's reference, loaded by the first check */
	char *block;            /* first reason the session is blocked, owned */
	long failures;          /* how many times block() was called: a run that adds one failed */
	bool *in_stats;         /* by ordinal: the timed runs the statistics count */
	json_t *metric_names;   /* reported timing: the metrics of the first counted timed run, owned */
	size_t metric_runs;     /* counted timed runs that reported them */
	size_t in_stats_cap;
	bool interrupted;
	long suspended_timed;   /* timed runs that spanned a suspension or a system sleep: each is run again */
	bool any_first_process; /* a run was not cold although cold was asked for */
	bool any_parity_checked, all_parity_pass;
	bool deterministic_ok;
	bool deterministic_compared; /* a run's outputs were compared with the smoke run's */
	double timed_wall_s; /* sum of timed wall times */
	/* what else the machine ran while the runs did (run_phases): other
	 * processes' CPU and a hypervisor's steal, in cores, over load_s
	 * seconds; load_s 0 when it could not be told */
	double load_s, other_cores, steal_cores;
	/* Intel's thermal throttle counters over the runs: how many CPUs have
	 * them (0: none) and on how many they rose */
	size_t throttle_cpus, throttled_cpus;
	double all_wall_s;
	const char *last_phase; /* of the last progress report */
	int64_t last_progress_ns;
	long all_count;
	struct series wall, user, sys, cpu, rss, tree, gpu_proc, gpu_dev, cgpeak;
	struct bg_cgroup cg; /* a memory cgroup of each run's own, where possible */
	struct bg_stale stale; /* declared outputs there before the current run */
	/* timing "reported" */
	struct series reported;    /* the timed runs' samples, ns */
	char *result_dir;          /* absolute; owned */
	bool result_dir_temporary; /* made by the session, removed at its end */
	char *result_env;          /* "BENCHGATE_RESULT=PATH", rewritten before each run; owned */
	size_t result_env_cap;
	char **envp;               /* environ's strings without BENCHGATE_RESULT, then result_env */
};

static void read_reported(struct session *s, json_t *r, const char *name, bool ok);

static void series_add(struct series *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = bg_xrealloc(s->v, s->cap * sizeof(double));
	}
	s->v[s->n++] = v;
}

static void block(struct session *s, const char *fmt, ...) BG_PRINTF(2, 3);

/* Reported timing: whether timed run r (index, s->ordinal), about to be
 * counted, reports the metrics the counted runs before it did; one that
 * leaves one out or adds one blocks the session here, so that, as any run
 * that blocks, none of its figures enters a statistic. */
static bool same_metrics(struct session *s, const json_t *r, long index)
{
	const json_t *rep = json_object_get(r, "reported"), *m = json_object_get(rep, "metrics");
	const char *name;
	json_t *x;
	char run[96];

	if (!json_is_object(rep))
		return true;
	if (!s->metric_names) {
		s->metric_names = json_object();
		json_object_foreach((json_t *)m, name, x)
			json_object_set_new(s->metric_names, name, json_true());
		s->metric_runs = 1;
		return true;
	}
	bg_measure_run_name(run, sizeof(run), "timed", index, s->ordinal);
	json_object_foreach(s->metric_names, name, x) {
		if (!json_object_get(m, name)) {
			block(s, "metric '%s' was reported by %zu of %zu timed runs (not by %s); every run must report the same metrics",
			      name, s->metric_runs, s->metric_runs + 1, run);
			return false;
		}
	}
	json_object_foreach((json_t *)m, name, x) {
		if (!json_object_get(s->metric_names, name)) {
			block(s, "metric '%s' was reported by 1 of %zu timed runs (by %s, not by the %zu before it); every run must report the same metrics",
			      name, s->metric_runs + 1, run, s->metric_runs);
			return false;
		}
	}
	s->metric_runs++;
	return true;
}

static void block(struct session *s, const char *fmt, ...)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;
	va_list ap;

	s->failures++;
	if (s->block)
		return;
	va_start(ap, fmt);
	bg_strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	s->block = bg_strbuf_detach(&sb, NULL);
}

/* Sets a run record field (keys are ASCII literals: no UTF-8 check needed). */
static void rset(json_t *r, const char *key, json_t *v)
{
	json_object_set_new_nocheck(r, key, v);
}

static json_t *jint_or_null(bool ok, long long v)
{
	return ok ? json_integer(v) : json_null();
}

static json_t *jreal_or_null(bool ok, double v)
{
	return ok && isfinite(v) ? json_real(v) : json_null();
}

static void progress(struct session *s, const char *phase, long index, long total, long left)
{
	struct bg_measure_progress p;
	int64_t now = bg_sys_monotonic_ns();

	if (!s->o->progress)
		return;
	/* at most 20 reports a second (the running p50 sorts), always on a new phase */
	if (s->last_phase && strcmp(s->last_phase, phase) == 0 &&
	    now - s->last_progress_ns < 50000000)
		return;
	s->last_phase = phase;
	s->last_progress_ns = now;
	p.phase = phase;
	p.index = index;
	p.total = total;
	{
		/* the running p50 of the session's timing: the reported samples when it has them */
		const struct series *t = s->result_env ? &s->reported : &s->wall;
		p.p50_seconds = t->n ? bg_stats_quantile(t->v, t->n, 0.5) / 1e9 : -1;
	}
	p.eta_seconds = s->all_count ? (double)left * s->all_wall_s / (double)s->all_count : -1;
	s->o->progress(&p, s->o->progress_data);
}

/*
 * What became of a run benchgate killed, left processes still running
 * after the kill: into buf[200], returned. Without a run cgroup only its
 * process group and what descends from it are reached.
 */
/* The first of outs whose file was last written after ended (the
 * realtime clock), or NULL. */
static const char *written_after(const struct bg_outputs *outs, const struct timespec *ended)
{
	for (size_t i = 0; i < outs->n; i++) {
		struct stat st;

		if (stat(outs->v[i].path, &st) == 0 &&
		    (st.st_mtim.tv_sec > ended->tv_sec ||
		     (st.st_mtim.tv_sec == ended->tv_sec && st.st_mtim.tv_nsec > ended->tv_nsec)))
			return outs->v[i].path;
	}
	return NULL;
}

static const char *killed_text(size_t left, bool in_cg, char *buf)
{
	if (!left)
		snprintf(buf, 200, "its process tree was killed");
	else if (in_cg)
		snprintf(buf, 200, "its process tree was killed, but %zu of its processes still run%s (left_running)",
			 left, left == 1 ? "s" : "");
	else
		snprintf(buf, 200,
			 "its process group was killed, but %zu process%s it started outside that group still run%s "
			 "(left_running; without a run cgroup benchgate cannot reach them)",
			 left, left == 1 ? "" : "es", left == 1 ? "s" : "");
	return buf;
}

/* One run of the given phase. Returns BG_OK (possibly blocking the session) or BG_EIO. */
static int do_run(struct session *s, const char *phase, long index, struct bg_ctx *ctx)
{
	char capture[4096] = "";
	const struct bg_measure_opts *o = s->o;
	json_t *r = json_object(), *cache = NULL;
	struct bg_outputs outs = {0};
	struct bg_spawn_result res;
	struct bg_watch_result wr = {0};
	uint64_t swap0 = 0, swap1 = 0, cg_peak = 0;
	double psi0 = 0, psi1 = 0;
	bool have_swap0, have_swap1, have_psi0, have_psi1, have_cg, in_cg, ok, oom = false;
	char when[64], *out_err = NULL, kt[200];
	bool timed = strcmp(phase, "timed") == 0, smoke = strcmp(phase, "smoke") == 0;
	char name[64]; /* "timed run 3 (#5)": the phase's count, and the session's # when it differs */
	long failures = s->failures; /* a check of this run that fails adds one */
	size_t left, outlived = 0, prep_left = 0;
	int rc;

	bg_spawn_reap_orphans();
	if (o->prepare) {
		int st = -1, sig = 0;

		rc = bg_spawn_shell(o->prepare, NULL, 0, o->interrupted, &st, &sig, &prep_left, ctx);
		if (rc != BG_OK) {
			json_decref(r);
			return rc;
		}
		if (o->interrupted && *o->interrupted) {
			s->interrupted = true;
			json_decref(r);
			return BG_OK;
		}
		if (st != 0) {
			struct bg_strbuf how = BG_STRBUF_INIT;

			bg_measure_shell_ended(&how, st, sig);
			block(s, "the prepare command %s before run %ld", how.buf, s->ordinal + 1);
			bg_strbuf_release(&how);
			json_decref(r);
			return BG_OK;
		}
	}
	s->ordinal++;
	bg_measure_run_name(name, sizeof(name), phase, index, s->ordinal);
	if (o->nevict) {
		json_t *files = json_array();
		bool cold = true;
		size_t warm = 0; /* the first file that stayed resident */
		double warm_frac = 0;

		for (size_t i = 0; i < o->nevict; i++) {
			double frac;
			json_t *f = json_object();

			rc = bg_cache_evict(o->evict[i], &frac, ctx);
			if (rc != BG_OK) {
				/* which run, and that what ran before it is not kept (a
				 * run that removed the file, say) */
				char *msg = bg_xstrdup(bg_ctx_message(ctx));

				bg_error(ctx, rc, "%s (evicting it before %s; nothing of the session is stored)", msg, name);
				free(msg);
				json_decref(files);
				json_decref(f);
				json_decref(r);
				return rc;
			}
			if (frac > COLD_LIMIT && cold) {
				cold = false;
				warm = i;
				warm_frac = frac;
			}
			json_object_set_new(f, "path", bg_json_text(o->evict[i]));
			json_object_set_new(f, "resident_fraction", json_real(frac));
			json_array_append_new(files, f);
		}
		cache = json_object();
		json_object_set_new(cache, "state", json_string(cold ? "cold" : "first-process"));
		json_object_set_new(cache, "files", files);
		if (!cold) {
			struct bg_strbuf who = BG_STRBUF_INIT, mapped = BG_STRBUF_INIT;

			s->any_first_process = true;
			/* why pages stay: a process that maps the file (for a
			 * folder, one of its files) is the usual reason, and one a
			 * person can act on */
			if (!s->block && bg_cache_mappers(o->evict[warm], &who, &mapped) &&
			    strcmp(mapped.buf, o->evict[warm]) != 0)
				block(s, "%s was not cold: '%s' stayed %.1f%% resident after its eviction; process %s maps '%s' in it, and pages a process maps cannot be dropped: close the file there (or end that process), or measure warm",
				      name, o->evict[warm], 100 * warm_frac, who.buf, mapped.buf);
			else if (!s->block && who.len)
				block(s, "%s was not cold: '%s' stayed %.1f%% resident after its eviction; process %s maps it, and pages a process maps cannot be dropped: close the file there (or end that process), or measure warm",
				      name, o->evict[warm], 100 * warm_frac, who.buf);
			else
				block(s, "%s was not cold: '%s' stayed %.1f%% resident after its eviction (more than 1%%): pages another process maps or locks, or that its file system keeps (a network or FUSE one), cannot be dropped; close the file there, or measure warm",
				      name, o->evict[warm], 100 * warm_frac);
			bg_strbuf_release(&who);
			bg_strbuf_release(&mapped);
		}
	}
	if (s->after_valid && !o->prepare && !o->nevict && o->parity != BG_PARITY_COMMAND) {
		/* nothing ran since the last reading after the previous run: it is this run's "before" */
		have_swap0 = s->after_have_swap;
		swap0 = s->after_swap;
		have_psi0 = s->after_have_psi;
		psi0 = s->after_psi;
	} else {
		have_swap0 = bg_sys_swap_used(&swap0);
		have_psi0 = bg_sys_psi_memory_some10(s->psi_fd, &psi0);
	}
	if (s->result_env) {
		snprintf(s->result_env, s->result_env_cap, "BENCHGATE_RESULT=%s/run-%03ld.result.json",
			 s->result_dir, s->ordinal);
		unlink(s->result_env + strlen("BENCHGATE_RESULT="));
	}
	if (!s->prog_looked_up) {
		/* once, and only now: the setup, the prepare command or the
		 * eviction before the first run may build or install it */
		bg_spawn_prog_find(&s->prog);
		s->prog_looked_up = true;
	}
	if (o->noutputs)
		bg_stale_mark(&s->stale, o->outputs, o->noutputs);
	s->prog.cgroup_procs = bg_cgroup_run_begin(&s->cg, s->ordinal);
	if (o->capture_dir) {
		snprintf(capture, sizeof(capture), "%s/run-%03ld", o->capture_dir, s->ordinal);
		rc = bg_spawn_run_captured(&s->prog, o->timeout, o->interrupted, s->watch, capture,
					   o->capture_cap > 0 ? o->capture_cap : 1048576, &res, ctx);
	} else {
		rc = bg_spawn_run(&s->prog, o->timeout, o->interrupted, s->watch, &res, ctx);
	}
	if (rc != BG_OK) {
		bg_cgroup_run_end(&s->cg, -1, &cg_peak, NULL);
		s->prog.cgroup_procs = NULL;
		bg_stale_restore(&s->stale);
		json_decref(cache);
		json_decref(r);
		return rc;
	}
	bg_watch_end(s->watch, &wr);
	/* processes the run started and left running: their work is not in its
	 * time, and they overlap the runs after it (kept running, counted);
	 * all of its cgroup when it has one, so also what left its group */
	in_cg = s->prog.cgroup_procs && res.cgroup_errno == 0;
	left = bg_spawn_leftovers(res.pid, in_cg ? s->prog.cgroup_procs : NULL, BG_LEFTOVER_GRACE_MS, &outlived) +
	       res.escaped;
	have_cg = bg_cgroup_run_end(&s->cg, res.cgroup_errno, &cg_peak, &oom);
	s->prog.cgroup_procs = NULL;
	if (smoke)
		bg_cgroup_skip_short(&s->cg, res.wall_ns);
	have_swap1 = bg_sys_swap_used(&swap1);
	have_psi1 = bg_sys_psi_memory_some10(s->psi_fd, &psi1);
	s->after_valid = true;
	s->after_have_swap = have_swap1;
	s->after_swap = swap1;
	s->after_have_psi = have_psi1;
	s->after_psi = psi1;
	if (res.interrupted)
		s->interrupted = true;

	bg_sys_rfc3339(res.start_realtime, when);
	rset(r, "schema_version", json_integer(BG_MEASURE_SCHEMA_VERSION));
	rset(r, "ordinal", json_integer(s->ordinal));
	rset(r, "phase", json_string(phase));
	rset(r, "phase_index", json_integer(index));
	rset(r, "started_at", json_string(when));
	rset(r, "wall_ns", json_integer(res.wall_ns));
	rset(r, "user_ns", json_integer(res.user_ns));
	rset(r, "sys_ns", json_integer(res.sys_ns));
	rset(r, "exit_status", jint_or_null(res.exited, res.exit_status));
	rset(r, "signal", jint_or_null(res.term_signal != 0, res.term_signal));
	rset(r, "stop_signal", jint_or_null(res.stop_signal != 0, res.stop_signal));
	rset(r, "timed_out", json_boolean(res.timed_out));
	rset(r, "suspended", json_boolean(res.suspended));
	rset(r, "slept_seconds", json_real((double)res.slept_ns / 1e9));
	rset(r, "max_rss_bytes", json_integer(res.maxrss_bytes));
	rset(r, "max_rss_floor_bytes", json_integer(res.maxrss_floor_bytes));
	rset(r, "tree_peak_bytes",
		jint_or_null(wr.samples > 0, (long long)wr.tree_peak));
	rset(r, "tree_peak_source", json_string("sampled"));
	rset(r, "cgroup_peak_bytes", jint_or_null(have_cg, (long long)cg_peak));
	if (o->capture_dir) {
		char path[4200];
		snprintf(path, sizeof(path), "%s.stdout", capture);
		rset(r, "stdout", bg_json_text(path));
		snprintf(path, sizeof(path), "%s.stderr", capture);
		rset(r, "stderr", bg_json_text(path));
	}
	rset(r, "tree_samples", json_integer(wr.samples));
	rset(r, "swap_used_before_bytes", jint_or_null(have_swap0, (long long)swap0));
	rset(r, "swap_used_after_bytes", jint_or_null(have_swap1, (long long)swap1));
	rset(r, "swap_delta_bytes",
		jint_or_null(have_swap0 && have_swap1, (long long)swap1 - (long long)swap0));
	rset(r, "psi_memory_some_avg10_before", jreal_or_null(have_psi0, psi0));
	rset(r, "psi_memory_some_avg10_after", jreal_or_null(have_psi1, psi1));
	rset(r, "gpu_process_peak_bytes",
		jint_or_null(wr.gpu_proc_samples > 0, (long long)wr.gpu_proc_peak));
	rset(r, "gpu_device_used_peak_bytes",
		jint_or_null(wr.gpu_samples > 0, (long long)wr.gpu_device_peak));
	rset(r, "gpu_samples", jint_or_null(s->nvml != NULL, wr.gpu_samples));
	/* where NVML sampled the run: what slowed the device's clocks, and
	 * another's processes on the GPU it used (their kernels competed) */
	if (s->nvml && wr.gpu_samples > 0) {
		json_t *why = json_array(), *others = json_array();
		for (int b = 0; b < BG_GPU_SLOWDOWN_BITS; b++)
			if ((wr.gpu_slowdown >> b) & 1u)
				json_array_append_new(why, json_string(bg_gpu_slowdown_names[b]));
		for (size_t k = 0; k < wr.ngpu_others; k++) {
			char comm[64];
			json_array_append_new(others, json_pack("{s:i, s:o}", "pid", (int)wr.gpu_others[k], "command",
								bg_proc_comm(wr.gpu_others[k], comm) ? bg_json_text(comm)
												    : json_null()));
		}
		rset(r, "gpu_slowdown", why);
		rset(r, "gpu_other_processes", others);
	} else {
		rset(r, "gpu_slowdown", json_null());
		rset(r, "gpu_other_processes", json_null());
	}
	rset(r, "cache", cache ? cache : json_null());

	ok = res.exited && res.exit_status == 0 && !res.timed_out;
	if (!ok && !s->interrupted) {
		if (res.timed_out)
			block(s, "%s timed out after %g s; %s", name, o->timeout, killed_text(left, in_cg, kt));
		else if (res.exited)
			block(s, "%s exited with status %d", name, res.exit_status);
		else {
			struct bg_strbuf sig = BG_STRBUF_INIT;

			bg_format_signal(&sig, res.stop_signal ? res.stop_signal : res.term_signal);
			if (res.stop_signal)
				block(s, "%s was stopped by signal %s; %s", name, sig.buf, killed_text(left, in_cg, kt));
			else if (oom && res.term_signal == SIGKILL && s->cg.limit)
				block(s, "%s was killed by signal %s: the kernel's OOM killer ended it, its memory cgroup's limit "
					 "(%llu bytes, benchgate's own) reached; give it more memory, or measure it on less data",
				      name, sig.buf, s->cg.limit);
			else if (oom && res.term_signal == SIGKILL)
				block(s, "%s was killed by signal %s: the kernel's OOM killer ended it (out of memory); give it "
					 "more memory, or measure it on less data",
				      name, sig.buf);
			else
				block(s, "%s was killed by signal %s", name, sig.buf);
			bg_strbuf_release(&sig);
		}
	}
	if (o->noutputs) {
		rset(r, "outputs", bg_outputs_hash(o->outputs, o->noutputs, &s->stale, &outs, &out_err));
		bg_stale_restore(&s->stale);
		rset(r, "outputs_error", bg_json_text(out_err));
	} else {
		rset(r, "outputs", json_array());
		rset(r, "outputs_error", json_null());
	}
	if (ok && outlived && !out_err) {
		/* an output its process tree wrote after the run's own process
		 * ended: work the time taken does not hold */
		const char *late = written_after(&outs, &res.ended_at);

		if (late)
			block(s, "%s: its output '%s' was written after the run's own process ended, by one of the %zu "
				 "process(es) it left running then: its time does not hold that work; make the command "
				 "wait for them (the shell's 'wait')",
			      name, late, outlived);
	}
	if (out_err && (strstr(out_err, bg_open_files_advice(EMFILE)) || strstr(out_err, bg_open_files_advice(ENFILE)))) {
		/* out of descriptors reading the outputs: a limit of benchgate's
		 * (exit 4, as for starting the command), never a parity failure
		 * of the run's outputs */
		rc = bg_error(ctx, BG_EIO, "%s: %s", name, out_err);
		free(out_err);
		bg_outputs_release(&outs);
		json_decref(r);
		return rc;
	}
	if (ok && o->parity != BG_PARITY_NONE && (smoke || timed)) {
		json_t *p = bg_parity_check(o, &outs, out_err, &s->ref);

		s->any_parity_checked = true;
		if (strcmp(json_string_value(json_object_get(p, "result")), "pass") != 0) {
			s->all_parity_pass = false;
			block(s, "parity failed on %s: %s", name,
			      json_string_value(json_object_get(p, "detail")));
		}
		rset(r, "parity", p);
	} else {
		rset(r, "parity", json_null());
	}
	/* outputs not checked by parity on this run (none declared, or a
	 * warmup, which parity never reads) block by themselves */
	if (ok && out_err && (o->parity == BG_PARITY_NONE || !(smoke || timed)))
		block(s, "%s: %s", name, out_err);
	if (s->result_env)
		read_reported(s, r, name, ok && !s->interrupted);
	if (smoke) {
		s->smoke_outputs = outs;
		s->have_smoke_outputs = true;
		memset(&outs, 0, sizeof(outs));
	} else if (o->deterministic && ok && s->have_smoke_outputs) {
		struct bg_strbuf why = BG_STRBUF_INIT;

		s->deterministic_compared = true;
		if (out_err) /* no outputs to compare: not the smoke run's (blocked above, or by parity) */
			s->deterministic_ok = false;
		else if (!bg_outputs_same(&outs, &s->smoke_outputs, &why)) {
			s->deterministic_ok = false;
			block(s, "outputs are not deterministic: in %s, %s", name, why.buf);
		}
		bg_strbuf_release(&why);
	}
	rset(r, "left_running", json_integer((json_int_t)left));
	rset(r, "outlived_by", json_integer((json_int_t)outlived));
	rset(r, "prepare_left_running", o->prepare ? json_integer((json_int_t)prep_left) : json_null());
	rset(r, "flags", json_array());
	if (left)
		json_array_append_new(json_object_get(r, "flags"), json_string("left_running"));
	else if (outlived)
		json_array_append_new(json_object_get(r, "flags"), json_string("outlived"));
	if (prep_left) /* they ran beside it: not in its time, but competing with it */
		json_array_append_new(json_object_get(r, "flags"), json_string("prepare_left_running"));
	if (res.suspended)
		json_array_append_new(json_object_get(r, "flags"), json_string("suspended"));
	if (res.slept_ns)
		json_array_append_new(json_object_get(r, "flags"), json_string("slept"));
	if (wr.gpu_samples > 0 && wr.gpu_slowdown)
		json_array_append_new(json_object_get(r, "flags"), json_string("gpu_slowed"));
	if (wr.gpu_samples > 0 && wr.ngpu_others)
		json_array_append_new(json_object_get(r, "flags"), json_string("gpu_shared"));
	if (timed && (res.suspended || res.slept_ns) && ok)
		s->suspended_timed++;
	free(out_err);
	bg_outputs_release(&outs);
	s->all_wall_s += (double)res.wall_ns / 1e9;
	s->all_count++;
	/* the statistics count a timed run only when it fully succeeded: exit 0
	 * in time, and every check of it (outputs, parity, determinism, cold,
	 * its result file) passed; a run that failed one blocked the session.
	 * One that spanned a suspension holds the time benchgate was stopped,
	 * and one the machine slept through ran partly on a machine coming
	 * back (cold caches, clocks, devices reinitialised): another timed run
	 * takes its place */
	if (timed && ok && !res.suspended && !res.slept_ns && !s->interrupted && s->failures == failures &&
	    same_metrics(s, r, index)) {
		json_t *samples = json_object_get(json_object_get(r, "reported"), "samples_seconds"), *x;
		size_t i;

		if ((size_t)s->ordinal >= s->in_stats_cap) {
			size_t cap = s->in_stats_cap ? s->in_stats_cap * 2 : 64;

			while (cap <= (size_t)s->ordinal)
				cap *= 2;
			s->in_stats = bg_xrealloc(s->in_stats, cap * sizeof(bool));
			memset(s->in_stats + s->in_stats_cap, 0, (cap - s->in_stats_cap) * sizeof(bool));
			s->in_stats_cap = cap;
		}
		s->in_stats[s->ordinal] = true;
		json_array_foreach(samples, i, x)
			series_add(&s->reported, json_real_value(x) * 1e9);
		s->timed_wall_s += (double)res.wall_ns / 1e9;
		series_add(&s->wall, (double)res.wall_ns);
		series_add(&s->user, (double)res.user_ns);
		series_add(&s->sys, (double)res.sys_ns);
		series_add(&s->cpu, (double)(res.user_ns + res.sys_ns));
		series_add(&s->rss, (double)res.maxrss_bytes);
		if (wr.samples > 0)
			series_add(&s->tree, (double)wr.tree_peak);
		if (have_cg)
			series_add(&s->cgpeak, (double)cg_peak);
		if (wr.gpu_proc_samples > 0)
			series_add(&s->gpu_proc, (double)wr.gpu_proc_peak);
		if (wr.gpu_samples > 0)
			series_add(&s->gpu_dev, (double)wr.gpu_device_peak);
	}
	json_array_append_new(s->runs, r);
	return BG_OK;
}

/*
 * The run's reported-timing file into its record ("result_file",
 * "reported", "reported_error"); a run that exited 0 without a valid file
 * blocks the session; nothing is read from one that failed (ok false:
 * both null). do_run adds the samples of a timed run that fully
 * succeeded to the timing series.
 */
static void read_reported(struct session *s, json_t *r, const char *name, bool ok)
{
	const char *path = s->result_env + strlen("BENCHGATE_RESULT=");
	char display[4200];
	json_t *samples = NULL, *metrics = NULL, *rep = json_null();
	struct bg_ctx c;

	if (s->o->capture_dir)
		snprintf(display, sizeof(display), "%s/run-%03ld.result.json", s->o->capture_dir, s->ordinal);
	else
		snprintf(display, sizeof(display), "$BENCHGATE_RESULT");
	rset(r, "result_file", s->result_dir_temporary ? json_null() : bg_json_text(display));
	if (!ok) { /* nothing is read from a run that failed: blocked for that */
		rset(r, "reported", json_null());
		rset(r, "reported_error", json_null());
		return;
	}
	bg_ctx_init(&c);
	if (access(path, F_OK) != 0) {
		bg_error(&c, BG_ECHECK, "the command wrote no $BENCHGATE_RESULT file (%s)",
			 s->result_dir_temporary ? "timing \"reported\"" : display);
	} else if (bg_reported_read(path, display, &samples, &metrics, &c) == BG_OK) {
		rep = json_object();
		json_object_set_new(rep, "samples_seconds", samples);
		json_object_set_new(rep, "metrics", metrics);
	}
	rset(r, "reported", rep);
	rset(r, "reported_error", bg_json_text(c.msg));
	if (c.msg)
		block(s, "%s: %s", name, c.msg);
	bg_ctx_release(&c);
}

/* The runs' environment: environ's strings without BENCHGATE_RESULT (a
 * caller's, an outer benchgate's), then add (NULL: nothing). */
static void env_without_result(struct session *s, char *add)
{
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	s->envp = bg_xcalloc(n + 2, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "BENCHGATE_RESULT=", strlen("BENCHGATE_RESULT=")) != 0)
			s->envp[k++] = environ[i];
	s->envp[k] = add;
	s->prog.envp = s->envp;
}

/*
 * The folder of the result files and the environment that names them.
 * BG_EIO when the capture folder cannot be resolved or a temporary one
 * cannot be made.
 */
static int reported_begin(struct session *s, struct bg_ctx *ctx)
{
	if (s->o->capture_dir) {
		s->result_dir = realpath(s->o->capture_dir, NULL);
		if (!s->result_dir)
			return bg_error(ctx, BG_EIO, "'%s': cannot resolve the capture folder: %s",
					s->o->capture_dir, strerror(errno));
	} else {
		const char *tmp = getenv("TMPDIR");
		struct bg_strbuf t = BG_STRBUF_INIT;

		bg_strbuf_addf(&t, "%s/benchgate-result-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(t.buf)) {
			int e = errno;
			/* mkdtemp's name is of no use to anyone: say the folder asked for */
			bg_error(ctx, BG_EIO, "'%s'%s: cannot make a folder for $BENCHGATE_RESULT there: %s; %s",
				 tmp && *tmp ? tmp : "/tmp", tmp && *tmp ? " ($TMPDIR)" : "", strerror(e),
				 tmp && *tmp ? "set TMPDIR to a folder you may write" : "make /tmp writable, or set TMPDIR");
			bg_strbuf_release(&t);
			return BG_EIO;
		}
		/* absolute, as documented: a program may change its directory
		 * (a relative TMPDIR would leave a relative path) */
		s->result_dir = realpath(t.buf, NULL);
		if (!s->result_dir) {
			int e = errno;
			rmdir(t.buf);
			bg_error(ctx, BG_EIO, "'%s': cannot resolve the folder for $BENCHGATE_RESULT: %s", t.buf,
				 strerror(e));
			bg_strbuf_release(&t);
			return BG_EIO;
		}
		bg_strbuf_release(&t);
		s->result_dir_temporary = true;
	}
	s->result_env_cap = strlen(s->result_dir) + 64;
	s->result_env = bg_xcalloc(1, s->result_env_cap);
	env_without_result(s, s->result_env);
	return BG_OK;
}

/* nftw's step of reported_end: each entry removed, a folder after what it holds. */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes a temporary folder of result files with all the runs left in it
 * (a copy, a folder, a FIFO made at $BENCHGATE_RESULT): links themselves,
 * never what they lead to, and nothing on another file system. */
static void reported_end(struct session *s)
{
	if (s->result_dir_temporary)
		nftw(s->result_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	free(s->result_dir);
	free(s->result_env);
	free(s->envp);
}

static json_t *stats_json(const struct series *sr)
{
	struct bg_stats st;
	json_t *o;

	if (!bg_stats_compute(sr->v, sr->n, &st))
		return json_null();
	o = json_object();
	json_object_set_new(o, "count", json_integer((json_int_t)st.count));
	json_object_set_new(o, "min", json_real(st.min));
	json_object_set_new(o, "p50", json_real(st.p50));
	json_object_set_new(o, "p95", json_real(st.p95));
	json_object_set_new(o, "max", json_real(st.max));
	json_object_set_new(o, "mean", json_real(st.mean));
	json_object_set_new(o, "stddev", json_real(st.stddev));
	json_object_set_new(o, "mad", json_real(st.mad));
	return o;
}

static bool counted(const struct session *s, const json_t *r);

/* Flags the first timed run, and the runs the statistics count (counted)
 * beyond p50 + 10 x MAD of their wall time: a run that failed (the one that
 * blocked the session) or spanned a suspension enters no statistic, and is
 * judged by none. */
static json_t *flag_runs(struct session *s)
{
	struct bg_stats st;
	json_t *outliers = json_array(), *r;
	bool first = true, have = bg_stats_compute(s->wall.v, s->wall.n, &st);
	size_t i;

	json_array_foreach(s->runs, i, r) {
		json_t *flags = json_object_get(r, "flags");

		if (strcmp(json_string_value(json_object_get(r, "phase")), "timed") != 0)
			continue;
		if (first) {
			json_array_append_new(flags, json_string("first_timed"));
			first = false;
		}
		if (have && counted(s, r) &&
		    (double)json_integer_value(json_object_get(r, "wall_ns")) > st.p50 + 10 * st.mad) {
			json_array_append_new(flags, json_string("outlier"));
			json_array_append(outliers, json_object_get(r, "ordinal"));
		}
	}
	return outliers;
}

/* Whether the statistics count run record r (a timed run that fully succeeded). */
static bool counted(const struct session *s, const json_t *r)
{
	json_int_t k = json_integer_value(json_object_get(r, "ordinal"));

	return k > 0 && (size_t)k < s->in_stats_cap && s->in_stats[k];
}

void bg_measure_run_name(char *buf, size_t size, const char *phase, long long index, long long ordinal)
{
	if (index == ordinal)
		snprintf(buf, size, "%s run %lld", phase, index);
	else
		snprintf(buf, size, "%s run %lld (#%lld)", phase, index, ordinal);
}

/* The name of the first counted, reported run that left metric name out,
 * as runs are named in messages ("timed run 2 (#3)"). */
static void first_without_metric(const struct session *s, const char *name, char *buf, size_t size)
{
	const json_t *r;
	size_t i;

	snprintf(buf, size, "a timed run");
	json_array_foreach(s->runs, i, r) {
		json_int_t k = json_integer_value(json_object_get(r, "ordinal")),
			   n = json_integer_value(json_object_get(r, "phase_index"));

		if (!counted(s, r) || !json_is_object(json_object_get(r, "reported")) ||
		    json_object_get(json_object_get(json_object_get(r, "reported"), "metrics"), name))
			continue;
		bg_measure_run_name(buf, size, "timed", n, k);
		return;
	}
}

/*
 * The metrics of the timed runs the statistics count (all reported):
 * statistics per name into *stats and the median into *medians. A metric
 * that some of them left out blocks the session.
 */
static void reported_metrics(struct session *s, json_t **stats, json_t **medians)
{
	json_t *names = json_object(), *r, *m, *x;
	const char *name;
	size_t i, nrep = 0;

	*stats = json_object();
	*medians = json_object();
	json_array_foreach(s->runs, i, r) {
		if (!counted(s, r) || !json_is_object(json_object_get(r, "reported")))
			continue;
		nrep++;
		json_object_foreach(json_object_get(json_object_get(r, "reported"), "metrics"), name, m) {
			if (!json_object_get(names, name))
				json_object_set_new(names, name, json_array());
			json_array_append(json_object_get(names, name), m);
		}
	}
	json_object_foreach(names, name, x) {
		struct series v = {0};
		size_t j;
		json_t *m2, *entry;
		double p50;
		bool all_integers = true;

		if (json_array_size(x) != nrep) {
			char which[64];

			first_without_metric(s, name, which, sizeof(which));
			block(s, "metric '%s' was reported by %zu of %zu timed runs (not by %s); every run must report the same metrics",
			      name, json_array_size(x), nrep, which);
		}
		json_array_foreach(x, j, m2) {
			series_add(&v, json_number_value(m2));
			all_integers = all_integers && json_is_integer(m2);
		}
		entry = stats_json(&v);
		p50 = json_real_value(json_object_get(entry, "p50"));
		json_object_set_new(*stats, name, entry);
		/* a count stays an integer when its median is one */
		json_object_set_new(*medians, name,
				    all_integers && p50 == bg_floor(p50) && fabs(p50) < 9e15 ? json_integer((json_int_t)p50)
											  : json_real(p50));
		free(v.v);
	}
	json_decref(names);
}

const char *bg_timing_name(enum bg_timing timing)
{
	return timing == BG_TIMING_REPORTED ? "reported" : "process";
}

int bg_timing_parse(const char *name, enum bg_timing *timing)
{
	if (name && strcmp(name, "process") == 0)
		*timing = BG_TIMING_PROCESS;
	else if (name && strcmp(name, "reported") == 0)
		*timing = BG_TIMING_REPORTED;
	else
		return -1;
	return 0;
}

bool bg_measure_reported(const json_t *obj)
{
	enum bg_timing t;

	return bg_timing_parse(json_string_value(json_object_get(obj, "timing")), &t) == 0 &&
	       t == BG_TIMING_REPORTED;
}

const json_t *bg_measure_timing_stats(const json_t *doc)
{
	return json_object_get(json_object_get(doc, "statistics"),
			       bg_measure_reported(doc) ? "reported_ns" : "wall_ns");
}

static json_t *options_json(const struct bg_measure_opts *o, const struct bg_parity_ref *ref)
{
	json_t *j = json_object(), *a;

	json_object_set_new(j, "warmups", json_integer(o->warmups));
	json_object_set_new(j, "runs", o->adaptive ? json_null() : json_integer(o->runs));
	json_object_set_new(j, "min_runs", o->adaptive ? json_integer(o->min_runs) : json_null());
	json_object_set_new(j, "max_runs", o->adaptive && o->max_runs != LONG_MAX
						   ? json_integer(o->max_runs) : json_null());
	json_object_set_new(j, "min_time_seconds", o->adaptive ? json_real(o->min_time) : json_null());
	json_object_set_new(j, "timeout_seconds", o->timeout > 0 ? json_real(o->timeout) : json_null());
	json_object_set_new(j, "prepare", bg_json_text(o->prepare));
	json_object_set_new(j, "setup", bg_json_text(o->setup));
	json_object_set_new(j, "cleanup", bg_json_text(o->cleanup));
	a = json_array();
	for (size_t i = 0; i < o->noutputs; i++)
		json_array_append_new(a, bg_json_text(o->outputs[i]));
	json_object_set_new(j, "outputs", a);
	a = json_object();
	switch (o->parity) {
	case BG_PARITY_NONE:
		json_decref(a);
		a = json_null();
		break;
	case BG_PARITY_SHA256:
		json_object_set_new(a, "kind", json_string("sha256"));
		json_object_set_new(a, "expected", bg_json_text(o->parity_sha256));
		break;
	case BG_PARITY_ALLCLOSE:
		json_object_set_new(a, "kind", json_string("allclose"));
		json_object_set_new(a, "reference", bg_json_text(o->parity_reference));
		/* the bytes every run's output was compared with (null: never read) */
		json_object_set_new(a, "reference_sha256",
				    ref->loaded && ref->sha256[0] ? json_string(ref->sha256) : json_null());
		json_object_set_new(a, "rtol", json_real(o->rtol));
		json_object_set_new(a, "atol", json_real(o->atol));
		break;
	case BG_PARITY_COMMAND:
		json_object_set_new(a, "kind", json_string("command"));
		json_object_set_new(a, "command", bg_json_text(o->parity_command));
		break;
	}
	json_object_set_new(j, "parity", a);
	json_object_set_new(j, "deterministic", json_boolean(o->deterministic));
	a = json_array();
	for (size_t i = 0; i < o->nevict; i++)
		json_array_append_new(a, bg_json_text(o->evict[i]));
	json_object_set_new(j, "evict", a);
	a = json_array();
	for (size_t i = 0; i < o->nenv; i++)
		json_array_append_new(a, bg_json_text(o->env_names[i]));
	json_object_set_new(j, "env", a);
	json_object_set_new(j, "shell", json_boolean(o->shell));
	json_object_set_new(j, "sample_interval_ms", json_integer(o->sample_interval_ms));
	json_object_set_new(j, "timing", json_string(bg_timing_name(o->timing)));
	return j;
}

void bg_measure_opts_init(struct bg_measure_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->warmups = 1;
	opts->runs = 7;
	opts->min_runs = 3;
	opts->max_runs = LONG_MAX;
	opts->min_time = 3.0;
	opts->rtol = 1e-5;
	opts->atol = 1e-8;
	opts->sample_interval_ms = 5;
}

static int check_opts(const struct bg_measure_opts *o, struct bg_ctx *ctx)
{
	if (o->argc < 1 || !o->argv || !o->argv[0] || !o->argv[0][0])
		return bg_error(ctx, BG_EUSAGE, "a command to measure is required after '--'");
	if (o->warmups < 0)
		return bg_error(ctx, BG_EUSAGE, "the warmup count must not be negative");
	if (!o->adaptive && o->runs < 1)
		return bg_error(ctx, BG_EUSAGE, "the run count must be at least 1");
	if (o->adaptive && (o->min_runs < 1 || o->max_runs < o->min_runs))
		return bg_error(ctx, BG_EUSAGE, "need 1 <= --min-runs <= --max-runs");
	if (o->adaptive && !(o->min_time >= 0))
		return bg_error(ctx, BG_EUSAGE, "--min-time must not be negative");
	if (o->timeout < 0 || o->sample_interval_ms < 1)
		return bg_error(ctx, BG_EUSAGE, "the timeout and the sample interval must be positive");
	if (!(o->timeout <= BG_TIMEOUT_MAX_SECONDS))
		return bg_error(ctx, BG_EUSAGE, "the timeout must be at most " BG_TIMEOUT_MAX_TEXT " seconds");
	if (o->parity != BG_PARITY_NONE && o->noutputs == 0 && o->parity != BG_PARITY_COMMAND)
		return bg_error(ctx, BG_EUSAGE, "parity needs at least one --output to check");
	if (o->timing != BG_TIMING_PROCESS && o->timing != BG_TIMING_REPORTED)
		return bg_error(ctx, BG_EUSAGE, "the timing must be \"process\" or \"reported\"");
	return BG_OK;
}

static void series_free(struct series *sr)
{
	free(sr->v);
}

/*
 * True once the caller's flag is set or a run saw it. The flag is read
 * before every run: a signal that arrives while no run is being waited for
 * (hashing, parity, the setup command) interrupts no system call, so a run
 * would never notice it.
 */
static bool interrupted(struct session *s)
{
	if (s->o->interrupted && *s->o->interrupted)
		s->interrupted = true;
	return s->interrupted;
}

/* The runs of run_phases: smoke, warmups, timed runs. */
static void run_all(struct session *s, struct bg_ctx *ctx, int *rc)
{
	const struct bg_measure_opts *o = s->o;
	long planned;

	progress(s, "smoke", 1, 1, 1 + o->warmups + (o->adaptive ? o->min_runs : o->runs));
	*rc = do_run(s, "smoke", 1, ctx);
	for (long i = 0; *rc == BG_OK && !s->block && !interrupted(s) && i < o->warmups; i++) {
		progress(s, "warmup", i + 1, o->warmups,
			 o->warmups - i + (o->adaptive ? o->min_runs : o->runs));
		*rc = do_run(s, "warmup", i + 1, ctx);
	}
	for (long n = 0; *rc == BG_OK && !s->block && !interrupted(s); n++) {
		long done = n - s->suspended_timed; /* suspended ones do not count */

		if (o->adaptive) {
			double per = s->wall.n ? s->timed_wall_s / (double)s->wall.n : 0;

			if (done >= o->max_runs || (done >= o->min_runs && s->timed_wall_s >= o->min_time))
				break;
			planned = o->min_runs;
			if (per > 0 && o->min_time / per > (double)planned)
				planned = o->min_time / per > (double)o->max_runs
						  ? o->max_runs
						  : (long)bg_ceil(o->min_time / per);
		} else {
			if (done >= o->runs)
				break;
			planned = o->runs;
		}
		planned += s->suspended_timed;
		progress(s, "timed", n + 1, planned, planned - n);
		*rc = do_run(s, "timed", n + 1, ctx);
	}
	progress(s, "done", 0, 0, 0);
}

/* Below this many seconds of runs, the kernel's CPU accounting (in 1/100 s
 * ticks) cannot tell what else ran. */
#define LOAD_MIN_SECONDS 0.5

static void run_phases(struct session *s, struct bg_ctx *ctx, int *rc)
{
	double t0 = (double)bg_sys_monotonic_ns() / 1e9, busy0, steal0, own0 = bg_sys_own_cpu();
	bool load = bg_sys_cpu_times(&busy0, &steal0);
	struct bg_cpu_throttle heat0, heat1;
	bool heat = bg_cpu_throttle_read("", &heat0);

	*rc = BG_OK;
	if (interrupted(s)) {
		bg_cpu_throttle_release(&heat0);
		return;
	}
	run_all(s, ctx, rc);
	if (heat && bg_cpu_throttle_read("", &heat1)) {
		s->throttle_cpus = heat1.n;
		s->throttled_cpus = bg_cpu_throttle_rose(&heat0, &heat1);
		bg_cpu_throttle_release(&heat1);
	}
	bg_cpu_throttle_release(&heat0);
	if (load) {
		double t1 = (double)bg_sys_monotonic_ns() / 1e9, busy1, steal1, own1 = bg_sys_own_cpu();

		/* the machine's busy time less this process's and its runs' */
		if (bg_sys_cpu_times(&busy1, &steal1) && t1 - t0 >= LOAD_MIN_SECONDS) {
			double other = (busy1 - busy0) - (own1 - own0);

			s->load_s = t1 - t0;
			s->other_cores = other > 0 ? other / s->load_s : 0;
			s->steal_cores = steal1 > steal0 ? (steal1 - steal0) / s->load_s : 0;
		}
	}
}

/*
 * The source as the setup left it is the source the runs ran: a file the
 * setup wrote into the project (a generated module, an edited one) is in
 * the provenance, the tree recorded dirty, never clean for files that were
 * not there at the start (the end check covers only those). The "git"
 * object of prov is taken again where it changed; *untracked_all with it.
 */
static void setup_source(json_t *prov, const struct bg_provenance_opts *po, json_t **untracked_all)
{
	json_t *git = json_object_get(prov, "git"), *after, *all = NULL;
	struct bg_strbuf why = BG_STRBUF_INIT;

	if (!json_string_value(json_object_get(git, "revision")))
		return;
	after = bg_provenance_git(po->root ? po->root : ".", po->git_exclude, NULL, NULL, &all);
	if (bg_provenance_git_changed(git, after, &why)) {
		json_object_set(prov, "git", after);
		json_decref(*untracked_all);
		*untracked_all = all;
		all = NULL;
	}
	json_decref(after);
	json_decref(all);
	bg_strbuf_release(&why);
}

int bg_measure_session(const struct bg_measure_opts *o, json_t **out, struct bg_ctx *ctx)
{
	struct session s;
	struct bg_provenance_opts po = {0};
	json_t *doc = NULL, *gpu = NULL, *stats, *counts, *cache, *parity, *prov = NULL, *outliers;
	json_t *metric_stats = NULL, *metrics = NULL, *untracked_all = NULL;
	char when[64], *joined = NULL;
	const char *status;
	size_t i;
	json_t *r;
	int rc;
	long nsmoke = 0, nwarm = 0, ntimed = 0;

	*out = NULL;
	rc = check_opts(o, ctx);
	if (rc)
		return rc;
	/* every declared output is hashed: no run starts when that cannot be done */
	if (o->noutputs && (rc = bg_sha256_ready(ctx)) != BG_OK)
		return rc;
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.psi_fd = bg_sys_psi_open();
	s.all_parity_pass = true;
	s.deterministic_ok = true;
	if (o->shell) {
		struct bg_strbuf sb = BG_STRBUF_INIT;

		for (int k = 0; k < o->argc; k++)
			bg_strbuf_addf(&sb, "%s%s", k ? " " : "", o->argv[k]);
		joined = bg_strbuf_detach(&sb, NULL);
		s.argv = bg_xcalloc(4, sizeof(char *));
		s.argv[0] = (char *)"/bin/sh";
		s.argv[1] = (char *)"-c";
		s.argv[2] = joined;
	} else {
		s.argv = bg_xcalloc((size_t)o->argc + 1, sizeof(char *));
		for (int k = 0; k < o->argc; k++)
			s.argv[k] = o->argv[k];
	}
	bg_spawn_prog_init(&s.prog, s.argv);
	if (o->timing == BG_TIMING_REPORTED && (rc = reported_begin(&s, ctx)) != BG_OK)
		goto done;
	/* not a reported session: a BENCHGATE_RESULT of the caller's must
	 * not make the command report */
	if (o->timing != BG_TIMING_REPORTED && getenv("BENCHGATE_RESULT"))
		env_without_result(&s, NULL);
	/* adopt orphans of a run so that its whole tree stays visible and killable */
	bg_spawn_adopt_begin();
	if ((rc = bg_nvml_load(&s.nvml, ctx)) != BG_OK)
		goto done;
	if (s.nvml)
		gpu = bg_nvml_describe(s.nvml);
	po.root = o->root;
	po.argv = o->bg_argv;
	po.argc = o->bg_argc;
	po.env_names = o->env_names;
	po.nenv = o->nenv;
	po.gpu = gpu;
	po.git_exclude = o->git_exclude;
	po.untracked_all = &untracked_all;
	doc = json_object();
	json_object_set_new(doc, "schema_version", json_integer(BG_MEASURE_SCHEMA_VERSION));
	json_object_set_new(doc, "kind", json_string("diagnostic"));
	json_object_set_new(doc, "status", json_null());
	json_object_set_new(doc, "reason", json_null());
	bg_sys_rfc3339(bg_sys_realtime(), when);
	json_object_set_new(doc, "started_at", json_string(when));
	json_object_set_new(doc, "finished_at", json_null());
	prov = bg_provenance_capture(&po);
	json_decref(gpu);
	s.runs = json_array();

	bg_cgroup_init(&s.cg);
	rc = bg_watch_start(&s.watch, o->sample_interval_ms, s.nvml, ctx);
	if (rc == BG_OK && o->setup) {
		int st = -1, sig = 0;

		rc = bg_spawn_shell(o->setup, NULL, 0, o->interrupted, &st, &sig, NULL, ctx);
		if (rc == BG_OK && st != 0) {
			struct bg_strbuf how = BG_STRBUF_INIT;

			bg_measure_shell_ended(&how, st, sig);
			block(&s, "the setup command %s", how.buf);
			bg_strbuf_release(&how);
		} else if (rc == BG_OK) {
			setup_source(prov, &po, &untracked_all);
		}
	}
	if (rc == BG_OK && !s.block) {
		/* read before any run can write it (after the setup, which may
		 * make it) */
		struct bg_ctx c2;

		bg_ctx_init(&c2);
		if (bg_parity_ref_open(o, &s.ref, &c2) != BG_OK) {
			s.all_parity_pass = false;
			block(&s, "parity cannot be checked: %s", bg_ctx_message(&c2));
		}
		bg_ctx_release(&c2);
	}
	if (rc == BG_OK && !s.block)
		run_phases(&s, ctx, &rc);
	if (rc == BG_OK && !s.block && !interrupted(&s)) {
		/* the revision and diff claimed are those of every run only if the
		 * source stayed as it was (an edit mid-session, a checkout) */
		struct bg_strbuf why = BG_STRBUF_INIT;
		json_t *now = bg_provenance_git(po.root ? po.root : ".", po.git_exclude, json_object_get(prov, "git"),
						untracked_all, NULL);

		if (bg_provenance_git_changed(json_object_get(prov, "git"), now, &why))
			block(&s, "%s during the session, so its provenance does not describe every run; measure again on a source left alone",
			      why.buf);
		json_decref(now);
		bg_strbuf_release(&why);
	}
	if (o->cleanup && s.watch) {
		struct bg_ctx c2;
		int st = -1, sig = 0;
		bool was = o->interrupted && *o->interrupted, cut;

		/*
		 * The cleanup runs also after an interruption, but a further
		 * SIGINT or SIGTERM stops it: the flag is cleared for it, and set
		 * again afterwards (the session stays interrupted).
		 */
		if (o->interrupted)
			*o->interrupted = 0;
		bg_ctx_init(&c2);
		if (bg_spawn_shell(o->cleanup, NULL, 0, o->interrupted, &st, &sig, NULL, &c2) == BG_OK) {
			json_object_set_new(doc, "cleanup_exit_status", json_integer(st));
			json_object_set_new(doc, "cleanup_signal", sig ? json_integer(sig) : json_null());
		}
		bg_ctx_release(&c2);
		cut = o->interrupted && *o->interrupted;
		json_object_set_new(doc, "cleanup_interrupted", json_boolean(cut));
		if (was && o->interrupted)
			*o->interrupted = 1;
	}
	bg_watch_stop(s.watch);
	bg_nvml_close(s.nvml);
	if (s.psi_fd >= 0)
		close(s.psi_fd);
	s.psi_fd = -1;
	bg_spawn_reap_orphans();
	if (rc != BG_OK)
		goto done;
	interrupted(&s); /* a signal during the last run's records still counts */

	if (o->timing == BG_TIMING_REPORTED)
		reported_metrics(&s, &metric_stats, &metrics);
	outliers = flag_runs(&s);
	json_array_foreach(s.runs, i, r) {
		const char *ph = json_string_value(json_object_get(r, "phase"));

		nsmoke += strcmp(ph, "smoke") == 0;
		nwarm += strcmp(ph, "warmup") == 0;
		ntimed += strcmp(ph, "timed") == 0;
	}
	status = s.interrupted ? "interrupted" : s.block ? "blocked" : "ok";
	bg_sys_rfc3339(bg_sys_realtime(), when);
	json_object_set_new(doc, "finished_at", json_string(when));
	json_object_set_new(doc, "status", json_string(status));
	json_object_set_new(doc, "reason", s.interrupted ? json_string("interrupted")
							 : bg_json_text(s.block));
	r = json_array();
	for (int k = 0; k < o->argc; k++)
		json_array_append_new(r, bg_json_text(o->argv[k]));
	json_object_set_new(doc, "command", r);
	json_object_set_new(doc, "options", options_json(o, &s.ref));
	json_object_set_new(doc, "memory_source", json_string("sampled"));
	json_object_set_new(doc, "memory_source_note", bg_json_text(s.cg.note));
	/* what else ran meanwhile: null for runs too short to tell */
	json_object_set_new(doc, "machine_load",
			    s.load_s > 0 ? json_pack("{s:f, s:f, s:f}", "seconds", s.load_s, "other_cpu_cores",
						     s.other_cores, "steal_cpu_cores", s.steal_cores)
					 : json_null());
	/* the CPU throttled for heat: null where it keeps no counters */
	json_object_set_new(doc, "cpu_throttle",
			    s.throttle_cpus ? json_pack("{s:I, s:I}", "cpus", (json_int_t)s.throttle_cpus, "throttled",
							(json_int_t)s.throttled_cpus)
					    : json_null());
	counts = json_object();
	json_object_set_new(counts, "smoke", json_integer(nsmoke));
	json_object_set_new(counts, "warmup", json_integer(nwarm));
	json_object_set_new(counts, "timed", json_integer(ntimed));
	json_object_set_new(doc, "counts", counts);
	cache = json_object();
	json_object_set_new(cache, "requested", o->nevict ? json_string("cold") : json_null());
	json_object_set_new(cache, "state", !o->nevict ? json_null()
					    : json_string(s.any_first_process ? "first-process" : "cold"));
	/* evicted files whose eviction only reached this machine's copy */
	if (o->nevict) {
		json_t *remote = json_array();
		struct bg_strbuf where = BG_STRBUF_INIT;
		for (size_t k = 0; k < o->nevict; k++) {
			const char *fs = bg_cache_remote_fs(o->evict[k], &where);
			if (fs)
				json_array_append_new(remote, json_pack("{s:o, s:s}", "path", bg_json_text(where.buf),
									"filesystem", fs));
		}
		bg_strbuf_release(&where);
		json_object_set_new(cache, "remote", remote);
	} else {
		json_object_set_new(cache, "remote", json_null());
	}
	json_object_set_new(doc, "cache", cache);
	parity = json_object();
	json_object_set_new(parity, "kind",
			    json_string(o->parity == BG_PARITY_SHA256     ? "sha256"
					: o->parity == BG_PARITY_ALLCLOSE ? "allclose"
					: o->parity == BG_PARITY_COMMAND  ? "command"
									  : "none"));
	json_object_set_new(parity, "result",
			    !s.any_parity_checked ? json_null()
						  : json_string(s.all_parity_pass ? "pass" : "fail"));
	json_object_set_new(doc, "parity", parity);
	/* true only once a run was compared: a session blocked at its smoke
	 * run proved nothing either way */
	json_object_set_new(doc, "deterministic",
			    o->deterministic && (s.deterministic_compared || !s.deterministic_ok)
				    ? json_boolean(s.deterministic_ok)
				    : json_null());
	stats = json_object();
	json_object_set_new(stats, "wall_ns", stats_json(&s.wall));
	json_object_set_new(stats, "user_ns", stats_json(&s.user));
	json_object_set_new(stats, "sys_ns", stats_json(&s.sys));
	json_object_set_new(stats, "cpu_ns", stats_json(&s.cpu));
	json_object_set_new(stats, "max_rss_bytes", stats_json(&s.rss));
	json_object_set_new(stats, "tree_peak_bytes", stats_json(&s.tree));
	json_object_set_new(stats, "cgroup_peak_bytes", stats_json(&s.cgpeak));
	json_object_set_new(stats, "gpu_process_peak_bytes", stats_json(&s.gpu_proc));
	json_object_set_new(stats, "gpu_device_used_peak_bytes", stats_json(&s.gpu_dev));
	json_object_set_new(stats, "reported_ns", stats_json(&s.reported));
	json_object_set_new(stats, "metrics", metric_stats ? metric_stats : json_null());
	metric_stats = NULL;
	json_object_set_new(doc, "statistics", stats);
	json_object_set_new(doc, "timing", json_string(bg_timing_name(o->timing)));
	if (metrics)
		json_object_set_new(doc, "metrics", metrics);
	metrics = NULL;
	json_object_set_new(doc, "outliers", outliers);
	/* the file the runs executed, as found after the setup; null when none ran */
	json_object_set_new(prov, "program", bg_json_text(s.prog.path));
	json_object_set_new(doc, "provenance", prov);
	prov = NULL;
	json_object_set_new(doc, "runs", json_incref(s.runs));
	/* nothing stored, printed as JSON or exported holds a home path or a secret */
	bg_provenance_scrub(doc, getenv("HOME"));
	*out = doc;
	doc = NULL;
done:
	bg_spawn_adopt_end();
	if (s.psi_fd >= 0) /* (a session that stopped before its runs) */
		close(s.psi_fd);
	json_decref(metric_stats);
	json_decref(metrics);
	json_decref(untracked_all);
	json_decref(prov);
	json_decref(doc);
	reported_end(&s);
	series_free(&s.reported);
	json_decref(s.runs);
	bg_parity_ref_release(&s.ref);
	free(s.block);
	bg_spawn_prog_release(&s.prog);
	free(s.argv);
	free(joined);
	series_free(&s.wall);
	series_free(&s.user);
	series_free(&s.sys);
	series_free(&s.cpu);
	series_free(&s.rss);
	series_free(&s.tree);
	series_free(&s.cgpeak);
	series_free(&s.gpu_proc);
	series_free(&s.gpu_dev);
	bg_cgroup_release(&s.cg);
	bg_stale_release(&s.stale);
	bg_outputs_release(&s.smoke_outputs);
	free(s.in_stats);
	json_decref(s.metric_names);
	return rc;
}
