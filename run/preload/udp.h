/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * udp.h - a UDP socket of the program's that runs on U-Net: the UDP
 * layer's socket (unet_udp.h) on the interface's endpoint, plus the
 * queue of datagrams received for it and the socket flags the kernel
 * would otherwise keep.
 *
 * The endpoint's receive queue is shared by all its sockets: whoever
 * drains it (any socket's receive, or poll) hands each datagram to its
 * socket's queue; a datagram for a socket whose queue is full is dropped,
 * as the kernel drops one for a full socket buffer.  All under
 * stack_lock; blocking waits are outside it.
 */
#ifndef UNET_RUN_UDP_H
#define UNET_RUN_UDP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "stack.h"

/* A socket's queue of datagrams taken off the endpoint, not read yet:
 * it starts small and doubles as datagrams wait, up to RUN_UDP_QMAX (a
 * burst the program is too slow for, on a loaded machine, waits here
 * instead of being dropped; each waiting datagram holds a frame of the
 * endpoint's, and the default free queue has 2048).  Past that a
 * datagram is dropped and counted, as the kernel drops one for a full
 * socket buffer. */
#define RUN_UDP_QMIN 64
#define RUN_UDP_QMAX 1024
/* Datagrams larger than this wait in a copy (udp.c, keep()): they may
 * hold a reassembly slot of the endpoint's.  A frame of MTU 1500 never
 * does. */
#define RUN_UDP_COPY_ABOVE 1472
#define RUN_UDP_COPY_MAX (256u * 1024u) /* bytes of copies one socket holds */
/* Datagrams waiting in the endpoint's frames: per socket, and for all
 * the sockets of an endpoint (its default free queue has 2048). */
#define RUN_UDP_FRAMES_HELD 32
#define RUN_EP_FRAMES_HELD 256
/* Multicast groups one socket may join on U-Net (the kernel's default
 * limit per socket, igmp_max_memberships, is 20). */
#define RUN_UDP_GROUPS 8

struct run_udp {
	struct run_udp *next; /* on its endpoint's list */
	struct run_ep *e;
	struct unet_udp_sock *us;
	uint32_t local_addr;  /* network order */
	uint16_t local_port;  /* host order */
	uint32_t peer_addr;   /* connected peer (network order), 0: none */
	uint16_t peer_port;   /* host order */
	struct unet_recv_desc *q; /* a ring of qcap, head the oldest */
	unsigned int qcap, head, count;
	bool nonblock;
	int rcvtimeo_ms, sndtimeo_ms; /* -1: none */
	uint32_t spin_us;
	uint64_t rx, tx;      /* datagrams, for the log at close */
	/* SO_REUSEPORT: sockets of this process bound to the same address
	 * and port share the UDP layer's socket us, and its datagrams are
	 * spread over them by source (address, port), as the kernel's
	 * reuseport group does.  rp_next: the ring of the sockets sharing
	 * us (u itself when alone).  The layer's socket is closed with the
	 * last of them. */
	bool reuseport;
	struct run_udp *rp_next;
	uint32_t copied_bytes; /* of the copies in q (RUN_UDP_COPY_MAX) */
	uint32_t frames_held;  /* datagrams in q in frames (RUN_UDP_FRAMES_HELD) */
	uint64_t drop_full;   /* arrived while q was full: dropped, as the
			       * kernel drops for a full socket buffer */
	/* Its slot in the process's socket file (publish.h), -1: none.
	 * The counters are published where they move, under the stack's
	 * lock, which also keeps two threads from writing one slot. */
	int pub_slot;
	uint64_t arrivals;    /* datagrams queued here, ever: epoll's edges */
	/* Joined groups: a UDP-layer socket of its own for each
	 * (group, local_port), whose datagrams land in q as the socket's. */
	uint32_t group_addr[RUN_UDP_GROUPS]; /* network order, 0: free */
	struct unet_udp_sock *group_us[RUN_UDP_GROUPS];
};

/* Open the U-Net socket for local_addr:local_port (network order, host
 * order) on e, connected to peer if peer_addr != 0; reuseport (and
 * unconnected): the port is a SO_REUSEPORT group's, which other
 * processes' sockets with it (the same user's) join.  Returns it, or
 * NULL with errno. */
struct run_udp *run_udp_open(struct run_ep *e, uint32_t local_addr, uint16_t local_port,
			     uint32_t peer_addr, uint16_t peer_port, bool reuseport, bool nonblock,
			     uint32_t spin_us);
/* Receive the datagrams sent to group (a multicast address, network
 * order) on the socket's port too; leave it again.  The kernel's side of
 * the membership (IGMP, the device's filter) is the caller's.  0, or -1
 * with errno: EADDRINUSE (another socket on this interface has
 * group:port), ENOBUFS (RUN_UDP_GROUPS joined), EADDRNOTAVAIL (leave: not
 * joined), EOPNOTSUPP (a fork's child). */
/* A socket bound to local_addr:local_port that joins the reuseport
 * group of a socket of e already there (one opened with reuseport set,
 * unconnected).  NULL with errno EADDRINUSE when there is none. */
struct run_udp *run_udp_share(struct run_ep *e, uint32_t local_addr, uint16_t local_port,
			      bool nonblock, uint32_t spin_us);
/* connect() on a socket already on U-Net (bind first, or a send that
 * bound it): from now on it takes datagrams from peer_addr:peer_port
 * only (port 0: any of the address's) and sends there when no
 * destination is named; peer_addr 0 (AF_UNSPEC) undoes it.  The port
 * stays the socket's own in the XDP program: the filter is here, where
 * the datagrams are sorted to sockets. */
void run_udp_connect(struct run_udp *u, uint32_t peer_addr, uint16_t peer_port);
int run_udp_join(struct run_udp *u, uint32_t group);
int run_udp_leave(struct run_udp *u, uint32_t group);

/* Close it: the port goes back to the kernel, queued datagrams are
 * released. */
void run_udp_close(struct run_udp *u);

/* The send and receive family, with the kernel's results and errno. */
ssize_t run_udp_send(struct run_udp *u, const struct iovec *iov, size_t iovcnt, int flags,
		     const struct sockaddr *to, socklen_t tolen);
ssize_t run_udp_recv(struct run_udp *u, const struct iovec *iov, size_t iovcnt, int flags,
		     struct sockaddr *from, socklen_t *fromlen, int *msg_flags);

/* Whether a receive would not block now (drains the endpoint first). */
bool run_udp_readable(struct run_udp *u);
/* Whether datagrams wait in u's queue, without draining the endpoint
 * (the caller drained it).  Under stack_lock. */
static inline bool run_udp_queued(const struct run_udp *u)
{
	return u->count > 0;
}
/* Datagrams ever queued to u: moves with every arrival (epoll's edges).
 * Under stack_lock (epoll's pass holds it for all its sockets). */
uint64_t run_udp_arrivals(struct run_udp *u);
/* FIONREAD: the size of the next datagram, 0 when none. */
int run_udp_next_len(struct run_udp *u);

/* Drain e's receive queue into its sockets' queues.  Under stack_lock. */
void run_udp_pump(struct run_ep *e);

#endif /* UNET_RUN_UDP_H */
