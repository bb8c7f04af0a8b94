/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.c - clocks, CPU time and percentiles for unet-bench.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	/* MONOTONIC, not REALTIME: an NTP step in the middle of a run must
	 * not turn into a negative or huge round trip.  The vDSO makes this
	 * ~20 ns, small against the microseconds we measure. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_cpu_us(void)
{
	struct rusage ru;

	/* getrusage rather than CLOCK_PROCESS_CPUTIME_ID: the two parts are
	 * what the JSON promises (user + sys), and a reader can split them
	 * here if needed.  Softirq work the kernel does for us on another
	 * CPU (veth NAPI of the peer) is not in it. */
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void bench_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t bench_percentile(const uint64_t *sorted, size_t n, double q)
{
	/* Nearest rank: the smallest sample with at least q*n samples at or
	 * below it.  No interpolation, so every figure is a real sample. */
	size_t rank;

	if (q <= 0)
		return sorted[0];
	rank = (size_t)(q * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}
