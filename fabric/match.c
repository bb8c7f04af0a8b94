/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * match.c - the receive side's queues: posted receives and unexpected
 * messages (matched in arrival order, FI_ORDER_SAS), the credit that
 * bounds what a peer can make us hold, and completions handed to the
 * bound CQ through its ufi_cq_report (ufi.h), never by name: the CQ is
 * the floor above.  The bottom of the messaging floor (msg.h).
 */
#include <stdlib.h>

#include "msg.h"

/* ---- completions ---- */

void ufi_tx_done(struct ufi_ep *ep, void *ctx, uint64_t flags, uint64_t tag, int err,
		 int prov_errno)
{
	uint64_t f = FI_SEND | (flags & FI_TAGGED ? FI_TAGGED : FI_MSG);

	if (!ep->tx_cq)
		return;
	if (err)
		ep->tx_cq->report->error(ep->tx_cq, ctx, f, 0, NULL, 0, tag, 0, err, prov_errno);
	else if (flags & FI_COMPLETION)
		ep->tx_cq->report->complete(ep->tx_cq, ctx, f, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

/* A receive is over: msglen bytes arrived for a buffer of buflen. */
void ufi_rx_done(struct ufi_ep *ep, void *ctx, uint64_t rflags, void *buf, size_t buflen,
		 size_t msglen, uint64_t tag, uint64_t data, uint32_t mf, struct ufi_peer *p,
		 int err, int prov_errno)
{
	uint64_t f = FI_RECV | (rflags & FI_TAGGED ? FI_TAGGED : FI_MSG) |
		     (mf & UFI_MF_DATA ? FI_REMOTE_CQ_DATA : 0);
	size_t got = msglen < buflen ? msglen : buflen;

	if (!(mf & UFI_MF_DATA))
		data = 0;
	if (!ep->rx_cq)
		return;
	if (err)
		ep->rx_cq->report->error(ep->rx_cq, ctx, f, 0, buf, data, tag, 0, err, prov_errno);
	else if (msglen > buflen)
		ep->rx_cq->report->error(ep->rx_cq, ctx, f, got, buf, data, tag, msglen - buflen,
					 FI_ETRUNC, 0);
	else if (rflags & FI_COMPLETION)
		ep->rx_cq->report->complete(ep->rx_cq, ctx, f, got, buf, data, tag,
					    p ? p->addr : FI_ADDR_NOTAVAIL);
}

/* ---- matching ---- */

static bool rx_matches(struct ufi_ep *ep, const struct ufi_rx *r, const struct ufi_peer *p,
		       uint64_t tag, int q)
{
	if (ep->directed && r->src != FI_ADDR_UNSPEC && (!p || p->addr != r->src))
		return false;
	return q == Q_MSG || ((r->tag ^ tag) & ~r->ignore) == 0;
}

struct ufi_rx *ufi_take_posted(struct ufi_ep *ep, int q, const struct ufi_peer *p, uint64_t tag)
{
	struct ufi_rx **pp = &ep->posted[q], *prev = NULL;

	for (struct ufi_rx *r = *pp; r; prev = r, pp = &r->next, r = r->next)
		if (rx_matches(ep, r, p, tag, q)) {
			*pp = r->next;
			if (ep->posted_tail[q] == r)
				ep->posted_tail[q] = prev;
			return r;
		}
	return NULL;
}

bool ufi_ux_matches(struct ufi_ep *ep, const struct ufi_ux *u, fi_addr_t src, uint64_t tag,
		    uint64_t ignore, int q)
{
	if (ep->directed && src != FI_ADDR_UNSPEC && u->peer->addr != src)
		return false;
	return q == Q_MSG || ((u->tag ^ tag) & ~ignore) == 0;
}

struct ufi_ux *ufi_find_ux(struct ufi_ep *ep, int q, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, bool unlink)
{
	struct ufi_ux **pp = &ep->ux[q], *prev = NULL;

	for (struct ufi_ux *u = *pp; u; prev = u, pp = &u->next, u = u->next)
		if (ufi_ux_matches(ep, u, src, tag, ignore, q)) {
			if (unlink) {
				*pp = u->next;
				if (ep->ux_tail[q] == u)
					ep->ux_tail[q] = prev;
				u->next = NULL;
			}
			return u;
		}
	return NULL;
}

/*
 * Unexpected messages are bounded by credit, not by dropping: a message
 * whose send completed at its sender (UAM took it) is always delivered.
 * Each one held is charged to its peer and the endpoint (its data and
 * record); a peer past ep->ux_peer_max, or with any held while the
 * endpoint is past ep->ux_max, has its UAM channel paused: its next
 * messages wait unacknowledged at UAM, its window shuts and its sends get
 * -FI_EAGAIN.  Resumed when it is back under both.  What a peer can make
 * us hold: its bound plus one message (the one that crossed it, at most
 * UFI_FRAG_MAX); the endpoint: ux_max plus that per peer.  Peers with
 * nothing held are never paused, so a receive posted for them still
 * completes whatever the others left.
 */
static void ux_flow(struct ufi_ep *ep, struct ufi_peer *p)
{
	bool over = p->ux_bytes >= (ep->ux_peer_max ? ep->ux_peer_max : UFI_UX_PEER_MAX) ||
		    (p->ux_bytes && ep->ux_bytes >= (ep->ux_max ? ep->ux_max : UFI_UX_MAX));

	if (over == p->ux_paused)
		return;
	p->ux_paused = over;
	if (p->ch) /* none: self, or a failed peer, which sends nothing more */
		(void)(over ? uam_chan__pause(p->ch) : uam_chan__resume(p->ch));
}

void ufi_ux_charge(struct ufi_ep *ep, struct ufi_ux *u, size_t cost)
{
	u->cost = cost;
	u->peer->ux_bytes += cost;
	ep->ux_bytes += cost;
	ux_flow(ep, u->peer);
}

/* Free an unexpected message (u may be NULL); its peer, and the others
 * paused for the endpoint's bound, may be resumed. */
void ufi_ux_free(struct ufi_ep *ep, struct ufi_ux *u)
{
	bool was_over;

	if (!u)
		return;
	was_over = ep->ux_bytes >= (ep->ux_max ? ep->ux_max : UFI_UX_MAX);
	u->peer->ux_bytes -= u->cost;
	ep->ux_bytes -= u->cost;
	ux_flow(ep, u->peer);
	if (was_over)
		for (struct ufi_peer *p = ep->peers; p; p = p->next)
			if (p->ux_paused)
				ux_flow(ep, p);
	free(u);
}

void ufi_push_ux(struct ufi_ep *ep, int q, struct ufi_ux *u)
{
	u->next = NULL;
	if (ep->ux_tail[q])
		ep->ux_tail[q]->next = u;
	else
		ep->ux[q] = u;
	ep->ux_tail[q] = u;
}

/*
 * The receives a failed peer p ends: those posted for p (directed), and
 * if nothing else of p's failed (failed: how many did), the first
 * wildcard tagged receive, so a rank blocked in one learns it too (MPI
 * treats it as fatal, which is the point).  Returns failed plus them.
 */
int ufi_fail_posted(struct ufi_ep *ep, struct ufi_peer *p, int failed)
{
	for (int q = 0; q < 2; q++) {
		struct ufi_rx **pp = &ep->posted[q], *prev = NULL;
		for (struct ufi_rx *r = *pp; r;) {
			bool mine = ep->directed && r->src != FI_ADDR_UNSPEC && r->src == p->addr;
			/* a stranger's failure is nobody's business here:
			 * no receive of ours can be waiting for it */
			bool wild = (r->src == FI_ADDR_UNSPEC || !ep->directed) &&
				    !ufi_peer_is_stranger(p);
			if (mine || (wild && !failed && q == Q_TAG)) {
				struct ufi_rx *next = r->next;
				*pp = next;
				if (ep->posted_tail[q] == r)
					ep->posted_tail[q] = prev;
				ufi_rx_done(ep, r->ctx, r->flags, r->buf, r->len, 0, r->tag, 0, 0,
					    p, FI_EIO, -p->err);
				free(r);
				failed++;
				r = next;
				continue;
			}
			prev = r;
			pp = &r->next;
			r = r->next;
		}
	}
	return failed;
}
