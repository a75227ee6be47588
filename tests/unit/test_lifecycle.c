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
static char machine_lock[96];
static struct bg_config cfg;

static int setup(void **state)
{
	struct bg_ctx ctx;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/benchgate-lifecycle-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	/* the machine lease of these tests: their own, in the scratch folder */
	snprintf(machine_lock, sizeof(machine_lock), "%s/machine.lock", root);
	setenv("BENCHGATE_MACHINE_LOCK", machine_lock, 1);
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

/* A process of the project c that takes the lease of slug for id and
 * dies without releasing it. */
static void die_holding(const struct bg_config *c, const char *slug, const char *id)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct bg_lease l;
		struct bg_ctx ctx;
		bg_ctx_init(&ctx);
		_exit(bg_lease_acquire(c, slug, id, &l, &ctx) == BG_OK ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_lease_dead_owner_replaced(void **state)
{
	struct bg_lease a;
	struct bg_ctx ctx;
	json_t *st;

	(void)state;
	bg_ctx_init(&ctx);
	die_holding(&cfg, "box-2", "20261130-dead");
	assert_int_equal(bg_lease_status(&cfg, &st, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1), "state")), "stale");
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-2", "20261130-new", &a, &ctx), BG_OK);
	assert_true(a.replaced_stale);
	assert_string_equal(json_string_value(json_object_get(a.stale_owner, "experiment_id")), "20261130-dead");
	bg_lease_release(&a);
	bg_ctx_release(&ctx);
}

/* A second project on the machine: its own root and device leases. */
static void other_project(struct bg_config *other, char *dir, size_t size)
{
	struct bg_ctx ctx;

	snprintf(dir, size, "%s/other", root);
	assert_int_equal(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_config_load(other, dir, NULL, &ctx), BG_OK);
	bg_ctx_release(&ctx);
}

static const char *machine_state(json_t **st)
{
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	assert_int_equal(bg_machine_lease_status(st, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	return json_string_value(json_object_get(*st, "state"));
}

/* Two projects, each with a free device lease: one run at a time on the machine. */
static void test_machine_lease_between_projects(void **state)
{
	struct bg_config other;
	struct bg_lease a, b;
	struct bg_strbuf want = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct stat st_file;
	char dir[128];
	json_t *st;
	mode_t old_mask;

	(void)state;
	other_project(&other, dir, sizeof(dir));
	bg_ctx_init(&ctx);
	unlink(machine_lock); /* made by the tests before */
	assert_string_equal(machine_state(&st), "free"); /* never taken: not made either */
	json_decref(st);
	assert_int_equal(access(machine_lock, F_OK), -1);
	old_mask = umask(077);
	assert_int_equal(bg_lease_acquire(&cfg, "box-m", "20261202-first", &a, &ctx), BG_OK);
	umask(old_mask);
	assert_true(bg_lease_machine_held(&a));
	/* any user's run must be able to lock it, whatever this one's umask */
	assert_int_equal(stat(machine_lock, &st_file), 0);
	assert_int_equal(st_file.st_mode & 0777, 0666);
	/* the other project's device is free; the machine is not */
	assert_int_equal(bg_lease_acquire(&other, "box-m", "20261202-second", &b, &ctx), BG_EPRECOND);
	bg_strbuf_addf(&want, "this machine is leased by experiment 20261202-first of the project at %s (pid %ld",
		       root, (long)getpid());
	assert_non_null(strstr(bg_ctx_message(&ctx), want.buf));
	assert_non_null(strstr(bg_ctx_message(&ctx), machine_lock));
	assert_false(b.fd >= 0);
	/* its device lease was not kept: it is free */
	assert_int_equal(bg_lease_status(&other, &st, &ctx), BG_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 0), "state")), "free");
	json_decref(st);
	bg_lease_set_experiment(&a, "20261202-first-2");
	assert_string_equal(machine_state(&st), "held");
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "owner"), "experiment_id")),
			    "20261202-first-2");
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "owner"), "project")), root);
	assert_string_equal(json_string_value(json_object_get(st, "lock")), machine_lock);
	json_decref(st);
	bg_lease_release(&a);
	assert_string_equal(machine_state(&st), "free");
	json_decref(st);
	assert_int_equal(stat(machine_lock, &st_file), 0);
	assert_int_equal(st_file.st_size, 0); /* the record goes with the holder */
	assert_int_equal(bg_lease_acquire(&other, "box-m", "20261202-second", &b, &ctx), BG_OK);
	bg_lease_release(&b);
	bg_strbuf_release(&want);
	bg_config_release(&other);
	bg_ctx_release(&ctx);
}

/* A holder that dies leaves its record, not its lock; a lock file removed
 * while held lets another run in, and the holder knows it lost it. */
static void test_machine_lease_dead_and_removed(void **state)
{
	struct bg_config other;
	struct bg_lease a, b;
	struct bg_ctx ctx;
	char dir[128];
	json_t *st;

	(void)state;
	other_project(&other, dir, sizeof(dir));
	bg_ctx_init(&ctx);
	die_holding(&other, "box-d", "20261202-dead");
	assert_string_equal(machine_state(&st), "free");
	assert_true(json_is_null(json_object_get(st, "owner")));
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-d", "20261202-alive", &a, &ctx), BG_OK);
	assert_string_equal(machine_state(&st), "held"); /* the dead holder's record replaced */
	assert_string_equal(json_string_value(json_object_get(json_object_get(st, "owner"), "experiment_id")),
			    "20261202-alive");
	json_decref(st);
	assert_int_equal(unlink(machine_lock), 0);
	assert_false(bg_lease_machine_held(&a));
	assert_true(bg_lease_held(&a)); /* the device's own lock is intact */
	assert_int_equal(bg_lease_acquire(&other, "box-d", "20261202-in", &b, &ctx), BG_OK);
	bg_lease_release(&b);
	bg_lease_release(&a);
	bg_config_release(&other);
	bg_ctx_release(&ctx);
}

/* Diagnostic sessions share the machine lease: with each other, not with a run. */
static void test_machine_lease_shared(void **state)
{
	struct bg_lease a;
	struct bg_ctx ctx;
	json_t *st;
	bool run_holds;
	int m1, m2;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_machine_lease_share(&m1, &run_holds, &ctx), BG_OK);
	assert_false(run_holds);
	assert_int_equal(bg_machine_lease_share(&m2, &run_holds, &ctx), BG_OK);
	assert_true(m1 >= 0 && m2 >= 0);
	assert_string_equal(machine_state(&st), "shared");
	assert_true(json_is_null(json_object_get(st, "owner")));
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-s", "20261202-wait", &a, &ctx), BG_EPRECOND);
	assert_non_null(strstr(bg_ctx_message(&ctx), "this machine is measuring a diagnostic session ('benchgate measure')"));
	assert_false(a.fd >= 0);
	bg_machine_lease_unshare(m1);
	assert_int_equal(bg_lease_acquire(&cfg, "box-s", "20261202-wait", &a, &ctx), BG_EPRECOND);
	bg_machine_lease_unshare(m2);
	assert_string_equal(machine_state(&st), "free");
	json_decref(st);
	assert_int_equal(bg_lease_acquire(&cfg, "box-s", "20261202-now", &a, &ctx), BG_OK);
	/* and a diagnostic session cannot share it with a run */
	assert_int_equal(bg_machine_lease_share(&m1, &run_holds, &ctx), BG_OK);
	assert_true(run_holds);
	assert_int_equal(m1, -1);
	bg_lease_release(&a);
	bg_ctx_release(&ctx);
}

/* What the lock file must be, and BENCHGATE_MACHINE_LOCK. */
static void test_machine_lease_bad_files(void **state)
{
	struct bg_lease a;
	struct bg_ctx ctx;
	char target[128];
	json_t *st;

	(void)state;
	bg_ctx_init(&ctx);
	/* a link is never followed, a FIFO never waited on */
	snprintf(target, sizeof(target), "%s/target", root);
	unlink(machine_lock);
	assert_int_equal(symlink(target, machine_lock), 0);
	assert_int_equal(bg_lease_acquire(&cfg, "box-b", "x", &a, &ctx), BG_EIO);
	/* the path is BENCHGATE_MACHINE_LOCK's: the variable is what must change */
	assert_non_null(strstr(bg_ctx_message(&ctx), "is a link, not a regular file; point BENCHGATE_MACHINE_LOCK at a file instead"));
	assert_int_equal(access(target, F_OK), -1);
	assert_false(a.fd >= 0);
	assert_string_equal(machine_state(&st), "unusable");
	json_decref(st);
	unlink(machine_lock);
	assert_int_equal(mkfifo(machine_lock, 0666), 0);
	assert_int_equal(bg_lease_acquire(&cfg, "box-b", "x", &a, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "is a FIFO, not a regular file"));
	unlink(machine_lock);
	/* the device lease a refused machine lease leaves is free again */
	assert_int_equal(bg_lease_status(&cfg, &st, &ctx), BG_OK);
	for (size_t i = 0; i < json_array_size(st); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(st, i), "device")), "box-b") == 0)
			assert_string_equal(json_string_value(json_object_get(json_array_get(st, i), "state")), "free");
	json_decref(st);
	setenv("BENCHGATE_MACHINE_LOCK", "relative.lock", 1);
	assert_int_equal(bg_lease_acquire(&cfg, "box-b", "x", &a, &ctx), BG_EPRECOND);
	assert_non_null(strstr(bg_ctx_message(&ctx), "BENCHGATE_MACHINE_LOCK ('relative.lock') must be an absolute path"));
	assert_int_equal(bg_machine_lease_status(&st, &ctx), BG_EPRECOND);
	{
		bool run_holds;
		int fd;
		assert_int_equal(bg_machine_lease_share(&fd, &run_holds, &ctx), BG_EPRECOND);
		assert_false(run_holds);
	}
	setenv("BENCHGATE_MACHINE_LOCK", machine_lock, 1);
	assert_int_equal(bg_lease_acquire(&cfg, "box-b", "x", &a, &ctx), BG_OK);
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
				  "[manifest](x)", NULL, NULL, NULL};
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
	struct bg_runs_row row = {NULL, "q?", "box", "running", "in progress", "[manifest](x)", NULL, NULL, NULL};
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
	assert_int_equal(bg_experiment_mark_failed(&cfg, id.buf, m, reason, "error.json", note, NULL, &ctx), BG_OK);
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
	struct bg_runs_row row = {"20261201-new", "Q?", "box", "running", "", "[manifest](x)", NULL, NULL, NULL};
	/* the header as a person may write it: "| Id |", "|id|" */
	static const char *const headers[] = {"| id | hypothesis |", "| Id | Hypothesis |", "|id|hypothesis|"};
	struct bg_ctx ctx;
	const char *notes, *added;

	(void)state;
	bg_ctx_init(&ctx);
	bg_config_path(&cfg, &path, "experiments/RUNS.md");
	for (size_t h = 0; h < sizeof(headers) / sizeof(headers[0]); h++) {
		char doc[400];

		snprintf(doc, sizeof(doc),
			 "# Runs\n\n%s setup | status | result | artifact |\n"
			 "|---|---|---|---|---|---|\n| 20261130-old | Q | box | ok | fine | [m](y) |\n"
			 "\n## Notes\n\nSee the wiki.\n",
			 headers[h]);
		assert_int_equal(bg_file_write_atomic(path.buf, NULL, doc, strlen(doc), &ctx), BG_OK);
		assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_OK);
		bg_strbuf_reset(&text);
		assert_int_equal(bg_file_read(path.buf, NULL, &text, &ctx), BG_OK);
		added = strstr(text.buf, "| 20261201-new |");
		notes = strstr(text.buf, "## Notes");
		assert_non_null(added);
		assert_non_null(notes);
		assert_true(added < notes);
		assert_non_null(strstr(text.buf, "| 20261130-old | Q | box | ok | fine | [m](y) |\n| 20261201-new |"));
		assert_non_null(strstr(text.buf, "\n\n## Notes\n\nSee the wiki.\n"));
	}
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
}

static size_t conflict(const char *text)
{
	return bg_runs_index_conflict(text, strlen(text));
}

/* Merge-conflict markers: found with their line; RUNS.md holding one is
 * refused, never rewritten with it. */
static void test_runs_conflict(void **state)
{
	struct bg_strbuf path = BG_STRBUF_INIT, text = BG_STRBUF_INIT;
	struct bg_runs_row row = {"20261202-new", "Q?", "box", "running", "", "[manifest](x)", NULL, NULL, NULL};
	const char *doc = "# Runs\n\n| id | hypothesis | setup | status | result | artifact |\n"
			  "|---|---|---|---|---|---|\n<<<<<<< HEAD\n| 20261130-a | Q | box | ok | fine | [m](y) |\n"
			  "=======\n| 20261130-b | Q | box | ok | fine | [m](y) |\n>>>>>>> topic\n";
	struct bg_ctx ctx;

	(void)state;
	assert_int_equal(bg_runs_index_conflict(doc, strlen(doc)), 5);
	assert_int_equal(conflict("a\r\n=======\r\nb\n"), 2);
	assert_int_equal(conflict("a\n>>>>>>>"), 2);   /* at the end, no line end */
	assert_int_equal(conflict("|||||||| x\n"), 0); /* eight: not one */
	assert_int_equal(conflict("======= x\n"), 0);  /* a heading rule, say */
	assert_int_equal(conflict("x <<<<<<< y\n"), 0);
	assert_int_equal(bg_runs_index_conflict("", 0), 0);
	bg_ctx_init(&ctx);
	bg_config_path(&cfg, &path, "experiments/RUNS.md");
	assert_int_equal(bg_file_write_atomic(path.buf, NULL, doc, strlen(doc), &ctx), BG_OK);
	assert_int_equal(bg_runs_index_put(&cfg, &row, &ctx), BG_EPRECOND);
	assert_string_equal(bg_ctx_message(&ctx),
			    "experiments/RUNS.md:5: a merge conflict marker: resolve the conflict (keep both sides' rows, one experiment a row) and commit it, then run again");
	assert_int_equal(bg_file_read(path.buf, NULL, &text, &ctx), BG_OK);
	assert_string_equal(text.buf, doc);
	bg_strbuf_release(&path);
	bg_strbuf_release(&text);
	bg_ctx_release(&ctx);
}

/* A path through folders not made yet is named as the kernel will read it
 * once they are: ".." after a name not there goes back; after a link, to
 * the real parent of what it leads to (render --output nd/../L/../x wrote
 * over the file L/.. holds). */
static void expect_named(const char *path, const char *want)
{
	char *got = bg_path_named_later(path), full[256];

	snprintf(full, sizeof(full), "%s%s", root, want);
	assert_non_null(got);
	assert_string_equal(got, full);
	free(got);
}

static void test_path_named_later(void **state)
{
	char dir[128], cwd[4096];
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(dir, sizeof(dir), "%s/d/sub", root);
	assert_int_equal(bg_mkdirs(dir, &ctx), BG_OK);
	bg_ctx_release(&ctx);
	assert_int_equal(chdir(root), 0);
	assert_int_equal(symlink("d/sub", "L"), 0);
	expect_named("x/../y", "/y");
	expect_named("x/y/../../z", "/z");
	expect_named("x/../L/../f", "/d/f");
	expect_named("L/f", "/d/sub/f");
	expect_named("./d//sub/./g", "/d/sub/g");
	expect_named("nope/../nope2/../L/../../d", "/d");
	assert_int_equal(unlink("L"), 0);
	assert_int_equal(chdir(cwd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_named_later),
		cmocka_unit_test(test_lease_exclusive),
		cmocka_unit_test(test_lease_dead_owner_replaced),
		cmocka_unit_test(test_machine_lease_between_projects),
		cmocka_unit_test(test_machine_lease_dead_and_removed),
		cmocka_unit_test(test_machine_lease_shared),
		cmocka_unit_test(test_machine_lease_bad_files),
		cmocka_unit_test(test_experiment_ids),
		cmocka_unit_test(test_experiment_ids_exhausted),
		cmocka_unit_test(test_manifest_and_runs),
		cmocka_unit_test(test_failed_reason_not_utf8),
		cmocka_unit_test(test_runs_table_then_notes),
		cmocka_unit_test(test_runs_conflict),
	};
	return cmocka_run_group_tests_name("lifecycle", tests, setup, teardown);
}
