/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp.h - a TCP socket of the program's on U-Net: the TCP layer's
 * listener or connection (unet_tcp.h) on the interface's endpoint.
 * Every call into the layer is made under stack_lock with no wait; the
 * blocking calls wait outside it (stack_wait) and look again.
 */
#ifndef UNET_RUN_TCP_H
#define UNET_RUN_TCP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "stack.h"

struct run_tcp {
	struct run_ep *e;
	struct unet_tcp *t;
	bool listener;
	bool nonblock;
	int rcvtimeo_ms, sndtimeo_ms; /* -1: none */
	uint32_t spin_us;
	struct sockaddr_in local, peer;
	uint64_t rx_bytes, tx_bytes;
	int pub_slot; /* as run_udp's: published under the stack's lock */
	/* SO_LINGER: -1 off (close sends FIN and returns), 0 close resets
	 * (RST), N > 0 close waits up to N s for the peer to acknowledge
	 * what was sent, then sends FIN. */
	int linger_s;
	/* Listeners: SO_REUSEPORT.  Listeners of this process on the same
	 * address and port share the layer's listener t, and each accept
	 * takes the next connection from it.  rp_next: the ring of the
	 * listeners sharing t (c itself when alone); t is closed with the
	 * last of them. */
	bool reuseport;
	struct run_tcp *rp_next;
	/* Sends that found the buffer full (EAGAIN or a short write): an
	 * edge-triggered EPOLLOUT is owed once there is room again.
	 * Atomic: epoll_wait reads it in whichever thread waits. */
	uint64_t send_blocked;
};

/* Listen on local (address and port non-zero); reuseport: as a
 * SO_REUSEPORT group's listener, which other processes' listeners with
 * it (the same user's) join.  NULL with errno. */
struct run_tcp *run_tcp_listen(struct run_ep *e, const struct sockaddr_in *local, int backlog,
			       bool reuseport, uint32_t spin_us);
/* c (a listener the program set SO_REUSEPORT on) may be shared. */
void run_tcp_reuseport(struct run_tcp *c);
/* A listener on local that shares the layer's listener of a reuseport
 * listener of this process on e already there.  NULL with errno
 * EADDRINUSE when there is none. */
struct run_tcp *run_tcp_listen_shared(struct run_ep *e, const struct sockaddr_in *local,
				      uint32_t spin_us);
/* Start connecting to peer from e's address; wait for the handshake
 * unless nonblock (then *inprogress).  NULL with errno. */
struct run_tcp *run_tcp_connect(struct run_ep *e, const struct sockaddr_in *peer, bool nonblock,
				uint32_t spin_us, int timeo_ms);
/* The next connection of listener l (blocking unless nonblock or
 * MSG_DONTWAIT-like).  NULL with errno (EAGAIN). */
struct run_tcp *run_tcp_accept(struct run_tcp *l, bool nonblock);
void run_tcp_close(struct run_tcp *c);

ssize_t run_tcp_send(struct run_tcp *c, const struct iovec *iov, size_t n, int flags);
ssize_t run_tcp_recv(struct run_tcp *c, const struct iovec *iov, size_t n, int flags);
int run_tcp_shutdown(struct run_tcp *c, int how);
/* poll's view: POLLIN, POLLOUT, POLLERR, POLLHUP (drives the endpoint
 * first). */
short run_tcp_poll(struct run_tcp *c);
/* The same without driving the endpoint (the caller drove it, once for
 * all its sockets).  Under stack_lock. */
short run_tcp_poll_driven(struct run_tcp *c);
/* unet_tcp__arrivals: moves with every arrival (epoll's edges).  Under
 * stack_lock (epoll's pass holds it for all its sockets). */
uint64_t run_tcp_arrivals(struct run_tcp *c);
/* SO_ERROR: the pending error (positive errno), cleared. */
int run_tcp_error(struct run_tcp *c);
/* SO_KEEPALIVE with TCP_KEEPIDLE/INTVL/CNT, and IP_TOS, on the U-Net
 * connection (unet_tcp.h).  0, or -1 with errno. */
int run_tcp_keepalive(struct run_tcp *c, bool on, int idle_s, int intvl_s, int count);
int run_tcp_tos(struct run_tcp *c, int tos);
/* TCP_MAXSEG: the connection's MSS (0 for a listener). */
int run_tcp_mss(struct run_tcp *c);

#endif /* UNET_RUN_TCP_H */
