/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_tcp.h - IPv4 frames: TCP over U-Net (docs/tcp.md).  A segment for an
 * (address, port) in unet_tcp_ports goes to its endpoint, where lwIP
 * takes it; every other segment stays with the kernel.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters,
 * xdp_common.h, xdp_group.h, and xdp_unet.h for fault_drop).
 */
#ifndef UNET_XDP_TCP_H
#define UNET_XDP_TCP_H

#include <linux/tcp.h>

/*
 * A segment redirected to its port's owner (IPv4 or IPv6): the fault hook
 * may still drop it; else it is counted as delivered, bytes of IP payload.
 */
static __always_inline int tcp_delivered(struct unet_tcp_val *v, __u32 bytes)
{
	if (fault_drop()) {
		__sync_fetch_and_add(&v->drop_injected, 1);
		return drop(UNET_CTR_DROP_INJECTED);
	}
	__sync_fetch_and_add(&v->delivered, 1);
	__sync_fetch_and_add(&v->delivered_bytes, bytes);
	if_count(UNET_CTR_TCP_DELIVERED);
	return XDP_REDIRECT;
}

/*
 * An IPv4 frame whose protocol is TCP (l3 just past the Ethernet header;
 * the caller checked that the fixed IP header is in the frame).  As for
 * UDP: until the port is known to be ours the frame is passed whatever
 * is wrong with it (it may be a kernel socket's); once it is ours it is
 * never passed, except when the owning endpoint has no socket on any
 * queue (its owner died, the entry is not reclaimed yet): then the kernel
 * gets it and answers with a reset, as for any closed port.
 *
 * Fragments: TCP senders set DF and use path MTU discovery, so IPv4
 * fragments of a segment are not expected; a non-first fragment carries
 * no ports and is passed, a first fragment for our port dropped as
 * malformed (lwIP could reassemble, but the rest of the datagram would
 * have gone to the kernel).  Checksums are checked by lwIP.
 *
 * The fault hook (unet_faults) applies here, as to U-Net frames, so that
 * TCP's loss recovery can be tested against an exact loss rate.
 */
static __always_inline int tcp_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct unet_tcp_key key = {};
	struct unet_tcp_val *v;
	struct tcphdr *tcp;
	__u32 hlen, tot_len, doff;
	__u16 frag;
	int group, r;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5)
		return pass();
	frag = bpf_ntohs(ip->frag_off);
	if (frag & IP_OFFMASK)
		return pass(); /* no TCP header in it: not provably ours */
	hlen = ip->ihl * 4;
	tcp = (void *)ip + hlen;
	if ((void *)tcp + 4 > data_end)
		return pass();
	key.addr = ip->daddr;
	key.port = tcp->dest;
	v = bpf_map_lookup_elem(&unet_tcp_ports, &key);
	if (!v)
		return pass();
	/* A listener group's members are judged when one is chosen
	 * (xdp_group.h): the connection's segments follow its SYN's. */
	group = v->flags & UNET_PORT_F_GROUP;
	if (!group && !udp_owner_current(v->endpoint, v->owner_token))
		return pass();

	/* From here on the segment is for a U-Net TCP port. */
	/* The TCP header is read from the first piece; the segment may go
	 * on in more pieces (a jumbo MTU, or a peer's GSO super-segment in
	 * skb mode): its length is checked against the whole frame
	 * (ip_fits).  Options are not read here. */
	tot_len = bpf_ntohs(ip->tot_len);
	if ((frag & IP_MF) || (void *)(tcp + 1) > data_end ||
	    tot_len < hlen + sizeof(*tcp) || !ip_fits(ctx, l3, tot_len))
		return drop(UNET_CTR_DROP_TCP_MALFORMED);
	doff = tcp->doff * 4;
	if (doff < sizeof(*tcp) || doff > tot_len - hlen)
		return drop(UNET_CTR_DROP_TCP_MALFORMED);
	if (group)
		r = group_port_redirect(ctx, key.addr, key.port, IPPROTO_TCP, ip->saddr,
					tcp->source, &v->drop_no_socket);
	else
		r = port_redirect(ctx, v->endpoint, &v->drop_no_socket);
	if (r != XDP_REDIRECT)
		return r;
	return tcp_delivered(v, tot_len - hlen);
}

#endif /* UNET_XDP_TCP_H */
