/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rx_frame.c - a received frame in one piece of memory turned into a
 * message (or given to the layer that claims it): the checks every
 * received frame passes, whether it came in one chunk (unet_take_rx,
 * from datapath.c and pieces.c) or was reassembled from pieces into a
 * slot (pieces.c).  Calls neither of those files.
 */
#include <string.h>

#include "core/layer.h"
#include "core/objects.h"

/* A frame a layer above the core may want (EtherType not U-Net's): offer
 * it to each attached layer in turn. */
static bool take_layer_frame(struct unet_endpoint *ep, uint16_t proto, uint8_t *frame,
			     uint32_t len, struct unet_recv_desc *desc)
{
	for (unsigned int i = 0; i < ep->nlayers; i++) {
		const struct unet_layer *l = ep->layers[i].layer;

		memset(desc, 0, sizeof(*desc));
		switch (l->rx(ep->layers[i].state, proto, frame, len, desc)) {
		case UNET_LAYER_NOT_MINE:
			continue;
		case UNET_LAYER_DELIVER:
			/* The layer promised data inside the frame: hold it to
			 * that, as to everything else. */
			if ((uint8_t *)desc->data < frame ||
			    (uint8_t *)desc->data + desc->len > frame + len)
				return false;
			desc->layer = l;
			return true;
		case UNET_LAYER_CONSUMED:
			return false;
		}
	}
	ep->rx_unknown_channel++;
	return false;
}

/* The destination port of a UDP/IPv4 or UDP/IPv6 frame (IPv6: UDP right
 * after the fixed header), or -1: not such a frame, or too short. */
static int frame_udp_dport(const uint8_t *frame, uint32_t flen)
{
	const uint8_t *ip = frame + UNET_ETH_HLEN, *udp;

	if (frame[12] == 0x08 && frame[13] == 0x00) {
		if (flen < UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN || (ip[0] >> 4) != 4 ||
		    ip[9] != 17 || flen < UNET_ETH_HLEN + (ip[0] & 0xfu) * 4u + UNET_UDP_HLEN)
			return -1;
		udp = ip + (ip[0] & 0xfu) * 4u;
	} else if (frame[12] == 0x86 && frame[13] == 0xdd) {
		if (flen < UNET_ETH_HLEN + UNET_IP6_HLEN + UNET_UDP_HLEN || (ip[0] >> 4) != 6 ||
		    ip[6] != 17)
			return -1;
		udp = ip + UNET_IP6_HLEN;
	} else {
		return -1;
	}
	return udp[2] << 8 | udp[3];
}

/* Whether w's source address is the routable channel ch's peer. */
static bool chan_from_peer(const struct unet_channel *ch, const struct unet_wire_udp *w)
{
	if (w->v6 != ch->w.v6)
		return false;
	return w->v6 ? !memcmp(w->saddr6, ch->w.daddr6, 16) : w->saddr == ch->w.daddr;
}

/*
 * A routable channel's frame (U-Net inside UDP/IPv4 or UDP/IPv6 to the
 * channel port), checked again as bpf/xdp_chan.h and xdp_chan6.h do (and
 * over IPv6 its UDP checksum verified, which XDP does not): the sender
 * must be the channel's peer address and port, the tags its own, the
 * channel of the frame's family.  Returns 1 with desc filled, 0
 * (refused, counted), or -1: not to the channel port (for the layers).
 */
static int take_chan_frame(struct unet_endpoint *ep, uint8_t *frame, uint32_t flen,
			   struct unet_recv_desc *desc)
{
	struct unet_channel *ch;
	struct unet_wire_udp w;
	uint32_t off, len;
	int port;

	/* Only frames to the channel port are ours; a UDP layer never gets
	 * them (the XDP program never gives them to it either). */
	if (!ep->chan_port)
		return -1;
	port = frame_udp_dport(frame, flen);
	if (port != ep->chan_port)
		return -1;
	if (unet_wire_udp_parse(frame, flen, (uint16_t)port, &w, &off, &len)) {
		ep->rx_malformed++;
		return 0;
	}
	ch = ep->by_tag[w.dst_tag];
	if (!ch || !ch->udp || w.src_tag != ch->peer_tag || !chan_from_peer(ch, &w) ||
	    w.sport != ch->peer_port || len > unet_channel_udp_rx_max(ch)) {
		ep->rx_unknown_channel++;
		return 0;
	}
	memset(desc, 0, sizeof(*desc));
	desc->channel = ch;
	desc->data = frame + off;
	desc->len = len;
	return 1;
}

/*
 * A whole frame of len bytes in contiguous memory (a chunk, or a
 * reassembly slot), checked and turned into a message: a raw U-Net
 * message, a routable channel's, or a layer's.  Everything in it is
 * checked again here, whatever the XDP program let through: a U-Net
 * payload is at most max_payload (veth, for one, accepts frames of
 * MTU + 18 bytes), and the tag is a channel this endpoint has open with
 * the right peer tag.  True with *desc filled (all but buf); false:
 * refused or consumed, counted.
 */
bool unet_take_frame(struct unet_endpoint *ep, uint8_t *frame, uint32_t flen,
		     struct unet_recv_desc *desc)
{
	uint16_t dst_tag, src_tag, proto;
	struct unet_channel *ch;
	uint32_t off, len;

	if (flen < UNET_ETH_HLEN)
		return false;
	proto = (uint16_t)(frame[12] << 8 | frame[13]);
	if (proto != UNET_ETH_P) {
		int r = take_chan_frame(ep, frame, flen, desc);

		return r < 0 ? take_layer_frame(ep, proto, frame, flen, desc) : r;
	}
	if (unet_wire_parse(frame, flen, &dst_tag, &src_tag, &off, &len) ||
	    len > ep->max_payload) {
		ep->rx_malformed++;
		return false;
	}
	ch = ep->by_tag[dst_tag];
	if (!ch || ch->udp || src_tag != ch->peer_tag) {
		ep->rx_unknown_channel++;
		return false;
	}
	memset(desc, 0, sizeof(*desc));
	desc->channel = ch;
	desc->data = frame + off;
	desc->len = len;
	return true;
}

bool unet_take_rx(struct unet_endpoint *ep, const struct xdp_desc *xd, struct unet_recv_desc *desc)
{
	uint64_t base = xd->addr & ~(uint64_t)(ep->frame_size - 1);

	/* Only a frame we put on a FILL ring: not one on its way out (a
	 * receive descriptor from a buggy or hostile ring writer, such as
	 * a daemon serving an emulated endpoint, naming a frame we are
	 * sending, which a layer may keep for a retransmission). */
	if (unet_pool_move(&ep->pool, base, UNET_FRAME_FILL, UNET_FRAME_RX))
		return false; /* not a frame we gave the kernel to fill: ignore it */
	/* The frame lies inside the buffer the kernel was given; only then
	 * is its address even added to the segment's. */
	if ((xd->addr & (ep->frame_size - 1)) + xd->len <= ep->frame_size &&
	    unet_take_frame(ep, (uint8_t *)ep->segment + xd->addr, xd->len, desc)) {
		desc->buf = base;
		return true;
	}
	unet_pool_put(&ep->pool, base, UNET_FRAME_RX);
	return false;
}
