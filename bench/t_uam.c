/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_uam.c - U-Net Active Messages as a unet-bench transport, so UAM is
 * measured by the same loops as raw U-Net, beside it in the same run.
 *
 * A message of up to 64 bytes travels as a short request (UAM_MAX_ARGS
 * words, its length rounded up to 8 bytes: every size the benchmark uses
 * is a multiple of 8); a longer one, up to the medium limit with no
 * arguments (uam_ep__medium_max_args(ep, 0): 1472 bytes at MTU 1500, so
 * every size the benchmark has, BENCH_MAX_SIZE), as one medium request
 * with its payload in the same frame, behind UAM's 20-byte compact
 * header.  On an interface with a smaller MTU a longer one goes as medium
 * requests of up to that limit each, the last of which hands the whole to
 * the receiver (as a libfabric provider's eager protocol would).  Every
 * way it is delivered reliably, exactly once, in order, under UAM's
 * credit flow control: that cost is what this measures.  Stores (into a ring of slots in the peer's registered
 * region, whose completion handler hands the message over) are only used
 * by the bulk role.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include <unet-xdp/uam.h>
#include <unet-xdp/unet.h>

#define H_SHORT 1  /* a short message in the arguments */
#define H_MEDIUM 3 /* a medium message: its payload in the frame */
#define H_PART 4   /* part of a message split into medium ones: args {total} */
#define REGION 1   /* the bulk role's stores land here */
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
	uint8_t *region;   /* the peer's bulk stores land in it */
	size_t region_len;
	const uint8_t *bulk_src; /* bulk stores read from here */
	bool bulk_get;	   /* the bulk role gets from the peer's region instead */
	long bulk_done;
	size_t medium_max; /* with no args (H_MEDIUM) */
	size_t part_max;   /* with one (H_PART) */
	uint8_t medium_buf[BENCH_MAX_SIZE]; /* a medium message being written */
	uint8_t part_buf[BENCH_MAX_SIZE];   /* a split message being received */
	uint32_t part_len;
	uint32_t tx_inflight; /* bulk stores in flight */
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

static void on_medium(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	/* Copied: the payload is in the receive buffer only during the
	 * handler, and the bench hands messages out after the poll. */
	enqueue(ctx, m->data, (uint32_t)m->data_len);
}

/* A part of a split message: parts come in order, exactly once (UAM's
 * guarantee); the one that completes the total hands the message over. */
static void on_part(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct bench_conn *c = ctx;
	uint64_t total = m->nargs == 1 ? m->args[0] : 0;

	(void)ep;
	if (total > BENCH_MAX_SIZE || m->data_len > total - c->part_len) {
		c->part_len = 0; /* not from our peer's send: drop it */
		return;
	}
	memcpy(c->part_buf + c->part_len, m->data, m->data_len);
	c->part_len += (uint32_t)m->data_len;
	if (c->part_len == total) {
		enqueue(c, c->part_buf, c->part_len);
		c->part_len = 0;
	}
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
	struct uam_stats st;

	if (!c)
		return;
	/* What the protocol did, for the log: repeats, timeouts, stalls. */
	if (c->ep && !uam_ep__stats(c->ep, &st))
		fprintf(stderr,
			"unet-bench: uam: tx %llu rx %llu acks %llu retransmits %llu timeouts %llu "
			"dup %llu out-of-order %llu credit stalls %llu\n",
			(unsigned long long)st.tx_frames, (unsigned long long)st.rx_frames,
			(unsigned long long)st.tx_acks, (unsigned long long)st.retransmits,
			(unsigned long long)st.timeouts, (unsigned long long)st.dup_dropped,
			(unsigned long long)st.out_of_order, (unsigned long long)st.credit_stalls);
	uam_chan__close(c->ch);
	uam_ep__destroy(c->ep);
	unet_endpoint__destroy(c->uep);
	free(c->region);
	free((void *)c->bulk_src);
	free(c->q);
	free(c);
}

static struct bench_conn *uam_bench_open(const struct bench_opts *o)
{
	UNET_OPTS_INIT(uam_ep_opts, opts);
	struct bench_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->region_len = (size_t)o->bulk_bytes;
	c->region = calloc(1, c->region_len ? c->region_len : 1);
	c->q = calloc(QUEUE, sizeof(*c->q));
	if (!c->region || !c->q || bench_unet_setup(o, &c->uep, &c->uch)) {
		free(c->region);
		free(c->q);
		free(c);
		return NULL;
	}
	/* A window of 512 frames (UAM_MAX_WINDOW; uam_chan__open needs
	 * twice that in receive buffers, which the default segment has):
	 * 64 (the default) is one scheduling hiccup of the receiver away
	 * from a stalled stream on a shared 2-vCPU machine, and a bulk
	 * stream at 1% loss keeps sending past a hole only as far as the
	 * window reaches beyond it.  At a jumbo MTU a frame takes several
	 * receive buffers (one per piece): the largest window the segment
	 * holds, halving from 512 (at MTU 9000 with 2048-byte chunks: 128
	 * frames of 8992 bytes, more bytes in flight than 512 of 1492). */
	for (opts.window = UAM_MAX_WINDOW;; opts.window /= 2) {
		c->ep = uam_ep__create(c->uep, &opts);
		c->ch = c->ep ? uam_chan__open(c->ep, c->uch) : NULL;
		if (c->ch || errno != ENOSPC || opts.window <= 64)
			break;
		uam_ep__destroy(c->ep);
		c->ep = NULL;
	}
	if (!c->ch || uam_ep__set_handler(c->ep, H_SHORT, on_short, c) ||
	    uam_ep__set_handler(c->ep, H_MEDIUM, on_medium, c) ||
	    uam_ep__set_handler(c->ep, H_PART, on_part, c) ||
	    uam_region__register(c->ep, REGION, c->region, c->region_len,
				 UAM_REGION_WRITE | UAM_REGION_READ)) {
		fprintf(stderr, "unet-bench: UAM set-up failed: %s\n", strerror(errno));
		uam_bench_close(c);
		return NULL;
	}
	c->medium_max = uam_ep__medium_max_args(c->ep, 0);
	c->part_max = uam_ep__medium_max_args(c->ep, 1);
	c->bulk_get = o->bulk_get;
	return c;
}

/* A message longer than a medium one, as medium parts.  All parts are
 * queued or none (credits for the first but not the rest would leave a
 * half message in the queue: that is fine, UAM queues what it has no
 * credit for, so only the first can meet -EAGAIN from max_queued). */
static int send_split(struct bench_conn *c, const struct bench_tx *tx)
{
	const uint8_t *src = tx->data;
	uint64_t total = tx->len, limit = bench_now_ns() + 1000000000ull;
	size_t off = 0;
	int r = 0;

	if (!src) {
		bench_tx_write(c->medium_buf, tx);
		src = c->medium_buf;
	}
	while (off < tx->len) {
		size_t n = tx->len - off < c->part_max ? tx->len - off : c->part_max;

		r = uam_request_medium(c->ch, H_PART, &total, 1, src + off, n);
		if (r < 0 && (off == 0 || r != -EAGAIN))
			return r;
		if (r < 0) {
			/* The rest must follow: wait for room (rare, and the
			 * receiver would otherwise see half a message), at
			 * most a second: the peer is gone. */
			if (bench_now_ns() > limit)
				return -ETIMEDOUT;
			uam_poll(c->ep);
			continue;
		}
		off += n;
	}
	return r;
}

static int uam_bench_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;

	if (c->error)
		return c->error;
	/* The batch leaves with one kick, as raw U-Net's send_batch. */
	uam_ep__cork(c->ep);
	for (k = 0; k < n; k++) {
		int r;

		if (tx[k].len <= UAM_MAX_ARGS * 8) {
			uint64_t args[UAM_MAX_ARGS];

			bench_tx_write(args, &tx[k]);
			r = uam_request(c->ch, H_SHORT, args, (tx[k].len + 7) / 8);
		} else if (tx[k].len <= c->medium_max) {
			/* An echo sends what it received as it is; a new
			 * message is its header on what the buffer holds. */
			const void *src = tx[k].data;

			if (!src) {
				bench_tx_write(c->medium_buf, &tx[k]);
				src = c->medium_buf;
			}
			r = uam_request_medium(c->ch, H_MEDIUM, NULL, 0, src, tx[k].len);
		} else {
			r = send_split(c, &tx[k]);
		}
		if (r == -EAGAIN)
			break;
		if (r < 0) {
			uam_ep__uncork(c->ep);
			return k ? (int)k : r;
		}
	}
	uam_ep__uncork(c->ep);
	/* uam_request and uam_request_medium transmit at once while credits
	 * allow.  Out of credits: take in the acknowledgements that
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
		/* Empty: the next messages go to the first entries again,
		 * which are in the cache, not to the next of a ring of 1.5
		 * MB (a cache miss per message that raw U-Net, which hands
		 * out its receive buffer, does not have). */
		c->q_head = c->q_tail = 0;
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

/* Stores of `bytes` into the peer's region (or gets of as many from it
 * into ours), up to depth in flight; a store completes when the peer has
 * all of it, a get when all of it is here. */
static long uam_bench_bulk(struct bench_conn *c, size_t bytes, long count, unsigned int depth,
			   uint64_t deadline)
{
	long started = 0;

	if (!c->bulk_src && !c->bulk_get) {
		uint8_t *src = malloc(bytes);

		if (!src)
			return -ENOMEM;
		for (size_t i = 0; i < bytes; i++)
			src[i] = (uint8_t)(i * 7);
		c->bulk_src = src;
	}
	if (c->bulk_get && bytes > c->region_len)
		return -EINVAL;
	while (c->bulk_done < count && !c->error && bench_now_ns() < deadline) {
		while (started < count && c->tx_inflight < depth) {
			int r = c->bulk_get ? uam_get(c->ch, REGION, 0, bytes, REGION, 0, on_store_done, c)
					    : uam_store(c->ch, c->bulk_src, bytes, REGION, 0, 0, NULL,
							0, on_store_done, c);

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
