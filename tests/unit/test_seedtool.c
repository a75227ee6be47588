/*
 * test_seedtool.c - stores gate sessions the way `benchgate run GATE` does
 * at store time (key from the session context, decision against the
 * accepted same-key baseline, bg_store_set_decision), with synthetic
 * figures, so the decision and promotion verbs can be tested without
 * running real measurements.
 *
 *   test_seedtool                       self-test (run by tests/run-all)
 *   test_seedtool seed ROOT GATE TIER P50_SECONDS [NAME=VALUE...]
 *
 * prints "ID DECISION" of the stored session. NAME=VALUE (all optional):
 *   status=blocked reason=TEXT   a blocked session (block)
 *   parity=pass|fail|none        (pass; fail blocks)
 *   revision=SHA|none dirty=1    provenance (a fixed full SHA by default; none blocks)
 *   computer=LABEL device=TEXT runtime=TEXT
 *   lease=0                      the lease was not held throughout (blocks)
 *   tree=BYTES|none gpu=BYTES swap=BYTES|none logical=BYTES   memory layers (tree 1 MiB,
 *                                swap 0; tree=none: runs too short for the sampler)
 *   cache=cold|first-process     the runbook claimed cold; first-process blocks
 *   experiment=1                 also write experiments/ID/ (manifest completed,
 *                                runs.jsonl, a terminal RUNS.md row)
 *   runs_md=0 manifest=0 artifacts=0 outputs=0 timing_boundary=none   take pieces away
 *   ctx.FIELD=JSON               set a context field (JSON, or a string)
 *
 *   test_seedtool sql ROOT STATEMENT...
 *
 * runs SQL on ROOT/.benchgate/store.sqlite3 through the store's own SQLite
 * binding: how tests damage a store as something outside benchgate would.
 * Library calls only; exit 0 on success, else the status with a message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchgate/config.h"
#include "benchgate/decide.h"
#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"
#include "benchgate/registry.h"
#include "benchgate/sha256.h"
#include "benchgate/store.h"
#include "store/sqlite_api.h"

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
	size_t n = strlen(name);

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

static json_t *stat_entry(double v)
{
	return json_pack("{s:i, s:f, s:f, s:f, s:f}", "count", 5, "min", v * 0.95, "p50", v, "p95", v * 1.05,
			 "max", v * 1.1);
}

/* The resolved gate as jansson JSON (NULL when unknown). */
static json_t *gate_json(const struct bg_config *cfg, const char *gate_id)
{
	struct bg_registry reg;
	struct bg_ctx ctx;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	json_t *out = NULL;
	struct bg_value *g;

	memset(&reg, 0, sizeof(reg));
	bg_ctx_init(&ctx);
	if (bg_registry_load(&reg, cfg, &ctx) == BG_OK && (g = bg_registry_find_gate(&reg, gate_id))) {
		bg_value_dump(&sb, g, -1, false);
		out = json_loads(sb.buf, 0, NULL);
	}
	bg_registry_release(&reg);
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	return out;
}

static double num(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int seed(int argc, char **argv)
{
	const char *root = argv[0], *gate_id = argv[1], *tier = argv[2];
	double p50 = atof(argv[3]) * 1e9;
	const char *status = opt(argc, argv, "status", "ok");
	const char *parity = opt(argc, argv, "parity", "pass");
	const char *revision = opt(argc, argv, "revision", "0123456789abcdef0123456789abcdef01234567");
	const char *cache = opt(argc, argv, "cache", NULL);
	const char *swap = opt(argc, argv, "swap", "0");
	const char *gpu = opt(argc, argv, "gpu", NULL);
	const char *logical = opt(argc, argv, "logical", NULL);
	bool unsampled;
	struct bg_config cfg;
	struct bg_ctx ctx;
	struct bg_store *st = NULL;
	struct bg_strbuf exp_id = BG_STRBUF_INIT, path = BG_STRBUF_INIT, sb = BG_STRBUF_INIT;
	json_t *gate, *doc, *context, *runs, *stats, *key = NULL, *profile = NULL, *fields, *decision = NULL;
	json_t *exp_manifest = NULL;
	json_t *base = NULL, *cfgjson = NULL;
	const char *reasons[8];
	size_t nreasons = 0, i;
	char key_id[65];
	long long id = 0;
	int rc;
	struct bg_decide_opts o;
	struct bg_session_facts facts, *bfacts;
	enum bg_decision d;
	json_t *row;

	bg_ctx_init(&ctx);
	if ((rc = bg_config_load(&cfg, root, NULL, &ctx))) {
		fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
		return rc;
	}
	gate = gate_json(&cfg, gate_id);
	if (!gate)
		gate = json_pack("{s:s}", "id", gate_id);
	doc = json_pack("{s:i, s:s, s:s, s:o, s:s, s:s, s:[s,s], s:{s:i,s:i,s:i}}", "schema_version", 1, "kind",
			"gate", "status", status, "reason",
			strcmp(status, "ok") ? json_string(opt(argc, argv, "reason", "a run failed")) : json_null(),
			"started_at", "2026-11-30T10:00:00.000000Z", "finished_at", "2026-11-30T10:00:05.000000Z",
			"command", "./bin/work", "--fast", "counts", "smoke", 1, "warmup", 1, "timed", 5);
	unsampled = strcmp(opt(argc, argv, "tree", "1048576"), "none") == 0;
	stats = json_pack("{s:o, s:o, s:n, s:n}", "wall_ns", stat_entry(p50), "tree_peak_bytes",
			  unsampled ? json_null() : stat_entry(atof(opt(argc, argv, "tree", "1048576"))),
			  "max_rss_bytes", "gpu_device_used_peak_bytes");
	json_object_set_new(doc, "options", json_pack("{s:i}", "sample_interval_ms", 5));
	json_object_set_new(stats, "gpu_process_peak_bytes", gpu ? stat_entry(atof(gpu)) : json_null());
	json_object_set_new(doc, "statistics", stats);
	json_object_set_new(doc, "parity", json_pack("{s:s, s:o}", "kind", strcmp(parity, "none") ? "sha256" : "none",
						     "result", strcmp(parity, "none") ? json_string(parity) : json_null()));
	json_object_set_new(doc, "cache", json_pack("{s:o, s:o}", "requested", cache ? json_string("cold") : json_null(),
						    "state", cache ? json_string(cache) : json_null()));
	json_object_set_new(doc, "provenance",
			    json_pack("{s:{s:o, s:b, s:o}, s:s, s:o}", "git", "revision",
				      strcmp(revision, "none") ? json_string(revision) : json_null(), "dirty",
				      atoi(opt(argc, argv, "dirty", "0")), "diff_sha256",
				      atoi(opt(argc, argv, "dirty", "0")) ? json_string("ab") : json_null(),
				      "benchgate_version", "0.1.0", "gpu",
				      gpu ? json_pack("{s:s, s:[{s:s}]}", "driver_version", "550", "devices", "name",
						      "NVIDIA H200")
					  : json_null()));
	runs = json_array();
	for (int k = 1; k <= 7; k++) {
		json_t *r = json_pack("{s:i, s:i, s:s, s:f, s:i, s:f, s:[{s:s, s:s}], s:{s:s}}", "schema_version", 1,
				      "ordinal", k, "phase", k == 1 ? "smoke" : k == 2 ? "warmup" : "timed", "wall_ns",
				      p50, "exit_status", 0, "tree_peak_bytes", 1048576.0, "outputs", "path", "out.npy",
				      "sha256", "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef",
				      "parity", "result", parity);
		json_object_set_new(r, "started_at", json_string("2026-11-30T10:00:01.000000Z"));
		json_object_set_new(r, "timed_out", json_false());
		json_object_set_new(r, "tree_samples", json_integer(unsampled ? 0 : 3));
		if (unsampled)
			json_object_set_new(r, "tree_peak_bytes", json_null());
		json_object_set_new(r, "swap_delta_bytes", strcmp(swap, "none") ? json_integer(atoll(swap)) : json_null());
		if (!atoi(opt(argc, argv, "outputs", "1")))
			json_object_set_new(r, "outputs", json_array());
		json_array_append_new(runs, r);
	}
	json_object_set_new(doc, "runs", runs);
	json_object_set_new(doc, "gate_id", json_string(gate_id));
	json_object_set_new(doc, "tier", json_string(tier));
	json_object_set_new(doc, "computer",
			    json_string(opt(argc, argv, "computer", json_string_value(json_object_get(gate, "computer"))
									 ? json_string_value(json_object_get(gate, "computer"))
									 : "n/a")));
	json_object_set_new(doc, "question", json_string("Is the fast path as fast as before?"));
	json_object_set_new(doc, "lease", json_pack("{s:s, s:b}", "device", "test-device", "held_throughout",
						    atoi(opt(argc, argv, "lease", "1"))));
	if (logical)
		json_object_set_new(doc, "metrics", json_pack("{s:I}", "logical_resident_bytes", (json_int_t)atoll(logical)));

	/* the context: the resolved gate, then what run detects */
	context = json_deep_copy(gate);
	json_object_set_new(context, "gate", json_string(gate_id));
	json_object_set(context, "computer", json_object_get(doc, "computer"));
	json_object_set_new(context, "device", json_string(opt(argc, argv, "device", "Test device")));
	json_object_set_new(context, "runtime", json_string(opt(argc, argv, "runtime", "glibc 2.36")));
	json_object_set_new(context, "revision", strcmp(revision, "none") ? json_string(revision) : json_null());
	json_object_set_new(context, "inputs", json_pack("[{s:s, s:s, s:s}]", "dataset_id", "synthetic-64", "path",
							 "data/source.bin", "sha256",
							 "a3f1c0de9b8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817060504"));
	if (strcmp(opt(argc, argv, "timing_boundary", ""), "none") == 0) {
		json_object_del(context, "timing_boundary");
		json_object_set_new(doc, "timing_boundary_removed", json_true());
	}
	for (int k = 4; k < argc; k++)
		if (strncmp(argv[k], "ctx.", 4) == 0 && strchr(argv[k], '=')) {
			char *name = strndup(argv[k] + 4, (size_t)(strchr(argv[k], '=') - argv[k] - 4));
			const char *val = strchr(argv[k], '=') + 1;
			json_t *jv = json_loads(val, JSON_DECODE_ANY, NULL);

			json_object_set_new(context, name, jv ? jv : json_string(val));
			free(name);
		}
	json_object_set_new(doc, "context", context);

	/* block reasons, as run decides them */
	if (strcmp(status, "ok") != 0)
		reasons[nreasons++] = opt(argc, argv, "reason", "a run failed");
	if (strcmp(parity, "fail") == 0)
		reasons[nreasons++] = "parity failed";
	if (strcmp(revision, "none") == 0)
		reasons[nreasons++] = "missing provenance: no source revision";
	if (!atoi(opt(argc, argv, "lease", "1")))
		reasons[nreasons++] = "the device lease was not held for the whole session";
	if (cache && strcmp(cache, "cold") != 0)
		reasons[nreasons++] = "a cold claim whose eviction was not verified";
	reasons[nreasons] = NULL;

	/* the key */
	bg_config_path(&cfg, &path, cfg.profile_path);
	if (bg_json_load_file(path.buf, cfg.profile_path, &profile, &ctx) == BG_OK)
		fields = json_incref(json_object_get(json_object_get(profile, "comparison_contract"), "comparison_key"));
	else
		fields = NULL;
	if (!fields) {
		fields = json_array();
		for (i = 0; bg_default_key_fields[i]; i++)
			json_array_append_new(fields, json_string(bg_default_key_fields[i]));
	}
	if (cfg.config_path) {
		bg_strbuf_reset(&path);
		bg_config_path(&cfg, &path, cfg.config_path);
		bg_json_load_file(path.buf, cfg.config_path, &cfgjson, &ctx);
	}
	bg_decide_opts_init(&o);
	{
		json_t *min = json_object_get(json_object_get(profile, "comparison_contract"),
					      "minimum_accepted_sessions_before_hard_threshold");
		if (json_is_integer(min))
			o.min_sessions = (size_t)json_integer_value(min);
	}
	rc = bg_key_compute(fields, context, json_object_get(cfgjson, "key_fields"), &key, key_id, &ctx);
	if (rc == BG_OK)
		rc = bg_store_open(cfg.store, cfg.root, BG_STORE_CREATE, &st, &ctx);
	if (rc == BG_OK)
		rc = bg_store_baseline(st, key_id, "process", 0, (long)o.window, &base, &ctx);
	if (rc) {
		fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
		goto out;
	}
	/* experiment files */
	if (atoi(opt(argc, argv, "experiment", "0"))) {
		struct bg_runs_row rrow = {0};
		json_t *manifest;
		struct bg_strbuf lines = BG_STRBUF_INIT, rel = BG_STRBUF_INIT, abs = BG_STRBUF_INIT;
		char sha[65];
		json_t *r;

		if ((rc = bg_experiment_reserve(&cfg, gate_id, &exp_id, &ctx))) {
			fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
			goto out;
		}
		json_array_foreach(runs, i, r) {
			char *t = json_dumps(r, JSON_COMPACT);
			bg_strbuf_addf(&lines, "%s\n", t);
			free(t);
		}
		bg_strbuf_addf(&rel, "%s/%s/runs.jsonl", cfg.experiments, exp_id.buf);
		bg_config_path(&cfg, &abs, rel.buf);
		if (atoi(opt(argc, argv, "artifacts", "1")))
			bg_file_write_atomic(abs.buf, rel.buf, lines.buf, lines.len, &ctx);
		if (bg_sha256_hex(lines.buf, lines.len, sha, &ctx) != BG_OK) {
			fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
			goto out;
		}
		manifest = json_pack("{s:i, s:s, s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s, s:b, s:o}, s:O, s:{}, s:{s:s, s:s, s:s},"
				     " s:[{s:s, s:s, s:s}], s:{s:s, s:s}}",
				     "schema_version", 1, "experiment_id", exp_id.buf, "status", "completed", "question",
				     "Is the fast path as fast as before?", "paper", "repository", "local", "code",
				     "repository", "local", "revision",
				     revision, "entrypoint", "bin/work", "dirty", atoi(opt(argc, argv, "dirty", "0")),
				     "diff_sha256",
				     atoi(opt(argc, argv, "dirty", "0"))
					     ? json_string("abababababababababababababababababababababababababababababababab")
					     : json_null(),
				     "inputs",
				     json_object_get(context, "inputs"), "parameters", "execution", "host", "box",
				     "backend", "cpu", "device", "Test device", "outputs", "artifact", rel.buf, "sha256",
				     sha, "result", "p50 ok", "timestamps", "started", "2026-11-30T10:00:00Z",
				     "finished", "2026-11-30T10:00:05Z");
		/* written once the session has its id, which run records in it */
		if (atoi(opt(argc, argv, "manifest", "1")))
			exp_manifest = manifest;
		else
			json_decref(manifest);
		rrow.id = exp_id.buf;
		rrow.hypothesis = "Is the fast path as fast as before?";
		rrow.setup = gate_id;
		rrow.status = atoi(opt(argc, argv, "runs_md", "1")) ? "ok" : "running";
		rrow.result = "seeded";
		bg_strbuf_reset(&path);
		bg_strbuf_addf(&path, "[manifest](%s/manifest.json)", exp_id.buf);
		rrow.artifact = path.buf;
		bg_runs_index_put(&cfg, &rrow, &ctx);
		json_object_set_new(doc, "experiment_id", json_string(exp_id.buf));
		bg_strbuf_release(&lines);
		bg_strbuf_release(&rel);
		bg_strbuf_release(&abs);
	}
	/* the decision */
	memset(&facts, 0, sizeof(facts));
	/* wall metrics in seconds, memory in bytes: as run decides */
	facts.metric[BG_METRIC_P50] = p50 * 1e-9;
	facts.metric[BG_METRIC_P95] = p50 * 1.05 * 1e-9;
	facts.metric[BG_METRIC_MAX] = p50 * 1.1 * 1e-9;
	facts.metric[BG_METRIC_TREE_PEAK] = num(json_object_get(json_object_get(stats, "tree_peak_bytes"), "max"));
	facts.metric[BG_METRIC_GPU_PEAK] = num(json_object_get(json_object_get(stats, "gpu_process_peak_bytes"), "max"));
	facts.block_reasons = reasons;
	bfacts = calloc(json_array_size(base) + 1, sizeof(*bfacts));
	json_array_foreach(base, i, row) {
		bfacts[i].id = json_integer_value(json_object_get(row, "id"));
		bfacts[i].metric[BG_METRIC_P50] = num(json_object_get(row, "wall_p50_ns")) * 1e-9;
		bfacts[i].metric[BG_METRIC_P95] = num(json_object_get(row, "wall_p95_ns")) * 1e-9;
		bfacts[i].metric[BG_METRIC_MAX] = num(json_object_get(row, "wall_max_ns")) * 1e-9;
		bfacts[i].metric[BG_METRIC_TREE_PEAK] = num(json_object_get(row, "tree_peak_bytes"));
		bfacts[i].metric[BG_METRIC_GPU_PEAK] = num(json_object_get(row, "gpu_peak_bytes"));
	}
	if (strcmp(tier, "scheduled-profile") != 0 && strcmp(tier, "release-signoff") != 0 &&
	    strcmp(tier, "pr-smoke") != 0 && strcmp(tier, "diagnostic") != 0) {
		fprintf(stderr, "seed: unknown tier '%s'\n", tier);
		rc = BG_EUSAGE;
		free(bfacts);
		goto out;
	}
	if ((rc = bg_store_put_session(st, doc, &id, &ctx))) {
		fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
		free(bfacts);
		goto out;
	}
	facts.id = id;
	if (exp_manifest) {
		json_object_set_new(exp_manifest, "session_id", json_integer(id));
		bg_experiment_write_manifest(&cfg, exp_id.buf, exp_manifest, &ctx);
		json_decref(exp_manifest);
		exp_manifest = NULL;
	}
	d = bg_decide(&facts, bfacts, json_array_size(base), &o, &decision);
	free(bfacts);
	rc = bg_store_set_decision(st, id, key_id, key, decision,
				   d == BG_DECISION_BLOCK ? "rejected"
				   : d == BG_DECISION_INVESTIGATE ? "pending"
								  : "auto-accepted",
				   &ctx);
	if (rc) {
		fprintf(stderr, "seed: %s\n", bg_ctx_message(&ctx));
		goto out;
	}
	printf("%lld %s\n", id, bg_decision_name(d));
out:
	json_decref(exp_manifest);
	json_decref(gate);
	json_decref(doc);
	json_decref(key);
	json_decref(profile);
	json_decref(fields);
	json_decref(decision);
	json_decref(base);
	json_decref(cfgjson);
	bg_store_close(st);
	bg_strbuf_release(&exp_id);
	bg_strbuf_release(&path);
	bg_strbuf_release(&sb);
	bg_config_release(&cfg);
	bg_ctx_release(&ctx);
	return rc;
}

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/bg-seedtool-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Self-test: five sessions make a baseline, a sixth far away is investigate. */
static void test_seed_flow(void **state)
{
	char cmd[512];
	char *args[5];

	(void)state;
	args[0] = dir;
	args[1] = "gate.a";
	args[2] = "scheduled-profile";
	for (int k = 0; k < 5; k++) {
		args[3] = "0.1";
		assert_int_equal(seed(4, args), 0);
	}
	args[3] = "0.2";
	assert_int_equal(seed(4, args), 0);
	{
		struct bg_store *st = NULL;
		struct bg_ctx ctx;
		json_t *v = NULL;

		bg_ctx_init(&ctx);
		snprintf(cmd, sizeof(cmd), "sqlite:.benchgate/store.sqlite3");
		assert_int_equal(bg_store_open(cmd, dir, BG_STORE_READ, &st, &ctx), BG_OK);
		assert_int_equal(bg_store_verdict(st, 6, &v, &ctx), BG_OK);
		assert_string_equal(json_string_value(json_object_get(v, "decision")), "investigate");
		assert_string_equal(json_string_value(json_object_get(v, "curation")), "pending");
		json_decref(v);
		assert_int_equal(bg_store_verdict(st, 5, &v, &ctx), BG_OK);
		assert_string_equal(json_string_value(json_object_get(v, "decision")), "no-baseline");
		json_decref(v);
		bg_store_close(st);
		bg_ctx_release(&ctx);
	}
}

/* test_seedtool sql ROOT STATEMENT...: 0, or 1 with SQLite's message. */
static int run_sql(const char *root, char **sql, int n)
{
	char path[4096];
	struct bg_ctx ctx;
	sqlite3 *db = NULL;
	int rc = 0;

	bg_ctx_init(&ctx);
	snprintf(path, sizeof(path), "%s/.benchgate/store.sqlite3", root);
	if (bg_sqlite_api_load(&ctx) != BG_OK) {
		fprintf(stderr, "test_seedtool: %s\n", bg_ctx_message(&ctx));
		rc = 1;
	} else if (bg_sym_sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		fprintf(stderr, "test_seedtool: %s: %s\n", path, db ? bg_sym_sqlite3_errmsg(db) : "cannot open");
		rc = 1;
	}
	for (int i = 0; !rc && i < n; i++)
		if (bg_sym_sqlite3_exec(db, sql[i], NULL, NULL, NULL) != SQLITE_OK) {
			fprintf(stderr, "test_seedtool: %s: %s\n", sql[i], bg_sym_sqlite3_errmsg(db));
			rc = 1;
		}
	if (db)
		bg_sym_sqlite3_close(db);
	bg_ctx_release(&ctx);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && strcmp(argv[1], "seed") == 0)
		return seed(argc - 2, argv + 2);
	if (argc >= 4 && strcmp(argv[1], "sql") == 0)
		return run_sql(argv[2], argv + 3, argc - 3);
	if (argc > 1) {
		fprintf(stderr, "usage: test_seedtool [seed ROOT GATE TIER P50_SECONDS [NAME=VALUE...]]\n"
				"       test_seedtool sql ROOT STATEMENT...\n");
		return 2;
	}
	{
		const struct CMUnitTest tests[] = {cmocka_unit_test_setup_teardown(test_seed_flow, setup, teardown)};
		return cmocka_run_group_tests(tests, NULL, NULL);
	}
}
