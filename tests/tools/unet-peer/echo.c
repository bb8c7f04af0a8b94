/* SPDX-License-Identifier: BSD-2-Clause */
/* echo.c - unet-peer echo: echo every message back on the channel it came in on. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "peer.h"
#include "unet_abi.h" /* UNET_UDP_PAYLOAD_OFF */

/* On a routable channel, say each new source MAC the frames come from
 * (tests check that a sender's frames carry its device's MAC): the
 * frame's Ethernet header lies UNET_UDP_PAYLOAD_OFF (IPv6: UNET_UDP6_...) bytes before the
 * payload, in the same receive buffer. */
static void note_src_mac(const struct cfg *cfg, const struct unet_recv_desc *d, uint8_t last[6])
{
	const uint8_t *src = (const uint8_t *)d->data -
			     (cfg->peer_ip6 ? UNET_UDP6_PAYLOAD_OFF : UNET_UDP_PAYLOAD_OFF) + 6;

	if (!cfg->peer_ip || !memcmp(src, last, 6))
		return;
	memcpy(last, src, 6);
	printf("echo src_mac %02x:%02x:%02x:%02x:%02x:%02x\n", src[0], src[1], src[2], src[3],
	       src[4], src[5]);
	fflush(stdout);
}

int mode_echo(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_recv_desc d[RECV_BATCH];
	double deadline = now_s() + cfg->timeout;
	uint64_t echoed = 0, foreign = 0;
	uint8_t last_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int failed = 0;

	while (!stop_flag && !failed && now_s() < deadline &&
	       (!cfg->count_set || echoed < cfg->count)) {
		int n = recv_or_wait(p, d, deadline), i;

		if (n < 0) {
			failed = 1;
			break;
		}
		if (n == 0)
			continue;
		for (i = 0; i < n; i++) {
			int ret;

			if (chan_index(p, d[i].channel) < 0) {
				foreign++;
				continue;
			}
			note_src_mac(cfg, &d[i], last_mac);
			ret = send_retry(p, d[i].channel, d[i].data, d[i].len, deadline);
			if (ret < 0) {
				err("echo of a %u-byte message failed: %s", d[i].len, strerror(-ret));
				failed = 1;
				break;
			}
			echoed++;
		}
		if ((i = unet_endpoint__release(p->ep, d, (unsigned int)n)) < 0) {
			err("unet_endpoint__release: %s", strerror(-i));
			failed = 1;
		}
	}
	drain_tx(p, 0.2);
	if (!cfg->quiet)
		printf("echo echoed=%" PRIu64 " foreign=%" PRIu64 "\n", echoed, foreign);
	if (foreign) {
		err("%" PRIu64 " message(s) for channels this endpoint does not own", foreign);
		failed = 1;
	}
	if (cfg->count_set && echoed != cfg->count && !failed) {
		err("echoed %" PRIu64 " of %" PRIu64 " messages before the timeout", echoed,
		    cfg->count);
		failed = 1;
	}
	return failed ? 1 : 0;
}
