/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_uam.c - U-Net Active Messages as a unet-bench transport, so UAM is
 * measured by the same loops as raw U-Net, beside it in the same run.
 *
 * A message of up to 64 bytes travels as a request (UAM_MAX_ARGS words,
 * its length rounded up to 8 bytes: every size the benchmark uses is a
 * multiple of 8); a longer one as a store into a ring of slots in the
 * peer's registered region, whose completion handler hands it to the
 * receiver.  Either way it is delivered reliably, exactly once, in order,
 * under UAM's credit flow control: that cost is what this measures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include <unet-xdp/uam.h>
#include <unet-xdp/unet.h>

#define H_SHORT 1  /* a short message in the arguments */
#define H_STORED 2 /* a long message landed in our region */
#define REGION 1
#define SLOTS 256  /* store slots, on each side: also the bound on stores in flight */
#define SLOT_SIZE 2048
#define QUEUE 1024 /* received messages not yet taken by recv */

struct rxq_entry {
	uint32_t len;
	uint8_t data[BENCH_MAX_SIZE];
};

struct bench_conn {
	struct unet_endpoint *uep;
	struct unet_channel *uch;
	struct uam_ep *ep;
	struct uam_chan *ch;
	uint8_t *region;   /* the peer stores into it: message slots, then bulk */
	size_t region_len;
	const uint8_t *bulk_src; /* bulk stores read from here */
	long bulk_done;
	uint8_t *tx_slots; /* our stores are read from here until done */
	uint32_t tx_next, tx_inflight;
	int error;	   /* first failed op's status */
	struct rxq_entry *q;
	uint32_t q_head, q_tail, q_taken; /* taken: handed out by the last recv */
};

static void enqueue(struct bench_conn *c, const void *data, uint32_t len)
{
	struct rxq_entry *e;

	if (c->q_tail - c->q_head == QUEUE) /* recv is not keeping up: cannot happen
						* with at most BENCH_MAX_BATCH per
						* poll, but never overrun */
		return;
	e = &c->q[c->q_tail++ % QUEUE];
	e->len = len > BENCH_MAX_SIZE ? BENCH_MAX_SIZE : len;
	memcpy(e->data, data, e->len);
}

static void on_short(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	enqueue(ctx, m->args, m->nargs * 8u);
}

static void on_stored(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct bench_conn *c = ctx;

	(void)ep;
	/* Only a message slot is a message (UAM checked the range against
	 * the region; this keeps to the slots).  Compared without a sum
	 * that could wrap. */
	if (m->region == REGION && m->offset <= (uint64_t)SLOTS * SLOT_SIZE &&
	    m->len <= (uint64_t)SLOTS * SLOT_SIZE - m->offset)
		enqueue(c, c->region + m->offset, (uint32_t)m->len);
}

static void on_store_done(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct bench_conn *c = ctx;

	(void)ep;
	(void)op;
	c->tx_inflight--;
	if (status && !c->error)
		c->error = status;
	else if (!status)
		c->bulk_done++; /* read by the bulk role only */
}

static void uam_bench_close(struct bench_conn *c)
{
	if (!c)
		return;
	uam_chan__close(c->ch);
	uam_ep__destroy(c->ep);
	unet_endpoint__destroy(c->uep);
	free(c->region);
	free(c->tx_slots);
	free((void *)c->bulk_src);
	free(c->q);
	free(c);
}

static struct bench_conn *uam_bench_open(const struct bench_opts *o)
{
	struct bench_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->region_len = (size_t)SLOTS * SLOT_SIZE + (size_t)o->bulk_bytes;
	c->region = calloc(1, c->region_len);
	c->tx_slots = calloc(SLOTS, SLOT_SIZE);
	c->q = calloc(QUEUE, sizeof(*c->q));
	if (!c->region || !c->tx_slots || !c->q || bench_unet_setup(o, &c->uep, &c->uch)) {
		free(c->region);
		free(c->tx_slots);
		free(c->q);
		free(c);
		return NULL;
	}
	c->ep = uam_ep__create(c->uep, NULL);
	c->ch = c->ep ? uam_chan__open(c->ep, c->uch) : NULL;
	if (!c->ch || uam_ep__set_handler(c->ep, H_SHORT, on_short, c) ||
	    uam_ep__set_handler(c->ep, H_STORED, on_stored, c) ||
	    uam_region__register(c->ep, REGION, c->region, c->region_len, UAM_REGION_WRITE)) {
		fprintf(stderr, "unet-bench: UAM set-up failed: %s\n", strerror(errno));
		uam_bench_close(c);
		return NULL;
	}
	return c;
}

static int uam_bench_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;

	if (c->error)
		return c->error;
	for (k = 0; k < n; k++) {
		int r;

		if (tx[k].len <= UAM_MAX_ARGS * 8) {
			uint64_t args[UAM_MAX_ARGS];

			bench_tx_write(args, &tx[k]);
			r = uam_request(c->ch, H_SHORT, args, (tx[k].len + 7) / 8);
		} else {
			uint8_t *src;
			uint32_t slot;

			if (c->tx_inflight == SLOTS)
				break;
			slot = c->tx_next++ % SLOTS;
			src = c->tx_slots + (size_t)slot * SLOT_SIZE;
			bench_tx_write(src, &tx[k]);
			r = uam_store(c->ch, src, tx[k].len, REGION, (uint64_t)slot * SLOT_SIZE,
				      H_STORED, NULL, 0, on_store_done, c);
			if (r > 0)
				c->tx_inflight++;
			else
				c->tx_next--;
		}
		if (r == -EAGAIN)
			break;
		if (r < 0)
			return k ? (int)k : r;
	}
	/* uam_request and uam_store transmit at once while credits allow.
	 * Out of credits or store slots: take in the acknowledgements that
	 * give them back (a sender that never receives would stall). */
	if (k < n)
		uam_poll(c->ep);
	return (int)k;
}

static int uam_bench_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block)
{
	unsigned int n = 0;
	int r;

	c->q_head += c->q_taken;
	c->q_taken = 0;
	if (c->q_head == c->q_tail) {
		r = block ? uam_wait(c->ep, BENCH_BLOCK_MS) : uam_poll(c->ep);
		if (r < 0 && r != -EINTR)
			return r;
	}
	while (n < max && c->q_head + n != c->q_tail) {
		struct rxq_entry *e = &c->q[(c->q_head + n) % QUEUE];

		rx[n++] = (struct bench_rx){ .data = e->data, .len = e->len };
	}
	c->q_taken = n;
	return (int)n;
}

/* Wait until every store completed and the peer had time to acknowledge
 * what is outstanding. */
static int uam_bench_flush(struct bench_conn *c, int timeout_ms)
{
	uint64_t end = bench_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (c->tx_inflight && bench_now_ns() < end)
		if (uam_wait(c->ep, 10) < 0)
			break;
	for (int i = 0; i < 10; i++)
		uam_wait(c->ep, 1);
	return c->tx_inflight ? -ETIMEDOUT : c->error;
}

/* Stores of `bytes` into the peer's region after its message slots, up to
 * depth in flight; a store completes when the peer has all of it. */
static long uam_bench_bulk(struct bench_conn *c, size_t bytes, long count, unsigned int depth,
			   uint64_t deadline)
{
	long started = 0;

	if (!c->bulk_src) {
		uint8_t *src = malloc(bytes);

		if (!src)
			return -ENOMEM;
		for (size_t i = 0; i < bytes; i++)
			src[i] = (uint8_t)(i * 7);
		c->bulk_src = src;
	}
	while (c->bulk_done < count && !c->error && bench_now_ns() < deadline) {
		while (started < count && c->tx_inflight < depth) {
			int r = uam_store(c->ch, c->bulk_src, bytes, REGION,
					  (uint64_t)SLOTS * SLOT_SIZE, 0, NULL, 0, on_store_done, c);

			if (r == -EAGAIN)
				break;
			if (r < 0)
				return r;
			c->tx_inflight++;
			started++;
		}
		if (uam_poll(c->ep) < 0)
			break;
	}
	return c->error ? c->error : c->bulk_done;
}

const struct bench_transport bench_uam = {
	.name = "uam",
	.open = uam_bench_open,
	.send = uam_bench_send,
	.recv = uam_bench_recv,
	.flush = uam_bench_flush,
	.close = uam_bench_close,
	.bulk = uam_bench_bulk,
};
