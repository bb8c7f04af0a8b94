/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_tcp6.h - IPv6 frames: TCP over U-Net (docs/tcp.md, "IPv6").  A
 * segment for an (address, port) in unet_tcp6_ports goes to its
 * endpoint, where lwIP takes it; every other IPv6 frame goes on to
 * udp6_rx() (UDP, neighbour solicitations, the kernel's).
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters,
 * xdp_common.h, xdp_unet.h for fault_drop, xdp_udp.h for
 * udp_owner_current and xdp_udp6.h).
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
	if (redirect_to(ctx, v->endpoint) != XDP_REDIRECT) {
		if (!endpoint_has_socket(v->endpoint))
			return pass();
		__sync_fetch_and_add(&v->drop_no_socket, 1);
		return drop(no_socket_reason(ctx));
	}
	if (fault_drop()) {
		__sync_fetch_and_add(&v->drop_injected, 1);
		return drop(UNET_CTR_DROP_INJECTED);
	}
	__sync_fetch_and_add(&v->delivered, 1);
	__sync_fetch_and_add(&v->delivered_bytes, plen);
	if_count(UNET_CTR_TCP_DELIVERED);
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_TCP6_H */
