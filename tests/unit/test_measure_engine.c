/*
 * test_measure_engine.c - the engine through the library API: document
 * shape, counts, nothing invented, blocking after a failed smoke run, a
 * command that cannot start, option checks, timeout; the process-tree scan;
 * the marks that find an output a run did not write (stale.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchgate/measure.h"
#include "benchgate/profile.h"
#include "benchgate/provenance.h"
#include "measure/internal.h"

static json_t *run(char **argv, int argc, void (*tweak)(struct bg_measure_opts *), int want)
{
	struct bg_measure_opts o;
	struct bg_ctx ctx;
	json_t *doc = NULL;

	bg_measure_opts_init(&o);
	o.argv = argv;
	o.argc = argc;
	o.runs = 3;
	o.root = "/";
	if (tweak)
		tweak(&o);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_measure_session(&o, &doc, &ctx), want);
	if (want != BG_OK)
		assert_true(strlen(bg_ctx_message(&ctx)) > 0);
	bg_ctx_release(&ctx);
	return doc;
}

static void test_true(void **state)
{
	char *argv[] = {(char *)"true", NULL};
	json_t *doc = run(argv, 1, NULL, BG_OK), *runs, *r;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "status")), "ok");
	runs = json_object_get(doc, "runs");
	assert_int_equal(json_array_size(runs), 5); /* smoke, warmup, 3 timed */
	r = json_array_get(runs, 0);
	assert_string_equal(json_string_value(json_object_get(r, "phase")), "smoke");
	assert_int_equal(json_integer_value(json_object_get(r, "schema_version")), 1);
	assert_int_equal(json_integer_value(json_object_get(r, "exit_status")), 0);
	assert_true(json_integer_value(json_object_get(r, "wall_ns")) > 0);
	assert_true(json_is_null(json_object_get(r, "parity")));
	assert_true(json_is_null(json_object_get(r, "cache")));
	r = json_array_get(runs, 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "flags"), 0)),
			    "first_timed");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(doc, "statistics"), "wall_ns"), "count")), 3);
	/* no GPU library here: null, not zero */
	assert_true(json_is_null(json_object_get(json_object_get(doc, "statistics"), "gpu_process_peak_bytes")));
	assert_non_null(json_object_get(json_object_get(doc, "provenance"), "host"));
	json_decref(doc);
}

/* A program that embeds the library keeps its own children: a session
 * reaps only what its runs left, and gives the subreaper setting back. */
static void test_callers_children(void **state)
{
	char *argv[] = {(char *)"sleep", (char *)"0.05", NULL};
	pid_t child;
	int st = 0, sub = -1;
	json_t *doc;

	(void)state;
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(42); /* the caller's: done before the session's first run */
	usleep(20000);
	doc = run(argv, 2, NULL, BG_OK);
	json_decref(doc);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 42);
	assert_int_equal(prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0), 0);
	assert_int_equal(sub, 0);
}

static void test_failing_smoke_blocks(void **state)
{
	char *argv[] = {(char *)"false", NULL};
	json_t *doc = run(argv, 1, NULL, BG_OK);

	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "status")), "blocked");
	assert_int_equal(json_array_size(json_object_get(doc, "runs")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "counts"), "timed")), 0);
	assert_non_null(strstr(json_string_value(json_object_get(doc, "reason")), "exited with status 1"));
	assert_true(json_is_null(json_object_get(json_object_get(doc, "statistics"), "wall_ns")));
	json_decref(doc);
}

static void test_cannot_start(void **state)
{
	char *argv[] = {(char *)"/nonexistent/benchgate-test", NULL};

	(void)state;
	assert_null(run(argv, 1, NULL, BG_EIO));
}

static void zero_runs(struct bg_measure_opts *o)
{
	o->runs = 0;
}

static void short_timeout(struct bg_measure_opts *o)
{
	o->timeout = 0.2;
	o->warmups = 0;
}

static void test_bad_options_and_timeout(void **state)
{
	char *argv[] = {(char *)"true", NULL};
	char *slow[] = {(char *)"sleep", (char *)"5", NULL};
	json_t *doc;

	(void)state;
	assert_null(run(argv, 1, zero_runs, BG_EUSAGE));
	assert_null(run(argv, 0, NULL, BG_EUSAGE));
	doc = run(slow, 2, short_timeout, BG_OK);
	assert_string_equal(json_string_value(json_object_get(doc, "status")), "blocked");
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(doc, "runs"), 0), "timed_out")));
	assert_non_null(strstr(json_string_value(json_object_get(doc, "reason")), "timed out"));
	json_decref(doc);
}

static void test_secret_names(void **state)
{
	(void)state;
	assert_true(bg_provenance_secret_name("GITHUB_TOKEN"));
	assert_true(bg_provenance_secret_name("aws_secret_access_key"));
	assert_true(bg_provenance_secret_name("DB_PASSWORD"));
	assert_true(bg_provenance_secret_name("MY_CREDENTIALS"));
	assert_false(bg_provenance_secret_name("PATH"));
	assert_false(bg_provenance_secret_name("OMP_NUM_THREADS"));
	/* more ways to name a secret; a part such as AUTH only whole */
	assert_true(bg_provenance_secret_name("PASSWD"));
	assert_true(bg_provenance_secret_name("gpg_passphrase"));
	assert_true(bg_provenance_secret_name("Proxy-Authorization"));
	assert_true(bg_provenance_secret_name("Set-Cookie"));
	assert_true(bg_provenance_secret_name("SSH_PRIVATE_KEY"));
	assert_true(bg_provenance_secret_name("--auth"));
	assert_true(bg_provenance_secret_name("DB_PASS"));
	assert_true(bg_provenance_secret_name("pw"));
	assert_false(bg_provenance_secret_name("AUTHOR"));
	assert_false(bg_provenance_secret_name("GIT_AUTHOR_NAME"));
	assert_false(bg_provenance_secret_name("XAUTHORITY"));
	assert_false(bg_provenance_secret_name("PWD"));
	assert_false(bg_provenance_secret_name("--passes"));
	assert_false(bg_provenance_secret_name(""));
}

static char *scrub(const char *s, const char *home)
{
	struct bg_strbuf sb = BG_STRBUF_INIT;

	bg_provenance_scrub_text(s, home, NULL, &sb);
	return bg_strbuf_detach(&sb, NULL);
}

#define assert_scrub(in, home, want)                 \
	do {                                         \
		char *got_ = scrub(in, home);        \
		assert_string_equal(got_, want);     \
		assert_false(bg_profile_private_path(got_)); \
		free(got_);                          \
	} while (0)

/* What is written holds no home path and no secret: $HOME becomes "~" where
 * it starts a path, any other /home/NAME or /users/NAME "~NAME", secret
 * option and assignment values "<redacted>"; other text is unchanged. */
static void test_scrub(void **state)
{
	static const char *const marks[] = {"/home/", "/HOME/", "/Users/", "/users/", "/home//"};
	static const char *const around[] = {"", " ", "=", ":", "'", "\"", "(", ","};
	static const char *const after[] = {"", " ", "=", "a", "/x", "'", "~", "/home/"};
	bool pending = false;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	json_t *doc;

	(void)state;
	assert_scrub("/home/ann/x.h5", "/home/ann", "~/x.h5");
	assert_scrub("/home/ann", "/home/ann/", "~");
	assert_scrub("cd /home/ann && ./a /home/annie/b", "/home/ann", "cd ~ && ./a ~annie/b");
	assert_scrub("--data=/home/ann/d,/Users/Bob/e", "/home/ann", "--data=~/d,~Bob/e");
	assert_scrub("/net/srv/home/carl/x and file:///home/dan/y", NULL, "~carl/x and file:~dan/y");
	assert_scrub("/home/ and /home//x", NULL, "~ and ~/x");
	{ /* relative paths name no home directory */
		char *kept = scrub("out/home/ann/x.npy --o=data/Users/b", "/home/ann");

		assert_string_equal(kept, "out/home/ann/x.npy --o=data/Users/b");
		free(kept);
	}
	assert_scrub("/root/x /rootx /a/root/b", "/root", "~/x /rootx /a/root/b");
	assert_scrub("/x/y /data/homes/z home/a", "/", "/x/y /data/homes/z home/a");
	assert_scrub("prog --token=abc API_KEY=s3 ./run", NULL, "prog --token=<redacted> API_KEY=<redacted> ./run");
	assert_scrub("prog --password 'a b' -n 3", NULL, "prog --password <redacted> -n 3");
	assert_scrub("prog --password -n 3 --sort=x", NULL, "prog --password -n 3 --sort=x");
	assert_scrub("https://h/q?x=1 --secret=\"a b\" z", NULL, "https://h/q?x=1 --secret=<redacted> z");
	assert_scrub("", "/home/ann", "");
	/* secrets inside a word: a URL's password (its user info with no
	 * password), a secret query parameter, a header whose name looks
	 * secret (its value to the closing quote or the end), Bearer's and
	 * Basic's word; a single-letter option is kept */
	assert_scrub("https://user:pw123@example.com/repo.git https://ghp_abc@github.com/x http://u:@h", NULL,
		     "https://user:<redacted>@example.com/repo.git https://<redacted>@github.com/x http://u:@h");
	assert_scrub("git clone https://u:p@h/r?x=1&access_token=t#f", NULL,
		     "git clone https://u:<redacted>@h/r?x=1&access_token=<redacted>#f");
	assert_scrub("Authorization: Bearer sk-live-XYZ", NULL, "Authorization: <redacted>");
	assert_scrub("--header=X-Api-Key: zzz", NULL, "--header=X-Api-Key: <redacted>");
	assert_scrub("curl -H 'Cookie: a=b; c=d' -H \"proxy-authorization:Basic QQ==\" https://h", NULL,
		     "curl -H 'Cookie: <redacted>' -H \"proxy-authorization:<redacted>\" https://h");
	assert_scrub("Set-Cookie: s=1 (more)", NULL, "Set-Cookie: <redacted>");
	assert_scrub("x bearer tok y Basic QQ== z", NULL, "x bearer <redacted> y Basic <redacted> z");
	assert_scrub("PASSWD=x GPG_PASSPHRASE=y AUTHOR=ann -p s3cr3t", NULL,
		     "PASSWD=<redacted> GPG_PASSPHRASE=<redacted> AUTHOR=ann -p s3cr3t");
	/* a quoted value of a quoted secret name, as JSON or a Python dict
	 * prints it; other names and unquoted values are kept */
	assert_scrub("config {\"api_key\": \"abc def\", \"n\": 1, \"author\": \"ann\"}", NULL,
		     "config {\"api_key\": \"<redacted>\", \"n\": 1, \"author\": \"ann\"}");
	assert_scrub("{'token': 'xyz', 'password':'p w', 'user': 'ann', 'pin': 12}", NULL,
		     "{'token': '<redacted>', 'password':'<redacted>', 'user': 'ann', 'pin': 12}");
	assert_scrub("\"Secret\" : \"a\\\"b\" tail", NULL, "\"Secret\" : \"<redacted>");
	assert_scrub("\"token\": \"never closed", NULL, "\"token\": \"<redacted>");
	assert_scrub("{\"token\": \"\"}", NULL, "{\"token\": \"\"}");
	assert_scrub("Content-Type: text/plain author: ann https://h:8080/x", NULL,
		     "Content-Type: text/plain author: ann https://h:8080/x");
	{ /* what is written scrubs to itself */
		static const char *const texts[] = {
			"Authorization: Bearer a b", "'X-Api-Key: a b'=c", "-a://u:p=q@key v", "x://a@b@c/d",
			"https://h/q?token=a=b&c", "Bearer 'a b'", "'PW:\f'=", "--header=Cookie:a=b d",
			"{\"token\": \"a", "'pw':'x'y'", "\"a\": \"token\": \"v\" \"key\":'q\\'"};

		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			char *once = scrub(texts[i], NULL), *twice = scrub(once, NULL);

			assert_string_not_equal(once, texts[i]);
			assert_string_equal(twice, once);
			free(once);
			free(twice);
		}
	}
	/* a home a redaction could make (one holding '<', '>', '=', ':' or
	 * white space, which "<redacted>" is written after) is not looked for,
	 * so that what is written scrubs to itself (fuzz_scrub); /home/NAME
	 * still is */
	{
		static const char *const homes[] = {"/x/secret=<redacted>", "/x/token=", "/x/<y>"};

		for (size_t h = 0; h < sizeof(homes) / sizeof(homes[0]); h++) {
			char *once = scrub("/x/secret=abc /x/token=abc /home/ann/d", homes[h]), *twice = scrub(once, homes[h]);

			assert_string_equal(once, "/x/secret=<redacted> /x/token=<redacted> ~ann/d");
			assert_string_equal(twice, once);
			free(once);
			free(twice);
		}
	}
	{
		static const char *const homes[] = {"/a --password ", "/a Cookie:", "/a X-Key: ", "/a Bearer "};
		static const char *const texts[] = {"/a --password v", "/a Cookie:v", "/a X-Key: v", "/a Bearer v"};
		static const char *const want[] = {"/a --password <redacted>", "/a Cookie:<redacted>",
						   "/a X-Key: <redacted>", "/a Bearer <redacted>"};

		for (size_t h = 0; h < sizeof(homes) / sizeof(homes[0]); h++) {
			char *once = scrub(texts[h], homes[h]), *twice = scrub(once, homes[h]);

			assert_string_equal(once, want[h]);
			assert_string_equal(twice, once);
			free(once);
			free(twice);
		}
	}
	/* an argv array: the word after "--password" is the value, whole */
	bg_provenance_scrub_text("--password", NULL, &pending, &sb);
	assert_true(pending);
	bg_strbuf_reset(&sb);
	bg_provenance_scrub_text("s e", NULL, &pending, &sb);
	assert_string_equal(sb.buf, "<redacted>");
	assert_false(pending);
	bg_strbuf_release(&sb);
	doc = json_pack("{s:[s,s,s,s], s:{s:s}, s:[{s:s}]}", "command", "/home/ann/bin/x", "--api-key", "k",
			"/Users/ann/o", "environment", "DATA", "/home/ann/d", "runs", "path", "/home/bob/o");
	bg_provenance_scrub(doc, "/home/ann");
	{
		char *text = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
		assert_string_equal(text, "{\"command\":[\"~/bin/x\",\"--api-key\",\"<redacted>\",\"~ann/o\"],"
					  "\"environment\":{\"DATA\":\"~/d\"},\"runs\":[{\"path\":\"~bob/o\"}]}");
		free(text);
	}
	json_decref(doc);
	/* whatever surrounds a home marker, the result passes check's test */
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++)
		for (size_t a = 0; a < sizeof(around) / sizeof(around[0]); a++)
			for (size_t b = 0; b < sizeof(after) / sizeof(after[0]); b++) {
				char in[64], *got;

				snprintf(in, sizeof(in), "%s%sname%s", around[a], marks[m], after[b]);
				got = scrub(in, "/home/name");
				assert_false(bg_profile_private_path(got));
				free(got);
			}
}

/* bg_provenance_git_changed(a, b) says want (NULL: no change, nothing said). */
static void expect_change(const json_t *a, const json_t *b, const char *want)
{
	struct bg_strbuf why = BG_STRBUF_INIT;

	assert_int_equal(bg_provenance_git_changed(a, b, &why), want != NULL);
	assert_string_equal(why.len ? why.buf : "", want ? want : "");
	bg_strbuf_release(&why);
}

/* The source moved: another revision, dirty flag or diff; nothing claimed
 * (no revision at the start) is nothing to contradict. */
static void test_git_changed(void **state)
{
	json_t *a = json_pack("{s:s, s:b, s:n}", "revision", "1111111111111111111111111111111111111111", "dirty", 0,
			      "diff_sha256");
	json_t *b = json_deep_copy(a), *none = json_pack("{s:n, s:n, s:n}", "revision", "dirty", "diff_sha256");

	(void)state;
	expect_change(a, b, NULL);
	expect_change(none, a, NULL);
	json_object_set_new(b, "dirty", json_true());
	json_object_set_new(b, "diff_sha256", json_string("ab"));
	expect_change(a, b, "the uncommitted changes to the source changed");
	expect_change(b, a, "the uncommitted changes to the source were committed or undone");
	json_object_set_new(b, "revision", json_string("2222222222222222222222222222222222222222"));
	expect_change(a, b, "the source revision changed from 111111111111 to 222222222222");
	expect_change(a, none, "the source revision changed from 111111111111 to none");
	json_object_set_new(b, "revision", json_string("1111111111111111111111111111111111111111"));
	json_object_set_new(b, "dirty", json_null());
	json_object_set_new(b, "diff_sha256", json_null());
	expect_change(a, b, "the source could not be read again after the last run (git status or git diff failed)");
	json_object_set_new(a, "dirty", json_true());
	json_object_set_new(a, "diff_sha256", json_string("ab"));
	json_object_set_new(b, "dirty", json_true());
	json_object_set_new(b, "diff_sha256", json_null());
	expect_change(a, b, "the source could not be read again after the last run (git status or git diff failed)");
	/* what could not be read at the start either (no libcrypto for the diff hash) is no change */
	expect_change(b, b, NULL);
	json_object_set_new(b, "dirty", json_null());
	expect_change(b, b, NULL);
	json_decref(a);
	json_decref(b);
	json_decref(none);
}

/* Captured output: the files hold each run's stdout and stderr; a capture
 * folder that does not exist names the file, not the command, as the cause. */
static void test_capture(void **state)
{
	char dir[] = "/tmp/bg-capture-XXXXXX", path[64], buf[64];
	char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)"echo out; echo err >&2", NULL};
	struct bg_measure_opts o;
	struct bg_ctx ctx;
	json_t *doc = NULL;
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	bg_measure_opts_init(&o);
	o.argv = argv;
	o.argc = 3;
	o.runs = 1;
	o.warmups = 0;
	o.root = "/";
	o.capture_dir = dir;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_measure_session(&o, &doc, &ctx), BG_OK);
	json_decref(doc);
	snprintf(path, sizeof(path), "%s/run-002.stderr", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, "err\n");
	for (int i = 1; i <= 2; i++) {
		snprintf(path, sizeof(path), "%s/run-%03d.stdout", dir, i);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/run-%03d.stderr", dir, i);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	doc = NULL;
	assert_int_equal(bg_measure_session(&o, &doc, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "cannot open '"));
	assert_non_null(strstr(bg_ctx_message(&ctx), "/run-001.stdout' for the run's output: No such file"));
	assert_null(doc);
	bg_ctx_release(&ctx);
}

/* A child's tree holds it; a scan that no pid qualifies for is empty, not an error. */
static void test_proc_tree(void **state)
{
	pid_t *pids = NULL, child;
	size_t n;
	int st;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a test that crashed */
		alarm(60);
		pause();
		_exit(0);
	}
	n = bg_proc_tree(child, &pids);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], child);
	free(pids);
	n = bg_proc_tree_above(child, child, &pids);
	assert_int_equal(n, 1);
	free(pids);
	n = bg_proc_tree_above(child, INT_MAX, &pids);
	assert_int_equal(n, 0);
	free(pids);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &st, 0), child);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static long long mtime_ns(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

static void test_stale(void **state)
{
	char dir[] = "/tmp/bgstale-XXXXXX", old[PATH_MAX];
	const char *pat[] = {"*.out", "sub", "none.*"};
	struct timespec t[2] = {{0, UTIME_OMIT}, {1600000000, 42}};
	struct bg_stale s = {0};
	FILE *f;

	(void)state;
	assert_non_null(getcwd(old, sizeof(old)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	put("a.out", "a");
	put("b.out", "b");
	put("c.out", "c");
	assert_int_equal(mkdir("sub", 0700), 0); /* a folder is never marked */
	assert_int_equal(utimensat(AT_FDCWD, "a.out", t, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, "c.out", t, 0), 0);

	bg_stale_mark(&s, pat, 3);
	assert_int_equal(s.n, 3);
	assert_true(mtime_ns("a.out") != 1600000000000000042LL);
	put("b.out", "b"); /* rewritten, same bytes */
	assert_int_equal(rename("b.out", "c.out"), 0); /* c.out: a new file in its place */
	f = fopen("a.out", "r"); /* read only */
	fclose(f);
	assert_true(bg_stale_unwritten(&s, "a.out"));
	assert_false(bg_stale_unwritten(&s, "b.out"));
	assert_false(bg_stale_unwritten(&s, "c.out"));
	assert_false(bg_stale_unwritten(&s, "sub"));
	assert_false(bg_stale_unwritten(&s, "other.out"));
	bg_stale_restore(&s);
	assert_int_equal(s.n, 0);
	assert_true(mtime_ns("a.out") == 1600000000000000042LL); /* its own time back */
	assert_true(mtime_ns("c.out") != 1600000000000000042LL);

	/* a second mark puts back the first one's; release puts back too */
	bg_stale_mark(&s, pat, 1);
	bg_stale_mark(&s, pat, 1);
	assert_int_equal(s.n, 2);
	bg_stale_release(&s);
	assert_true(mtime_ns("a.out") == 1600000000000000042LL);
	assert_null(s.files);

	unlink("a.out");
	unlink("c.out");
	rmdir("sub");
	assert_int_equal(chdir(old), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_true),
		cmocka_unit_test(test_callers_children),
		cmocka_unit_test(test_failing_smoke_blocks),
		cmocka_unit_test(test_cannot_start),
		cmocka_unit_test(test_bad_options_and_timeout),
		cmocka_unit_test(test_secret_names),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_git_changed),
		cmocka_unit_test(test_proc_tree),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
