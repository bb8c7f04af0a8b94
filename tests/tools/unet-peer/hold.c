/* SPDX-License-Identifier: BSD-2-Clause */
/* hold.c - unet-peer hold: hold an endpoint and its channels, count what arrives. */
#include <inttypes.h>
#include <string.h>

#include "peer.h"

int mode_hold(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_recv_desc d[RECV_BATCH];
	double deadline = now_s() + cfg->timeout;
	uint64_t got = 0, foreign = 0;
	int failed = 0;

	while (!stop_flag && now_s() < deadline) {
		int n = recv_or_wait(p, d, deadline), i;

		if (n < 0) {
			failed = 1;
			break;
		}
		if (n == 0)
			continue;
		for (i = 0; i < n; i++) {
			int ci = chan_index(p, d[i].channel);

			if (ci < 0) {
				foreign++;
				continue;
			}
			got++;
			if (!cfg->quiet)
				printf("got tag=%u len=%u\n", cfg->ch[ci].tag, d[i].len);
			if (cfg->expect >= 0 && got > (uint64_t)cfg->expect)
				err("unexpected message on tag %u (%u bytes)", cfg->ch[ci].tag,
				    d[i].len);
		}
		fflush(stdout);
		unet_endpoint__release(p->ep, d, (unsigned int)n);
	}
	foreign += foreign_msgs(p);
	printf("hold received=%" PRIu64 " foreign=%" PRIu64 "\n", got, foreign);
	if (foreign) {
		err("%" PRIu64 " message(s) for channels this endpoint does not own", foreign);
		failed = 1;
	}
	if (cfg->expect >= 0 && got != (uint64_t)cfg->expect) {
		err("received %" PRIu64 " message(s), expected %lld", got, cfg->expect);
		failed = 1;
	}
	return failed ? 1 : 0;
}
