/*
 * mapfile.c - a test program: maps FILE read-only, touches every page, then
 * writes "mapped\n" to stdout and holds the mapping until it is killed (or
 * SECONDS pass, 60 by default): a notebook that keeps a dataset mapped.
 *   mapfile FILE [SECONDS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile unsigned char sum = 0;
	const unsigned char *p;
	struct stat st;
	int fd;

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		fprintf(stderr, "usage: mapfile FILE [SECONDS] (a nonempty file)\n");
		return 2;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (off_t i = 0; i < st.st_size; i += 4096)
		sum = (unsigned char)(sum + p[i]);
	printf("mapped\n");
	fflush(stdout);
	sleep(argc > 2 ? (unsigned)atoi(argv[2]) : 60);
	return sum == 256; /* never: keeps the reads */
}
