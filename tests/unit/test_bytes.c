/*
 * test_bytes.c - the block-at-a-time scanners and hash of src/core/bytes.h
 * against byte-by-byte definitions (every stop byte at every position, so
 * that the 16-byte, 8-byte and tail loops all meet it), the file view
 * (read and mapped: the same bytes and the '\0' after them, also at a page
 * boundary), atomic writes in steps (stop signals held while a temporary
 * file exists, links planted at its name, permissions kept), undoing a
 * failed mkdir -p, lock files, and the values the
 * parser shares.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "benchgate/fsutil.h"
#include "benchgate/value.h"
#include "core/bytes.h"

static size_t slow_plain(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x80 && s[i] != '"' &&
	       s[i] != '\\')
		i++;
	return i;
}

static size_t slow_space(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	return i;
}

static size_t slow_without2(const char *s, size_t n, char a, char b)
{
	size_t i = 0;

	while (i < n && s[i] != a && s[i] != b)
		i++;
	return i;
}

/* Every byte value at every position of buffers up to 40 bytes long. */
static void test_spans(void **state)
{
	char buf[48];

	(void)state;
	for (size_t len = 0; len <= 40; len++) {
		for (size_t at = 0; at < len; at++) {
			for (int c = 0; c < 256; c++) {
				memset(buf, 'a', sizeof(buf));
				buf[at] = (char)c;
				assert_int_equal(bg_span_json_plain(buf, len), slow_plain(buf, len));
				assert_int_equal(bg_span_without2(buf, len, '|', '\n'),
						 slow_without2(buf, len, '|', '\n'));
				memset(buf, ' ', sizeof(buf));
				buf[at] = (char)c;
				assert_int_equal(bg_span_json_space(buf, len), slow_space(buf, len));
			}
		}
		memset(buf, 'a', sizeof(buf));
		assert_int_equal(bg_span_json_plain(buf, len), len);
		memset(buf, '\t', sizeof(buf));
		assert_int_equal(bg_span_json_space(buf, len), len);
	}
}

/* bg_same_bytes against memcmp: every length up to 40, a difference at
 * every position. */
static void test_same_bytes(void **state)
{
	char a[48], b[48];

	(void)state;
	for (size_t len = 0; len <= 40; len++) {
		memset(a, 'k', sizeof(a));
		memset(b, 'k', sizeof(b));
		assert_true(bg_same_bytes(a, b, len));
		for (size_t at = 0; at < len; at++) {
			b[at] = 'j';
			assert_false(bg_same_bytes(a, b, len));
			assert_false(bg_same_bytes(b, a, len));
			b[at] = 'k';
		}
		/* bytes past the length are not read into the answer */
		b[len] = 'z';
		assert_true(bg_same_bytes(a, b, len));
	}
}

static void test_hash(void **state)
{
	char a[40], b[40];

	(void)state;
	/* every length, one byte changed anywhere: a different hash (for these inputs) */
	for (size_t n = 1; n < sizeof(a); n++) {
		memset(a, 'k', n);
		for (size_t i = 0; i < n; i++) {
			memcpy(b, a, n);
			b[i] = 'K';
			assert_int_not_equal(bg_hash_bytes(a, n), bg_hash_bytes(b, n));
		}
		assert_int_not_equal(bg_hash_bytes(a, n), bg_hash_bytes(a, n - 1));
		assert_int_equal(bg_hash_bytes(a, n), bg_hash_bytes(a, n));
	}
}

static char tmpdir[64];

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
}

/* Files below, at and above the mapping threshold, and one ending exactly on a page. */
static void test_file_view(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t sizes[] = {0, 1, 100, 32767, 32768, 65536, 16 * page, 16 * page + 1};
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/view", tmpdir);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		char *data = malloc(n + 1);
		struct bg_file_view v;
		struct bg_ctx ctx;
		for (size_t i = 0; i < n; i++)
			data[i] = (char)('a' + i % 23);
		write_file(path, data, n);
		bg_ctx_init(&ctx);
		assert_int_equal(bg_file_view_open(&v, path, NULL, &ctx), BG_OK);
		assert_int_equal(v.len, n);
		assert_memory_equal(v.text, data, n);
		assert_int_equal(v.text[n], '\0');
		assert_true((v.map != NULL) == (n >= 32768));
		bg_file_view_release(&v);
		bg_ctx_release(&ctx);
		free(data);
	}
	/* errors as bg_file_read's */
	{
		struct bg_file_view v;
		struct bg_ctx ctx;
		bg_ctx_init(&ctx);
		assert_int_equal(bg_file_view_open(&v, tmpdir, "dir", &ctx), BG_EIO);
		assert_string_equal(bg_ctx_message(&ctx), "dir: cannot read: is a directory");
		bg_ctx_release(&ctx);
		bg_ctx_init(&ctx);
		snprintf(path, sizeof(path), "%s/none", tmpdir);
		assert_int_equal(bg_file_view_open(&v, path, "none", &ctx), BG_EIO);
		assert_string_equal(bg_ctx_message(&ctx), "none: cannot read: No such file or directory");
		bg_ctx_release(&ctx);
	}
}

/* Whether [p, p + n) is mapped (msync says ENOMEM for a range that is not). */
static bool is_mapped(void *p, size_t n)
{
	return msync(p, n, MS_ASYNC) == 0;
}

/* bg_file_view_leave_mapped: released views stay mapped while the budget
 * lasts, the next ones are unmapped; the default (0) unmaps each. */
static void test_view_leave_mapped(void **state)
{
	char path[128];
	size_t n = 65536;
	char *data = malloc(n);
	struct bg_file_view v;
	struct bg_ctx ctx;
	void *map;
	size_t map_len;

	(void)state;
	memset(data, 'x', n);
	snprintf(path, sizeof(path), "%s/leave", tmpdir);
	write_file(path, data, n);
	bg_ctx_init(&ctx);
	/* the default: unmapped when released */
	assert_int_equal(bg_file_view_open(&v, path, NULL, &ctx), BG_OK);
	map = v.map;
	map_len = v.map_len;
	assert_non_null(map);
	bg_file_view_release(&v);
	assert_false(is_mapped(map, map_len));
	/* a budget for one view and a half: the first stays, the second goes */
	bg_file_view_leave_mapped(map_len + map_len / 2);
	assert_int_equal(bg_file_view_open(&v, path, NULL, &ctx), BG_OK);
	map = v.map;
	bg_file_view_release(&v);
	assert_true(is_mapped(map, map_len));
	assert_memory_equal(map, data, n); /* untouched, as it was */
	assert_int_equal(bg_file_view_open(&v, path, NULL, &ctx), BG_OK);
	{
		void *second = v.map;
		bg_file_view_release(&v);
		assert_false(is_mapped(second, map_len));
	}
	bg_file_view_leave_mapped(0);
	munmap(map, map_len);
	unlink(path);
	bg_ctx_release(&ctx);
	free(data);
}

static void test_atomic_file(void **state)
{
	char path[128], tmp[160];
	struct bg_atomic_file f;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/doc.md", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	write_file(path, "old\n", 4);
	bg_ctx_init(&ctx);
	/* aborted: the old file stays, no temporary file */
	assert_int_equal(bg_atomic_file_open(&f, path, "doc.md", &ctx), BG_OK);
	bg_atomic_file_write(&f, "new", 3);
	bg_atomic_file_abort(&f);
	assert_int_equal(bg_file_read(path, NULL, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "old\n");
	assert_int_not_equal(stat(tmp, &st), 0);
	/* committed in pieces */
	assert_int_equal(bg_atomic_file_open(&f, path, "doc.md", &ctx), BG_OK);
	bg_atomic_file_write(&f, "new ", 4);
	bg_atomic_file_write(&f, "text\n", 5);
	assert_int_equal(bg_atomic_file_commit(&f, &ctx), BG_OK);
	bg_strbuf_reset(&sb);
	assert_int_equal(bg_file_read(path, NULL, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "new text\n");
	assert_int_not_equal(stat(tmp, &st), 0);
	/* a directory in the way */
	assert_int_equal(bg_atomic_file_open(&f, tmpdir, "dir", &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "dir: cannot write: it exists and is a folder, not a regular file; remove it, or write another file");
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	unlink(path);
}

/* What the SIGTERM handler saw: whether the temporary file existed then. */
static volatile sig_atomic_t term_seen, term_saw_tmp;
static char term_tmp[160];

static void on_term(int sig)
{
	struct stat st;

	(void)sig;
	term_seen = 1;
	term_saw_tmp = stat(term_tmp, &st) == 0;
}

/*
 * A stop signal that arrives while the temporary file exists is delivered
 * only once it is renamed or removed; a link planted at the temporary
 * name is never written through; the replacement keeps the old file's
 * permissions; two files open in one thread give the mask back once.
 */
static void test_atomic_file_hostile(void **state)
{
	char path[128], path2[128], victim[128];
	struct bg_atomic_file f, g;
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct sigaction sa, old_sa;
	sigset_t mask;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/held.md", tmpdir);
	snprintf(path2, sizeof(path2), "%s/held2.md", tmpdir);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	snprintf(term_tmp, sizeof(term_tmp), "%s.tmp.%ld", path, (long)getpid());
	bg_ctx_init(&ctx);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, &old_sa);

	/* committed: the signal comes after the rename */
	term_seen = 0;
	assert_int_equal(bg_atomic_file_open(&f, path, NULL, &ctx), BG_OK);
	raise(SIGTERM);
	assert_int_equal(term_seen, 0);
	bg_atomic_file_write(&f, "a\n", 2);
	assert_int_equal(bg_atomic_file_commit(&f, &ctx), BG_OK);
	assert_int_equal(term_seen, 1);
	assert_int_equal(term_saw_tmp, 0);
	/* aborted: after the removal */
	term_seen = 0;
	assert_int_equal(bg_atomic_file_open(&f, path, NULL, &ctx), BG_OK);
	raise(SIGTERM);
	bg_atomic_file_abort(&f);
	assert_int_equal(term_seen, 1);
	assert_int_equal(term_saw_tmp, 0);
	/* two open at once: held until the last ends, then the mask is as before */
	term_seen = 0;
	assert_int_equal(bg_atomic_file_open(&f, path, NULL, &ctx), BG_OK);
	assert_int_equal(bg_atomic_file_open(&g, path2, NULL, &ctx), BG_OK);
	assert_int_equal(bg_atomic_file_commit(&f, &ctx), BG_OK);
	raise(SIGTERM);
	assert_int_equal(term_seen, 0);
	assert_int_equal(bg_atomic_file_commit(&g, &ctx), BG_OK);
	assert_int_equal(term_seen, 1);
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	assert_int_equal(sigismember(&mask, SIGTERM), 0);
	assert_int_equal(sigismember(&mask, SIGINT), 0);
	sigaction(SIGTERM, &old_sa, NULL);

	/* a link planted at the temporary name: removed, never followed */
	write_file(victim, "victim\n", 7);
	assert_int_equal(symlink(victim, term_tmp), 0);
	assert_int_equal(bg_file_write_atomic(path, NULL, "b\n", 2, &ctx), BG_OK);
	assert_int_equal(bg_file_read(victim, NULL, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "victim\n");
	bg_strbuf_reset(&sb);
	assert_int_equal(bg_file_read(path, NULL, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "b\n");
	assert_int_not_equal(lstat(term_tmp, &st), 0);
	/* the permissions of the file it replaces */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(bg_file_write_atomic(path, NULL, "c\n", 2, &ctx), BG_OK);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	unlink(path);
	unlink(path2);
	unlink(victim);
}

/*
 * A writer killed outright (SIGKILL, which nothing can hold) in the middle
 * of its writes leaves the old file as it was and nothing beside it: the
 * temporary file has no name until commit. On a file system without
 * unnamed files (O_TMPFILE) what it leaves is the named temporary file
 * alone, which bg_atomic_temp_pid tells apart.
 */
static void test_atomic_file_killed(void **state)
{
	char path[128];
	struct bg_strbuf sb = BG_STRBUF_INIT;
	struct bg_ctx ctx;
	struct dirent *e;
	size_t left = 0;
	int status;
	pid_t pid;
	DIR *d;

	(void)state;
	snprintf(path, sizeof(path), "%s/killed.md", tmpdir);
	write_file(path, "old\n", 4);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct bg_atomic_file f;
		struct bg_ctx cctx;

		bg_ctx_init(&cctx);
		if (bg_atomic_file_open(&f, path, NULL, &cctx) != BG_OK)
			_exit(2);
		bg_atomic_file_write(&f, "half of the new", 15);
		raise(SIGKILL);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_file_read(path, NULL, &sb, &ctx), BG_OK);
	assert_string_equal(sb.buf, "old\n");
	assert_non_null(d = opendir(tmpdir));
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "killed.md.", 10) != 0)
			continue;
		left++;
		assert_int_equal(bg_atomic_temp_pid(e->d_name, "killed.md"), pid);
		assert_int_equal(unlinkat(dirfd(d), e->d_name, 0), 0);
	}
	closedir(d);
	{
		int fd = open(tmpdir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		bool unnamed = fd >= 0 && access("/proc/self/fd", X_OK) == 0;

		if (fd >= 0)
			close(fd);
		assert_int_equal(left, unnamed ? 0 : 1);
		if (!unnamed)
			print_message("(no unnamed files in %s: the named temporary file was left, as expected there)\n",
				      tmpdir);
	}
	bg_strbuf_release(&sb);
	bg_ctx_release(&ctx);
	unlink(path);
}

/* A failed mkdir -p removes the folders it made, no other; one that
 * succeeded is undone so by bg_rmdirs_made. */
static void test_rmdirs_made(void **state)
{
	char top[128], dir[512], *made = NULL;
	struct bg_ctx ctx;
	struct stat st;

	(void)state;
	bg_ctx_init(&ctx);
	snprintf(top, sizeof(top), "%s/keep", tmpdir);
	assert_int_equal(mkdir(top, 0755), 0);
	/* made keep/a/b, then failed: a name too long; keep/a is gone again */
	snprintf(dir, sizeof(dir), "%s/a/b/%0300d", top, 0);
	assert_int_equal(bg_mkdirs_made(dir, NULL, &made, &ctx), BG_EIO);
	assert_null(made);
	assert_int_equal(errno, ENAMETOOLONG);
	snprintf(dir, sizeof(dir), "%s/a", top);
	assert_int_not_equal(stat(dir, &st), 0);
	assert_int_equal(stat(top, &st), 0);
	/* made everything: all of it removed, the folder above kept */
	snprintf(dir, sizeof(dir), "%s/c/d", top);
	assert_int_equal(bg_mkdirs_made(dir, NULL, &made, &ctx), BG_OK);
	bg_rmdirs_made(made);
	snprintf(dir, sizeof(dir), "%s/c", top);
	assert_int_not_equal(stat(dir, &st), 0);
	assert_int_equal(stat(top, &st), 0);
	free(made);
	/* past a "..": exactly the folders made, never one that was there
	 * (keep/new/../old made keep/new only: keep/old stays) */
	snprintf(dir, sizeof(dir), "%s/old", top);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/new/../old", top);
	assert_int_equal(bg_mkdirs_made(dir, NULL, &made, &ctx), BG_OK);
	bg_rmdirs_made(made);
	free(made);
	snprintf(dir, sizeof(dir), "%s/new", top);
	assert_int_not_equal(stat(dir, &st), 0);
	snprintf(dir, sizeof(dir), "%s/old", top);
	assert_int_equal(rmdir(dir), 0);
	/* ... and one made past a ".." goes too (keep/x/../y made x and y) */
	snprintf(dir, sizeof(dir), "%s/x/../y", top);
	assert_int_equal(bg_mkdirs_made(dir, NULL, &made, &ctx), BG_OK);
	bg_rmdirs_made(made);
	free(made);
	snprintf(dir, sizeof(dir), "%s/x", top);
	assert_int_not_equal(stat(dir, &st), 0);
	snprintf(dir, sizeof(dir), "%s/y", top);
	assert_int_not_equal(stat(dir, &st), 0);
	assert_int_equal(rmdir(top), 0);
	bg_ctx_release(&ctx);
}

/* Whether another process could take the lock on path now (exit status of a child). */
static int other_can_lock(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(path, O_RDWR);
		_exit(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_lock_file(void **state)
{
	char path[128];
	struct bg_ctx ctx;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/promote.lock", tmpdir);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_lock_file(path, "promote.lock", &fd, &ctx), BG_OK);
	assert_false(other_can_lock(path));
	bg_unlock(fd);
	assert_true(other_can_lock(path));
	/* a lock in a folder that does not exist: the message names it */
	snprintf(path, sizeof(path), "%s/missing/promote.lock", tmpdir);
	assert_int_equal(bg_lock_file(path, "missing/promote.lock", &fd, &ctx), BG_EIO);
	assert_string_equal(bg_ctx_message(&ctx), "missing/promote.lock: cannot lock: No such file or directory");
	/* a file locked through a lock file of its own: that file is named */
	snprintf(path, sizeof(path), "%s/missing/runs-index.lock", tmpdir);
	assert_int_equal(bg_lock_file(path, "experiments/RUNS.md", &fd, &ctx), BG_EIO);
	{
		char want[600];

		snprintf(want, sizeof(want),
			 "experiments/RUNS.md: cannot lock: its lock file %s cannot be opened: No such file or directory; let benchgate write its state folder",
			 path);
		assert_string_equal(bg_ctx_message(&ctx), want);
	}
	bg_ctx_release(&ctx);
	snprintf(path, sizeof(path), "%s/promote.lock", tmpdir);
	unlink(path);
}

/* Small integers and short strings are one value per document; the rest are not. */
static void test_shared_scalars(void **state)
{
	static const char text[] =
		"[\"uint16\", \"uint16\", 7, 7, 1023, 1023, 1024, 1024, -1, -1, "
		"\"a string longer than twenty-four bytes\", \"a string longer than twenty-four bytes\", "
		"\"tab\\tx\", \"tab\\tx\"]";
	struct bg_arena *a = bg_arena_new(), *b = bg_arena_new();
	struct bg_value *v, *w;
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_value_parse(a, text, strlen(text), "t.json", &v, &ctx), BG_OK);
	assert_ptr_equal(bg_value_at(v, 0), bg_value_at(v, 1));
	assert_ptr_equal(bg_value_at(v, 2), bg_value_at(v, 3));
	assert_ptr_equal(bg_value_at(v, 4), bg_value_at(v, 5));
	assert_ptr_not_equal(bg_value_at(v, 6), bg_value_at(v, 7));
	assert_ptr_not_equal(bg_value_at(v, 8), bg_value_at(v, 9));
	assert_ptr_not_equal(bg_value_at(v, 10), bg_value_at(v, 11));
	assert_ptr_equal(bg_value_at(v, 12), bg_value_at(v, 13));
	assert_string_equal(bg_value_str(bg_value_at(v, 12)), "tab\tx");
	assert_int_equal(bg_value_int(bg_value_at(v, 5)), 1023);
	assert_int_equal(bg_value_int(bg_value_at(v, 9)), -1);
	/* strings not across documents: each lives in its own arena; the
	 * integers 0-1023 are static values, the same in every document */
	assert_int_equal(bg_value_parse(b, text, strlen(text), "t.json", &w, &ctx), BG_OK);
	assert_ptr_not_equal(bg_value_at(v, 0), bg_value_at(w, 0));
	assert_ptr_equal(bg_value_at(v, 2), bg_value_at(w, 2));
	assert_true(bg_value_equal(v, w));
	assert_int_equal(sizeof(struct bg_value), 16);
	bg_ctx_release(&ctx);
	bg_arena_free(a);
	bg_arena_free(b);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bg-test-bytes-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/view", tmpdir);
	unlink(path);
	return rmdir(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spans),
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_file_view),
		cmocka_unit_test(test_atomic_file),
		cmocka_unit_test(test_atomic_file_hostile),
		cmocka_unit_test(test_atomic_file_killed),
		cmocka_unit_test(test_rmdirs_made),
		cmocka_unit_test(test_lock_file),
		cmocka_unit_test(test_view_leave_mapped),
		cmocka_unit_test(test_shared_scalars),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
