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
 * pool.  The whole frame is then parsed as a single-chunk frame is
 * (rx_frame.c): a raw U-Net message, or offered to the layers above
 * (UDP, TCP), which get it whole, in the slot.
 *
 * Send: a message (or a layer's frame, unet_layer_queue_frame) larger
 * than one send buffer is written into as many buffers as it needs and
 * queued as one chain of descriptors, from one span
 * (unet_channel__send_copy) or two (a layer's header and its data,
 * unet_layer_queue_pieces: Active Messages' frames at a jumbo MTU).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/layer.h"
#include "core/objects.h"

uint32_t unet_jumbo_slot_bytes(uint32_t max_payload, uint32_t frame_size)
{
	/* The largest frame the link delivers: the MTU plus Ethernet and a
	 * VLAN tag (veth takes MTU + 18), after our alignment pad. */
	uint32_t slot = UNET_ALIGN_PAD + UNET_ETH_HLEN + 4 + max_payload + UNET_HDR_LEN;

	return (slot + frame_size - 1) & ~(frame_size - 1);
}

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

/* The assembled frame in slot a->slot, a->len bytes, as a message: the
 * same checks (rx_frame.c) as for a frame in one piece, raw U-Net or a
 * layer's (UDP, TCP), then the slot is the application's until
 * released.  A layer that consumes the frame (TCP copies it) leaves the
 * slot free again at once. */
static bool deliver(struct unet_endpoint *ep, struct unet_rx_asm *a, struct unet_recv_desc *desc)
{
	uint8_t *frame = slot_addr(ep, a->slot) + UNET_ALIGN_PAD;

	if (!unet_take_frame(ep, frame, a->len, desc)) {
		refuse_frame(ep, a, false);
		return false;
	}
	desc->buf = ep->jumbo.base + (uint64_t)a->slot * ep->jumbo.slot_size;
	ep->jumbo.held[a->slot] = 1;
	a->active = false;
	return true;
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

/*
 * Queue a frame of flen bytes on q as one chain of descriptors, each
 * piece written by fill (frame offset, length) into its own send
 * buffer.  The first piece holds piece_room() bytes (1790 with
 * 2048-byte chunks), so every header a caller writes lies in it.  No
 * kick.  Returns 0, -EMSGSIZE (no multi-buffer, too many pieces) or
 * -EAGAIN (no buffers or ring room: nothing queued).
 */
static int queue_chain(struct unet_endpoint *ep, struct unet_queue *q, uint32_t flen,
		       unet_layer_fill_fn fill, void *ctx)
{
	uint32_t room = piece_room(ep), n = (flen + room - 1) / room, idx, off = 0;
	uint64_t bufs[UNET_MAX_PIECES];

	if (!ep->jumbo.sg || !n || n > UNET_MAX_PIECES)
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
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *xd = xsk_ring_prod__tx_desc(&q->tx, idx + i);
		uint32_t take = flen - off < room ? flen - off : room;

		fill(ctx, (uint8_t *)ep->segment + bufs[i] + UNET_ALIGN_PAD, off, take);
		off += take;
		xd->addr = bufs[i] + UNET_ALIGN_PAD;
		xd->len = take;
		xd->options = i + 1 < n ? XDP_PKT_CONTD : 0;
		unet_pool_move(&ep->pool, bufs[i], UNET_FRAME_APP, UNET_FRAME_TX);
	}
	xsk_ring_prod__submit(&q->tx, n);
	q->tx_pending += n;
	return 0;
}

/* Copies len bytes from offset off of the concatenation of a (alen
 * bytes), b (blen bytes) and c to dst. */
static void copy_three(uint8_t *dst, uint32_t off, uint32_t len, const uint8_t *a, uint32_t alen,
		       const uint8_t *b, uint32_t blen, const uint8_t *c)
{
	if (len && off < alen) {
		uint32_t h = alen - off < len ? alen - off : len;

		memcpy(dst, a + off, h);
		dst += h;
		off += h;
		len -= h;
	}
	off -= alen;
	if (len && off < blen) {
		uint32_t h = blen - off < len ? blen - off : len;

		memcpy(dst, b + off, h);
		dst += h;
		off += h;
		len -= h;
	}
	if (len)
		memcpy(dst, c + (off - blen), len);
}

void unet_layer_fill_copy(void *ctx, uint8_t *dst, uint32_t off, uint32_t len)
{
	const struct unet_layer_parts *p = ctx;

	copy_three(dst, off, len, p->head, p->hlen, NULL, 0, p->body);
}

/* A U-Net message in pieces: the wire header, then the caller's header
 * and data. */
struct msg_parts {
	uint8_t wire[UNET_PAYLOAD_OFF];
	const uint8_t *hdr, *data;
	uint32_t hlen;
};

static void fill_msg(void *ctx, uint8_t *dst, uint32_t off, uint32_t len)
{
	const struct msg_parts *m = ctx;

	copy_three(dst, off, len, m->wire, UNET_PAYLOAD_OFF, m->hdr, m->hlen, m->data);
}

/* The message of hlen + dlen bytes (hdr, then data) on ch as one chain
 * of buffers, no kick. */
static int queue_pieces(struct unet_channel *ch, const void *hdr, uint32_t hlen, const void *data,
			uint32_t dlen)
{
	struct unet_endpoint *ep = ch->ep;
	struct msg_parts m = { .hdr = hdr, .data = data, .hlen = hlen };

	/* A routable channel's frame is one buffer (unet_channel__max_payload). */
	if (ch->udp || hlen > UINT32_MAX - dlen || hlen + dlen > ep->max_payload)
		return -EMSGSIZE;
	/* No padding written past the header: the message is more than a
	 * buffer holds, far above Ethernet's minimum. */
	unet_wire_build(m.wire, ch->peer_mac, ep->mac, ch->peer_tag, ch->tag, hlen + dlen);
	return queue_chain(ep, &ep->q[ch->txq], UNET_PAYLOAD_OFF + hlen + dlen, fill_msg, &m);
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

bool unet_layer_multi_buffer(const struct unet_endpoint *ep)
{
	/* An emulated endpoint's chains go through unetd, which checks them
	 * whole; a daemon that says so (UNETD_EP_INET_PIECES) takes IPv4
	 * UDP and TCP chains as well as U-Net ones.  Before it, an IPv4
	 * chain was tx_bad_frame there: the layers stay at one buffer per
	 * frame with such a daemon. */
	return ep && ep->jumbo.sg && (!ep->emulated || ep->inet_pieces);
}

int unet_layer_queue_frame(struct unet_endpoint *ep, uint32_t txq, uint32_t flen,
			   unet_layer_fill_fn fill, void *ctx)
{
	uint32_t mtu;
	int err;

	if (!ep || txq >= ep->nqueues || !fill)
		return -EINVAL;
	mtu = ep->mtu < UNET_JUMBO_MTU_MAX ? ep->mtu : UNET_JUMBO_MTU_MAX;
	if (flen < UNET_ETH_HLEN || flen > mtu + UNET_ETH_HLEN)
		return -EMSGSIZE;
	if (ep->dead)
		return ep->dead;
	err = queue_chain(ep, &ep->q[txq], flen, fill, ctx);
	if (!err) {
		ep->q[txq].tx_owed++;
		ep->tx_msgs++;
	}
	return err;
}
