/*
 * runstat.c - benchmark helper: runs a command N times (no shell) and prints
 * the median wall time in seconds and the largest peak RSS in KiB of the
 * runs, from wait4. Used by bench/*.sh; not part of benchgate.
 *   runstat N CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	double *w;
	long maxrss = 0;

	if (n < 1) {
		fprintf(stderr, "usage: runstat N CMD [ARGS...]\n");
		return 2;
	}
	w = calloc((size_t)n, sizeof(*w));
	for (int i = 0; i < n; i++) {
		struct timespec a, b;
		struct rusage ru;
		int status;
		pid_t pid;

		clock_gettime(CLOCK_MONOTONIC, &a);
		pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		wait4(pid, &status, 0, &ru);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) {
			fprintf(stderr, "runstat: %s failed\n", argv[2]);
			return 1;
		}
		w[i] = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
	}
	qsort(w, (size_t)n, sizeof(*w), cmp);
	printf("%.6f %ld\n", n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2, maxrss);
	return 0;
}
