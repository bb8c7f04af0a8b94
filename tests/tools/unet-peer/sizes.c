/* SPDX-License-Identifier: BSD-2-Clause */
/* sizes.c - unet-peer sizes: send one message of every size 1..max_payload, check each echo. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"

int mode_sizes(struct peer *p)
{
	struct cfg *cfg = p->cfg;
	struct unet_channel *ch = p->ch[0];
	uint32_t max = unet_channel__max_payload(ch), min = cfg->min_size ? cfg->min_size : 1, n, j;
	double deadline = now_s() + cfg->timeout;
	uint8_t *buf;
	int ret, failed = 0;

	if (cfg->max_size && cfg->max_size < max)
		max = cfg->max_size;
	if (max == 0) {
		err("endpoint reports max_payload 0");
		return 1;
	}
	buf = malloc(max + 1);
	if (!buf) {
		err("out of memory");
		return 1;
	}
	if (min > max) {
		err("--min-size %u is above the largest size %u", min, max);
		return 1;
	}
	for (n = min; n <= max && !failed; n++) {
		bool got = false;

		for (j = 0; j < n; j++)
			buf[j] = size_pattern(n, j);
		ret = send_retry(p, ch, buf, n, deadline);
		if (ret < 0) {
			err("send of size %u failed: %s", n, strerror(-ret));
			failed = 1;
			break;
		}
		while (!got && !failed && !stop_flag) {
			struct unet_recv_desc d[RECV_BATCH];
			int k, i;

			if (now_s() > deadline) {
				err("no echo of size %u before the timeout", n);
				failed = 1;
				break;
			}
			k = recv_or_wait(p, d, deadline);
			if (k < 0) {
				failed = 1;
				break;
			}
			if (k == 0)
				continue;
			for (i = 0; i < k && !failed; i++) {
				const uint8_t *data = d[i].data;

				if (d[i].channel != ch) {
					err("size %u: message on another channel (tag %u)", n,
					    d[i].channel ? unet_channel__tag(d[i].channel) : 0);
					failed = 1;
				} else if (got || d[i].len != n) {
					err("size %u: echo has %u bytes%s", n, d[i].len,
					    got ? " (extra message)" : "");
					failed = 1;
				} else {
					for (j = 0; j < n; j++)
						if (data[j] != size_pattern(n, j))
							break;
					if (j < n) {
						err("size %u: mismatch at byte %u: got 0x%02x want 0x%02x",
						    n, j, data[j], size_pattern(n, j));
						failed = 1;
					}
					got = true;
				}
			}
			unet_endpoint__release(p->ep, d, (unsigned int)k);
		}
		if (stop_flag && !got && !failed) {
			err("interrupted at size %u", n);
			failed = 1;
		}
	}
	if (!failed) {
		/* One past the largest must be refused, with nothing sent. */
		uint32_t big = unet_channel__max_payload(ch) + 1;
		uint8_t *b2 = calloc(1, big);

		ret = b2 ? unet_channel__send_copy(ch, b2, big) : -ENOMEM;
		free(b2);
		if (ret != -EMSGSIZE) {
			err("send of %u bytes returned %d, want -EMSGSIZE (the channel's max_payload + 1)", big, ret);
			failed = 1;
		} else {
			printf("sizes ok %u..%u\n", min, max);
		}
	}
	free(buf);
	drain_tx(p, 0.1);
	return failed ? 1 : 0;
}
