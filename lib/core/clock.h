/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clock.h - the core's clock reads: CLOCK_MONOTONIC in nanoseconds, fine
 * (the vDSO's tens of nanoseconds: spin budgets, wait deadlines) and
 * coarse (one scheduler tick, a few ms, for the cheapest read: refreshes
 * due every second or so), and any other clock by its id (unetd charges
 * requests by CLOCK_THREAD_CPUTIME_ID).  One place, so every deadline in
 * the library and the daemon is the same clock in the same unit.
 */
#ifndef UNET_CORE_CLOCK_H
#define UNET_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t unet_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t unet_mono_ns(void)
{
	return unet_clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t unet_mono_coarse_ns(void)
{
	return unet_clock_ns(CLOCK_MONOTONIC_COARSE);
}

static inline int64_t unet_mono_ms(void)
{
	return (int64_t)(unet_mono_ns() / 1000000u);
}

#endif
