/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_unet.c - the U-Net transport of unet-bench.
 *
 * Sends are direct-access U-Net: each message is written in place in a
 * segment buffer (buf_alloc + buf_payload) and a batch goes to the send
 * queue with one unet_endpoint__send_batch (one kick).  Receives take up to
 * a batch from the receive queue and give it back to the free queue on the
 * next call, so the payload is read where the kernel wrote it.
 *
 * --channels N opens N channels (tags tag..tag+N-1, peer tags likewise)
 * and sends on the last one: the peer's XDP program then looks the tag up
 * in a map holding N entries, which is what we want to measure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include <unet-xdp/unet.h>

struct bench_conn {
	struct unet_endpoint *ep;
	struct unet_channel *ch; /* the one we send on: the last opened */
	struct bench_unet_rx rx;
	struct unet_send_desc sd[BENCH_MAX_BATCH];
	uint32_t buf_payload; /* what one send buffer holds */
	uint8_t big[9216];    /* a message larger than that, before send_copy */
};

void bench_unet_log(enum unet_log_level l, const char *msg, void *ctx)
{
	(void)ctx;
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "unet-bench: libunet: %s\n", msg);
}

/* ---- waiting: the mode's spin budget, and the counters for the JSON ---- */

static struct unet_endpoint *wait_ep; /* one endpoint per run */
int bench_unet_tx_csum = -1;

int bench_unet_wait_mode(struct unet_endpoint *ep, const struct bench_opts *o)
{
	struct unet_endpoint_info info;
	int err = 0;

	if (!unet_endpoint__info(ep, &info))
		bench_unet_tx_csum = info.tx_csum_offload;
	if (o->mode == BENCH_BLOCK)
		err = unet_endpoint__set_spin_us(ep, 0);
	else if (o->mode == BENCH_ADAPTIVE && o->spin_us >= 0)
		err = unet_endpoint__set_spin_us(ep, (uint32_t)o->spin_us);
	/* spin: the role never waits; adaptive without --spin-us: the
	 * library's default ($UNET_SPIN_US or built in). */
	if (err)
		fprintf(stderr, "unet-bench: unet_endpoint__set_spin_us: %s\n", strerror(-err));
	else
		wait_ep = ep;
	return err;
}

int bench_unet_wait_stats(struct unet_wait_stats *st)
{
	if (!wait_ep)
		return -ENOENT;
	st->sz = sizeof(*st);
	return unet_endpoint__wait_stats(wait_ep, st);
}

void bench_unet_wait_forget(struct unet_endpoint *ep)
{
	if (ep == wait_ep)
		wait_ep = NULL;
}

static void unet_close(struct bench_conn *c)
{
	if (!c)
		return;
	bench_unet_wait_forget(c->ep);
	bench_unet_rx_release(c->ep, &c->rx);
	/* Where messages were lost, in the kernel's words: a diagnostic for
	 * stderr, so a lossy rate run can be explained. */
	struct unet_endpoint_stats st;

	if (c->ep && unet_endpoint__stats(c->ep, &st) == 0 && (st.rx_msgs || st.tx_msgs))
		fprintf(stderr,
			"unet-bench: unet endpoint: rx %llu tx %llu; drops: rx ring full %llu, "
			"free queue empty %llu, other %llu, unknown channel %llu\n",
			(unsigned long long)st.rx_msgs, (unsigned long long)st.tx_msgs,
			(unsigned long long)st.rx_ring_full, (unsigned long long)st.rx_fill_empty,
			(unsigned long long)st.rx_dropped, (unsigned long long)st.rx_unknown_channel);
	/* Closes every channel (a map delete each) and flushes the send queue. */
	unet_endpoint__destroy(c->ep);
	free(c);
}

int bench_unet_setup(const struct bench_opts *o, struct unet_endpoint **ep,
		     struct unet_channel **ch)
{
	UNET_OPTS_INIT(unet_endpoint_opts, eo);
	struct unet_endpoint_info info;

	if (!o->iface || !o->have_peer || o->tag <= 0 || o->peer_tag <= 0) {
		fprintf(stderr, "unet-bench: %s needs --iface, --tag, --peer and --peer-tag\n",
			o->transport);
		return -EINVAL;
	}
	if (o->tag + o->channels - 1 > 65535 || o->peer_tag + o->channels - 1 > 65535) {
		fprintf(stderr, "unet-bench: --tag/--peer-tag + --channels - 1 must be <= 65535\n");
		return -EINVAL;
	}
	unet_set_log_fn(bench_unet_log, NULL);
	eo.mode = (enum unet_xdp_mode)o->xdp_mode;
	eo.busy_poll_usec = (uint32_t)o->busy_poll_usec;
	eo.queue_mask = o->queue_mask;
	eo.segment_size = (uint32_t)o->segment_bytes;
	eo.rx_size = eo.tx_size = eo.fill_size = eo.comp_size = (uint32_t)o->ring;
	*ep = unet_endpoint__create(o->iface, &eo);
	if (!*ep) {
		fprintf(stderr, "unet-bench: unet_endpoint__create %s: %s\n", o->iface, strerror(errno));
		return -errno;
	}
	for (long i = 0; i < o->channels; i++) {
		UNET_OPTS_INIT(unet_channel_opts, co);

		co.tx_queue = o->tx_queue;
		*ch = o->peer_ip ? unet_channel__open_ipv4(*ep, (uint16_t)(o->tag + i), o->peer_ip, 0,
							    (uint16_t)(o->peer_tag + i), &co)
				 : unet_channel__open(*ep, (uint16_t)(o->tag + i), o->peer_mac,
						      (uint16_t)(o->peer_tag + i), &co);
		if (!*ch) {
			int err = -errno;

			fprintf(stderr, "unet-bench: unet_channel__open tag %ld (channel %ld of %ld): %s\n",
				o->tag + i, i + 1, o->channels, strerror(errno));
			unet_endpoint__destroy(*ep);
			return err;
		}
	}
	if (bench_unet_wait_mode(*ep, o)) {
		unet_endpoint__destroy(*ep);
		return -EINVAL;
	}
	if (unet_endpoint__info(*ep, &info) == 0 &&
	    (uint32_t)o->size > unet_channel__max_payload(*ch)) {
		fprintf(stderr, "unet-bench: --size %ld > the channel's max payload %u on %s\n",
			o->size, unet_channel__max_payload(*ch), o->iface);
		unet_endpoint__destroy(*ep);
		return -EMSGSIZE;
	}
	return 0;
}

static struct bench_conn *unet_open(const struct bench_opts *o)
{
	struct bench_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		fprintf(stderr, "unet-bench: out of memory\n");
		return NULL;
	}
	if (bench_unet_setup(o, &c->ep, &c->ch)) {
		free(c);
		return NULL;
	}
	{
		struct unet_endpoint_info info;

		c->buf_payload = unet_endpoint__info(c->ep, &info) ? UINT32_MAX : info.buf_payload;
	}
	return c;
}

static int unet_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k = 0;
	int ret;

	/* A message larger than a send buffer (a jumbo MTU): copied into a
	 * chain of buffers, one frame in pieces, by the library. */
	if (tx[0].len > c->buf_payload) {
		for (; k < n; k++) {
			bench_tx_write(c->big, &tx[k]);
			ret = unet_channel__send_copy(c->ch, c->big, tx[k].len);
			if (ret == -EAGAIN) {
				unet_endpoint__complete(c->ep);
				break;
			}
			if (ret < 0)
				return ret;
		}
		return (int)k;
	}
	/* Build in place: take segment buffers and write each message where
	 * the kernel will read it.  Running out of buffers (all in flight)
	 * just makes this batch shorter. */
	for (; k < n; k++) {
		uint64_t buf = unet_endpoint__buf_alloc(c->ep);

		if (buf == UNET_NO_BUF)
			break;
		bench_tx_write(unet_endpoint__buf_payload(c->ep, buf), &tx[k]);
		c->sd[k] = (struct unet_send_desc){ .channel = c->ch, .buf = buf, .len = tx[k].len };
	}
	if (!k) {
		unet_endpoint__complete(c->ep);
		return 0;
	}
	ret = unet_endpoint__send_batch(c->ep, c->sd, k);
	if (ret == -EAGAIN)
		ret = 0;
	if (ret < 0) {
		for (unsigned int i = 0; i < k; i++)
			unet_endpoint__buf_free(c->ep, c->sd[i].buf);
		return ret;
	}
	/* The tail the send queue had no room for stays ours: give it back. */
	for (unsigned int i = (unsigned int)ret; i < k; i++)
		unet_endpoint__buf_free(c->ep, c->sd[i].buf);
	if ((unsigned int)ret < k)
		unet_endpoint__complete(c->ep);
	return ret;
}

void bench_unet_rx_release(struct unet_endpoint *ep, struct bench_unet_rx *r)
{
	if (r->held)
		unet_endpoint__release(ep, r->d, r->held);
	r->held = 0;
}

int bench_unet_recv(struct unet_endpoint *ep, struct bench_unet_rx *r, struct bench_rx *rx,
		    unsigned int max, bool block)
{
	int n;

	bench_unet_rx_release(ep, r);
	if (max > BENCH_MAX_BATCH)
		max = BENCH_MAX_BATCH;
	n = unet_endpoint__recv(ep, r->d, max);
	if (n == 0 && block) {
		n = unet_endpoint__wait(ep, BENCH_BLOCK_MS);
		if (n == -EINTR)
			return 0;
		if (n > 0)
			n = unet_endpoint__recv(ep, r->d, max);
	}
	if (n <= 0)
		return n;
	r->held = (unsigned int)n;
	for (int i = 0; i < n; i++)
		rx[i] = (struct bench_rx){ .data = r->d[i].data, .len = r->d[i].len };
	return n;
}

static int unet_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block)
{
	return bench_unet_recv(c->ep, &c->rx, rx, max, block);
}

static int unet_flush(struct bench_conn *c, int timeout_ms)
{
	return unet_endpoint__flush(c->ep, timeout_ms);
}

const struct bench_transport bench_unet = {
	.name = "unet",
	.open = unet_open,
	.send = unet_send,
	.recv = unet_recv,
	.flush = unet_flush,
	.close = unet_close,
};
