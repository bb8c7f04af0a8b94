/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rndv.c - rendezvous, for messages past the eager limits: the sender
 * registers its buffer as a UAM region and sends RTS; the receiver,
 * once the message matched a receive, registers its own and pulls the
 * data with uam_get, then sends FIN, on which the sender completes.
 * Also the control messages (FIN) that found UAM's queue full, sent
 * again by progress.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "msg.h"

static void handle_fin(struct ufi_ep *ep, struct ufi_peer *p, uint32_t cookie, int status);

/* ---- regions ---- */

/*
 * UAM's 64 region slots, split: sends take slots 0..47, pulls 48..63.  A
 * rank whose sends hold every slot could not pull the messages its peers
 * send it while their sends wait for it in turn: with slots kept for
 * pulls, a pull always gets one eventually (pulls depend on nothing but
 * the peer's polling), so their sends and then ours complete.
 *
 * Each rendezvous buffer is a UAM region of exactly its bytes, bound to
 * its one peer's channel (uam_region_opts.chan: no other peer can store
 * into it or get from it), registered only while the transfer runs, and
 * under a fresh random id (the slot in its low 6 bits, so ids in use
 * differ), so the id an RTS names says nothing about the next one.
 */
#define UFI_SEND_REGIONS 48

static uint32_t region_key(int slot)
{
	static uint64_t ctr;
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		/* no entropy yet (early boot): a mixed counter, the binding
		 * to the peer's channel is what protects the buffer */
		uint64_t z = (ufi_now_ns() ^ ++ctr) * 0x9E3779B97F4A7C15ull;
		r = (uint32_t)(z >> 32);
	}
	r = (r & ~63u) | (uint32_t)slot;
	if (r == SELF_REGION)
		r ^= 64; /* never the id that means "no region" */
	return r;
}

/* Register [buf, buf + len) for peer p (flags: what p may do) in a free
 * slot.  Returns the slot, -EAGAIN (none free), or -errno. */
static int region_reg(struct ufi_ep *ep, struct ufi_peer *p, bool for_send, void *buf, size_t len,
		      unsigned int flags)
{
	UNET_OPTS_INIT(uam_region_opts, ro);
	int lo = for_send ? 0 : UFI_SEND_REGIONS;
	int hi = for_send ? UFI_SEND_REGIONS : UAM_MAX_REGIONS;
	int r;

	ro.chan = p->ch;
	for (int i = lo; i < hi && i < 64; i++) {
		if (ep->regions_used & (1ull << i))
			continue;
		ep->region_ids[i] = region_key(i);
		r = uam_region__register_opts(ep->uam, ep->region_ids[i], buf, len, flags, &ro);
		if (r)
			return r;
		ep->regions_used |= 1ull << i;
		return i;
	}
	return -EAGAIN;
}

static void region_free(struct ufi_ep *ep, int slot)
{
	if (slot < 0)
		return;
	uam_region__unregister(ep->uam, ep->region_ids[slot]);
	ep->regions_used &= ~(1ull << slot);
}

/* ---- control messages ---- */

void ufi_send_ctl(struct ufi_ep *ep, struct ufi_peer *p, unsigned h, uint64_t a0, uint64_t a1)
{
	uint64_t a[2] = { a0, a1 };
	struct ufi_ctl *c;
	int r;

	if (p->self) {
		if (h == H_FIN)
			handle_fin(ep, p, (uint32_t)a0, (int)(int64_t)a1);
		return;
	}
	if (p->state != UFI_PEER_UP)
		return;
	if (!ep->ctls) {
		r = uam_request(p->ch, h, a, 2);
		if (r != -EAGAIN)
			return; /* sent, or the channel failed: progress notices */
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	*c = (struct ufi_ctl){ .peer = p, .handler = h, .args = { a0, a1 }, .nargs = 2 };
	if (ep->ctls_tail)
		ep->ctls_tail->next = c;
	else
		ep->ctls = c;
	ep->ctls_tail = c;
}

void ufi_flush_ctls(struct ufi_ep *ep)
{
	while (ep->ctls) {
		struct ufi_ctl *c = ep->ctls;
		if (c->peer->state == UFI_PEER_UP &&
		    uam_request(c->peer->ch, c->handler, c->args, c->nargs) == -EAGAIN)
			return;
		ep->ctls = c->next;
		if (!ep->ctls)
			ep->ctls_tail = NULL;
		free(c);
	}
}

/* ---- rendezvous ---- */

static void unlink_get(struct ufi_ep *ep, struct ufi_get *g)
{
	for (struct ufi_get **pp = &ep->gets; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			return;
		}
}

static void finish_get(struct ufi_ep *ep, struct ufi_get *g, int status)
{
	unlink_get(ep, g);
	ep->outstanding--;
	region_free(ep, g->lregion);
	/* The sender completes its send on FIN, whatever we did with it. */
	ufi_send_ctl(ep, g->peer, H_FIN, g->cookie, (uint64_t)(int64_t)status);
	ufi_rx_done(ep, g->ctx, g->flags, g->buf, g->buflen, g->msglen, g->tag, g->data, g->mflags,
		    g->peer, status ? FI_EIO : 0, -status);
	free(g);
}

static void get_cb(struct uam_ep *uam, int op, int status, void *ctx)
{
	struct ufi_get *g = ctx;

	(void)uam;
	(void)op;
	if (g->ep->closing)
		return; /* fi_close frees it */
	finish_get(g->ep, g, status);
}

static struct ufi_tx *find_tx(struct ufi_ep *ep, struct ufi_peer *p, uint32_t cookie, bool unlink)
{
	for (struct ufi_tx **pp = &ep->txs; *pp; pp = &(*pp)->next) {
		struct ufi_tx *t = *pp;
		if (t->cookie == cookie && t->peer == p) {
			if (unlink)
				*pp = t->next;
			return t;
		}
	}
	return NULL;
}

/* Start (or retry) the pull of a matched rendezvous message. */
static void get_try(struct ufi_ep *ep, struct ufi_get *g)
{
	size_t n = g->msglen < g->buflen ? g->msglen : g->buflen;
	int r;

	if (g->op)
		return;
	if (g->peer->self) {
		struct ufi_tx *t = find_tx(ep, g->peer, g->cookie, false);
		if (t && n)
			memcpy(g->buf, t->buf, n);
		finish_get(ep, g, t ? 0 : -EPROTO);
		return;
	}
	if (g->peer->state != UFI_PEER_UP) {
		finish_get(ep, g, g->peer->err ? g->peer->err : -ECONNRESET);
		return;
	}
	if (n == 0) { /* nothing to pull: a zero-byte buffer */
		finish_get(ep, g, 0);
		return;
	}
	if (g->lregion < 0) {
		/* only the sender may write it, only these n bytes */
		int slot = region_reg(ep, g->peer, false, g->buf, n, UAM_REGION_WRITE);
		if (slot == -EAGAIN)
			return; /* progress retries when one frees */
		if (slot < 0) {
			finish_get(ep, g, slot);
			return;
		}
		g->lregion = slot;
	}
	r = uam_get(g->peer->ch, g->rregion, 0, n, ep->region_ids[g->lregion], 0, get_cb, g);
	if (r == -EAGAIN)
		return;
	if (r < 0) {
		finish_get(ep, g, r);
		return;
	}
	g->op = r;
}

void ufi_start_get(struct ufi_ep *ep, struct ufi_peer *p, void *buf, size_t buflen,
		   size_t msglen, void *ctx, uint64_t rflags, uint64_t tag, uint64_t data,
		   uint32_t mf, uint32_t region, uint32_t cookie)
{
	struct ufi_get *g = calloc(1, sizeof(*g));

	if (!g) {
		ufi_send_ctl(ep, p, H_FIN, cookie, (uint64_t)(int64_t)-ENOMEM);
		ufi_rx_done(ep, ctx, rflags, buf, buflen, msglen, tag, data, mf, p, FI_ENOMEM,
			    ENOMEM);
		return;
	}
	*g = (struct ufi_get){ .ep = ep, .peer = p, .buf = buf, .buflen = buflen,
			       .msglen = msglen, .ctx = ctx, .tag = tag, .data = data,
			       .flags = rflags, .mflags = mf, .rregion = region, .cookie = cookie,
			       .lregion = -1 };
	g->next = ep->gets;
	ep->gets = g;
	ep->outstanding++;
	get_try(ep, g);
}

void ufi_retry_gets(struct ufi_ep *ep)
{
	struct ufi_get *g = ep->gets, *next;

	for (; g; g = next) {
		next = g->next;
		if (!g->op)
			get_try(ep, g);
	}
}

static void handle_fin(struct ufi_ep *ep, struct ufi_peer *p, uint32_t cookie, int status)
{
	struct ufi_tx *t = find_tx(ep, p, cookie, true);

	if (!t)
		return; /* not ours (a forged or repeated FIN): ignore */
	ep->outstanding--;
	region_free(ep, t->region);
	ufi_tx_done(ep, t->ctx, t->flags, t->tag, status ? FI_EIO : 0, -status);
	free(t);
}

/* ---- arrivals ---- */

static void deliver_rts(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			uint32_t mf, size_t len, uint32_t region, uint32_t cookie)
{
	int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
	struct ufi_rx *r = ufi_take_posted(ep, q, p, tag);
	struct ufi_ux *u;

	if (r) {
		ufi_start_get(ep, p, r->buf, r->len, len, r->ctx, r->flags, tag, data, mf, region,
			      cookie);
		free(r);
		return;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		ufi_send_ctl(ep, p, H_FIN, cookie, (uint64_t)(int64_t)-ENOMEM);
		return;
	}
	*u = (struct ufi_ux){ .peer = p, .tag = tag, .data = data, .mflags = mf | UX_RNDV,
			      .len = len, .region = region, .cookie = cookie };
	ufi_ux_charge(ep, u, sizeof(*u));
	ufi_push_ux(ep, q, u);
}
void ufi_h_rts(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	if (!p || m->nargs != 5 || m->args[2] == 0 || m->args[2] > UFI_MAX_MSG_SIZE ||
	    m->args[3] >= SELF_REGION || m->args[4] > UINT32_MAX)
		return;
	deliver_rts(ep, p, m->args[0], m->args[1] >> 32, (uint32_t)m->args[1] & 0x3,
		    (size_t)m->args[2], (uint32_t)m->args[3], (uint32_t)m->args[4]);
}

void ufi_h_fin(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	int st;

	if (!p || m->nargs != 2 || m->args[0] > UINT32_MAX)
		return;
	st = (int)(int64_t)m->args[1];
	if (st > 0 || st < -4095)
		st = -EPROTO;
	handle_fin(ep, p, (uint32_t)m->args[0], st);
}

/* ---- sends ---- */

/* The rendezvous send of a message: 0, -EAGAIN (no region free: later),
 * or an error. */
int ufi_rndv_send(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		  uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx)
{
	struct ufi_tx *t;
	int r, id = -1;

	if (!p->self) {
		/* only this peer may read it, only this message */
		id = region_reg(ep, p, true, (void *)buf, len, UAM_REGION_READ);
		if (id < 0)
			return id;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		region_free(ep, id);
		return -ENOMEM;
	}
	*t = (struct ufi_tx){ .peer = p, .buf = buf, .len = len, .ctx = ctx, .tag = tag,
			      .flags = flags, .region = id, .cookie = ++ep->next_cookie };
	/* listed before the RTS goes: a self RTS may complete it at once */
	t->next = ep->txs;
	ep->txs = t;
	ep->outstanding++;
	if (p->self) {
		deliver_rts(ep, p, tag, data, mf, len, SELF_REGION, t->cookie);
		return 0;
	}
	uint64_t a[5] = { tag, (data << 32) | mf, len, ep->region_ids[id], t->cookie };
	r = uam_request(p->ch, H_RTS, a, 5);
	if (r < 0) {
		find_tx(ep, p, t->cookie, true);
		ep->outstanding--;
		region_free(ep, id);
		free(t);
		return r;
	}
	ep->last_send_ns = ufi_now_ns();
	return 0;
}


/* ---- a failed peer ---- */

int ufi_rndv_fail_txs(struct ufi_ep *ep, struct ufi_peer *p)
{
	int failed = 0;

	for (struct ufi_tx **pp = &ep->txs; *pp;) {
		struct ufi_tx *t = *pp;
		if (t->peer != p) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		ep->outstanding--;
		region_free(ep, t->region);
		ufi_tx_done(ep, t->ctx, t->flags, t->tag, FI_EIO, -p->err);
		free(t);
		failed++;
	}
	return failed;
}

int ufi_rndv_fail_gets(struct ufi_ep *ep, struct ufi_peer *p)
{
	int failed = 0;

	for (struct ufi_get *g = ep->gets, *next; g; g = next) {
		next = g->next;
		if (g->peer == p && !g->op) {
			finish_get(ep, g, p->err);
			failed++;
		} else if (g->peer == p)
			failed++; /* UAM fails the op itself: get_cb */
	}
	return failed;
}
