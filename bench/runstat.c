/*
 * runstat.c - benchmark helper: runs a command N times (no shell, stdout to
 * /dev/null) and prints the median wall time in seconds and the largest peak
 * RSS in KiB of the runs, from wait4. Used by the scripts in bench/; not part of
 * benchgate.
 *   runstat N CMD [ARGS...]
 *   runstat N CMD1 [ARGS...] ';' CMD2 [ARGS...] ...
 * With several commands (separated by a lone ';' argument) the runs are
 * interleaved (CMD1, CMD2, ..., CMD1, ...) so that every command sees the
 * same machine load, and one line is printed per command, in order.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 32

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One run of argv: its wall time in seconds and peak RSS; -1 on failure. */
static double run_once(char **argv, int devnull, long *maxrss)
{
	struct timespec a, b;
	struct rusage ru;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		dup2(devnull, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
		return -1;
	if (ru.ru_maxrss > *maxrss)
		*maxrss = ru.ru_maxrss;
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, ncmd = 0, devnull;
	char **cmd[MAX_CMDS];
	double *w[MAX_CMDS];
	long maxrss[MAX_CMDS] = {0};

	if (n < 1) {
		fprintf(stderr, "usage: runstat N CMD [ARGS...] [';' CMD [ARGS...]]...\n");
		return 2;
	}
	cmd[ncmd++] = argv + 2;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], ";") != 0)
			continue;
		argv[i] = NULL;
		if (ncmd == MAX_CMDS || i + 1 == argc || strcmp(argv[i + 1], ";") == 0) {
			fprintf(stderr, "runstat: an empty command or more than %d\n", MAX_CMDS);
			return 2;
		}
		cmd[ncmd++] = argv + i + 1;
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (int c = 0; c < ncmd; c++)
		w[c] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		for (int c = 0; c < ncmd; c++) {
			w[c][i] = run_once(cmd[c], devnull, &maxrss[c]);
			if (w[c][i] < 0) {
				fprintf(stderr, "runstat: %s failed\n", cmd[c][0]);
				return 1;
			}
		}
	}
	for (int c = 0; c < ncmd; c++) {
		qsort(w[c], (size_t)n, sizeof(double), cmp);
		printf("%.6f %ld\n", n % 2 ? w[c][n / 2] : (w[c][n / 2 - 1] + w[c][n / 2]) / 2, maxrss[c]);
		free(w[c]);
	}
	return 0;
}
