/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * emul_pieces.c - an emulated endpoint's messages larger than one chunk:
 * the client writes a frame into several buffers of its segment and
 * queues them as one chain of descriptors, every one but the last flagged
 * XDP_PKT_CONTD (as AF_XDP multi-buffer does).  The client may rewrite
 * its region at any time, so nothing is read from it twice: each
 * descriptor is read once by the caller, each piece's bytes are copied
 * once, into the daemon's own memory, and only that copy is judged (as a
 * whole, once the last piece is in) and sent.
 */
#include <netinet/in.h>
#include <string.h>

#include "unet_abi.h"
#include "core/pieces.h"
#include "emul_pieces.h"
#include "wire_get.h"

static enum unetd_piece refuse(struct unetd_tx_asm *a, bool more, enum unetd_piece why)
{
	a->active = false;
	a->len = a->pieces = 0;
	a->discard = more;
	return why;
}

enum unetd_piece unetd_piece_take(struct unetd_tx_asm *a, const uint8_t *segment,
				  uint64_t segment_size, uint32_t frame_size,
				  const struct xdp_desc *d)
{
	bool more = d->options & XDP_PKT_CONTD;
	uint64_t in_frame = d->addr & (frame_size - 1);

	if (a->discard) {
		a->discard = more;
		return UNETD_PIECE_SKIP;
	}
	if (d->addr >= segment_size || d->len > frame_size - in_frame)
		return refuse(a, more, UNETD_PIECE_BAD_DESC);
	if (!a->active) {
		a->len = a->pieces = 0;
		a->active = true;
	}
	/* a->len <= a->cap always: the sum cannot wrap. */
	if (!d->len || a->pieces >= UNET_MAX_PIECES || d->len > a->cap - a->len)
		return refuse(a, more, UNETD_PIECE_BAD_PIECES);
	memcpy(a->buf + a->len, segment + d->addr, d->len);
	a->len += d->len;
	a->pieces++;
	if (more)
		return UNETD_PIECE_MORE;
	a->active = false;
	return UNETD_PIECE_FRAME;
}

enum unetd_chain unetd_chain_check(const uint8_t *f, uint32_t len, const uint8_t own_mac[6],
				   uint32_t max_payload, uint16_t *dst_tag, uint16_t *src_tag,
				   uint16_t *plen)
{
	uint32_t n;

	if (len < UNET_PAYLOAD_OFF || unetd_get16(f + 12) != UNET_ETH_P ||
	    f[14] != UNET_WIRE_VERSION)
		return UNETD_CHAIN_BAD_FRAME;
	n = unetd_get16(f + 20);
	/* The pieces add up to the header's length, to the byte (what the
	 * library writes); only a short frame may carry Ethernet's padding. */
	if (!n || n > max_payload ||
	    (UNET_PAYLOAD_OFF + n != len && (len > 60 || UNET_PAYLOAD_OFF + n > len)))
		return UNETD_CHAIN_BAD_FRAME;
	if (memcmp(f + 6, own_mac, 6))
		return UNETD_CHAIN_FOREIGN_SRC;
	*dst_tag = unetd_get16(f + 16);
	*src_tag = unetd_get16(f + 18);
	*plen = (uint16_t)n;
	return UNETD_CHAIN_OK;
}



enum unetd_chain unetd_chain_ipv4_check(const uint8_t *f, uint32_t len)
{
	uint32_t tot, doff;

	if (len < UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN || unetd_get16(f + 12) != 0x0800 || f[14] != 0x45 ||
	    (f[23] != IPPROTO_UDP && f[23] != IPPROTO_TCP))
		return UNETD_CHAIN_BAD_FRAME;
	tot = unetd_get16(f + 16);
	if (UNET_ETH_HLEN + tot != len || (unetd_get16(f + 20) & 0x3fff))
		return UNETD_CHAIN_BAD_FRAME;
	if (f[23] == IPPROTO_UDP)
		return unetd_get16(f + UNET_ETH_HLEN + UNET_IP_HLEN + 4) == tot - UNET_IP_HLEN ? UNETD_CHAIN_OK
									 : UNETD_CHAIN_BAD_FRAME;
	if (tot < UNET_IP_HLEN + UNETD_TCP_HLEN)
		return UNETD_CHAIN_BAD_FRAME;
	doff = (f[UNET_ETH_HLEN + UNET_IP_HLEN + 12] >> 4) * 4u;
	return doff >= UNETD_TCP_HLEN && doff <= tot - UNET_IP_HLEN ? UNETD_CHAIN_OK : UNETD_CHAIN_BAD_FRAME;
}
