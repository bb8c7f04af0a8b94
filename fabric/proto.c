/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proto.c - the provider's protocol over UAM: tag matching, eager and
 * rendezvous messages, progress, peer failure (docs/libfabric.md).
 *
 * UAM handlers (indices at both ends):
 *   EAGER  args: tag, data<<32 | len<<8 | flags, then the data (proto_eager)
 *   RTS    args: tag, data<<32 | flags, len, region, cookie: "pull len bytes
 *          from my region"; the receiver uam_get()s them once matched
 *   FIN    args: cookie, status: the pull is over, the sender completes
 *   PING   keepalive: unacknowledged data makes UAM notice a dead peer
 *   SYNC / SYNC_ACK / BYE: fi_close makes sure peers took our last data
 *   FRAG   (with UAM medium messages) args: tag, data<<32 | flags, total,
 *          offset; a fragment of a message up to UFI_FRAG_MAX sent eagerly
 *          in back-to-back medium messages: no rendezvous round trips
 * Matching happens in arrival order on each in-order channel, so sends
 * from one peer match in the order they were sent (FI_ORDER_SAS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ufi.h"

enum { H_EAGER = 1, H_RTS, H_FIN, H_PING, H_SYNC, H_SYNC_ACK, H_BYE, H_FRAG };

#define Q_MSG 0
#define Q_TAG 1
#define SELF_REGION UINT32_MAX
#define UX_RNDV 0x100 /* ufi_ux.mflags: a rendezvous, not eager data */

static void deliver_eager(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			  uint32_t mf, const void *buf, size_t len);
static void deliver_rts(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			uint32_t mf, size_t len, uint32_t region, uint32_t cookie);
static void handle_fin(struct ufi_ep *ep, struct ufi_peer *p, uint32_t cookie, int status);

/*
 * The eager path, the one place that knows how a small message travels:
 * one UAM request with a two-word header (tag; data<<32 | len<<8 | flags).
 * The data rides in the same frame as a UAM medium message
 * (uam_request_medium), up to the endpoint's medium_max; inject_size is
 * UFI_INJECT_MEDIUM.
 */
#define UFI_INJECT_MEDIUM 1024
/* Larger messages up to this go eagerly in several medium messages. */
#define UFI_FRAG_MAX 16384

size_t ufi_eager_max(void)
{
	return UFI_INJECT_MEDIUM;
}

/* Messages up to this go eagerly (in fragments above ufi_ep_eager_max). */
size_t ufi_ep_frag_max(struct ufi_ep *ep)
{
	return UFI_FRAG_MAX > ep->eager_max ? UFI_FRAG_MAX : ep->eager_max;
}

/* The endpoint's eager limit; 0 if it cannot honour inject_size. */
size_t ufi_ep_eager_max(struct ufi_ep *ep)
{
	size_t m = uam_ep__medium_max(ep->uam);
	return m >= UFI_INJECT_MEDIUM ? m : 0;
}

static int proto_eager(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
		       uint32_t mf, const void *buf, size_t len)
{
	uint64_t a[UAM_MAX_ARGS] = { 0 };

	if (p->self) {
		deliver_eager(ep, p, tag, data, mf, buf, len);
		return 0;
	}
	a[0] = tag;
	a[1] = (data << 32) | ((uint64_t)len << 8) | mf;
	return uam_request_medium(p->ch, H_EAGER, a, 2, buf, len);
}

uint64_t ufi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ufi_errno_to_fi(int e)
{
	switch (e) {
	case -EAGAIN:
		return -FI_EAGAIN;
	case -ETIMEDOUT:
	case -ECONNRESET:
	case -ENETDOWN:
		return -FI_EIO;
	case -ENOMEM:
		return -FI_ENOMEM;
	case -EINVAL:
		return -FI_EINVAL;
	default:
		return e < 0 ? e : -FI_EOTHER;
	}
}

static struct ufi_peer *peer_of_msg(const struct uam_msg *m)
{
	return unet_channel__ctx(uam_chan__unet(m->chan));
}

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

/* ---- completions ---- */

static void tx_done(struct ufi_ep *ep, void *ctx, uint64_t flags, uint64_t tag, int err,
		    int prov_errno)
{
	uint64_t f = FI_SEND | (flags & FI_TAGGED ? FI_TAGGED : FI_MSG);

	if (!ep->tx_cq)
		return;
	if (err)
		ufi_cq_error(ep->tx_cq, ctx, f, 0, NULL, 0, tag, 0, err, prov_errno);
	else if (flags & FI_COMPLETION)
		ufi_cq_complete(ep->tx_cq, ctx, f, 0, NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

/* A receive is over: msglen bytes arrived for a buffer of buflen. */
static void rx_done(struct ufi_ep *ep, void *ctx, uint64_t rflags, void *buf, size_t buflen,
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
		ufi_cq_error(ep->rx_cq, ctx, f, 0, buf, data, tag, 0, err, prov_errno);
	else if (msglen > buflen)
		ufi_cq_error(ep->rx_cq, ctx, f, got, buf, data, tag, msglen - buflen, FI_ETRUNC, 0);
	else if (rflags & FI_COMPLETION)
		ufi_cq_complete(ep->rx_cq, ctx, f, got, buf, data, tag,
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

static struct ufi_rx *take_posted(struct ufi_ep *ep, int q, const struct ufi_peer *p, uint64_t tag)
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

static bool ux_matches(struct ufi_ep *ep, const struct ufi_ux *u, fi_addr_t src, uint64_t tag,
		       uint64_t ignore, int q)
{
	if (ep->directed && src != FI_ADDR_UNSPEC && u->peer->addr != src)
		return false;
	return q == Q_MSG || ((u->tag ^ tag) & ~ignore) == 0;
}

static struct ufi_ux *find_ux(struct ufi_ep *ep, int q, fi_addr_t src, uint64_t tag,
			      uint64_t ignore, bool unlink)
{
	struct ufi_ux **pp = &ep->ux[q], *prev = NULL;

	for (struct ufi_ux *u = *pp; u; prev = u, pp = &u->next, u = u->next)
		if (ux_matches(ep, u, src, tag, ignore, q)) {
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

static void ux_charge(struct ufi_ep *ep, struct ufi_ux *u, size_t cost)
{
	u->cost = cost;
	u->peer->ux_bytes += cost;
	ep->ux_bytes += cost;
	ux_flow(ep, u->peer);
}

/* Free an unexpected message (u may be NULL); its peer, and the others
 * paused for the endpoint's bound, may be resumed. */
static void ux_free(struct ufi_ep *ep, struct ufi_ux *u)
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

static void push_ux(struct ufi_ep *ep, int q, struct ufi_ux *u)
{
	u->next = NULL;
	if (ep->ux_tail[q])
		ep->ux_tail[q]->next = u;
	else
		ep->ux[q] = u;
	ep->ux_tail[q] = u;
}

/* ---- control messages ---- */

static void send_ctl(struct ufi_ep *ep, struct ufi_peer *p, unsigned h, uint64_t a0, uint64_t a1)
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

static void flush_ctls(struct ufi_ep *ep)
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
	send_ctl(ep, g->peer, H_FIN, g->cookie, (uint64_t)(int64_t)status);
	rx_done(ep, g->ctx, g->flags, g->buf, g->buflen, g->msglen, g->tag, g->data, g->mflags,
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

static void start_get(struct ufi_ep *ep, struct ufi_peer *p, void *buf, size_t buflen,
		      size_t msglen, void *ctx, uint64_t rflags, uint64_t tag, uint64_t data,
		      uint32_t mf, uint32_t region, uint32_t cookie)
{
	struct ufi_get *g = calloc(1, sizeof(*g));

	if (!g) {
		send_ctl(ep, p, H_FIN, cookie, (uint64_t)(int64_t)-ENOMEM);
		rx_done(ep, ctx, rflags, buf, buflen, msglen, tag, data, mf, p, FI_ENOMEM, ENOMEM);
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

static void retry_gets(struct ufi_ep *ep)
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
	tx_done(ep, t->ctx, t->flags, t->tag, status ? FI_EIO : 0, -status);
	free(t);
}

/* ---- arrivals ---- */

static void deliver_eager(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			  uint32_t mf, const void *buf, size_t len)
{
	int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
	struct ufi_rx *r = take_posted(ep, q, p, tag);
	struct ufi_ux *u;

	if (r) {
		size_t n = len < r->len ? len : r->len;
		if (n)
			memcpy(r->buf, buf, n);
		rx_done(ep, r->ctx, r->flags, r->buf, r->len, len, tag, data, mf, p, 0, 0);
		free(r);
		return;
	}
	u = calloc(1, sizeof(*u) + len);
	if (!u) {
		FI_WARN(&ufi_prov, FI_LOG_EP_DATA, "out of memory: unexpected message dropped\n");
		return;
	}
	*u = (struct ufi_ux){ .peer = p, .tag = tag, .data = data, .mflags = mf, .len = len,
			      .region = SELF_REGION };
	if (len)
		memcpy(u->eager, buf, len);
	ux_charge(ep, u, sizeof(*u) + len);
	push_ux(ep, q, u);
}

static void deliver_rts(struct ufi_ep *ep, struct ufi_peer *p, uint64_t tag, uint64_t data,
			uint32_t mf, size_t len, uint32_t region, uint32_t cookie)
{
	int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
	struct ufi_rx *r = take_posted(ep, q, p, tag);
	struct ufi_ux *u;

	if (r) {
		start_get(ep, p, r->buf, r->len, len, r->ctx, r->flags, tag, data, mf, region,
			  cookie);
		free(r);
		return;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		send_ctl(ep, p, H_FIN, cookie, (uint64_t)(int64_t)-ENOMEM);
		return;
	}
	*u = (struct ufi_ux){ .peer = p, .tag = tag, .data = data, .mflags = mf | UX_RNDV,
			      .len = len, .region = region, .cookie = cookie };
	ux_charge(ep, u, sizeof(*u));
	push_ux(ep, q, u);
}
static void h_eager(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	const void *src;
	size_t len;

	if (!p || m->nargs < 2)
		return;
	len = (m->args[1] >> 8) & 0xffffff;
	/* the data is the medium frame's payload, exactly as long as the header says */
	if (m->nargs != 2 || m->data_len != len || (len && !m->data))
		return;
	src = m->data;
	deliver_eager(ep, p, m->args[0], m->args[1] >> 32, (uint32_t)m->args[1] & 0x3, src, len);
}

/* The fragmented message in progress from p is over (or abandoned). */
static void frag_end(struct ufi_ep *ep, struct ufi_peer *p, int err)
{
	struct ufi_inmsg *in = p->in;

	p->in = NULL;
	if (!in)
		return;
	if (in->rx) {
		rx_done(ep, in->rx->ctx, in->rx->flags, in->rx->buf, in->rx->len, in->total, in->tag,
			in->data, in->mf, p, err ? FI_EIO : 0, err);
		free(in->rx);
	} else if (in->ux) {
		if (err)
			ux_free(ep, in->ux);
		else
			push_ux(ep, in->mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG, in->ux);
	}
	free(in);
}

static void h_frag(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	struct ufi_inmsg *in;
	uint64_t total, off;

	if (!p || m->nargs != 4 || !m->data_len)
		return;
	total = m->args[2];
	off = m->args[3];
	if (total > UFI_FRAG_MAX || off >= total || m->data_len > total - off) {
		frag_end(ep, p, EPROTO);
		return;
	}
	if (off == 0) {
		uint32_t mf = (uint32_t)m->args[1] & 0x3;
		int q = mf & UFI_MF_TAGGED ? Q_TAG : Q_MSG;
		frag_end(ep, p, EPROTO); /* a message left unfinished */
		in = calloc(1, sizeof(*in));
		if (!in)
			return;
		*in = (struct ufi_inmsg){ .total = total, .tag = m->args[0], .data = m->args[1] >> 32,
					  .mf = mf };
		in->rx = take_posted(ep, q, p, in->tag);
		if (!in->rx) {
			/* unexpected: visible to receives and FI_PEEK once complete */
			in->ux = calloc(1, sizeof(*in->ux) + total);
			if (!in->ux) {
				free(in);
				return;
			}
			*in->ux = (struct ufi_ux){ .peer = p, .tag = in->tag, .data = in->data,
						   .mflags = mf, .len = total,
						   .region = SELF_REGION };
			ux_charge(ep, in->ux, sizeof(*in->ux) + total);
		}
		p->in = in;
	}
	in = p->in;
	if (!in || off != in->got || total != in->total) {
		frag_end(ep, p, EPROTO);
		return;
	}
	if (in->rx) {
		if (off < in->rx->len)
			memcpy((char *)in->rx->buf + off, m->data,
			       m->data_len < in->rx->len - off ? m->data_len : in->rx->len - off);
	} else {
		memcpy(in->ux->eager + off, m->data, m->data_len);
	}
	in->got += m->data_len;
	if (in->got == in->total)
		frag_end(ep, p, 0);
}

static void h_rts(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	if (!p || m->nargs != 5 || m->args[2] == 0 || m->args[2] > UFI_MAX_MSG_SIZE ||
	    m->args[3] >= SELF_REGION || m->args[4] > UINT32_MAX)
		return;
	deliver_rts(ep, p, m->args[0], m->args[1] >> 32, (uint32_t)m->args[1] & 0x3,
		    (size_t)m->args[2], (uint32_t)m->args[3], (uint32_t)m->args[4]);
}

static void h_fin(struct ufi_ep *ep, struct ufi_peer *p, const struct uam_msg *m)
{
	int st;

	if (!p || m->nargs != 2 || m->args[0] > UINT32_MAX)
		return;
	st = (int)(int64_t)m->args[1];
	if (st > 0 || st < -4095)
		st = -EPROTO;
	handle_fin(ep, p, (uint32_t)m->args[0], st);
}

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
		h_eager(ep, p, m);
		break;
	case H_RTS:
		h_rts(ep, p, m);
		break;
	case H_FIN:
		h_fin(ep, p, m);
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
		h_frag(ep, p, m);
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

int ufi_proto_init(struct ufi_ep *ep)
{
	for (unsigned int h = H_EAGER; h <= H_FRAG; h++) {
		int r = uam_ep__set_handler(ep->uam, h, on_msg, ep);
		if (r)
			return r;
	}
	return 0;
}

/* ---- peers ---- */

static struct ufi_peer *peer_by_name(struct ufi_ep *ep, const struct ufi_name *n)
{
	for (struct ufi_peer *p = ep->peers; p; p = p->next)
		if (memcmp(&p->name, n, UFI_NAME_LEN) == 0)
			return p;
	return NULL;
}

struct ufi_peer *ufi_peer_of_addr(struct ufi_ep *ep, fi_addr_t addr)
{
	const struct ufi_name *n;
	struct ufi_peer *p;

	if (!ep->av || !(n = ufi_av_name(ep->av, addr)))
		return NULL;
	if (addr < ep->by_addr_n && ep->by_addr[addr])
		return ep->by_addr[addr];
	if (addr >= ep->by_addr_n) {
		size_t nn = ep->av->cap > addr ? ep->av->cap : addr + 1;
		struct ufi_peer **b = realloc(ep->by_addr, nn * sizeof(*b));
		if (!b)
			return NULL;
		memset(b + ep->by_addr_n, 0, (nn - ep->by_addr_n) * sizeof(*b));
		ep->by_addr = b;
		ep->by_addr_n = nn;
	}
	p = peer_by_name(ep, n);
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->name = *n;
		p->self = memcmp(n, &ep->name, UFI_NAME_LEN) == 0;
		p->state = p->self ? UFI_PEER_UP : UFI_PEER_IDLE;
		p->next = ep->peers;
		ep->peers = p;
	} else if (p->addr == FI_ADDR_NOTAVAIL && ep->strangers) {
		ep->strangers--; /* a stranger no more */
	}
	p->addr = addr;
	ep->by_addr[addr] = p;
	return p;
}

unsigned int ufi_stranger_quota(uint32_t rx_buffers, uint32_t window)
{
	unsigned int peers = window ? rx_buffers / (2 * window) : 0;

	return peers / 4 ? peers / 4 : 1;
}

static bool is_stranger(const struct ufi_peer *p)
{
	return !p->self && p->addr == FI_ADDR_NOTAVAIL;
}

/* Holding or setting up a channel (a failed peer gave it back). */
static bool holds_chan(const struct ufi_peer *p)
{
	return p->state == UFI_PEER_HELLO || p->state == UFI_PEER_UP ||
	       p->state == UFI_PEER_CLOSED;
}

/*
 * Free a stranger to make room for a new one: the oldest (the list is
 * newest first) that failed, or from which no message came within the
 * grace after its HELLO (a made-up name: a real peer that asks for a
 * channel sends on it at once).  Such a stranger has nothing of ours:
 * no message of it is queued, and it has no address to send to.
 * Returns whether one was freed.
 */
static bool stranger_reclaim(struct ufi_ep *ep, uint64_t now, const struct ufi_peer *keep,
			     bool chan_only)
{
	struct ufi_peer **victim = NULL;

	for (struct ufi_peer **pp = &ep->peers; *pp; pp = &(*pp)->next) {
		struct ufi_peer *p = *pp;

		if (is_stranger(p) && !p->heard && !p->in && p != keep &&
		    (!chan_only || holds_chan(p)) &&
		    (p->state == UFI_PEER_FAILED ||
		     now - p->since_ns > UFI_STRANGER_GRACE_MS * 1000000ull))
			victim = pp;
	}
	if (!victim)
		return false;
	{
		struct ufi_peer *p = *victim;

		if (p->state == UFI_PEER_HELLO)
			ep->connecting--;
		ufi_conn_close_peer(p);
		*victim = p->next;
		ep->strangers--;
		free(p);
	}
	return true;
}

/*
 * A peer that asked for a channel before the application put its name in
 * our address vector.  Open MPI adds peers lazily (on first use), so rank
 * A may talk to rank B before B has ever heard of A: B must answer, or A
 * waits out its setup timeout.  The stranger is a peer like any other
 * with no address yet (its messages complete with FI_ADDR_NOTAVAIL as
 * their source); fi_av_insert of its name later gives it one.  A host on
 * the link can make up names, so strangers are bounded twice: at most
 * UFI_MAX_STRANGERS records (made by a first HELLO, which is only
 * challenged: conn.c), and at most ep->stranger_quota holding or setting
 * up a channel (a quarter of the channels the endpoint has: the rest stay
 * for the peers in our AV; ufi_stranger_admit, once its HELLO is
 * authenticated).  Past either, one that never sent a message within
 * UFI_STRANGER_GRACE_MS, or failed, is reclaimed, and if none is, the
 * HELLO is ignored (its sender asks again).
 */
struct ufi_peer *ufi_peer_stranger(struct ufi_ep *ep, const struct ufi_name *n)
{
	uint64_t now = ufi_now_ns();
	struct ufi_peer *p;

	if (memcmp(n, &ep->name, UFI_NAME_LEN) == 0)
		return NULL;
	if (ep->strangers >= UFI_MAX_STRANGERS && !stranger_reclaim(ep, now, NULL, false))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->name = *n;
	p->addr = FI_ADDR_NOTAVAIL;
	p->state = UFI_PEER_IDLE;
	p->since_ns = now;
	p->next = ep->peers;
	ep->peers = p;
	ep->strangers++;
	return p;
}

bool ufi_stranger_admit(struct ufi_ep *ep, struct ufi_peer *p)
{
	unsigned int live = 0, quota = ep->stranger_quota ? ep->stranger_quota : 1;

	for (struct ufi_peer *q = ep->peers; q; q = q->next)
		live += is_stranger(q) && q != p && holds_chan(q);
	return live < quota || stranger_reclaim(ep, ufi_now_ns(), p, true);
}

struct ufi_peer *ufi_peer_find(struct ufi_ep *ep, const struct ufi_name *n)
{
	struct ufi_peer *p = peer_by_name(ep, n);
	fi_addr_t a;

	if (p || !ep->av)
		return p;
	a = ufi_av_find(ep->av, n);
	return a == FI_ADDR_NOTAVAIL ? NULL : ufi_peer_of_addr(ep, a);
}

void ufi_peer_up(struct ufi_ep *ep, struct ufi_peer *p)
{
	(void)ep;
	p->state = UFI_PEER_UP;
}

/*
 * The channel to p is dead (UAM gave up on it, or setup failed): every
 * operation that waits on p ends with an error entry.  If none does, the
 * first receive from any source does, so a rank blocked in a wildcard
 * receive learns it too (MPI treats it as fatal, which is the point).
 */
void ufi_peer_fail(struct ufi_ep *ep, struct ufi_peer *p, int err)
{
	int failed = 0;

	if (p->state == UFI_PEER_FAILED)
		return;
	if (p->state == UFI_PEER_HELLO)
		ep->connecting--;
	p->state = UFI_PEER_FAILED;
	p->err = err ? err : -EIO;
	if (p->in) {
		frag_end(ep, p, -p->err);
		failed++;
	}
	FI_WARN(&ufi_prov, FI_LOG_EP_DATA, "peer channel failed: %s\n", strerror(-p->err));
	for (struct ufi_tx **pp = &ep->txs; *pp;) {
		struct ufi_tx *t = *pp;
		if (t->peer != p) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		ep->outstanding--;
		region_free(ep, t->region);
		tx_done(ep, t->ctx, t->flags, t->tag, FI_EIO, -p->err);
		free(t);
		failed++;
	}
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
		tx_done(ep, q->ctx, q->flags, q->tag, FI_EIO, -p->err);
		free(q);
		failed++;
	}
	for (struct ufi_get *g = ep->gets, *next; g; g = next) {
		next = g->next;
		if (g->peer == p && !g->op) {
			finish_get(ep, g, p->err);
			failed++;
		} else if (g->peer == p)
			failed++; /* UAM fails the op itself: get_cb */
	}
	for (int q = 0; q < 2; q++) {
		struct ufi_rx **pp = &ep->posted[q], *prev = NULL;
		for (struct ufi_rx *r = *pp; r;) {
			bool mine = ep->directed && r->src != FI_ADDR_UNSPEC && r->src == p->addr;
			/* a stranger's failure is nobody's business here:
			 * no receive of ours can be waiting for it */
			bool wild = (r->src == FI_ADDR_UNSPEC || !ep->directed) && !is_stranger(p);
			if (mine || (wild && !failed && q == Q_TAG)) {
				struct ufi_rx *next = r->next;
				*pp = next;
				if (ep->posted_tail[q] == r)
					ep->posted_tail[q] = prev;
				rx_done(ep, r->ctx, r->flags, r->buf, r->len, 0, r->tag, 0, 0, p,
					FI_EIO, -p->err);
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
	/* Its channel (a U-Net tag, a UAM channel, 2 x window receive
	 * buffers) goes back: a failed peer is never used again.  Ops
	 * still on it fail now (get_cb), regions bound to it reach nobody. */
	ufi_conn_close_peer(p);
}

/* ---- the API's side ---- */

/*
 * Several medium messages, back to back on the channel, from *off on.
 * Returns 0, or -EAGAIN with *off at the first fragment not sent (the
 * rest must go before anything else: the pend queue), or an error.
 */
static int send_frags(struct ufi_ep *ep, struct ufi_peer *p, const unsigned char *buf,
		      size_t len, uint64_t tag, uint64_t data, uint32_t mf, size_t *off)
{
	size_t chunk = ep->eager_max;

	while (*off < len) {
		size_t n = len - *off < chunk ? len - *off : chunk;
		uint64_t a[4] = { tag, (data << 32) | mf, len, *off };
		int r = uam_request_medium(p->ch, H_FRAG, a, 4, buf + *off, n);
		if (r < 0)
			return r;
		*off += n;
	}
	ep->last_send_ns = ufi_now_ns();
	return 0;
}

/*
 * Send now: 0, -EAGAIN (UAM's queue is full, or no region is free for a
 * rendezvous: later; *off says how much of a fragmented eager message
 * went), or an error.
 */
static int send_now(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
		    uint64_t tag, uint64_t data, uint32_t mf, uint64_t flags, void *ctx,
		    size_t *off)
{
	struct ufi_tx *t;
	int r, id = -1;

	if (len <= ep->eager_max || (p->self && len <= ep->frag_max)) {
		r = proto_eager(ep, p, tag, data, mf, buf, len);
		if (r < 0)
			return r;
		ep->last_send_ns = ufi_now_ns();
		tx_done(ep, ctx, flags, tag, 0, 0); /* if FI_COMPLETION: the data is on its way */
		return 0;
	}
	if (len <= ep->frag_max) {
		r = send_frags(ep, p, buf, len, tag, data, mf, off);
		if (r < 0)
			return r;
		tx_done(ep, ctx, flags, tag, 0, 0);
		return 0;
	}
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

/*
 * Sends the provider has accepted but could not start (no region free for
 * a rendezvous), in order: once one waits, every later send waits behind
 * it, so sends still match in the order they were made (FI_ORDER_SAS).
 * Eager data is copied; a rendezvous buffer is the application's until
 * the send completes anyway.
 */
static ssize_t pend_send(struct ufi_ep *ep, struct ufi_peer *p, const void *buf, size_t len,
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

static void flush_pend(struct ufi_ep *ep)
{
	while (ep->pend) {
		struct ufi_pend *q = ep->pend;
		int r = 0;
		if (q->peer->state == UFI_PEER_UP) {
			r = send_now(ep, q->peer, q->buf, q->len, q->tag, q->data, q->mf, q->flags,
				     q->ctx, &q->off);
			if (r == -EAGAIN)
				return;
		}
		if (r || q->peer->state != UFI_PEER_UP)
			tx_done(ep, q->ctx, q->flags, q->tag, FI_EIO,
				r ? -r : (q->peer->err ? -q->peer->err : ECONNRESET));
		ep->pend = q->next;
		if (!ep->pend)
			ep->pend_tail = NULL;
		free(q);
	}
}

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
		r = send_now(ep, p, buf, len, tag, data, mf, flags, ctx, &off);
		if (r != -EAGAIN)
			return r ? ufi_errno_to_fi(r) : 0;
		if (off == 0 && (len <= ep->eager_max || len <= ep->frag_max)) {
			/* nothing accepted, nothing queued: the caller retries */
			ufi_progress(ep);
			return -FI_EAGAIN;
		}
		/* part of a fragmented message went: the rest goes first */
	}
	return pend_send(ep, p, buf, len, tag, data, mf, flags, ctx, off);
}

/* Hand an unexpected message to a receive. */
static void consume_ux(struct ufi_ep *ep, struct ufi_ux *u, void *buf, size_t len, void *ctx,
		       uint64_t rflags)
{
	uint32_t mf = u->mflags & 0x3;

	if (u->mflags & UX_RNDV) {
		start_get(ep, u->peer, buf, len, u->len, ctx, rflags, u->tag, u->data, mf,
			  u->region, u->cookie);
	} else {
		size_t n = u->len < len ? u->len : len;
		if (n)
			memcpy(buf, u->eager, n);
		rx_done(ep, ctx, rflags, buf, len, u->len, u->tag, u->data, mf, u->peer, 0, 0);
	}
	ux_free(ep, u);
}

/* Drop an unexpected message (FI_DISCARD); a rendezvous sender is released. */
static void discard_ux(struct ufi_ep *ep, struct ufi_ux *u)
{
	if (u->mflags & UX_RNDV)
		send_ctl(ep, u->peer, H_FIN, u->cookie, 0);
	ux_free(ep, u);
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
				ufi_cq_complete(ep->rx_cq, ctx, f, 0, NULL, 0, t, FI_ADDR_NOTAVAIL);
			return 0;
		}
		consume_ux(ep, u, buf, len, ctx, (flags & (FI_TAGGED | FI_MSG)) | FI_COMPLETION);
		return 0;
	}
	if (flags & FI_PEEK) {
		u = find_ux(ep, q, src, tag, ignore, (flags & (FI_CLAIM | FI_DISCARD)) != 0);
		uint64_t f = FI_RECV | (q == Q_TAG ? FI_TAGGED : FI_MSG);
		if (!ep->rx_cq)
			return 0;
		if (!u) {
			ufi_cq_error(ep->rx_cq, ctx, f, 0, NULL, 0, tag, 0, FI_ENOMSG, 0);
			return 0;
		}
		if (u->mflags & UFI_MF_DATA)
			f |= FI_REMOTE_CQ_DATA;
		ufi_cq_complete(ep->rx_cq, ctx, f, u->len, NULL,
				u->mflags & UFI_MF_DATA ? u->data : 0, u->tag, u->peer->addr);
		if (flags & FI_CLAIM)
			((struct fi_context *)ctx)->internal[0] = u;
		else if (flags & FI_DISCARD)
			discard_ux(ep, u);
		return 0;
	}
	u = find_ux(ep, q, src, tag, ignore, true);
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
		if (!in || !in->ux || !ux_matches(ep, in->ux, src, tag, ignore, q) ||
		    (int)!!(in->mf & UFI_MF_TAGGED) != (q == Q_TAG))
			continue;
		if (in->got && len)
			memcpy(buf, in->ux->eager, in->got < len ? in->got : len);
		ux_free(ep, in->ux);
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
		struct ufi_rx **pp = &ep->posted[q], *prev = NULL;
		for (struct ufi_rx *r = *pp; r; prev = r, pp = &r->next, r = r->next) {
			if (r->ctx != ctx)
				continue;
			*pp = r->next;
			if (ep->posted_tail[q] == r)
				ep->posted_tail[q] = prev;
			if (ep->rx_cq)
				ufi_cq_error(ep->rx_cq, ctx,
					     FI_RECV | (q == Q_TAG ? FI_TAGGED : FI_MSG), 0, r->buf,
					     0, r->tag, 0, FI_ECANCELED, 0);
			free(r);
			return 0;
		}
	}
	return -FI_ENOENT; /* not a posted receive (any more): nothing to cancel */
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
		flush_ctls(ep);
	if (ep->pend)
		flush_pend(ep);
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
		retry_gets(ep);
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
		ufi_conn_close_peer(p);
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
