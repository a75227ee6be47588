/*
 * pagefault.c - what a fresh anonymous page costs on this machine: maps N
 * pages, touches one byte in each (one page fault per page), unmaps; then
 * the same with madvise(MADV_POPULATE_WRITE) first (the kernel fills the
 * page tables in one call, no fault per page). Prints the mean time per
 * page of R rounds of each, interleaved. With FILE, also what mapping it
 * (MAP_POPULATE), touching its pages and unmapping it cost, each a mean of
 * R rounds: the figures behind bg_file_view_leave_mapped.
 *   pagefault [N] [R] [FILE]      (defaults 100 pages, 200 rounds)
 * A fresh process of `benchgate validate` touches about 100 new pages
 * (bench/phases.sh with FRESH=M shows them by phase). Not a test.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Microseconds to map, optionally populate, and touch n pages. */
static double one(size_t n, int populate)
{
	size_t len = n * 4096;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t1;

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	t0 = now_us();
	if (populate && madvise((void *)p, len, MADV_POPULATE_WRITE) != 0) {
		perror("madvise(MADV_POPULATE_WRITE)");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		p[i * 4096] = 1;
	t1 = now_us();
	munmap((void *)p, len);
	return t1 - t0;
}

/* Prints the mean microseconds to map path, touch each page, unmap it. */
static int file_costs(const char *path, int rounds)
{
	double t[3] = {0};
	volatile char sink = 0;
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < 1) {
		fprintf(stderr, "pagefault: %s: not a readable, non-empty file\n", path);
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		size_t len = (size_t)st.st_size;
		double a = now_us(), b, c;
		char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		b = now_us();
		for (size_t i = 0; i < len; i += 4096)
			sink = (char)(sink + m[i]);
		c = now_us();
		munmap(m, len);
		t[0] += b - a;
		t[1] += c - b;
		t[2] += now_us() - c;
	}
	close(fd);
	printf("%s, %lld pages: mapped %.1f us, touched %.1f us, unmapped %.1f us\n", path,
	       (long long)((st.st_size + 4095) / 4096), t[0] / rounds, t[1] / rounds, t[2] / rounds);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : 100;
	int rounds = argc > 2 ? atoi(argv[2]) : 200;
	double touch = 0, populate = 0;

	if (n < 1 || rounds < 1) {
		fprintf(stderr, "usage: pagefault [PAGES] [ROUNDS] [FILE]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		touch += one(n, 0);
		populate += one(n, 1);
	}
	printf("%zu pages, %d rounds: touched %.2f us/page, populated first %.2f us/page\n", n, rounds,
	       touch / rounds / (double)n, populate / rounds / (double)n);
	return argc > 3 ? file_costs(argv[3], rounds) : 0;
}
