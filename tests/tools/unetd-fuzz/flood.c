/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flood.c - unetd-fuzz's flood of refused requests (--flood): well-formed
 * CH_OPEN_IPV4 requests on an endpoint that is not the caller's, each
 * refused (and each, without the daemon's log limit, a line in its log),
 * back to back for the time asked.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define REPLY_MS 5000

long flood_run(const char *path, long seconds, long count, long *refused)
{
	struct unetd_hello hello = { .version = UNETD_PROTO_VERSION };
	struct unetd_ch_open_ipv4 req = { .ep = 0xeeeeeeeeu, .peer_addr = 0x0100000au,
					  .tag = 5, .peer_tag = 1 };
	struct fuzz_reply r;
	struct timespec now;
	double end;
	uint32_t seq = 0;
	long n = 0;
	int fd = connect_to(path);

	*refused = 0;
	if (fd < 0 || call(fd, ++seq, UNETD_REQ_HELLO, &hello, sizeof(hello), REPLY_MS, &r) != 1) {
		fprintf(stderr, "unetd-fuzz: no HELLO at %s\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* Bounded by the clock and by count: the daemon's budget paces it
	 * (1000 a second for a user other than root). */
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = (double)now.tv_sec + (double)now.tv_nsec / 1e9 + (double)seconds;
	for (; n < count; n++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)now.tv_sec + (double)now.tv_nsec / 1e9 >= end)
			break;
		if (call(fd, ++seq, UNETD_REQ_CH_OPEN_IPV4, &req, sizeof(req), REPLY_MS, &r) != 1)
			break;
		*refused += r.h.err != 0;
	}
	close(fd);
	return n;
}
