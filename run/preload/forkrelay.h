/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * forkrelay.h - a forked child's TCP connections, carried by the parent
 * (docs/unet-run.md "Descriptors", fork).
 *
 * A U-Net connection's state lives in the memory of the process that
 * made it, so a child of fork cannot run it.  A forking server's child
 * serves the connection its parent accepted, though; so at fork each
 * U-Net TCP connection of the parent gets a socketpair: in the child the
 * connection's descriptor becomes one end (an ordinary kernel stream
 * socket: read, write, poll, epoll, shutdown and close all work on it),
 * and a thread of the parent's relays between the other end and the
 * connection:
 *
 * - what the child writes is sent on the connection (interleaved with
 *   what the parent sends, as on a kernel socket the two share);
 * - what arrives on the connection goes to the child only once the
 *   parent has closed every descriptor of it (the forking server's
 *   parent closes its copy at once): while the parent holds one, the
 *   data is the parent's to read, as it would be on a kernel socket
 *   the child never reads;
 * - the child's close (or exit) ends the relay; when the parent holds
 *   no descriptor either, the connection is closed then (FIN), after
 *   what arrived meanwhile was handed over.
 *
 * The same thread serves the children's copies of the parent's U-Net
 * listeners (forklisten.h): it accepts on a listener for the children
 * that accept on their copy, hands each connection to one of them over
 * the copy's channel, and relays it as above (a connection it accepted
 * is its own: what arrives is the child's at once).
 */
#ifndef UNET_RUN_FORKRELAY_H
#define UNET_RUN_FORKRELAY_H

#include <stdbool.h>

#include "tcp.h"

/* At most this many connections are carried per fork: a server that
 * forks with more open (a database's snapshot child) keeps them its own,
 * and the child's copies refuse (EOPNOTSUPP) as without a relay. */
#define RELAY_MAX_PER_FORK 64

/* At most this many connections accepted for children are relayed at
 * once (each holds two 16 KiB buffers in the parent: 8 MiB in all);
 * past it the next connections wait in the listener's backlog (logged
 * once each time the table fills).  And at most this many children's
 * copies of listeners (channels) at once; past it a child's copy
 * refuses as without a relay (logged by the fork's prepare). */
#define RELAY_MAX_CONNS 256
#define RELAY_MAX_CHANNELS 256

/* What the relay needs of the socket it carries (the preload's run_sock,
 * opaque here): whether the parent still has a descriptor of it, and
 * to give back the reference the relay holds. */
struct relay_ops {
	bool (*parent_holds)(void *sock);
	void (*release)(void *sock);
};

void relay_init(const struct relay_ops *ops);

/* fd, the parent's end of a socketpair a child holds the other end of,
 * refuses descriptors (SCM_RIGHTS): one the child passed would be
 * dropped in the relay's thread, whose close the child made as slow as
 * it liked (a socket lingering on unsent data), stalling every relay.
 * Linux 6.16 and later (SO_PASSRIGHTS); on older kernels the call
 * fails and the stall stays possible (docs/unet-run.md). */
void relay_refuse_rights(int fd);

/* In the parent after fork: carry connection c (of sock, whose
 * reference the relay now holds) over ufd, the parent's end.  0, or -1
 * (then the caller releases sock and closes ufd). */
int relay_add(int ufd, void *sock, struct run_tcp *c);

/* In the parent after fork: serve a child's copy of listener l (of
 * sock, the parent's descriptor fd, whose reference the relay now
 * holds) over ufd, the parent's end of its channel.  0, or -1 (then the
 * caller releases sock and closes ufd). */
int relay_listen_add(int ufd, int fd, void *sock, struct run_tcp *l);

/* Whether another child's copy of a listener can be served
 * (RELAY_MAX_CHANNELS), with reserved copies of the same fork counted
 * (they are added after it, in the parent's handler). */
bool relay_listen_room(unsigned int reserved);

/* Around fork: the relays' lists are not changed during it (prepare
 * takes their lock, the parent's handler gives it back). */
void relay_fork_prepare(void);
void relay_fork_parent(void);

/* In a child after fork: close the parent's ends of every relay it
 * inherited (the children of earlier forks must see their relay end
 * when the parent's does). */
void relay_child_forget(void);

#endif /* UNET_RUN_FORKRELAY_H */
