/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_common.h - what the test tools must agree on: the payload pattern a
 * receiver checks, and strict number parsing for their options. */
#ifndef UNET_TOOL_COMMON_H
#define UNET_TOOL_COMMON_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Byte j (j >= 8, after the big-endian sequence number) of the payload of
 * message seq: unet-peer send writes it, unet-peer recv checks it,
 * unet-inject forges it. */
static inline uint8_t seq_pattern(uint64_t seq, uint32_t j)
{
	return (uint8_t)((seq * 131u) ^ (j * 7u) ^ (j >> 8) ^ 0xa5u);
}

/* A whole decimal/hex/octal number in [0, max]: 0, or -1 for anything else
 * (empty, negative, trailing junk, out of range). */
static inline int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Set by on_signal (install it for SIGINT/SIGTERM): every loop checks it,
 * so a tool stops cleanly when its test's time is up.  Weak rather than
 * static: a tool built from several files (tests/tools/NAME/) has one flag
 * that all of them see, a tool of one file needs no definition elsewhere. */
__attribute__((weak)) volatile sig_atomic_t stop_flag;

static inline void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* UNET_TOOL_COMMON_H */
