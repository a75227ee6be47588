/*
 * fake_boottime.c - an LD_PRELOAD stand-in for a system sleep, so that the
 * tests can check what benchgate does with a run the machine slept through
 * (tests/scripts/test_measure_slept.sh). Once the file FAKE_SLEEP_FILE
 * exists, CLOCK_BOOTTIME reads FAKE_SLEEP_SECONDS (30 unless set; a
 * fraction too) ahead of
 * the kernel's, as after a suspend of that long, while CLOCK_MONOTONIC,
 * which a suspend stops, reads as it is. Every other clock is the kernel's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	long rc = syscall(SYS_clock_gettime, clk, ts);

	if (rc == 0 && clk == CLOCK_BOOTTIME) {
		const char *file = getenv("FAKE_SLEEP_FILE"), *secs = getenv("FAKE_SLEEP_SECONDS");

		if (file && access(file, F_OK) == 0) {
			long long ns = (long long)((secs ? strtod(secs, NULL) : 30.0) * 1e9);
			ts->tv_sec += (time_t)(ns / 1000000000LL);
			ts->tv_nsec += (long)(ns % 1000000000LL);
			if (ts->tv_nsec >= 1000000000L) {
				ts->tv_sec++;
				ts->tv_nsec -= 1000000000L;
			}
		}
	}
	return (int)rc;
}
