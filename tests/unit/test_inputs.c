/*
 * test_inputs.c - a declared folder input's SHA-256 (src/lifecycle/inputs.c):
 * hashed by several threads when it is large, it is the same listing hash
 * as file by file, and an unreadable file is reported as file by file
 * reports it: the first in the listing's order.
 */
#include <fcntl.h>
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

#include "benchgate/sha256.h"
#include "benchgate/strbuf.h"
#include "lifecycle/inputs.h"

#define NFILES 48
#define FILE_BYTES (1 << 20) /* 48 MiB in all: above the threads' threshold */

static char dir[64];

/* f00 .. f47 (and sub/ for every fifth), each of pseudo-random bytes. */
static const char *rel_name(int i, char buf[32])
{
	snprintf(buf, 32, "%sf%02d", i % 5 == 0 ? "sub/" : "", i);
	return buf;
}

static int setup(void **state)
{
	unsigned x = 12345;
	char *data = malloc(FILE_BYTES);
	struct bg_strbuf p = BG_STRBUF_INIT;
	(void)state;

	snprintf(dir, sizeof(dir), "/tmp/bg-test-inputs-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0)
		return -1;
	bg_strbuf_addf(&p, "%s/sub", dir);
	mkdir(p.buf, 0755);
	for (int i = 0; i < NFILES; i++) {
		char name[32];
		FILE *f;
		for (size_t k = 0; k < FILE_BYTES; k++)
			data[k] = (char)((x = x * 1103515245u + 12345u) >> 16);
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/%s", dir, rel_name(i, name));
		if (!(f = fopen(p.buf, "wb")) || fwrite(data, 1, FILE_BYTES, f) != FILE_BYTES || fclose(f) != 0)
			return -1;
	}
	bg_strbuf_release(&p);
	free(data);
	return 0;
}

static int teardown(void **state)
{
	struct bg_strbuf cmd = BG_STRBUF_INIT;
	int rc;
	(void)state;
	bg_strbuf_addf(&cmd, "rm -rf '%s'", dir);
	rc = system(cmd.buf);
	bg_strbuf_release(&cmd);
	return rc == 0 ? 0 : -1;
}

/* The listing hash computed file by file, in byte order of the paths. */
static void listing_hash(char hex[65])
{
	const char *names[NFILES];
	char buf[NFILES][32];
	struct bg_strbuf listing = BG_STRBUF_INIT, p = BG_STRBUF_INIT;
	struct bg_ctx ctx;

	bg_ctx_init(&ctx);
	for (int i = 0; i < NFILES; i++)
		names[i] = rel_name(i, buf[i]);
	for (int i = 1; i < NFILES; i++) /* insertion sort by strcmp: byte order */
		for (int k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
			const char *t = names[k];
			names[k] = names[k - 1];
			names[k - 1] = t;
		}
	for (int i = 0; i < NFILES; i++) {
		char one[65];
		bg_strbuf_reset(&p);
		bg_strbuf_addf(&p, "%s/%s", dir, names[i]);
		assert_int_equal(bg_sha256_file(p.buf, NULL, one, &ctx), BG_OK);
		bg_sha256sum_line(&listing, one, names[i]);
	}
	assert_int_equal(bg_sha256_hex(listing.buf, listing.len, hex, &ctx), BG_OK);
	bg_strbuf_release(&listing);
	bg_strbuf_release(&p);
	bg_ctx_release(&ctx);
}

static void test_parallel_same_hash(void **state)
{
	struct bg_input_state st;
	struct bg_ctx ctx;
	char want[65], got[65];
	(void)state;

	listing_hash(want);
	bg_ctx_init(&ctx);
	for (int round = 0; round < 5; round++) { /* the threads finish in another order each time */
		assert_int_equal(bg_input_hash(dir, "data", got, &st, &ctx), BG_OK);
		assert_string_equal(got, want);
		assert_true(st.folder);
	}
	assert_true(bg_input_unchanged(dir, &st));
	bg_ctx_release(&ctx);
}

/* Two unreadable files: the message names the first in the listing's
 * order, whichever thread meets which first. Run as an ordinary user (root
 * reads what mode 000 forbids): a child that drops to nobody when root. */
static void test_first_failure_reported(void **state)
{
	char a[128], b[128];
	(void)state;

	snprintf(a, sizeof(a), "%s/f07", dir);
	snprintf(b, sizeof(b), "%s/f41", dir);
	assert_int_equal(chmod(a, 0), 0);
	assert_int_equal(chmod(b, 0), 0);
	for (int round = 0; round < 5; round++) {
		int status;
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct bg_input_state st;
			struct bg_ctx ctx;
			char hex[65];
			if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
				_exit(3);
			bg_ctx_init(&ctx);
			if (bg_input_hash(dir, "data", hex, &st, &ctx) != BG_EIO)
				_exit(1);
			_exit(strcmp(bg_ctx_message(&ctx), "data/f07: cannot read: Permission denied") == 0 ? 0 : 2);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	chmod(a, 0644);
	chmod(b, 0644);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel_same_hash),
		cmocka_unit_test(test_first_failure_reported),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
