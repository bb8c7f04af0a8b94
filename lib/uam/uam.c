/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * uam.c - U-Net Active Messages over a unet endpoint: the transport the
 * protocol (uam_proto.c) sends through, the receive loop, and the waiting
 * calls.  Everything the protocol decides is in uam_proto.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/hot.h"
#include "core/internal.h"
#include "core/layer.h"
#include "uam/uam_impl.h"

#define RX_BATCH 64
#define RX_ROUNDS 8 /* batches per poll, so a flood cannot starve timers */
/* Idle polls between timer runs: a spinning poll that finds nothing need
 * not read the clock each time (timers are 20 us and more, an idle poll
 * some 50 ns), so it comes back to the receive ring sooner. */
#define IDLE_TICK 8
/* Sent frames reaped in bulk once this many are out (see uam_poll). */
#define REAP_AT 64

UNET_HOT static uint64_t mono_ns(void *ctx)
{
	(void)ctx;
	return unet_mono_ns();
}

/* Frames in pieces went to the ring at once (unet_xmit_pieces): their
 * kick is owed to the flush, one for all of them. */
static void pieces_kick(struct uam_ep *ep)
{
	if (ep->pieces_owed) {
		ep->pieces_owed = false;
		unet_layer_kick(ep->uep);
	}
}

/* Hand the frames built so far to the send queue with one kick.  Frames
 * the queue refuses (full even after reaping completions: rare, the
 * kernel sends in copy mode at the kick) are lost, as on the wire, and
 * resent by the protocol's timers. */
UNET_HOT static void unet_flush(void *ctx)
{
	struct uam_ep *ep = ctx;
	int n;

	if (!ep->ntxb) {
		pieces_kick(ep);
		return;
	}
	n = unet_endpoint__send_batch(ep->uep, ep->txb, ep->ntxb);
	ep->tx_gen++; /* the batch is the kernel's or lost: see slot_unkeep */
	if (n == -EMSGSIZE) {
		/* A frame built before its routable channel's route lowered
		 * the MTU, now too large for it: one at a time, so that only
		 * such frames are lost (resent, and failing their channel at
		 * its timeout), not the whole batch with them. */
		for (uint32_t i = 0; i < ep->ntxb; i++) {
			if (unet_endpoint__send_batch(ep->uep, &ep->txb[i], 1) == 1)
				continue;
			if (!ep->txb_kept[i])
				unet_endpoint__buf_free(ep->uep, ep->txb[i].buf);
			ep->tx_lost++;
		}
		ep->ntxb = 0;
		pieces_kick(ep);
		return;
	}
	if (n < 0)
		n = 0;
	/* A refused kept buffer stays the protocol's: its repeats copy it. */
	for (uint32_t i = (uint32_t)n; i < ep->ntxb; i++)
		if (!ep->txb_kept[i])
			unet_endpoint__buf_free(ep->uep, ep->txb[i].buf);
	ep->tx_lost += ep->ntxb - (uint32_t)n;
	ep->ntxb = 0;
	pieces_kick(ep); /* nothing left to pay if they share the batch's queue */
}

/* A frame larger than one send buffer (a jumbo MTU): written straight
 * into a chain of buffers and queued on the ring now, behind the frames
 * batched before it (flushed first, to keep the order they were built
 * in); its kick is owed to the next flush. */
static int unet_xmit_pieces(struct uam_ep *ep, void *handle, const void *hdr, uint32_t hlen,
			    const void *data, uint32_t dlen)
{
	int err;

	/* Not the owed kick: a bulk sender's chains then leave with one
	 * kick per flush, not one each. */
	if (ep->ntxb)
		unet_flush(ep);
	err = unet_layer_queue_pieces(handle, hdr, hlen, data, dlen);
	if (err == -EAGAIN) {
		/* The ring or the pool may be waiting for a kick. */
		unet_layer_kick(ep->uep);
		err = unet_layer_queue_pieces(handle, hdr, hlen, data, dlen);
	}
	if (!err)
		ep->pieces_owed = true;
	else if (err != -EAGAIN)
		ep->tx_lost++;
	return err;
}

/* Direct-access U-Net: the frame is assembled in a segment buffer, its
 * data copied once from where it lies, and queued for the next flush.
 * -EAGAIN (no free buffer) makes the protocol retry later. */
UNET_HOT static int unet_xmit(void *ctx, void *handle, const void *hdr, uint32_t hlen,
			      const void *data, uint32_t dlen)
{
	struct uam_ep *ep = ctx;
	uint64_t buf;
	uint8_t *p;

	if (hlen + dlen > ep->tr.kbuf_max)
		return unet_xmit_pieces(ep, handle, hdr, hlen, data, dlen);
	if (ep->ntxb == sizeof(ep->txb) / sizeof(ep->txb[0]))
		unet_flush(ep);
	buf = unet_endpoint__buf_alloc(ep->uep); /* reaps if the pool is dry */
	if (buf == UNET_NO_BUF && ep->ntxb) {
		/* The pool may be waiting for the batch's own kick. */
		unet_flush(ep);
		buf = unet_endpoint__buf_alloc(ep->uep);
	}
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	p = unet_endpoint__buf_payload(ep->uep, buf);
	memcpy(p, hdr, hlen);
	if (dlen)
		memcpy(p + hlen, data, dlen);
	ep->txb_kept[ep->ntxb] = false;
	ep->txb[ep->ntxb++] = (struct unet_send_desc){ .channel = handle, .buf = buf,
						       .len = hlen + dlen };
	return 0;
}

/* A segment buffer the protocol keeps for a medium message (uam_impl.h,
 * struct uam_transport): the core gives it back to us at completion
 * instead of to the pool.  None beyond kept_max, nor when the pool is
 * dry: the protocol then copies into its slot. */
UNET_HOT static uint64_t unet_buf_get(void *ctx, uint8_t **frame)
{
	struct uam_ep *ep = ctx;
	uint64_t buf;

	if (ep->kept >= ep->kept_max)
		return UAM_NO_KBUF;
	buf = unet_endpoint__buf_alloc(ep->uep);
	if (buf == UNET_NO_BUF)
		return UAM_NO_KBUF;
	if (unet_layer_buf_keep(ep->uep, buf)) {
		unet_endpoint__buf_free(ep->uep, buf);
		return UAM_NO_KBUF;
	}
	ep->kept++;
	*frame = unet_endpoint__buf_payload(ep->uep, buf);
	return buf;
}

/* The kept buffer itself, with its header put in front of the data. */
UNET_HOT static int unet_xmit_buf(void *ctx, void *handle, const void *hdr, uint32_t hlen,
				  uint64_t kbuf, uint32_t dlen)
{
	struct uam_ep *ep = ctx;

	if (ep->ntxb == sizeof(ep->txb) / sizeof(ep->txb[0]))
		unet_flush(ep);
	memcpy(unet_endpoint__buf_payload(ep->uep, kbuf), hdr, hlen);
	ep->txb_kept[ep->ntxb] = true;
	ep->txb[ep->ntxb++] = (struct unet_send_desc){ .channel = handle, .buf = kbuf,
						       .len = hlen + dlen };
	return 0;
}

UNET_HOT static void unet_buf_put(void *ctx, uint64_t kbuf)
{
	struct uam_ep *ep = ctx;

	if (unet_layer_buf_unkeep(ep->uep, kbuf) == 0)
		ep->kept--;
	else /* the core says it is no kept buffer of ours: a bug */
		unet_log(UNET_LOG_ERROR, "uam: kept buffer %#llx: not kept",
			 (unsigned long long)kbuf);
}

struct uam_ep *uam_ep__create(struct unet_endpoint *uep, const struct uam_ep_opts *opts)
{
	struct unet_endpoint_info info;
	struct uam_transport tr = { .xmit = unet_xmit,
				    .now_ns = mono_ns,
				    .flush = unet_flush,
				    .buf_get = unet_buf_get,
				    .xmit_buf = unet_xmit_buf,
				    .buf_put = unet_buf_put };
	struct uam_ep *ep;
	int err;

	if (!uep) {
		errno = EINVAL;
		return NULL;
	}
	err = unet_endpoint__info(uep, &info);
	if (err) {
		errno = -err;
		return NULL;
	}
	/* Frames follow the link's MTU (max_payload); one larger than a send
	 * buffer goes as a chain of them (unet_xmit_pieces), and a kept
	 * buffer holds one send buffer's worth. */
	tr.max_frame = info.multi_buffer ? info.max_payload : info.buf_payload;
	tr.kbuf_max = info.buf_payload;
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		errno = ENOMEM;
		return NULL;
	}
	ep->uep = uep;
	/* Half the buffers not kept on the FILL rings may be kept by
	 * medium messages in flight. */
	if (info.nframes > info.rx_buffers * info.nqueues)
		ep->kept_max = (info.nframes - info.rx_buffers * info.nqueues) / 2;
	tr.ctx = ep;
	err = uamp_ep_init(ep, opts, &tr);
	if (err) {
		free(ep);
		errno = -err;
		return NULL;
	}
	ep->uep = uep;
	return ep;
}

void uam_ep__destroy(struct uam_ep *ep)
{
	if (!ep)
		return;
	/* Let acknowledgements and last frames already queued leave. */
	if (ep->uep) {
		unet_flush(ep);
		unet_endpoint__flush(ep->uep, 50);
	}
	uamp_ep_fini(ep);
	free(ep);
}

struct uam_chan *uam_chan__open(struct uam_ep *ep, struct unet_channel *uch)
{
	struct unet_endpoint_info info;
	struct uam_chan *ch;

	if (!ep || !uch || unet_channel__endpoint(uch) != ep->uep ||
	    unet_endpoint__info(ep->uep, &info)) {
		errno = EINVAL;
		return NULL;
	}
	for (struct uam_chan *c = ep->chans; c; c = c->next)
		if (c->handle == uch) {
			errno = EEXIST;
			return NULL;
		}
	/*
	 * The credits we give are only honest if the receive queue can hold
	 * them: every channel's window, and as much again for repeats that
	 * arrive while the application does not poll, must fit in the
	 * frames the endpoint keeps on a FILL ring (one per piece of a frame
	 * larger than a chunk).
	 */
	if ((uint64_t)(ep->nchans + 1) * ep->o.window * 2 *
		    unet_layer_msg_pieces(ep->uep, ep->tr.max_frame) > info.rx_buffers) {
		unet_log(UNET_LOG_ERROR,
			 "uam: %u channels of window %u in frames of %u bytes need more than %u receive buffers",
			 ep->nchans + 1, ep->o.window, ep->tr.max_frame, info.rx_buffers);
		errno = ENOSPC;
		return NULL;
	}
	ch = uamp_chan_new(ep, uch);
	/* A routable channel's frames are one send buffer less UDP/IP, and
	 * within its route's MTU (unet_channel__max_payload); every
	 * fragment and medium message of the channel is cut to that. */
	if (ch)
		uamp_chan_frame_max(ch, unet_channel__max_payload(uch));
	return ch;
}

void uam_chan__close(struct uam_chan *ch)
{
	uamp_chan_free(ch);
}

struct unet_channel *uam_chan__unet(const struct uam_chan *ch)
{
	return ch ? ch->handle : NULL;
}

UNET_HOT static struct uam_chan *chan_of(struct uam_ep *ep, const struct unet_channel *uch)
{
	for (struct uam_chan *c = ep->chans; c; c = c->next)
		if (c->handle == uch)
			return c;
	return NULL;
}

UNET_HOT int uam_poll(struct uam_ep *ep)
{
	struct unet_recv_desc d[RX_BATCH];
	unsigned int pending;
	int n, got = 0;

	if (!ep)
		return -EINVAL;
	ep->progress = 0;
	n = unet_endpoint__recv(ep->uep, d, RX_BATCH);
	/*
	 * A spinning application's usual poll: nothing came, nothing waits
	 * to leave, and the timers and the reaping are not due for a look
	 * (IDLE_TICK).  Back to the receive ring at once: how long an idle
	 * poll takes is how late, on average half of it, a frame is seen.
	 */
	if (!n && ++ep->idle_polls < IDLE_TICK && !ep->ntxb)
		return 0;
	/* A handler may close a UAM channel mid-batch: it is unlinked at
	 * once (so the rest of the batch finds no channel for its frames,
	 * as after any close) and freed when the poll is over.  What the
	 * batch sends (replies, acks) leaves with one kick, at the end. */
	uamp_enter(ep);
	uamp_defer(ep);
	ep->clock_hold++;
	for (int round = 1;; round++) {
		if (n < 0) {
			if (!--ep->clock_hold)
				ep->clock_ok = false;
			uamp_undefer(ep);
			uamp_leave(ep);
			return n;
		}
		for (int i = 0; i < n; i++) {
			struct uam_chan *ch = chan_of(ep, d[i].channel);

			if (ch)
				uamp_input(ch, d[i].data, d[i].len);
			else
				ep->bad_frames++;
		}
		if (n)
			unet_endpoint__release(ep->uep, d, (unsigned int)n);
		got += n;
		/* Acks owed now (a bulk receiver's credit, the SACK of a new
		 * gap) leave with this round's replies, one kick, while the
		 * next rounds are still being drained: the sender gets its
		 * credit back a ring's worth of frames earlier. */
		if (ep->acks_owed)
			uamp_round_acks(ep);
		if (ep->ntxb)
			unet_flush(ep);
		if (n < RX_BATCH || round == RX_ROUNDS)
			break;
		n = unet_endpoint__recv(ep->uep, d, RX_BATCH);
	}
	if (got || ep->idle_polls >= IDLE_TICK) {
		ep->idle_polls = 0;
		/* A routable channel's route may lower its MTU while it is
		 * open: the frames we build from here on follow it. */
		for (struct uam_chan *c = ep->chans; c; c = c->next)
			uamp_chan_frame_max(c, unet_channel__max_payload(c->handle));
		uamp_tick(ep);
	}
	if (!--ep->clock_hold)
		ep->clock_ok = false;
	uamp_undefer(ep);
	unet_flush(ep); /* even while corked: a poll sends what is queued */
	/*
	 * Sent frames back to the pool, and a kick for any the kernel has
	 * not taken yet (copy mode sends only on a kick: complete kicks what
	 * is still queued).  Not at every poll: raw U-Net reaps when it runs
	 * short, and a poll that delivered a message would otherwise do this
	 * before the application can answer it, on both sides of every round
	 * trip.  Once REAP_AT frames are out, or at a poll that found nothing
	 * (an idle tick, which a spinning loop reaches within IDLE_TICK empty
	 * polls, while it waits for the answer anyway); wait_until reaps
	 * before it sleeps, and unet_endpoint__buf_alloc when the pool runs
	 * dry.
	 */
	pending = unet_endpoint__tx_pending(ep->uep);
	if (pending >= REAP_AT || (!got && pending))
		unet_endpoint__complete(ep->uep);
	uamp_leave(ep);
	return ep->progress;
}

static int64_t ms_left(uint64_t deadline)
{
	uint64_t now = mono_ns(NULL);

	return now >= deadline ? 0 : (int64_t)((deadline - now + 999999) / 1000000);
}

/* Block until progress, *done (if given) turns true, or the deadline
 * (UINT64_MAX: none).  Returns progress (> 0), 0 at the deadline, -errno. */
static int wait_until(struct uam_ep *ep, uint64_t deadline, const bool *done)
{
	for (;;) {
		uint64_t t;
		int n, sleep_ms, r;

		n = uam_poll(ep);
		if (n || (done && *done))
			return n;
		if (deadline != UINT64_MAX && !ms_left(deadline))
			return 0;
		/* Sleep until a frame comes, the next retransmission is due,
		 * or the deadline; with sends queued in copy mode, only 1 ms:
		 * they need the kicks uam_poll gives. */
		t = uamp_next_timer_ns(ep);
		sleep_ms = t == UINT64_MAX ? 1000 : (int)((t + 999999) / 1000000);
		if (unet_endpoint__tx_pending(ep->uep)) {
			unet_endpoint__complete(ep->uep);
			/* what is left, the kernel still holds */
			if (unet_endpoint__tx_pending(ep->uep))
				sleep_ms = 1;
		}
		if (deadline != UINT64_MAX && ms_left(deadline) < sleep_ms)
			sleep_ms = (int)ms_left(deadline);
		if (sleep_ms > 0) {
			r = unet_endpoint__wait(ep->uep, sleep_ms);
			if (r < 0)
				return r;
		}
	}
}

static uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX : mono_ns(NULL) + (uint64_t)timeout_ms * 1000000;
}

int uam_wait(struct uam_ep *ep, int timeout_ms)
{
	if (!ep)
		return -EINVAL;
	return wait_until(ep, deadline_of(timeout_ms), NULL);
}

int uam_call(struct uam_chan *ch, unsigned int handler, const uint64_t *args, unsigned int nargs,
	     struct uam_msg *reply, int timeout_ms)
{
	uint64_t deadline = deadline_of(timeout_ms);
	struct uam_ep *ep;
	int err;

	if (!ch || !reply || ch->closing)
		return -EINVAL;
	ep = ch->ep;
	/* A handler run while we wait may close ch: it stays allocated (and
	 * failed, so the wait ends) until we are done with it. */
	uamp_enter(ep);
	/* A full queue is waited out (within the timeout), not returned. */
	while ((err = uamp_call_start(ch, handler, args, nargs, reply)) == -EAGAIN) {
		if (deadline != UINT64_MAX && !ms_left(deadline)) {
			err = -ETIME;
			break;
		}
		err = wait_until(ep, deadline, NULL);
		if (err < 0)
			break;
		err = -EAGAIN;
	}
	if (err) {
		uamp_leave(ep);
		return err;
	}
	while (!ch->call_done) {
		err = wait_until(ep, deadline, &ch->call_done);
		if (err < 0)
			break;
		if (!ch->call_done && deadline != UINT64_MAX && !ms_left(deadline)) {
			err = -ETIME;
			break;
		}
	}
	ch->call_active = false;
	if (ch->call_done)
		err = ch->err ? ch->err : 0;
	else
		err = err < 0 ? err : -ETIME;
	uamp_leave(ep);
	return err;
}

int uam_op__wait(struct uam_ep *ep, int op, int timeout_ms)
{
	uint64_t deadline = deadline_of(timeout_ms);
	struct uam_op *o = NULL;
	int err;

	if (!ep)
		return -EINVAL;
	for (uint32_t i = 0; i < ep->o.max_ops; i++)
		if (op > 0 && ep->ops[i].id == op)
			o = &ep->ops[i];
	if (!o || o->cb)
		return -ENOENT;
	while (!o->done) {
		err = wait_until(ep, deadline, &o->done);
		if (err < 0)
			return err;
		if (!o->done && deadline != UINT64_MAX && !ms_left(deadline))
			return -ETIME;
	}
	err = o->status;
	o->id = 0;
	return err;
}
