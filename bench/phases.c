/*
 * phases.c - what `benchgate validate` costs once its pages are warm: the
 * library calls of validate (config, registry load, evidence import,
 * validation with the render comparison, release) run N times in one
 * process, memory kept between iterations (mallopt as the program does),
 * printing the median microseconds of each phase and their sum. With
 * EVICT_MIB=M in the environment, every other iteration first writes M MiB
 * of other memory, so that it starts with the CPU caches holding none of
 * validate's code or data (as a fresh process may), though its pages stay
 * mapped; a second column gives those iterations' medians, measured
 * alongside the warm ones so that the machine's drift hits both alike. The
 * last column is the median count of minor page faults of each phase (warm
 * iterations): with N = 1 it shows what a fresh process touches for the
 * first time (FRESH=M in bench/phases.sh). Run in a project root; built and
 * run by bench/phases.sh. Not a test.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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

static double minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_minflt;
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

/* Writes one byte in each cache line of junk[0..len). */
static void evict(volatile char *junk, size_t len)
{
	for (size_t i = 0; i < len; i += 64)
		junk[i]++;
}

/* Median of t[0..n), reordering it. */
static double median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	return t[n / 2];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	double *t[2][P_COUNT], *faults[P_COUNT], sum[2] = {0, 0};
	const char *evict_mib = getenv("EVICT_MIB");
	size_t junk_len = evict_mib ? (size_t)atoi(evict_mib) << 20 : 0;
	char *junk = junk_len ? calloc(junk_len, 1) : NULL;
	int cols = junk ? 2 : 1, runs[2] = {0, 0};

	if (n < 1)
		n = 1;
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	for (int c = 0; c < 2; c++)
		for (int k = 0; k < P_COUNT; k++)
			t[c][k] = calloc((size_t)n, sizeof(double));
	for (int k = 0; k < P_COUNT; k++)
		faults[k] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < cols * n; i++) {
		int cold = i % cols;
		struct bg_config cfg;
		struct bg_registry reg;
		struct bg_problems problems = {0};
		struct bg_registry_counts counts;
		struct bg_ctx ctx;
		double mark[P_COUNT + 1], flt[P_COUNT + 1];

		if (cold)
			evict(junk, junk_len);
		bg_ctx_init(&ctx);
		mark[0] = now_us();
		flt[0] = minor_faults();
		if (bg_config_load(&cfg, NULL, NULL, &ctx))
			return die("config", &ctx);
		mark[1] = now_us();
		flt[1] = minor_faults();
		if (bg_registry_load(&reg, &cfg, &ctx))
			return die("registry load", &ctx);
		mark[2] = now_us();
		flt[2] = minor_faults();
		if (bg_registry_resolve_measurements(&reg, &ctx))
			return die("evidence import", &ctx);
		mark[3] = now_us();
		flt[3] = minor_faults();
		if (bg_registry_validate(&reg, true, &problems, &counts, &ctx) || problems.n)
			return die("validate (the tree must validate)", &ctx);
		mark[4] = now_us();
		flt[4] = minor_faults();
		bg_problems_release(&problems);
		bg_registry_release(&reg);
		bg_config_release(&cfg);
		bg_ctx_release(&ctx);
		mark[5] = now_us();
		flt[5] = minor_faults();
		for (int k = 0; k < P_COUNT; k++) {
			t[cold][k][runs[cold]] = mark[k + 1] - mark[k];
			if (!cold)
				faults[k][runs[0]] = flt[k + 1] - flt[k];
		}
		runs[cold]++;
	}
	printf("%-24s %8s%s %10s\n", "", "warm", cols == 2 ? "  cold caches" : "", "faults");
	for (int k = 0; k < P_COUNT; k++) {
		printf("%-24s", phase_names[k]);
		for (int c = 0; c < cols; c++) {
			double m = median(t[c][k], n);
			sum[c] += m;
			printf(" %8.1f us", m);
		}
		printf(" %10.0f\n", median(faults[k], n));
	}
	printf("%-24s", "sum of the medians");
	for (int c = 0; c < cols; c++)
		printf(" %8.1f us", sum[c]);
	printf("\n");
	for (int c = 0; c < 2; c++)
		for (int k = 0; k < P_COUNT; k++)
			free(t[c][k]);
	for (int k = 0; k < P_COUNT; k++)
		free(faults[k]);
	free(junk);
	return 0;
}
