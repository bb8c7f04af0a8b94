/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_proto.c - the U-Net Active Messages protocol, with no network in
 * sight: frames come in through uamp_input, go out through the transport's
 * xmit, time comes from its clock.  The unit tests run two endpoints over
 * a simulated lossy, duplicating, reordering link; uam.c runs them over a
 * unet endpoint.  docs/uam.md describes the protocol.
 *
 * Per channel and direction:
 *   - every message or fragment is a frame with a 32-bit sequence number;
 *     frames are delivered exactly once, in sequence order;
 *   - selective repeat: the receiver keeps up to `window` frames that came
 *     early and reports them in a 64-bit SACK bitmap next to its
 *     cumulative ack (the next seq it expects), and an explicit ACK the
 *     held frames further out (extended SACK), so the sender resends only
 *     holes: at once when something sent after a hole was SACKed (a fast
 *     retransmit), after a tail-loss probe (two smoothed round trips
 *     without an answer: the newest frame again) revealed them, else
 *     when the timer expires;
 *   - acks ride on every frame; one that nothing carried goes out as an
 *     explicit ACK after ack_delay_us, or at the end of the receive round
 *     once a quarter window is unacknowledged, or for a new gap, a filled
 *     hole, a duplicate (ack_overdue, uamp_round_acks);
 *   - credits: a sender keeps seq < ack + credit, and the receiver's
 *     credit is its window, for which it keeps buffers (the reorder slots
 *     here, receive ring entries in uam.c), so nothing is dropped for lack
 *     of a buffer; a receiver that stops polling stops acking, and its
 *     sender stalls and queues locally (bounded by max_queued);
 *   - the retransmission timeout comes from the measured round trip
 *     (SRTT/RTTVAR, rto_min..rto_max), doubles on each expiry and resets
 *     on progress; no progress for timeout_ms with data
 *     outstanding fails the channel with -ETIMEDOUT.
 *
 * This file is the core the others stand on: the endpoint, its ops and
 * channels, and the sending side (queue, window, frames, acks put on
 * them).  The receive path is uam_input.c, the timers uam_timers.c, the
 * memory regions uam_region.c (docs/uam.md).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/hot.h"
#include "uam/uam_proto.h"

#define DEF_WINDOW 64
#define DEF_MAX_QUEUED 1024
#define DEF_MAX_OPS 256
/* The floor of the retransmission timeout: a round trip here is 5-200 us
 * (spinning vs a vCPU wake-up), so a floor of milliseconds (TCP's 200 ms,
 * our old 2 ms) would make every loss cost a hundred round trips. */
#define DEF_RTO_MIN_US 100
#define DEF_RTO_MAX_US 200000
#define DEF_TIMEOUT_MS 2000
#define DEF_ACK_DELAY_US 50
/* Freed queue items kept per endpoint and kind, for reuse. */
#define ITEM_POOL_MAX 256

/* ---- Small helpers ---------------------------------------------------- */




/* xorshift64*: the test hooks' dice; deterministic per seed. */
static uint32_t rnd_ppm(struct uam_ep *ep)
{
	uint64_t x = ep->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ep->rng = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32) % 1000000;
}


/* A medium message's payload room with nargs arguments: what a frame
 * holds beside the compact header and the arguments. */
static uint32_t medium_room(const struct uam_ep *ep, unsigned int nargs)
{
	return ep->tr.max_frame - UAM_C_HDR_LEN - nargs * 8u;
}



/*
 * The slots of a channel's send and receive windows, by sequence number.
 * There are a power of two of them (at least the window): 2^32 is a
 * multiple of that, so seq & mask stays a ring across the wrap of the
 * sequence numbers, where seq % window would jump back to 0 and two frames
 * of one window could share a slot.  The send ring is turned by tx_rot
 * (new_slot).
 */
static uint32_t nslots(const struct uam_ep *ep) { return ep->slot_mask + 1; }
/*
 * The slot for a new frame, seq snd_next.  While nothing is in flight no
 * slot is in use (every one outside [snd_una, snd_next) is free and keeps
 * no buffer, as the ring's wrap already needs), so the ring is turned to
 * put the new frame in slot 0: request/reply traffic, and bursts that
 * drain, reuse the same few slots and frame buffers, warm in the cache,
 * instead of walking the window's cold ones (at a window of 512, 512
 * slots and 768 KiB of frame buffers: a cache miss or two per message on
 * each side, where the kernel's send path evicts between round trips).
 */
UNET_HOT static struct uam_tx_slot *new_slot(struct uam_chan *ch)
{
	if (ch->snd_una == ch->snd_next)
		ch->tx_rot = -ch->snd_next;
	return txs(ch, ch->snd_next);
}


/* ---- Retransmission timer ---------------------------------------------- */



/* ---- Endpoint --------------------------------------------------------- */

int uamp_ep_init(struct uam_ep *ep, const struct uam_ep_opts *opts, const struct uam_transport *tr)
{
	struct uam_ep_opts o = { .sz = sizeof(o) };

	if (!tr || !tr->xmit || !tr->now_ns || tr->max_frame < UAM_MIN_FRAME)
		return -EINVAL;
	/* kept buffers: all three or none, and a flush (slot_unkeep) */
	if (!tr->buf_get != !tr->xmit_buf || !tr->buf_get != !tr->buf_put ||
	    (tr->buf_get && !tr->flush))
		return -EINVAL;
	if (opts && uamp_copy_opts(&o, sizeof(o), opts, opts->sz))
		return -EINVAL;
	if (!o.window)
		o.window = DEF_WINDOW;
	if (o.window < MIN_CREDIT || o.window > UAM_MAX_WINDOW)
		return -EINVAL;
	if (!o.max_queued)
		o.max_queued = DEF_MAX_QUEUED;
	if (!o.max_peer_queued)
		o.max_peer_queued = 2 * o.window;
	if (!o.max_ops)
		o.max_ops = DEF_MAX_OPS;
	if (!o.rto_min_us)
		o.rto_min_us = DEF_RTO_MIN_US;
	if (!o.rto_max_us)
		o.rto_max_us = DEF_RTO_MAX_US;
	if (o.rto_max_us < o.rto_min_us)
		return -EINVAL;
	if (!o.timeout_ms)
		o.timeout_ms = DEF_TIMEOUT_MS;
	if (!o.ack_delay_us)
		o.ack_delay_us = o.rto_min_us / 2 < DEF_ACK_DELAY_US ? o.rto_min_us / 2
								 : DEF_ACK_DELAY_US;
	if (!o.ack_delay_us)
		o.ack_delay_us = 1;
	if (o.ack_delay_us >= o.rto_min_us)
		return -EINVAL;
	if (o.inject.dup_ppm > 1000000 || o.inject.reorder_ppm > 1000000)
		return -EINVAL;
	ep->o = o;
	ep->tr = *tr;
	ep->slot_mask = 1;
	while (ep->slot_mask + 1 < o.window)
		ep->slot_mask = ep->slot_mask * 2 + 1;
	if (ep->tr.max_frame > 0xffff)
		ep->tr.max_frame = 0xffff;
	ep->rng = o.inject.seed ? o.inject.seed : 0x9E3779B97F4A7C15ULL;
	ep->ops = calloc(o.max_ops, sizeof(*ep->ops));
	if (!ep->ops)
		return -ENOMEM;
	/* Sessions tell a restarted peer from the one we talked to: take
	 * them from the clock so two runs differ. */
	ep->next_session = (uint32_t)(now_ns(ep) ^ (now_ns(ep) >> 32)) | 1;
	return 0;
}

void uamp_ep_fini(struct uam_ep *ep)
{
	while (ep->chans)
		uamp_chan_free(ep->chans);
	for (int k = 0; k < 2; k++) {
		struct uam_item **pool = k ? &ep->mitems : &ep->items;

		while (*pool) {
			struct uam_item *it = *pool;

			*pool = it->next;
			free(it);
		}
	}
	ep->nitems = ep->nmitems = 0;
	free(ep->ops);
	ep->ops = NULL;
}

/* ---- Ops ----------------------------------------------------------------- */

struct uam_op *uamp_op_find(struct uam_ep *ep, int id)
{
	if (id <= 0)
		return NULL;
	for (uint32_t i = 0; i < ep->o.max_ops; i++)
		if (ep->ops[i].id == id)
			return &ep->ops[i];
	return NULL;
}

static struct uam_op *op_new(struct uam_ep *ep, struct uam_chan *ch, uint8_t type, uam_op_fn cb,
			     void *ctx)
{
	for (uint32_t i = 0; i < ep->o.max_ops; i++) {
		struct uam_op *op = &ep->ops[i];

		if (op->id)
			continue;
		do
			ep->last_op_id = ep->last_op_id == INT32_MAX ? 1 : ep->last_op_id + 1;
		while (uamp_op_find(ep, ep->last_op_id));
		*op = (struct uam_op){ .id = ep->last_op_id, .chan = ch, .type = type, .cb = cb,
				       .ctx = ctx };
		return op;
	}
	return NULL;
}



/* Finish an op: run its callback (and free it), or keep the status for
 * uam_op__wait. */
void uamp_op_complete(struct uam_ep *ep, struct uam_op *op, int status)
{
	if (!op || op->done)
		return;
	op->done = true;
	op->status = status;
	op->chan = NULL;
	ep->progress++;
	if (op->cb) {
		uam_op_fn cb = op->cb;
		void *ctx = op->ctx;
		int id = op->id;

		op->id = 0;
		cb(ep, id, status, ctx);
	}
}

/* ---- Channel ------------------------------------------------------------ */

/*
 * The first sequence number of the stream of a channel with this session.
 * Derived from the session, so the peer knows it from any frame, and
 * scattered, so that the acknowledgements of an earlier channel's stream,
 * still on their way, do not fall on a new one's numbers.
 */
uint32_t uamp_isn(const struct uam_ep *ep, uint32_t session)
{
	uint32_t x = session;

	if (ep->isn)
		return ep->isn; /* test hook */
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

static void chan_free_bufs(struct uam_chan *ch, uint32_t w)
{
	for (uint32_t i = 0; i < w; i++) {
		if (ch->tx)
			free(ch->tx[i].buf);
		if (ch->rx)
			free(ch->rx[i].buf);
	}
	free(ch->tx);
	free(ch->rx);
	free(ch->scratch);
	free(ch->held);
	free(ch->call_data);
	free(ch);
}

struct uam_chan *uamp_chan_new(struct uam_ep *ep, void *handle)
{
	uint32_t w = nslots(ep), fs = ep->tr.max_frame;
	/* On a cache-line boundary: its hot part is three lines, not four. */
	struct uam_chan *ch = aligned_alloc(UAM_CHAN_ALIGN, (sizeof(*ch) + UAM_CHAN_ALIGN - 1) /
								    UAM_CHAN_ALIGN * UAM_CHAN_ALIGN);

	if (!ch)
		goto nomem;
	memset(ch, 0, sizeof(*ch));
	/* Not linked into ep until complete: the unwinding below needs no ep. */
	ch->ep = ep;
	ch->handle = handle;
	ch->frame = fs < UAM_BASE_FRAME ? fs : UAM_BASE_FRAME;
	ch->frame_max = fs;
	ch->tx = calloc(w, sizeof(*ch->tx));
	ch->rx = calloc(w, sizeof(*ch->rx));
	ch->scratch = malloc(fs);
	ch->held = malloc(fs);
	ch->call_data = malloc(fs);
	if (!ch->tx || !ch->rx || !ch->scratch || !ch->held || !ch->call_data)
		goto nomem_ch;
	for (uint32_t i = 0; i < w; i++) {
		ch->tx[i].kbuf = UAM_NO_KBUF;
		ch->tx[i].buf = malloc(fs);
		ch->rx[i].buf = malloc(fs);
		if (!ch->tx[i].buf || !ch->rx[i].buf)
			goto nomem_ch;
	}
	/* A fresh session for every channel opened on this endpoint (an
	 * odd step: 2^32 opens before one comes back), so the peer tells a
	 * reopened channel from the one it knew; 0 means none. */
	ch->session = ep->next_session;
	ep->next_session += 0x9E3779B9u;
	if (!ch->session) {
		ch->session = ep->next_session;
		ep->next_session += 0x9E3779B9u;
	}
	/* No handshake: our stream starts at a number the peer derives from
	 * our session (uamp_isn); we learn the peer's when its first frame
	 * comes (session_check).  Frames that arrive before the peer opened
	 * its side are lost and resent. */
	ch->snd_una = ch->snd_next = uamp_isn(ep, ch->session);
	ch->tx_hint = ch->snd_next;
	ch->min_sent_ns = UINT64_MAX;
	ch->peer_credit = MIN_CREDIT;
	ch->rto_us = rto_base(ch);
	ch->next = ep->chans;
	ep->chans = ch;
	ep->nchans++;
	return ch;

nomem_ch:
	chan_free_bufs(ch, w);
nomem:
	errno = ENOMEM;
	return NULL;
}

/* A queue item from the endpoint's pool (medium: with room for a
 * medium payload), zeroed but for that.  NULL if none and no memory. */
static struct uam_item *item_alloc(struct uam_ep *ep, bool medium)
{
	struct uam_item **pool = medium ? &ep->mitems : &ep->items;
	struct uam_item *it = *pool;

	if (it) {
		*pool = it->next;
		if (medium)
			ep->nmitems--;
		else
			ep->nitems--;
		memset(it, 0, sizeof(*it));
	} else {
		it = calloc(1, sizeof(*it) + (medium ? medium_room(ep, 0) : 0));
		if (!it)
			return NULL;
	}
	it->medium = medium;
	return it;
}

static void item_free(struct uam_ep *ep, struct uam_item *it)
{
	uint32_t *n = it->medium ? &ep->nmitems : &ep->nitems;
	struct uam_item **pool = it->medium ? &ep->mitems : &ep->items;

	if (*n >= ITEM_POOL_MAX) {
		free(it);
		return;
	}
	it->next = *pool;
	*pool = it;
	(*n)++;
}

static void drop_items(struct uam_chan *ch)
{
	while (ch->head) {
		struct uam_item *it = ch->head;

		ch->head = it->next;
		item_free(ch->ep, it);
	}
	ch->tail = NULL;
	ch->nqueued = 0;
	ch->npeer = 0;
}

/*
 * A frame that will not be sent again gives back its kept buffer.  One
 * that went to xmit_buf since the last flush may still wait in the
 * transport's batch (only a peer that acknowledges what it cannot have
 * had, or a channel that fails or closes, gives one back so soon): the
 * batch goes first, or the buffer would be free while a descriptor of
 * the batch still names it, and the next frame built in it would go out
 * twice, once to this channel's peer.
 */
UNET_HOT void uamp_slot_unkeep(struct uam_chan *ch, struct uam_tx_slot *s)
{
	struct uam_ep *ep = ch->ep;

	if (s->kbuf == UAM_NO_KBUF)
		return;
	if (s->ntx && s->kgen == ep->tx_gen && ep->tr.flush)
		ep->tr.flush(ep->tr.ctx);
	ep->tr.buf_put(ep->tr.ctx, s->kbuf);
	s->kbuf = UAM_NO_KBUF;
	s->data = NULL;
	s->dlen = 0;
}

void uamp_chan_fail(struct uam_chan *ch, int err)
{
	struct uam_ep *ep = ch->ep;

	if (ch->err)
		return;
	ch->err = err;
	ch->st.chan_failures++;
	drop_items(ch);
	for (uint32_t i = 0; i < nslots(ep); i++) {
		ch->tx[i].state = SLOT_FREE;
		uamp_slot_unkeep(ch, &ch->tx[i]);
	}
	ch->snd_una = ch->snd_next;
	if (ch->call_active) {
		ch->call_done = true;
		ep->progress++;
	}
	for (uint32_t i = 0; i < ep->o.max_ops; i++)
		if (ep->ops[i].id && !ep->ops[i].done && ep->ops[i].chan == ch)
			uamp_op_complete(ep, &ep->ops[i], err);
}

static void add_stats(struct uam_stats *to, const struct uam_stats *from)
{
	const uint64_t *f = (const uint64_t *)from;
	uint64_t *t = (uint64_t *)to;

	for (size_t i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += f[i];
}

UNET_HOT void uamp_enter(struct uam_ep *ep)
{
	ep->busy++;
}

UNET_HOT static void tx_flush(struct uam_ep *ep)
{
	if (ep->tr.flush)
		ep->tr.flush(ep->tr.ctx);
}

UNET_HOT void uamp_defer(struct uam_ep *ep)
{
	ep->defer_tx++;
}

UNET_HOT void uamp_undefer(struct uam_ep *ep)
{
	if (!--ep->defer_tx)
		tx_flush(ep);
}

UNET_HOT void uam_ep__cork(struct uam_ep *ep)
{
	if (!ep)
		return;
	ep->corks++;
	uamp_defer(ep);
}

UNET_HOT int uam_ep__uncork(struct uam_ep *ep)
{
	if (!ep || !ep->corks)
		return -EINVAL;
	ep->corks--;
	uamp_undefer(ep);
	return 0;
}

UNET_HOT void uamp_leave(struct uam_ep *ep)
{
	if (--ep->busy)
		return;
	while (ep->zombies) {
		struct uam_chan *ch = ep->zombies;

		ep->zombies = ch->zombie_next;
		drop_items(ch); /* what a handler queued after the close */
		chan_free_bufs(ch, nslots(ep));
	}
}

void uamp_chan_free(struct uam_chan *ch)
{
	struct uam_ep *ep;
	struct uam_chan **pp;

	if (!ch || ch->closing)
		return;
	ep = ch->ep;
	ch->closing = true;
	/* Failing it runs op callbacks, which may close channels too. */
	uamp_enter(ep);
	uamp_chan_fail(ch, -ECONNRESET);
	/* Unlinked at once, so it gets no more frames and its unet channel
	 * can have a new one; ch->next stays, for a walk of ep->chans that
	 * stands on ch right now (uamp_tick). */
	for (pp = &ep->chans; *pp; pp = &(*pp)->next)
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	ep->nchans--;
	uamp_regions_unbind(ep, ch);
	add_stats(&ep->closed, &ch->st);
	drop_items(ch);
	ch->zombie_next = ep->zombies;
	ep->zombies = ch;
	uamp_leave(ep);
}

/* ---- Sending ------------------------------------------------------------ */

/* Frames beyond the ack that may be held out of order: those below
 * rcv_high (none when nothing is held, the usual case). */
static uint32_t held_span(const struct uam_chan *ch)
{
	return ch->rx_held ? ch->rcv_high - ch->rcv_next - 1 : 0;
}

/*
 * The receive state we report in every frame: cumulative ack, SACK bitmap
 * of the first 64 frames beyond it, credit.  An ACK frame (ext non-NULL)
 * also reports the held frames further out, in *ext_len bytes of extended
 * SACK at ext (UAM_SACK_EXT_MAX at most, and what fits the frame): with a
 * window deeper than 64 frames, a loss beyond the header's bitmap would
 * otherwise be invisible to fast retransmit until the ack got near it.
 */
/* Bit i: frame rcv_next + first + i is held, for the 64 frames from
 * first on that lie within span (held_span). */
static uint64_t held_bits(const struct uam_chan *ch, uint32_t first, uint32_t span)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < 64 && first + i <= span; i++)
		if (rxs(ch, ch->rcv_next + first + i)->present)
			w |= 1ULL << i;
	return w;
}

static void put_ack(struct uam_chan *ch, uint8_t *f, uint8_t *ext, uint32_t *ext_len)
{
	uint32_t span = held_span(ch);
	uint64_t sack = held_bits(ch, 1, span);

	if (ext) {
		uint32_t words = span > 64 ? (span - 64 + 63) / 64 : 0,
			 room = (ch->frame_max - UAM_HDR_LEN) / 8; /* the channel's frames */

		if (words > UAM_SACK_EXT_MAX / 8)
			words = UAM_SACK_EXT_MAX / 8;
		if (words > room)
			words = room;
		for (uint32_t k = 0; k < words; k++)
			put64(ext + 8 * k, held_bits(ch, 65 + 64 * k, span));
		*ext_len = words * 8;
	}
	put32(f + UAM_OFF_ACK, ch->rcv_next);
	put64(f + UAM_OFF_SACK, sack);
	put16(f + UAM_OFF_CREDIT, (uint16_t)window(ch));
	ch->ack_due = false;
	ch->ack_now = false;
	ch->rx_unacked = 0;
	ch->ooo_unacked = 0;
}

/*
 * put_ack for a compact frame (a request or reply): the cumulative ack
 * and the credit (in units of UAM_C_CREDIT_UNIT, rounded down: never
 * more than we keep buffers for).  It has no room for a SACK: while
 * frames are held past a gap, the SACK is owed at once (ack_now) and goes
 * in an ACK at the end of this round, where a full-header reply would
 * have carried it itself; fast retransmit depends on it.  (Owing it only
 * when a new gap had made it owed already, not at every compact frame,
 * cost test_loss_recovery's 16 calls in flight at 10% loss 0.48x of the
 * loss-free rate against 0.52x: requests and replies then told the
 * sender less than full headers used to.)  With nothing held, this frame
 * says all an ACK would.
 */
UNET_HOT static void put_ack_compact(struct uam_chan *ch, uint8_t *f)
{
	put32(f + UAM_C_OFF_ACK, ch->rcv_next);
	f[UAM_C_OFF_CREDIT] = (uint8_t)(window(ch) / UAM_C_CREDIT_UNIT);
	ch->rx_unacked = 0;
	if (ch->rx_held) {
		if (!ch->ack_due)
			ch->ack_due_ns = now_ns(ch->ep);
		ch->ack_due = true;
		ch->ack_now = true;
		return;
	}
	ch->ack_due = false;
	ch->ack_now = false;
}

/* One frame to the transport: header f (len bytes), then dlen bytes of
 * data, copied from data or, if kbuf is a kept buffer sent for the
 * first time, already in it. */
UNET_HOT int uamp_raw_xmit(struct uam_chan *ch, const uint8_t *f, uint32_t len,
			   const uint8_t *data, uint32_t dlen, uint64_t kbuf)
{
	struct uam_ep *ep = ch->ep;
	int err = kbuf != UAM_NO_KBUF
			  ? ep->tr.xmit_buf(ep->tr.ctx, ch->handle, f, len, kbuf, dlen)
			  : ep->tr.xmit(ep->tr.ctx, ch->handle, f, len, data, dlen);

	if (!err)
		ch->st.tx_frames++;
	return err;
}

/* Send one frame through the test hooks (a frame held back or sent
 * twice is a copy, never the kept buffer).  Returns 0 or the
 * transport's error (-EAGAIN: not sent, try later). */
UNET_HOT static int xmit(struct uam_chan *ch, const uint8_t *f, uint32_t len, const uint8_t *data,
			 uint32_t dlen, uint64_t kbuf)
{
	const struct uam_inject_opts *in = &ch->ep->o.inject;
	int err;

	if (in->reorder_ppm && !ch->held_len && rnd_ppm(ch->ep) < in->reorder_ppm) {
		memcpy(ch->held, f, len);
		if (dlen)
			memcpy(ch->held + len, data, dlen);
		ch->held_len = len + dlen;
		return 0;
	}
	err = uamp_raw_xmit(ch, f, len, data, dlen, kbuf);
	if (err)
		return err;
	if (ch->held_len) {
		/* a failure is a loss */
		uamp_raw_xmit(ch, ch->held, ch->held_len, NULL, 0, UAM_NO_KBUF);
		ch->held_len = 0;
	}
	if (in->dup_ppm && rnd_ppm(ch->ep) < in->dup_ppm)
		uamp_raw_xmit(ch, f, len, data, dlen, UAM_NO_KBUF);
	return 0;
}

static void hdr_init(struct uam_chan *ch, uint8_t *f, uint8_t type, uint8_t flags, uint8_t nargs,
		     uint16_t handler, uint32_t seq, uint32_t token, uint32_t aux, uint32_t dlen)
{
	memset(f, 0, UAM_HDR_LEN);
	f[UAM_OFF_VERSION] = UAM_WIRE_VERSION;
	f[UAM_OFF_TYPE] = type;
	f[UAM_OFF_FLAGS] = flags;
	f[UAM_OFF_NARGS] = nargs;
	put16(f + UAM_OFF_HANDLER, handler);
	put32(f + UAM_OFF_SESSION, ch->session);
	put32(f + UAM_OFF_SEQ, seq);
	put32(f + UAM_OFF_TOKEN, token);
	put32(f + UAM_OFF_AUX, aux);
	put32(f + UAM_OFF_DLEN, dlen);
}

/* Data bytes a fragment can carry: `last` ones also carry the args. */
static uint64_t frag_room(const struct uam_chan *ch, const struct uam_item *it, bool last)
{
	return ch->frame - UAM_HDR_LEN - UAM_FRAG_EXT - (last ? it->nargs * 8u : 0);
}

/* Data bytes a compact fragment carries. */
static uint64_t cfrag_room(const struct uam_chan *ch)
{
	return ch->frame - UAM_CF_HDR_LEN;
}

/* The largest offset from its transfer's start a compact fragment can
 * say (its field has 32 bits; a test may set less). */
static uint64_t cfrag_rel_max(const struct uam_ep *ep)
{
	return ep->cfrag_rel_max ? ep->cfrag_rel_max : UINT32_MAX;
}

/* A request or reply's compact header (the ack and credit are put at
 * each transmission, put_ack). */
UNET_HOT static void hdr_init_compact(struct uam_chan *ch, uint8_t *f, uint8_t type, uint8_t nargs,
				      uint16_t handler, uint32_t seq, uint32_t token)
{
	f[UAM_C_OFF_KIND] = UAM_C_FORMAT | type;
	f[UAM_C_OFF_NARGS] = nargs;
	f[UAM_C_OFF_HANDLER] = (uint8_t)handler; /* < UAM_MAX_HANDLERS (256) */
	f[UAM_C_OFF_CREDIT] = 0;
	put32(f + UAM_C_OFF_SESSION, ch->session);
	put32(f + UAM_C_OFF_SEQ, seq);
	put32(f + UAM_C_OFF_ACK, 0);
	put32(f + UAM_C_OFF_TOKEN, token);
}

/* A request, reply or DONE into slot s: header, args, and a medium
 * message's payload, copied once where a retransmission finds it (the
 * caller's buffer is free once the call returns): into a kept transport
 * buffer, right where it goes out, or if the transport has none to
 * spare, into the slot.  Requests and replies take the compact header,
 * DONE (which has a status) the full one. */
UNET_HOT static void build_msg(struct uam_chan *ch, struct uam_tx_slot *s, uint32_t seq,
			       uint8_t type, uint16_t handler, uint32_t token, uint32_t aux,
			       const uint64_t *args, unsigned int nargs, const void *data,
			       uint32_t dlen)
{
	struct uam_ep *ep = ch->ep;
	uint8_t *f = s->buf, *p, *kf;

	if (type == UAM_T_REQUEST || type == UAM_T_REPLY) {
		hdr_init_compact(ch, f, type, (uint8_t)nargs, handler, seq, token);
		p = f + UAM_C_HDR_LEN;
	} else {
		hdr_init(ch, f, type, 0, (uint8_t)nargs, handler, seq, token, aux, dlen);
		p = f + UAM_HDR_LEN;
	}
	for (unsigned int i = 0; i < nargs; i++, p += 8)
		put64(p, args[i]);
	s->data = NULL;
	s->dlen = 0;
	if (dlen && ep->tr.buf_get &&
	    (uint32_t)(p - f) + dlen <= (ep->tr.kbuf_max ? ep->tr.kbuf_max : ep->tr.max_frame) &&
	    (s->kbuf = ep->tr.buf_get(ep->tr.ctx, &kf)) != UAM_NO_KBUF) {
		s->len = (uint32_t)(p - f);
		s->data = kf + s->len;
		s->dlen = dlen;
		memcpy(kf + s->len, data, dlen);
		return;
	}
	if (dlen)
		memcpy(p, data, dlen);
	s->len = (uint32_t)(p - f) + dlen;
}

/* The last frame of our op (a store's LAST fragment, a get's request) is
 * built: its answer may come once the peer has acknowledged seq. */
static void op_sent(struct uam_chan *ch, const struct uam_item *it, uint32_t seq)
{
	struct uam_op *op = uamp_op_find(ch->ep, (int)it->token);

	if (op && op->chan == ch && !op->done) {
		op->sent = true;
		op->last_seq = seq;
	}
}

/* Build the next frame of the head item into slot s with sequence seq.
 * Returns true when the item is used up. */
static bool build_frame(struct uam_chan *ch, struct uam_item *it, struct uam_tx_slot *s,
			uint32_t seq)
{
	uint8_t *f = s->buf, *p = f + UAM_HDR_LEN;

	s->data = NULL;
	s->dlen = 0;
	switch (it->type) {
	case UAM_T_REQUEST:
	case UAM_T_REPLY:
	case UAM_T_DONE:
		build_msg(ch, s, seq, it->type, it->handler, it->token, it->aux, it->args, it->nargs,
			  it->payload, it->dlen);
		return true;
	case UAM_T_GET_REQ:
		hdr_init(ch, f, it->type, 0, 1, 0, seq, it->token, it->aux, 0);
		put64(p, it->remote_off);
		put64(p + 8, it->len);
		put64(p + 16, it->local_off);
		put64(p + 24, it->local_region);
		s->len = UAM_HDR_LEN + UAM_GET_EXT + 8;
		op_sent(ch, it, seq);
		return true;
	case UAM_T_STORE:
	case UAM_T_GET_DATA: {
		uint64_t left = it->len - it->cursor, lroom = frag_room(ch, it, true), n;
		bool last = left <= lroom;

		if (!last && it->cursor && it->cursor <= cfrag_rel_max(ch->ep) && !ch->ep->full_frags) {
			/* A middle fragment: the compact header and the offset
			 * from the transfer's start; the receiver knows the
			 * rest from the first fragment.  No more than leaves
			 * the LAST fragment something (it keeps the full
			 * header, for the args): left > lroom, so n >= 1. */
			n = left - lroom < cfrag_room(ch) ? left - lroom : cfrag_room(ch);
			hdr_init_compact(ch, f, it->type, 0, 0, seq, it->token);
			put32(f + UAM_CF_OFF_REL, (uint32_t)it->cursor);
			s->data = it->src + it->cursor;
			s->dlen = (uint32_t)n;
			s->len = UAM_CF_HDR_LEN;
			it->cursor += n;
			return false;
		}
		n = last ? left : frag_room(ch, it, false);
		if (n > left)
			n = left;
		hdr_init(ch, f, it->type, last ? UAM_F_LAST : 0, last ? it->nargs : 0, it->handler,
			 seq, it->token, it->aux, (uint32_t)n);
		put64(p, it->base_off + it->cursor);
		put64(p + 8, it->base_off);
		put64(p + 16, it->len);
		p += UAM_FRAG_EXT;
		if (last)
			for (unsigned int i = 0; i < it->nargs; i++, p += 8)
				put64(p, it->args[i]);
		/* The data stays where it is (the caller keeps a store's
		 * source unchanged until it completes): no copy here. */
		s->data = n ? it->src + it->cursor : NULL;
		s->dlen = (uint32_t)n;
		s->len = (uint32_t)(p - f);
		it->cursor += n;
		if (last && it->type == UAM_T_STORE)
			op_sent(ch, it, seq);
		return last;
	}
	}
	return true;
}

/* Fill the window from the queue, then send every frame marked need_tx. */
UNET_HOT void uamp_push(struct uam_chan *ch)
{
	uint32_t w = window(ch), lim = ch->peer_credit < w ? ch->peer_credit : w, seq;
	uint64_t now, kb;

	if (ch->err)
		return;
	while (ch->head && ch->snd_next - ch->snd_una < lim) {
		struct uam_item *it = ch->head;
		struct uam_tx_slot *s = new_slot(ch);

		if (build_frame(ch, it, s, ch->snd_next)) {
			ch->head = it->next;
			if (!ch->head)
				ch->tail = NULL;
			if (it->counted)
				ch->nqueued--;
			else
				ch->npeer--;
			item_free(ch->ep, it);
		}
		s->state = SLOT_INFLIGHT;
		s->ntx = 0;
		mark_tx(ch, s, ch->snd_next);
		ch->snd_next++;
	}
	if (ch->head && !ch->stalled)
		ch->st.credit_stalls++;
	ch->stalled = ch->head != NULL;

	now = 0; /* read when a frame goes out: a clock read costs ~30 ns */
	seq = seq_diff(ch->tx_hint, ch->snd_una) > 0 ? ch->tx_hint : ch->snd_una;
	for (; seq != ch->snd_next; seq++) {
		struct uam_tx_slot *s = txs(ch, seq);

		if (!s->need_tx || s->state != SLOT_INFLIGHT)
			continue;
		if (!now)
			now = now_ns(ch->ep);
		if (is_compact(s->buf))
			put_ack_compact(ch, s->buf);
		else
			put_ack(ch, s->buf, NULL, NULL);
		/* A kept buffer goes out itself the first time, as a copy
		 * after: the first may still be on its way. */
		kb = s->ntx ? UAM_NO_KBUF : s->kbuf;
		if (xmit(ch, s->buf, s->len, s->data, s->dlen, kb) == -EAGAIN) {
			/* Transport full: the rest waits for the next push.
			 * The peer cannot answer what we could not send, so
			 * the time until then is not its silence. */
			ch->last_progress_ns = now;
			break;
		}
		/* Sent, or failed otherwise: lost, as on the wire. */
		s->kgen = ch->ep->tx_gen;
		if (s->ntx++)
			ch->st.retransmits++;
		if (seq == ch->snd_una && s->ntx == 1)
			ch->last_progress_ns = now; /* idle -> busy: the clock starts */
		s->need_tx = false;
		s->sent_ns = now;
		if (now < ch->min_sent_ns)
			ch->min_sent_ns = now;
		s->tx_order = ch->tx_count++;
		ch->last_tx_ns = now;
	}
	ch->tx_hint = seq; /* snd_next, or the frame the transport refused */
	if (!ch->ep->defer_tx)
		tx_flush(ch->ep);
}

void uamp_chan_frame_max(struct uam_chan *ch, uint32_t max)
{
	if (max < UAM_MIN_FRAME)
		max = UAM_MIN_FRAME;
	if (max < ch->frame_max)
		ch->frame_max = max;
	if (ch->frame > ch->frame_max)
		ch->frame = ch->frame_max;
}

void uamp_send_ack(struct uam_chan *ch)
{
	uint8_t *f = ch->scratch;
	uint32_t ext = 0;

	/* aux: the largest frame we take (UAM_BASE_FRAME) */
	hdr_init(ch, f, UAM_T_ACK, 0, 0, 0, 0, 0,
		 ch->ep->say_frame ? ch->ep->say_frame : ch->ep->tr.max_frame, 0);
	put_ack(ch, f, f + UAM_HDR_LEN, &ext);
	put32(f + UAM_OFF_DLEN, ext);
	if (uamp_raw_xmit(ch, f, UAM_HDR_LEN, ext ? f + UAM_HDR_LEN : NULL, ext, UAM_NO_KBUF) == 0)
		ch->st.tx_acks++;
	else
		ch->ack_due = true;
}

struct uam_item *uamp_item_new(struct uam_chan *ch, uint8_t type, bool counted, bool medium)
{
	struct uam_item *it;

	if (counted && ch->nqueued >= ch->ep->o.max_queued) {
		/* Out of credit long enough that the bounded queue filled. */
		return errno = EAGAIN, NULL;
	}
	it = item_alloc(ch->ep, medium);
	if (!it)
		return errno = ENOMEM, NULL;
	it->type = type;
	it->counted = counted;
	return it;
}

void uamp_item_queue(struct uam_chan *ch, struct uam_item *it)
{
	if (ch->tail)
		ch->tail->next = it;
	else
		ch->head = it;
	ch->tail = it;
	if (it->counted)
		ch->nqueued++;
	else
		ch->npeer++;
	uamp_push(ch);
}

/* A new item for a message (request, reply): handler, args, and a medium
 * message's payload (data, dlen: copied here). */
static struct uam_item *msg_item(struct uam_chan *ch, uint8_t type, bool counted,
				 unsigned int handler, const uint64_t *args, unsigned int nargs,
				 const void *data, uint32_t dlen)
{
	struct uam_item *it = uamp_item_new(ch, type, counted, dlen > 0);

	if (!it)
		return NULL;
	it->handler = (uint16_t)handler;
	it->nargs = (uint8_t)nargs;
	if (nargs)
		memcpy(it->args, args, nargs * 8u);
	if (dlen)
		memcpy(it->payload, data, dlen);
	it->dlen = dlen;
	return it;
}

static struct uam_item *short_item(struct uam_chan *ch, uint8_t type, bool counted,
				   unsigned int handler, const uint64_t *args, unsigned int nargs)
{
	return msg_item(ch, type, counted, handler, args, nargs, NULL, 0);
}

/*
 * The common case: nothing queued and the peer's credit allows one more
 * frame.  The message is built straight into its window slot and sent,
 * with no queue item (no allocation, one copy of a medium payload into
 * the slot).  Returns false, having done nothing, if it has to queue.
 */
UNET_HOT static bool send_direct(struct uam_chan *ch, uint8_t type, unsigned int handler,
				 uint32_t token, const uint64_t *args, unsigned int nargs,
				 const void *data, uint32_t dlen)
{
	uint32_t w = window(ch), lim = ch->peer_credit < w ? ch->peer_credit : w;
	struct uam_tx_slot *s;

	if (ch->head || ch->snd_next - ch->snd_una >= lim)
		return false;
	s = new_slot(ch);
	build_msg(ch, s, ch->snd_next, type, (uint16_t)handler, token, 0, args, nargs, data, dlen);
	s->state = SLOT_INFLIGHT;
	s->ntx = 0;
	mark_tx(ch, s, ch->snd_next);
	ch->snd_next++;
	uamp_push(ch);
	return true;
}

UNET_HOT static int check_args(unsigned int handler, const uint64_t *args, unsigned int nargs)
{
	if (handler >= UAM_MAX_HANDLERS || nargs > UAM_MAX_ARGS || (nargs && !args))
		return -EINVAL;
	return 0;
}

/* ---- Public calls that only need the protocol ---------------------------- */

/* A medium payload: (data, len) must fit one frame beside nargs
 * arguments (checked first: nargs <= UAM_MAX_ARGS). */
UNET_HOT static int check_payload(const struct uam_chan *ch, const void *data, size_t len,
				  unsigned int nargs)
{
	if (len && !data)
		return -EINVAL;
	if (len > medium_room(ch->ep, nargs))
		return -EMSGSIZE;
	/* The peer said it takes no frame this large, or the channel
	 * carries none (routable): it would be lost. */
	if (len > (ch->frame_said ? ch->frame : ch->frame_max) - UAM_C_HDR_LEN - nargs * 8u)
		return -EMSGSIZE;
	return 0;
}

UNET_HOT static int request(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
			    unsigned int nargs, const void *data, size_t len, uint32_t flag)
{
	struct uam_item *it;
	uint32_t tok;
	int err;

	if (!ch)
		return -EINVAL;
	if ((err = check_args(handler, args, nargs)) || (err = check_payload(ch, data, len, nargs)))
		return err;
	if (ch->err)
		return ch->err;
	tok = ch->next_token & ~CALL_TOKEN;
	if (send_direct(ch, UAM_T_REQUEST, handler, tok | flag, args, nargs, data, (uint32_t)len)) {
		ch->next_token++;
		return (int)tok;
	}
	it = msg_item(ch, UAM_T_REQUEST, true, handler, args, nargs, data, (uint32_t)len);
	if (!it)
		return -errno;
	ch->next_token++;
	it->token = tok | flag;
	uamp_item_queue(ch, it); /* may send and free it at once */
	return (int)tok;
}

UNET_HOT int uam_request(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
			 unsigned int nargs)
{
	return request(ch, handler, args, nargs, NULL, 0, 0);
}

UNET_HOT int uam_request_medium(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
				unsigned int nargs, const void *data, size_t len)
{
	return request(ch, handler, args, nargs, data, len, 0);
}

size_t uam_ep__medium_max(const struct uam_ep *ep)
{
	return ep ? medium_room(ep, UAM_MAX_ARGS) : 0;
}

size_t uam_ep__medium_max_args(const struct uam_ep *ep, unsigned int nargs)
{
	return ep && nargs <= UAM_MAX_ARGS ? medium_room(ep, nargs) : 0;
}

size_t uam_chan__medium_max_args(const struct uam_chan *ch, unsigned int nargs)
{
	return ch && nargs <= UAM_MAX_ARGS ? ch->frame - UAM_C_HDR_LEN - nargs * 8u : 0;
}

int uam_reply_medium(const struct uam_msg *req, unsigned int handler, const uint64_t *args,
		     unsigned int nargs, const void *data, size_t len)
{
	struct uam_item *it;
	struct uam_chan *ch;
	int err;

	if (!req || !req->chan)
		return -EINVAL;
	ch = req->chan;
	if (req != ch->ep->cur_req || req->kind != UAM_MSG_REQUEST || ch->ep->cur_replied)
		return -EPERM;
	if ((err = check_args(handler, args, nargs)) || (err = check_payload(ch, data, len, nargs)))
		return err;
	if (ch->err)
		return ch->err;
	ch->ep->cur_replied = true;
	if (send_direct(ch, UAM_T_REPLY, handler, req->token, args, nargs, data, (uint32_t)len))
		return 0;
	/* Not counted against max_queued: a reply must never fail for lack
	 * of room, or request handlers would have to deal with it. */
	it = msg_item(ch, UAM_T_REPLY, false, handler, args, nargs, data, (uint32_t)len);
	if (!it) {
		ch->ep->cur_replied = false;
		return -errno;
	}
	it->token = req->token;
	uamp_item_queue(ch, it);
	return 0;
}

int uam_reply(const struct uam_msg *req, unsigned int handler, const uint64_t *args,
	      unsigned int nargs)
{
	return uam_reply_medium(req, handler, args, nargs, NULL, 0);
}

int uamp_call_start(struct uam_chan *ch, unsigned int handler, const uint64_t *args,
		    unsigned int nargs, struct uam_msg *reply)
{
	int tok;

	if (!ch || !reply || ch->call_active)
		return -EINVAL;
	tok = request(ch, handler, args, nargs, NULL, 0, CALL_TOKEN);
	if (tok < 0)
		return tok;
	ch->call_active = true;
	ch->call_done = false;
	ch->call_token = (uint32_t)tok | CALL_TOKEN;
	ch->call_out = reply;
	return 0;
}

/* A counted item for an op (store, get) and the op it completes, with
 * the op's id as the item's token.  NULL with errno (EAGAIN: queue or
 * ops full, ENOMEM). */
static struct uam_item *op_item(struct uam_chan *ch, uint8_t type, unsigned int handler,
				const uint64_t *args, unsigned int nargs, uam_op_fn cb, void *ctx,
				struct uam_op **opp)
{
	struct uam_item *it = short_item(ch, type, true, handler, args, nargs);
	struct uam_op *op;

	if (!it)
		return NULL;
	op = op_new(ch->ep, ch, type, cb, ctx);
	if (!op) {
		item_free(ch->ep, it);
		errno = EAGAIN;
		return NULL;
	}
	it->token = (uint32_t)op->id;
	*opp = op;
	return it;
}

int uam_store(struct uam_chan *ch, const void *src, size_t len, uint32_t region, uint64_t offset,
	      unsigned int handler, const uint64_t *args, unsigned int nargs, uam_op_fn cb,
	      void *ctx)
{
	struct uam_item *it;
	struct uam_op *op;
	int err;

	if (!ch || (!src && len) || len > UINT64_MAX - offset)
		return -EINVAL;
	if ((err = check_args(handler, args, nargs)))
		return err;
	if (ch->err)
		return ch->err;
	it = op_item(ch, UAM_T_STORE, handler, args, nargs, cb, ctx, &op);
	if (!it)
		return -errno;
	it->aux = region;
	it->src = src;
	it->len = len;
	it->base_off = offset;
	uamp_item_queue(ch, it);
	return op->id;
}


int uam_get(struct uam_chan *ch, uint32_t remote_region, uint64_t remote_offset, size_t len,
	    uint32_t local_region, uint64_t local_offset, uam_op_fn cb, void *ctx)
{
	struct uam_region *r;
	struct uam_item *it;
	struct uam_op *op;

	if (!ch)
		return -EINVAL;
	/* Our own side is checked here, the peer's there: the data comes
	 * on ch, so the region must be one ch may write. */
	r = uamp_region_for(ch, local_region);
	if (!r || !(r->flags & UAM_REGION_WRITE) || local_offset > r->len ||
	    len > r->len - local_offset)
		return -EINVAL;
	if (ch->err)
		return ch->err;
	it = op_item(ch, UAM_T_GET_REQ, 0, NULL, 0, cb, ctx, &op);
	if (!it)
		return -errno;
	op->region = local_region;
	op->off = local_offset;
	op->len = len;
	it->aux = remote_region;
	it->remote_off = remote_offset;
	it->len = len;
	it->local_off = local_offset;
	it->local_region = local_region;
	uamp_item_queue(ch, it);
	return op->id;
}

/* ---- Handlers, channel state, stats -------------------------------------------------- */

int uam_ep__set_handler(struct uam_ep *ep, unsigned int idx, uam_handler_fn fn, void *ctx)
{
	if (!ep || idx >= UAM_MAX_HANDLERS)
		return -EINVAL;
	ep->h[idx].fn = fn;
	ep->h[idx].ctx = ctx;
	return 0;
}

int uam_chan__pause(struct uam_chan *ch)
{
	if (!ch)
		return -EINVAL;
	ch->paused = true;
	return 0;
}

int uam_chan__resume(struct uam_chan *ch)
{
	if (!ch)
		return -EINVAL;
	ch->paused = false;
	return 0;
}

int uam_chan__error(const struct uam_chan *ch)
{
	return ch ? ch->err : -EINVAL;
}

int uam_chan__stats(const struct uam_chan *ch, struct uam_stats *st)
{
	if (!ch || !st)
		return -EINVAL;
	*st = ch->st;
	return 0;
}

int uam_ep__stats(const struct uam_ep *ep, struct uam_stats *st)
{
	if (!ep || !st)
		return -EINVAL;
	*st = ep->closed;
	st->bad_frames += ep->bad_frames;
	for (const struct uam_chan *ch = ep->chans; ch; ch = ch->next)
		add_stats(st, &ch->st);
	return 0;
}
