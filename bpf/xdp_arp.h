/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_arp.h - ARP frames for UDP over U-Net (docs/udp.md): learn
 * neighbours into unet_neigh, and hand ARP for a U-Net-owned address to
 * the endpoint that answers for it.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters and
 * xdp_common.h).
 */
#ifndef UNET_XDP_ARP_H
#define UNET_XDP_ARP_H

/* ARP for IPv4 over Ethernet (RFC 826), the only kind we look at. */
struct unet_arp {
	__be16 htype, ptype;
	__u8 hlen, plen;
	__be16 op;
	__u8 sha[6];
	__u8 spa[4];
	__u8 tha[6];
	__u8 tpa[4];
} __attribute__((packed));

/*
 * Whether to believe what an ARP request or reply says about its sender.
 * unet_neigh decides where endpoints send, so a frame that lies about who
 * sent it must not get in: the sender's hardware address must be the
 * Ethernet source of the frame it came in (a host answering for itself
 * sends from its own MAC; a forged sha naming another host's, or a group,
 * MAC is refused), unicast and non-zero; the sender's protocol address
 * must be a host's: not 0 (an RFC 5227 probe), not 255.255.255.255, not
 * multicast (224.0.0.0/4).  Only what is learnt is judged here: the
 * frame's verdict does not change.
 */
static __always_inline int arp_sender_learnable(const struct ethhdr *eth, const struct unet_arp *a)
{
	if (!mac_equal(a->sha, eth->h_source) || !mac_unicast(a->sha))
		return 0;
	if (!(a->spa[0] | a->spa[1] | a->spa[2] | a->spa[3]))
		return 0;
	if ((a->spa[0] & a->spa[1] & a->spa[2] & a->spa[3]) == 0xff)
		return 0;
	return (a->spa[0] & 0xf0) != 0xe0;
}

/*
 * ARP (l3 just past the Ethernet header) whose target is an address with
 * U-Net UDP ports (unet_udp_addrs):
 *   - the sender's address and MAC go into unet_neigh (as the kernel
 *     learns from requests and replies addressed to it), which is how an
 *     endpoint resolving a peer sees the reply even when the frame itself
 *     goes to the kernel -- if arp_sender_learnable() believes them;
 *   - if the kernel owns the address, the frame is passed: the kernel
 *     answers requests and keeps its own neighbour table;
 *   - else (UNET_UDP_ADDR_ARP) it goes to the endpoint that registered the
 *     address, which answers requests for it; with no socket of that
 *     endpoint on this queue, or if the entry is an earlier owner's of
 *     that endpoint slot (udp_owner_current), it is passed (the kernel
 *     ignores ARP for an address it does not have).
 * All other ARP is the kernel's, untouched.
 */
static __always_inline int arp_rx(struct xdp_md *ctx, struct ethhdr *eth, void *l3, void *data_end)
{
	struct unet_arp *a = l3;
	struct unet_udp_addr_val *av;
	struct unet_neigh_val nv = {};
	__be32 tpa, spa;
	__u16 op;

	if ((void *)(a + 1) > data_end || a->htype != bpf_htons(1) ||
	    a->ptype != bpf_htons(ETH_P_IP) || a->hlen != 6 || a->plen != 4)
		return pass();
	__builtin_memcpy(&tpa, a->tpa, 4);
	av = bpf_map_lookup_elem(&unet_udp_addrs, &tpa);
	if (!av)
		return pass();
	op = bpf_ntohs(a->op);
	__builtin_memcpy(&spa, a->spa, 4);
	if ((op == 1 || op == 2) && arp_sender_learnable(eth, a)) {
		__builtin_memcpy(nv.mac, a->sha, 6);
		nv.updated_ns = bpf_ktime_get_ns();
		bpf_map_update_elem(&unet_neigh, &spa, &nv, BPF_ANY);
	}
	if (!(av->flags & UNET_UDP_ADDR_ARP) || !udp_owner_current(av->endpoint, av->owner_token))
		return pass();
	if (redirect_to(ctx, av->endpoint) != XDP_REDIRECT)
		return pass();
	if_count(UNET_CTR_ARP_DELIVERED);
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_ARP_H */
