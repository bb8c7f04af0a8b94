/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp.c - TCP sockets of the program's on U-Net (tcp.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "publish.h"
#include "tcp.h"
#include "udp.h"
#include "unet-xdp/unet_tcp.h"

static struct run_tcp *wrap(struct run_ep *e, struct unet_tcp *t, uint32_t spin_us)
{
	struct run_tcp *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->e = e;
	c->t = t;
	c->spin_us = spin_us;
	c->rcvtimeo_ms = c->sndtimeo_ms = -1;
	c->pub_slot = -1;
	c->linger_s = -1;
	c->rp_next = c;
	c->local.sin_family = c->peer.sin_family = AF_INET;
	return c;
}

/* Drive the endpoint (frames in, timers) without waiting.  Under stack_lock. */
static void progress(struct run_ep *e)
{
	run_udp_pump(e);
}

struct run_tcp *run_tcp_listen(struct run_ep *e, const struct sockaddr_in *local, int backlog,
			       bool reuseport, uint32_t spin_us)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct unet_tcp *t;
	struct run_tcp *c;

	o.backlog = backlog > 0 ? (uint32_t)(backlog > 1024 ? 1024 : backlog) : 0;
	o.reuseport = reuseport;
	stack_enter();
	t = unet_tcp__listen(e->ep, local->sin_addr.s_addr, ntohs(local->sin_port), &o);
	stack_leave();
	if (!t)
		return NULL;
	c = wrap(e, t, spin_us);
	if (!c) {
		stack_enter();
		unet_tcp__close(t);
		stack_leave();
		errno = ENOMEM;
		return NULL;
	}
	c->listener = true;
	c->local = *local;
	return c;
}

/* This process's reuseport listeners (under stack_lock). */
static struct run_tcp *reuseport_listeners[64];

static void reuseport_note(struct run_tcp *c, bool add)
{
	for (size_t i = 0; i < sizeof(reuseport_listeners) / sizeof(reuseport_listeners[0]); i++) {
		if (add ? !reuseport_listeners[i] : reuseport_listeners[i] == c) {
			reuseport_listeners[i] = add ? c : NULL;
			return;
		}
	}
}

void run_tcp_reuseport(struct run_tcp *c)
{
	stack_enter();
	if (!c->reuseport) {
		c->reuseport = true;
		reuseport_note(c, true);
	}
	stack_leave();
}

struct run_tcp *run_tcp_listen_shared(struct run_ep *e, const struct sockaddr_in *local,
				      uint32_t spin_us)
{
	struct run_tcp *g = NULL, *c;

	stack_enter();
	for (size_t i = 0; i < sizeof(reuseport_listeners) / sizeof(reuseport_listeners[0]); i++) {
		struct run_tcp *l = reuseport_listeners[i];

		if (l && l->e == e && l->local.sin_addr.s_addr == local->sin_addr.s_addr &&
		    l->local.sin_port == local->sin_port) {
			g = l;
			break;
		}
	}
	c = g && e->ep ? wrap(e, g->t, spin_us) : NULL;
	if (c) {
		c->listener = true;
		c->local = *local;
		c->rp_next = g->rp_next;
		g->rp_next = c;
		c->reuseport = true;
		reuseport_note(c, true);
	}
	stack_leave();
	if (!c)
		errno = g ? ENOMEM : EADDRINUSE;
	return c;
}

/* Wait until c's events have any of want (or an error), or the
 * deadline.  Returns 0, -EAGAIN, -EINTR. */
static int wait_events(struct run_tcp *c, unsigned int want, int timeo_ms)
{
	struct stack_timer timer = { 0 };

	for (;;) {
		unsigned int ev;
		int r;

		stack_enter();
		progress(c->e);
		ev = unet_tcp__events(c->t);
		stack_leave();
		if (ev & (want | UNET_TCP_ERR))
			return 0;
		r = stack_wait_timed(c->e, &timer, timeo_ms, c->spin_us);
		if (r < 0)
			return r;
	}
}

struct run_tcp *run_tcp_connect(struct run_ep *e, const struct sockaddr_in *peer, bool nonblock,
				uint32_t spin_us, int timeo_ms)
{
	UNET_OPTS_INIT(unet_tcp_opts, o);
	struct unet_tcp *t;
	struct run_tcp *c;

	stack_enter();
	t = unet_tcp__connect(e->ep, e->addr, peer->sin_addr.s_addr, ntohs(peer->sin_port), &o, 0);
	stack_leave();
	if (!t)
		return NULL;
	c = wrap(e, t, spin_us);
	if (!c) {
		stack_enter();
		unet_tcp__abort(t);
		stack_leave();
		errno = ENOMEM;
		return NULL;
	}
	c->nonblock = nonblock;
	c->peer = *peer;
	c->local.sin_addr.s_addr = e->addr;
	stack_enter();
	c->local.sin_port = htons(unet_tcp__local_port(t));
	stack_leave();
	if (nonblock) {
		errno = EINPROGRESS;
		return c;
	}
	if (wait_events(c, UNET_TCP_OUT, timeo_ms) < 0 || unet_tcp__error(c->t)) {
		int err = unet_tcp__error(c->t);

		run_tcp_close(c);
		errno = err ? -err : ETIMEDOUT;
		return NULL;
	}
	errno = 0;
	return c;
}

struct run_tcp *run_tcp_accept(struct run_tcp *l, bool nonblock)
{
	struct stack_timer timer = { 0 };
	struct unet_tcp *t;
	struct run_tcp *c;

	if (!l->e->ep) {
		/* A fork's child: the listener is the parent's (stack.h); its
		 * state here is a copy the layer must not run (it would send
		 * on the parent's rings). */
		errno = EOPNOTSUPP;
		return NULL;
	}
	for (;;) {
		int r;

		stack_enter();
		progress(l->e);
		t = unet_tcp__accept(l->t, 0);
		stack_leave();
		if (t)
			break;
		if (errno != EAGAIN)
			return NULL;
		if (nonblock || l->nonblock) {
			errno = EAGAIN;
			return NULL;
		}
		r = stack_wait_timed(l->e, &timer, l->rcvtimeo_ms, l->spin_us);
		if (r < 0) {
			errno = -r;
			return NULL;
		}
	}
	c = wrap(l->e, t, l->spin_us);
	if (!c) {
		stack_enter();
		unet_tcp__abort(t);
		stack_leave();
		errno = ENOMEM;
		return NULL;
	}
	stack_enter();
	c->local = l->local;
	c->local.sin_port = htons(unet_tcp__local_port(t));
	c->peer.sin_addr.s_addr = unet_tcp__remote_addr(t);
	c->peer.sin_port = htons(unet_tcp__remote_port(t));
	stack_leave();
	return c;
}

/*
 * At exit.  A connection the program closed may still have data or its
 * FIN unacknowledged: the kernel would send them after the process is
 * gone, a stack in the process only while the process drives it (a
 * server that writes its answer, closes and exits lost the answer's
 * tail).  Drive the endpoints until every such connection is done, at
 * most EXIT_LINGER_MS; a thread still inside the stack at exit (it holds
 * the lock) gets the same bound.
 */
#define EXIT_LINGER_MS 5000

__attribute__((destructor)) static void exit_linger(void)
{
	int64_t deadline = stack_now_us() + EXIT_LINGER_MS * 1000;
	struct timespec abs;

	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec += EXIT_LINGER_MS / 1000;
	if (pthread_mutex_timedlock(&stack_lock, &abs))
		return;
	stack_depth++;
	for (;;) {
		struct pollfd w[8];
		unsigned int left = 0;
		nfds_t nw = 0;
		struct run_ep *e;

		for (int i = 0; (e = stack_ep_at(i)); i++) {
			if (!e->ep)
				continue;
			progress(e);
			left += unet_tcp__closing(e->ep);
			if (e->wait_fd >= 0 && nw < 8)
				w[nw++] = (struct pollfd){ .fd = e->wait_fd, .events = POLLIN };
		}
		if (!left || stack_now_us() >= deadline)
			break;
		poll(w, nw, 10);
	}
	stack_leave();
}

/* SO_LINGER N > 0: until what was sent is acknowledged, N s at most
 * (the kernel's close then goes on sending in the background, as lwIP
 * does after unet_tcp__close). */
static void linger_wait(struct run_tcp *c)
{
	/* In 64 bits: the kernel gives back any l_linger a program set up
	 * to its own "forever" (about 24 days and more), which a product
	 * in milliseconds of int would overflow; forever it is here too. */
	int64_t deadline = c->linger_s >= 2000000 ? -1
				: stack_now_us() + (int64_t)c->linger_s * 1000000;
	int64_t spin_until = stack_wait_start(c->spin_us);

	for (;;) {
		size_t left;

		stack_enter();
		progress(c->e);
		left = unet_tcp__error(c->t) ? 0 : unet_tcp__unacked(c->t);
		stack_leave();
		if (!left || stack_wait(c->e, deadline, spin_until) < 0)
			return;
	}
}

void run_tcp_close(struct run_tcp *c)
{
	if (c->e->ep && !c->listener && c->linger_s > 0)
		linger_wait(c);
	stack_enter();
	if (c->reuseport)
		reuseport_note(c, false);
	if (c->rp_next != c) {
		/* Another listener shares the layer's: it stays open. */
		struct run_tcp *p = c->rp_next;

		while (p->rp_next != c)
			p = p->rp_next;
		p->rp_next = c->rp_next;
	} else if (c->e->ep) {
		if (!c->listener && c->linger_s == 0)
			unet_tcp__abort(c->t);
		else
			unet_tcp__close(c->t);
	}
	stack_leave();
	free(c);
}

int run_tcp_keepalive(struct run_tcp *c, bool on, int idle_s, int intvl_s, int count)
{
	int r;

	if (!c->e->ep || c->listener)
		return 0; /* a listener's options reach its connections at accept */
	stack_enter();
	r = unet_tcp__keepalive(c->t, on, (unsigned int)idle_s, (unsigned int)intvl_s,
				(unsigned int)count);
	stack_leave();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

int run_tcp_mss(struct run_tcp *c)
{
	unsigned int mss;

	if (!c->e->ep || c->listener)
		return 0;
	stack_enter();
	mss = unet_tcp__mss(c->t);
	stack_leave();
	return (int)mss;
}

int run_tcp_tos(struct run_tcp *c, int tos)
{
	int r;

	if (!c->e->ep || c->listener)
		return 0;
	stack_enter();
	r = unet_tcp__set_tos(c->t, (uint8_t)tos);
	stack_leave();
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* A writev's small pieces are gathered into one send so that they leave
 * in one segment, as the kernel's writev does (nginx writes a response
 * as headers and body: two segments and two kicks otherwise); a piece of
 * at least this size is sent from where it is. */
#define SEND_GATHER 4096

ssize_t run_tcp_send(struct run_tcp *c, const struct iovec *iov, size_t n, int flags)
{
	bool nonblock = c->nonblock || (flags & MSG_DONTWAIT);
	struct stack_timer timer = { 0 };
	uint8_t gather[SEND_GATHER];
	size_t done = 0, i = 0, off = 0; /* (i, off): the next byte to send */

	if (!c->e->ep || c->listener) {
		errno = c->listener ? ENOTCONN : EOPNOTSUPP;
		return -1;
	}
	/* Like a blocking kernel socket: all of it, unless interrupted or
	 * timed out after some went. */
	for (;;) {
		const void *p;
		size_t len;
		ssize_t r;

		while (i < n && off == iov[i].iov_len) {
			i++;
			off = 0;
		}
		if (i == n)
			break;
		len = iov[i].iov_len - off;
		p = (const char *)iov[i].iov_base + off;
		if (len < SEND_GATHER && i + 1 < n) {
			/* From the cursor, as much as the buffer takes; the
			 * cursor moves by what the layer accepts. */
			size_t j = i, o = off;

			len = 0;
			while (j < n && len < SEND_GATHER) {
				size_t k = iov[j].iov_len - o;

				if (k > SEND_GATHER - len)
					k = SEND_GATHER - len;
				memcpy(gather + len, (const char *)iov[j].iov_base + o, k);
				len += k;
				j++;
				o = 0;
			}
			p = gather;
		}
		stack_enter();
		r = unet_tcp__send(c->t, p, len, 0);
		progress(c->e);
		if (r > 0) {
			c->tx_bytes += (uint64_t)r;
			pub_count(c->pub_slot, c->rx_bytes, c->tx_bytes);
		}
		stack_leave();
		if (r > 0) {
			size_t left = (size_t)r;

			done += left;
			while (left) {
				size_t k = iov[i].iov_len - off;

				if (k > left)
					k = left;
				off += k;
				left -= k;
				if (off == iov[i].iov_len && left) {
					i++;
					off = 0;
				}
			}
			continue;
		}
		if (r != -EAGAIN) {
			if (done)
				return (ssize_t)done;
			errno = (int)-r;
			if (errno == EPIPE && !(flags & MSG_NOSIGNAL))
				raise(SIGPIPE);
			return -1;
		}
		if (nonblock) {
			/* epoll_wait reads it from another thread */
			__atomic_fetch_add(&c->send_blocked, 1, __ATOMIC_RELAXED);
			if (done)
				return (ssize_t)done;
			errno = EAGAIN;
			return -1;
		}
		r = stack_wait_timed(c->e, &timer, c->sndtimeo_ms, c->spin_us);
		if (r < 0) {
			if (done)
				return (ssize_t)done;
			errno = (int)-r;
			return -1;
		}
	}
	return (ssize_t)done;
}

ssize_t run_tcp_recv(struct run_tcp *c, const struct iovec *iov, size_t n, int flags)
{
	bool nonblock = c->nonblock || (flags & MSG_DONTWAIT);
	struct stack_timer timer = { 0 };

	if (!c->e->ep || c->listener) {
		errno = c->listener ? ENOTCONN : EOPNOTSUPP;
		return -1;
	}
	if (flags & (MSG_PEEK | MSG_OOB)) {
		errno = EOPNOTSUPP; /* not built for TCP on U-Net */
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!iov[i].iov_len)
			continue;
		for (;;) {
			ssize_t r;
			int w;

			stack_enter();
			progress(c->e);
			r = unet_tcp__recv(c->t, iov[i].iov_base, iov[i].iov_len, 0);
			if (r > 0) {
				c->rx_bytes += (uint64_t)r;
				pub_count(c->pub_slot, c->rx_bytes, c->tx_bytes);
			}
			stack_leave();
			if (r >= 0)
				return r; /* one buffer's worth: as much as was there */
			if (r != -EAGAIN) {
				errno = (int)-r;
				return -1;
			}
			if (nonblock) {
				errno = EAGAIN;
				return -1;
			}
			w = stack_wait_timed(c->e, &timer, c->rcvtimeo_ms, c->spin_us);
			if (w < 0) {
				errno = -w;
				return -1;
			}
		}
	}
	return 0;
}

int run_tcp_shutdown(struct run_tcp *c, int how)
{
	int r = 0;

	if (!c->e->ep) {
		errno = EOPNOTSUPP; /* a fork's child: see run_tcp_accept */
		return -1;
	}
	if (how == SHUT_WR || how == SHUT_RDWR) {
		stack_enter();
		r = unet_tcp__shutdown(c->t);
		progress(c->e);
		stack_leave();
	}
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

short run_tcp_poll_driven(struct run_tcp *c)
{
	unsigned int ev;
	short p = 0;

	if (!c->e->ep)
		return POLLERR; /* a fork's child: every call but close fails */
	ev = unet_tcp__events(c->t);
	if (ev & UNET_TCP_IN)
		p |= POLLIN;
	if (ev & UNET_TCP_OUT)
		p |= POLLOUT;
	if (ev & UNET_TCP_ERR)
		p |= POLLERR;
	if (ev & UNET_TCP_HUP)
		p |= POLLIN | POLLRDHUP;
	return p;
}

short run_tcp_poll(struct run_tcp *c)
{
	short p;

	stack_enter();
	if (c->e->ep)
		progress(c->e);
	p = run_tcp_poll_driven(c);
	stack_leave();
	return p;
}

uint64_t run_tcp_arrivals(struct run_tcp *c)
{
	return unet_tcp__arrivals(c->t);
}

int run_tcp_error(struct run_tcp *c)
{
	int e;

	stack_enter();
	e = unet_tcp__error(c->t);
	stack_leave();
	return -e;
}
