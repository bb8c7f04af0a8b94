/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_chan.h - routable channels: U-Net frames inside UDP/IPv4, sent to
 * the interface's channel port (unet_chan_cfg, UNET_CHAN_PORT_DEFAULT).
 *
 * Part of unet_xdp.bpf.c (included after xdp_unet.h, whose unet_demux()
 * does the tag lookup, the protection check and the delivery, xdp_udp.h,
 * whose IP headers and fragment bits it uses, and xdp_dest.h).  The
 * encapsulation and the order of the checks are in docs/wire-format.md:
 *
 *   0. not IPv4/UDP to the channel port (read from a UDP header that
 *      lies inside the frame) -> not ours: chan_rx() returns CHAN_NOT_OURS
 *      and the caller goes on to TCP and UDP over U-Net.  A non-first
 *      fragment carries no UDP header and is never ours.
 *   0b. a destination address this host does not keep (xdp_dest.h:
 *      transit through a host that forwards, multicast, broadcast) ->
 *      passed untouched, counted as pass;
 *   1. IP options (ihl != 5), total length shorter than the headers or
 *      past the end of the frame -> drop_chan_ip;
 *   2. a first fragment (MF set) -> drop_chan_frag: we never send one
 *      and do not reassemble;
 *   3. UDP length not the IP payload's, or the U-Net header's len not
 *      the rest of the datagram -> drop_chan_udplen (a datagram too short
 *      for the U-Net header -> drop_malformed);
 *   4. a non-zero UDP checksum -> drop_chan_csum (we send 0, which IPv4
 *      allows; verifying a sum over the payload in XDP costs a pass over
 *      every byte, and accepting one unverified would claim an integrity
 *      nothing checked: the Ethernet FCS covers each hop, as for raw
 *      frames);
 *   5. the U-Net header inside, as for raw frames (unet_demux), but the
 *      sender checked is the IPv4 source address and UDP source port.
 *
 * Everything to the channel port for this host is dropped once it is
 * ours, never passed, for the reason raw U-Net frames are: a kernel socket that bound
 * the port must not see frames meant for endpoints (dead or alive).
 */
#ifndef UNET_XDP_CHAN_H
#define UNET_XDP_CHAN_H

#define CHAN_NOT_OURS (-1)

/* The interface's channel port, network order. */
static __always_inline __be16 chan_port(void)
{
	__u32 key = 0;
	struct unet_chan_cfg *c = bpf_map_lookup_elem(&unet_chan_cfg, &key);

	return bpf_htons(c && c->udp_port ? c->udp_port : UNET_CHAN_PORT_DEFAULT);
}

/* An IPv4 frame; l3 points just past the Ethernet header (nothing of it
 * checked).  Returns an XDP verdict, or CHAN_NOT_OURS. */
static __always_inline int chan_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct unet_src src = {};
	struct unet_hdr *uh;
	struct udphdr *udp;
	__u32 hlen, tot_len;
	void *ip_end;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP || (bpf_ntohs(ip->frag_off) & IP_OFFMASK))
		return CHAN_NOT_OURS;
	hlen = ip->ihl * 4;
	udp = (void *)ip + hlen;
	if ((void *)udp + 4 > data_end || udp->dest != chan_port())
		return CHAN_NOT_OURS;
	/* Another host's (a host that forwards): the kernel's, untouched. */
	if (!dest_ours4(ctx, ip, udp))
		return pass();

	/* Ours from here on: dropped unless delivered. */
	if (hlen != UNET_IP_HLEN)
		return drop(UNET_CTR_DROP_CHAN_IP);
	tot_len = bpf_ntohs(ip->tot_len);
	ip_end = l3 + tot_len;
	if (tot_len < UNET_IP_HLEN + UNET_UDP_HLEN || ip_end > data_end ||
	    (void *)(udp + 1) > data_end)
		return drop(UNET_CTR_DROP_CHAN_IP);
	if (bpf_ntohs(ip->frag_off) & IP_MF)
		return drop(UNET_CTR_DROP_CHAN_FRAG);
	if (bpf_ntohs(udp->len) != tot_len - UNET_IP_HLEN)
		return drop(UNET_CTR_DROP_CHAN_UDPLEN);
	if (udp->check)
		return drop(UNET_CTR_DROP_CHAN_CSUM);
	/*
	 * The U-Net header must fill the datagram exactly: its len is the
	 * rest of the UDP payload, so Ethernet padding after the datagram is
	 * never taken for payload.  (unet_demux checks against the frame's
	 * end, the only bound the verifier lets packet reads rest on.)
	 */
	uh = (struct unet_hdr *)(udp + 1);
	if ((void *)(uh + 1) > data_end)
		return drop(UNET_CTR_DROP_MALFORMED);
	if ((__u32)bpf_ntohs(uh->len) + UNET_UDP_HLEN + UNET_HDR_LEN != tot_len - UNET_IP_HLEN)
		return drop(UNET_CTR_DROP_CHAN_UDPLEN);

	src.addr = ip->saddr;
	src.port = udp->source;
	return unet_demux(ctx, uh, data_end, &src);
}

#endif /* UNET_XDP_CHAN_H */
