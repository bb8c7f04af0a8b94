/* SPDX-License-Identifier: BSD-2-Clause */
/* tool_common.h - what the test tools must agree on: the payload pattern a
 * receiver checks, strict number and address parsing for their options,
 * and stopping on a signal. */
#ifndef UNET_TOOL_COMMON_H
#define UNET_TOOL_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* "A.B.C.D:P" or "A.B.C.D" (port 0): the address in network order, the
 * port (strict, as parse_u64).  Returns 0 or -1. */
static inline int parse_ipv4_port(const char *s, uint32_t *addr, uint16_t *port)
{
	char buf[64], *colon;
	uint64_t p = 0;
	struct in_addr a;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = '\0';
		if (parse_u64(colon + 1, 65535, &p))
			return -1;
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	*addr = a.s_addr;
	*port = (uint16_t)p;
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

/* on_signal for SIGINT and SIGTERM, without SA_RESTART: a blocking
 * wait returns EINTR and its loop sees stop_flag. */
static inline void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Seconds on the monotonic clock. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* UNET_TOOL_COMMON_H */
