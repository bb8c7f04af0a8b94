/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * emul_pieces.h - an emulated endpoint's frames in pieces on its send
 * ring (daemon/emul_pieces.c): gathering them into the daemon's own
 * memory and judging the whole.  A leaf (fixed-width types, the kernel's
 * struct xdp_desc) so that test_emul_pieces links it alone.
 */
#ifndef UNETD_EMUL_PIECES_H
#define UNETD_EMUL_PIECES_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/if_xdp.h>

/* A frame in pieces being gathered from a client's send ring. */
struct unetd_tx_asm {
	uint8_t *buf;	 /* the daemon's own memory, cap bytes */
	uint32_t cap;	 /* the largest frame taken in pieces; 0: none */
	uint32_t len;	 /* bytes gathered so far */
	uint32_t pieces; /* descriptors gathered so far */
	bool active;	 /* a frame is being gathered */
	bool discard;	 /* skipping the rest of a refused frame */
	bool ready;	 /* buf[0..len) is a checked frame waiting to be sent */
};

/* What one descriptor of the send ring came to. */
enum unetd_piece {
	UNETD_PIECE_MORE,	/* a piece gathered; more to come */
	UNETD_PIECE_FRAME,	/* the last piece: buf[0..len) is the whole frame */
	UNETD_PIECE_SKIP,	/* part of a frame refused earlier */
	UNETD_PIECE_BAD_DESC,	/* outside the segment or its frame: frame refused */
	UNETD_PIECE_BAD_PIECES, /* empty, one too many, or the frame too long: refused */
};

/*
 * Take descriptor d, read once from the ring, as a piece of the frame in
 * progress (XDP_PKT_CONTD on every piece but the last): it must lie in one
 * frame of the segment (segment_size bytes, frames of frame_size, a power
 * of two), not be empty, be at most the UNET_MAX_PIECES'th, and keep the
 * frame within a->cap.  Its bytes are copied into a->buf at once, so the
 * client's later writes to its segment change nothing the daemon judges.
 * A refused piece drops the frame it belongs to, and the pieces after it
 * up to the frame's last are skipped (UNETD_PIECE_SKIP, not counted
 * again).
 */
enum unetd_piece unetd_piece_take(struct unetd_tx_asm *a, const uint8_t *segment,
				  uint64_t segment_size, uint32_t frame_size,
				  const struct xdp_desc *d);

/* What a whole frame gathered from pieces says of itself. */
enum unetd_chain {
	UNETD_CHAIN_OK,		 /* a U-Net message: *dst_tag, *src_tag, *plen set */
	UNETD_CHAIN_BAD_FRAME,	 /* not a U-Net frame, or its lengths do not add up */
	UNETD_CHAIN_FOREIGN_SRC, /* the source MAC is not own_mac */
};

/*
 * Judge f[0..len), the daemon's copy of a frame gathered from pieces: a
 * U-Net frame (EtherType, version), a payload length of 1..max_payload
 * that is exactly what the pieces add up to (a frame under Ethernet's 60
 * bytes may be padded to 60), and the endpoint's own source MAC.  Frames
 * in pieces are U-Net messages here.  The caller checks the tags and the
 * destination against the endpoint's channels.  (IPv4 frames in pieces:
 * unetd_chain_ipv4_check.)
 */
enum unetd_chain unetd_chain_check(const uint8_t *f, uint32_t len, const uint8_t own_mac[6],
				   uint32_t max_payload, uint16_t *dst_tag, uint16_t *src_tag,
				   uint16_t *plen);

/*
 * Judge f[0..len), the daemon's copy of a frame gathered from pieces
 * that is IPv4: as the library builds UDP and TCP frames, IPv4 without
 * options, UDP or TCP, not a fragment, and lengths that add up to the
 * byte -- the IP total length is what the pieces hold past the Ethernet
 * header (no trailing bytes a check would not look at), a UDP length is
 * the IP payload's, a TCP header lies inside it.  UNETD_CHAIN_OK or
 * UNETD_CHAIN_BAD_FRAME.  The caller then checks the source address and
 * port on the same copy, as it does a frame in one piece.
 */
enum unetd_chain unetd_chain_ipv4_check(const uint8_t *f, uint32_t len);

#endif /* UNETD_EMUL_PIECES_H */
