/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * forklisten.h - a forked child's copy of a U-Net TCP listener: the
 * child's side (docs/unet-run.md "Descriptors", fork).
 *
 * A U-Net listener's state lives in the process that made it, so a
 * child of fork cannot accept on it.  A pre-forking server (nginx's
 * workers, a prefork pool) accepts in its children though; so at fork
 * each U-Net listener gets a kernel stream socketpair, the *channel*: in
 * the child the listener's descriptor becomes one end, and the parent's
 * relay thread (forkrelay.h) accepts connections on the listener for
 * the child and hands each one over on the channel as one end of a
 * socketpair of its own (SCM_RIGHTS), then relays that connection as it
 * relays the connections a child inherits.  So the child's poll, select
 * and epoll (every mode) on its listener are the kernel's, on the
 * channel: readable when a connection waits for it.
 *
 * The relay hands connections only to a child that showed it accepts:
 * its first accept, or poll, select or epoll_ctl asking for input on its
 * copy of the listener (a forking server's per-connection child, which
 * inherits the listener and never uses it, gets none).  At most
 * FL_PENDING connections wait on a channel not yet accepted; the next
 * goes to another child (the one whose turn it is among those with
 * room), or waits in the listener's backlog.  The child tells the relay
 * which connection it accepted; a connection handed to a child that
 * closes its copy (or exits) without accepting it is handed to another
 * child, as nothing was read from it yet.
 *
 * The messages, fixed-size, in host order (both ends are one program):
 * parent -> child, one per connection, with its descriptor attached:
 * struct fl_handover; child -> parent: struct fl_note.
 */
#ifndef UNET_RUN_FORKLISTEN_H
#define UNET_RUN_FORKLISTEN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

/* Connections handed to one child's copy of a listener and not yet
 * accepted by it: the rest wait for another child, or in the backlog. */
#define FL_PENDING 1

struct fl_handover {
	uint32_t id; /* the relay's number for the connection, never 0 */
	struct sockaddr_in local, peer;
};

enum fl_note_kind {
	FL_NOTE_ACCEPTS = 1, /* this child (pid in id) accepts on its copy */
	FL_NOTE_TAKEN = 2,   /* it accepted connection id */
};

struct fl_note {
	uint32_t kind;
	uint32_t id;
};

/* In every child of fork, first (its locks are fresh). */
void fl_child_forked(void);

/* In the child (carry_child): fd became the child's end of a channel;
 * it is announced to the relay on its first use for input. */
void fl_child_add(int fd);

/* Whether this process has copies not announced yet (cheap: poll,
 * select and epoll_ctl look further only then). */
extern int fl_unannounced;

static inline bool fl_child_unannounced(void)
{
	return __atomic_load_n(&fl_unannounced, __ATOMIC_RELAXED) != 0;
}

/* fd is used for input (accept, poll, select, epoll_ctl with EPOLLIN):
 * if it is a channel not announced yet, announce it. */
void fl_child_use(int fd);

/* The same for every descriptor of a poll array / select read set. */
void fl_child_poll(const void *pollfds, unsigned long n);
void fl_child_select(int nfds, const void *readfds);

/* accept4 on the child's copy fd: the next connection handed over, its
 * addresses in *local and *peer; flags: accept4's SOCK_NONBLOCK and
 * SOCK_CLOEXEC.  Waits unless the channel is non-blocking (EAGAIN then,
 * as the kernel's accept).  The new descriptor, or -1 with errno
 * (EINVAL: the parent's relay is gone). */
int fl_accept(int fd, int flags, struct sockaddr_in *local, struct sockaddr_in *peer);

#endif /* UNET_RUN_FORKLISTEN_H */
