/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_common.h - helpers every protocol handler of the XDP program uses.
 *
 * Part of one BPF object: included by unet_xdp.bpf.c after its maps and
 * counter helpers (if_count, pass, drop), which it uses; never compiled
 * on its own.  Everything here is static __always_inline: the program is
 * one function to the verifier.
 */
#ifndef UNET_XDP_COMMON_H
#define UNET_XDP_COMMON_H

/* 6-byte compare without memcmp (not available to BPF); byte loads keep it
 * independent of the alignment of the packet and the map value. */
static __always_inline int mac_equal(const __u8 *a, const __u8 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) |
		(a[4] ^ b[4]) | (a[5] ^ b[5])) == 0;
}

/* 16-byte compare without memcmp; byte loads, as mac_equal(): the
 * addresses in the packet are only 2-byte aligned (the IPv6 header starts
 * 14 bytes into the frame).  IPv6 UDP and routable channels both. */
static __always_inline int addr6_equal(const __u8 *a, const __u8 *b)
{
	__u32 d = 0;

	for (int i = 0; i < 16; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* A unicast, non-zero MAC address: what a host's own address can be (the
 * group bit, bit 0 of the first byte, is set in multicast and broadcast). */
static __always_inline int mac_unicast(const __u8 *a)
{
	return !(a[0] & 1) && (a[0] | a[1] | a[2] | a[3] | a[4] | a[5]) != 0;
}

/* Redirect into endpoint's socket on the arrival queue; anything but
 * XDP_REDIRECT means it has none there (or the queue or endpoint is out of
 * the XSKMAP's range: the bounds keep the index inside the map). */
static __always_inline long redirect_to(struct xdp_md *ctx, __u32 endpoint)
{
	__u32 queue = ctx->rx_queue_index;

	if (queue >= UNET_MAX_QUEUES || endpoint >= UNET_MAX_ENDPOINTS)
		return XDP_ABORTED;
	/*
	 * The low bits of flags are the action returned when the slot is
	 * empty.  We ask for XDP_ABORTED and callers treat any answer but
	 * XDP_REDIRECT as "no socket", so an empty slot is counted and
	 * dropped (or passed) by them instead of showing up as an
	 * exception.  Returning something else after a successful call is
	 * fine: the target is only acted on for XDP_REDIRECT.
	 */
	return bpf_redirect_map(&unet_xsks, UNET_XSK_INDEX(endpoint, queue), XDP_ABORTED);
}

/*
 * The counter for a frame that redirect_to() could not deliver to a live
 * endpoint: a queue >= UNET_MAX_QUEUES has no XSKMAP slot, so no endpoint
 * can ever take frames arriving there (a device with more queues needs
 * its traffic steered to the first UNET_MAX_QUEUES) -- counted apart from
 * an endpoint that just did not bind the queue.
 */
static __always_inline __u32 no_socket_reason(struct xdp_md *ctx)
{
	return ctx->rx_queue_index >= UNET_MAX_QUEUES ? UNET_CTR_DROP_QUEUE_RANGE
						      : UNET_CTR_DROP_NO_SOCKET;
}

/*
 * Whether endpoint has an AF_XDP socket on any queue.  The kernel takes a
 * socket out of every XSKMAP slot it is in when it is closed, however its
 * owner died, and an XSKMAP lookup from XDP returns the socket or NULL:
 * no socket anywhere means no process can ever read this endpoint's
 * frames until someone reclaims the slot or takes the entry over.  At most
 * UNET_MAX_QUEUES lookups, and only on the path where the redirect failed.
 */
static __always_inline int endpoint_has_socket(__u32 endpoint)
{
	if (endpoint >= UNET_MAX_ENDPOINTS)
		return 0;
	for (__u32 q = 0; q < UNET_MAX_QUEUES; q++) {
		__u32 idx = UNET_XSK_INDEX(endpoint, q);

		if (bpf_map_lookup_elem(&unet_xsks, &idx))
			return 1;
	}
	return 0;
}

/*
 * Hand a frame for one of endpoint's ports (UDP or TCP, IPv4 or IPv6) to
 * its socket on the arrival queue: XDP_REDIRECT.  Otherwise, an endpoint
 * with no socket anywhere is a dead owner whose port nobody has reclaimed
 * yet: no process will ever read the frame and a kernel socket may be
 * waiting for the port -- pass, as if the entry were gone.  An owner with
 * sockets, but not on this queue, is alive: its port is not the kernel's,
 * drop and count it in *drop_no_socket (the entry's counter), and under
 * drop_queue_range if no socket can be on that queue.
 */
static __always_inline int port_redirect(struct xdp_md *ctx, __u32 endpoint,
					 __u64 *drop_no_socket)
{
	if (redirect_to(ctx, endpoint) == XDP_REDIRECT)
		return XDP_REDIRECT;
	if (!endpoint_has_socket(endpoint))
		return pass();
	__sync_fetch_and_add(drop_no_socket, 1);
	return drop(no_socket_reason(ctx));
}

/*
 * Whether an IPv4 datagram of tot_len bytes starting at l3 lies inside
 * the frame, which may come in pieces (a jumbo MTU: ctx->data ..
 * data_end is only the first piece).  Measured against the whole
 * frame, bpf_xdp_get_buff_len(), and never read past the first piece:
 * the headers the handlers read must sit in the first piece (the
 * verifier checks every read against data_end), and the payload is the
 * library's to check (it gets the whole frame, reassembled).  A header
 * that is not all in the first piece is taken as truncated: a kernel or
 * NIC puts at least the first 1500 or so bytes in the first piece, so
 * no honest sender's IP or transport header ever straddles two.
 */
static __always_inline int ip_fits(struct xdp_md *ctx, void *l3, __u32 tot_len)
{
	__u64 start = (__u64)(l3 - (void *)(long)ctx->data);

	return start + tot_len <= bpf_xdp_get_buff_len(ctx);
}

/*
 * Whether a port or address entry (UDP, TCP, a group's member) belongs
 * to the endpoint incarnation now in its slot (owner_token == unet_endpoint_val.token, non-zero).  An
 * entry left by a dead owner whose slot another process has taken since
 * is not the newcomer's: treated as a dead owner's (passed), as channels
 * are (xdp_unet.h), until someone reclaims or takes it over.
 */
static __always_inline int udp_owner_current(__u32 slot, __u64 owner_token)
{
	struct unet_endpoint_val *ev = bpf_map_lookup_elem(&unet_endpoints, &slot);

	return ev && owner_token && ev->token == owner_token;
}

#endif /* UNET_XDP_COMMON_H */
