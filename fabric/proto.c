/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proto.c - the messaging floor's top half (msg.h): UAM's handlers
 * dispatched (the one entry from UAM), a failed peer's operations ended
 * (registered with the peer table: ufi_proto_attach), progress, the
 * wake-up hint for a blocked caller, and fi_close's goodbye to the peers
 * (docs/libfabric.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

static struct ufi_peer *peer_of_msg(const struct uam_msg *m)
{
	return unet_channel__ctx(uam_chan__unet(m->chan));
}

/* ---- arrivals ---- */

static void h_sync(const struct uam_msg *m)
{
	uam_reply(m, H_SYNC_ACK, NULL, 0);
}

static void h_sync_ack(struct ufi_peer *p)
{
	if (p)
		p->synced = true;
}

static void h_bye(struct ufi_peer *p)
{
	if (p && p->state == UFI_PEER_UP)
		p->state = UFI_PEER_CLOSED;
}

/*
 * A message from peer p (NULL: a channel that is no peer's), by its
 * handler index: everything in m is the peer's to choose, and each
 * handler checks it.  The one entry from UAM (on_msg), and callable
 * without a channel: tests/unit/test_fabric_proto.c fuzzes it.
 */
void ufi_proto_input(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	switch (m->handler) {
	case H_EAGER:
		ufi_h_eager(ep, p, m);
		break;
	case H_RTS:
		ufi_h_rts(ep, p, m);
		break;
	case H_FIN:
		ufi_h_fin(ep, p, m);
		break;
	case H_PING: /* keepalive: its arrival is all */
		break;
	case H_SYNC:
		h_sync(m);
		break;
	case H_SYNC_ACK:
		h_sync_ack(p);
		break;
	case H_BYE:
		h_bye(p);
		break;
	case H_FRAG:
		ufi_h_frag(ep, p, m);
		break;
	default:
		break;
	}
}

static void on_msg(struct uam_ep *uam, const struct uam_msg *m, void *ctx)
{
	struct ufi_peer *p = peer_of_msg(m);

	(void)uam;
	if (p)
		p->heard = true; /* a stranger that talks is not reclaimed */
	ufi_proto_input(ctx, p, m);
}

/*
 * The channel to p is dead (peer.c: ufi_peer_fail): every operation that
 * waits on p ends with an error entry.  If none does, the first receive
 * from any source does (match.c: ufi_fail_posted).
 */
static void peer_failed(struct ufi_ep *ep, struct ufi_peer *p)
{
	int failed = 0;

	if (p->in) {
		ufi_frag_end(ep, p, -p->err);
		failed++;
	}
	failed += ufi_rndv_fail_txs(ep, p);
	failed += ufi_pend_fail(ep, p);
	failed += ufi_rndv_fail_gets(ep, p);
	ufi_fail_posted(ep, p, failed);
}

void ufi_proto_attach(struct ufi_ep *ep)
{
	ep->on_peer_fail = peer_failed;
}

int ufi_proto_init(struct ufi_ep *ep)
{
	ufi_proto_attach(ep);
	for (unsigned int h = H_EAGER; h <= H_FRAG; h++) {
		int r = uam_ep__set_handler(ep->uam, h, on_msg, ep);
		if (r)
			return r;
	}
	return 0;
}

/* ---- progress ---- */

static void keepalive(struct ufi_ep *ep)
{
	for (struct ufi_peer *p = ep->peers; p; p = p->next)
		if (p->state == UFI_PEER_UP && !p->self && uam_request(p->ch, H_PING, NULL, 0) >= 0)
			ep->last_send_ns = ufi_now_ns();
}

void ufi_progress(struct ufi_ep *ep)
{
	uint64_t now;

	if (!ep->uam)
		return;
	uam_poll(ep->uam);
	/*
	 * uam_poll reaps send completions (in copy mode the kick that makes
	 * the kernel send) before its timers and credits let it send more;
	 * those frames would wait for the next kick.  Reap again so they go
	 * now: measured with ufi-test spinning, 389 ms -> 55 ms for 30
	 * iterations, and retransmissions of frames that had not left yet
	 * 59 -> 1.
	 */
	unet_endpoint__complete(ep->uep);
	if (ep->ctls)
		ufi_flush_ctls(ep);
	if (ep->pend)
		ufi_flush_pend(ep);
	now = ufi_now_ns();
	if (now < ep->next_slow_ns)
		return;
	/* The slow path, at most every millisecond: setup, failures, keepalive. */
	ep->next_slow_ns = now + 1000000ull;
	ufi_conn_poll(ep, now);
	for (struct ufi_peer *p = ep->peers; p; p = p->next) {
		int e;
		if ((p->state == UFI_PEER_UP || p->state == UFI_PEER_CLOSED) && p->ch &&
		    (e = uam_chan__error(p->ch)) != 0)
			ufi_peer_fail(ep, p, e);
	}
	if (ep->gets)
		ufi_retry_gets(ep);
	if ((ep->posted[Q_TAG] || ep->posted[Q_MSG] || ep->outstanding || ep->pend) &&
	    now >= ep->next_keepalive_ns) {
		ep->next_keepalive_ns = now + 1000000000ull;
		keepalive(ep);
	}
}

int ufi_ep_wake_ms(struct ufi_ep *ep)
{
	uint64_t now = ufi_now_ns();

	if (ep->connecting || ep->outstanding || ep->ctls || ep->pend ||
	    now - ep->last_send_ns < 100000000ull)
		return 2; /* retransmissions, handshakes: UAM's rto_min */
	if (now - ep->last_send_ns < (uint64_t)ufi_params.timeout_ms * 1000000ull)
		return 50; /* later retransmissions: UAM's timeout has backed off */
	if (ep->posted[Q_TAG] || ep->posted[Q_MSG])
		return 1000; /* keepalive, to notice a dead peer */
	return -1;
}

/* fi_close: let the peers take our last data, say goodbye, free all. */
void ufi_ep_free_queues(struct ufi_ep *ep)
{
	for (int q = 0; q < 2; q++) {
		while (ep->posted[q]) {
			struct ufi_rx *r = ep->posted[q];
			ep->posted[q] = r->next;
			free(r);
		}
		while (ep->ux[q]) {
			struct ufi_ux *u = ep->ux[q];
			ep->ux[q] = u->next;
			free(u);
		}
	}
	while (ep->txs) {
		struct ufi_tx *t = ep->txs;
		ep->txs = t->next;
		free(t);
	}
}

void ufi_ep_shutdown(struct ufi_ep *ep)
{
	uint64_t deadline;
	int waiting = 0;

	ep->closing = true;
	if (ep->uam) {
		deadline = ufi_now_ns() + (uint64_t)ufi_params.linger_ms * 1000000ull;
		for (struct ufi_peer *p = ep->peers; p; p = p->next) {
			p->synced = true;
			if (p->state == UFI_PEER_UP && !p->self &&
			    uam_request(p->ch, H_SYNC, NULL, 0) >= 0) {
				p->synced = false;
				waiting++;
			}
		}
		while (waiting && ufi_now_ns() < deadline) {
			uam_wait(ep->uam, 5);
			waiting = 0;
			for (struct ufi_peer *p = ep->peers; p; p = p->next)
				if (!p->synced && p->state == UFI_PEER_UP && !uam_chan__error(p->ch))
					waiting++;
		}
		for (struct ufi_peer *p = ep->peers; p; p = p->next)
			if (p->state == UFI_PEER_UP && !p->self)
				uam_request(p->ch, H_BYE, NULL, 0);
		for (int i = 0; i < 4; i++)
			uam_wait(ep->uam, 1);
	}
	while (ep->peers) {
		struct ufi_peer *p = ep->peers;
		ep->peers = p->next;
		if (p->in) {
			free(p->in->rx);
			free(p->in->ux);
			free(p->in);
		}
		ufi_peer_close_chan(p);
		free(p);
	}
	free(ep->by_addr);
	ufi_ep_free_queues(ep);
	while (ep->gets) {
		struct ufi_get *g = ep->gets;
		ep->gets = g->next;
		free(g);
	}
	while (ep->ctls) {
		struct ufi_ctl *c = ep->ctls;
		ep->ctls = c->next;
		free(c);
	}
	while (ep->pend) {
		struct ufi_pend *q = ep->pend;
		ep->pend = q->next;
		free(q);
	}
}
