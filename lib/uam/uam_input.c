/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_input.c - the receive path: a frame from the transport checked and
 * parsed, its acknowledgement and SACK taken (the send window advances,
 * round trips are sampled), the frame placed in its slot and delivered in
 * order (handlers, replies, store and get fragments into their regions),
 * the per-peer queue's bound kept.  A floor above the sending core
 * (uam_proto.c), which never calls it; the timers (uam_timers.c) are
 * above both.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uam/uam_proto.h"

/* The status of a DONE, as the peer put it on the wire, reported to the
 * application only as one of the few values the API names. */
static int done_status(uint32_t wire)
{
	if (wire == 0)
		return 0;
	if (wire == (uint32_t)-EFAULT)
		return -EFAULT;
	return -EPROTO;
}

/*
 * The op a peer's answer (DONE, GET_DATA) names by token: one of ch's own
 * (another channel's peer has no say over it), of the type that answer is
 * for, still running, and whose last frame the peer has acknowledged (it
 * cannot have answered before: its answer carries that ack, and take_ack
 * ran first).  A DONE sent early would otherwise let the application free
 * a store's source while its fragments are still queued.  NULL if none.
 */
static struct uam_op *op_answered(struct uam_chan *ch, uint32_t token, uint8_t type)
{
	struct uam_op *op = token <= INT32_MAX ? uamp_op_find(ch->ep, (int)token) : NULL;

	if (!op || op->done || op->chan != ch || op->type != type || !op->sent ||
	    seq_diff(ch->snd_una, op->last_seq) <= 0)
		return NULL;
	return op;
}

/* One round-trip sample (Karn: only of a frame sent once). */
UNET_HOT static void rtt_sample(struct uam_chan *ch, uint64_t r)
{
	if (!ch->have_rtt) {
		ch->srtt_ns = r;
		ch->rttvar_ns = r / 2;
		ch->have_rtt = true;
		return;
	}
	ch->rttvar_ns = (3 * ch->rttvar_ns + (ch->srtt_ns > r ? ch->srtt_ns - r : r - ch->srtt_ns)) / 4;
	ch->srtt_ns = (7 * ch->srtt_ns + r) / 8;
}

/* Frames past a known gap that make the SACK go out at once: every one
 * (at the end of its round) for windows under 128, as request/reply
 * traffic wants its loss evidence (test_loss_recovery); one in window/64
 * for a bulk window, whose spinning receiver takes a frame or two per
 * round and would otherwise send an ACK for every other fragment. */
static uint32_t sack_every(const struct uam_chan *ch)
{
	return ch->ep->o.window / 64 ? ch->ep->o.window / 64 : 1;
}

UNET_HOT static void run_handler(struct uam_chan *ch, const struct uam_msg *m)
{
	struct uam_ep *ep = ch->ep;

	if (!ep->h[m->handler].fn) {
		ch->st.no_handler++;
		return;
	}
	ep->progress++;
	ep->h[m->handler].fn(ep, m, ep->h[m->handler].ctx);
}

/* Queue an unsolicited control message (not counted against max_queued:
 * it answers the peer's traffic, which the peer's own bound limits). */
static void queue_done(struct uam_chan *ch, uint32_t token, int status)
{
	struct uam_item *it = uamp_item_new(ch, UAM_T_DONE, false, false);

	if (!it) {
		uamp_chan_fail(ch, -ENOMEM);
		return;
	}
	it->token = token;
	it->aux = (uint32_t)status;
	uamp_item_queue(ch, it);
}

/*
 * A store or get fragment as the wire has it, either header: f is the
 * frame (or, for one placed early, its header, extension and args only),
 * h its header in the full layout (frame_hdr: f itself for a full
 * header).  A compact fragment has no region, start or total: rel is its
 * offset from the transfer's start; off, base and total are 0.
 */
struct frag {
	uint8_t type;
	bool last, compact;
	uint32_t region, token, dlen;
	uint64_t off, base, total; /* full header */
	uint32_t rel;		   /* compact */
	const uint8_t *args, *data;
};

static void frag_parse(const uint8_t *f, const uint8_t *h, struct frag *fr)
{
	const uint8_t *p = f + UAM_HDR_LEN;

	*fr = (struct frag){ .type = h[UAM_OFF_TYPE], .last = h[UAM_OFF_FLAGS] & UAM_F_LAST,
			     .token = get32(h + UAM_OFF_TOKEN), .dlen = get32(h + UAM_OFF_DLEN) };
	if (is_compact_frag(f)) {
		fr->compact = true;
		fr->rel = get32(f + UAM_CF_OFF_REL);
		fr->data = f + UAM_CF_HDR_LEN;
		return;
	}
	fr->region = get32(f + UAM_OFF_AUX);
	fr->off = get64(p);
	fr->base = get64(p + 8);
	fr->total = get64(p + 16);
	fr->args = p + UAM_FRAG_EXT;
	fr->data = fr->args + (fr->last ? f[UAM_OFF_NARGS] * 8u : 0);
}

/* The region the transfer being received may write: registered for this
 * channel's peer (region_for) and writable, [base, base + total) inside it (as differences: nothing
 * wraps).  Looked up for each fragment: a handler may have unregistered
 * it meanwhile.  NULL if not. */
static struct uam_region *xfer_region(struct uam_chan *ch)
{
	struct uam_region *r = uamp_region_for(ch, ch->xfer.region);

	if (!r || !(r->flags & UAM_REGION_WRITE) || ch->xfer.base > r->len ||
	    ch->xfer.total > r->len - ch->xfer.base)
		return NULL;
	return r;
}

/*
 * One fragment of a store into our region, or of a get's data, in
 * sequence.  Everything the peer claims is checked before a byte is
 * written: the fragment continues the transfer where the last one ended,
 * stays within the total the transfer claims, and that lies in the region
 * (registered, writable: looked up again for each fragment, as a handler
 * may have unregistered it); get data must be what our get asked for.
 * Offsets are compared as differences, so nothing wraps.  A compact
 * fragment (a middle one) names the transfer by type and token only and
 * is held to the start, total and region its first fragment claimed and
 * we checked; with no transfer open it is dropped (bad_frames), as the
 * first fragment always has the full header.  Once a fragment is
 * refused, nothing more of that transfer is written (but for what
 * place_early wrote, inside the transfer's range).  Returns the
 * transfer's status so far: 0, -EFAULT (the region refused it), -EPROTO
 * (the peer is inconsistent).
 */
static int take_fragment(struct uam_chan *ch, const struct frag *fr, bool placed)
{
	struct uam_region *r;
	struct uam_op *op;
	uint64_t rel;

	if (fr->compact) {
		if (!ch->xfer.active) {
			ch->st.bad_frames++; /* nothing it could belong to */
			return -EPROTO;
		}
		if (fr->type != ch->xfer.type || fr->token != ch->xfer.token)
			ch->xfer.err = -EPROTO;
		if (ch->xfer.err)
			return ch->xfer.err;
		rel = fr->rel;
	} else {
		if (!ch->xfer.active) {
			/* The first fragment says what the transfer is. */
			ch->xfer.active = true;
			ch->xfer.type = fr->type;
			ch->xfer.err = 0;
			ch->xfer.region = fr->region;
			ch->xfer.token = fr->token;
			ch->xfer.base = ch->xfer.next = fr->base;
			ch->xfer.total = fr->total;
			if (fr->type == UAM_T_GET_DATA) {
				op = op_answered(ch, fr->token, UAM_T_GET_REQ);
				if (!op || op->region != fr->region || op->off != fr->base ||
				    op->len != fr->total)
					ch->xfer.err = -EPROTO;
			}
		} else if (fr->type != ch->xfer.type || fr->region != ch->xfer.region ||
			   fr->token != ch->xfer.token || fr->base != ch->xfer.base ||
			   fr->total != ch->xfer.total) {
			ch->xfer.err = -EPROTO;
		}
		if (fr->last)
			ch->xfer.active = false;
		if (ch->xfer.err)
			return ch->xfer.err;
		/* Invariant: base <= next: an offset below base is not
		 * where the transfer goes on. */
		if (fr->off != ch->xfer.next)
			return ch->xfer.err = -EPROTO;
		rel = fr->off - ch->xfer.base;
	}
	/* Invariant: next - base <= total.  Exactly where the last one
	 * ended, within the total; the LAST one ends it. */
	if (rel != ch->xfer.next - ch->xfer.base || fr->dlen > ch->xfer.total - rel ||
	    (fr->last && fr->dlen != ch->xfer.total - rel))
		return ch->xfer.err = -EPROTO;
	r = xfer_region(ch);
	if (!r)
		return ch->xfer.err = -EFAULT;
	/* placed: written when it came early (place_early), checked now */
	if (fr->dlen && !placed)
		memcpy(r->base + ch->xfer.next, fr->data, fr->dlen);
	ch->xfer.next += fr->dlen;
	return 0;
}

/*
 * A fragment that came early (behind a hole) of the transfer being
 * received: its data goes straight into the region, so that only its
 * header waits in the reorder slot, and a receiver at loss (where most
 * fragments wait behind some hole) copies each fragment once, not twice.
 * Only a fragment of the transfer whose first fragment was delivered and
 * passed (same type and token, and for a full header the same region,
 * start and total: the fragments of one transfer are consecutive frames,
 * so nothing of another transfer lies between, and the order of writes
 * is kept), whose data lies inside the transfer, past what was written in
 * order, with the region still registered and writable.  A compact one
 * is placed by its offset from the start the transfer claimed.  Its
 * continuity is checked when its turn comes (take_fragment); if that
 * fails, the transfer fails, and what was placed stays (inside the range
 * the transfer claimed, in a region the peer may write).  With the first
 * fragment lost, no transfer is open: everything behind it waits whole
 * in its slot.  Returns true if placed, having copied the frame's first
 * *hl bytes (all but the data) to buf.
 */
static bool place_early(struct uam_chan *ch, const uint8_t *f, const uint8_t *h, uint32_t len,
			uint8_t *buf, uint32_t *hl)
{
	uint8_t type = h[UAM_OFF_TYPE];
	struct uam_region *r;
	struct frag fr;
	uint64_t rel;

	/* h: the header input decoded (frame_hdr): a request or reply is
	 * never placed. */
	if ((type != UAM_T_STORE && type != UAM_T_GET_DATA) || !ch->xfer.active || ch->xfer.err ||
	    type != ch->xfer.type)
		return false;
	frag_parse(f, h, &fr);
	if (!fr.dlen || fr.token != ch->xfer.token)
		return false;
	if (fr.compact) {
		rel = fr.rel;
	} else {
		if (fr.region != ch->xfer.region || fr.base != ch->xfer.base ||
		    fr.total != ch->xfer.total || fr.off < ch->xfer.base)
			return false;
		rel = fr.off - fr.base;
	}
	/* Inside the transfer (as differences: nothing wraps), past what
	 * has been written in order. */
	if (rel < ch->xfer.next - ch->xfer.base || rel > ch->xfer.total ||
	    fr.dlen > ch->xfer.total - rel)
		return false;
	r = xfer_region(ch);
	if (!r)
		return false;
	*hl = len - fr.dlen; /* frame_hdr checked: header, extension, args, data */
	memcpy(r->base + ch->xfer.base + rel, fr.data, fr.dlen);
	memcpy(buf, f, *hl);
	return true;
}

/* One frame f, in order, exactly once: do what it says.  h is its header
 * in the full layout and p what follows it, as frame_hdr gave them (input
 * checked the frame). */
UNET_HOT static void deliver(struct uam_chan *ch, const uint8_t *f, const uint8_t *h,
			     const uint8_t *p, bool placed)
{
	struct uam_ep *ep = ch->ep;
	uint8_t type = h[UAM_OFF_TYPE], nargs = h[UAM_OFF_NARGS];
	struct uam_msg m = { .chan = ch, .handler = get16(h + UAM_OFF_HANDLER), .nargs = nargs,
			     .token = get32(h + UAM_OFF_TOKEN) };
	uint32_t aux = get32(h + UAM_OFF_AUX);

	/* REQUEST, REPLY, and the middle STORE and GET_DATA fragments come
	 * compact: the other types' code reads f, which is h for them. */
	switch (type) {
	case UAM_T_REQUEST:
	case UAM_T_REPLY:
		for (unsigned int i = 0; i < nargs; i++, p += 8)
			m.args[i] = get64(p);
		/* A medium message's payload: handed over in place, in the
		 * receive buffer (or the reorder slot it waited in). */
		m.data_len = get32(h + UAM_OFF_DLEN);
		m.data = m.data_len ? p : NULL;
		if (type == UAM_T_REPLY) {
			m.kind = UAM_MSG_REPLY;
			ch->st.replies++;
			if (ch->call_active && m.token == ch->call_token) {
				/* The caller reads it after we return: the
				 * receive buffer will be gone by then. */
				if (m.data_len) {
					memcpy(ch->call_data, m.data, m.data_len);
					m.data = ch->call_data;
				}
				*ch->call_out = m;
				ch->call_done = true;
				ep->progress++;
				return;
			}
			if (m.token & CALL_TOKEN) {
				ch->st.late_replies++; /* its uam_call gave up */
				return;
			}
			run_handler(ch, &m);
			return;
		}
		m.kind = UAM_MSG_REQUEST;
		ch->st.requests++;
		ep->cur_req = &m;
		ep->cur_replied = false;
		run_handler(ch, &m);
		ep->cur_req = NULL;
		return;
	case UAM_T_STORE:
	case UAM_T_GET_DATA: {
		struct frag fr;
		struct uam_op *op;
		int err;

		frag_parse(f, h, &fr);
		err = take_fragment(ch, &fr, placed);
		if (!fr.last)
			return; /* a compact fragment is never the LAST */
		if (type == UAM_T_GET_DATA) {
			ch->st.gets++;
			op = op_answered(ch, m.token, UAM_T_GET_REQ);
			if (op)
				uamp_op_complete(ep, op, err);
			else
				ch->st.bad_frames++; /* not a get of ours: nothing was written */
			return;
		}
		ch->st.stores++;
		if (err) {
			if (err == -EFAULT)
				ch->st.region_errors++;
			else
				ch->st.bad_frames++;
		} else {
			m.kind = UAM_MSG_STORE;
			for (unsigned int i = 0; i < nargs; i++)
				m.args[i] = get64(fr.args + 8 * i);
			m.region = aux;
			m.offset = ch->xfer.base;
			m.len = ch->xfer.total;
			run_handler(ch, &m);
		}
		queue_done(ch, m.token, err);
		return;
	}
	case UAM_T_GET_REQ: {
		uint64_t roff = get64(p), glen = get64(p + 8), loff = get64(p + 16);
		uint32_t lreg = (uint32_t)get64(p + 24);
		struct uam_region *r = uamp_region_for(ch, aux);
		struct uam_item *it;

		if (!r || !(r->flags & UAM_REGION_READ) || roff > r->len || glen > r->len - roff) {
			ch->st.region_errors++;
			queue_done(ch, m.token, -EFAULT);
			return;
		}
		it = uamp_item_new(ch, UAM_T_GET_DATA, false, false);
		if (!it) {
			uamp_chan_fail(ch, -ENOMEM);
			return;
		}
		it->token = m.token;
		it->aux = lreg;
		it->src = r->base + roff;
		it->len = glen;
		it->base_off = loff;
		uamp_item_queue(ch, it);
		return;
	}
	case UAM_T_DONE: {
		/* A store's completion, or the refusal of a get (whose
		 * success is its data, never a DONE). */
		int status = done_status(aux);
		struct uam_op *op = op_answered(ch, m.token, UAM_T_STORE);

		if (!op && status)
			op = op_answered(ch, m.token, UAM_T_GET_REQ);
		if (op)
			uamp_op_complete(ep, op, status);
		else
			ch->st.bad_frames++;
		return;
	}
	}
}

/* SACK bits for frames first, first + 1, ...: mark what the peer holds
 * (it will not be resent), and note the highest in *hi.  Returns false
 * once a bit names a frame we never sent (the rest are bogus). */
UNET_HOT static bool take_sack(struct uam_chan *ch, uint32_t first, uint64_t bits, uint32_t *hi,
			       bool *have_hi)
{
	for (; bits; bits &= bits - 1) {
		uint32_t seq = first + (uint32_t)__builtin_ctzll(bits);
		struct uam_tx_slot *s;

		if (seq_diff(seq, ch->snd_next) >= 0)
			return false;
		s = txs(ch, seq);
		if (s->state == SLOT_INFLIGHT) {
			s->state = SLOT_SACKED; /* never sent again */
			s->need_tx = false;
			uamp_slot_unkeep(ch, s);
		}
		*hi = seq;
		*have_hi = true;
	}
	return true;
}

/*
 * A new frame from the peer that it may have sent before our oldest
 * unacknowledged frame (s) reached it: the acknowledgement of s cannot
 * overtake it, so however long such frames take to come (a window of
 * the previous get's data queued at our receiver, while our next
 * GET_REQ waits for its ack behind it) is not the peer's silence about
 * s.  Each restarts the retransmission and tail-loss probe timers
 * (queue_ns, rto_base_ns), as an ack of new data would (RFC 6298 5.3),
 * from a round trip ago: s's ack may come right behind this frame, and a
 * round trip after it is when a probe is due if it does not.  (From now,
 * the replies to calls sent just before s, which are such frames too,
 * put off the recovery of a lost s by up to a round trip: 16 calls in
 * flight at 10% loss ran 1% slower over 20 seeds.)
 *
 * Which frames: until the peer has s (or a frame we sent after it: the
 * link keeps order), it has no ack beyond the one s carried and may send
 * no frame at or past that ack plus the credit we give (window); one
 * that does was sent after s arrived (or after a later frame of ours
 * overtook a lost s), and restarts nothing.  So a lost s is waited for no
 * longer than a window of the peer's frames takes to arrive.  Frames
 * past the highest seq received only: a duplicate or a hole filled says
 * nothing about now.  The backoff stays, and the dead-peer clock
 * (last_progress_ns) runs on: this is no evidence that s arrived.
 */
UNET_HOT static void queue_progress(struct uam_chan *ch, uint32_t seq)
{
	const struct uam_tx_slot *s = txs(ch, ch->snd_una);
	uint32_t acked;

	if (ch->snd_una == ch->snd_next || seq_diff(seq, ch->rcv_high) < 0 ||
	    s->state != SLOT_INFLIGHT || !s->ntx || s->need_tx)
		return;
	/* the ack s carried at its last transmission (put_ack); 0 if we had
	 * nothing from the peer then (rcv_next before its session came: a
	 * get's second GET_REQ, sent with the first), which acknowledged
	 * nothing of its stream, as its start would say */
	acked = get32(s->buf + (is_compact(s->buf) ? UAM_C_OFF_ACK : UAM_OFF_ACK));
	if (!acked && seq_diff(seq, window(ch)) >= 0)
		acked = uamp_isn(ch->ep, ch->peer_session);
	if (seq_diff(seq, acked + window(ch)) < 0) {
		uint64_t now = now_ns(ch->ep);

		if (now > ch->srtt_ns && now - ch->srtt_ns > ch->queue_ns)
			ch->queue_ns = now - ch->srtt_ns;
	}
}

/* The largest frame the peer takes, from its ACK's aux (0: it does not
 * say, as a peer from before jumbo frames: UAM_BASE_FRAME stays).  Our
 * fragments go in frames of at most that, and never more than our own
 * (the channel's frame_max) nor less than UAM_MIN_FRAME: a peer can shrink only the
 * frames sent to itself, and never below what a fragment needs. */
static void take_frame_size(struct uam_chan *ch, uint32_t said)
{
	uint32_t own = ch->frame_max;

	if (!said)
		return;
	if (said < UAM_MIN_FRAME)
		said = UAM_MIN_FRAME;
	ch->frame = said < own ? said : own;
	ch->frame_said = true;
}

/* What the peer says about our sends: cumulative ack, SACK (and an ACK
 * frame's extended SACK: len is the frame's checked length), credit. */
UNET_HOT static void take_ack(struct uam_chan *ch, const uint8_t *f, uint32_t len)
{
	uint32_t ack = get32(f + UAM_OFF_ACK), w = window(ch), hi = 0;
	bool have_hi = false;

	/* More than our window would overrun our slots; less than
	 * MIN_CREDIT is no window a peer may have. */
	ch->peer_credit = get16(f + UAM_OFF_CREDIT);
	if (ch->peer_credit > w)
		ch->peer_credit = w;
	if (ch->peer_credit < MIN_CREDIT)
		ch->peer_credit = MIN_CREDIT;
	/* An ack outside what we sent is stale or bogus: ignore it. */
	if (seq_diff(ack, ch->snd_una) < 0 || seq_diff(ack, ch->snd_next) > 0)
		return;
	if (ack != ch->snd_una) {
		struct uam_tx_slot *oldest = txs(ch, ch->snd_una);
		uint64_t now = now_ns(ch->ep), from;

		/* The oldest frame this ack covers, if sent only once (a
		 * repeat's ack could be for either copy: Karn): its wait is
		 * the round trip plus however long the peer gathered acks (a
		 * bulk receiver acks every quarter window), which is what the
		 * timeout must wait out; the newest frame's would miss it.
		 * Not the wait behind what the peer had sent before it had
		 * ours: queue_progress waits that out, and a round trip
		 * grown by a window of the peer's data would hold off the
		 * recovery of a lost request by as much once that is through. */
		from = oldest->sent_ns > ch->queue_ns ? oldest->sent_ns : ch->queue_ns;
		if (oldest->state == SLOT_INFLIGHT && oldest->ntx == 1 && now >= from)
			rtt_sample(ch, now - from);
		for (; ch->snd_una != ack; ch->snd_una++) {
			struct uam_tx_slot *s = txs(ch, ch->snd_una);

			s->state = SLOT_FREE;
			uamp_slot_unkeep(ch, s);
		}
		ch->last_progress_ns = now;
		ch->backoff = 0;
		ch->tlp_sent = false;
		ch->rto_us = rto_base(ch);
	}
	if (f[UAM_OFF_TYPE] != UAM_T_ACK)
		queue_progress(ch, get32(f + UAM_OFF_SEQ));
	if (take_sack(ch, ack + 1, get64(f + UAM_OFF_SACK), &hi, &have_hi) &&
	    f[UAM_OFF_TYPE] == UAM_T_ACK) {
		/* frame_len checked: len - UAM_HDR_LEN is whole words */
		for (uint32_t k = 0; UAM_HDR_LEN + 8 * k < len; k++)
			if (!take_sack(ch, ack + 65 + 64 * k, get64(f + UAM_HDR_LEN + 8 * k), &hi,
				       &have_hi))
				break;
	}
	/* Fast retransmit: a hole sent before something that has arrived
	 * was most likely lost.  Resent once per such evidence (its new
	 * transmission comes after the SACKed frame's).  By transmission
	 * order, not time: a burst leaves within one clock reading. */
	if (have_hi) {
		uint32_t hi_order = txs(ch, hi)->tx_order;

		for (uint32_t seq = ch->snd_una; seq != hi; seq++) {
			struct uam_tx_slot *s = txs(ch, seq);

			if (s->state == SLOT_INFLIGHT && !s->need_tx && s->ntx &&
			    seq_diff(s->tx_order, hi_order) < 0) {
				mark_tx(ch, s, seq);
				/* If this repeat is lost too, nothing may
				 * follow it to tell: a probe watches it. */
				ch->tlp_sent = false;
			}
		}
	}
}

/*
 * The exact length a frame with header f has, from its fields, or 0 if
 * they are malformed.  Every length and count on the wire is checked here,
 * once, before anything reads past the header: deliver() and the receive
 * slots (max_frame bytes each) rely on it.  64-bit, so a dlen near 2^32
 * cannot wrap the sum.
 */
static uint64_t frame_len(const uint8_t *f)
{
	uint8_t type = f[UAM_OFF_TYPE], flags = f[UAM_OFF_FLAGS], nargs = f[UAM_OFF_NARGS];
	uint64_t dlen = get32(f + UAM_OFF_DLEN);
	bool last = flags & UAM_F_LAST;

	if (f[UAM_OFF_VERSION] != UAM_WIRE_VERSION || nargs > UAM_MAX_ARGS ||
	    get16(f + UAM_OFF_HANDLER) >= UAM_MAX_HANDLERS || (flags & ~UAM_F_LAST))
		return 0;
	switch (type) {
	case UAM_T_ACK:
		/* dlen: extended SACK, whole words */
		return nargs || last || dlen % 8 || dlen > UAM_SACK_EXT_MAX ? 0 : UAM_HDR_LEN + dlen;
	case UAM_T_REQUEST:
	case UAM_T_REPLY:
		/* dlen: a medium message's payload, after the args */
		return last ? 0 : UAM_HDR_LEN + nargs * 8u + dlen;
	case UAM_T_DONE:
		return dlen || last ? 0 : UAM_HDR_LEN + nargs * 8u;
	case UAM_T_GET_REQ:
		return dlen || last || nargs != 1 ? 0 : UAM_HDR_LEN + UAM_GET_EXT + 8;
	case UAM_T_STORE:
	case UAM_T_GET_DATA:
		/* Only the last fragment carries the handler's args. */
		if (!last && nargs)
			return 0;
		return UAM_HDR_LEN + UAM_FRAG_EXT + (last ? nargs * 8u : 0) + dlen;
	}
	return 0;
}

/*
 * A received frame's header in the full layout, and (body, if not NULL)
 * where what follows the header starts (args, extension, data): f itself
 * for a full header; a compact one decoded into hb, its dlen the length
 * that remains after the header and the args, its credit in frames, no
 * SACK.  NULL if the frame is malformed: longer than a receive slot, of no kind we know,
 * with more args than a message may have, or not exactly as long as its
 * header says (a compact frame: shorter than its header and args).  Every
 * length and count on the wire is checked here, before anything reads
 * past the header.
 */
UNET_HOT static const uint8_t *frame_hdr(const struct uam_ep *ep, const uint8_t *f, uint32_t len,
					 uint8_t hb[UAM_HDR_LEN], const uint8_t **body)
{
	uint32_t hl;
	uint8_t nargs;

	if (!len || len > ep->tr.max_frame)
		return NULL;
	if (!is_compact(f)) {
		if (len < UAM_HDR_LEN || frame_len(f) != len)
			return NULL;
		if (body)
			*body = f + UAM_HDR_LEN;
		return f;
	}
	if (is_compact_frag(f)) {
		/* A middle fragment: no args, no LAST flag, at least one
		 * byte of data, its two unused bytes 0. */
		if (len <= UAM_CF_HDR_LEN || f[UAM_CF_OFF_ZERO] || f[UAM_CF_OFF_ZERO + 1])
			return NULL;
		nargs = 0;
		hl = UAM_CF_HDR_LEN;
	} else {
		nargs = len >= UAM_C_HDR_LEN ? f[UAM_C_OFF_NARGS] : 0;
		if (len < UAM_C_HDR_LEN || nargs > UAM_MAX_ARGS || len < UAM_C_HDR_LEN + nargs * 8u)
			return NULL;
		hl = UAM_C_HDR_LEN + nargs * 8u;
	}
	memset(hb, 0, UAM_HDR_LEN);
	hb[UAM_OFF_VERSION] = UAM_WIRE_VERSION;
	hb[UAM_OFF_TYPE] = f[UAM_C_OFF_KIND] & ~UAM_C_FORMAT;
	hb[UAM_OFF_NARGS] = nargs;
	put16(hb + UAM_OFF_HANDLER, f[UAM_C_OFF_HANDLER]); /* a fragment's: 0 */
	put16(hb + UAM_OFF_CREDIT, (uint16_t)(f[UAM_C_OFF_CREDIT] * UAM_C_CREDIT_UNIT));
	/* Big-endian on both sides: copied as they are. */
	memcpy(hb + UAM_OFF_SESSION, f + UAM_C_OFF_SESSION, 4);
	memcpy(hb + UAM_OFF_SEQ, f + UAM_C_OFF_SEQ, 4);
	memcpy(hb + UAM_OFF_ACK, f + UAM_C_OFF_ACK, 4);
	memcpy(hb + UAM_OFF_TOKEN, f + UAM_C_OFF_TOKEN, 4);
	put32(hb + UAM_OFF_DLEN, len - hl);
	if (body) /* the args; a fragment's data (frag_parse reads it) */
		*body = f + hl - nargs * 8u;
	return hb;
}

/*
 * A frame whose session is not the one we know on this channel (there is
 * no handshake: see docs/uam.md).  Every channel the peer opens has a
 * fresh session, and its stream starts at uamp_isn(session).  Returns 1: the peer's session, to adopt (we had
 * none, and this is the start of its stream, or acknowledges frames we
 * sent); -1: a new stream from a peer that opened its channel again (we
 * had another session); 0: anything else, a frame still on its way from
 * an earlier channel of the peer (or the first frames of the peer's
 * stream, before its start came, resent later): dropped, so it can
 * neither kill the channel nor become its session.
 */
static int session_check(const struct uam_chan *ch, const uint8_t *f, uint8_t type,
			 uint32_t session, uint32_t seq)
{
	bool start = type != UAM_T_ACK && seq == uamp_isn(ch->ep, session);
	uint32_t ack = get32(f + UAM_OFF_ACK);

	if (!session)
		return 0; /* never given out */
	if (!ch->peer_session)
		return start || (seq_diff(ack, ch->snd_una) > 0 && seq_diff(ack, ch->snd_next) <= 0);
	return start ? -1 : 0;
}

/*
 * The peer's frames that may queue an item of ours (a request's reply, a
 * get's data, the DONE of a store): h in the full layout.  While the
 * channel has max_peer_queued such items queued (the peer leaves our
 * frames unacknowledged), they are not taken: held in their window slot,
 * unacknowledged, until the peer's acks drain the queue (drain_held).
 * What a peer can make us hold is then the queue's bound plus the
 * window's slots, however long it stays silent.
 */
static bool queues_for_peer(const uint8_t *h)
{
	uint8_t type = h[UAM_OFF_TYPE];

	return type == UAM_T_REQUEST || type == UAM_T_GET_REQ ||
	       (type == UAM_T_STORE && (h[UAM_OFF_FLAGS] & UAM_F_LAST));
}


/* Whether the frame (h) must wait in its slot at rcv_next: the peer
 * queue is full and it would add to it, or the application paused the
 * channel (uam_chan__pause) and it is a request. */
static bool must_wait(const struct uam_chan *ch, const uint8_t *h)
{
	return (ch->paused && h[UAM_OFF_TYPE] == UAM_T_REQUEST) ||
	       (peer_full(ch) && queues_for_peer(h));
}

/* Deliver the frames held from rcv_next on, in order, as long as none
 * must wait for the peer queue (above). */
UNET_HOT void uamp_drain_held(struct uam_chan *ch)
{
	uint8_t hb[UAM_HDR_LEN];
	const uint8_t *h, *body;

	while (ch->rx_held && !ch->err && rxs(ch, ch->rcv_next)->present) {
		struct uam_rx_slot *r = rxs(ch, ch->rcv_next);

		h = frame_hdr(ch->ep, r->buf, r->len, hb, &body);
		if (must_wait(ch, h)) {
			/* stays, at rcv_next; counted once: every caller
			 * comes with rcv_next not yet held back (input's
			 * end only while the queue has room) */
			ch->st.peer_queue_full++;
			break;
		}
		r->present = false;
		ch->rx_held--;
		ch->rcv_next++;
		deliver(ch, r->buf, h, body, r->placed);
	}
	if (seq_diff(ch->rcv_next, ch->rcv_high) > 0)
		ch->rcv_high = ch->rcv_next;
}

UNET_HOT static void input(struct uam_chan *ch, const uint8_t *f, uint32_t len)
{
	uint32_t w = window(ch), seq, session;
	uint8_t type, hb[UAM_HDR_LEN];
	const uint8_t *h, *body;
	int32_t d;

	ch->st.rx_frames++;
	/* Longer than a receive slot, or not exactly what its header says
	 * (the core gives the U-Net payload length, no padding).  h: the
	 * header in the full layout, whichever form came; the frame itself
	 * (f) is what is held or delivered. */
	h = frame_hdr(ch->ep, f, len, hb, &body);
	if (!h)
		goto bad;
	type = h[UAM_OFF_TYPE];

	if (ch->err)
		return;
	session = get32(h + UAM_OFF_SESSION);
	seq = get32(h + UAM_OFF_SEQ);
	if (!session || session != ch->peer_session) {
		switch (session_check(ch, h, type, session, seq)) {
		case 1:
			ch->peer_session = session;
			ch->rcv_next = ch->rcv_high = uamp_isn(ch->ep, session);
			break;
		case -1:
			/* The peer opened its channel anew: what we promised
			 * the old one is void. */
			uamp_chan_fail(ch, -ECONNRESET);
			return;
		default:
			goto bad; /* from an earlier channel of the peer */
		}
	}
	take_ack(ch, h, len); /* an ACK (extended SACK) is never compact: h is f */

	if (type == UAM_T_ACK) {
		ch->heard_ns = now_ns(ch->ep);
		take_frame_size(ch, get32(h + UAM_OFF_AUX));
		goto out;
	}
	/* Owed, not sent yet: it rides on our next frame if one leaves
	 * before the delay runs out (see chan_timers). */
	if (!ch->ack_due)
		ch->ack_due_ns = now_ns(ch->ep);
	ch->ack_due = true;
	ch->rx_unacked++;
	d = seq_diff(seq, ch->rcv_next);
	if (d < 0) {
		ch->st.dup_dropped++; /* our ack was lost: it goes out again */
		ch->ack_now = true;
	} else if ((uint32_t)d >= w) {
		ch->st.out_of_window++;
	} else if (d > 0) {
		struct uam_rx_slot *r = rxs(ch, seq);

		/* A frame past the highest we had opens a new gap: the SACK
		 * goes back at the end of this round, so the sender resends
		 * the hole after one round trip (fast retransmit), as TCP's
		 * immediate duplicate ack.  Later frames past the same gap
		 * tell the sender nothing new: they wait for the usual
		 * cadence (an ack per batch of them cost a bulk sender at 1%
		 * loss one ACK to process for every two fragments). */
		if (seq_diff(seq, ch->rcv_high) > 0 || ++ch->ooo_unacked >= sack_every(ch))
			ch->ack_now = true;
		if (seq_diff(seq + 1, ch->rcv_high) > 0)
			ch->rcv_high = seq + 1;
		if (r->present) {
			ch->st.dup_dropped++;
			ch->ack_now = true; /* a repeat of what we SACKed */
		} else {
			uint32_t hl;

			r->placed = place_early(ch, f, h, len, r->buf, &hl);
			if (!r->placed)
				memcpy(r->buf, f, len);
			r->len = len; /* the frame's, as checked (data or not) */
			r->present = true;
			ch->rx_held++;
			ch->st.out_of_order++;
		}
	} else if (rxs(ch, seq)->present) {
		/* held at rcv_next for the peer queue: a repeat */
		ch->st.dup_dropped++;
		ch->ack_now = true;
	} else if (must_wait(ch, h)) {
		/* Our queue of what the peer asked for is full, or the
		 * channel is paused: not taken (nor acknowledged) until its
		 * acks drain the queue, or uam_chan__resume. */
		struct uam_rx_slot *r = rxs(ch, seq);

		memcpy(r->buf, f, len);
		r->len = len;
		r->placed = false;
		r->present = true;
		ch->rx_held++;
		ch->st.peer_queue_full++;
		if (seq_diff(seq + 1, ch->rcv_high) > 0)
			ch->rcv_high = seq + 1;
	} else {
		/* Filling a hole moves the ack over what waited behind it:
		 * the sender gets that credit back now (TCP acks a segment
		 * that fills a gap at once, RFC 5681). */
		if (ch->rx_held)
			ch->ack_now = true;
		ch->rcv_next++;
		deliver(ch, f, h, body, false);
		/* Then whatever was waiting for this one (checked when it
		 * came; a placed fragment's slot keeps its header, extension
		 * and args, all frame_hdr and deliver read). */
		uamp_drain_held(ch);
	}
	/* Owed now, not at the end of the poll: uamp_round_acks (a handler's
	 * reply may have carried it meanwhile: ack_due is false then). */
	if (ack_owed_now(ch))
		ch->ep->acks_owed = true;
out:
	/* Acks freed window space (for queued items), SACKs marked frames
	 * to resend (mark_tx lowers tx_hint): otherwise, as for a request
	 * answered by nothing yet, push has nothing to do. */
	if (ch->head || ch->tx_hint != ch->snd_next)
		uamp_push(ch);
	/* The acks may have drained the peer queue below its bound: a
	 * frame held for it goes now. */
	if (ch->rx_held && rxs(ch, ch->rcv_next)->present && !ch->paused && !peer_full(ch)) {
		uamp_drain_held(ch);
		if (ack_owed_now(ch))
			ch->ep->acks_owed = true;
	}
	return;
bad:
	ch->st.bad_frames++;
}

UNET_HOT void uamp_input(struct uam_chan *ch, const uint8_t *f, uint32_t len)
{
	struct uam_ep *ep = ch->ep;

	/* Handlers run in here and may close ch (or another channel): it
	 * stays allocated, failed, until we are out. */
	uamp_enter(ep);
	input(ch, f, len);
	uamp_leave(ep);
}
