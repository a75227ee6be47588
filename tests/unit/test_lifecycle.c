/*
 * test_lifecycle.c - leases, experiment ids, manifests and RUNS.md updates.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchgate/fsutil.h"
#include "benchgate/json.h"
#include "benchgate/lifecycle.h"

static char root[64];
static struct bg_config cfg;

static int setup(void **state)
{
	struct bg_ctx ctx;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/benchgate-lifecycle-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	bg_ctx_init(&ctx);
	if (bg_config_load(&cfg, root, NULL, &ctx) != BG_OK)
		return -1;
	bg_ctx_release(&ctx);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	bg_config_release(&cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_lease_exclusive(void **state)
{
	struct bg_lease a, b;
	struct bg_ctx ctx;
	json_t *st;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_lease_acquire(&cfg, "box-1", "20261130-x", &a, &ctx), BG_OK);
	assert_true(bg_lease_held(&a));
	assert_false(a.replaced_stale);
	assert_int_equal(bg_lease_acquire(&cfg, "box-1", "20261130-y", &b, &ctx), BG_EPRECOND);
	assert_non_null(strstr(bg_ctx_message(&ctx), "device 'box-1' is leased by experiment 20261130-x"));
	assert_int_equal(bg_lease_status(&cfg, &st, &ctx), BG_OK);
	assert_int_equal(json_array_size(st), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 0), "state")), "held");
	json_decref(st);
	bg_lease_release(&a);
	assert_int_equal(bg_lease_status(&cfg, &st, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 0), "state")), "free");
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-1", "20261130-y", &b, &ctx), BG_OK);
	bg_lease_release(&b);
	assert_int_equal(bg_lease_acquire(&cfg, "../etc", "x", &b, &ctx), BG_ECHECK);
	assert_int_equal(bg_lease_acquire(&cfg, ".hidden", "x", &b, &ctx), BG_ECHECK);
	bg_ctx_release(&ctx);
}

static void test_lease_dead_owner_replaced(void **state)
{
	struct bg_lease a;
	struct bg_ctx ctx;
	json_t *st;
	pid_t pid;
	int status;

	(void)state;
	bg_ctx_init(&ctx);
	pid = fork();
	if (pid == 0) { /* takes the lease and dies without releasing it */
		struct bg_lease l;
		struct bg_ctx c;
		bg_ctx_init(&c);
		_exit(bg_lease_acquire(&cfg, "box-2", "20261130-dead", &l, &c) == BG_OK ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(bg_lease_status(&cfg, &st, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1), "state")), "stale");
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-2", "20261130-new", &a, &ctx), BG_OK);
	assert_true(a.replaced_stale);
	assert_string_equal(json_string_value(json_object_get(a.stale_owner, "experiment_id")), "20261130-dead");
	bg_lease_release(&a);
	bg_ctx_release(&ctx);
}

static void test_experiment_ids(void **state)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_experiment_reserve(&cfg, "bin.cpu.x/y", &a, &ctx), BG_OK);
	assert_int_equal(bg_experiment_reserve(&cfg, "bin.cpu.x/y", &b, &ctx), BG_OK);
	assert_int_equal(strlen(a.buf), 8 + strlen("-bin-cpu-x_y"));
	assert_string_equal(a.buf + 8, "-bin-cpu-x_y");
	assert_int_equal(strncmp(a.buf, b.buf, a.len), 0);
	assert_string_equal(b.buf + a.len, "-2");
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
	bg_ctx_release(&ctx);
}

/* Every id of a gate taken for the day (the base and -2 .. -9999): the next
 * reservation fails, naming them, and leaves no folder behind. */
static void test_experiment_ids_exhausted(void **state)
{
	struct bg_strbuf a = BG_STRBUF_INIT, b = BG_STRBUF_INIT, path = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	int rc;

	(void)state;
	bg_ctx_init(&ctx);
	for (int attempt = 0; attempt < 2; attempt++) { /* again if the day changed meanwhile */
		bg_strbuf_reset(&a);
		assert_int_equal(bg_experiment_reserve(&cfg, "full", &a, &ctx), BG_OK);
		for (int n = 2; n < 10000; n++) {
			bg_strbuf_reset(&path);
			bg_strbuf_addf(&path, "%s/experiments/%s-%d", root, a.buf, n);
			if (mkdir(path.buf, 0755) != 0)
				assert_int_equal(errno, EEXIST);
		}
		bg_strbuf_reset(&b);
		rc = bg_experiment_reserve(&cfg, "full", &b, &ctx);
		if (rc == BG_OK && strncmp(a.buf, b.buf, 8) != 0)
			continue;
		break;
	}
	assert_int_equal(rc, BG_EIO);
	bg_strbuf_reset(&path);
	bg_strbuf_addf(&path, "experiments: no free experiment id for '%s' today: it and '%s-2' to '%s-9999' are all taken",
		       a.buf, a.buf, a.buf);
	assert_true(strncmp(bg_ctx_message(&ctx), path.buf, path.len) == 0);
	assert_non_null(strstr(bg_ctx_message(&ctx), "move some of today's experiments of this gate elsewhere"));
	bg_strbuf_release(&a);
	bg_strbuf_release(&b);
	bg_strbuf_release(&path);
	bg_ctx_release(&ctx);
}

static void test_manifest_and_runs(void **state)
{
	struct bg_strbuf id = BG_STRBUF_INIT, path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_runs_row row = {NULL, "Is <b>it</b> fast? R&D &amp; &#124;", "box; gate", "running", "",
				  "[manifest](x)"};
	struct bg_ctx ctx;
	json_t *m, *back;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_experiment_reserve(&cfg, "g", &id, &ctx), BG_OK);
	m = json_pack("{s:i, s:s, s:s}", "schema_version", 1, "experiment_id", id.buf, "status", "running");
	assert_int_equal(bg_experiment_write_manifest(&cfg, id.buf, m, &ctx), BG_OK);
	assert_int_equal(bg_experiment_read_manifest(&cfg, id.buf, &back, &ctx), BG_OK);
	assert_true(json_equal(m, back));
	json_decref(back);
	json_decref(m);
	row.id = id.buf;
	assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_OK);
	row.status = "ok";
	row.result = "p50 1 ms | exact";
	row.hypothesis = NULL; /* kept from the existing row */
	assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_OK);
	bg_config_path(&cfg, &path, "experiments/RUNS.md");
	assert_int_equal(bg_file_read(path.buf, NULL, &text, &ctx), BG_OK);
	assert_non_null(strstr(text.buf, "| id | hypothesis | setup | status | result | artifact |"));
	/* a '|' in a cell is written as &#124;: check splits rows at every '|' */
	assert_non_null(strstr(text.buf, "| ok | p50 1 ms &#124; exact | [manifest](x) |\n"));
	assert_null(strstr(text.buf, "| running |"));
	/* '<' and a '&' that starts a character reference are escaped, so
	 * Markdown shows the question as typed; the kept cell is not escaped
	 * again */
	assert_non_null(strstr(text.buf, "| Is &lt;b>it&lt;/b> fast? R&D &amp;amp; &amp;#124; | box; gate | ok |"));
	bg_strbuf_release(&id);
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
}

/* A failure whose reason quotes bytes that are not UTF-8 (a program's
 * words, a file's name) is recorded all the same: the manifest, the note
 * and RUNS.md hold them as \xNN. */
static void test_failed_reason_not_utf8(void **state)
{
	struct bg_strbuf id = BG_STRBUF_INIT, path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_runs_row row = {NULL, "q?", "box", "running", "in progress", "[manifest](x)"};
	const char *reason = "cannot open 'out/b\xff" "d.bin'";
	struct bg_ctx ctx;
	json_t *m, *back, *note;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_experiment_reserve(&cfg, "g", &id, &ctx), BG_OK);
	m = json_pack("{s:i, s:s, s:s, s:[]}", "schema_version", 1, "experiment_id", id.buf, "status", "running",
		      "outputs");
	assert_int_equal(bg_experiment_write_manifest(&cfg, id.buf, m, &ctx), BG_OK);
	row.id = id.buf;
	assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_OK);
	note = json_pack("{s:o}", "reason", bg_json_text(reason));
	assert_int_equal(bg_experiment_mark_failed(&cfg, id.buf, m, reason, "error.json", note, &ctx), BG_OK);
	assert_int_equal(bg_experiment_read_manifest(&cfg, id.buf, &back, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(back, "status")), "failed");
	assert_string_equal(json_string_value(json_object_get(back, "failure_reason")), "cannot open 'out/b\\xffd.bin'");
	bg_config_path(&cfg, &path, "experiments/RUNS.md");
	assert_int_equal(bg_file_read(path.buf, NULL, &text, &ctx), BG_OK);
	assert_non_null(strstr(text.buf, "| failed | failed: cannot open 'out/b\\xffd.bin' |"));
	json_decref(back);
	json_decref(note);
	json_decref(m);
	bg_strbuf_release(&id);
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
}

/* A new row goes at the end of the table, before any section after it. */
static void test_runs_table_then_notes(void **state)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_runs_row row = {"20261201-new", "Q?", "box", "running", "", "[manifest](x)"};
	const char *doc = "# Runs\n\n| id | hypothesis | setup | status | result | artifact |\n"
			  "|---|---|---|---|---|---|\n| 20261130-old | Q | box | ok | fine | [m](y) |\n"
			  "\n## Notes\n\nSee the wiki.\n";
	struct bg_ctx ctx;
	const char *notes, *added;

	(void)state;
	bg_ctx_init(&ctx);
	bg_config_path(&cfg, &path, "experiments/RUNS.md");
	assert_int_equal(bg_file_write_atomic(path.buf, NULL, doc, strlen(doc), &ctx), BG_OK);
	assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_OK);
	assert_int_equal(bg_file_read(path.buf, NULL, &text, &ctx), BG_OK);
	added = strstr(text.buf, "| 20261201-new |");
	notes = strstr(text.buf, "## Notes");
	assert_non_null(added);
	assert_non_null(notes);
	assert_true(added < notes);
	assert_non_null(strstr(text.buf, "| 20261130-old | Q | box | ok | fine | [m](y) |\n| 20261201-new |"));
	assert_non_null(strstr(text.buf, "\n\n## Notes\n\nSee the wiki.\n"));
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_exclusive),
		cmocka_unit_test(test_lease_dead_owner_replaced),
		cmocka_unit_test(test_experiment_ids),
		cmocka_unit_test(test_experiment_ids_exhausted),
		cmocka_unit_test(test_manifest_and_runs),
		cmocka_unit_test(test_failed_reason_not_utf8),
		cmocka_unit_test(test_runs_table_then_notes),
	};
	return cmocka_run_group_tests_name("lifecycle", tests, setup, teardown);
}
