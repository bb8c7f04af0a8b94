/* SPDX-License-Identifier: BSD-2-Clause */
/* chan_udp.h - the host's side of routable channels (chan_udp.c).  Never
 * installed. */
#ifndef UNET_CHAN_UDP_H
#define UNET_CHAN_UDP_H

#include <stdint.h>

#include "core/layer.h"

/* The interface's channel port (host order), or -errno. */
int unet_chan_port_of(struct unet_iface *iface);
/* Set it (0: UNET_CHAN_PORT_DEFAULT).  Returns 0 or -errno. */
int unet_chan_set_port(struct unet_iface *iface, uint16_t port);
/* The first IPv4 address of ifname (network order).  Returns 0,
 * -EADDRNOTAVAIL or -errno. */
int unet_chan_local_ipv4(const char *ifname, uint32_t *addr);
/* The MAC address frames to addr (network order) go to: on-link peers
 * only, from the kernel's neighbour table.  Returns 0, -EHOSTUNREACH (no
 * resolved entry: reach the peer once, e.g. ping it) or -errno. */
int unet_chan_nexthop_mac(const char *ifname, uint32_t addr, uint8_t mac[6]);
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

#endif /* UNET_CHAN_UDP_H */
