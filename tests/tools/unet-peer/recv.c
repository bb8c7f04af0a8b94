/* SPDX-License-Identifier: BSD-2-Clause */
/* recv.c - unet-peer recv: expect --count sequence-numbered messages per channel. */
#include <endian.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

struct rx_track {
	uint8_t *seen; /* bitmap of count bits */
	uint64_t unique, dup, out_of_range, corrupt, short_msgs;
};

int mode_recv(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct rx_track tr[MAX_CHANNELS];
	struct unet_recv_desc d[RECV_BATCH];
	uint64_t want = cfg->count, total_unique = 0, foreign = 0, foreign_lib;
	double start = now_s(), deadline = start + cfg->timeout, done_at = 0, end;
	unsigned int c;
	int failed = 0;

	memset(tr, 0, sizeof(tr));
	for (c = 0; c < cfg->nch; c++) {
		tr[c].seen = calloc(1, want / 8 + 1);
		if (!tr[c].seen) {
			err("out of memory");
			failed = 1;
			goto out;
		}
	}
	end = deadline;
	while (!stop_flag && now_s() < end) {
		int n = recv_or_wait(p, d, end), i;

		if (n < 0) {
			failed = 1;
			break;
		}
		if (n == 0)
			continue;
		for (i = 0; i < n; i++) {
			int ci = chan_index(p, d[i].channel);
			struct rx_track *t;
			const uint8_t *data = d[i].data;
			uint64_t seq, be;
			uint32_t j;

			if (ci < 0) {
				foreign++;
				continue;
			}
			t = &tr[ci];
			if (d[i].len < SEQ_BYTES) {
				t->short_msgs++;
				continue;
			}
			memcpy(&be, data, SEQ_BYTES);
			seq = be64toh(be);
			if (seq >= want) {
				t->out_of_range++;
				continue;
			}
			for (j = SEQ_BYTES; j < d[i].len; j++)
				if (data[j] != seq_pattern(seq, j))
					break;
			if (j < d[i].len) {
				if (t->corrupt++ == 0)
					err("tag %u seq %" PRIu64 ": byte %u is 0x%02x, want 0x%02x",
					    cfg->ch[ci].tag, seq, j, data[j], seq_pattern(seq, j));
				continue;
			}
			if (t->seen[seq / 8] & (1u << (seq % 8))) {
				t->dup++;
			} else {
				t->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
				t->unique++;
				total_unique++;
			}
		}
		if ((i = unet_endpoint__release(p->ep, d, (unsigned int)n)) < 0) {
			err("unet_endpoint__release: %s", strerror(-i));
			failed = 1;
			break;
		}
		if (!done_at && total_unique == want * cfg->nch) {
			/* All there: linger a little to catch duplicates. */
			done_at = now_s();
			end = done_at + cfg->linger_ms / 1000.0;
			if (end > deadline)
				end = deadline;
		}
	}
out:
	foreign_lib = p->ep ? foreign_msgs(p) : 0;
	{
		uint64_t r = 0, l = 0, du = 0, bad = 0;

		for (c = 0; c < cfg->nch && tr[c].seen; c++) {
			uint64_t lost = want - tr[c].unique;

			bad += tr[c].out_of_range + tr[c].corrupt + tr[c].short_msgs;
			r += tr[c].unique;
			l += lost;
			du += tr[c].dup;
			if (!cfg->quiet && cfg->nch > 1)
				printf("recv tag=%u received=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64
				       " bad=%" PRIu64 "\n",
				       cfg->ch[c].tag, tr[c].unique, lost, tr[c].dup,
				       tr[c].out_of_range + tr[c].corrupt + tr[c].short_msgs);
		}
		printf("recv received=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64 " bad=%" PRIu64
		       " foreign=%" PRIu64 " elapsed=%.3f\n",
		       r, l, du, bad, foreign + foreign_lib, (done_at ? done_at : now_s()) - start);
		if (l || du || bad || foreign || foreign_lib) {
			if (p->ep)
				print_ep_stats(p, "recv");
			if (!failed)
				err("expected %" PRIu64 " unique messages on each of %u channel(s)",
				    want, cfg->nch);
			failed = 1;
		}
	}
	for (c = 0; c < cfg->nch; c++)
		free(tr[c].seen);
	return failed ? 1 : 0;
}
