/*
 * stamp - test program: writes the current time in nanoseconds to FILE, so
 * that no two runs write the same output (fails --deterministic).
 *   stamp FILE
 */
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	FILE *f;

	if (argc != 2)
		return 2;
	clock_gettime(CLOCK_REALTIME, &ts);
	f = fopen(argv[1], "w");
	if (!f)
		return 2;
	fprintf(f, "%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	return fclose(f) == 0 ? 0 : 2;
}
