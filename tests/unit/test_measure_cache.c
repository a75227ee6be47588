/*
 * test_measure_cache.c - eviction is real: a 64 MiB file is below 1%
 * resident after bg_cache_evict and above 99% after a warm read. Runs in a
 * temporary folder under /var/tmp (skipped on tmpfs, which cannot drop pages).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "measure/internal.h"

#define TMPFS_MAGIC_ 0x01021994

static void test_evict_and_warm(void **state)
{
	char dir[] = "/var/tmp/bg-test-cache-XXXXXX", path[128];
	static char block[1 << 20];
	struct statfs sf;
	struct bg_ctx ctx;
	double frac = -1;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/source.bin", dir);
	if (statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC_) {
		rmdir(dir);
		skip();
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (int i = 0; i < 64; i++) {
		memset(block, i + 1, sizeof(block));
		assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
	}
	close(fd);
	bg_ctx_init(&ctx);
	assert_int_equal(bg_cache_evict(path, &frac, &ctx), BG_OK);
	assert_true(frac < 0.01);
	fd = open(path, O_RDONLY);
	while (read(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	assert_int_equal(bg_cache_resident(path, &frac, &ctx), BG_OK);
	assert_true(frac > 0.99);
	assert_int_equal(bg_cache_evict(path, &frac, &ctx), BG_OK);
	assert_true(frac < 0.01);
	unlink(path);
	rmdir(dir);
	assert_int_equal(bg_cache_evict(path, &frac, &ctx), BG_EIO);
	assert_non_null(strstr(bg_ctx_message(&ctx), "source.bin"));
	bg_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evict_and_warm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
