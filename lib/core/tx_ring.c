/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tx_ring.c - the send queue's primitives: reserve and submit a
 * descriptor, reap completions, kick the kernel, and notice a dead link.
 * Everything that sends (datapath.c for single frames, pieces.c for
 * frames in pieces) builds on these; this file calls neither of them.
 *
 * Ring memory ordering is libxdp's (datapath.c says how).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "core/objects.h"

/* Whether err from a socket call means the device is gone or down for
 * good (the socket is unbound: ENXIO; the device is down: ENETDOWN). */
static bool link_dead(int err)
{
	return err == ENXIO || err == ENETDOWN || err == ENODEV;
}

/* Sent frames back to the pool, or to the layer that keeps them (layer.h),
 * from q's completion ring; how many. */
static uint32_t reap_completions(struct unet_endpoint *ep, struct unet_queue *q)
{
	uint32_t idx, n;

	if (!q->tx_pending)
		return 0;
	n = xsk_ring_cons__peek(&q->comp, q->tx_pending, &idx);
	for (uint32_t k = 0; k < n; k++)
		unet_pool_completed(&ep->pool,
				    *xsk_ring_cons__comp_addr(&q->comp, idx + k) - UNET_ALIGN_PAD);
	xsk_ring_cons__release(&q->comp, n);
	q->tx_pending -= n;
	return n;
}

/* Tell the kernel to process the TX ring.  In copy mode this is where the
 * frames are actually sent (at most 32 per call in the kernel), so it is
 * also called while completions are outstanding.  Transient errors
 * (EAGAIN, EBUSY, ENOBUFS) just mean "try again later"; a dead link is
 * remembered, and reported by send, flush and wait from then on. */
void unet_tx_kick(struct unet_endpoint *ep, struct unet_queue *q)
{
	q->tx_owed = 0; /* this kick covers what layers queued (layer.h) */
	if (ep->emulated) {
		/* The producer index we just stored and the flag we load
		 * next must not pass each other (x86 may load before its
		 * own store is visible): unetd sets the flag, fences, then
		 * looks at our producer (unetd_dataplane_arm).  Without a
		 * full fence on both sides each can miss the other, and
		 * the frame waits until something else wakes the daemon. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!ep->need_wakeup || xsk_ring_prod__needs_wakeup(&q->tx))
			unet_remote_kick(ep);
		return;
	}
	if (ep->need_wakeup && !xsk_ring_prod__needs_wakeup(&q->tx))
		return;
	/* In copy mode a kick transmits at most the socket's TX budget (32
	 * descriptors by default) and answers EAGAIN while more wait; EAGAIN
	 * also comes when the completion ring is full.  Kick again until the
	 * queue is empty, reaping completions in between, so that everything
	 * submitted goes out now: a sender that then sleeps kicks nothing
	 * more.  Bounded: a queue of size S needs S/32 kicks. */
	for (uint32_t i = 0; i <= q->tx.size / 32 + 1; i++) {
		if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) == 0)
			return;
		if (link_dead(errno)) {
			unet_endpoint_set_dead(ep, -errno);
			return;
		}
		if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			return;
		reap_completions(ep, q);
	}
}

void unet_endpoint_set_dead(struct unet_endpoint *ep, int err)
{
	if (ep->dead)
		return;
	ep->dead = err == -ENXIO || err == -ENODEV ? -ENETDOWN : err;
	unet_log(UNET_LOG_ERROR, "%s: endpoint %u: the interface is gone or down (%s)",
		 ep->iface->ifname, ep->id, strerror(-err));
}

/* Probe the link: a zero-length send on an unbound socket fails with
 * ENXIO, on a downed device with ENETDOWN; on a live one it only kicks an
 * empty ring.  Returns ep->dead (0 while alive). */
int unet_probe_link(struct unet_endpoint *ep)
{
	if (ep->emulated)
		return unet_remote_probe(ep);
	for (uint32_t i = 0; i < ep->nqueues && !ep->dead; i++)
		if (sendto(ep->q[i].fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && link_dead(errno))
			unet_endpoint_set_dead(ep, -errno);
	return ep->dead;
}

/* Reserve one TX descriptor on q, reaping completions (and kicking) once
 * if the ring is full.  Returns 0 with *idx, or -EAGAIN. */
int unet_tx_reserve(struct unet_endpoint *ep, struct unet_queue *q, uint32_t *idx)
{
	if (xsk_ring_prod__reserve(&q->tx, 1, idx) == 1)
		return 0;
	unet_tx_kick(ep, q);
	unet_endpoint__complete(ep);
	return xsk_ring_prod__reserve(&q->tx, 1, idx) == 1 ? 0 : -EAGAIN;
}

/* Hand the reserved descriptor idx on q, holding the frame at addr of
 * len bytes in buf, to the kernel. */
void unet_tx_submit(struct unet_endpoint *ep, struct unet_queue *q, uint32_t idx, uint64_t buf,
		    uint64_t addr, uint32_t len, uint32_t opts)
{
	struct xdp_desc *xd = xsk_ring_prod__tx_desc(&q->tx, idx);

	xd->addr = addr;
	xd->len = len;
	xd->options = opts;
	unet_pool_move(&ep->pool, buf, UNET_FRAME_APP, UNET_FRAME_TX);
	xsk_ring_prod__submit(&q->tx, 1);
	q->tx_pending++;
}

int unet_endpoint__complete(struct unet_endpoint *ep)
{
	int total = 0;

	if (!ep)
		return -EINVAL;
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		struct unet_queue *q = &ep->q[i];

		if (!q->tx_pending)
			continue;
		total += (int)reap_completions(ep, q);
		if (q->tx_pending && !unet_kicks_held)
			unet_tx_kick(ep, q);
	}
	return total;
}

unsigned int unet_endpoint__tx_pending(const struct unet_endpoint *ep)
{
	unsigned int n = 0;

	for (uint32_t i = 0; ep && i < ep->nqueues; i++)
		n += ep->q[i].tx_pending;
	return n;
}
