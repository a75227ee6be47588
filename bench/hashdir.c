/*
 * hashdir.c - the SHA-256 of a declared folder input (what `run` computes
 * in its preflight, src/lifecycle/inputs.c), timed: hashdir N DIR prints
 * the median wall milliseconds of N hashes and the hash. Built against a
 * build's libbenchgate.a by bench/inputs.sh. Not part of benchgate; not a
 * test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lifecycle/inputs.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0;
	double *ms;
	char hex[65] = "";

	if (n < 1) {
		fprintf(stderr, "usage: hashdir N DIR\n");
		return 2;
	}
	ms = calloc((size_t)n, sizeof(*ms));
	for (int i = 0; i < n; i++) {
		struct bg_input_state st;
		struct bg_ctx ctx;
		struct timespec t0, t1;
		bg_ctx_init(&ctx);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (bg_input_hash(argv[2], argv[2], hex, &st, &ctx) != BG_OK) {
			fprintf(stderr, "hashdir: %s\n", bg_ctx_message(&ctx));
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		bg_ctx_release(&ctx);
	}
	qsort(ms, (size_t)n, sizeof(*ms), cmp);
	printf("%.1f ms %s\n", ms[n / 2], hex);
	free(ms);
	return 0;
}
