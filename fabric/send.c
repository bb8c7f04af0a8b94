/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * send.c - a send started now, by its size: eager (eager.c), in
 * fragments, or rendezvous (rndv.c); or queued, in order, behind the
 * sends that wait (the pend queue), which progress flushes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/*
 * Send now: 0, -EAGAIN (UAM's queue is full, or no region is free for a
 * rendezvous: later; *off says how much of a fragmented eager message
 * went), or an error.
 */
int ufi_send_now(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		 uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx, size_t *off)
{
	int r;

	/* Eager only from the start: a fragmented message that went in part
	 * goes on in fragments, whatever the peer's limit says now. */
	if ((*off == 0 && len <= ufi_peer_eager_max(ep, p)) || (p->self && len <= ep->frag_max)) {
		r = ufi_eager_send(ep, p, tag, data, mf, buf, len);
		if (r < 0)
			return r;
		ep->last_send_ns = ufi_now_ns();
		/* if FI_COMPLETION: the data is on its way */
		ufi_tx_done(ep, ctx, flags, tag, 0, 0);
		return 0;
	}
	if (len <= ep->frag_max) {
		r = ufi_frag_send(ep, p, buf, len, tag, data, mf, off);
		if (r < 0)
			return r;
		ufi_tx_done(ep, ctx, flags, tag, 0, 0);
		return 0;
	}
	return ufi_rndv_send(ep, p, buf, len, tag, data, mf, flags, ctx);
}

/*
 * Sends the provider has accepted but could not start (no region free for
 * a rendezvous), in order: once one waits, every later send waits behind
 * it, so sends still match in the order they were made (FI_ORDER_SAS).
 * Eager data is copied; a rendezvous buffer is the application's until
 * the send completes anyway.
 */
ssize_t ufi_pend_send(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		      uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx,
		      size_t off)
{
	bool copy = len <= ep->eager_max || len <= ep->frag_max;
	struct ufi_pend *q = calloc(1, sizeof(*q) + (copy ? len : 0));

	if (!q)
		return -FI_ENOMEM;
	*q = (struct ufi_pend){ .peer = p, .buf = copy ? q->copy : buf, .len = len, .tag = tag,
				.data = data, .mf = mf, .flags = flags, .ctx = ctx, .off = off };
	if (copy && len)
		memcpy(q->copy, buf, len);
	if (ep->pend_tail)
		ep->pend_tail->next = q;
	else
		ep->pend = q;
	ep->pend_tail = q;
	return 0;
}

void ufi_flush_pend(struct ufi_ep *ep)
{
	while (ep->pend) {
		struct ufi_pend *q = ep->pend;
		int r = 0;
		if (q->peer->state == UFI_PEER_UP) {
			r = ufi_send_now(ep, q->peer, q->buf, q->len, q->tag, q->data, q->mf,
					 q->flags, q->ctx, &q->off);
			if (r == -EAGAIN)
				return;
		}
		if (r || q->peer->state != UFI_PEER_UP)
			ufi_tx_done(ep, q->ctx, q->flags, q->tag, FI_EIO,
				    r ? -r : (q->peer->err ? -q->peer->err : ECONNRESET));
		ep->pend = q->next;
		if (!ep->pend)
			ep->pend_tail = NULL;
		free(q);
	}
}

/* End p's queued sends with its error: how many. */
int ufi_pend_fail(struct ufi_ep *ep, struct ufi_peer *p)
{
	int failed = 0;

	for (struct ufi_pend **pp = &ep->pend, *prev = NULL; *pp;) {
		struct ufi_pend *q = *pp;
		if (q->peer != p) {
			prev = q;
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		if (ep->pend_tail == q)
			ep->pend_tail = prev;
		ufi_tx_done(ep, q->ctx, q->flags, q->tag, FI_EIO, -p->err);
		free(q);
		failed++;
	}
	return failed;
}
