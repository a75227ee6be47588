/*
 * memtree - test program for the memory figures of benchgate measure.
 *   memtree NPROC MIB HOLD_MS
 * With NPROC 2 the process forks a child; each of the two allocates MIB MiB,
 * touches every page, and both hold it at the same time for HOLD_MS
 * milliseconds (synchronised through pipes) before exiting. With NPROC 1
 * only the process itself does so. Exit 0 on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *hold(size_t mib)
{
	size_t len = mib << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("memtree: mmap");
		exit(2);
	}
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)(i / 4096 + 1);
	return p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int nproc, up[2], down[2], st;
	size_t mib;
	long ms;
	pid_t pid;
	char c = 'x';

	if (argc != 4) {
		fprintf(stderr, "usage: memtree NPROC MIB HOLD_MS\n");
		return 2;
	}
	nproc = atoi(argv[1]);
	mib = (size_t)atol(argv[2]);
	ms = atol(argv[3]);
	if (nproc == 1) {
		hold(mib);
		sleep_ms(ms);
		return 0;
	}
	if (pipe(up) != 0 || pipe(down) != 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		hold(mib);
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(2);
		sleep_ms(ms);
		_exit(0);
	}
	hold(mib);
	/* both hold their memory from here on */
	if (read(up[0], &c, 1) != 1 || write(down[1], &c, 1) != 1)
		return 2;
	sleep_ms(ms);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 2;
	return 0;
}
