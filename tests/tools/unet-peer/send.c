/* SPDX-License-Identifier: BSD-2-Clause */
/* send.c - unet-peer send: --count sequence-numbered messages per channel, paced. */
#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

int mode_send(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	uint64_t total = cfg->count * cfg->nch, sent = 0, eagain = 0;
	uint32_t size = cfg->size, j;
	double start = now_s(), deadline = start + cfg->timeout, t;
	uint8_t *buf;
	int failed = 0;

	if (size > p->info.max_payload) {
		err("--size %u exceeds max_payload %u", size, p->info.max_payload);
		return 1;
	}
	buf = malloc(size);
	if (!buf) {
		err("out of memory");
		return 1;
	}
	while (sent < total && !stop_flag) {
		uint64_t allowed = total;

		t = now_s();
		if (t > deadline) {
			err("sent only %" PRIu64 " of %" PRIu64 " messages in %.1f s", sent, total,
			    cfg->timeout);
			failed = 1;
			break;
		}
		if (cfg->rate > 0) {
			double a = (t - start) * cfg->rate + 1;

			allowed = a < (double)total ? (uint64_t)a : total;
		}
		if (sent >= allowed) {
			double next = start + (double)sent / cfg->rate;

			sleep_s(next - t > 1e-3 ? 1e-3 : next - t);
			continue;
		}
		while (sent < allowed) {
			/* Round robin over the channels; seq counts per channel. */
			unsigned int c = (unsigned int)(sent % cfg->nch);
			uint64_t seq = cfg->seq_base + sent / cfg->nch, be = htobe64(seq);
			int ret;

			memcpy(buf, &be, SEQ_BYTES);
			for (j = SEQ_BYTES; j < size; j++)
				buf[j] = seq_pattern(seq, j);
			ret = unet_channel__send_copy(p->ch[c], buf, size);
			if (ret == -EAGAIN) {
				eagain++;
				unet_endpoint__complete(p->ep);
				sleep_s(20e-6);
				break; /* re-check the deadline */
			}
			if (ret < 0) {
				err("send of message %" PRIu64 " failed: %s", sent, strerror(-ret));
				failed = 1;
				break;
			}
			sent++;
		}
		if (failed)
			break;
	}
	drain_tx(p, 0.5);
	t = now_s() - start;
	if (!cfg->quiet)
		printf("send sent=%" PRIu64 " channels=%u size=%u elapsed=%.3f rate=%.0f eagain=%" PRIu64
		       "\n",
		       sent, cfg->nch, size, t, t > 0 ? (double)sent / t : 0.0, eagain);
	if (stop_flag && sent < total) {
		err("interrupted after %" PRIu64 " of %" PRIu64 " messages", sent, total);
		failed = 1;
	}
	free(buf);
	return failed ? 1 : 0;
}
