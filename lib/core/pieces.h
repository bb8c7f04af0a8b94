/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pieces.h - frames larger than one chunk (AF_XDP multi-buffer): the
 * endpoint's reassembly slots, a receive queue's frame in progress, and
 * the names the kernel headers of older systems lack.  Never installed.
 */
#ifndef UNET_PIECES_H
#define UNET_PIECES_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/if_xdp.h>

/* Linux 6.6 (AF_XDP multi-buffer); Debian 12's headers are 6.1. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

/* Pieces of one frame at most: the kernel sends at most
 * net.core.max_skb_frags (17) + 1 and counts a longer chain as
 * tx_invalid_descs; on receive we hold a writer to the same bound. */
#define UNET_MAX_PIECES 18
/* The largest MTU an endpoint follows: above it the MTU still works,
 * messages stop growing (docs/platform.md). */
#define UNET_JUMBO_MTU_MAX 9216u
/* Reassembly slots per endpoint: messages in pieces the application may
 * hold at once (received, not yet released). */
#define UNET_JUMBO_SLOTS 64u

/* The endpoint's reassembly slots: a region of the segment after the
 * frames the kernel may touch (never on a FILL ring), cut into nslots
 * slots of slot_size bytes, each a multiple of the frame size. */
struct unet_jumbo {
	bool sg;	    /* sockets bound with XDP_USE_SG */
	uint64_t base;	    /* segment offset of slot 0 */
	uint32_t slot_size; /* bytes per slot */
	uint32_t nslots, nfree;
	uint32_t *free;	    /* free slot numbers (a stack) */
	uint8_t *held;	    /* per slot: handed to the application */
	uint32_t max_frame; /* largest frame taken in pieces (slot_size - pad) */
};

/* A receive queue's frame in progress: pieces seen so far. */
struct unet_rx_asm {
	bool active;   /* pieces are being collected into slot */
	bool discard;  /* dropping pieces until the end of a refused frame */
	uint32_t slot;
	uint32_t len;
	uint32_t pieces;
};

#endif /* UNET_PIECES_H */
