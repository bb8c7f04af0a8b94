/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_proto.h - the protocol core's small inline helpers (sequence
 * arithmetic, the clock, the window slots, when an ack is owed) that the
 * timers (uam_timers.c) use too; only uam_proto.c and uam_timers.c
 * include it.
 */
#ifndef UNET_UAM_PROTO_H
#define UNET_UAM_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/hot.h"
#include "uam/uam_impl.h"

/* Sequence arithmetic modulo 2^32. */
static inline int32_t seq_diff(uint32_t a, uint32_t b) { return (int32_t)(a - b); }

/* The clock: read once per poll (ep->clock_hold), else at each call (a
 * read costs ~30 ns; a poll would otherwise take several). */
UNET_HOT static inline uint64_t now_ns(struct uam_ep *ep)
{
	if (!ep->clock_hold)
		return ep->tr.now_ns(ep->tr.ctx);
	if (!ep->clock_ok) {
		ep->clock_ns = ep->tr.now_ns(ep->tr.ctx);
		ep->clock_ok = true;
	}
	return ep->clock_ns;
}

/* Frames received without an ack before one goes out on its own. */
static inline uint32_t ack_every(const struct uam_chan *ch) { return ch->ep->o.window / 4; }

/* An ack is owed and must not wait for a reply to carry it: the sender
 * needs our SACK now (ack_now), or a quarter window went unacknowledged.
 * Sent at the end of the receive round (uamp_round_acks); ack_overdue
 * adds the delayed ack's timeout. */
static inline bool ack_owed_now(const struct uam_chan *ch)
{
	return ch->ack_due && (ch->ack_now || ch->rx_unacked >= ack_every(ch));
}

static inline struct uam_tx_slot *txs(const struct uam_chan *ch, uint32_t seq)
{
	return &ch->tx[(seq + ch->tx_rot) & ch->ep->slot_mask];
}

static inline struct uam_rx_slot *rxs(const struct uam_chan *ch, uint32_t seq)
{
	return &ch->rx[seq & ch->ep->slot_mask];
}

/* Frame seq must be (re)sent at the next push.  push scans from
 * ch->tx_hint, so a window of frames that need nothing costs nothing. */
UNET_HOT static inline void mark_tx(struct uam_chan *ch, struct uam_tx_slot *s, uint32_t seq)
{
	s->need_tx = true;
	if (seq_diff(seq, ch->tx_hint) < 0)
		ch->tx_hint = seq;
}

static inline bool peer_full(const struct uam_chan *ch)
{
	/* head first: nothing queued (the usual case) reads no more */
	return ch->head && ch->npeer >= ch->ep->o.max_peer_queued;
}

#endif
