/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_udp6.h - IPv6 frames: UDP over U-Net (docs/udp.md, "IPv6").  A
 * datagram for an (address, port) in unet_udp6_ports goes to its
 * endpoint; a neighbour solicitation for an address U-Net owns alone goes
 * to the endpoint that answers for it; everything else stays with the
 * kernel.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters, xdp_common.h
 * and xdp_udp.h, whose udp_owner_current() it shares).
 */
#ifndef UNET_XDP_UDP6_H
#define UNET_XDP_UDP6_H

#include <linux/in6.h>
#include <linux/ipv6.h>

#define UNET_IP6_HLEN 40
#define UNET_ICMPV6_NS 135
/* The fixed part of a neighbour solicitation: ICMPv6 type, code,
 * checksum, 4 reserved bytes, the 16-byte target address (RFC 4861 4.3). */
#define UNET_ND_NS_LEN 24

/* Next-header values that are IPv6 extension headers (RFC 8200 4, and the
 * IANA list of them): what sits between the fixed header and UDP when a
 * sender uses them.  We parse none of them (docs/udp.md). */
static __always_inline int ip6_is_exthdr(__u8 nh)
{
	switch (nh) {
	case 0:	  /* hop-by-hop options */
	case 43:  /* routing */
	case 44:  /* fragment */
	case 50:  /* ESP */
	case 51:  /* AH */
	case 60:  /* destination options */
	case 135: /* mobility */
	case 139: /* HIP */
	case 140: /* shim6 */
	case 253: /* experimental */
	case 254: /* experimental */
		return 1;
	}
	return 0;
}

static __always_inline int addr6_zero(const __u8 *a)
{
	__u32 d = 0;

	for (int i = 0; i < 16; i++)
		d |= a[i];
	return d == 0;
}

/*
 * A neighbour solicitation (ICMPv6 after the fixed header): if its target
 * is an address U-Net owns alone (UNET_UDP6_ADDR_ND), hand it to the
 * endpoint that registered the address, which checks it whole (hop limit
 * 255, checksum, options) and answers; else (the kernel's address, or
 * nobody's, or its endpoint has no socket on this queue) pass it: the
 * kernel answers for its own addresses and ignores the rest.
 */
static __always_inline int nd6_rx(struct xdp_md *ctx, struct ipv6hdr *ip6, void *data_end)
{
	__u8 *icmp = (__u8 *)(ip6 + 1);
	struct unet_udp_addr_val *av;
	__u8 target[16];

	if ((void *)(icmp + UNET_ND_NS_LEN) > data_end || icmp[0] != UNET_ICMPV6_NS ||
	    icmp[1] != 0 || ip6->hop_limit != 255)
		return pass();
	__builtin_memcpy(target, icmp + 8, 16);
	av = bpf_map_lookup_elem(&unet_udp6_addrs, target);
	if (!av || !(av->flags & UNET_UDP6_ADDR_ND) ||
	    !udp_owner_current(av->endpoint, av->owner_token))
		return pass();
	if (redirect_to(ctx, av->endpoint) != XDP_REDIRECT)
		return pass();
	if_count(UNET_CTR_ND_DELIVERED);
	return XDP_REDIRECT;
}

/*
 * An IPv6 frame (l3 just past the Ethernet header), by the same rules as
 * udp_rx() for IPv4: until the (address, port) is known to be ours the
 * frame is passed whatever is wrong with it; once it is ours it is
 * checked (lengths against the frame) and never passed, unless its owner
 * died (no socket on any queue).
 *
 * Extension headers: UDP must follow the fixed header directly.  A frame
 * whose next header is an extension header cannot be told to be for a
 * U-Net port without walking a chain a sender controls, so we do not
 * walk it: to an address U-Net owns alone (the kernel does not have it,
 * so no kernel socket can want it) it is dropped and counted
 * (drop_ip6_exthdr); to any other address it is the kernel's.  This also
 * refuses fragments (the fragment header is an extension header): we do
 * not reassemble, as for IPv4.
 */
static __always_inline int udp6_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	struct unet_udp6_key key = {};
	struct unet_udp6_val *v;
	struct unet_udp_addr_val *av;
	struct udphdr *udp;
	__u32 plen, ulen;
	int r;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return pass();
	if (ip6->nexthdr == IPPROTO_ICMPV6)
		return nd6_rx(ctx, ip6, data_end);
	if (ip6->nexthdr != IPPROTO_UDP) {
		if (!ip6_is_exthdr(ip6->nexthdr))
			return pass();
		__builtin_memcpy(key.addr, &ip6->daddr, 16);
		av = bpf_map_lookup_elem(&unet_udp6_addrs, key.addr);
		if (!av || !(av->flags & UNET_UDP6_ADDR_ND) ||
		    !udp_owner_current(av->endpoint, av->owner_token))
			return pass();
		return drop(UNET_CTR_DROP_IP6_EXTHDR);
	}
	udp = (void *)(ip6 + 1);
	/* The ports are the first 4 bytes of the UDP header. */
	if ((void *)udp + 4 > data_end)
		return pass();
	__builtin_memcpy(key.addr, &ip6->daddr, 16);
	key.port = udp->dest;
	v = bpf_map_lookup_elem(&unet_udp6_ports, &key);
	if (!v || !udp_owner_current(v->endpoint, v->owner_token))
		return pass();

	/* From here on the datagram is for a U-Net socket.  payload_len
	 * counts what follows the fixed header; a frame may be longer
	 * (Ethernet padding), never shorter. */
	plen = bpf_ntohs(ip6->payload_len);
	if ((void *)(udp + 1) > data_end || plen < sizeof(*udp) ||
	    (void *)(ip6 + 1) + plen > data_end)
		return drop(UNET_CTR_DROP_IP_MALFORMED);
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > plen)
		return drop(UNET_CTR_DROP_IP_MALFORMED);

	/* A connected socket hears only its peer; the library checks again. */
	if ((!addr6_zero(v->remote_addr) && !addr6_equal(v->remote_addr, (__u8 *)&ip6->saddr)) ||
	    (v->remote_port && v->remote_port != udp->source)) {
		__sync_fetch_and_add(&v->drop_filter, 1);
		return drop(UNET_CTR_DROP_UDP_FILTER);
	}
	r = port_redirect(ctx, v->endpoint, &v->drop_no_socket);
	if (r != XDP_REDIRECT)
		return r;
	__sync_fetch_and_add(&v->delivered, 1);
	__sync_fetch_and_add(&v->delivered_bytes, ulen - sizeof(*udp));
	if_count(UNET_CTR_UDP_DELIVERED);
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_UDP6_H */
