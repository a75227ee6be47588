/*
 * phases.c - what `benchgate validate` costs once its pages are warm: the
 * library calls of validate (config, registry load, evidence import,
 * validation with the render comparison, release) run N times in one
 * process, memory kept between iterations (mallopt as the program does),
 * printing the median microseconds of each phase. Run in a project root;
 * built and run by bench/phases.sh. Not a test.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "benchgate/config.h"
#include "benchgate/registry.h"

enum { P_CONFIG, P_LOAD, P_RESOLVE, P_VALIDATE, P_RELEASE, P_COUNT };
static const char *const phase_names[P_COUNT] = {
	"config", "registry load", "evidence import", "validate + render check", "release",
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int die(const char *what, struct bg_ctx *ctx)
{
	fprintf(stderr, "phases: %s failed: %s\n", what, bg_ctx_message(ctx));
	return 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double *t[P_COUNT];

	if (n < 1)
		n = 1;
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	for (int k = 0; k < P_COUNT; k++)
		t[k] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		struct bg_config cfg;
		struct bg_registry reg;
		struct bg_problems problems = {0};
		struct bg_registry_counts counts;
		struct bg_ctx ctx;
		double mark[P_COUNT + 1];

		bg_ctx_init(&ctx);
		mark[0] = now_us();
		if (bg_config_load(&cfg, NULL, NULL, &ctx))
			return die("config", &ctx);
		mark[1] = now_us();
		if (bg_registry_load(&reg, &cfg, &ctx))
			return die("registry load", &ctx);
		mark[2] = now_us();
		if (bg_registry_resolve_measurements(&reg, &ctx))
			return die("evidence import", &ctx);
		mark[3] = now_us();
		if (bg_registry_validate(&reg, true, &problems, &counts, &ctx) || problems.n)
			return die("validate (the tree must validate)", &ctx);
		mark[4] = now_us();
		bg_problems_release(&problems);
		bg_registry_release(&reg);
		bg_config_release(&cfg);
		bg_ctx_release(&ctx);
		mark[5] = now_us();
		for (int k = 0; k < P_COUNT; k++)
			t[k][i] = mark[k + 1] - mark[k];
	}
	for (int k = 0; k < P_COUNT; k++) {
		qsort(t[k], (size_t)n, sizeof(double), cmp_double);
		printf("%-24s %8.1f us\n", phase_names[k], t[k][n / 2]);
		free(t[k]);
	}
	return 0;
}
