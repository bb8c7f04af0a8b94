/* SPDX-License-Identifier: BSD-2-Clause */
/* forkrelay.c - the parent's relay of its forked children's TCP
 * connections (forkrelay.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forkrelay.h"
#include "log.h"
#include "signals.h"

#define RELAY_BUF 16384
/* The thread's sleep: short, since the connection's progress (its
 * timers, the parent's close) is looked at, not signalled. */
#define RELAY_SLICE_MS 10
/* At the parent's exit: how long the relays whose child is gone may go
 * on flushing (as tcp.c's exit linger bounds a closed connection's). */
#define RELAY_EXIT_MS 5000

struct relay {
	struct relay *next;
	int ufd;		/* the parent's end of the socketpair */
	void *sock;
	struct run_tcp *c;
	bool child_done;	/* the child will write no more (end of file) */
	bool conn_done;		/* the connection gave its end (or failed) */
	size_t in_len, in_off;	/* child -> connection, waiting */
	size_t out_len, out_off; /* connection -> child, waiting */
	char in[RELAY_BUF], out[RELAY_BUF];
};

static struct relay_ops ops;
/* New relays, handed from fork's parent handler to the thread; and
 * every relay's descriptor, for a later fork's child to close.  Under
 * relay_lock, which is never held while the stack's lock is taken. */
static pthread_mutex_t relay_lock = PTHREAD_MUTEX_INITIALIZER;
static struct relay *incoming;
static int *fds;
static size_t nfds, fds_cap;
static bool thread_running;
static bool exit_hook; /* relay_exit is registered */
/* The thread's own list: only the thread touches it. */
static struct relay *active;

void relay_init(const struct relay_ops *o)
{
	ops = *o;
}

static void fds_remove(int fd)
{
	run_lock(&relay_lock);
	for (size_t i = 0; i < nfds; i++) {
		if (fds[i] == fd) {
			fds[i] = fds[--nfds];
			break;
		}
	}
	run_unlock(&relay_lock);
}

static void relay_free(struct relay *r)
{
	fds_remove(r->ufd);
	close(r->ufd);
	ops.release(r->sock); /* the connection closes here if it was the last */
	free(r);
}

/* One step of r; false when it is over. */
static bool relay_step(struct relay *r)
{
	bool owned = !ops.parent_holds(r->sock);
	ssize_t n;

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

static void *relay_thread(void *arg)
{
	sigset_t all;

	(void)arg;
	/* Signals are the program's threads' business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[RELAY_MAX_PER_FORK * 4 + 8];
		nfds_t np = 0;
		struct relay **pp;

		run_lock(&relay_lock);
		while (incoming) {
			struct relay *r = incoming;

			incoming = r->next;
			r->next = active;
			active = r;
		}
		if (!active) {
			thread_running = false;
			run_unlock(&relay_lock);
			return NULL;
		}
		run_unlock(&relay_lock);
		for (pp = &active; *pp;) {
			struct relay *r = *pp;

			if (relay_step(r)) {
				pp = &r->next;
				continue;
			}
			*pp = r->next;
			relay_free(r);
		}
		for (struct relay *r = active; r && np + 2 <= sizeof(p) / sizeof(p[0]); r = r->next) {
			short ev = 0;

			if (!r->in_len && !r->child_done)
				ev |= POLLIN;
			if (r->out_len)
				ev |= POLLOUT;
			if (ev)
				p[np++] = (struct pollfd){ .fd = r->ufd, .events = ev };
			if (r->c->e->wait_fd >= 0)
				p[np++] = (struct pollfd){ .fd = r->c->e->wait_fd, .events = POLLIN };
		}
		poll(p, np, RELAY_SLICE_MS);
	}
}

/* How many relays' children have closed their end (the parent's end
 * hangs up): those still have bytes to hand over, or the connection's
 * end to wait for.  A relay that ended is no longer listed. */
static unsigned int relays_orphaned(void)
{
	struct pollfd p[RELAY_MAX_PER_FORK];
	unsigned int n = 0;
	size_t i = 0;

	while (true) {
		nfds_t np = 0;

		run_lock(&relay_lock);
		for (; i < nfds && np < RELAY_MAX_PER_FORK; i++)
			p[np++] = (struct pollfd){ .fd = fds[i] };
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

int relay_add(int ufd, void *sock, struct run_tcp *c)
{
	struct relay *r = calloc(1, sizeof(*r));
	pthread_t t;
	int err = 0;

	if (!r)
		return -1;
	r->ufd = ufd;
	r->sock = sock;
	r->c = c;
	run_lock(&relay_lock);
	if (nfds == fds_cap) {
		size_t cap = fds_cap ? fds_cap * 2 : 16;
		int *n = realloc(fds, cap * sizeof(*n));

		if (!n) {
			run_unlock(&relay_lock);
			free(r);
			return -1;
		}
		fds = n;
		fds_cap = cap;
	}
	if (!thread_running) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		err = pthread_create(&t, &a, relay_thread, NULL);
		pthread_attr_destroy(&a);
		if (err) {
			run_unlock(&relay_lock);
			free(r);
			return -1;
		}
		thread_running = true;
		if (!exit_hook)
			exit_hook = atexit(relay_exit) == 0;
	}
	fds[nfds++] = ufd;
	r->next = incoming;
	incoming = r;
	run_unlock(&relay_lock);
	return 0;
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
		close(fds[i]);
	nfds = 0;
	incoming = NULL;
	active = NULL;
	thread_running = false;
	{
		/* Held by the parent's prepare; the child's one thread is not
		 * its owner, and a fresh mutex is the same as a released one. */
		pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

		relay_lock = fresh;
	}
	sig_defer_leave(); /* prepare's run_lock */
}
