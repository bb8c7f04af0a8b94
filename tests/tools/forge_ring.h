/* SPDX-License-Identifier: BSD-2-Clause */
/* forge_ring.h - what the tools that forge an emulated client's frames
 * (unet-forge, unet-forge-chan, unet-forge-chan6, unet-forge-pieces,
 * unet-forge-inet-pieces) share: descriptors put on the send ring as
 * they are, past every check of the library, for unetd to judge; the
 * log function and a field writer. */
#ifndef UNET_FORGE_RING_H
#define UNET_FORGE_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/objects.h"

/* libunet's warnings and errors on stderr, under the tool's name (ctx:
 * unet_set_log_fn(forge_on_log, TOOL)). */
static inline void forge_on_log(enum unet_log_level l, const char *msg, void *ctx)
{
	if (l <= UNET_LOG_WARN)
		fprintf(stderr, "%s: libunet: %s\n", (const char *)ctx, msg);
}

/* A 16-bit field in network order. */
static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Put a descriptor (addr, len) on the endpoint's first send ring as it
 * is, waiting for room, and kick the daemon if it sleeps. */
static inline void forge_raw(struct unet_endpoint *ep, uint64_t addr, uint32_t len)
{
	struct xsk_ring_prod *tx = &ep->q[0].tx;
	uint32_t idx = 0;

	while (xsk_ring_prod__reserve(tx, 1, &idx) != 1)
		unet_endpoint__complete(ep);
	xsk_ring_prod__tx_desc(tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(tx, idx)->len = len;
	xsk_ring_prod__tx_desc(tx, idx)->options = 0;
	xsk_ring_prod__submit(tx, 1);
	ep->q[0].tx_pending++;
	if (xsk_ring_prod__needs_wakeup(tx))
		unet_remote_kick(ep);
}

/* ---- Frames in pieces (unet-forge-pieces, unet-forge-inet-pieces) ---- */

/* Wait (5 s at most) until the daemon has taken all we queued and the
 * library has its buffers back.  Returns 0, or -1 (said on stderr as
 * tool's). */
static inline int forge_settle(struct unet_endpoint *ep, const char *tool)
{
	struct unet_queue *q = &ep->q[0];

	for (int i = 0; i < 5000; i++) {
		unet_endpoint__complete(ep);
		if (__atomic_load_n(q->tx.consumer, __ATOMIC_ACQUIRE) == *q->tx.producer &&
		    !q->tx_pending)
			return 0;
		if (i % 50 == 0)
			unet_remote_kick(ep);
		nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	}
	fprintf(stderr, "%s: the daemon did not take our descriptors\n", tool);
	return -1;
}

/* A piece: at segment offset addr (a buffer of ours, or anything),
 * len bytes. */
struct forge_piece {
	uint64_t addr;
	uint32_t len;
};

/* Put the chain p[0..n) on the send ring as it is, the last piece
 * flagged XDP_PKT_CONTD too when open, and kick. */
static inline void forge_post(struct unet_endpoint *ep, const struct forge_piece *p, uint32_t n,
			      bool open)
{
	struct xsk_ring_prod *tx = &ep->q[0].tx;
	uint32_t idx = 0;

	while (xsk_ring_prod__reserve(tx, n, &idx) != n)
		unet_endpoint__complete(ep);
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(tx, idx + i);

		d->addr = p[i].addr;
		d->len = p[i].len;
		d->options = i + 1 < n || open ? XDP_PKT_CONTD : 0;
	}
	xsk_ring_prod__submit(tx, n);
	ep->q[0].tx_pending += n;
	unet_remote_kick(ep);
}

/* A buffer of ours, handed to the daemon (the pool's TX state) until it
 * completes it.  Returns its offset past the alignment pad; exits if
 * there is none. */
static inline uint64_t forge_take_buf(struct unet_endpoint *ep, const char *tool)
{
	uint64_t buf = unet_endpoint__buf_alloc(ep);

	if (buf == UNET_NO_BUF) {
		fprintf(stderr, "%s: out of buffers\n", tool);
		exit(1);
	}
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
	return buf + UNET_ALIGN_PAD;
}

/* frame[0..flen) written into new buffers, a piece of each length in
 * lens[0..n) (which add up to flen), their places in p. */
static inline void forge_split(struct unet_endpoint *ep, const char *tool, const uint8_t *frame,
			       struct forge_piece *p, const uint32_t *lens, uint32_t n)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < n; i++) {
		p[i].addr = forge_take_buf(ep, tool);
		p[i].len = lens[i];
		memcpy((uint8_t *)ep->segment + p[i].addr, frame + off, lens[i]);
		off += lens[i];
	}
}

/* Lengths of pieces of piece bytes (the last holds the rest) for a
 * frame of flen bytes.  Returns how many. */
static inline uint32_t forge_even_lens(uint32_t *lens, uint32_t flen, uint32_t piece)
{
	uint32_t n = 0;

	while (flen) {
		lens[n] = flen < piece ? flen : piece;
		flen -= lens[n++];
	}
	return n;
}

#endif /* UNET_FORGE_RING_H */
