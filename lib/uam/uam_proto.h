/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_proto.h - the protocol's small inline helpers (the wire's byte
 * order, the frame kinds, sequence arithmetic, the clock, the window
 * slots, the retransmission timeout, when an ack is owed) shared by the
 * sending core (uam_proto.c), the receive path (uam_input.c) and the
 * timers (uam_timers.c), and what those call of each other.
 */
#ifndef UNET_UAM_PROTO_H
#define UNET_UAM_PROTO_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/hot.h"
#include "uam/uam_impl.h"

/* Before the first round-trip sample (RFC 6298 says 1 s for the
 * Internet; this is one link). */
#define DEF_RTO_INIT_US 1000
/* Requests of uam_call have the top bit of their token set, so a reply
 * that comes after its call gave up is recognised and dropped. */
#define CALL_TOKEN 0x80000000u
/* Credit assumed before the peer told us its own: every receiver keeps at
 * least this many buffers (window >= 4), so it is always safe. */
#define MIN_CREDIT 4

static inline void put16(uint8_t *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static inline uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
static inline uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static inline uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }
/* The middle fragments of a store or get (uam_impl.h). */
static inline bool is_compact_frag(const uint8_t *f)
{
	return f[0] == (UAM_C_FORMAT | UAM_T_STORE) || f[0] == (UAM_C_FORMAT | UAM_T_GET_DATA);
}

/* REQUEST and REPLY frames go with the compact header, and so do the
 * middle fragments of a transfer (uam_impl.h): kind, credit, session,
 * seq, ack and token at the same places. */
static inline bool is_compact(const uint8_t *f)
{
	return f[0] == (UAM_C_FORMAT | UAM_T_REQUEST) || f[0] == (UAM_C_FORMAT | UAM_T_REPLY) ||
	       is_compact_frag(f);
}

static inline uint32_t window(const struct uam_chan *ch) { return ch->ep->o.window; }

/*
 * The timeout from the measured round trip, as RFC 6298: SRTT + 4 RTTVAR,
 * plus the delay the peer may hold its acknowledgement (ack_delay_us: a
 * lone frame is acknowledged only then), within [rto_min_us, rto_max_us].
 * DEF_RTO_INIT_US until the first sample.
 */
UNET_HOT static inline uint32_t rto_base(const struct uam_chan *ch)
{
	const struct uam_ep_opts *o = &ch->ep->o;
	uint64_t us = DEF_RTO_INIT_US;

	if (ch->have_rtt)
		us = (ch->srtt_ns + 4 * ch->rttvar_ns) / 1000 + o->ack_delay_us;
	if (us < o->rto_min_us)
		us = o->rto_min_us;
	if (us > o->rto_max_us)
		us = o->rto_max_us;
	return (uint32_t)us;
}

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

/* uam_proto.c, for uam_input.c: */
/* The op with this id, or NULL. */
struct uam_op *uamp_op_find(struct uam_ep *ep, int id);
void uamp_op_complete(struct uam_ep *ep, struct uam_op *op, int status);
struct uam_item *uamp_item_new(struct uam_chan *ch, uint8_t type, bool counted, bool medium);
void uamp_item_queue(struct uam_chan *ch, struct uam_item *it);
void uamp_slot_unkeep(struct uam_chan *ch, struct uam_tx_slot *s);

#endif
