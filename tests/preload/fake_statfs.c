/*
 * fake_statfs.c - an LD_PRELOAD stand-in for a network file system, so that
 * the tests can check what benchgate says of a file it evicts there
 * (tests/scripts/test_measure_remote_cache.sh): statfs and fstatfs report
 * the file system type FAKE_FS_TYPE (strtoul's base 0: 0x6969 is NFS) for
 * a path that contains FAKE_FS_PATH, and the kernel's answer otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fake(const char *path, struct statfs *buf)
{
	const char *want = getenv("FAKE_FS_PATH"), *type = getenv("FAKE_FS_TYPE");

	if (want && *want && type && path && strstr(path, want))
		buf->f_type = (__fsword_t)strtoul(type, NULL, 0);
}

int statfs(const char *path, struct statfs *buf)
{
	int rc = (int)syscall(SYS_statfs, path, buf);

	if (rc == 0)
		fake(path, buf);
	return rc;
}

int fstatfs(int fd, struct statfs *buf)
{
	int rc = (int)syscall(SYS_fstatfs, fd, buf);
	char link[64], path[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (rc == 0 && (n = readlink(link, path, sizeof(path) - 1)) > 0) {
		path[n] = '\0';
		fake(path, buf);
	}
	return rc;
}
