/* SPDX-License-Identifier: BSD-2-Clause */
/* udp.c - UDP sockets of the program's on U-Net (udp.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "publish.h"
#include "udp.h"
#include "unet-xdp/unet_udp.h"

/* Sends that found the send queue full or the peer's MAC unresolved are
 * retried this often before a blocking send gives up. */
#define SEND_TRIES 1000

/* A datagram that waits in u's queue in a copy of ours instead of in
 * the endpoint's frame (see keep()). */
#define COPIED UNET_NO_BUF

/* Give back what d holds: our copy, or the endpoint's frame. */
static void forget_dgram(struct run_udp *u, struct unet_recv_desc *d)
{
	if (d->buf == COPIED) {
		u->copied_bytes -= d->len;
		free(d->data);
	} else {
		u->frames_held--;
		u->e->frames_held--;
		unet_endpoint__release(u->e->ep, d, 1);
	}
}

/* A socket of e on local_addr:local_port, not on e's list yet: its
 * queue at RUN_UDP_QMIN, the rest to the kernel's defaults.  NULL with
 * errno ENOMEM. */
static struct run_udp *new_udp(struct run_ep *e, uint32_t local_addr, uint16_t local_port,
			       bool nonblock, uint32_t spin_us)
{
	struct run_udp *u = calloc(1, sizeof(*u));

	if (u) {
		u->qcap = RUN_UDP_QMIN;
		u->q = calloc(u->qcap, sizeof(*u->q));
	}
	if (!u || !u->q) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->e = e;
	u->local_addr = local_addr;
	u->local_port = local_port;
	u->nonblock = nonblock;
	u->rcvtimeo_ms = u->sndtimeo_ms = -1;
	u->pub_slot = -1;
	u->spin_us = spin_us;
	u->rp_next = u;
	return u;
}

static void free_udp(struct run_udp *u)
{
	free(u->q);
	free(u);
}

struct run_udp *run_udp_open(struct run_ep *e, uint32_t local_addr, uint16_t local_port,
			     uint32_t peer_addr, uint16_t peer_port, bool reuseport, bool nonblock,
			     uint32_t spin_us)
{
	UNET_OPTS_INIT(unet_udp_opts, o);
	struct run_udp *u = new_udp(e, local_addr, local_port, nonblock, spin_us);

	if (!u)
		return NULL;
	o.remote_addr = peer_addr;
	o.remote_port = peer_port;
	o.reuseport = reuseport && !peer_addr;
	stack_enter();
	u->us = unet_udp__open(e->ep, local_addr, local_port, &o);
	if (!u->us) {
		int err = errno;

		stack_leave();
		free_udp(u);
		errno = err;
		return NULL;
	}
	u->peer_addr = peer_addr;
	u->peer_port = peer_port;
	u->next = e->udp;
	e->udp = u;
	stack_leave();
	return u;
}

struct run_udp *run_udp_share(struct run_ep *e, uint32_t local_addr, uint16_t local_port,
			      bool nonblock, uint32_t spin_us)
{
	struct run_udp *g, *u = new_udp(e, local_addr, local_port, nonblock, spin_us);

	if (!u)
		return NULL;
	stack_enter();
	for (g = e->udp; g; g = g->next)
		if (g->reuseport && !g->peer_addr && g->local_addr == local_addr &&
		    g->local_port == local_port)
			break;
	if (!g || !e->ep) {
		stack_leave();
		free_udp(u);
		errno = EADDRINUSE;
		return NULL;
	}
	u->us = g->us;
	u->reuseport = true;
	u->rp_next = g->rp_next;
	g->rp_next = u;
	u->next = e->udp;
	e->udp = u;
	stack_leave();
	return u;
}

void run_udp_close(struct run_udp *u)
{
	struct run_udp **pp;

	stack_enter();
	for (pp = &u->e->udp; *pp; pp = &(*pp)->next) {
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	}
	if (u->e->ep) {
		bool last = u->rp_next == u;

		for (unsigned int i = 0; i < u->count; i++)
			forget_dgram(u, &u->q[(u->head + i) % u->qcap]);
		if (!last) {
			struct run_udp *p = u->rp_next;

			while (p->rp_next != u)
				p = p->rp_next;
			p->rp_next = u->rp_next;
		} else {
			unet_udp__close(u->us);
		}
		for (int g = 0; g < RUN_UDP_GROUPS; g++)
			if (u->group_addr[g])
				unet_udp__close(u->group_us[g]);
	}
	stack_leave();
	free_udp(u);
}

/* Whether datagrams of the UDP layer's socket us are u's: its own, or a
 * group's it joined. */
static bool owns(const struct run_udp *u, const struct unet_udp_sock *us)
{
	if (u->us == us)
		return true;
	for (int g = 0; g < RUN_UDP_GROUPS; g++)
		if (u->group_addr[g] && u->group_us[g] == us)
			return true;
	return false;
}

int run_udp_join(struct run_udp *u, uint32_t group)
{
	UNET_OPTS_INIT(unet_udp_opts, o);
	int free_slot = -1, err = 0;

	stack_enter();
	if (!u->e->ep)
		err = EOPNOTSUPP;
	for (int g = 0; !err && g < RUN_UDP_GROUPS; g++) {
		if (u->group_addr[g] == group)
			err = EADDRINUSE; /* the kernel's answer to a second join */
		else if (!u->group_addr[g] && free_slot < 0)
			free_slot = g;
	}
	if (!err && free_slot < 0)
		err = ENOBUFS;
	if (!err) {
		/* Unconnected whatever the socket is: a group's sender is
		 * not its peer.  The key is the group's address, which no
		 * unicast datagram carries: the entry catches the group's
		 * traffic for this port and nothing else. */
		u->group_us[free_slot] = unet_udp__open(u->e->ep, group, u->local_port, &o);
		if (u->group_us[free_slot])
			u->group_addr[free_slot] = group;
		else
			err = errno;
	}
	stack_leave();
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int run_udp_leave(struct run_udp *u, uint32_t group)
{
	int err = EADDRNOTAVAIL;

	stack_enter();
	for (int g = 0; g < RUN_UDP_GROUPS; g++) {
		if (u->group_addr[g] != group)
			continue;
		if (u->e->ep)
			unet_udp__close(u->group_us[g]);
		u->group_addr[g] = 0;
		u->group_us[g] = NULL;
		err = 0;
	}
	stack_leave();
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

void run_udp_connect(struct run_udp *u, uint32_t peer_addr, uint16_t peer_port)
{
	stack_enter();
	u->peer_addr = peer_addr;
	u->peer_port = peer_addr ? peer_port : 0;
	stack_leave();
}

/* A datagram of u's own socket (not a group's) from other than the
 * peer it connected to after it was bound: the kernel's connected
 * socket never sees it. */
static bool from_elsewhere(const struct run_udp *u, const struct unet_recv_desc *d)
{
	/* A group's datagrams too: a connected kernel socket hears only its
	 * peer, whatever it joined. */
	return u->peer_addr &&
	       (d->src_addr != u->peer_addr || (u->peer_port && d->src_port != u->peer_port));
}

/* The member of u's reuseport group that a datagram from d's source
 * goes to: the same one for every datagram of a source while the group
 * stays as it is (a flow keeps its order and its socket). */
static struct run_udp *reuseport_member(struct run_udp *u, const struct unet_recv_desc *d)
{
	uint32_t h = (ntohl(d->src_addr) ^ ((uint32_t)d->src_port << 16 | d->src_port)) *
		     2654435761u;
	unsigned int n = 1, k;
	struct run_udp *m;

	for (m = u->rp_next; m != u; m = m->rp_next)
		n++;
	for (k = (h >> 16) % n, m = u; k; k--)
		m = m->rp_next;
	return m;
}

/*
 * d, about to wait in u's queue.  What a datagram waits in is the whole
 * process's: a frame of the endpoint's (its receive frames feed every
 * socket's receives and sends) and, for one larger than a frame, one of
 * its 64 reassembly slots (jumbo MTUs).  A peer that fills a socket the
 * program does not read must not take those from the others: a socket
 * keeps at most RUN_UDP_FRAMES_HELD datagrams in frames, and all its
 * sockets together RUN_EP_FRAMES_HELD; a larger datagram, or one past
 * those, is copied out and its frame (or slot) given back at once.  The
 * copies one socket holds are bounded (RUN_UDP_COPY_MAX bytes, about a
 * kernel socket's default receive buffer); past that the datagram is
 * dropped, as the kernel drops one for a full socket buffer.  Returns
 * false when d was dropped (given back).
 */
static bool keep(struct run_udp *u, struct unet_recv_desc *d)
{
	void *copy;

	if (d->len <= RUN_UDP_COPY_ABOVE && u->frames_held < RUN_UDP_FRAMES_HELD &&
	    u->e->frames_held < RUN_EP_FRAMES_HELD) {
		u->frames_held++;
		u->e->frames_held++;
		return true;
	}
	copy = u->copied_bytes + d->len <= RUN_UDP_COPY_MAX ? malloc(d->len) : NULL;
	if (copy)
		memcpy(copy, d->data, d->len);
	unet_endpoint__release(u->e->ep, d, 1);
	if (!copy)
		return false;
	d->data = copy;
	d->buf = COPIED;
	u->copied_bytes += d->len;
	return true;
}

/* Double u's queue (RUN_UDP_QMAX at most), the oldest datagram first
 * in the new ring.  False when it cannot grow. */
static bool grow(struct run_udp *u)
{
	unsigned int cap = u->qcap * 2;
	struct unet_recv_desc *q;

	if (cap > RUN_UDP_QMAX)
		return false;
	q = malloc(cap * sizeof(*q));
	if (!q)
		return false;
	for (unsigned int i = 0; i < u->count; i++)
		q[i] = u->q[(u->head + i) % u->qcap];
	free(u->q);
	u->q = q;
	u->qcap = cap;
	u->head = 0;
	return true;
}

void run_udp_pump(struct run_ep *e)
{
	struct unet_recv_desc d[64];
	int n;

	if (!e->ep)
		return;
	while ((n = unet_endpoint__recv(e->ep, d, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			struct unet_udp_sock *us = unet_udp__desc_sock(&d[i]);
			struct run_udp *u;

			for (u = e->udp; u && !owns(u, us); u = u->next)
				;
			if (u && u->rp_next != u && us == u->us)
				u = reuseport_member(u, &d[i]);
			if (!u || from_elsewhere(u, &d[i])) {
				unet_endpoint__release(e->ep, &d[i], 1);
				continue;
			}
			if (u->count == u->qcap && !grow(u)) {
				u->drop_full++;
				unet_endpoint__release(e->ep, &d[i], 1);
				continue;
			}
			if (!keep(u, &d[i])) {
				u->drop_full++;
				continue;
			}
			u->q[(u->head + u->count) % u->qcap] = d[i];
			u->count++;
			u->arrivals++;
		}
		if (n < 64)
			break;
	}
}


ssize_t run_udp_send(struct run_udp *u, const struct iovec *iov, size_t iovcnt, int flags,
		     const struct sockaddr *to, socklen_t tolen)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)to;
	uint8_t buf[9216];
	uint32_t addr = 0;
	uint16_t port = 0;
	size_t len = 0;
	bool nonblock = u->nonblock || (flags & MSG_DONTWAIT);
	int r = -EAGAIN;

	if (!u->e->ep) {
		/* A fork's child: the endpoint is the parent's (stack.h). */
		errno = EOPNOTSUPP;
		return -1;
	}
	if (to) {
		if (tolen < sizeof(*sin) || to->sa_family != AF_INET) {
			errno = to->sa_family == AF_INET ? EINVAL : EAFNOSUPPORT;
			return -1;
		}
		/* Linux lets a connected UDP socket name a destination. */
		addr = sin->sin_addr.s_addr;
		port = ntohs(sin->sin_port);
	} else if (!u->peer_addr) {
		errno = EDESTADDRREQ;
		return -1;
	} else {
		addr = u->peer_addr;
		port = u->peer_port;
	}
	for (size_t i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > sizeof(buf) - len) {
			errno = EMSGSIZE;
			return -1;
		}
		memcpy(buf + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	stack_enter();
	if (len > unet_udp__max_payload(u->us)) {
		stack_leave();
		errno = EMSGSIZE;
		return -1;
	}
	for (int tries = 0; tries < SEND_TRIES; tries++) {
		/* A zero-length datagram is legal UDP; the layer refuses it. */
		r = unet_udp__send_copy(u->us, buf, len, addr, port);
		if (r != -EAGAIN)
			break;
		/* Either the peer is being resolved (wait for its ARP
		 * answer, once, up to the layer's timeout) or the send queue
		 * or the buffers are full (take back what was sent). */
		if (tries == 0 && !nonblock)
			r = unet_udp__resolve(u->us, addr, -1);
		unet_endpoint__complete(u->e->ep);
		run_udp_pump(u->e);
		if (r < 0 && r != -EAGAIN)
			break;
		if (nonblock && tries > 0)
			break;
	}
	if (r == 0) {
		u->tx++;
		pub_count(u->pub_slot, u->rx, u->tx);
	}
	stack_leave();
	if (r < 0) {
		errno = r == -EAGAIN && !nonblock ? ENOBUFS : -r;
		return -1;
	}
	return (ssize_t)len;
}

bool run_udp_readable(struct run_udp *u)
{
	bool r;

	stack_enter();
	if (!u->count)
		run_udp_pump(u->e);
	r = u->count > 0;
	stack_leave();
	return r;
}

uint64_t run_udp_arrivals(struct run_udp *u)
{
	return u->arrivals;
}

int run_udp_next_len(struct run_udp *u)
{
	int n;

	stack_enter();
	if (!u->count)
		run_udp_pump(u->e);
	n = u->count ? (int)u->q[u->head].len : 0;
	stack_leave();
	return n;
}

ssize_t run_udp_recv(struct run_udp *u, const struct iovec *iov, size_t iovcnt, int flags,
		     struct sockaddr *from, socklen_t *fromlen, int *msg_flags)
{
	bool nonblock = u->nonblock || (flags & MSG_DONTWAIT);
	struct stack_timer timer = { 0 };
	struct unet_recv_desc d;
	size_t off = 0;

	if (!u->e->ep) {
		errno = EOPNOTSUPP;
		return -1;
	}
	for (;;) {
		stack_enter();
		if (!u->count)
			run_udp_pump(u->e);
		if (u->count)
			break;
		stack_leave();
		if (nonblock) {
			errno = EAGAIN;
			return -1;
		}
		int r = stack_wait_timed(u->e, &timer, u->rcvtimeo_ms, u->spin_us);
		if (r < 0) {
			errno = -r;
			return -1;
		}
	}
	d = u->q[u->head];
	for (size_t i = 0; i < iovcnt && off < d.len; i++) {
		size_t n = iov[i].iov_len < d.len - off ? iov[i].iov_len : d.len - off;

		memcpy(iov[i].iov_base, (const uint8_t *)d.data + off, n);
		off += n;
	}
	if (msg_flags)
		*msg_flags = off < d.len ? MSG_TRUNC : 0;
	if (from && fromlen) {
		struct sockaddr_in sin = { .sin_family = AF_INET,
					   .sin_port = htons(d.src_port),
					   .sin_addr.s_addr = d.src_addr };
		memcpy(from, &sin, *fromlen < sizeof(sin) ? *fromlen : sizeof(sin));
		*fromlen = sizeof(sin);
	}
	if (!(flags & MSG_PEEK)) {
		u->head = (u->head + 1) % u->qcap;
		u->count--;
		u->rx++;
		pub_count(u->pub_slot, u->rx, u->tx);
		forget_dgram(u, &d);
	}
	stack_leave();
	return (flags & MSG_TRUNC) ? (ssize_t)d.len : (ssize_t)off;
}
