/*
 * detector_bin.c - the detector-binning example workload: sums the detector
 * axes of a 4D uint16 dataset (scan rows x scan columns x detector rows x
 * detector columns) in square bins, dropping partial edge bins, into uint32.
 *
 *   detector-bin --impl reference|fast|broken --bin N [--threads T] [--repeat K]
 *                --input data/source.npy --output out/binN.npy
 *
 * reference: plain loops. fast: row-blocked accumulation, threaded over scan
 * positions; byte-identical to reference. broken: off by one on the last
 * bin of each detector row (it drops that bin's last column), to show what a
 * parity failure does.
 *
 * --repeat K bins K times in this process (the output is the last pass's).
 * When $BENCHGATE_RESULT names a file (benchgate's timing "reported"), each
 * pass's time, the kernel alone (CLOCK_MONOTONIC, no file I/O), is written
 * there with the bytes the kernel holds:
 *   {"samples_seconds": [...], "metrics": {"logical_resident_bytes": N}}
 */
#define _POSIX_C_SOURCE 200809L
#include "npyio.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct job {
	const uint16_t *in;
	uint32_t *out;
	size_t frames, dr, dc, bin, odr, odc;
	size_t first, last; /* frame range */
	int broken;
};

static void reference(const struct job *j)
{
	for (size_t f = j->first; f < j->last; f++) {
		const uint16_t *fr = j->in + f * j->dr * j->dc;
		uint32_t *o = j->out + f * j->odr * j->odc;
		for (size_t r = 0; r < j->odr; r++)
			for (size_t c = 0; c < j->odc; c++) {
				uint32_t sum = 0;
				size_t cols = j->bin;
				if (j->broken && c + 1 == j->odc && cols > 1)
					cols--; /* the off-by-one */
				for (size_t y = 0; y < j->bin; y++)
					for (size_t x = 0; x < cols; x++)
						sum += fr[(r * j->bin + y) * j->dc + c * j->bin + x];
				o[r * j->odc + c] = sum;
			}
	}
}

static void *fast(void *arg)
{
	const struct job *j = arg;
	uint32_t *acc = calloc(j->odc * j->bin, sizeof(*acc));
	size_t width = j->odc * j->bin;

	if (!acc) {
		fprintf(stderr, "detector-bin: out of memory\n");
		exit(1);
	}

	for (size_t f = j->first; f < j->last; f++) {
		const uint16_t *fr = j->in + f * j->dr * j->dc;
		uint32_t *o = j->out + f * j->odr * j->odc;
		for (size_t r = 0; r < j->odr; r++) {
			const uint16_t *row = fr + r * j->bin * j->dc;
			/* accumulate the bin's rows column-wise (contiguous reads) */
			for (size_t x = 0; x < width; x++)
				acc[x] = row[x];
			for (size_t y = 1; y < j->bin; y++) {
				const uint16_t *next = row + y * j->dc;
				for (size_t x = 0; x < width; x++)
					acc[x] += next[x];
			}
			for (size_t c = 0; c < j->odc; c++) {
				uint32_t sum = 0;
				for (size_t x = 0; x < j->bin; x++)
					sum += acc[c * j->bin + x];
				o[r * j->odc + c] = sum;
			}
		}
	}
	free(acc);
	return NULL;
}

static double seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One pass over every frame: threaded for fast, in this thread otherwise. */
static void bin_once(const struct job *j, const char *impl, long threads)
{
	if (strcmp(impl, "fast") == 0) {
		pthread_t tid[256];
		struct job jobs[256];
		size_t per = (j->frames + (size_t)threads - 1) / (size_t)threads;
		for (long t = 0; t < threads; t++) {
			jobs[t] = *j;
			jobs[t].first = (size_t)t * per < j->frames ? (size_t)t * per : j->frames;
			jobs[t].last = jobs[t].first + per < j->frames ? jobs[t].first + per : j->frames;
			if (pthread_create(&tid[t], NULL, fast, &jobs[t]) != 0) {
				fprintf(stderr, "detector-bin: cannot start thread %ld\n", t + 1);
				exit(1);
			}
		}
		for (long t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
	} else {
		reference(j);
	}
}

/* The samples and the kernel's bytes, to $BENCHGATE_RESULT; 0, or 1 with a message. */
static int write_result(const char *path, const double *samples, long n, unsigned long long bytes)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	fputs("{\"samples_seconds\": [", f);
	for (long i = 0; i < n; i++)
		fprintf(f, "%s%.9f", i ? ", " : "", samples[i]);
	fprintf(f, "], \"metrics\": {\"logical_resident_bytes\": %llu}}\n", bytes);
	if (fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: detector-bin --impl reference|fast|broken --bin N [--threads T] "
			"[--repeat K] --input IN.npy --output OUT.npy\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *impl = NULL, *input = NULL, *output = NULL;
	long bin = 0, threads = 1, repeat = 1;
	const char *result = getenv("BENCHGATE_RESULT");
	double *samples;
	struct npy4 src;
	struct job j;
	size_t shape[4];

	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "--impl") == 0)
			impl = argv[++i];
		else if (strcmp(argv[i], "--bin") == 0)
			bin = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--threads") == 0)
			threads = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--repeat") == 0)
			repeat = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--input") == 0)
			input = argv[++i];
		else if (strcmp(argv[i], "--output") == 0)
			output = argv[++i];
		else
			usage();
	}
	if (!impl || !input || !output || bin < 1 || threads < 1 || threads > 256 || repeat < 1 || repeat > 1000 ||
	    (strcmp(impl, "reference") && strcmp(impl, "fast") && strcmp(impl, "broken")))
		usage();
	if (npy_read_u16_4d(input, &src))
		return 1;
	j.in = src.data;
	j.frames = src.shape[0] * src.shape[1];
	j.dr = src.shape[2];
	j.dc = src.shape[3];
	j.bin = (size_t)bin;
	j.odr = j.dr / j.bin; /* partial edge bins are dropped */
	j.odc = j.dc / j.bin;
	j.broken = strcmp(impl, "broken") == 0;
	if (j.odr == 0 || j.odc == 0) {
		fprintf(stderr, "detector-bin: bin %ld is larger than the %zu x %zu detector\n", bin, j.dr, j.dc);
		return 1;
	}
	j.out = calloc(j.frames * j.odr * j.odc, sizeof(uint32_t));
	j.first = 0;
	j.last = j.frames;
	samples = calloc((size_t)repeat, sizeof(double));
	for (long k = 0; k < repeat; k++) {
		double t0 = seconds_now();
		bin_once(&j, impl, threads);
		samples[k] = seconds_now() - t0;
	}
	shape[0] = src.shape[0];
	shape[1] = src.shape[1];
	shape[2] = j.odr;
	shape[3] = j.odc;
	if (npy_write_u32(output, shape, 4, j.out))
		return 1;
	if (result && *result &&
	    write_result(result, samples, repeat,
			 (unsigned long long)(j.frames * (j.dr * j.dc * sizeof(uint16_t) + j.odr * j.odc * sizeof(uint32_t)))))
		return 1;
	free(samples);
	free(j.out);
	free(src.data);
	return 0;
}
