/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_dest.h - whether a datagram to the channel port is addressed to
 * this host at all: a host that forwards (a router, a host with
 * containers behind it) must forward other hosts' channel frames, not
 * take them for its own endpoints (docs/wire-format.md, "Destination
 * address").
 *
 * Part of unet_xdp.bpf.c (included after xdp_common.h and the UDP
 * headers, whose IP structs it uses).  Asked by chan_rx() and chan6_rx()
 * once a datagram is known to be UDP to the channel port, before any of
 * its other checks: a frame that is not ours is passed whatever is wrong
 * with it, as a router forwards it whatever it carries.
 *
 * The answer is the kernel's own, so it follows every address and route
 * change with nothing to keep in step: the FIB lookup (bpf_fib_lookup)
 * the kernel's forwarding path would make for the frame on the interface
 * it arrived on.
 *   - Forwarding off on that interface (FWD_DISABLED): nothing arriving
 *     there transits; the kernel keeps a frame for an address it has and
 *     drops any other.  Ours, as before (the source checks are what stop
 *     a forged frame, whatever its destination).
 *   - No unicast route out (NOT_FWDED): an address the host has (on any
 *     interface: Linux's weak host model, the kernel takes it too), a
 *     broadcast address of a local subnet, an IPv6 link-local address, or
 *     no route at all.  Ours.
 *   - A unicast route out (SUCCESS, NO_NEIGH, FRAG_NEEDED, UNSUPP_LWT):
 *     the kernel forwards it.  Transit: passed.
 *   - A reject route (BLACKHOLE, UNREACHABLE, PROHIBIT): the kernel
 *     discards it (and answers as that route says).  Passed: the
 *     operator's route decides, not U-Net.
 *   - The lookup itself failing (an unknown ingress ifindex, which only
 *     a test run can give): ours, the rule before the lookup existed.
 * Multicast, limited-broadcast, unspecified and loopback destinations are
 * never a channel's (channels are unicast): passed before any lookup.
 */
#ifndef UNET_XDP_DEST_H
#define UNET_XDP_DEST_H

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

/* The verdict of bpf_fib_lookup(): whether the kernel keeps the datagram
 * (the host's own, or dropped by it anyway) -- 1 -- or sends it on or
 * rejects it by a route -- 0. */
static __always_inline int fib_keeps(long rc)
{
	return rc < 0 || rc == BPF_FIB_LKUP_RET_FWD_DISABLED || rc == BPF_FIB_LKUP_RET_NOT_FWDED;
}

/* Whether an IPv4 datagram from saddr to daddr, arriving on the program's
 * interface, is addressed to this host (see above). */
static __always_inline int dest_ours4(struct xdp_md *ctx, __be32 saddr, __be32 daddr)
{
	struct bpf_fib_lookup p = {};
	__u32 d = bpf_ntohl(daddr);

	/* multicast (224/4, and the reserved 240/4 above it: limited
	 * broadcast included), "this network" (0/8), loopback (127/8) */
	if ((d >> 28) >= 0xe || (d >> 24) == 0 || (d >> 24) == 127)
		return 0;
	p.family = AF_INET;
	p.l4_protocol = IPPROTO_UDP;
	p.ifindex = ctx->ingress_ifindex;
	p.ipv4_src = saddr;
	p.ipv4_dst = daddr;
	return fib_keeps(bpf_fib_lookup(ctx, &p, sizeof(p), 0));
}

/* The same for IPv6: multicast (ff00::/8), unspecified and loopback are
 * never ours; link-local ones are never forwarded, so the kernel answers
 * NOT_FWDED for them itself. */
static __always_inline int dest_ours6(struct xdp_md *ctx, const struct ipv6hdr *ip6)
{
	struct bpf_fib_lookup p = {};
	const __u8 *d = (const __u8 *)&ip6->daddr;
	__u32 high = 0;

	if (d[0] == 0xff)
		return 0;
	for (int i = 0; i < 15; i++)
		high |= d[i];
	if (!high && (d[15] == 0 || d[15] == 1))
		return 0;
	p.family = AF_INET6;
	p.l4_protocol = IPPROTO_UDP;
	p.ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(p.ipv6_src, &ip6->saddr, 16);
	__builtin_memcpy(p.ipv6_dst, &ip6->daddr, 16);
	return fib_keeps(bpf_fib_lookup(ctx, &p, sizeof(p), 0));
}

#endif /* UNET_XDP_DEST_H */
