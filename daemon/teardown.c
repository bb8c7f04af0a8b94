/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * teardown.c - the slow end of an interface's or a grant's life, off the
 * serving thread.
 *
 * When the last endpoint of an interface goes (its client hung up or was
 * killed), what the daemon held there is freed at once on the serving
 * thread: the client's tags, ports, quota, the XSKMAP entries, the maps'
 * descriptors.  Two things then wait on the kernel, not on the daemon:
 * the last close of each AF_XDP socket (xsk_release unbinds the device
 * queue and waits for an RCU grace period, 5 to 15 ms each) and, in a
 * namespace of the client's own, detaching the XDP program (BPF_LINK_DETACH
 * takes RTNL and waits for another grace period, about 15 ms).  A user
 * with 8 namespaces made the thread that serves everybody wait ~250 ms
 * for its own teardown.  Those steps go to this thread: the serving thread
 * keeps a duplicate of each socket past the library's close (so that its
 * close is not the last), and hands the duplicates, the namespace's
 * descriptor and the interface's name here, in order.
 *
 * Until this thread is done with an interface, its device queues are
 * still bound and, in a client's namespace, its program still attached:
 * a request for a new interface on the same device of the same
 * namespace is refused with EBUSY at once and that device's queued jobs
 * move to the front (unetd_teardown_pending); the client's library asks
 * again.  The serving thread never runs or waits for a teardown.
 *
 * This thread never touches what a client sent (closer.c is for that:
 * such a close may wait forever), so its waits are the kernel's own.
 * Bound: a job holds the descriptors the interface held; nothing new.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unetd.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
static struct unetd_teardown *head, **tail = &head;
static struct unetd_teardown *running;
static bool started;
/* Set by unetd_teardown_drain: the process is about to exit, which
 * closes every descriptor anyway; only the detaches are left to do. */
static bool exiting;
static int own_netns_fd = -1;
static const char *pin_root;

struct unetd_teardown *unetd_teardown_new(const struct unetd_ns *ns, const char *ifname)
{
	struct unetd_teardown *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ns = *ns;
	snprintf(t->ifname, sizeof(t->ifname), "%s", ifname);
	t->ns_fd = -1;
	return t;
}

/* Runs on whichever thread: this one, or the serving thread before the
 * thread runs (or if it could not be made).  keep_fds (at exit): the
 * sockets are left to the process's exit, whose closes wait for nobody;
 * a 16-queue interface's 17 closes take ~250 ms, and the drain's 5 s
 * would run out before the detaches (pins left in the pin root). */
static void run(struct unetd_teardown *t, bool keep_fds)
{
	for (unsigned int i = 0; i < t->nfds && !keep_fds; i++)
		close(t->fds[i]);
	if (t->detach && t->ns_fd >= 0) {
		UNET_OPTS_INIT(unet_iface_opts, io);

		io.pin_root = pin_root;
		if (setns(t->ns_fd, CLONE_NEWNET)) {
			unetd_log(UNET_LOG_WARN, "%s: cannot enter the client's namespace to detach: %s",
				  t->ifname, strerror(errno));
		} else {
			if (unet_iface__detach(t->ifname, &io))
				unetd_log(UNET_LOG_WARN, "%s: detaching in the client's namespace failed",
					  t->ifname);
			/* Back home: this thread must not keep the namespace alive. */
			if (setns(own_netns_fd, CLONE_NEWNET))
				unetd_log(UNET_LOG_ERROR, "teardown: cannot come back to the daemon's namespace: %s",
					  strerror(errno));
		}
	}
	if (t->ns_fd >= 0)
		close(t->ns_fd);
}

static void *teardown(void *arg)
{
	(void)arg;
	for (;;) {
		struct unetd_teardown *t;
		bool keep_fds;

		pthread_mutex_lock(&lock);
		while (!head)
			pthread_cond_wait(&more, &lock);
		t = head;
		head = t->next;
		if (!head)
			tail = &head;
		running = t;
		keep_fds = exiting;
		pthread_mutex_unlock(&lock);
		run(t, keep_fds);
		pthread_mutex_lock(&lock);
		running = NULL;
		pthread_cond_broadcast(&done);
		pthread_mutex_unlock(&lock);
		free(t);
	}
	return NULL;
}

int unetd_teardown_start(const struct unetd *d)
{
	pthread_t th;
	int err;

	own_netns_fd = d->own_netns_fd;
	pin_root = d->pin_root;
	err = pthread_create(&th, NULL, teardown, NULL);
	if (err)
		return -err;
	pthread_detach(th);
	pthread_mutex_lock(&lock);
	started = true;
	pthread_mutex_unlock(&lock);
	return 0;
}

void unetd_teardown_queue(struct unetd_teardown *t)
{
	bool on;

	pthread_mutex_lock(&lock);
	on = started;
	if (on) {
		t->next = NULL;
		*tail = t;
		tail = &t->next;
		pthread_cond_signal(&more);
	}
	pthread_mutex_unlock(&lock);
	if (!on) {
		run(t, false);
		free(t);
	}
}

static struct timespec deadline(int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return until;
}

static bool same(const struct unetd_teardown *t, const struct unetd_ns *ns, const char *ifname)
{
	return t && t->ns.dev == ns->dev && t->ns.ino == ns->ino && !strcmp(t->ifname, ifname);
}

int unetd_teardown_pending(const struct unetd_ns *ns, const char *ifname)
{
	struct unetd_teardown *mine = NULL, **mt = &mine, **pp, *t;
	bool busy;

	pthread_mutex_lock(&lock);
	/* The device's own jobs still queued go to the front, in order, so
	 * that they are next (not behind other devices' jobs: a user's 8
	 * namespaces queue 250 ms); the client asks again meanwhile.  Never
	 * run or waited for here: a user re-creating an endpoint on one
	 * device would hold the serving thread for every teardown (an
	 * attack review measured 300 ms stalls of other users). */
	for (pp = &head; (t = *pp);) {
		if (same(t, ns, ifname)) {
			*pp = t->next;
			t->next = NULL;
			*mt = t;
			mt = &t->next;
		} else {
			pp = &t->next;
		}
	}
	tail = pp;
	busy = mine || same(running, ns, ifname);
	if (mine) {
		*mt = head;
		if (!head)
			tail = mt;
		head = mine;
	}
	pthread_mutex_unlock(&lock);
	return busy ? -EBUSY : 0;
}

bool unetd_teardown_drain(int ms)
{
	struct timespec until = deadline(ms);
	bool busy;

	pthread_mutex_lock(&lock);
	exiting = true;
	while ((head || running) && !pthread_cond_timedwait(&done, &lock, &until))
		;
	busy = head || running;
	pthread_mutex_unlock(&lock);
	return !busy;
}
