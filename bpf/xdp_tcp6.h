/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_tcp6.h - IPv6 frames: TCP over U-Net (docs/tcp.md, "IPv6").  A
 * segment for an (address, port) in unet_tcp6_ports goes to its
 * endpoint, where lwIP takes it; every other IPv6 frame goes on to
 * udp6_rx() (UDP, neighbour solicitations, the kernel's).
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters,
 * xdp_common.h, xdp_unet.h for fault_drop, xdp_udp6.h, and xdp_tcp.h
 * for tcp_delivered).
 */
#ifndef UNET_XDP_TCP6_H
#define UNET_XDP_TCP6_H

#include <linux/ipv6.h>
#include <linux/tcp.h>

/*
 * An IPv6 frame whose next header is TCP (l3 just past the Ethernet
 * header; the caller checked that the fixed header is in the frame), by
 * tcp_rx()'s rules: until the port is known to be ours the frame is
 * passed whatever is wrong with it; once it is ours it is checked
 * (payload length against the frame, the TCP header inside it, the data
 * offset) and never passed, unless its owner has no socket on any queue
 * (then the kernel answers with a reset, as for any closed port).
 *
 * TCP must follow the fixed header: a frame with an extension header
 * never gets here (its next header is not TCP) and udp6_rx() drops it
 * when the address is U-Net's alone, else passes it, as for UDP.  So no
 * fragment of a segment reaches an endpoint.  Checksums are the
 * library's to check.
 */
static __always_inline int tcp6_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	struct unet_tcp6_key key = {};
	struct unet_tcp_val *v;
	struct tcphdr *tcp;
	__u32 plen, doff;
	int r;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return pass();
	tcp = (void *)(ip6 + 1);
	if ((void *)tcp + 4 > data_end)
		return pass();
	__builtin_memcpy(key.addr, &ip6->daddr, 16);
	key.port = tcp->dest;
	v = bpf_map_lookup_elem(&unet_tcp6_ports, &key);
	if (!v || !udp_owner_current(v->endpoint, v->owner_token))
		return pass();

	/* From here on the segment is for a U-Net TCP port.  payload_len
	 * counts what follows the fixed header (0, a jumbogram, has no
	 * room for a TCP header: malformed); the frame may be longer
	 * (Ethernet padding) and come in pieces (ip_fits), never shorter. */
	plen = bpf_ntohs(ip6->payload_len);
	if ((void *)(tcp + 1) > data_end || plen < sizeof(*tcp) ||
	    !ip_fits(ctx, l3, sizeof(*ip6) + plen))
		return drop(UNET_CTR_DROP_TCP_MALFORMED);
	doff = tcp->doff * 4;
	if (doff < sizeof(*tcp) || doff > plen)
		return drop(UNET_CTR_DROP_TCP_MALFORMED);
	r = port_redirect(ctx, v->endpoint, &v->drop_no_socket);
	if (r != XDP_REDIRECT)
		return r;
	return tcp_delivered(v, plen);
}

#define UNET_IP6_EXT_WALK 4 /* extension headers walked at most */

/*
 * Walks an IPv6 frame's extension headers from the fixed header on: up
 * to UNET_IP6_EXT_WALK hop-by-hop, routing, destination-options and
 * fragment headers (the kinds whose length is in the header itself, RFC
 * 8200 4).  Returns where the walk stopped, with *nh_out the next header
 * there (still one of those kinds when the chain is longer than the
 * walk), or NULL when it cannot see through: a header past the first
 * piece of the frame, or a fragment other than the first (no
 * upper-layer header behind it).  Shared with xdp_chan6.h.
 */
static __always_inline __u8 *ip6_walk_exthdrs(struct ipv6hdr *ip6, void *data_end, __u8 *nh_out)
{
	__u8 *p = (__u8 *)(ip6 + 1), nh = ip6->nexthdr;

	for (int i = 0; i < UNET_IP6_EXT_WALK; i++) {
		__u32 len;

		if (nh == 0 || nh == 43 || nh == 60) {
			if ((void *)(p + 2) > data_end)
				return NULL;
			len = ((__u32)p[1] + 1) * 8;
		} else if (nh == 44) {
			if ((void *)(p + 8) > data_end)
				return NULL;
			if (((__u32)p[2] << 8 | p[3]) & 0xfff8)
				return NULL; /* not the first fragment */
			len = 8;
		} else {
			break;
		}
		nh = p[0];
		p += len;
	}
	*nh_out = nh;
	return p;
}

/*
 * An IPv6 frame whose next header is an extension header: whether the
 * TCP segment behind it is for a live U-Net TCP port (then the caller
 * drops it).  udp6_rx() drops such frames only to an address U-Net owns
 * alone and passes the rest; but to the kernel's own address a segment
 * for one of our ports would reach the kernel, which has only our port
 * holder socket there: it would answer with a reset, and the peer would
 * tear down a connection that is U-Net's (or, for a listening port,
 * complete a handshake with the holder).  So the kernel must never get
 * one.  Walked: up to UNET_IP6_EXT_WALK hop-by-hop, routing,
 * destination-options and fragment headers (the kinds whose length is
 * in the header itself, RFC 8200 4); a fragment other than the first
 * has no TCP header and is left to the kernel (alone it never
 * reassembles).  A longer chain of those to an address U-Net uses is
 * dropped too.  Anything else (ESP, AH, a header past the first piece)
 * is not walked: the kernel gets it, as before.
 */
static __always_inline int tcp6_behind_exthdr(struct ipv6hdr *ip6, void *data_end)
{
	struct unet_tcp6_key key = {};
	__u8 *p, nh;
	struct unet_tcp_val *v;

	p = ip6_walk_exthdrs(ip6, data_end, &nh);
	if (!p)
		return 0;
	if (nh == 0 || nh == 43 || nh == 60 || nh == 44) {
		/* A chain longer than the walk: its TCP header, if any, is
		 * out of sight, so to an address U-Net uses (a live entry in
		 * unet_udp6_addrs, whichever protocol) it is dropped rather
		 * than risked with the kernel (six or more extension headers:
		 * nothing a host sends). */
		struct unet_udp_addr_val *av;

		__builtin_memcpy(key.addr, &ip6->daddr, 16);
		av = bpf_map_lookup_elem(&unet_udp6_addrs, key.addr);
		return av && udp_owner_current(av->endpoint, av->owner_token);
	}
	if (nh != IPPROTO_TCP || (void *)(p + 4) > data_end)
		return 0;
	__builtin_memcpy(key.addr, &ip6->daddr, 16);
	__builtin_memcpy(&key.port, p + 2, 2);
	v = bpf_map_lookup_elem(&unet_tcp6_ports, &key);
	/* a dead owner's port is the kernel's again, as in tcp6_rx() */
	return v && udp_owner_current(v->endpoint, v->owner_token) &&
	       endpoint_has_socket(v->endpoint);
}

#endif /* UNET_XDP_TCP6_H */
