/* SPDX-License-Identifier: BSD-2-Clause */
/* forkrelay.c - the parent's relay of its forked children's TCP
 * connections (forkrelay.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "forklisten.h"
#include "forkrelay.h"
#include "log.h"
#include "signals.h"
#include "udp.h"

#define RELAY_BUF 16384
/* The thread's sleep: short, since the connection's progress (its
 * timers, the parent's close) is looked at, not signalled. */
#define RELAY_SLICE_MS 10
/* At the parent's exit: how long the relays whose child is gone may go
 * on flushing (as tcp.c's exit linger bounds a closed connection's). */
#define RELAY_EXIT_MS 5000

struct lchan;

struct relay {
	struct relay *next;
	int ufd;		/* the parent's end of the socketpair (-1: none yet) */
	void *sock;		/* NULL: a connection the relay accepted, its own */
	struct run_tcp *c;
	/* A connection accepted for the children: its listener's layer
	 * socket (to hand it to a child of that listener), and while it
	 * waits on a channel, not accepted yet, the channel and its id. */
	struct unet_tcp *lt;
	struct lchan *ch;
	uint32_t id;
	bool child_done;	/* the child will write no more (end of file) */
	bool conn_done;		/* the connection gave its end (or failed) */
	size_t in_len, in_off;	/* child -> connection, waiting */
	size_t out_len, out_off; /* connection -> child, waiting */
	char in[RELAY_BUF], out[RELAY_BUF];
};

/* A child's copy of a listener: the parent's end of its channel. */
struct lchan {
	struct lchan *next;
	int ufd;
	int fd; /* the listener's descriptor in the parent (for the log) */
	void *sock;
	struct run_tcp *l;
	bool accepts;		/* the child said it accepts */
	bool dry;		/* the listener had no connection this round */
	bool flooded;		/* more notes than a turn reads: not polled */
	int pid;		/* the child that said so */
	unsigned int pending;	/* handed over, not accepted yet */
	size_t rx_len;
	unsigned char rx[sizeof(struct fl_note)];
};

static struct relay_ops ops;
/* New relays and channels, handed from fork's parent handler to the
 * thread; and every descriptor of the relay's, for a later fork's child
 * to close.  Under relay_lock, which is never held while the stack's
 * lock is taken. */
static pthread_mutex_t relay_lock = PTHREAD_MUTEX_INITIALIZER;
static struct relay *incoming;
static struct lchan *incoming_ch;
/* A descriptor of the relay's: a connection's end (conn) or a child's
 * listener channel. */
struct relay_fd {
	int fd;
	bool conn;
};
static struct relay_fd *fds;
static size_t nfds, fds_cap;
static bool thread_running;
static bool exit_hook; /* relay_exit is registered */
static unsigned int nchannels; /* incoming and live */
/* The thread's own lists: only the thread touches them.  held:
 * connections accepted for the children that wait for one (their
 * child closed its copy before accepting them). */
static struct relay *active, *held;
static struct lchan *chans;
static unsigned int nconns; /* accepted for children: active and held */
static bool conns_full;	    /* nconns reached RELAY_MAX_CONNS (logged) */
static uint32_t next_id = 1;

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83 /* Linux 6.16 (asm-generic/socket.h) */
#endif

void relay_refuse_rights(int fd)
{
	int zero = 0;

	syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_PASSRIGHTS, &zero, sizeof(zero));
}

#ifdef __SANITIZE_THREAD__
/* The sanitizers' hook for a raw close (sanitizer/linux_syscall_hooks.h,
 * which gcc does not install; libtsan has the function). */
void __sanitizer_syscall_pre_impl_close(long fd);
#endif

/* Close fd, an end the relay's thread used through the interposed
 * calls, by a raw system call (not the program's to intercept). */
static void relay_close_fd(int fd)
{
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer models a descriptor as memory: the relay thread's
	 * recv, send and poll on it are reads, a close a write that also
	 * forgets them.  A raw close it does not see leaves those reads
	 * behind, and when the program's next descriptor gets the number
	 * and another thread closes it, that close "races" with the relay's
	 * recv of long before (the kernel orders the two: the number is
	 * free only after our close).  Telling it of the close is the
	 * happens-before it is missing; nothing else changes. */
	__sanitizer_syscall_pre_impl_close(fd);
#endif
	syscall(SYS_close, fd);
}

void relay_init(const struct relay_ops *o)
{
	ops = *o;
}

/* Under relay_lock.  0, or -1 (no memory). */
static int fds_add_locked(int fd, bool conn)
{
	if (nfds == fds_cap) {
		size_t cap = fds_cap ? fds_cap * 2 : 16;
		struct relay_fd *n = realloc(fds, cap * sizeof(*n));

		if (!n)
			return -1;
		fds = n;
		fds_cap = cap;
	}
	fds[nfds++] = (struct relay_fd){ .fd = fd, .conn = conn };
	return 0;
}

static void fds_remove_locked(int fd)
{
	for (size_t i = 0; i < nfds; i++) {
		if (fds[i].fd == fd) {
			fds[i] = fds[--nfds];
			break;
		}
	}
}


static void relay_close_ufd(struct relay *r)
{
	if (r->ufd < 0)
		return;
	/* Removed and closed under the lock fork's prepare takes: a fork
	 * between the two would give its child this end of another child's
	 * connection. */
	run_lock(&relay_lock);
	fds_remove_locked(r->ufd);
	relay_close_fd(r->ufd);
	run_unlock(&relay_lock);
	r->ufd = -1;
}

static void relay_free(struct relay *r)
{
	relay_close_ufd(r);
	if (r->sock) {
		ops.release(r->sock); /* the connection closes here if it was the last */
	} else {
		run_tcp_close(r->c);
		nconns--;
	}
	free(r);
}

/* One step of r; false when it is over. */
static bool relay_step(struct relay *r)
{
	bool owned = !r->sock || !ops.parent_holds(r->sock);
	ssize_t n;

	if (r->ch)
		return true; /* handed over, not accepted yet: untouched */
	/* The child's bytes onto the connection. */
	if (!r->in_len && !r->child_done) {
		n = recv(r->ufd, r->in, sizeof(r->in), MSG_DONTWAIT);
		if (n > 0) {
			r->in_len = (size_t)n;
			r->in_off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			r->child_done = true;
			if (!owned)
				return false; /* the parent's connection, untouched */
			run_tcp_shutdown(r->c, SHUT_WR);
		}
	}
	if (r->in_len) {
		struct iovec v = { r->in + r->in_off, r->in_len - r->in_off };

		n = run_tcp_send(r->c, &v, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			r->in_off += (size_t)n;
			if (r->in_off == r->in_len)
				r->in_len = 0;
		} else if (errno != EAGAIN && errno != EINTR) {
			return false; /* the connection failed: the child sees its end */
		}
	}
	if (!owned)
		return true;
	/* The child closed its end for good (a hang-up, not a mere
	 * shutdown of its writing) and all it wrote went to the layer: the
	 * connection is an orphan, which the layer's close finishes on its
	 * own (its FIN, its timers), as the kernel finishes a closed
	 * socket's.  Waiting here for the peer's FIN let a peer that never
	 * sends one hold every relay, and the parent's descriptors, for
	 * good. */
	if (r->child_done && !r->in_len) {
		struct pollfd p = { .fd = r->ufd };

		if (poll(&p, 1, 0) > 0 && (p.revents & POLLHUP))
			return false;
	}
	/* The connection's bytes to the child, once they are the child's. */
	if (!r->out_len && !r->conn_done) {
		struct iovec v = { r->out, sizeof(r->out) };

		n = run_tcp_recv(r->c, &v, 1, MSG_DONTWAIT);
		if (n > 0) {
			r->out_len = (size_t)n;
			r->out_off = 0;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			r->conn_done = true;
			shutdown(r->ufd, SHUT_WR);
		}
	}
	if (r->out_len) {
		n = send(r->ufd, r->out + r->out_off, r->out_len - r->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			r->out_off += (size_t)n;
			if (r->out_off == r->out_len)
				r->out_len = 0;
		} else if (errno != EAGAIN && errno != EINTR) {
			return false; /* the child is gone */
		}
	}
	return !(r->child_done && r->conn_done && !r->out_len);
}

/* A note from ch's child. */
static void lchan_note(struct lchan *ch, const struct fl_note *n)
{
	if (n->kind == FL_NOTE_ACCEPTS) {
		ch->accepts = true;
		ch->pid = (int)n->id;
		return;
	}
	if (n->kind != FL_NOTE_TAKEN)
		return;
	for (struct relay *r = active; r; r = r->next) {
		if (r->ch == ch && r->id == n->id) {
			r->ch = NULL; /* accepted: relayed from now on */
			ch->pending--;
			return;
		}
	}
}

/* Notes read from one channel per turn: a child that writes without
 * end does not keep the thread from the others.  A child has at most
 * FL_PENDING + 1 notes to send at a time; one that sent more is not
 * polled until the next turn (a slice at most), so a flood costs the
 * thread 16 notes a slice. */
#define LCHAN_READS 16

/* Read ch's notes; false when the child's copy is closed (every copy of
 * its end). */
static bool lchan_read(struct lchan *ch)
{
	ch->flooded = true;
	for (int k = 0; k < LCHAN_READS; k++) {
		ssize_t n = recv(ch->ufd, ch->rx + ch->rx_len, sizeof(ch->rx) - ch->rx_len,
				 MSG_DONTWAIT);

		if (n == 0)
			return false;
		if (n < 0) {
			ch->flooded = false;
			return errno == EAGAIN || errno == EINTR;
		}
		ch->rx_len += (size_t)n;
		if (ch->rx_len == sizeof(ch->rx)) {
			struct fl_note note;

			memcpy(&note, ch->rx, sizeof(note));
			ch->rx_len = 0;
			lchan_note(ch, &note);
		}
	}
	return true;
}

/* ch's child closed its copy: what it had not accepted waits for
 * another child (nothing was read from it yet). */
static void lchan_free(struct lchan *ch)
{
	unsigned int back = 0;

	for (struct relay **pp = &active; *pp;) {
		struct relay *r = *pp;

		if (r->ch != ch) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		relay_close_ufd(r); /* the child's end went with the channel */
		r->ch = NULL;
		r->next = held;
		held = r;
		back++;
	}
	if (back)
		run_log("fd %d tcp listener: child %d closed its copy with %u connection%s it had "
			"not accepted: each waits for another child",
			ch->fd, ch->pid, back, back == 1 ? "" : "s");
	run_lock(&relay_lock); /* as relay_close_ufd: not across a fork */
	fds_remove_locked(ch->ufd);
	relay_close_fd(ch->ufd);
	run_unlock(&relay_lock);
	ops.release(ch->sock);
	run_lock(&relay_lock);
	nchannels--;
	run_unlock(&relay_lock);
	free(ch);
}

/* Give connection r to ch's child: a socketpair, one end sent on the
 * channel.  false: it stays where it was. */
static bool hand(struct lchan *ch, struct relay *r)
{
	struct fl_handover h = { next_id, r->c->local, r->c->peer };
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec v = { &h, sizeof(h) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int pair[2];
	long n;

	/* Under relay_lock from the pair to the close of the child's end:
	 * a fork meanwhile would give its child a copy of either end. */
	run_lock(&relay_lock);
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
		run_unlock(&relay_lock);
		return false;
	}
	relay_refuse_rights(pair[0]);
	if (fds_add_locked(pair[0], true) < 0) {
		syscall(SYS_close, pair[0]);
		syscall(SYS_close, pair[1]);
		run_unlock(&relay_lock);
		return false;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pair[1], sizeof(int));
	n = syscall(SYS_sendmsg, ch->ufd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
	syscall(SYS_close, pair[1]);
	run_unlock(&relay_lock);
	if (n != (long)sizeof(h)) {
		/* The channel is full or its child gone (its end of file
		 * comes next): the connection waits. */
		run_lock(&relay_lock);
		fds_remove_locked(pair[0]);
		syscall(SYS_close, pair[0]);
		run_unlock(&relay_lock);
		return false;
	}
	r->ufd = pair[0];
	r->ch = ch;
	r->id = next_id++;
	if (!next_id)
		next_id = 1;
	ch->pending++;
	if (run_log_on()) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &r->c->peer.sin_addr, a, sizeof(a));
		run_log("fd %d tcp listener: connection from %s:%u on U-Net handed to child %d "
			"(the pid it says)",
			ch->fd, a, ntohs(r->c->peer.sin_port), ch->pid);
	}
	return true;
}

/* A connection for ch's listener: one waiting, or a new one accepted.
 * NULL when there is none (or no room: RELAY_MAX_CONNS). */
static struct relay *next_conn(struct lchan *ch)
{
	struct run_tcp *c;
	struct relay *r;

	for (struct relay **pp = &held; *pp; pp = &(*pp)->next) {
		if ((*pp)->lt == ch->l->t) {
			r = *pp;
			*pp = r->next;
			r->next = NULL;
			return r;
		}
	}
	if (nconns >= RELAY_MAX_CONNS) {
		/* Said once each time the table fills: the children (one may
		 * be hoarding them) hold every connection the relay may
		 * carry, and the next wait in the backlog (the parent's own
		 * accept may still take them). */
		if (!conns_full)
			run_log("tcp listeners: %d connections accepted for children are relayed, "
				"the most: the next wait in the listener's backlog until one ends",
				RELAY_MAX_CONNS);
		conns_full = true;
		return NULL;
	}
	conns_full = false;
	c = run_tcp_accept(ch->l, true);
	if (!c)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		c->linger_s = 0; /* reset: no memory to carry it */
		run_tcp_close(c);
		return NULL;
	}
	r->ufd = -1;
	r->c = c;
	r->lt = ch->l->t;
	nconns++;
	return r;
}

/* Hand connections to the children that accept and have room, in turn
 * (each served channel goes to the end of the list). */
static void hand_over(void)
{
	for (struct lchan *ch = chans; ch; ch = ch->next)
		ch->dry = false;
	for (;;) {
		struct lchan **pp, *ch = NULL;
		struct relay *r;

		for (pp = &chans; *pp; pp = &(*pp)->next) {
			if ((*pp)->accepts && !(*pp)->dry && (*pp)->pending < FL_PENDING) {
				ch = *pp;
				break;
			}
		}
		if (!ch)
			return;
		r = next_conn(ch);
		if (!r) {
			for (struct lchan *o = chans; o; o = o->next)
				if (o->l->t == ch->l->t)
					o->dry = true;
			continue;
		}
		if (!hand(ch, r)) {
			ch->dry = true;
			r->next = held;
			held = r;
			continue;
		}
		r->next = active;
		active = r;
		/* Its turn is over. */
		*pp = ch->next;
		ch->next = NULL;
		for (pp = &chans; *pp; pp = &(*pp)->next)
			;
		*pp = ch;
	}
}

/* Held connections whose listener no child has a copy of any more:
 * reset (the parent cannot accept them: they were taken from its
 * listener's queue). */
static void held_expire(void)
{
	for (struct relay **pp = &held; *pp;) {
		struct relay *r = *pp;
		bool wanted = false;

		for (struct lchan *ch = chans; ch && !wanted; ch = ch->next)
			wanted = ch->l->t == r->lt;
		if (wanted) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		run_log("tcp listener: a connection accepted for children reset: no child has "
			"the listener any more");
		r->c->linger_s = 0;
		relay_free(r);
	}
}

/* The thread's poll set, grown as needed (only the thread uses it). */
static struct pollfd *pset;
static size_t pset_cap;

static bool pset_room(size_t n)
{
	struct pollfd *p;

	if (n <= pset_cap)
		return true;
	p = realloc(pset, n * sizeof(*p));
	if (!p)
		return false;
	pset = p;
	pset_cap = n;
	return true;
}

#define RELAY_EPS 16

/* e's wait descriptor into the set once; e into eps. */
static void pset_ep(struct run_ep *e, nfds_t *np, struct run_ep **eps, size_t *neps)
{
	for (size_t i = 0; i < *neps; i++)
		if (eps[i] == e)
			return;
	if (*neps == RELAY_EPS || e->wait_fd < 0)
		return;
	eps[(*neps)++] = e;
	pset[(*np)++] = (struct pollfd){ .fd = e->wait_fd, .events = POLLIN };
}

static void *relay_thread(void *arg)
{
	sigset_t all;

	(void)arg;
	/* Signals are the program's threads' business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct run_ep *eps[RELAY_EPS];
		size_t neps = 0, want = RELAY_EPS;
		nfds_t np = 0, nfirst;
		struct relay **pp;

		run_lock(&relay_lock);
		while (incoming) {
			struct relay *r = incoming;

			incoming = r->next;
			r->next = active;
			active = r;
		}
		while (incoming_ch) {
			struct lchan *ch = incoming_ch;

			incoming_ch = ch->next;
			ch->next = chans;
			chans = ch;
		}
		if (!active && !chans && !held) {
			thread_running = false;
			run_unlock(&relay_lock);
			return NULL;
		}
		run_unlock(&relay_lock);
		for (struct lchan **cp = &chans; *cp;) {
			struct lchan *ch = *cp;

			if (lchan_read(ch)) {
				cp = &ch->next;
				continue;
			}
			*cp = ch->next;
			lchan_free(ch);
		}
		held_expire();
		hand_over();
		for (pp = &active; *pp;) {
			struct relay *r = *pp;

			if (relay_step(r)) {
				pp = &r->next;
				continue;
			}
			*pp = r->next;
			relay_free(r);
		}
		for (struct relay *r = active; r; r = r->next)
			want++;
		for (struct lchan *ch = chans; ch; ch = ch->next)
			want++;
		if (!pset_room(want)) {
			poll(NULL, 0, RELAY_SLICE_MS);
			continue;
		}
		for (struct relay *r = active; r; r = r->next) {
			short ev = 0;

			if (r->ch)
				continue;
			if (!r->in_len && !r->child_done)
				ev |= POLLIN;
			if (r->out_len)
				ev |= POLLOUT;
			if (ev)
				pset[np++] = (struct pollfd){ .fd = r->ufd, .events = ev };
		}
		for (struct lchan *ch = chans; ch; ch = ch->next)
			if (!ch->flooded)
				pset[np++] = (struct pollfd){ .fd = ch->ufd, .events = POLLIN };
		nfirst = np;
		for (struct relay *r = active; r; r = r->next)
			pset_ep(r->c->e, &np, eps, &neps);
		for (struct lchan *ch = chans; ch; ch = ch->next)
			pset_ep(ch->l->e, &np, eps, &neps);
		if (poll(pset, np, RELAY_SLICE_MS) <= 0)
			continue;
		/* Frames wait: take them in (a connection's step drives its
		 * endpoint only when it reads or writes, and a channel without
		 * room does not accept), or the next poll finds them again at
		 * once. */
		for (nfds_t i = nfirst; i < np; i++) {
			if (!(pset[i].revents & POLLIN) || !eps[i - nfirst]->ep)
				continue;
			stack_enter();
			run_udp_pump(eps[i - nfirst]);
			stack_leave();
		}
	}
}

/* How many relays' children have closed their end (the parent's end
 * hangs up): those still have bytes to hand over, or the connection's
 * end to wait for.  A relay that ended is no longer listed.  Connections
 * only: a dead child's listener channel hangs up too, but nothing of a
 * peer's waits in it (one a hostile child filled with notes would keep
 * the exit waiting for RELAY_EXIT_MS). */
static unsigned int relays_orphaned(void)
{
	struct pollfd p[RELAY_MAX_PER_FORK];
	unsigned int n = 0;
	size_t i = 0;

	while (true) {
		nfds_t np = 0;

		run_lock(&relay_lock);
		for (; i < nfds && np < RELAY_MAX_PER_FORK; i++)
			if (fds[i].conn)
				p[np++] = (struct pollfd){ .fd = fds[i].fd };
		run_unlock(&relay_lock);
		if (!np)
			return n;
		if (poll(p, np, 0) > 0)
			for (nfds_t k = 0; k < np; k++)
				n += (p[k].revents & POLLHUP) != 0;
	}
}

/*
 * At exit (an atexit handler: it runs before the library's destructors,
 * whose exit linger then finishes the connections the relays closed).
 * A child that wrote its answer and exited leaves it in the socketpair
 * or the relay's buffer: the kernel would send it after every process
 * is gone, a relay only while its thread runs.  Wait, at most
 * RELAY_EXIT_MS, until every relay whose child is gone has ended.  A
 * relay whose child lives on cannot outlive the parent: not waited for.
 */
static void relay_exit(void)
{
	unsigned int left = 0;

	for (int waited = 0; waited < RELAY_EXIT_MS; waited += RELAY_SLICE_MS) {
		left = relays_orphaned();
		if (!left)
			return;
		poll(NULL, 0, RELAY_SLICE_MS);
	}
	run_log("exit: %u relayed connection(s) of exited children not finished in %d ms", left,
		RELAY_EXIT_MS);
}

/* Start the thread if it is not running.  Under relay_lock.  0 or -1. */
static int thread_start_locked(void)
{
	pthread_attr_t a;
	pthread_t t;
	int err;

	if (thread_running)
		return 0;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &a, relay_thread, NULL);
	pthread_attr_destroy(&a);
	if (err) {
		errno = err;
		return -1;
	}
	thread_running = true;
	if (!exit_hook)
		exit_hook = atexit(relay_exit) == 0;
	return 0;
}

int relay_add(int ufd, void *sock, struct run_tcp *c)
{
	struct relay *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	r->ufd = ufd;
	r->sock = sock;
	r->c = c;
	run_lock(&relay_lock);
	if (thread_start_locked() < 0 || fds_add_locked(ufd, true) < 0) {
		run_unlock(&relay_lock);
		free(r);
		return -1;
	}
	r->next = incoming;
	incoming = r;
	run_unlock(&relay_lock);
	return 0;
}

int relay_listen_add(int ufd, int fd, void *sock, struct run_tcp *l)
{
	struct lchan *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return -1;
	ch->ufd = ufd;
	ch->fd = fd;
	ch->sock = sock;
	ch->l = l;
	run_lock(&relay_lock);
	if (nchannels >= RELAY_MAX_CHANNELS) {
		/* Not reached (relay_listen_room reserved it), but said
		 * right if it were. */
		run_unlock(&relay_lock);
		free(ch);
		errno = ENOBUFS;
		return -1;
	}
	if (thread_start_locked() < 0 || fds_add_locked(ufd, false) < 0) {
		run_unlock(&relay_lock);
		free(ch);
		return -1;
	}
	nchannels++;
	ch->next = incoming_ch;
	incoming_ch = ch;
	run_unlock(&relay_lock);
	return 0;
}

bool relay_listen_room(unsigned int reserved)
{
	bool room;

	/* Forks take turns from prepare to the parent's handler, and only
	 * that handler adds channels: what is free now stays free for the
	 * copies this fork reserves (the thread only frees). */
	run_lock(&relay_lock);
	room = nchannels + reserved < RELAY_MAX_CHANNELS;
	run_unlock(&relay_lock);
	return room;
}

void relay_fork_prepare(void)
{
	run_lock(&relay_lock);
}

void relay_fork_parent(void)
{
	run_unlock(&relay_lock);
}

void relay_child_forget(void)
{
	/* The child has one thread and a copy of the parent's memory: the
	 * lists are the parent's, only the descriptors are the child's. */
	for (size_t i = 0; i < nfds; i++)
		close(fds[i].fd);
	nfds = 0;
	incoming = NULL;
	incoming_ch = NULL;
	active = held = NULL;
	chans = NULL;
	nconns = nchannels = 0;
	conns_full = false;
	pset = NULL; /* the parent's thread's: not freed here */
	pset_cap = 0;
	thread_running = false;
	/* Taken by prepare on the thread that forked, which the child's one
	 * thread is: released as the parent's handler does (a plain mutex
	 * records no owner to check).  Overwritten with a fresh one instead,
	 * ThreadSanitizer, which cannot see that, counted it held for good
	 * and reported a double lock at the child's next fork from another
	 * thread. */
	run_unlock(&relay_lock); /* and prepare's deferral of signals */
}
