/*
 * test_dynlib.c - bg_dynlib_load (src/core/dynlib.h): a library that is
 * there but cannot be opened because the process has no file descriptor
 * left is said as such (not "install Debian's ..."), and is loaded by the
 * next call once descriptors are free again; a missing library keeps its
 * first answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "benchgate/status.h"
#include "core/dynlib.h"

/* libcrypto: installed with the project's dependencies, and not loaded in
 * this process before the test loads it */
static unsigned long (*version_num)(void);
static const struct bg_dynsym crypto_syms[] = {
	{"OpenSSL_version_num", &version_num},
	{NULL, NULL},
};
static struct bg_dynlib crypto = BG_DYNLIB_INIT("libcrypto.so.3", "libssl3", crypto_syms);

static void *missing_fn;
static const struct bg_dynsym missing_syms[] = {
	{"f", &missing_fn},
	{NULL, NULL},
};
static struct bg_dynlib missing = BG_DYNLIB_INIT("libbenchgate-test-missing.so.9", "nothing", missing_syms);

static void test_out_of_files_then_loaded(void **state)
{
	struct rlimit old, low;
	struct bg_ctx ctx;
	int free_fd, rc;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	free_fd = dup(0); /* the lowest free descriptor: a limit of it leaves none */
	assert_true(free_fd >= 0);
	close(free_fd);
	low = old;
	low.rlim_cur = (rlim_t)free_fd;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	rc = bg_dynlib_load(&crypto, &ctx);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);

	assert_int_equal(rc, BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "cannot load libcrypto.so.3: "));
	assert_non_null(strstr(bg_ctx_message(&ctx), "; benchgate has as many files open as its limit allows; raise the limit (ulimit -n) and run it again"));
	assert_null(strstr(bg_ctx_message(&ctx), "install"));

	/* descriptors free again: the next call loads it */
	assert_int_equal(bg_dynlib_load(&crypto, &ctx), BG_OK);
	assert_non_null(version_num);
	assert_true(version_num() >= 0x30000000UL);
	assert_int_equal(bg_dynlib_load(&crypto, &ctx), BG_OK);
	bg_ctx_release(&ctx);
}

static void test_missing_stays_missing(void **state)
{
	struct bg_ctx ctx;

	(void)state;
	bg_ctx_init(&ctx);
	assert_int_equal(bg_dynlib_load(&missing, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "cannot load libbenchgate-test-missing.so.9: "));
	assert_non_null(strstr(bg_ctx_message(&ctx), "; install Debian's nothing"));
	assert_int_equal(bg_dynlib_load(&missing, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "; install Debian's nothing"));
	assert_null(missing_fn);
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_files_then_loaded),
		cmocka_unit_test(test_missing_stays_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
