/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * channel.c - channels: a local tag bound to one peer (MAC address and
 * peer tag, or for a routable channel IPv4 or IPv6 address, UDP port and
 * peer tag).  The entry in the interface's unet_channels map is what the
 * XDP program demultiplexes and checks by; the unet_channel object is the
 * endpoint's handle for sending and for upcalls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "core/chan_udp.h"
#include "core/clock.h"
#include "core/objects.h"

static struct unet_channel *channel_new(struct unet_endpoint *ep, uint16_t tag,
					const uint8_t peer_mac[6], uint16_t peer_tag,
					uint32_t txq)
{
	struct unet_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->ep = ep;
	ch->tag = tag;
	ch->peer_tag = peer_tag;
	memcpy(ch->peer_mac, peer_mac, 6);
	ch->txq = txq;
	ch->port_fd = -1;
	ch->next = ep->channels;
	ep->channels = ch;
	ep->by_tag[tag] = ch;
	return ch;
}

/* Unlink from the endpoint and free it, or, while handlers run (they may
 * still be handed descriptors naming it), park it on the closed list. */
static void channel_unlink(struct unet_channel *ch)
{
	struct unet_endpoint *ep = ch->ep;

	if (ch->port_fd >= 0) {
		close(ch->port_fd);
		ch->port_fd = -1;
	}
	for (struct unet_channel **pp = &ep->channels; *pp; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	ep->by_tag[ch->tag] = NULL;
	if (ep->dispatching) {
		ch->closed = true;
		ch->next = ep->closed;
		ep->closed = ch;
		return;
	}
	free(ch);
}

void unet_channel_free_closed(struct unet_endpoint *ep)
{
	while (ep->closed) {
		struct unet_channel *ch = ep->closed;

		ep->closed = ch->next;
		free(ch);
	}
}

/* The index into ep->q[] of opts' tx_queue (0: none asked).  Returns 0
 * or -EINVAL. */
static int opts_txq(struct unet_endpoint *ep, const struct unet_channel_opts *opts,
		    uint32_t *txq)
{
	*txq = 0;
	if (opts && opts->sz < sizeof(size_t))
		return -EINVAL;
	if (opts && opts->sz >= offsetof(struct unet_channel_opts, tx_queue) + sizeof(int) &&
	    opts->tx_queue > 0) {
		int q = opts->tx_queue;

		if (q >= UNET_MAX_QUEUES || !(ep->queue_mask & (1u << q))) {
			unet_log(UNET_LOG_ERROR, "tx_queue %d: not a queue of this endpoint", q);
			return -EINVAL;
		}
		while (ep->q[*txq].queue_id != (uint32_t)q)
			(*txq)++;
	}
	return 0;
}

/* A routable channel's own and its peer's address, as the kernel's
 * tables take them (4 or 16 bytes by w.v6). */
static const void *chan_saddr(const struct unet_channel *ch)
{
	return ch->w.v6 ? (const void *)ch->w.saddr6 : (const void *)&ch->w.saddr;
}

static const void *chan_daddr(const struct unet_channel *ch)
{
	return ch->w.v6 ? (const void *)ch->w.daddr6 : (const void *)&ch->w.daddr;
}

/*
 * Make ch a routable channel to the peer of cv (UNET_CHAN_F_UDP4 or
 * UNET_CHAN_F_UDP6): the headers its frames carry, and its source port
 * held on this host so no other local process can send as the channel.
 * wait: for the next hop's MAC, as unet_chan_next_hop.  Returns 0 or
 * -errno.
 */
static int channel_udp_setup(struct unet_endpoint *ep, struct unet_channel *ch,
			     const struct unet_channel_val *cv, bool wait)
{
	bool v6 = cv->flags & UNET_CHAN_F_UDP6;
	int family = v6 ? AF_INET6 : AF_INET;
	struct unet_chan_hop hop;
	int port, fd, err;

	port = unet_chan_port_of(ep->iface);
	if (port < 0)
		return port;
	memset(&ch->w, 0, sizeof(ch->w));
	ch->w.v6 = v6;
	if (v6) {
		memcpy(ch->w.daddr6, cv->peer_addr, 16);
		err = unet_chan_local_ipv6(ep->iface->ifname, ch->w.daddr6, ch->w.saddr6);
	} else {
		memcpy(&ch->w.daddr, cv->peer_addr, 4);
		err = unet_chan_local_ipv4(ep->iface->ifname, &ch->w.saddr);
	}
	if (err) {
		const char *what = "IPv4";

		if (v6)
			what = unet_chan_ipv6_link_local(ch->w.daddr6) ? "link-local IPv6"
								       : "global IPv6";
		unet_log(UNET_LOG_ERROR, "%s: no %s address for a routable channel",
			 ep->iface->ifname, what);
		return -EADDRNOTAVAIL;
	}
	/* The next hop as the kernel routes it now, not as the entry was
	 * made (an administrator's may be old). */
	err = unet_chan_next_hop(family, ep->iface->ifindex, chan_saddr(ch), chan_daddr(ch),
				 ep->mtu, wait, &hop);
	if (err) {
		unet_log(UNET_LOG_ERROR, "channel %u: no next hop to the peer: %s", ch->tag,
			 strerror(-err));
		return err;
	}
	memcpy(ch->via, hop.via, sizeof(ch->via));
	ch->hop_mtu = hop.mtu;
	ch->hop_next_ns = unet_mono_coarse_ns() + UNET_CHAN_HOP_TTL_NS;
	memcpy(ch->w.dst_mac, hop.mac, 6);
	memcpy(ch->peer_mac, hop.mac, 6);
	memcpy(ch->w.src_mac, ep->mac, 6);
	ch->w.sport = unet_chan_sport(ch->tag);
	ch->w.dport = (uint16_t)port;
	ch->w.dst_tag = ch->peer_tag;
	ch->w.src_tag = ch->tag;
	fd = unet_chan_hold_port(family, ch->w.sport);
	if (fd < 0) {
		unet_log(UNET_LOG_ERROR, "channel %u: source port %u: %s", ch->tag, ch->w.sport,
			 strerror(-fd));
		return fd;
	}
	ch->port_fd = fd;
	ch->peer_port = ntohs(cv->peer_port);
	ch->udp = true;
	ep->chan_port = (uint16_t)port;
	return 0;
}

/* A routable channel on an endpoint from unetd: the daemon decides the
 * headers and holds the source port (remote.c); we only build frames.
 * peer_addr6 NULL: to IPv4 peer_addr. */
static struct unet_channel *channel_open_remote(struct unet_endpoint *ep, uint16_t tag,
						uint32_t peer_addr, const uint8_t *peer_addr6,
						uint16_t peer_port, uint16_t peer_tag,
						const struct unet_channel_opts *opts)
{
	struct unet_channel *ch;
	struct unet_wire_udp w;
	uint16_t peer_src_port, max_payload;
	uint32_t txq;
	int err = opts_txq(ep, opts, &txq);

	if (!err && (tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID))
		err = -EINVAL;
	if (!err && ep->by_tag[tag])
		err = -EADDRINUSE;
	if (!err && peer_addr6)
		err = unet_remote_channel_open_ipv6(ep, tag, peer_addr6, peer_port, peer_tag, &w,
						    &peer_src_port, &max_payload);
	else if (!err)
		err = unet_remote_channel_open_ipv4(ep, tag, peer_addr, peer_port, peer_tag, &w,
						    &peer_src_port, &max_payload);
	if (err) {
		errno = -err;
		return NULL;
	}
	ch = channel_new(ep, tag, w.dst_mac, peer_tag, txq);
	if (!ch) {
		unet_remote_channel_close(ep, tag);
		errno = ENOMEM;
		return NULL;
	}
	ch->w = w;
	ch->peer_port = peer_src_port;
	ch->max_payload = max_payload;
	/* The daemon resolved the next hop at open and checks every frame
	 * against it: the channel keeps it (never looked up again here). */
	ch->hop_mtu = ep->mtu;
	ch->hop_next_ns = UINT64_MAX;
	ch->udp = true;
	ep->chan_port = w.dport;
	return ch;
}

void unet_channel_hop_refresh(struct unet_channel *ch, uint64_t now)
{
	struct unet_endpoint *ep = ch->ep;
	int family = ch->w.v6 ? AF_INET6 : AF_INET;
	struct unet_chan_hop hop;
	int err;

	err = unet_chan_next_hop(family, ep->iface->ifindex, chan_saddr(ch), chan_daddr(ch),
				 ep->mtu, false, &hop);
	if (err) {
		/* The last next hop stays: a route being replaced, or a new
		 * gateway being resolved, is a moment; frames to the old one
		 * are the best guess meanwhile. */
		ch->hop_next_ns = now + UNET_CHAN_HOP_RETRY_NS;
		if (err != ch->hop_err && err != -EAGAIN)
			unet_log(UNET_LOG_WARN, "channel %u: next hop: %s (still sending by the "
				 "last one)", ch->tag, strerror(-err));
		ch->hop_err = err;
		return;
	}
	ch->hop_err = 0;
	ch->hop_next_ns = now + UNET_CHAN_HOP_TTL_NS;
	ch->hop_mtu = hop.mtu;
	if (!memcmp(hop.via, ch->via, sizeof(ch->via)) && !memcmp(hop.mac, ch->w.dst_mac, 6))
		return;
	{
		char v[INET6_ADDRSTRLEN] = "?";

		inet_ntop(family, hop.via, v, sizeof(v));
		unet_log(UNET_LOG_INFO, "channel %u: next hop now %s (%02x:%02x:%02x:%02x:%02x:%02x)",
			 ch->tag, v, hop.mac[0], hop.mac[1], hop.mac[2], hop.mac[3], hop.mac[4],
			 hop.mac[5]);
	}
	memcpy(ch->via, hop.via, sizeof(ch->via));
	memcpy(ch->w.dst_mac, hop.mac, 6);
	memcpy(ch->peer_mac, hop.mac, 6);
	/* what unetctl channel list shows; nothing checks it on receive */
	unet_iface_channel_set_hop(ep->iface, ch->tag, ep->id, ep->token, hop.mac);
}

/* A routable channel of our own to the peer peer (unet_chan_udp_peer's
 * or unet_chan_udp6_peer's entry, err its error). */
static struct unet_channel *channel_open_udp(struct unet_endpoint *ep, uint16_t local_tag,
					     const struct unet_channel_val *peer,
					     const struct unet_channel_opts *opts, bool wait, int err)
{
	struct unet_channel *ch;
	uint32_t txq = 0;

	if (!err)
		err = opts_txq(ep, opts, &txq);
	if (!err && ep->by_tag[local_tag])
		err = -EADDRINUSE;
	if (err) {
		errno = -err;
		return NULL;
	}
	ch = channel_new(ep, local_tag, peer->peer_mac, peer->peer_tag, txq);
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	/* The source port first: a taken one must not leave a map entry. */
	err = channel_udp_setup(ep, ch, peer, wait);
	if (!err)
		err = unet_iface_channel_add_val(ep->iface, ep->id, local_tag, peer);
	if (err) {
		channel_unlink(ch);
		errno = -err;
		return NULL;
	}
	return ch;
}

/* A routable channel to peer_addr6, or (NULL) to IPv4 peer_addr; asked
 * of unetd on an endpoint it serves, else resolved here (wait: for the
 * next hop's MAC, as unet_chan_next_hop). */
static struct unet_channel *channel_open_routable(struct unet_endpoint *ep, uint16_t local_tag,
						  uint32_t peer_addr, const uint8_t *peer_addr6,
						  uint16_t peer_port, uint16_t peer_tag,
						  const struct unet_channel_opts *opts, bool wait)
{
	struct unet_channel_val peer;
	int err;

	if (!ep) {
		errno = EINVAL;
		return NULL;
	}
	if (ep->daemon_fd >= 0)
		return channel_open_remote(ep, local_tag, peer_addr, peer_addr6, peer_port, peer_tag,
					   opts);
	err = opts_txq(ep, opts, &(uint32_t){ 0 });
	if (!err && peer_addr6)
		err = unet_chan_udp6_peer(ep->iface, local_tag, peer_addr6, peer_port, peer_tag, wait,
					  &peer);
	else if (!err)
		err = unet_chan_udp_peer(ep->iface, local_tag, peer_addr, peer_port, peer_tag, wait,
					 &peer);
	return channel_open_udp(ep, local_tag, &peer, opts, wait, err);
}

struct unet_channel *unet_channel_open_routable(struct unet_endpoint *ep, uint16_t local_tag,
						uint32_t peer_addr, const uint8_t *peer_addr6,
						uint16_t peer_port, uint16_t peer_tag, bool wait)
{
	return channel_open_routable(ep, local_tag, peer_addr, peer_addr6, peer_port, peer_tag,
				     NULL, wait);
}

struct unet_channel *unet_channel__open_ipv4(struct unet_endpoint *ep, uint16_t local_tag,
					     uint32_t peer_addr, uint16_t peer_port,
					     uint16_t peer_tag, const struct unet_channel_opts *opts)
{
	return channel_open_routable(ep, local_tag, peer_addr, NULL, peer_port, peer_tag, opts,
				     true);
}

struct unet_channel *unet_channel__open_ipv6(struct unet_endpoint *ep, uint16_t local_tag,
					     const uint8_t peer_addr[16], uint16_t peer_port,
					     uint16_t peer_tag, const struct unet_channel_opts *opts)
{
	if (!peer_addr) {
		errno = EINVAL;
		return NULL;
	}
	return channel_open_routable(ep, local_tag, 0, peer_addr, peer_port, peer_tag, opts, true);
}

/* The IP and UDP headers of a routable channel's frames. */
static uint32_t chan_ip_udp_hlen(const struct unet_channel *ch)
{
	return (ch->w.v6 ? UNET_IP6_HLEN : UNET_IP_HLEN) + UNET_UDP_HLEN;
}

uint32_t unet_channel__max_payload(const struct unet_channel *ch)
{
	if (!ch)
		return 0;
	if (ch->udp) {
		const uint32_t hdrs = chan_ip_udp_hlen(ch) + UNET_HDR_LEN;
		uint32_t m = unet_channel_udp_rx_max(ch);

		/* ... and no more than the route's MTU lets through */
		if (ch->hop_mtu < ch->ep->mtu) {
			uint32_t r = ch->hop_mtu > hdrs ? ch->hop_mtu - hdrs : 0;

			m = r < m ? r : m;
		}
		/* ... nor than unetd said, for a channel of its client's */
		return ch->max_payload && m > ch->max_payload ? ch->max_payload : m;
	}
	return ch->ep->max_payload;
}

uint32_t unet_channel_udp_rx_max(const struct unet_channel *ch)
{
	/* A routable channel's frame is built in one send buffer: frames in
	 * pieces (pieces.c) are raw U-Net only, and a larger message would
	 * leave as a raw frame, not as the channel's UDP. */
	uint32_t m = ch->ep->max_payload - chan_ip_udp_hlen(ch);

	return m < ch->ep->buf_payload ? m : ch->ep->buf_payload;
}

struct unet_channel *unet_channel__open(struct unet_endpoint *ep, uint16_t local_tag,
					const uint8_t peer_mac[6], uint16_t peer_tag,
					const struct unet_channel_opts *opts)
{
	struct unet_channel *ch;
	uint32_t txq = 0;
	int err;

	if (!ep || !peer_mac || local_tag == UNET_TAG_INVALID || peer_tag == UNET_TAG_INVALID) {
		errno = EINVAL;
		return NULL;
	}
	err = opts_txq(ep, opts, &txq);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (ep->by_tag[local_tag]) {
		errno = EADDRINUSE;
		return NULL;
	}
	/* The same path as an administrator's `unetctl channel add`: a tag
	 * left behind by a dead process is reclaimed, a live owner's is
	 * refused, counters start from zero. */
	err = ep->daemon_fd >= 0 ? unet_remote_channel_open(ep, local_tag, peer_mac, peer_tag)
			   : unet_iface__channel_add(ep->iface, ep->id, local_tag, peer_mac, peer_tag);
	if (err) {
		errno = -err;
		return NULL;
	}
	ch = channel_new(ep, local_tag, peer_mac, peer_tag, txq);
	if (!ch) {
		if (ep->daemon_fd >= 0)
			unet_remote_channel_close(ep, local_tag);
		else
			unet_iface_channel_remove(ep->iface, local_tag, ep->id, ep->token);
		errno = ENOMEM;
	}
	return ch;
}

/*
 * A channel an administrator added for us (unetctl channel add) becomes
 * ours only here, when the application asks for it: never as a side
 * effect of receiving.  The entry must name our slot *and* carry our
 * token: an entry made for a dead process that had our slot before is
 * not ours.
 */
struct unet_channel *unet_channel__lookup(struct unet_endpoint *ep, uint16_t local_tag)
{
	struct unet_channel_val val;
	struct unet_channel *ch;
	uint32_t key = local_tag;

	if (!ep) {
		errno = EINVAL;
		return NULL;
	}
	if (ep->by_tag[local_tag])
		return ep->by_tag[local_tag];
	/* An emulated endpoint's channels are all its own (unetd keeps
	 * administrative channels to itself). */
	if (ep->daemon_fd >= 0 || local_tag == UNET_TAG_INVALID ||
	    bpf_map_lookup_elem(ep->iface->channels_fd, &key, &val) || val.endpoint != ep->id ||
	    val.owner_token != ep->token) {
		errno = ENOENT;
		return NULL;
	}
	ch = channel_new(ep, local_tag, val.peer_mac, val.peer_tag, 0);
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (val.flags & (UNET_CHAN_F_UDP4 | UNET_CHAN_F_UDP6)) {
		int err = channel_udp_setup(ep, ch, &val, true);

		if (err) {
			/* The administrator's entry stays: only our handle goes. */
			channel_unlink(ch);
			errno = -err;
			return NULL;
		}
	}
	return ch;
}

void unet_channel__close(struct unet_channel *ch)
{
	if (!ch || ch->closed)
		return;
	/* Only remove the map entry if it is still ours. */
	if (ch->ep->daemon_fd < 0)
		unet_iface_channel_remove(ch->ep->iface, ch->tag, ch->ep->id, ch->ep->token);
	else if (!ch->ep->closing)
		unet_remote_channel_close(ch->ep, ch->tag);
	channel_unlink(ch);
}

void unet_channel_free_all(struct unet_endpoint *ep)
{
	while (ep->channels)
		unet_channel__close(ep->channels);
}

uint16_t unet_channel__tag(const struct unet_channel *ch)
{
	return ch ? ch->tag : UNET_TAG_INVALID;
}

struct unet_endpoint *unet_channel__endpoint(const struct unet_channel *ch)
{
	return ch ? ch->ep : NULL;
}

uint16_t unet_channel__peer_tag(const struct unet_channel *ch)
{
	return ch ? ch->peer_tag : UNET_TAG_INVALID;
}

void unet_channel__set_ctx(struct unet_channel *ch, void *ctx)
{
	if (ch)
		ch->ctx = ctx;
}

void *unet_channel__ctx(const struct unet_channel *ch)
{
	return ch ? ch->ctx : NULL;
}

void unet_channel__set_handler(struct unet_channel *ch, unet_recv_handler fn, void *ctx)
{
	if (!ch)
		return;
	ch->handler = fn;
	ch->handler_ctx = ctx;
}
