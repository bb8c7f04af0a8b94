/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * datapath.c - the U-Net queues: send (TX ring + completions), receive (RX
 * ring), free (FILL ring), and notification.  No system call happens here
 * except to kick a ring the kernel asked to be kicked (need_wakeup), and
 * to sleep in unet_endpoint__wait.
 *
 * Ring memory ordering is libxdp's: xsk_ring_prod__submit publishes the
 * descriptors with a release store, xsk_ring_cons__peek reads the producer
 * with an acquire load, so descriptor contents are visible before the
 * index that hands them over.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/objects.h"
#include "core/txmd.h"
#include "proto/unetd_proto.h"

#define RX_BATCH 64

/* Frames handed to the application start at a frame boundary. */
static bool frame_aligned(const struct unet_endpoint *ep, uint64_t buf)
{
	return buf != UNET_NO_BUF && !(buf & (ep->frame_size - 1));
}

/*
 * The epoll set behind unet_endpoint__fd() is made only when it is first
 * needed: an fd in an epoll set keeps a waiter on every socket, so each
 * received frame would then pay for a wake-up call into epoll even while
 * the application spins (seen as sock_def_readable and ep_poll_callback
 * in profiles of spinning round trips).
 */
int unet_endpoint_epoll(struct unet_endpoint *ep)
{
	if (ep->epoll_fd >= 0)
		return ep->epoll_fd;
	/* The application will sleep on the fd on its own: the daemon must
	 * notify after every batch from now on, and recv drains the
	 * eventfd. */
	if (ep->emulated) {
		ep->fd_mode = true;
		__atomic_store_n(&ep->region->client_sleeping, 1, __ATOMIC_SEQ_CST);
	}
	ep->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ep->epoll_fd < 0)
		return -errno;
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(ep->epoll_fd, EPOLL_CTL_ADD, ep->q[i].fd, &ev)) {
			int err = -errno;

			close(ep->epoll_fd);
			ep->epoll_fd = -1;
			return err;
		}
	}
	return ep->epoll_fd;
}


void unet_refill(struct unet_endpoint *ep)
{
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		struct unet_queue *q = &ep->q[i];
		uint32_t want, got, idx;

		if (q->in_fill >= ep->fill_target)
			continue;
		want = ep->fill_target - q->in_fill;
		if (want > ep->pool.nfree)
			want = ep->pool.nfree;
		if (!want)
			break;
		got = xsk_ring_prod__reserve(&q->fill, want, &idx);
		for (uint32_t k = 0; k < got; k++)
			*xsk_ring_prod__fill_addr(&q->fill, idx + k) =
				unet_pool_get(&ep->pool, UNET_FRAME_FILL);
		xsk_ring_prod__submit(&q->fill, got);
		q->in_fill += got;
		/* Zero-copy drivers may sleep until poked when the free
		 * queue ran dry. */
		if (got && ep->need_wakeup && !ep->emulated && xsk_ring_prod__needs_wakeup(&q->fill))
			recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
}

/* Whether buf is a buffer the application holds (from buf_alloc). */
static bool app_holds(const struct unet_endpoint *ep, uint64_t buf)
{
	int64_t idx;

	return frame_aligned(ep, buf) && (idx = unet_pool_index(&ep->pool, buf)) >= 0 &&
	       ep->pool.owner[idx] == UNET_FRAME_APP;
}

int unet_layer_buf_keep(struct unet_endpoint *ep, uint64_t buf)
{
	return ep && frame_aligned(ep, buf) ? unet_pool_keep(&ep->pool, buf) : -EINVAL;
}

int unet_layer_buf_unkeep(struct unet_endpoint *ep, uint64_t buf)
{
	return ep && frame_aligned(ep, buf) ? unet_pool_unkeep(&ep->pool, buf) : -EINVAL;
}

uint8_t *unet_layer_buf(struct unet_endpoint *ep, uint64_t buf)
{
	if (!ep || !app_holds(ep, buf)) {
		errno = EINVAL;
		return NULL;
	}
	return (uint8_t *)ep->segment + buf;
}


/* Check and queue a layer's frame on txq without kicking, its
 * checksum asked of the device when csum is set.  Returns 0 or what
 * unet_layer_xmit returns. */
static int layer_queue(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
		       uint32_t flen, const struct unet_tx_csum *csum)
{
	uint32_t opts = 0;
	struct unet_queue *q;
	uint32_t idx;

	if (!ep || txq >= ep->nqueues || !unet_layer_buf(ep, buf))
		return -EINVAL;
	/* With room for TX metadata the kernel refuses a frame that
	 * starts closer to its chunk's start than the room (txmd.c). */
	if (off < ep->txmd_len)
		return -EINVAL;
	if (flen < UNET_ETH_HLEN || flen > ep->mtu + UNET_ETH_HLEN ||
	    (uint64_t)off + flen > ep->frame_size - XDP_PACKET_HEADROOM)
		return -EMSGSIZE;
	if (ep->dead)
		return ep->dead;
	q = &ep->q[txq];
	if (unet_tx_reserve(ep, q, &idx))
		return -EAGAIN;
	if (csum)
		opts = unet_txmd_csum(ep, buf + off, csum->start, csum->offset);
	unet_tx_submit(ep, q, idx, buf, buf + off, flen, opts);
	ep->tx_msgs++;
	return 0;
}

int unet_layer_xmit(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
		    uint32_t flen)
{
	int err = layer_queue(ep, txq, buf, off, flen, NULL);

	if (!err)
		unet_tx_kick(ep, &ep->q[txq]);
	return err;
}

int unet_layer_queue(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
		     uint32_t flen)
{
	int err = layer_queue(ep, txq, buf, off, flen, NULL);

	if (!err)
		ep->q[txq].tx_owed++;
	return err;
}

bool unet_layer_tx_csum(const struct unet_endpoint *ep, uint32_t off)
{
	return ep && ep->tx_csum && off >= ep->txmd_len;
}

int unet_layer_xmit_csum(struct unet_endpoint *ep, uint32_t txq, uint64_t buf, uint32_t off,
			 uint32_t flen, const struct unet_tx_csum *csum)
{
	int err;

	if (!csum || !unet_layer_tx_csum(ep, off) || (uint32_t)csum->start + csum->offset + 2 > flen)
		return -EINVAL;
	err = layer_queue(ep, txq, buf, off, flen, csum);
	if (!err)
		unet_tx_kick(ep, &ep->q[txq]);
	return err;
}

/* Per thread (layer.h); read by tx_ring.c's completion reaper too. */
__thread bool unet_kicks_held;

void unet_layer_hold_kicks(bool on)
{
	unet_kicks_held = on;
}

void unet_layer_kick(struct unet_endpoint *ep)
{
	if (unet_kicks_held)
		return; /* owed: paid when the hold ends (layer.h) */
	for (uint32_t i = 0; ep && i < ep->nqueues; i++) {
		struct unet_queue *q = &ep->q[i];

		if (q->tx_owed)
			unet_tx_kick(ep, q); /* repeats until the queue is empty (copy mode) */
	}
}


int unet_endpoint__flush(struct unet_endpoint *ep, int timeout_ms)
{
	int64_t deadline;

	if (!ep)
		return -EINVAL;
	deadline = unet_mono_ms() + timeout_ms;
	while (unet_endpoint__tx_pending(ep)) {
		for (uint32_t i = 0; i < ep->nqueues; i++)
			if (ep->q[i].tx_pending)
				unet_tx_kick(ep, &ep->q[i]);
		if (unet_endpoint__complete(ep))
			continue;
		/* Frames queued on a dead link never complete. */
		if (ep->dead || unet_probe_link(ep))
			return ep->dead;
		if (timeout_ms >= 0 && unet_mono_ms() >= deadline)
			return -ETIMEDOUT;
		/* Nothing completed: let the other side of the veth (or the
		 * NIC) drain before kicking again. */
		sched_yield();
	}
	return 0;
}

uint64_t unet_endpoint__buf_alloc(struct unet_endpoint *ep)
{
	uint64_t buf;

	if (!ep) {
		errno = EINVAL;
		return UNET_NO_BUF;
	}
	buf = unet_pool_get(&ep->pool, UNET_FRAME_APP);
	if (buf == UNET_NO_BUF) {
		unet_endpoint__complete(ep);
		buf = unet_pool_get(&ep->pool, UNET_FRAME_APP);
	}
	if (buf == UNET_NO_BUF)
		errno = ENOBUFS;
	return buf;
}

int unet_endpoint__buf_free(struct unet_endpoint *ep, uint64_t buf)
{
	if (!ep || !frame_aligned(ep, buf))
		return -EINVAL;
	return unet_pool_put(&ep->pool, buf, UNET_FRAME_APP);
}

void *unet_endpoint__buf_payload(struct unet_endpoint *ep, uint64_t buf)
{
	uint8_t *p = unet_layer_buf(ep, buf);

	return p ? p + ep->tx_payload : NULL;
}

/* Check a message before anything is queued. */
static int check_send(struct unet_endpoint *ep, const struct unet_send_desc *d)
{
	if (!d->channel || d->channel->ep != ep)
		return -EINVAL;
	if (d->channel->udp) {
		/* the coarse clock: a tick is ample against a 1 s lookup */
		uint64_t now = unet_mono_coarse_ns();

		if (now >= d->channel->hop_next_ns)
			unet_channel_hop_refresh(d->channel, now);
	}
	if (!d->len || d->len > unet_channel__max_payload(d->channel))
		return -EMSGSIZE;
	if (d->len > ep->buf_payload) {
		unet_log(UNET_LOG_DEBUG,
			 "send of %u bytes: a send buffer holds %u; larger messages (up to "
			 "max_payload %u) go in pieces through unet_channel__send_copy",
			 d->len, ep->buf_payload, ep->max_payload);
		return -EMSGSIZE;
	}
	return app_holds(ep, d->buf) ? 0 : -EINVAL;
}

/* Put one checked message on its channel's TX ring (no kick).  Returns 0
 * or -EAGAIN when the ring is full even after reaping completions. */
static int enqueue(struct unet_endpoint *ep, const struct unet_send_desc *d)
{
	struct unet_channel *ch = d->channel;
	struct unet_queue *q = &ep->q[ch->txq];
	/* The frame ends its headers where the payload starts. */
	uint64_t addr = d->buf + ep->tx_payload -
			(ch->udp ? unet_wire_udp_payload_off(&ch->w) : UNET_PAYLOAD_OFF);
	uint32_t idx, flen;

	if (unet_tx_reserve(ep, q, &idx))
		return -EAGAIN;
	if (ch->udp)
		flen = unet_wire_udp_build((uint8_t *)ep->segment + addr, &ch->w, d->len);
	else
		flen = unet_wire_build((uint8_t *)ep->segment + addr, ch->peer_mac, ep->mac,
				       ch->peer_tag, ch->tag, d->len);
	unet_tx_submit(ep, q, idx, d->buf, addr, flen, 0);
	return 0;
}

int unet_endpoint__send_batch(struct unet_endpoint *ep, const struct unet_send_desc *descs,
			      unsigned int n)
{
	bool touched[UNET_MAX_QUEUES] = { false };
	unsigned int sent = 0;
	int err = 0;

	if (!ep || (!descs && n))
		return -EINVAL;
	if (ep->dead)
		return ep->dead;
	for (unsigned int i = 0; i < n; i++) {
		err = check_send(ep, &descs[i]);
		if (err)
			return err;
	}
	for (; sent < n; sent++) {
		err = enqueue(ep, &descs[sent]);
		if (err)
			break;
		touched[descs[sent].channel->txq] = true;
	}
	for (uint32_t i = 0; i < ep->nqueues; i++)
		if (touched[i])
			unet_tx_kick(ep, &ep->q[i]);
	ep->tx_msgs += sent;
	/* Queued messages are the library's now even if the kick found the
	 * link dead: the next call reports that. */
	return sent ? (int)sent : err;
}

int unet_channel__send(struct unet_channel *ch, uint64_t buf, uint32_t len)
{
	struct unet_send_desc d = { .channel = ch, .buf = buf, .len = len };

	int n;

	if (!ch)
		return -EINVAL;
	n = unet_endpoint__send_batch(ch->ep, &d, 1);
	return n == 1 ? 0 : n;
}

int unet_channel__send_copy(struct unet_channel *ch, const void *data, size_t len)
{
	struct unet_endpoint *ep;
	uint64_t buf;
	int err;

	if (!ch || (!data && len))
		return -EINVAL;
	ep = ch->ep;
	if (!len || len > unet_channel__max_payload(ch))
		return -EMSGSIZE;
	if (len > ep->buf_payload) {
		/* Larger than one buffer: a chain of them (pieces.c). */
		if (ep->dead)
			return ep->dead;
		err = unet_send_pieces(ch, data, (uint32_t)len);
		if (!err) {
			ep->tx_msgs++;
			unet_tx_kick(ep, &ep->q[ch->txq]);
		}
		return err;
	}
	buf = unet_endpoint__buf_alloc(ep);
	if (buf == UNET_NO_BUF)
		return -EAGAIN;
	memcpy((uint8_t *)ep->segment + buf + ep->tx_payload, data, len);
	err = unet_channel__send(ch, buf, (uint32_t)len);
	if (err)
		unet_pool_put(&ep->pool, buf, UNET_FRAME_APP);
	return err;
}


/* Run every attached layer's progress hook (layer.h).  Returns the
 * earliest deadline they asked for in ms from now, -1 if none. */
static int layers_progress(struct unet_endpoint *ep)
{
	int next = -1;

	for (unsigned int i = 0; i < ep->nlayers; i++) {
		const struct unet_layer *l = ep->layers[i].layer;
		int ms;

		if (!l->progress)
			continue;
		ms = l->progress(ep->layers[i].state);
		if (ms >= 0 && (next < 0 || ms < next))
			next = ms;
	}
	return next;
}

int unet_endpoint__next_timeout(struct unet_endpoint *ep)
{
	int ms;

	if (!ep)
		return -EINVAL;
	ms = layers_progress(ep);
	unet_layer_kick(ep);
	return ms;
}

int unet_endpoint__recv(struct unet_endpoint *ep, struct unet_recv_desc *descs, unsigned int max)
{
	unsigned int n = 0;

	if (!ep || (!descs && max))
		return -EINVAL;
	if (ep->nlayers)
		layers_progress(ep);
	if (ep->fd_mode) {
		uint64_t v;

		/* Drain before looking, so a notification for what we do
		 * not see yet stays pending. */
		if (read(ep->q[0].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
	}
	for (uint32_t k = 0; k < ep->nqueues && n < max; k++) {
		uint32_t qi = (ep->rx_next + k) % ep->nqueues;
		struct unet_queue *q = &ep->q[qi];
		uint32_t idx, got;

		got = xsk_ring_cons__peek(&q->rx, max - n, &idx);
		for (uint32_t i = 0; i < got; i++)
			if (unet_take_rx_desc(ep, &q->rx_asm, xsk_ring_cons__rx_desc(&q->rx, idx + i),
					      &descs[n]))
				n++;
		xsk_ring_cons__release(&q->rx, got);
		q->in_fill -= got;
	}
	ep->rx_next = (ep->rx_next + 1) % ep->nqueues;
	ep->rx_msgs += n;
	/* What the layers queued in this pass (their answers to the frames
	 * just taken, layer.h) leaves in one kick per queue. */
	unet_layer_kick(ep);
	unet_refill(ep);
	if (!n && ep->busy_poll_usec)
		/* Busy polling runs the driver's NAPI from this call. */
		for (uint32_t k = 0; k < ep->nqueues; k++)
			recvfrom(ep->q[k].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return (int)n;
}

int unet_endpoint__release(struct unet_endpoint *ep, const struct unet_recv_desc *descs,
			   unsigned int n)
{
	if (!ep || (!descs && n))
		return -EINVAL;
	/* All or nothing: a bad descriptor must not leave half the batch
	 * released. */
	for (unsigned int i = 0; i < n; i++) {
		int64_t idx = unet_pool_index(&ep->pool, descs[i].buf);

		if (unet_jumbo_holds(&ep->jumbo, descs[i].buf))
			continue; /* a message that came in pieces (pieces.c) */
		if (!frame_aligned(ep, descs[i].buf) || idx < 0 ||
		    ep->pool.owner[idx] != UNET_FRAME_RX)
			return -EINVAL;
	}
	for (unsigned int i = 0; i < n; i++)
		if (unet_jumbo_put(&ep->jumbo, descs[i].buf))
			unet_pool_put(&ep->pool, descs[i].buf, UNET_FRAME_RX);
	unet_refill(ep);
	return 0;
}

bool unet_rx_ready(struct unet_endpoint *ep)
{
	for (uint32_t i = 0; i < ep->nqueues; i++) {
		uint32_t idx;

		if (xsk_ring_cons__peek(&ep->q[i].rx, 1, &idx)) {
			xsk_ring_cons__cancel(&ep->q[i].rx, 1);
			return true;
		}
	}
	return false;
}

/* How long a blocked wait sleeps at most before it probes the link: a
 * socket whose device went away never polls ready again. */
#define WAIT_PROBE_MS 250

static int wait_once(struct unet_endpoint *ep, int timeout_ms)
{
	struct epoll_event ev[UNET_MAX_QUEUES];
	int n, efd;

	if (ep->nqueues == 1 && ep->epoll_fd < 0) {
		/* One socket: poll() it directly, which keeps no waiter on
		 * the socket once it returns (see unet_endpoint_epoll). */
		struct pollfd pfd = { .fd = ep->q[0].fd, .events = POLLIN };

		n = poll(&pfd, 1, timeout_ms);
	} else {
		efd = unet_endpoint_epoll(ep);
		if (efd < 0)
			return efd;
		n = epoll_wait(efd, ev, (int)ep->nqueues, timeout_ms);
	}
	if (n < 0)
		return -errno;
	return n > 0 ? 1 : 0;
}

int unet_endpoint__wait(struct unet_endpoint *ep, int timeout_ms)
{
	int64_t deadline;

	if (!ep)
		return -EINVAL;
	unet_refill(ep);
	if (unet_rx_ready(ep))
		return 1;
	if (ep->dead)
		return ep->dead;
	deadline = timeout_ms < 0 ? INT64_MAX : unet_mono_ms() + timeout_ms;
	/* Adaptive: spin first (wait.c), sleep only if nothing came, and
	 * only for what is left of the timeout. */
	if (unet_wait_spin(ep, timeout_ms, unet_rx_ready))
		return 1;
	if (!timeout_ms || (deadline != INT64_MAX && unet_mono_ms() >= deadline))
		return 0;
	ep->wait_sleeps++;
	if (ep->emulated && !ep->fd_mode)
		return unet_remote_wait(ep, deadline == INT64_MAX ? -1 : (int)(deadline - unet_mono_ms()),
					unet_rx_ready);
	for (;;) {
		int64_t left = deadline == INT64_MAX ? WAIT_PROBE_MS : deadline - unet_mono_ms();
		int slice, layer_ms, r;
		bool cut = false;

		if (left < 0)
			left = 0;
		slice = left > WAIT_PROBE_MS ? WAIT_PROBE_MS : (int)left;
		/* A layer's timers (layer.h, progress) cut the sleep short. */
		layer_ms = ep->nlayers ? layers_progress(ep) : -1;
		unet_kicks_held = false; /* a wait ends a hold (layer.h) */
		unet_layer_kick(ep); /* nothing queued sleeps with us */
		if (layer_ms >= 0 && layer_ms < slice) {
			slice = layer_ms;
			cut = true;
		}
		r = wait_once(ep, slice);
		if (r)
			return r;
		if (left && !cut && unet_probe_link(ep))
			return ep->dead;
		if (deadline != INT64_MAX && unet_mono_ms() >= deadline)
			return 0;
	}
}

void unet_endpoint__set_handler(struct unet_endpoint *ep, unet_recv_handler fn, void *ctx)
{
	if (!ep)
		return;
	ep->handler = fn;
	ep->handler_ctx = ctx;
}

/*
 * Handlers may close channels, their own included.  While handlers run,
 * unet_channel__close only unlinks a channel and parks it here; later
 * descriptors of the same batch that name it are dropped unseen, and the
 * channel is freed once the batch is done.
 */
int unet_endpoint__dispatch(struct unet_endpoint *ep, int timeout_ms, unsigned int max)
{
	struct unet_recv_desc descs[RX_BATCH];
	int n;

	if (!ep)
		return -EINVAL;
	if (ep->dispatching)
		return -EBUSY; /* from inside a handler */
	if (max > RX_BATCH)
		max = RX_BATCH;
	n = unet_endpoint__recv(ep, descs, max);
	if (!n && timeout_ms) {
		n = unet_endpoint__wait(ep, timeout_ms);
		if (n > 0)
			n = unet_endpoint__recv(ep, descs, max);
	}
	if (n <= 0)
		return n;
	ep->dispatching = true;
	for (int i = 0; i < n; i++) {
		const struct unet_recv_desc *d = &descs[i];
		struct unet_channel *ch = d->channel;
		unet_recv_handler fn = NULL;
		void *fn_ctx = NULL;

		if (ch && ch->closed) {
			ep->rx_unknown_channel++;
			continue;
		}
		if (ch && ch->handler) {
			fn = ch->handler;
			fn_ctx = ch->handler_ctx;
		} else if (!ch && d->layer && d->layer->handler) {
			fn = d->layer->handler(unet_layer_state(ep, d->layer), d, &fn_ctx);
		}
		if (!fn) {
			fn = ep->handler;
			fn_ctx = ep->handler_ctx;
		}
		if (fn)
			fn(ep, d, fn_ctx);
		else
			ep->rx_no_handler++;
	}
	ep->dispatching = false;
	unet_channel_free_closed(ep);
	unet_endpoint__release(ep, descs, (unsigned int)n);
	return n;
}
