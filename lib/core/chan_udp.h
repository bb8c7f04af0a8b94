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
/* Where a routable channel's frames go: the next hop, its MAC, and the
 * MTU on the way. */
struct unet_chan_hop {
	uint32_t via;	/* the route's gateway, or the peer itself on the link */
	uint8_t mac[6]; /* via's */
	uint32_t mtu;	/* the interface's, lowered by the route's */
};
/*
 * The next hop from ifindex (MTU if_mtu, our address saddr) to daddr
 * (network order), from the kernel's routing table, its MAC from the
 * kernel's neighbour table.  A missing MAC is asked of the kernel; wait:
 * look again for up to a second.  Returns 0, -EAGAIN (not wait: being
 * resolved), -EHOSTUNREACH (not resolved), -ENETUNREACH (the kernel
 * routes daddr by another interface, or it is local or broadcast), -EPERM
 * (not allowed to ask the kernel), -errno.
 */
int unet_chan_next_hop(int ifindex, uint32_t saddr, uint32_t daddr, uint32_t if_mtu,
		       bool wait, struct unet_chan_hop *hop);
/* A UDP socket bound to (addr, port): held, it keeps every other local
 * process from sending from the channel's source.  Returns the fd, or
 * -errno (-EADDRINUSE: taken). */
int unet_chan_hold_port(uint32_t addr, uint16_t port);

/* iface_channel.c: the peer fields of a routable channel tag -> peer_tag
 * to peer_addr:peer_port (0: derived), its next hop's MAC resolved.
 * Returns 0, -EINVAL, -EHOSTUNREACH, -errno. */
int unet_chan_udp_peer(struct unet_iface *iface, uint16_t tag, uint32_t peer_addr,
		       uint16_t peer_port, uint16_t peer_tag, struct unet_channel_val *peer);
/* Add a channel with the peer fields of peer, under the interface lock. */
int unet_iface_channel_add_val(struct unet_iface *iface, uint32_t endpoint, uint16_t tag,
			       const struct unet_channel_val *peer);
/* The next hop's MAC of our routable channel tag (endpoint, token) in the
 * map entry, for listings.  Returns 0, -ENOENT (not ours), -errno. */
int unet_iface_channel_set_hop(struct unet_iface *iface, uint16_t tag, uint32_t endpoint,
			       uint64_t token, const uint8_t mac[6]);

#endif /* UNET_CHAN_UDP_H */
