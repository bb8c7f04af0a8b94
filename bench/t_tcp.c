/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_tcp.c - unet-bench over TCP: "tcp" (kernel sockets) and "unet-tcp"
 * (TCP over U-Net, include/unet-xdp/unet_tcp.h), one framing for both so
 * the same roles measure each: every message is a 2-byte length (host
 * order) and its bytes on one connection.  echo and sink listen on
 * --local and take the first connection; pingpong and source connect
 * from --local's address to --remote.  Sends go into a staging buffer
 * that is pushed out as the connection takes it, so a message is never
 * half-queued when send reports it sent.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"
#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#define STAGE_CAP (1u << 20) /* bytes of framed messages not yet taken */
#define RBUF_CAP (1u << 20)

struct bench_conn {
	bool unet, server;
	int lfd, fd; /* tcp */
	struct unet_endpoint *ep; /* unet-tcp */
	struct unet_tcp *l, *c;
	uint8_t *stage, *rbuf;
	size_t slen, soff; /* staged bytes [soff, slen) */
	size_t rlen, roff; /* received bytes [roff, rlen); before roff: handed out */
	int timeout_ms;
};

static int parse_ipport(const char *s, struct sockaddr_in *sa)
{
	char buf[64], *colon;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, buf, &sa->sin_addr) == 1 && sa->sin_port ? 0 : -1;
}

static void t_close(struct bench_conn *c)
{
	if (!c)
		return;
	if (c->unet) {
		/* what is queued must reach the peer before the endpoint goes */
		uint64_t end = bench_now_ns() + 2000000000ull;

		while (c->c && unet_tcp__unacked(c->c) && bench_now_ns() < end)
			unet_endpoint__dispatch(c->ep, 5, 64);
		unet_tcp__close(c->c);
		unet_tcp__close(c->l);
		for (int i = 0; c->ep && i < 10; i++)
			unet_endpoint__dispatch(c->ep, 5, 64);
		unet_endpoint__destroy(c->ep);
	} else {
		if (c->fd >= 0)
			close(c->fd);
		if (c->lfd >= 0)
			close(c->lfd);
	}
	free(c->stage);
	free(c->rbuf);
	free(c);
}

static struct bench_conn *t_open(const struct bench_opts *o, bool unet)
{
	struct sockaddr_in la, ra;
	struct bench_conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c)
		return NULL;
	c->unet = unet;
	c->lfd = c->fd = -1;
	c->server = !strcmp(o->role, "echo") || !strcmp(o->role, "sink");
	c->timeout_ms = (int)(o->timeout_s * 1000);
	c->stage = malloc(STAGE_CAP);
	c->rbuf = malloc(RBUF_CAP);
	if (!c->stage || !c->rbuf || parse_ipport(o->local, &la) ||
	    (!c->server && parse_ipport(o->remote, &ra))) {
		fprintf(stderr, "unet-bench: %s needs --local IP:PORT (and --remote IP:PORT to "
				"connect)\n", o->transport);
		t_close(c);
		return NULL;
	}
	if (unet) {
		UNET_OPTS_INIT(unet_endpoint_opts, eo);

		unet_set_log_fn(bench_unet_log, NULL);
		eo.mode = (enum unet_xdp_mode)o->xdp_mode;
		eo.busy_poll_usec = (uint32_t)o->busy_poll_usec;
		eo.queue_mask = o->queue_mask;
		eo.no_tx_csum_offload = o->no_tx_csum;
		c->ep = o->iface ? unet_endpoint__create(o->iface, &eo) : NULL;
		if (!c->ep) {
			fprintf(stderr, "unet-bench: unet-tcp needs --iface: %s\n", strerror(errno));
			t_close(c);
			return NULL;
		}
		/* spin, block or adaptive: how the endpoint's wait behaves */
		if (bench_unet_wait_mode(c->ep, o)) {
			t_close(c);
			return NULL;
		}
		if (c->server)
			c->l = unet_tcp__listen(c->ep, la.sin_addr.s_addr, ntohs(la.sin_port), NULL);
		else
			/* the peer may start a little later: a few tries */
			for (int i = 0; i < 30 && !c->c; i++) {
				c->c = unet_tcp__connect(c->ep, la.sin_addr.s_addr, ra.sin_addr.s_addr,
							 ntohs(ra.sin_port), NULL, 1000);
				if (!c->c)
					usleep(100000);
			}
		if (!c->l && !c->c) {
			fprintf(stderr, "unet-bench: unet-tcp %s: %s\n",
				c->server ? "listen" : "connect", strerror(errno));
			t_close(c);
			return NULL;
		}
		return c;
	}
	if (c->server) {
		c->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		setsockopt(c->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (c->lfd < 0 || bind(c->lfd, (struct sockaddr *)&la, sizeof(la)) ||
		    listen(c->lfd, 4)) {
			fprintf(stderr, "unet-bench: tcp listen %s: %s\n", o->local, strerror(errno));
			t_close(c);
			return NULL;
		}
		return c;
	}
	la.sin_port = 0;
	for (int i = 0; i < 20; i++) {
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->fd >= 0 && !bind(c->fd, (struct sockaddr *)&la, sizeof(la)) &&
		    !connect(c->fd, (struct sockaddr *)&ra, sizeof(ra)))
			break;
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		usleep(100000);
	}
	if (c->fd < 0) {
		fprintf(stderr, "unet-bench: tcp connect %s: %s\n", o->remote, strerror(errno));
		t_close(c);
		return NULL;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static struct bench_conn *tcp_open(const struct bench_opts *o)
{
	return t_open(o, false);
}

static struct bench_conn *utcp_open(const struct bench_opts *o)
{
	return t_open(o, true);
}

/* The server's connection, once the client came (wait up to ms). */
static bool have_conn(struct bench_conn *c, int ms)
{
	int one = 1;

	if (c->unet) {
		if (!c->c)
			c->c = unet_tcp__accept(c->l, ms);
		return c->c != NULL;
	}
	if (c->fd < 0) {
		struct pollfd p = { .fd = c->lfd, .events = POLLIN };

		if (poll(&p, 1, ms) == 1)
			c->fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c->fd >= 0)
			setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return c->fd >= 0;
}

/* Push staged bytes; wait at most ms for room.  Returns 0 or -errno. */
static int push(struct bench_conn *c, int ms)
{
	while (c->soff < c->slen) {
		ssize_t n;

		if (c->unet) {
			n = unet_tcp__send(c->c, c->stage + c->soff, c->slen - c->soff, ms);
			if (n == -EAGAIN)
				return 0;
		} else {
			n = send(c->fd, c->stage + c->soff, c->slen - c->soff,
				 MSG_NOSIGNAL | (ms ? 0 : MSG_DONTWAIT));
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return 0;
			if (n < 0)
				n = -errno;
		}
		/* The peer closed: a role's trailing end markers have nobody to
		 * go to, as with a UDP peer that left.  Not an error. */
		if (n == -EPIPE || n == -ECONNRESET || n == -ENOTCONN)
			break;
		if (n < 0)
			return (int)n;
		c->soff += (size_t)n;
	}
	c->soff = c->slen = 0;
	return 0;
}

static int t_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;
	int err;

	if (!have_conn(c, 0))
		return 0;
	if (c->soff && c->soff == c->slen)
		c->soff = c->slen = 0;
	if (c->soff > STAGE_CAP / 2) { /* compact */
		memmove(c->stage, c->stage + c->soff, c->slen - c->soff);
		c->slen -= c->soff;
		c->soff = 0;
	}
	for (k = 0; k < n; k++) {
		uint16_t len = (uint16_t)tx[k].len;

		if (c->slen + 2 + len > STAGE_CAP)
			break;
		memcpy(c->stage + c->slen, &len, 2);
		bench_tx_write(c->stage + c->slen + 2, &tx[k]);
		c->slen += 2u + len;
	}
	err = push(c, 0);
	return err ? err : (int)k;
}

static int t_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block)
{
	unsigned int n = 0;
	size_t off;

	if (!have_conn(c, block ? BENCH_BLOCK_MS : 0))
		return 0;
	if (c->soff < c->slen) {
		int err = push(c, 0);

		if (err)
			return err;
	}
	/* What was handed out last time is done with. */
	if (c->roff) {
		memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
		c->rlen -= c->roff;
		c->roff = 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		ssize_t r;

		if (c->unet) {
			r = unet_tcp__recv(c->c, c->rbuf + c->rlen, RBUF_CAP - c->rlen,
					   block && !pass ? BENCH_BLOCK_MS : 0);
			if (r == -EAGAIN)
				r = -1, errno = EAGAIN;
			else if (r < 0)
				return (int)r;
		} else {
			if (block && !pass) {
				struct pollfd p = { .fd = c->fd, .events = POLLIN };

				poll(&p, 1, BENCH_BLOCK_MS);
			}
			r = recv(c->fd, c->rbuf + c->rlen, RBUF_CAP - c->rlen, MSG_DONTWAIT);
		}
		if (r == 0)
			return c->rlen ? 0 : -EPIPE;
		if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (r > 0)
			c->rlen += (size_t)r;
		if (r <= 0 || RBUF_CAP == c->rlen)
			break;
		block = false;
	}
	for (off = 0; n < max && c->rlen - off >= 2; n++) {
		uint16_t len;

		memcpy(&len, c->rbuf + off, 2);
		if (c->rlen - off - 2 < len)
			break;
		rx[n].data = c->rbuf + off + 2;
		rx[n].len = len;
		off += 2u + len;
	}
	c->roff = off;
	return (int)n;
}

static int t_flush(struct bench_conn *c, int timeout_ms)
{
	if (!have_conn(c, timeout_ms))
		return 0;
	return push(c, timeout_ms);
}

const struct bench_transport bench_tcp = {
	.name = "tcp",
	.open = tcp_open,
	.send = t_send,
	.recv = t_recv,
	.flush = t_flush,
	.close = t_close,
};

const struct bench_transport bench_unet_tcp = {
	.name = "unet-tcp",
	.open = utcp_open,
	.send = t_send,
	.recv = t_recv,
	.flush = t_flush,
	.close = t_close,
};
