/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pieces.c - messages larger than one chunk of the segment (AF_XDP
 * multi-buffer, docs/platform.md "Frames larger than a chunk").
 *
 * Receive: the kernel writes such a frame as several descriptors, each in
 * its own chunk, all but the last flagged XDP_PKT_CONTD.  The application
 * gets ONE message in contiguous memory: the pieces are copied, in order,
 * into a reassembly slot (a region of the segment the kernel never fills)
 * and each piece's chunk goes straight back to the pool.  One copy per
 * jumbo frame costs less than what it saves (one descriptor and one
 * wake-up per 9000 bytes instead of per 1500), and every layer above
 * keeps reading a message as one pointer and one length.
 *
 * The pieces are input like any other (the ring's writer may be wrong):
 * each lies inside a chunk we gave the kernel to fill; a frame has at most
 * UNET_MAX_PIECES pieces and at most a slot's bytes; a refused frame is
 * dropped to its last piece (the first one without XDP_PKT_CONTD),
 * counted once in rx_bad_pieces, and every chunk of it goes back to the
 * pool.  The whole frame is then parsed as a single-chunk frame is.
 *
 * Send: a message larger than one send buffer is written into as many
 * buffers as it needs and queued as one chain of descriptors, from one
 * span (unet_channel__send_copy) or two (a layer's header and its data,
 * unet_layer_queue_pieces: Active Messages' frames at a jumbo MTU).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/objects.h"

int unet_jumbo_init(struct unet_jumbo *j, uint64_t base, uint32_t slot_size, uint32_t nslots)
{
	j->free = calloc(nslots, sizeof(*j->free));
	j->held = calloc(nslots, sizeof(*j->held));
	if (!j->free || !j->held) {
		unet_jumbo_fini(j);
		return -ENOMEM;
	}
	j->base = base;
	j->slot_size = slot_size;
	j->nslots = nslots;
	/* Lowest slot on top: handed out first. */
	for (uint32_t i = 0; i < nslots; i++)
		j->free[i] = nslots - 1 - i;
	j->nfree = nslots;
	j->max_frame = slot_size - UNET_ALIGN_PAD;
	return 0;
}

void unet_jumbo_fini(struct unet_jumbo *j)
{
	free(j->free);
	free(j->held);
	j->free = NULL;
	j->held = NULL;
	j->nslots = j->nfree = 0;
}

/* The slot buf names (its first byte), or -1. */
static int64_t slot_of(const struct unet_jumbo *j, uint64_t buf)
{
	uint64_t k;

	if (!j->nslots || buf < j->base || (buf - j->base) % j->slot_size)
		return -1;
	k = (buf - j->base) / j->slot_size;
	return k < j->nslots ? (int64_t)k : -1;
}

bool unet_jumbo_holds(const struct unet_jumbo *j, uint64_t buf)
{
	int64_t k = slot_of(j, buf);

	return k >= 0 && j->held[k];
}

int unet_jumbo_put(struct unet_jumbo *j, uint64_t buf)
{
	int64_t k = slot_of(j, buf);

	if (k < 0 || !j->held[k])
		return -EINVAL;
	j->held[k] = 0;
	j->free[j->nfree++] = (uint32_t)k;
	return 0;
}

static uint8_t *slot_addr(struct unet_endpoint *ep, uint32_t slot)
{
	return (uint8_t *)ep->segment + ep->jumbo.base + (uint64_t)slot * ep->jumbo.slot_size;
}

/* Drop the frame in progress (its slot back, not held) and, unless this
 * was its last piece, the pieces still to come. */
static void refuse_frame(struct unet_endpoint *ep, struct unet_rx_asm *a, bool more)
{
	if (a->active)
		ep->jumbo.free[ep->jumbo.nfree++] = a->slot;
	a->active = false;
	a->discard = more;
}

/* The assembled frame in slot a->slot, a->len bytes, as a message. */
static bool deliver(struct unet_endpoint *ep, struct unet_rx_asm *a, struct unet_recv_desc *desc)
{
	uint8_t *frame = slot_addr(ep, a->slot) + UNET_ALIGN_PAD;
	uint16_t dst_tag, src_tag;
	struct unet_channel *ch;
	uint32_t off, len;

	if (a->len < UNET_ETH_HLEN || (uint16_t)(frame[12] << 8 | frame[13]) != UNET_ETH_P) {
		/* No layer above takes frames in pieces yet: their XDP
		 * handlers only pass what fits in the first piece. */
		ep->rx_unknown_channel++;
		goto drop;
	}
	if (unet_wire_parse(frame, a->len, &dst_tag, &src_tag, &off, &len) ||
	    len > ep->max_payload) {
		ep->rx_malformed++;
		goto drop;
	}
	ch = ep->by_tag[dst_tag];
	/* A raw frame (the only kind that comes in pieces yet) for a
	 * routable channel is not the channel's, as unet_take_rx says for
	 * one in one piece. */
	if (!ch || ch->udp || src_tag != ch->peer_tag) {
		ep->rx_unknown_channel++;
		goto drop;
	}
	memset(desc, 0, sizeof(*desc));
	desc->channel = ch;
	desc->data = frame + off;
	desc->len = len;
	desc->buf = ep->jumbo.base + (uint64_t)a->slot * ep->jumbo.slot_size;
	ep->jumbo.held[a->slot] = 1;
	a->active = false;
	return true;
drop:
	refuse_frame(ep, a, false);
	return false;
}

bool unet_take_rx_desc(struct unet_endpoint *ep, struct unet_rx_asm *a,
		       const struct xdp_desc *xd, struct unet_recv_desc *desc)
{
	bool more = xd->options & XDP_PKT_CONTD;
	uint64_t base = xd->addr & ~(uint64_t)(ep->frame_size - 1);
	uint32_t len = xd->len;

	if (!more && !a->active && !a->discard)
		return unet_take_rx(ep, xd, desc);
	/* A piece: of a frame in progress, or the first of one. */
	if (unet_pool_move(&ep->pool, base, UNET_FRAME_FILL, UNET_FRAME_RX)) {
		/* Not a chunk we gave the kernel to fill: the frame it
		 * claims to be part of is not whole. */
		if (!a->discard)
			ep->rx_bad_pieces++;
		refuse_frame(ep, a, more);
		return false;
	}
	if (a->discard) {
		unet_pool_put(&ep->pool, base, UNET_FRAME_RX);
		a->discard = more;
		return false;
	}
	if ((xd->addr & (ep->frame_size - 1)) + len > ep->frame_size || !ep->jumbo.sg ||
	    (a->active && (a->pieces >= UNET_MAX_PIECES || a->len + len > ep->jumbo.max_frame)) ||
	    (!a->active && len > ep->jumbo.max_frame)) {
		ep->rx_bad_pieces++;
		unet_pool_put(&ep->pool, base, UNET_FRAME_RX);
		refuse_frame(ep, a, more);
		return false;
	}
	if (!a->active) {
		if (!ep->jumbo.nfree) {
			/* The application holds every slot. */
			ep->rx_no_jumbo_slot++;
			unet_pool_put(&ep->pool, base, UNET_FRAME_RX);
			refuse_frame(ep, a, more);
			return false;
		}
		a->slot = ep->jumbo.free[--ep->jumbo.nfree];
		a->active = true;
		a->len = 0;
		a->pieces = 0;
	}
	/* Checked above: the piece lies in its chunk, the slot has room. */
	memcpy(slot_addr(ep, a->slot) + UNET_ALIGN_PAD + a->len, (uint8_t *)ep->segment + xd->addr,
	       len);
	a->len += len;
	a->pieces++;
	unet_pool_put(&ep->pool, base, UNET_FRAME_RX);
	if (more)
		return false;
	return deliver(ep, a, desc);
}

/* Bytes of frame one send piece carries: a buffer less the kernel's
 * headroom (as for a single-chunk send) and our alignment pad. */
static uint32_t piece_room(const struct unet_endpoint *ep)
{
	return ep->frame_size - XDP_PACKET_HEADROOM - UNET_ALIGN_PAD;
}

/* Copy n bytes of the message that starts at byte at, where the message
 * is hdr (hlen bytes) followed by data. */
static void copy_spans(uint8_t *to, uint32_t at, uint32_t n, const uint8_t *hdr, uint32_t hlen,
		       const uint8_t *data)
{
	if (at < hlen) {
		uint32_t h = hlen - at < n ? hlen - at : n;

		memcpy(to, hdr + at, h);
		to += h;
		at += h;
		n -= h;
	}
	if (n)
		memcpy(to, data + (at - hlen), n);
}

/* The message of hlen + dlen bytes (hdr, then data) on ch as one chain of
 * buffers, no kick. */
static int queue_pieces(struct unet_channel *ch, const void *hdr, uint32_t hlen, const void *data,
			uint32_t dlen)
{
	struct unet_endpoint *ep = ch->ep;
	struct unet_queue *q = &ep->q[ch->txq];
	uint32_t room = piece_room(ep), len = hlen + dlen, flen, n, idx, done = 0;
	uint64_t bufs[UNET_MAX_PIECES];
	uint8_t *first;

	/* A routable channel's frame is one buffer (unet_channel__max_payload). */
	if (ch->udp || !ep->jumbo.sg || hlen > UINT32_MAX - dlen || len > ep->max_payload)
		return -EMSGSIZE;
	flen = UNET_PAYLOAD_OFF + len;
	n = (flen + room - 1) / room;
	if (n > UNET_MAX_PIECES)
		return -EMSGSIZE;
	for (uint32_t i = 0; i < n; i++) {
		bufs[i] = unet_pool_get(&ep->pool, UNET_FRAME_APP);
		if (bufs[i] == UNET_NO_BUF) {
			unet_endpoint__complete(ep);
			bufs[i] = unet_pool_get(&ep->pool, UNET_FRAME_APP);
		}
		if (bufs[i] == UNET_NO_BUF) {
			while (i--)
				unet_pool_put(&ep->pool, bufs[i], UNET_FRAME_APP);
			return -EAGAIN;
		}
	}
	/* The whole chain or nothing: the kernel takes a frame's pieces
	 * only as consecutive descriptors. */
	if (xsk_ring_prod__reserve(&q->tx, n, &idx) != n) {
		unet_endpoint__complete(ep);
		if (xsk_ring_prod__reserve(&q->tx, n, &idx) != n) {
			for (uint32_t i = 0; i < n; i++)
				unet_pool_put(&ep->pool, bufs[i], UNET_FRAME_APP);
			return -EAGAIN;
		}
	}
	first = (uint8_t *)ep->segment + bufs[0] + UNET_ALIGN_PAD;
	unet_wire_build(first, ch->peer_mac, ep->mac, ch->peer_tag, ch->tag, len);
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *xd = xsk_ring_prod__tx_desc(&q->tx, idx + i);
		uint32_t hdr_room = i ? 0 : UNET_PAYLOAD_OFF;
		uint32_t take = len - done < room - hdr_room ? len - done : room - hdr_room;

		copy_spans((uint8_t *)ep->segment + bufs[i] + UNET_ALIGN_PAD + hdr_room, done, take,
			   hdr, hlen, data);
		done += take;
		xd->addr = bufs[i] + UNET_ALIGN_PAD;
		xd->len = hdr_room + take;
		xd->options = i + 1 < n ? XDP_PKT_CONTD : 0;
		unet_pool_move(&ep->pool, bufs[i], UNET_FRAME_APP, UNET_FRAME_TX);
	}
	xsk_ring_prod__submit(&q->tx, n);
	q->tx_pending += n;
	return 0;
}

uint32_t unet_layer_msg_pieces(const struct unet_endpoint *ep, uint32_t len)
{
	uint32_t room = piece_room(ep);

	if (len <= ep->buf_payload)
		return 1;
	return (UNET_PAYLOAD_OFF + len + room - 1) / room;
}

int unet_send_pieces(struct unet_channel *ch, const void *data, uint32_t len)
{
	return queue_pieces(ch, data, len, NULL, 0);
}

int unet_layer_queue_pieces(struct unet_channel *ch, const void *hdr, uint32_t hlen,
			    const void *data, uint32_t dlen)
{
	int err;

	if (!ch || (!hdr && hlen) || (!data && dlen))
		return -EINVAL;
	if (ch->ep->dead)
		return ch->ep->dead;
	err = queue_pieces(ch, hdr, hlen, data, dlen);
	if (!err) {
		ch->ep->tx_msgs++;
		ch->ep->q[ch->txq].tx_owed++;
	}
	return err;
}
