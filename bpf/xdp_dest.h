/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_dest.h - whether a datagram to the channel port is addressed to
 * this host at all: a router with U-Net attached must forward other
 * hosts' channel frames, not take them for its own endpoints
 * (docs/wire-format.md, "Destination address").
 *
 * Part of unet_xdp.bpf.c (included after xdp_common.h and the UDP
 * headers, whose IP structs it uses).  Asked by chan_rx() and chan6_rx()
 * once a datagram is known to be UDP to the channel port, before any of
 * its other checks: a frame that is not ours is passed whatever is wrong
 * with it, as a router forwards it whatever it carries.
 *
 * The rule of the channel port is that a datagram meant for endpoints is
 * never handed to a kernel socket.  So a frame is passed (transit) ONLY
 * when the kernel's own FIB lookup (bpf_fib_lookup), made as its
 * forwarding path makes it for the frame on the interface it arrived on,
 * says the kernel sends it on as unicast out an interface:
 *   SUCCESS, NO_NEIGH (the next hop not yet resolved: the kernel
 *   resolves it and sends), FRAG_NEEDED (only with tot_len, which we
 *   leave 0; the kernel fragments it or answers "too big").
 * Every other answer is ours, as before the lookup existed -- checked,
 * dropped unless delivered: an address the host has (RTN_LOCAL, in any
 * table a rule selects, on any interface: the weak host model), a
 * broadcast route, no route, a reject route (the kernel would discard it
 * anyway), forwarding off on the interface, a route with an encapsulation
 * the lookup cannot follow (UNSUPP_LWT: some end in local delivery,
 * seg6local, a bpf lwt_in program), and the lookup failing.
 * Destinations the kernel's input path keeps before it asks any table
 * (multicast, limited broadcast, 0/8, 127/8; IPv6 multicast, ::, ::1,
 * link-local) are ours without a lookup, since a default route would
 * answer SUCCESS for them.
 *
 * The lookup is filled with everything the kernel's input route uses
 * that XDP can see, so policy rules (ip rule tos/dsfield, ipproto,
 * sport, dport, iif) choose the same table: the IPv4 TOS byte, the IPv6
 * traffic class and flow label, UDP and both ports.  Not seen: the
 * packet mark (set after XDP, by tc or netfilter), so fwmark rules are
 * judged as if the mark were 0.
 *
 * SUCCESS that still ends in local delivery needs root's configuration
 * that the lookup cannot see: netfilter DNAT/REDIRECT/TPROXY in
 * PREROUTING, an fwmark rule selecting a table with a local route, or an
 * `ip rule iif` rule for a device stacked on this one (a macvlan: the
 * kernel routes its frames as arriving there, the lookup as arriving
 * here).  A local route in a table chosen by any other rule is
 * RTN_LOCAL, which the lookup answers NOT_FWDED: ours.
 */
#ifndef UNET_XDP_DEST_H
#define UNET_XDP_DEST_H

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

/* Whether bpf_fib_lookup()'s answer means "forwarded as unicast out an
 * interface" (see above). */
static __always_inline int fib_forwards(long rc)
{
	return rc == BPF_FIB_LKUP_RET_SUCCESS || rc == BPF_FIB_LKUP_RET_NO_NEIGH ||
	       rc == BPF_FIB_LKUP_RET_FRAG_NEEDED;
}

/* Whether an IPv4 UDP datagram, arriving on the program's interface, is
 * addressed to this host (see above).  udp: its first 4 bytes (ports),
 * checked by the caller. */
static __always_inline int dest_ours4(struct xdp_md *ctx, const struct iphdr *ip,
				      const struct udphdr *udp)
{
	struct bpf_fib_lookup p = {};
	__u32 d = bpf_ntohl(ip->daddr);

	/* multicast (224/4), limited broadcast, "this network" (0/8),
	 * loopback (127/8): the input path delivers or drops them before any
	 * route is asked; a default route would say SUCCESS */
	if ((d >> 28) == 0xe || d == 0xffffffffu || (d >> 24) == 0 || (d >> 24) == 127)
		return 1;
	p.family = AF_INET;
	p.l4_protocol = IPPROTO_UDP;
	p.sport = udp->source;
	p.dport = udp->dest;
	p.tos = ip->tos;
	p.ifindex = ctx->ingress_ifindex;
	p.ipv4_src = ip->saddr;
	p.ipv4_dst = ip->daddr;
	return !fib_forwards(bpf_fib_lookup(ctx, &p, sizeof(p), 0));
}

/* The same for IPv6 (udp may sit behind extension headers): multicast
 * (ff00::/8), unspecified, loopback and link-local (fe80::/10, never
 * forwarded) destinations are ours without a lookup. */
static __always_inline int dest_ours6(struct xdp_md *ctx, const struct ipv6hdr *ip6,
				      const struct udphdr *udp)
{
	struct bpf_fib_lookup p = {};
	const __u8 *d = (const __u8 *)&ip6->daddr;
	__u32 high = 0;

	if (d[0] == 0xff || (d[0] == 0xfe && (d[1] & 0xc0) == 0x80))
		return 1;
	for (int i = 0; i < 15; i++)
		high |= d[i];
	if (!high && (d[15] == 0 || d[15] == 1))
		return 1;
	p.family = AF_INET6;
	p.l4_protocol = IPPROTO_UDP;
	p.sport = udp->source;
	p.dport = udp->dest;
	/* traffic class and flow label, as the kernel's ip6_flowinfo() */
	p.flowinfo = *(const __be32 *)ip6 & bpf_htonl(0x0fffffff);
	p.ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(p.ipv6_src, &ip6->saddr, 16);
	__builtin_memcpy(p.ipv6_dst, &ip6->daddr, 16);
	return !fib_forwards(bpf_fib_lookup(ctx, &p, sizeof(p), 0));
}

#endif /* UNET_XDP_DEST_H */
