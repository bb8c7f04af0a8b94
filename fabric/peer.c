/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peer.c - the peer table: one record per peer an endpoint talks to, by
 * name and by address (the address table of the AV the endpoint is bound
 * to: names.c), its state, the strangers (peers that asked for a channel
 * before the application inserted them) with their bounds, and a failed
 * peer's channel given back.
 *
 * Below the connection machinery (conn.c) and the messaging above it:
 * when a peer fails, what waits on it is the messaging floor's, so it is
 * told through ep->on_peer_fail, which that floor registers
 * (ufi_proto_attach).  Calls nothing of the provider but names.c and
 * base.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ufi.h"

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

	if (!ep->addrs || !(n = ufi_addrs_name(ep->addrs, addr)))
		return NULL;
	if (addr < ep->by_addr_n && ep->by_addr[addr])
		return ep->by_addr[addr];
	if (addr >= ep->by_addr_n) {
		size_t nn = ep->addrs->cap > addr ? ep->addrs->cap : addr + 1;
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

bool ufi_peer_is_stranger(const struct ufi_peer *p)
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

		if (ufi_peer_is_stranger(p) && !p->heard && !p->in && p != keep &&
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
		ufi_peer_close_chan(p);
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
		live += ufi_peer_is_stranger(q) && q != p && holds_chan(q);
	return live < quota || stranger_reclaim(ep, ufi_now_ns(), p, true);
}

struct ufi_peer *ufi_peer_find(struct ufi_ep *ep, const struct ufi_name *n)
{
	struct ufi_peer *p = peer_by_name(ep, n);
	fi_addr_t a;

	if (p || !ep->addrs)
		return p;
	a = ufi_addrs_find(ep->addrs, n);
	return a == FI_ADDR_NOTAVAIL ? NULL : ufi_peer_of_addr(ep, a);
}

void ufi_peer_up(struct ufi_ep *ep, struct ufi_peer *p)
{
	(void)ep;
	p->state = UFI_PEER_UP;
}

/*
 * The channel to p is dead (UAM gave up on it, or setup failed): p is
 * failed for good, the messaging floor ends what waits on it
 * (ep->on_peer_fail), and its channel goes back.
 */
void ufi_peer_fail(struct ufi_ep *ep, struct ufi_peer *p, int err)
{
	if (p->state == UFI_PEER_FAILED)
		return;
	if (p->state == UFI_PEER_HELLO)
		ep->connecting--;
	p->state = UFI_PEER_FAILED;
	p->err = err ? err : -EIO;
	FI_WARN(&ufi_prov, FI_LOG_EP_DATA, "peer channel failed: %s\n", strerror(-p->err));
	if (ep->on_peer_fail)
		ep->on_peer_fail(ep, p);
	/* Its channel (a U-Net tag, a UAM channel, 2 x window receive
	 * buffers) goes back: a failed peer is never used again.  Ops
	 * still on it fail now (UAM calls their callbacks), regions bound
	 * to it reach nobody. */
	ufi_peer_close_chan(p);
}

void ufi_peer_close_chan(struct ufi_peer *p)
{
	uam_chan__close(p->ch);
	p->ch = NULL;
	unet_channel__close(p->uch);
	p->uch = NULL;
}
