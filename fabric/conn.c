/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * conn.c - setting up the U-Net channel to a peer (floor 2: ufi.h).
 *
 * A U-Net channel is (our tag, peer MAC, peer tag) on both sides, and the
 * XDP program delivers a frame only to the channel whose peer MAC and tag
 * it carries: there is no way to receive a U-Net frame from a peer we
 * have no channel with.  So the two tags are agreed before the channel
 * exists, as U-Net's operating system did, over a path that does not need
 * one: a kernel UDP socket on the interface's IPv4 or IPv6 address (the
 * name's family), whose address is part of the endpoint name.  Only
 * setup goes that way; every message goes over the U-Net channel.
 *
 * HELLO { magic, from name, to name, from_tag, to_tag, my_nonce,
 * your_nonce }:
 *   - each side keeps, per peer, a random secret nonce (p->my_nonce) that
 *     it sends in every HELLO to that peer, and the last nonce the peer
 *     sent (p->peer_nonce), which it echoes as your_nonce.  A HELLO whose
 *     your_nonce is our nonce is authenticated: its sender received a
 *     HELLO we sent to the address in the peer's name.  Only an
 *     authenticated HELLO changes a tag or opens a channel; any other is
 *     answered with our own HELLO (a challenge, to the name's address),
 *     which the real peer echoes.  A host that can spoof the peer's
 *     address but not receive its traffic cannot make us take a tag;
 *   - the initiator reserves a free tag (a channel to the peer with a
 *     placeholder peer tag) and sends HELLO(from_tag = it, to_tag = 0)
 *     every 10..500 ms until answered;
 *   - a side that learns the peer's tag from an authenticated HELLO
 *     reopens its channel with it (UP), and answers when the peer does
 *     not know our tag yet (to_tag is not ours); an authenticated answer
 *     to an answer is never sent, so there is no storm;
 *   - both initiating at once: the smaller name stays the initiator, the
 *     other answers;
 *   - a nonce proves one setup: taking the peer's tag renews it, so a
 *     HELLO seen on the wire once cannot be echoed later;
 *   - a peer that is up and sends an authenticated HELLO with another tag
 *     set its side up anew, or someone echoes a nonce it saw: we challenge
 *     (HELLO with from_tag 0 and a fresh nonce, to the name's address),
 *     and renegotiate (reopen the channel with it) only on the echo of
 *     that challenge with the new tag; an echo with the old tag uses the
 *     challenge up.
 * A HELLO is accepted from the address its sender's name gives, addressed
 * to our exact name (nonce included).  A first HELLO from a name not in
 * our address vector makes a "stranger" peer (peer.c: ufi_peer_stranger,
 * bounded), because Open MPI inserts peers lazily; it gets a channel only
 * once authenticated (ufi_stranger_admit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ufi.h"

/* ---- the setup socket ---- */

/* The family of our name (FI_UNET_FAMILY; auto: IPv4 if the interface
 * has it, else IPv6), with the interface's address of it. */
static int pick_address(struct ufi_ep *ep, const char *ifname, struct sockaddr_storage *ss,
			socklen_t *sl)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	int r = -FI_EADDRNOTAVAIL;

	memset(ss, 0, sizeof(*ss));
	if (ufi_params.family != 6) {
		r = ufi_iface_ipv4(ifname, &sin->sin_addr, &ep->name.prefix);
		if (r == 0) {
			sin->sin_family = AF_INET;
			*sl = sizeof(*sin);
			ep->name.family = 4;
			return 0;
		}
		if (ufi_params.family == 4) {
			FI_WARN(&ufi_prov, FI_LOG_EP_CTRL,
				"%s has no IPv4 address (FI_UNET_FAMILY=ipv4): the unet provider "
				"agrees channel tags with its peers over UDP on it (docs/libfabric.md)\n",
				ifname);
			return r;
		}
	}
	r = ufi_iface_ipv6(ifname, &sin6->sin6_addr, &ep->name.prefix);
	if (r) {
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL,
			"%s has no %sIPv6 address but link-local ones: the unet provider agrees "
			"channel tags with its peers over UDP on it (docs/libfabric.md)\n",
			ifname, ufi_params.family == 6 ? "" : "IPv4 address and no ");
		return r;
	}
	sin6->sin6_family = AF_INET6;
	*sl = sizeof(*sin6);
	ep->name.family = 6;
	return 0;
}

/* The setup socket and our name's address part. */
int ufi_conn_init(struct ufi_ep *ep, const char *ifname)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int r, one = 1;

	r = pick_address(ep, ifname, &ss, &sl);
	if (r)
		return r;
	ep->udp_fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ep->udp_fd < 0)
		return -errno;
	/* IPv6 only: an IPv4 datagram has no business on an IPv6 name's socket */
	if ((ss.ss_family == AF_INET6 &&
	     setsockopt(ep->udp_fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(ep->udp_fd, (struct sockaddr *)&ss, sl) ||
	    getsockname(ep->udp_fd, (struct sockaddr *)&ss, &sl)) {
		r = -errno;
		close(ep->udp_fd);
		ep->udp_fd = -1;
		return r;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;
		memcpy(ep->name.ip6, sin6->sin6_addr.s6_addr, 16);
		ep->name.port = sin6->sin6_port;
	} else {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;
		ep->name.ip = sin->sin_addr.s_addr;
		ep->name.port = sin->sin_port;
	}
	if (ufi_params.routed_always)
		ep->name.flags |= UFI_NAME_F_ROUTED;
	return 0;
}

/* ---- channels ---- */

static uint16_t random_tag(void)
{
	uint16_t t;

	if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != sizeof(t))
		t = (uint16_t)rand();
	return (uint16_t)(UFI_TAG_MIN + t % (UFI_TAG_MAX - UFI_TAG_MIN + 1));
}

/* Reserve a free tag of ours: a channel to the peer whose peer tag is a
 * placeholder (the tag itself: nobody sends from it).  A raw one for
 * every peer: it needs no next hop, which the kernel may not know
 * before the first HELLO (open_real opens the real kind). */
static int reserve_tag(struct ufi_ep *ep, struct ufi_peer *p)
{
	for (int i = 0; i < 256; i++) {
		uint16_t t = random_tag();
		struct unet_channel *c = unet_channel__open(ep->uep, t, p->name.mac, t, NULL);
		if (c) {
			p->ltag = t;
			p->uch = c;
			return 0;
		}
		if (errno != EADDRINUSE)
			return -errno;
	}
	return -EADDRINUSE;
}

/* The peer's tag is known: the real channel, then UAM on it. */
static int open_real(struct ufi_ep *ep, struct ufi_peer *p)
{
	if (p->uch) {
		unet_channel__close(p->uch);
		p->uch = NULL;
	}
	if (p->ltag == 0) {
		int r = reserve_tag(ep, p);
		if (r)
			return r;
		unet_channel__close(p->uch);
		p->uch = NULL;
	}
	/* Both ends pick the same kind from the two names (the XDP program
	 * drops a raw frame on a routable channel and the reverse).  The
	 * routable one finds the peer's next hop in the kernel's tables,
	 * which the HELLOs just exchanged have filled. */
	p->routed = ufi_name_routed(&ep->name, &p->name);
	if (p->routed && p->name.family == 6)
		p->uch = unet_channel__open_ipv6(ep->uep, p->ltag, p->name.ip6, 0, p->rtag, NULL);
	else if (p->routed)
		p->uch = unet_channel__open_ipv4(ep->uep, p->ltag, p->name.ip, 0, p->rtag, NULL);
	else
		p->uch = unet_channel__open(ep->uep, p->ltag, p->name.mac, p->rtag, NULL);
	if (!p->uch)
		return -errno;
	unet_channel__set_ctx(p->uch, p);
	p->ch = uam_chan__open(ep->uam, p->uch);
	if (!p->ch) {
		int r = -errno;
		unet_channel__close(p->uch);
		p->uch = NULL;
		return r;
	}
	return 0;
}

/* Our HELLO to p, from tag ft: ours, or 0 for a challenge. */
static void send_hello_from(struct ufi_ep *ep, struct ufi_peer *p, uint16_t ft)
{
	struct ufi_hello h = { .from = ep->name, .from_tag = ft, .to_tag = p->rtag };
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = p->name.ip,
				  .sin_port = p->name.port };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = p->name.port };
	unsigned char buf[UFI_HELLO_LEN];
	bool v6 = p->name.family == 6;

	if (!p->my_nonce)
		p->my_nonce = ufi_hello_nonce();
	h.my_nonce = p->my_nonce;
	h.your_nonce = p->peer_nonce;
	ufi_hello_pack(&h, &p->name, buf);
	/* Lost or refused: the retry (or the peer's) covers it. */
	memcpy(sa6.sin6_addr.s6_addr, p->name.ip6, 16);
	(void)sendto(ep->udp_fd, buf, sizeof(buf), 0,
		     v6 ? (struct sockaddr *)&sa6 : (struct sockaddr *)&sa,
		     v6 ? (socklen_t)sizeof(sa6) : (socklen_t)sizeof(sa));
}

static void send_hello(struct ufi_ep *ep, struct ufi_peer *p)
{
	send_hello_from(ep, p, p->ltag);
}

/* A fresh nonce for p: every one it was sent before no longer proves a
 * HELLO, so a HELLO seen on the wire once cannot be echoed later. */
static void new_nonce(struct ufi_peer *p)
{
	uint32_t old = p->my_nonce;

	do
		p->my_nonce = ufi_hello_nonce();
	while (p->my_nonce == old);
	p->renego_nonce = false;
}

void ufi_conn_start(struct ufi_ep *ep, struct ufi_peer *p)
{
	int r;

	if (p->state != UFI_PEER_IDLE)
		return;
	if (p->name.family != ep->name.family) {
		/* Our setup socket cannot reach it, nor a channel of ours */
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL,
			"a peer's name is IPv%u, this endpoint's IPv%u: give every rank the same "
			"FI_UNET_FAMILY (docs/libfabric.md)\n",
			p->name.family, ep->name.family);
		ufi_peer_fail(ep, p, -EAFNOSUPPORT);
		return;
	}
	r = reserve_tag(ep, p);
	if (r) {
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL, "no free U-Net tag for a channel: %s\n",
			strerror(-r));
		ufi_peer_fail(ep, p, r);
		return;
	}
	p->state = UFI_PEER_HELLO;
	ep->connecting++;
	p->hello_start_ns = ufi_now_ns();
	p->hello_ivl_ms = 10;
	p->hello_next_ns = p->hello_start_ns + 10000000ull;
	send_hello(ep, p);
}

static void go_up(struct ufi_ep *ep, struct ufi_peer *p)
{
	int r = open_real(ep, p);

	if (p->state == UFI_PEER_HELLO)
		ep->connecting--;
	if (r) {
		FI_WARN(&ufi_prov, FI_LOG_EP_CTRL, "cannot open the %s U-Net channel to a peer: %s\n",
			p->routed ? "routable" : "raw", strerror(-r));
		p->state = UFI_PEER_IDLE;
		ufi_peer_fail(ep, p, r);
		return;
	}
	ufi_peer_up(ep, p);
}

/* Take the peer's tag ft and bring its channel up, answering if asked. */
static void take_tag(struct ufi_ep *ep, struct ufi_peer *p, uint16_t ft, bool answer)
{
	p->rtag = ft;
	/* The nonce that proved this setup is used up: whoever saw it (in
	 * our challenge, or the peer's echo) cannot replay it later to make
	 * us renegotiate.  The answer carries the new one. */
	new_nonce(p);
	go_up(ep, p);
	if (answer && p->state == UFI_PEER_UP)
		send_hello(ep, p);
}

void ufi_conn_hello(struct ufi_ep *ep, const void *buf, size_t len, const struct sockaddr *from,
		    socklen_t fromlen)
{
	struct ufi_hello hello, *h = &hello;
	struct ufi_peer *p;
	uint16_t ft, tt;
	bool auth;

	if (ufi_hello_parse(&ep->name, buf, len, from, fromlen, h))
		return;
	ft = h->from_tag;
	tt = h->to_tag;
	p = ufi_peer_find(ep, &h->from);
	if (!p && tt == 0)
		p = ufi_peer_stranger(ep, &h->from); /* not in our AV yet (lazy MPI) */
	if (!p || p->self)
		return;
	if (p->state == UFI_PEER_FAILED || p->state == UFI_PEER_CLOSED)
		return;
	/* Echoed only to the address in its name: a spoofer that changes it
	 * delays that peer (our HELLOs then fail its check, it asks again)
	 * but cannot make us take anything. */
	p->peer_nonce = h->my_nonce;
	auth = p->my_nonce && h->your_nonce == p->my_nonce;
	if (ft == 0) {
		/* A challenge: the peer asks us to prove our HELLO.  Only a
		 * side that has a tag to offer answers (an idle one has
		 * nothing to prove, and two idle ones must not bounce
		 * challenges for ever). */
		if (p->state != UFI_PEER_IDLE)
			send_hello(ep, p);
		return;
	}
	if (!auth) {
		/* Unproven: our HELLO, its nonce echoed, to the address its
		 * name gives (an idle side's has from_tag 0: a challenge).
		 * The real peer's next HELLO is then authenticated. */
		send_hello(ep, p);
		return;
	}
	switch (p->state) {
	case UFI_PEER_IDLE:
		if (p->addr == FI_ADDR_NOTAVAIL && !ufi_stranger_admit(ep, p))
			return; /* no room for strangers now: it asks again */
		take_tag(ep, p, ft, true);
		break;
	case UFI_PEER_HELLO:
		if (tt == p->ltag) /* the answer to ours */
			take_tag(ep, p, ft, false);
		else if (tt == 0 && memcmp(&ep->name, &p->name, UFI_NAME_LEN) > 0)
			/* both started: the smaller name is the initiator, we answer */
			take_tag(ep, p, ft, true);
		break;
	case UFI_PEER_UP:
		if (ft != p->rtag && !p->renego_nonce) {
			/* A new tag, proven only by a nonce that went out before
			 * (in an answer, or with a HELLO that said our answer was
			 * lost), which a host that once saw it could echo: the
			 * renegotiation waits for the echo of a fresh challenge,
			 * sent to the address in the peer's name.  The real
			 * peer, setting up anew, echoes it at once; one that is
			 * up answers it with its old tag, which uses it up. */
			new_nonce(p);
			p->renego_nonce = true;
			send_hello_from(ep, p, 0);
		} else if (ft != p->rtag) {
			/* It set its side up anew (a new tag): what was under
			 * way on the old channel is lost to it, so it ends as
			 * for a reset peer (and the old channel is closed);
			 * then a new channel, with a new tag of ours. */
			FI_WARN(&ufi_prov, FI_LOG_EP_CTRL, "peer renegotiates its channel\n");
			ufi_peer_fail(ep, p, -ECONNRESET);
			p->state = UFI_PEER_IDLE;
			p->err = 0;
			p->ltag = 0;
			take_tag(ep, p, ft, true);
		} else {
			if (p->renego_nonce)
				new_nonce(p); /* the challenge answered: used up */
			if (tt != p->ltag)
				send_hello(ep, p); /* our answer was lost */
		}
		break;
	default:
		break;
	}
}

void ufi_conn_poll(struct ufi_ep *ep, uint64_t now)
{
	unsigned char buf[UFI_HELLO_LEN];
	struct sockaddr_storage from;

	for (int i = 0; i < 64; i++) {
		socklen_t fl = sizeof(from);
		/* MSG_TRUNC: n is the datagram's own length, so a longer one
		 * is refused by its size instead of read as its first bytes */
		ssize_t n = recvfrom(ep->udp_fd, buf, sizeof(buf), MSG_TRUNC,
				     (struct sockaddr *)&from, &fl);
		if (n < 0)
			break;
		ufi_conn_hello(ep, buf, (size_t)n, (const struct sockaddr *)&from, fl);
	}
	if (!ep->connecting)
		return;
	for (struct ufi_peer *p = ep->peers; p; p = p->next) {
		if (p->state != UFI_PEER_HELLO || now < p->hello_next_ns)
			continue;
		if (now - p->hello_start_ns > (uint64_t)ufi_params.connect_timeout_ms * 1000000ull) {
			ep->connecting--;
			p->state = UFI_PEER_IDLE;
			unet_channel__close(p->uch);
			p->uch = NULL;
			FI_WARN(&ufi_prov, FI_LOG_EP_CTRL,
				"peer did not answer channel setup within %d ms\n",
				ufi_params.connect_timeout_ms);
			ufi_peer_fail(ep, p, -ETIMEDOUT);
			continue;
		}
		send_hello(ep, p);
		if (p->hello_ivl_ms < 500)
			p->hello_ivl_ms *= 2;
		p->hello_next_ns = now + (uint64_t)p->hello_ivl_ms * 1000000ull;
	}
}
