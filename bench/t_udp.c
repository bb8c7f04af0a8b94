/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * t_udp.c - the kernel's UDP path, for comparison: "udp" (send and recv,
 * one system call per message) and "udp-mmsg" (sendmmsg and recvmmsg, one
 * system call per batch).  The socket is bound to --local and connected to
 * --remote (IP:PORT, or [IPV6]:PORT for UDP/IPv6), so the kernel filters
 * out everyone else, as a U-Net channel does.  Blocking receives sleep in recv/recvmmsg (with SO_RCVTIMEO so the
 * caller can check its deadline); spinning ones loop on MSG_DONTWAIT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"

/* Large enough that a burst of small messages is not dropped by the socket
 * before the receiver runs (the default ~208 KiB holds a few hundred):
 * comparable to U-Net's 2048-entry free queue. */
#define UDP_SOCKBUF (8u << 20)

struct bench_conn {
	int fd;
	bool mmsg;
	bool busy_poll; /* adaptive mode: SO_BUSY_POLL set */
	struct mmsghdr msgs[BENCH_MAX_BATCH];	 /* send */
	struct iovec iov[BENCH_MAX_BATCH];
	struct mmsghdr rmsgs[BENCH_MAX_BATCH]; /* receive: set up once */
	struct iovec riov[BENCH_MAX_BATCH];
	uint8_t *bufs; /* BENCH_MAX_BATCH * BENCH_BUF_SIZE: receive, and send copies */
	uint8_t *txbufs;
};

/* IP:PORT, or [IPV6]:PORT for an IPv6 socket.  Returns the address's
 * length in *len (what bind and connect take), 0 or -EINVAL. */
static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = s ? strrchr(s, ':') : NULL;
	const char *h = s;
	size_t hlen;
	char *end;
	long port;

	if (!colon)
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (*s == '[') { /* [addr]:port */
		if (hlen < 2 || s[hlen - 1] != ']')
			return -EINVAL;
		h = s + 1;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port <= 0 || port > 65535)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (h != s) {
		struct sockaddr_in6 *sa6 = (struct sockaddr_in6 *)ss;

		sa6->sin6_family = AF_INET6;
		sa6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sa6);
		return inet_pton(AF_INET6, host, &sa6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	struct sockaddr_in *sa = (struct sockaddr_in *)ss;

	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	*len = sizeof(*sa);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

/* The socket of the run, for bench_udp_napi_id. */
static struct bench_conn *busy_conn;

/* Busy polling (SO_BUSY_POLL) spins in the NAPI context of the device
 * queue the socket's packets came from (sk_napi_id, read back with
 * SO_INCOMING_NAPI_ID).  A device that receives without NAPI leaves it 0
 * and then a busy-polling receive just sleeps.  Returns the id, or -1
 * when the socket does not busy poll. */
long bench_udp_napi_id(void)
{
	unsigned int id = 0;
	socklen_t len = sizeof(id);

	if (!busy_conn || !busy_conn->busy_poll)
		return -1;
	if (getsockopt(busy_conn->fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len))
		return -1;
	return id;
}

static void udp_close(struct bench_conn *c)
{
	if (!c)
		return;
	if (c == busy_conn)
		busy_conn = NULL;
	if (c->fd >= 0)
		close(c->fd);
	free(c->bufs);
	free(c->txbufs);
	free(c);
}

static struct bench_conn *udp_open_common(const struct bench_opts *o, bool mmsg)
{
	struct sockaddr_storage local, remote;
	socklen_t llen, rlen;
	struct timeval tv = { .tv_sec = 0, .tv_usec = BENCH_BLOCK_MS * 1000 };
	int sz = UDP_SOCKBUF;
	struct bench_conn *c;

	if (parse_addr(o->local, &local, &llen) || parse_addr(o->remote, &remote, &rlen) ||
	    local.ss_family != remote.ss_family) {
		fprintf(stderr, "unet-bench: udp needs --local and --remote, both IP:PORT or both "
				"[IPV6]:PORT\n");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->bufs = malloc(BENCH_MAX_BATCH * BENCH_BUF_SIZE)) ||
	    !(c->txbufs = calloc(BENCH_MAX_BATCH, BENCH_BUF_SIZE))) {
		fprintf(stderr, "unet-bench: out of memory\n");
		if (c)
			free(c->bufs);
		free(c);
		return NULL;
	}
	c->mmsg = mmsg;
	for (unsigned int k = 0; k < BENCH_MAX_BATCH; k++) {
		c->riov[k].iov_base = c->bufs + (size_t)k * BENCH_BUF_SIZE;
		c->riov[k].iov_len = BENCH_BUF_SIZE;
		c->rmsgs[k].msg_hdr.msg_iov = &c->riov[k];
		c->rmsgs[k].msg_hdr.msg_iovlen = 1;
	}
	c->fd = socket(local.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		fprintf(stderr, "unet-bench: socket: %s\n", strerror(errno));
		udp_close(c);
		return NULL;
	}
	/* FORCE needs CAP_NET_ADMIN (we are root for the namespaces anyway);
	 * without it the plain option is capped by net.core.*mem_max. */
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	/* A blocking receive wakes up at least every BENCH_BLOCK_MS so the
	 * role can check its deadline; sends never wait that long. */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* Adaptive: the kernel's own spin-then-sleep.  A blocking receive
	 * first busy polls the device queue for up to this many us
	 * (raising it above net.core.busy_read needs CAP_NET_ADMIN). */
	if (o->mode == BENCH_ADAPTIVE) {
		int us = o->spin_us >= 0 ? (int)o->spin_us : BENCH_UDP_BUSY_POLL_US;

		if (setsockopt(c->fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us))) {
			fprintf(stderr, "unet-bench: SO_BUSY_POLL %d: %s\n", us, strerror(errno));
			udp_close(c);
			return NULL;
		}
		c->busy_poll = true;
		busy_conn = c;
	}
	if (bind(c->fd, (struct sockaddr *)&local, llen)) {
		fprintf(stderr, "unet-bench: bind %s: %s\n", o->local, strerror(errno));
		udp_close(c);
		return NULL;
	}
	if (connect(c->fd, (struct sockaddr *)&remote, rlen)) {
		fprintf(stderr, "unet-bench: connect %s: %s\n", o->remote, strerror(errno));
		udp_close(c);
		return NULL;
	}
	return c;
}

static struct bench_conn *udp_open(const struct bench_opts *o)
{
	return udp_open_common(o, false);
}

static struct bench_conn *udp_mmsg_open(const struct bench_opts *o)
{
	return udp_open_common(o, true);
}

/* A message to send lives in user memory, as with any socket: echoes
 * point at the received bytes, new messages get their header written into
 * a per-slot buffer. */
static const void *tx_bytes(struct bench_conn *c, const struct bench_tx *tx, unsigned int slot)
{
	uint8_t *b;

	if (tx->data)
		return tx->data;
	b = c->txbufs + (size_t)slot * BENCH_BUF_SIZE;
	bench_tx_write(b, tx);
	return b;
}

/* What a failed send means for the caller: a full socket buffer or device
 * queue (ENOBUFS from veth) is "try again", the rest is an error. */
static int send_err(int err)
{
	if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS || err == EINTR ||
	    err == ECONNREFUSED) /* the peer's ICMP from before it bound: harmless */
		return 0;
	return -err;
}

static int udp_send(struct bench_conn *c, const struct bench_tx *tx, unsigned int n)
{
	unsigned int k;

	if (n > BENCH_MAX_BATCH)
		n = BENCH_MAX_BATCH;
	if (c->mmsg) {
		int r;

		for (k = 0; k < n; k++) {
			c->iov[k].iov_base = (void *)tx_bytes(c, &tx[k], k);
			c->iov[k].iov_len = tx[k].len;
			memset(&c->msgs[k], 0, sizeof(c->msgs[k]));
			c->msgs[k].msg_hdr.msg_iov = &c->iov[k];
			c->msgs[k].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(c->fd, c->msgs, n, 0);
		return r < 0 ? send_err(errno) : r;
	}
	for (k = 0; k < n; k++) {
		if (send(c->fd, tx_bytes(c, &tx[k], k), tx[k].len, 0) < 0) {
			int e = send_err(errno);

			return k ? (int)k : e;
		}
	}
	return (int)k;
}

static int udp_recv(struct bench_conn *c, struct bench_rx *rx, unsigned int max, bool block)
{
	int flags = block ? 0 : MSG_DONTWAIT;
	ssize_t r;

	if (max > BENCH_MAX_BATCH)
		max = BENCH_MAX_BATCH;
	if (c->mmsg) {
		int n;

		/* WAITFORONE: sleep for the first, then take what is queued
		 * without waiting for the batch to fill. */
		n = recvmmsg(c->fd, c->rmsgs, max, block ? MSG_WAITFORONE : MSG_DONTWAIT, NULL);
		if (n < 0)
			return (errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED) ? 0 : -errno;
		for (int k = 0; k < n; k++)
			rx[k] = (struct bench_rx){ .data = c->riov[k].iov_base, .len = c->rmsgs[k].msg_len };
		return n;
	}
	/* Plain udp: one message per system call, as most programs do. */
	r = recv(c->fd, c->bufs, BENCH_BUF_SIZE, flags);
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED) ? 0 : -errno;
	rx[0] = (struct bench_rx){ .data = c->bufs, .len = (uint32_t)r };
	return 1;
}

const struct bench_transport bench_udp = {
	.name = "udp",
	.open = udp_open,
	.send = udp_send,
	.recv = udp_recv,
	.close = udp_close,
};

const struct bench_transport bench_udp_mmsg = {
	.name = "udp-mmsg",
	.open = udp_mmsg_open,
	.send = udp_send,
	.recv = udp_recv,
	.close = udp_close,
};
