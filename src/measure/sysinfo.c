/*
 * sysinfo.c - swap, memory pressure and clocks read from /proc (see internal.h).
 */
#include "measure/internal.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

bool bg_sys_swap_used(uint64_t *bytes)
{
	struct sysinfo si;

	/* sysinfo(2) reports the same SwapTotal/SwapFree as /proc/meminfo, far cheaper */
	if (sysinfo(&si) != 0)
		return false;
	*bytes = ((uint64_t)si.totalswap - (uint64_t)si.freeswap) * si.mem_unit;
	return true;
}

bool bg_sys_memory_available(uint64_t *bytes)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	bool found = false;
	unsigned long long kib;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			*bytes = (uint64_t)kib * 1024u;
			found = true;
		}
	fclose(f);
	return found;
}

int bg_sys_psi_open(void)
{
	return open("/proc/pressure/memory", O_RDONLY | O_CLOEXEC);
}

bool bg_sys_psi_memory_some10(int fd, double *avg10)
{
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return false;
	/* the kernel regenerates the text on every read from offset 0 */
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "some avg10=%lf", avg10) == 1;
}

void bg_sys_rfc3339(double epoch_seconds, char buf[64])
{
	time_t secs = (time_t)epoch_seconds;
	long usec = (long)((epoch_seconds - (double)secs) * 1e6 + 0.5);
	struct tm tm;

	if (usec >= 1000000) {
		secs++;
		usec -= 1000000;
	}
	gmtime_r(&secs, &tm);
	snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
}

double bg_sys_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t bg_sys_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool bg_proc_comm(pid_t pid, char comm[64])
{
	char file[64];
	FILE *f;
	bool got = false;

	comm[0] = '\0';
	snprintf(file, sizeof(file), "/proc/%ld/comm", (long)pid);
	if ((f = fopen(file, "re"))) {
		got = fgets(comm, 64, f) != NULL;
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	for (char *c = comm; *c; c++) /* a name the process chose: one line of text */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return got && comm[0];
}

int64_t bg_sys_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool bg_sys_cpu_times(double *busy, double *steal)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq, st = 0;
	long hz = sysconf(_SC_CLK_TCK);
	char buf[512];
	FILE *f = fopen("/proc/stat", "re");
	int n = 0;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		n = sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
			   &irq, &softirq, &st);
	fclose(f);
	if (n < 7 || hz <= 0)
		return false;
	/* guest time is counted in user already */
	*busy = (double)(user + nice + system + irq + softirq) / (double)hz;
	*steal = (double)st / (double)hz;
	return true;
}

double bg_sys_own_cpu(void)
{
	struct rusage self, kids;
	double t = 0;

	if (getrusage(RUSAGE_SELF, &self) == 0)
		t += (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec / 1e6 +
		     (double)self.ru_stime.tv_sec + (double)self.ru_stime.tv_usec / 1e6;
	if (getrusage(RUSAGE_CHILDREN, &kids) == 0)
		t += (double)kids.ru_utime.tv_sec + (double)kids.ru_utime.tv_usec / 1e6 +
		     (double)kids.ru_stime.tv_sec + (double)kids.ru_stime.tv_usec / 1e6;
	return t;
}
