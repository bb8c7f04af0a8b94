/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam_timers.c - the channels' timers: the delayed acknowledgement, the
 * tail-loss probe and the retransmission timeout, the channel's failure
 * when the peer stays silent, and the next deadline the caller must wake
 * for.  Above the protocol core (uam_proto.c), which never calls it: the
 * endpoint (uam.c) runs it from its poll and its waits.
 */
#include <errno.h>
#include <stdint.h>

#include "uam/uam_proto.h"

/* Least tail-loss probe timeout: below it a probe would race the ack. */
#define PTO_MIN_NS 20000

/* The tail-loss probe timeout (RFC 8985's PTO): two smoothed round
 * trips; never beyond the retransmission timeout.  A probe that was not
 * needed costs one frame, which the peer drops as a duplicate and
 * acknowledges at once. */
static uint64_t pto_ns(const struct uam_chan *ch)
{
	uint64_t t = 2 * ch->srtt_ns, rto = (uint64_t)ch->rto_us * 1000;

	if (t < PTO_MIN_NS)
		t = PTO_MIN_NS;
	return t < rto ? t : rto;
}

/*
 * An explicit ACK costs a frame (a system call in copy mode) that a reply
 * sent a moment later would carry for free, so it waits: until the owed
 * ack is ack_delay_us old, or a quarter of the window is unacknowledged
 * (ack_every: a bulk sender gets its credit back in steps, while it still
 * has three quarters of a window to send, instead of stalling on it).
 */
static bool ack_overdue(const struct uam_chan *ch, uint64_t now)
{
	return ack_owed_now(ch) ||
	       (ch->ack_due && now - ch->ack_due_ns >= (uint64_t)ch->ep->o.ack_delay_us * 1000);
}

void uamp_round_acks(struct uam_ep *ep)
{
	if (!ep->acks_owed)
		return;
	ep->acks_owed = false;
	for (struct uam_chan *ch = ep->chans; ch; ch = ch->next)
		if (!ch->err && ack_owed_now(ch))
			uamp_send_ack(ch);
}

/*
 * What a tail-loss probe resends: the newest frame, whose acknowledgement
 * (the peer acks a duplicate at once) SACKs what arrived; if the peer
 * already SACKed that one, the hole is known and the oldest frame still
 * unanswered goes again itself (its fast retransmit was lost).  NULL if
 * nothing is waiting for an answer.
 */
static struct uam_tx_slot *tlp_frame(struct uam_chan *ch)
{
	struct uam_tx_slot *s = txs(ch, ch->snd_next - 1);

	if (ch->snd_una == ch->snd_next)
		return NULL;
	if (s->state == SLOT_INFLIGHT)
		return s->ntx && !s->need_tx ? s : NULL;
	for (uint32_t seq = ch->snd_una; seq != ch->snd_next; seq++) {
		s = txs(ch, seq);
		if (s->state == SLOT_INFLIGHT)
			return s->ntx && !s->need_tx ? s : NULL;
	}
	return NULL;
}

/*
 * When a frame sent at sent_ns can have timed out: rto after it left, and
 * never sooner than rto after the last acknowledgement that advanced the
 * window (RFC 6298 5.3: the timer restarts on every ack of new data).  A
 * receiver draining a window of full frames acknowledges every quarter
 * window or 50 us: timing each frame from its own send
 * would resend the whole window while the acks still come.  Nor while
 * frames the peer sent before it had ours are still coming (queue_ns:
 * our ack is behind them).  The tail-loss probe counts from here too.
 */
static uint64_t rto_base_ns(const struct uam_chan *ch, uint64_t sent_ns)
{
	uint64_t t = sent_ns > ch->last_progress_ns ? sent_ns : ch->last_progress_ns;

	return t > ch->queue_ns ? t : ch->queue_ns;
}

static void chan_timers(struct uam_chan *ch, uint64_t now)
{
	bool expired = false;

	if (ch->err)
		return;
	/*
	 * The peer is declared dead after timeout_ms of silence while it
	 * owes us an ack: only once the oldest frame it has not acked has
	 * left (first transmissions go out in order, so nothing has if that
	 * one has not), counted from then or the last ack, whichever is
	 * later, and restarted whenever a send met a full transport (push).
	 */
	if (ch->snd_una != ch->snd_next && txs(ch, ch->snd_una)->ntx) {
		/* An ACK that acknowledges nothing new still says the peer
		 * runs: it holds our frames (uam_chan__pause, its peer queue
		 * full) and answers our repeats.  Silence is no frame at all. */
		uint64_t since = ch->heard_ns > ch->last_progress_ns ? ch->heard_ns
								     : ch->last_progress_ns;

		if (now - since > (uint64_t)ch->ep->o.timeout_ms * 1000000) {
			uamp_chan_fail(ch, -ETIMEDOUT);
			return;
		}
		/*
		 * Tail-loss probe: the newest frame has had no answer for
		 * two round trips.  If it (or a frame before it) was lost,
		 * nothing sent after it can show the gap, so resend it once:
		 * its acknowledgement SACKs what arrived and the holes go by
		 * fast retransmit, long before the timeout.
		 */
		if (!ch->tlp_sent && ch->have_rtt && !ch->backoff &&
		    now - rto_base_ns(ch, ch->last_tx_ns) >= pto_ns(ch)) {
			struct uam_tx_slot *s = tlp_frame(ch);

			if (s) {
				s->need_tx = true;
				ch->tx_hint = ch->snd_una; /* push finds it */
				ch->tlp_sent = true;
			}
		}
		/*
		 * Timeout: resend the oldest frame whose timer ran out (the
		 * tail of a burst was the tail-loss probe's to recover, and
		 * the ack of this repeat re-arms it); each further expiry
		 * doubles the timeout, so a peer that stopped polling gets a
		 * probe now and then, not a flood while its ring fills.
		 */
		/* The walk only when a frame could have expired: none was
		 * sent before min_sent_ns (a lower bound: sends only add
		 * later times), so until then there is nothing to find. */
		if (rto_base_ns(ch, ch->min_sent_ns) > now ||
		    now - rto_base_ns(ch, ch->min_sent_ns) >= (uint64_t)ch->rto_us * 1000) {
			uint64_t min_sent = UINT64_MAX;

			for (uint32_t seq = ch->snd_una; seq != ch->snd_next; seq++) {
				struct uam_tx_slot *s = txs(ch, seq);

				if (s->state != SLOT_INFLIGHT)
					continue;
				if (!s->need_tx && s->ntx &&
				    now - rto_base_ns(ch, s->sent_ns) >= (uint64_t)ch->rto_us * 1000) {
					/* The oldest only (as TCP): its ack SACKs
					 * what arrived, and the other holes go by
					 * fast retransmit, where resending the whole
					 * window would double a stream that was
					 * only slow to be acknowledged. */
					mark_tx(ch, s, seq);
					expired = true;
					min_sent = 0; /* a partial walk: no bound */
					break;
				}
				if (ch->backoff) {
					min_sent = 0;
					break; /* backing off: only the oldest can expire */
				}
				if (!s->need_tx && s->ntx && s->sent_ns < min_sent)
					min_sent = s->sent_ns;
			}
			/* Frames marked now get their time when push sends them. */
			ch->min_sent_ns = min_sent;
		}
		if (expired) {
			ch->st.timeouts++;
			ch->backoff++;
			ch->rto_us = ch->rto_us * 2 > ch->ep->o.rto_max_us ? ch->ep->o.rto_max_us
									  : ch->rto_us * 2;
		}
	}
	uamp_push(ch);
	if (ack_overdue(ch, now))
		uamp_send_ack(ch);
	if (ch->held_len) {
		/* The reorder hook never holds a frame past the poll. */
		uamp_raw_xmit(ch, ch->held, ch->held_len, NULL, 0, UAM_NO_KBUF);
		ch->held_len = 0;
	}
}

UNET_HOT void uamp_tick(struct uam_ep *ep)
{
	uint64_t now = 0;

	/* A timeout runs op callbacks, which may close channels, this one
	 * or the next: they stay allocated until the walk is over. */
	uamp_enter(ep);
	for (struct uam_chan *ch = ep->chans; ch; ch = ch->next) {
		/* An idle channel has no timer to run: spinning on an idle
		 * endpoint then reads no clock. */
		/* Nothing in flight, queued or held back: no timer, only a
		 * delayed ack can be due (a request's, until its reply
		 * carries it). */
		bool idle = ch->snd_una == ch->snd_next && !ch->head && !ch->held_len;

		/* a frame held for the peer queue or a pause that is over
		 * (uam_chan__resume): it goes now, not at the peer's repeat */
		if (ch->rx_held && !ch->err && rxs(ch, ch->rcv_next)->present && !ch->paused &&
		    !peer_full(ch)) {
			uamp_drain_held(ch);
			if (ack_owed_now(ch))
				ep->acks_owed = true;
		}
		if (ch->err || (idle && !ch->ack_due))
			continue;
		if (!now)
			now = now_ns(ep);
		if (!idle)
			chan_timers(ch, now);
		else if (ack_overdue(ch, now))
			uamp_send_ack(ch);
	}
	uamp_leave(ep);
}

uint64_t uamp_next_timer_ns(struct uam_ep *ep)
{
	uint64_t now = now_ns(ep), best = UINT64_MAX;

	for (struct uam_chan *ch = ep->chans; ch; ch = ch->next) {
		uint64_t t;

		if (!ch->err && ch->ack_now)
			best = now;
		if (!ch->err && ch->ack_due &&
		    ch->ack_due_ns + (uint64_t)ep->o.ack_delay_us * 1000 < best)
			best = ch->ack_due_ns + (uint64_t)ep->o.ack_delay_us * 1000;
		if (ch->err || ch->snd_una == ch->snd_next)
			continue;
		t = ch->last_progress_ns + (uint64_t)ep->o.timeout_ms * 1000000;
		if (!ch->tlp_sent && ch->have_rtt && !ch->backoff && tlp_frame(ch) &&
		    rto_base_ns(ch, ch->last_tx_ns) + pto_ns(ch) < t)
			t = rto_base_ns(ch, ch->last_tx_ns) + pto_ns(ch);
		for (uint32_t seq = ch->snd_una; seq != ch->snd_next; seq++) {
			const struct uam_tx_slot *s = txs(ch, seq);

			if (s->state != SLOT_INFLIGHT)
				continue;
			if (s->need_tx || !s->ntx) {
				t = now; /* waiting for transport room */
				break;
			}
			if (rto_base_ns(ch, s->sent_ns) + (uint64_t)ch->rto_us * 1000 < t)
				t = rto_base_ns(ch, s->sent_ns) + (uint64_t)ch->rto_us * 1000;
		}
		if (t < best)
			best = t;
	}
	if (best == UINT64_MAX)
		return best;
	return best > now ? best - now : 0;
}
