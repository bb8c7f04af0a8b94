/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_udp.h - IPv4 frames: UDP over U-Net (docs/udp.md).  A datagram for
 * an (address, port) in unet_udp_ports goes to its endpoint; everything
 * else stays with the kernel.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters and
 * xdp_common.h).
 */
#ifndef UNET_XDP_UDP_H
#define UNET_XDP_UDP_H

#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff

/*
 * An IPv4 frame (l3 just past the Ethernet header): ours only if it is UDP
 * to an (address, port) in unet_udp_ports.  Until the port is known to be
 * ours the frame is passed whatever is wrong with it: it may belong to a
 * kernel socket, and the kernel judges (and counts) its own malformed
 * frames.  Once it is ours it is never passed -- no kernel socket waits
 * for it -- with one exception: a port whose endpoint has no socket left
 * on any queue (its owner died, the port is not reclaimed yet) is treated
 * as not ours when it comes to delivering, and the datagram is passed.
 *
 * Fragments: a non-first fragment carries no UDP header, so it cannot be
 * told to be ours and is passed (the kernel's reassembly times it out).  A
 * first fragment whose port is ours is dropped and counted: we do not
 * reassemble (docs/udp.md).  The IP and UDP checksums are checked by the
 * library, which has the whole frame and the socket's policy for partial
 * checksums.
 */
static __always_inline int udp_rx(struct xdp_md *ctx, void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	struct unet_udp_key key = {};
	struct unet_udp_val *v;
	struct udphdr *udp;
	__u32 hlen, tot_len, ulen;
	__u16 frag;
	int group, r;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5 ||
	    ip->protocol != IPPROTO_UDP)
		return pass();
	frag = bpf_ntohs(ip->frag_off);
	if (frag & IP_OFFMASK)
		return pass(); /* no UDP header in it: not provably ours */
	hlen = ip->ihl * 4; /* 20..60: IP options are skipped, not read */
	udp = (void *)ip + hlen;
	/* The ports are the first 4 bytes of the UDP header. */
	if ((void *)udp + 4 > data_end)
		return pass();
	key.addr = ip->daddr;
	key.port = udp->dest;
	v = bpf_map_lookup_elem(&unet_udp_ports, &key);
	if (!v)
		return pass();
	/* A group's members are judged when one is chosen (xdp_group.h). */
	group = v->flags & UNET_PORT_F_GROUP;
	if (!group && !udp_owner_current(v->endpoint, v->owner_token))
		return pass();

	/* From here on the datagram is for a U-Net socket. */
	if (frag & IP_MF)
		return drop(UNET_CTR_DROP_IP_FRAGMENT);
	/* The UDP header is read from the first piece; the datagram may go
	 * on in more pieces (a jumbo MTU): its length is checked against the
	 * whole frame (ip_fits). */
	tot_len = bpf_ntohs(ip->tot_len);
	if ((void *)(udp + 1) > data_end || tot_len < hlen + sizeof(*udp) ||
	    !ip_fits(ctx, l3, tot_len))
		return drop(UNET_CTR_DROP_IP_MALFORMED);
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > tot_len - hlen)
		return drop(UNET_CTR_DROP_IP_MALFORMED);

	/* A connected socket hears only its peer, as a connected kernel UDP
	 * socket does; the library checks again. */
	if ((v->remote_addr && v->remote_addr != ip->saddr) ||
	    (v->remote_port && v->remote_port != udp->source)) {
		__sync_fetch_and_add(&v->drop_filter, 1);
		return drop(UNET_CTR_DROP_UDP_FILTER);
	}
	/* A dead owner's port is the kernel's again (port_redirect). */
	if (group)
		r = group_port_redirect(ctx, key.addr, key.port, IPPROTO_UDP, ip->saddr,
					udp->source, &v->drop_no_socket);
	else
		r = port_redirect(ctx, v->endpoint, &v->drop_no_socket);
	if (r != XDP_REDIRECT)
		return r;
	__sync_fetch_and_add(&v->delivered, 1);
	__sync_fetch_and_add(&v->delivered_bytes, ulen - sizeof(*udp));
	if_count(UNET_CTR_UDP_DELIVERED);
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_UDP_H */
