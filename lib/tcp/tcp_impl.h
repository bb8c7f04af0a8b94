/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp_impl.h - TCP/IPv4 over U-Net inside the library: the pinned-map
 * side (tcp_admin.c) and what tcp.c shares with it.  Never installed. */
#ifndef UNET_TCP_IMPL_H
#define UNET_TCP_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"

/* Frame offset in a send buffer: the IP header 4-byte aligned, and room
 * in front for TX metadata (lib/core/txmd.h, 16 bytes), which the kernel
 * wants in front of every frame on an endpoint that has it. */
#define UNET_TCP_TX_OFF 18

/* The TCP layer's map in the interface's pin directory. */
#define UNET_MAP_TCP_PORTS "unet_tcp_ports"
/* Its IPv6 twin (struct unet_tcp6_key -> struct unet_tcp_val). */
#define UNET_MAP_TCP6_PORTS "unet_tcp6_ports"

/* ---- tcp_admin.c: the pinned map ------------------------------------ */

/* Install laddr:lport for endpoint (flags UNET_TCP_PORT_*), replacing a
 * stale owner's entry.  Returns 0, -EADDRINUSE (a live endpoint has it),
 * -ENOSPC, -ESRCH, -errno. */
int unet_tcp_port_add(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		      uint16_t lport, uint32_t flags);
/* Join endpoint's listener to the SO_REUSEPORT group of laddr:lport as
 * uid's (or make it): as unet_udp_port_join. */
int unet_tcp_port_join(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
		       uint16_t lport, uint32_t uid);
/* Whether laddr:lport is a listener group's with a live member. */
bool unet_tcp_group_live(struct unet_iface *iface, uint32_t laddr, uint16_t lport);
/* Remove laddr:lport if endpoint (this incarnation) still owns it (or
 * leave its group). */
void unet_tcp_port_remove(struct unet_iface *iface, uint32_t endpoint, uint32_t laddr,
			  uint16_t lport);
/* Remove entries whose endpoint is gone (the core calls it, under the
 * interface lock).  Returns how many, or -errno. */
int unet_tcp_reclaim(struct unet_iface *iface);

/* ---- tcp_admin.c: the kernel's side, kept apart from lwIP's headers --- */

/* Hold laddr:*lport against the kernel: a TCP socket bound to it
 * (IP_FREEBIND: the address need not be the kernel's); with SO_REUSEADDR
 * for a listening port (then unet_tcp_reserve_listen), without for a
 * connection's.  *lport 0: the kernel picks an ephemeral port and *lport
 * gets it.  Returns the socket (close it to give the port back) or
 * -EADDRINUSE, -errno. */
int unet_tcp_reserve(uint32_t laddr, uint16_t *lport, bool listening);
/* The same for a listener of a SO_REUSEPORT group: the socket has
 * SO_REUSEPORT, so the kernel lets the group's other members' sockets
 * (the same user's: its rule) bind the port too. */
int unet_tcp_reserve_group(uint32_t laddr, uint16_t lport);
/* Make a listening port's socket listen (after its map entry exists).
 * Returns 0 or -EADDRINUSE, -errno. */
int unet_tcp_reserve_listen(int fd);

/* ---- tcp_admin.c: the same for IPv6 (unet_tcp6_ports) ------------------- */

int unet_tcp6_port_add(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
		       uint16_t lport, uint32_t flags);
void unet_tcp6_port_remove(struct unet_iface *iface, uint32_t endpoint, const uint8_t laddr[16],
			   uint16_t lport);
int unet_tcp6_reclaim(struct unet_iface *iface);
/* As unet_tcp_reserve: an AF_INET6 socket, IPV6_V6ONLY, IPV6_FREEBIND. */
int unet_tcp6_reserve(const uint8_t laddr[16], uint16_t *lport, bool listening);

/* ---- tcp6.c: IPv6 checks before lwIP, neighbour answers ------------------ */

/* Whether a is an address TCP over U-Net takes as its own or a peer's:
 * unicast, not ::, ::1, v4-mapped or link-local (a zone we do not
 * carry). */
bool unet_tcp6_addr_usable(const uint8_t a[16]);

enum unet_tcp6_verdict {
	UNET_TCP6_OK = 0,	    /* checked; seg filled */
	UNET_TCP6_NOT_TCP,	    /* not IPv6/TCP after the fixed header */
	UNET_TCP6_NOT_OURS,	    /* for another address */
	UNET_TCP6_MALFORMED,	    /* lengths, data offset, source, longer than mtu */
	UNET_TCP6_BAD_CSUM,	    /* neither complete nor partial */
	UNET_TCP6_PARTIAL_REFUSED,  /* partial, the policy says no */
};

struct unet_tcp6_seg {
	uint8_t saddr[16], daddr[16];
	uint8_t *t;	   /* the TCP header, in the frame */
	uint32_t tl;	   /* TCP header and data: the payload length */
	uint32_t doff;	   /* TCP header bytes */
	bool partial;	   /* the checksum was partial and is now complete */
};

/* Check an untagged Ethernet frame of len bytes as an IPv6/TCP segment
 * to addr (our address), no longer than mtu bytes of IP; a partial
 * checksum is completed in the frame when accept_partial. */
enum unet_tcp6_verdict unet_tcp6_check(uint8_t *frame, uint32_t len, const uint8_t addr[16],
				       bool accept_partial, uint32_t mtu, struct unet_tcp6_seg *seg);

/* What the answers keep: the rate limit's state (a struct unet_rate). */
struct unet_tcp6_nd {
	uint64_t rate_tat;
};

/* A frame whose next header is ICMPv6: if it is a valid neighbour
 * solicitation for addr (ours alone), answer it for mac on ep's send
 * queue txq, at most 20 a second.  Returns 0 (answered), -ENOMSG (not a
 * solicitation), -EPERM (not one to answer), -EINVAL (malformed),
 * -EBUSY (rate or no buffer). */
int unet_tcp6_answer_ns(struct unet_endpoint *ep, uint32_t txq, const uint8_t mac[6],
			const uint8_t addr[16], const uint8_t *frame, uint32_t len,
			struct unet_tcp6_nd *nd);

#endif /* UNET_TCP_IMPL_H */
