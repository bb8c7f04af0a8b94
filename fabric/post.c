/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * post.c - the API's side of messaging: a send (to a peer whose channel
 * is set up first if need be), a receive (an unexpected message that
 * waits, or a posted receive; FI_PEEK, FI_CLAIM, FI_DISCARD), a cancel.
 * The top of the messaging floor (msg.h): the endpoint's fi_ops call it.
 */
#include <stdlib.h>
#include <string.h>

#include "msg.h"

ssize_t ufi_send(struct ufi_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
		 uint64_t data, uint64_t flags, void *ctx)
{
	struct ufi_peer *p;
	uint32_t mf = (flags & FI_TAGGED ? UFI_MF_TAGGED : 0) |
		      (flags & FI_REMOTE_CQ_DATA ? UFI_MF_DATA : 0);
	int r;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (len > UFI_MAX_MSG_SIZE || (len > ep->eager_max && (flags & FI_INJECT)))
		return -FI_EMSGSIZE;
	if (len && !buf)
		return -FI_EINVAL;
	data &= 0xffffffffull;
	p = ufi_peer_of_addr(ep, dest);
	if (!p)
		return -FI_EINVAL;
	if (p->state == UFI_PEER_FAILED || p->state == UFI_PEER_CLOSED)
		return -FI_EIO;
	if (p->state != UFI_PEER_UP) {
		ufi_conn_start(ep, p);
		ufi_progress(ep);
		return p->state == UFI_PEER_FAILED ? -FI_EIO : -FI_EAGAIN;
	}
	size_t off = 0;
	if (!ep->pend) {
		r = ufi_send_now(ep, p, buf, len, tag, data, mf, flags, ctx, &off);
		if (r != -EAGAIN)
			return r ? ufi_errno_to_fi(r) : 0;
		if (off == 0 && (len <= ep->eager_max || len <= ep->frag_max)) {
			/* nothing accepted, nothing queued: the caller retries */
			ufi_progress(ep);
			return -FI_EAGAIN;
		}
		/* part of a fragmented message went: the rest goes first */
	}
	return ufi_pend_send(ep, p, buf, len, tag, data, mf, flags, ctx, off);
}

/* Hand an unexpected message to a receive. */
static void consume_ux(struct ufi_ep *ep, struct ufi_ux *u, void *buf, size_t len, void *ctx,
		       uint64_t rflags)
{
	uint32_t mf = u->mflags & 0x3;

	if (u->mflags & UX_RNDV) {
		ufi_start_get(ep, u->peer, buf, len, u->len, ctx, rflags, u->tag, u->data, mf,
			      u->region, u->cookie);
	} else {
		size_t n = u->len < len ? u->len : len;
		if (n)
			memcpy(buf, u->eager, n);
		ufi_rx_done(ep, ctx, rflags, buf, len, u->len, u->tag, u->data, mf, u->peer, 0, 0);
	}
	ufi_ux_free(ep, u);
}

/* Drop an unexpected message (FI_DISCARD); a rendezvous sender is released. */
static void discard_ux(struct ufi_ep *ep, struct ufi_ux *u)
{
	if (u->mflags & UX_RNDV)
		ufi_send_ctl(ep, u->peer, H_FIN, u->cookie, 0);
	ufi_ux_free(ep, u);
}

ssize_t ufi_recv(struct ufi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		 uint64_t ignore, uint64_t flags, void *ctx)
{
	int q = flags & FI_TAGGED ? Q_TAG : Q_MSG;
	struct ufi_ux *u;
	struct ufi_rx *r;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (len && !buf)
		return -FI_EINVAL;
	if (!ep->directed)
		src = FI_ADDR_UNSPEC;
	if (src != FI_ADDR_UNSPEC && !ufi_peer_of_addr(ep, src))
		return -FI_EINVAL;
	if (q == Q_MSG)
		ignore = ~0ull;
	ufi_progress(ep);

	if ((flags & FI_CLAIM) && !(flags & FI_PEEK)) {
		/* the message an earlier FI_PEEK|FI_CLAIM took, kept in the context */
		if (!ctx || !(u = ((struct fi_context *)ctx)->internal[0]))
			return -FI_EINVAL;
		((struct fi_context *)ctx)->internal[0] = NULL;
		if (flags & FI_DISCARD) {
			uint64_t f = FI_RECV | FI_TAGGED;
			uint64_t t = u->tag;
			discard_ux(ep, u);
			if (ep->rx_cq)
				ep->rx_cq->report->complete(ep->rx_cq, ctx, f, 0, NULL, 0, t,
							    FI_ADDR_NOTAVAIL);
			return 0;
		}
		consume_ux(ep, u, buf, len, ctx, (flags & (FI_TAGGED | FI_MSG)) | FI_COMPLETION);
		return 0;
	}
	if (flags & FI_PEEK) {
		u = ufi_find_ux(ep, q, src, tag, ignore, (flags & (FI_CLAIM | FI_DISCARD)) != 0);
		uint64_t f = FI_RECV | (q == Q_TAG ? FI_TAGGED : FI_MSG);
		if (!ep->rx_cq)
			return 0;
		if (!u) {
			ep->rx_cq->report->error(ep->rx_cq, ctx, f, 0, NULL, 0, tag, 0, FI_ENOMSG,
						 0);
			return 0;
		}
		if (u->mflags & UFI_MF_DATA)
			f |= FI_REMOTE_CQ_DATA;
		ep->rx_cq->report->complete(ep->rx_cq, ctx, f, u->len, NULL,
					    u->mflags & UFI_MF_DATA ? u->data : 0, u->tag,
					    u->peer->addr);
		if (flags & FI_CLAIM)
			((struct fi_context *)ctx)->internal[0] = u;
		else if (flags & FI_DISCARD)
			discard_ux(ep, u);
		return 0;
	}
	u = ufi_find_ux(ep, q, src, tag, ignore, true);
	if (u) {
		consume_ux(ep, u, buf, len, ctx, flags & (FI_TAGGED | FI_MSG | FI_COMPLETION));
		return 0;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	*r = (struct ufi_rx){ .buf = buf, .len = len, .src = src, .tag = tag, .ignore = ignore,
			      .ctx = ctx, .flags = flags & (FI_TAGGED | FI_MSG | FI_COMPLETION) };
	/*
	 * A fragmented message still arriving unexpectedly came before any
	 * later message of its peer: the receive takes it (what is there so
	 * far is copied, the rest lands in place), or a later one would
	 * overtake it.
	 */
	for (struct ufi_peer *p = ep->peers; p; p = p->next) {
		struct ufi_inmsg *in = p->in;
		if (!in || !in->ux || !ufi_ux_matches(ep, in->ux, src, tag, ignore, q) ||
		    (int)!!(in->mf & UFI_MF_TAGGED) != (q == Q_TAG))
			continue;
		if (in->got && len)
			memcpy(buf, in->ux->eager, in->got < len ? in->got : len);
		ufi_ux_free(ep, in->ux);
		in->ux = NULL;
		in->rx = r;
		return 0;
	}
	if (ep->posted_tail[q])
		ep->posted_tail[q]->next = r;
	else
		ep->posted[q] = r;
	ep->posted_tail[q] = r;
	return 0;
}

ssize_t ufi_cancel(struct ufi_ep *ep, void *ctx)
{
	for (int q = 0; q < 2; q++) {
		uint64_t f = FI_RECV | (q == Q_TAG ? FI_TAGGED : FI_MSG);
		struct ufi_rx **pp = &ep->posted[q], *prev = NULL;

		for (struct ufi_rx *r = *pp; r; prev = r, pp = &r->next, r = r->next) {
			if (r->ctx != ctx)
				continue;
			*pp = r->next;
			if (ep->posted_tail[q] == r)
				ep->posted_tail[q] = prev;
			if (ep->rx_cq)
				ep->rx_cq->report->error(ep->rx_cq, ctx, f, 0, r->buf, 0, r->tag, 0,
							 FI_ECANCELED, 0);
			free(r);
			return 0;
		}
	}
	return -FI_ENOENT; /* not a posted receive (any more): nothing to cancel */
}

