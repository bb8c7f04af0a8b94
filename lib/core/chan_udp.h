/* SPDX-License-Identifier: BSD-2-Clause */
/* chan_udp.h - the host's side of routable channels (chan_udp.c).  Never
 * installed. */
#ifndef UNET_CHAN_UDP_H
#define UNET_CHAN_UDP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/layer.h"

/* The interface's channel port (host order), or -errno. */
int unet_chan_port_of(struct unet_iface *iface);
/* Set it (0: UNET_CHAN_PORT_DEFAULT).  Returns 0 or -errno. */
int unet_chan_set_port(struct unet_iface *iface, uint16_t port);
/* The first IPv4 address of ifname (network order).  Returns 0,
 * -EADDRNOTAVAIL or -errno. */
int unet_chan_local_ipv4(const char *ifname, uint32_t *addr);
/* Whether a is link-local (fe80::/10): meaningful only with its link. */
bool unet_chan_ipv6_link_local(const uint8_t a[16]);
/* ifname's first IPv6 address of the scope of peer's: link-local for a
 * link-local peer, else global.  Returns 0, -EADDRNOTAVAIL or -errno. */
int unet_chan_local_ipv6(const char *ifname, const uint8_t peer[16], uint8_t addr[16]);
/* Where a routable channel's frames go: the next hop, its MAC, and the
 * MTU on the way. */
struct unet_chan_hop {
	uint8_t via[16]; /* the route's gateway, or the peer itself on the link
			  * (network order; IPv4: bytes 0..3) */
	uint8_t mac[6];	 /* via's */
	uint32_t mtu;	 /* the interface's, lowered by the route's */
};
/* How long opening a routable channel waits for its next hop's MAC:
 * here for root's, in the client's library for unetd's (remote.c). */
#define UNET_CHAN_RESOLVE_WAIT_MS 1000
/*
 * The next hop from ifindex (MTU if_mtu, our address saddr, NULL: none)
 * to daddr (family AF_INET: 4 bytes, AF_INET6: 16, network order), from
 * the kernel's routing table, its MAC from the kernel's neighbour table
 * (ARP or neighbour discovery).  A missing MAC is asked of the kernel;
 * wait: look again for up to UNET_CHAN_RESOLVE_WAIT_MS.  Returns 0,
 * -EAGAIN (not wait: the kernel was asked, being resolved),
 * -EHOSTUNREACH (not resolved), -ENETUNREACH (the kernel routes daddr
 * by another interface, or it is local or broadcast), -EPERM (not
 * allowed to ask the kernel), -errno.
 */
int unet_chan_next_hop(int family, int ifindex, const void *saddr, const void *daddr,
		       uint32_t if_mtu, bool wait, struct unet_chan_hop *hop);
/* A UDP socket of family bound to port on every address: held, it keeps
 * every other local process from sending from the channel's source.
 * Returns the fd, or -errno (-EADDRINUSE: taken). */
int unet_chan_hold_port(int family, uint16_t port);

/* iface_channel.c: the peer fields of a routable channel tag -> peer_tag
 * to peer_addr:peer_port (0: derived), its next hop's MAC resolved
 * (wait as unet_chan_next_hop's: unetd, which must never stop for the
 * network, does not wait).  Returns 0, -EINVAL, -EHOSTUNREACH, -EAGAIN
 * (not wait: being resolved, unlogged), -errno. */
int unet_chan_udp_peer(struct unet_iface *iface, uint16_t tag, uint32_t peer_addr,
		       uint16_t peer_port, uint16_t peer_tag, bool wait,
		       struct unet_channel_val *peer);
/* The same to an IPv6 peer (UNET_CHAN_F_UDP6): not unspecified,
 * multicast, loopback nor IPv4-mapped. */
int unet_chan_udp6_peer(struct unet_iface *iface, uint16_t tag, const uint8_t peer_addr[16],
			uint16_t peer_port, uint16_t peer_tag, bool wait,
			struct unet_channel_val *peer);
/* channel.c: unet_channel__open_ipv4 (peer_addr6 NULL) or _ipv6 on an
 * endpoint of our own, wait as above (the public ones wait).  NULL with
 * errno as they, or EAGAIN (not wait: the next hop is being resolved). */
struct unet_channel *unet_channel_open_routable(struct unet_endpoint *ep, uint16_t local_tag,
						uint32_t peer_addr, const uint8_t *peer_addr6,
						uint16_t peer_port, uint16_t peer_tag, bool wait);
/* Add a channel with the peer fields of peer, under the interface lock. */
int unet_iface_channel_add_val(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			       const struct unet_channel_val *peer);
/* The next hop's MAC of our routable channel tag (endpoint, token) in the
 * map entry, for listings.  Returns 0, -ENOENT (not ours), -errno. */
int unet_iface_channel_set_hop(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			       uint64_t token, const uint8_t mac[6]);

#endif /* UNET_CHAN_UDP_H */
