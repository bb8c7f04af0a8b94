/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wire.c - building and checking U-Net frames (docs/wire-format.md).
 * The XDP program is the gate; the library checks again on receive
 * because a frame in the segment is only as trustworthy as the code that
 * put it there.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "core/internal.h"

#define ETH_MIN_FRAME 60 /* without FCS */

uint32_t unet_wire_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			 uint16_t dst_tag, uint16_t src_tag, uint32_t len)
{
	struct unet_hdr h = {
		.version = UNET_WIRE_VERSION,
		.flags = 0,
		.dst_tag = htons(dst_tag),
		.src_tag = htons(src_tag),
		.len = htons((uint16_t)len),
	};
	uint16_t proto = htons(UNET_ETH_P);
	uint32_t flen = UNET_PAYLOAD_OFF + len;

	memcpy(frame, dst_mac, 6);
	memcpy(frame + 6, src_mac, 6);
	memcpy(frame + 12, &proto, 2);
	memcpy(frame + UNET_ETH_HLEN, &h, sizeof(h));
	if (flen < ETH_MIN_FRAME) {
		memset(frame + flen, 0, ETH_MIN_FRAME - flen);
		flen = ETH_MIN_FRAME;
	}
	return flen;
}

int unet_wire_parse(const uint8_t *frame, uint32_t frame_len, uint16_t *dst_tag,
		    uint16_t *src_tag, uint32_t *payload_off, uint32_t *len)
{
	uint32_t off = 12;
	uint16_t proto;
	struct unet_hdr h;

	if (frame_len < UNET_ETH_HLEN)
		return -EINVAL;
	memcpy(&proto, frame + off, 2);
	off += 2;
	/* U-Net frames are untagged (unet_abi.h): a VLAN tag means another
	 * device's frame, which the XDP program passes and we refuse. */
	if (proto != htons(UNET_ETH_P) || frame_len < off + UNET_HDR_LEN)
		return -EINVAL;
	memcpy(&h, frame + off, sizeof(h));
	off += UNET_HDR_LEN;
	if (h.version != UNET_WIRE_VERSION || !h.len || ntohs(h.len) > frame_len - off)
		return -EINVAL;
	*dst_tag = ntohs(h.dst_tag);
	*src_tag = ntohs(h.src_tag);
	*payload_off = off;
	*len = ntohs(h.len);
	return 0;
}
