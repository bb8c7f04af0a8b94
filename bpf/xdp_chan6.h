/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_chan6.h - routable channels over IPv6: U-Net frames inside
 * UDP/IPv6, to the same channel port as over IPv4 (xdp_chan.h), checked
 * by the same rules where they mean the same.
 *
 * Part of unet_xdp.bpf.c (included after xdp_chan.h, for chan_port()
 * and CHAN_NOT_OURS, xdp_tcp6.h, for ip6_walk_exthdrs(), and
 * xdp_dest.h).  The encapsulation and the order of the checks are in
 * docs/wire-format.md:
 *
 *   0. not IPv6/UDP to the channel port (read from a UDP header inside
 *      the frame) -> not ours: chan6_rx() returns CHAN_NOT_OURS and the
 *      caller goes on to TCP and UDP over U-Net;
 *   0b. a destination address this host does not keep (xdp_dest.h:
 *      transit, multicast) -> passed untouched, counted as pass, with
 *      or without extension headers;
 *   1. UDP to the channel port behind extension headers (a fragment
 *      header included) -> drop_ip6_exthdr: we send none and walk none
 *      on the way in (the chain is only looked through to see where it
 *      leads, as for TCP, xdp_tcp6.h);
 *   2. payload length shorter than the UDP header or past the end of
 *      the frame -> drop_chan_ip;
 *   3. UDP length not the payload length, or the U-Net header's len not
 *      the rest of the datagram -> drop_chan_udplen (a datagram too
 *      short for the U-Net header -> drop_malformed);
 *   4. a zero UDP checksum -> drop_chan_csum (IPv6 forbids it: RFC
 *      8200 8.1).  The sum itself is verified by the library on
 *      receive, not here: a pass over every byte in XDP (docs/wire-format.md);
 *   5. the U-Net header inside, as for raw frames (unet_demux), but the
 *      sender checked is the 128-bit IPv6 source address and UDP source
 *      port.
 *
 * As over IPv4, everything to the channel port for this host is dropped
 * once it is ours, never passed.
 */
#ifndef UNET_XDP_CHAN6_H
#define UNET_XDP_CHAN6_H

/*
 * Whether an IPv6 frame whose next header is an extension header carries
 * UDP to the channel port behind it: walks up to UNET_IP6_EXT_WALK
 * hop-by-hop, routing, destination-options and first-fragment headers
 * inside the first piece of the frame.  A longer chain, a later fragment,
 * or anything the walk cannot see through is the kernel's (the channel's
 * address is the kernel's own, so nothing else can be assumed ours).
 * Returns that UDP header (its first 4 bytes inside the frame), or NULL.
 */
static __always_inline struct udphdr *chan6_behind_exthdr(struct ipv6hdr *ip6, void *data_end)
{
	__u8 *p, nh;

	p = ip6_walk_exthdrs(ip6, data_end, &nh);
	if (!p)
		return NULL;
	if (nh != IPPROTO_UDP || (void *)(p + 4) > data_end)
		return NULL;
	return ((struct udphdr *)p)->dest == chan_port() ? (struct udphdr *)p : NULL;
}

/* An IPv6 frame; l3 points just past the Ethernet header (nothing of it
 * checked).  Returns an XDP verdict, or CHAN_NOT_OURS. */
static __always_inline int chan6_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	struct unet_src src = {};
	struct unet_hdr *uh;
	struct udphdr *udp;
	__u32 plen;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return CHAN_NOT_OURS;
	if (ip6->nexthdr != IPPROTO_UDP) {
		if (!ip6_is_exthdr(ip6->nexthdr))
			return CHAN_NOT_OURS;
		udp = chan6_behind_exthdr(ip6, data_end);
		if (!udp)
			return CHAN_NOT_OURS;
		/* Transit is forwarded whatever headers it carries. */
		if (!dest_ours6(ctx, ip6, udp))
			return pass();
		return drop(UNET_CTR_DROP_IP6_EXTHDR);
	}
	udp = (void *)(ip6 + 1);
	if ((void *)udp + 4 > data_end || udp->dest != chan_port())
		return CHAN_NOT_OURS;
	/* Another host's (a host that forwards): the kernel's, untouched. */
	if (!dest_ours6(ctx, ip6, udp))
		return pass();

	/* Ours from here on: dropped unless delivered.  payload_len counts
	 * what follows the fixed header; the frame may be longer (Ethernet
	 * padding), never shorter. */
	plen = bpf_ntohs(ip6->payload_len);
	if (plen < UNET_UDP_HLEN || (void *)(ip6 + 1) + plen > data_end ||
	    (void *)(udp + 1) > data_end)
		return drop(UNET_CTR_DROP_CHAN_IP);
	if (bpf_ntohs(udp->len) != plen)
		return drop(UNET_CTR_DROP_CHAN_UDPLEN);
	if (!udp->check)
		return drop(UNET_CTR_DROP_CHAN_CSUM);
	/* The U-Net header must fill the datagram exactly, as over IPv4. */
	uh = (struct unet_hdr *)(udp + 1);
	if ((void *)(uh + 1) > data_end)
		return drop(UNET_CTR_DROP_MALFORMED);
	if ((__u32)bpf_ntohs(uh->len) + UNET_UDP_HLEN + UNET_HDR_LEN != plen)
		return drop(UNET_CTR_DROP_CHAN_UDPLEN);

	src.addr6 = (const __u8 *)&ip6->saddr;
	src.port = udp->source;
	return unet_demux(ctx, uh, data_end, &src);
}

#endif /* UNET_XDP_CHAN6_H */
