/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * xdp_unet.h - U-Net frames (EtherType UNET_ETH_P): demultiplex by tag
 * into the AF_XDP socket of the endpoint that owns the channel.
 *
 * Part of unet_xdp.bpf.c (included after the maps, counters and
 * xdp_common.h).  The wire format and the order of the checks are in
 * docs/wire-format.md:
 *   1. U-Net header truncated -> drop_malformed; version unknown ->
 *      drop_version; len 0 or past the end of the frame -> drop_malformed;
 *   2. dst_tag 0, no channel, or the channel's owner_token is not the
 *      token of the endpoint now in its slot -> drop_unknown_tag;
 *   3. source MAC or src_tag not the channel's peer -> drop_wrong_src
 *      (U-Net's receive-side protection: a process only ever sees frames
 *      from the peer its channel was set up with); for a routable channel
 *      (xdp_chan.h, xdp_chan6.h) the source is the IP address and UDP
 *      port instead; a frame of another kind than its channel's (raw,
 *      UDP/IPv4, UDP/IPv6) -> drop_chan_kind;
 *   4. arrival queue >= UNET_MAX_QUEUES -> drop_queue_range; no socket of
 *      the owning endpoint on the arrival queue -> drop_no_socket;
 *      otherwise redirect into that socket (delivered),
 *   5. unless the test hook unet_faults drops it (drop_injected).
 *
 * Every U-Net frame we refuse is dropped, never passed: the kernel stack
 * has no use for EtherType 0x88B5 and passing would let a frame for a dead
 * endpoint reach packet sockets of other users.
 */
#ifndef UNET_XDP_UNET_H
#define UNET_XDP_UNET_H

static __always_inline struct unet_channel_stats *chan_stats(__u32 tag)
{
	return bpf_map_lookup_elem(&unet_chan_stats, &tag);
}

/*
 * Fault injection (tests only): whether to drop a frame that would be
 * delivered.  One map lookup per delivered frame; with drop_ppm 0 (the
 * default) the random number is not even drawn.  The comparison is on
 * [0, 1000000): ppm 1000000 drops every frame, 0 none.
 */
static __always_inline int fault_drop(void)
{
	__u32 key = 0;
	struct unet_fault_cfg *f = bpf_map_lookup_elem(&unet_faults, &key);

	if (!f || !f->drop_ppm)
		return 0;
	return bpf_get_prandom_u32() % 1000000 < f->drop_ppm;
}

/*
 * Who sent a U-Net header, as the frame around it says: a raw frame's
 * source MAC, or a routable channel's source IP address (addr for IPv4,
 * addr6 pointing at the IPv6 header's for IPv6) and UDP port (mac NULL).
 * Compared with the channel's peer by unet_demux().
 */
struct unet_src {
	const __u8 *mac;
	const __u8 *addr6;
	__be32 addr;
	__be16 port;
};

static __always_inline int unet_demux(struct xdp_md *ctx, struct unet_hdr *uh, void *data_end,
				      const struct unet_src *src);

/* The channel kind (unet_channel_val.flags) a frame from src is for. */
static __always_inline __u32 unet_src_kind(const struct unet_src *src)
{
	if (src->mac)
		return 0;
	return src->addr6 ? UNET_CHAN_F_UDP6 : UNET_CHAN_F_UDP4;
}

/* Whether the frame is of the channel's kind: raw (by MAC) for a raw
 * channel, UDP/IPv4 or UDP/IPv6 for a routable one of that family. */
static __always_inline int unet_src_kind_matches(const struct unet_channel_val *ch,
						 const struct unet_src *src)
{
	return (ch->flags & (UNET_CHAN_F_UDP4 | UNET_CHAN_F_UDP6)) == unet_src_kind(src);
}

/* Protection: the frame comes from the channel's peer -- its MAC for a
 * raw channel; its IP address (all 16 bytes for IPv6) and UDP source
 * port for a routable one (where the MAC is a router's and says
 * nothing). */
static __always_inline int unet_src_is_peer(const struct unet_channel_val *ch,
					    const struct unet_src *src)
{
	__be32 peer;

	if (!unet_src_kind_matches(ch, src))
		return 0;
	if (src->mac)
		return mac_equal(src->mac, ch->peer_mac);
	if (src->port != ch->peer_port)
		return 0;
	if (src->addr6)
		return addr6_equal(src->addr6, ch->peer_addr);
	__builtin_memcpy(&peer, ch->peer_addr, sizeof(peer));
	return src->addr == peer;
}

/* A frame whose EtherType is UNET_ETH_P; uh points just past the Ethernet
 * header (nothing of it checked yet). */
static __always_inline int unet_rx(struct xdp_md *ctx, struct ethhdr *eth, struct unet_hdr *uh,
				   void *data_end)
{
	struct unet_src src = { .mac = eth->h_source };

	return unet_demux(ctx, uh, data_end, &src);
}

/*
 * The U-Net header at uh (nothing of it checked yet), of a raw frame or
 * of a routable channel's UDP datagram (xdp_chan.h): check it, find its
 * channel by tag, check the sender against the channel's peer, deliver.
 */
static __always_inline int unet_demux(struct xdp_md *ctx, struct unet_hdr *uh, void *data_end,
				      const struct unet_src *src)
{
	struct unet_channel_stats *cs;
	struct unet_channel_val *ch;
	struct unet_endpoint_val *ev;
	__u32 tag, slot;
	__u64 end;
	__u16 len;

	/* From here on the frame claims to be U-Net: never pass it. */
	if ((void *)(uh + 1) > data_end)
		return drop(UNET_CTR_DROP_MALFORMED);

	/*
	 * Version before length: the meaning of every other header field
	 * belongs to the version, so a frame of another version is counted
	 * as such even if its len looks wrong to us.
	 */
	if (uh->version != UNET_WIRE_VERSION)
		return drop(UNET_CTR_DROP_VERSION);

	/*
	 * len counts the payload only.  It must be non-zero (an empty message
	 * has no use and would hide a zeroed header) and must fit in the
	 * frame; the frame may be longer (Ethernet pads to 60 bytes), and the
	 * padding is not payload.  The frame may come in pieces (a jumbo
	 * MTU): its whole length is bpf_xdp_get_buff_len(), and the payload
	 * is never read here, only measured (from the frame's start to the
	 * end of the payload: the header sits after Ethernet on a raw frame,
	 * after IP and UDP on a routable channel's).
	 */
	len = bpf_ntohs(uh->len);
	end = (__u64)((void *)(uh + 1) - (void *)(long)ctx->data) + len;
	if (len == 0 || end > bpf_xdp_get_buff_len(ctx))
		return drop(UNET_CTR_DROP_MALFORMED);

	/* Tag 0 is reserved (UNET_TAG_INVALID) and never a channel: reject it
	 * without a lookup so a stray map entry at 0 can never be used. */
	tag = bpf_ntohs(uh->dst_tag);
	if (tag == UNET_TAG_INVALID)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	ch = bpf_map_lookup_elem(&unet_channels, &tag);
	if (!ch)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	/*
	 * The channel must be owned by the endpoint incarnation now holding
	 * its slot: an entry left by a dead owner whose slot another process
	 * has taken since is never delivered to the newcomer, even before
	 * anyone reclaims it.
	 */
	slot = ch->endpoint;
	ev = bpf_map_lookup_elem(&unet_endpoints, &slot);
	if (!ev || ev->token != ch->owner_token)
		return drop(UNET_CTR_DROP_UNKNOWN_TAG);

	cs = chan_stats(tag);

	/*
	 * Protection: the channel was set up (by the administrator or the
	 * library) for one peer MAC and one peer tag.  Anything else is
	 * someone else speaking on this channel, and the owner must not see
	 * it.  This is the check U-Net's interface did on the tag alone.
	 */
	if (!unet_src_is_peer(ch, src)) {
		if (cs)
			cs->drop_wrong_src += 1;
		return drop(unet_src_kind_matches(ch, src) ? UNET_CTR_DROP_WRONG_SRC
							   : UNET_CTR_DROP_CHAN_KIND);
	}
	if (bpf_ntohs(uh->src_tag) != ch->peer_tag) {
		if (cs)
			cs->drop_wrong_src += 1;
		return drop(UNET_CTR_DROP_WRONG_SRC);
	}

	/*
	 * AF_XDP can only take a frame into a socket bound to the queue it
	 * arrived on, so the owning endpoint needs a socket per queue; each
	 * (endpoint, queue) pair has its own XSKMAP slot; queues from
	 * UNET_MAX_QUEUES on have none (drop_queue_range).  On the channel
	 * both count as drop_no_socket.  A full RX ring after this point is
	 * counted by the socket itself (XDP_STATISTICS rx_dropped /
	 * rx_ring_full), not here.
	 */
	if (redirect_to(ctx, slot) != XDP_REDIRECT) {
		if (cs)
			cs->drop_no_socket += 1;
		return drop(no_socket_reason(ctx));
	}

	/* Injected loss comes last, so it only ever removes frames that
	 * would have reached their socket: exactly what a lossy wire does. */
	if (fault_drop())
		return drop(UNET_CTR_DROP_INJECTED);

	if (cs) {
		cs->delivered += 1;
		cs->delivered_bytes += len;
	}
	if_count(UNET_CTR_DELIVERED);
	if (!src->mac)
		if_count(UNET_CTR_CHAN_DELIVERED);
	return XDP_REDIRECT;
}

#endif /* UNET_XDP_UNET_H */
