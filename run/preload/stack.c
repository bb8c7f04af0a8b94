/* SPDX-License-Identifier: BSD-2-Clause */
/* stack.c - the process's U-Net endpoints (stack.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stack.h"

#include "core/layer.h"

#define MAX_EPS 8

pthread_mutex_t stack_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
__thread int stack_depth;

static struct run_ep eps[MAX_EPS];
static int neps;

static uint32_t iface_addr(const char *ifname)
{
	struct ifaddrs *ifa, *i;
	uint32_t a = 0;

	if (getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i && !a; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, ifname) == 0)
			a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
	freeifaddrs(ifa);
	return a;
}

static struct unet_endpoint *create(const char *ifname, const char *pin_root,
				    enum unet_endpoint_kind kind)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);

	o.pin_root = pin_root;
	o.kind = kind;
	return unet_endpoint__create(ifname, &o);
}

struct run_ep *stack_ep(const char *ifname, const char *pin_root, uint32_t spin_us,
			const char **why)
{
	struct run_ep *e;
	int err;

	for (int i = 0; i < neps; i++) {
		if (strcmp(eps[i].ifname, ifname) == 0) {
			*why = eps[i].why;
			return eps[i].ep ? &eps[i] : NULL;
		}
	}
	if (neps == MAX_EPS) {
		*why = "more interfaces than one process may use";
		return NULL;
	}
	e = &eps[neps++];
	memset(e, 0, sizeof(*e));
	e->wait_fd = -1;
	snprintf(e->ifname, sizeof(e->ifname), "%s", ifname);
	*why = e->why;
	e->addr = iface_addr(ifname);
	if (!e->addr) {
		snprintf(e->why, sizeof(e->why), "%s has no IPv4 address", ifname);
		return NULL;
	}
	e->ep = create(ifname, pin_root, UNET_ENDPOINT_AUTO);
	if (!e->ep && errno == EBUSY) {
		/* The queues have another process's endpoint (one UMEM per
		 * queue): unetd serves this one, if it runs. */
		err = errno;
		e->ep = create(ifname, pin_root, UNET_ENDPOINT_EMULATED);
		if (!e->ep) {
			snprintf(e->why, sizeof(e->why),
				 "no endpoint on %s: direct: %s; through unetd: %s", ifname,
				 strerror(err), strerror(errno));
			return NULL;
		}
	} else if (!e->ep) {
		snprintf(e->why, sizeof(e->why), "no endpoint on %s: %s", ifname, strerror(errno));
		return NULL;
	}
	unet_endpoint__set_spin_us(e->ep, spin_us);
	e->wait_fd = unet_endpoint__fd(e->ep);
	{
		struct unet_endpoint_info info;

		if (unet_endpoint__info(e->ep, &info) == 0)
			snprintf(e->why, sizeof(e->why), "endpoint %u on %s (%s)", info.id, ifname,
				 info.kind == UNET_ENDPOINT_EMULATED ? "emulated by unetd" : "direct");
	}
	return e;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&stack_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&stack_lock);
}

static void fork_child(void)
{
	for (int i = 0; i < neps; i++) {
		eps[i].ep = NULL;
		snprintf(eps[i].why, sizeof(eps[i].why), "the endpoint is the parent process's");
	}
	/* Not unlocked: a recursive mutex records its owner's thread id,
	 * which the child's thread does not have (the unlock would fail with
	 * EPERM and leave the child's next lock waiting forever).  The child
	 * has one thread, so a fresh mutex is the same as a released one. */
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer does not see the overwrite, and took the lock for
	 * held for good (a double lock reported when another thread of the
	 * child forks).  Its interceptor records the release before glibc
	 * refuses it (EPERM, as said), and only where it recorded prepare's
	 * lock: in a program it did not instrument (timeout) it recorded
	 * neither, and an annotation here was reported as the unlock of an
	 * unlocked mutex. */
	pthread_mutex_unlock(&stack_lock);
#endif
	stack_lock = fresh;
}

struct run_ep *stack_ep_at(int i)
{
	return i >= 0 && i < neps ? &eps[i] : NULL;
}

void stack_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* How long one sleep of a blocking call lasts at most: the endpoint's
 * wait descriptor wakes it sooner; the cap bounds what a lost wake-up
 * (another thread drained the frames) could cost, and keeps TCP's timers
 * running. */
#define WAIT_SLICE_MS 10

int64_t stack_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t stack_deadline(int timeo_ms)
{
	return timeo_ms > 0 ? stack_now_us() + (int64_t)timeo_ms * 1000 : -1;
}

int64_t stack_wait_start(uint32_t spin_us)
{
	sig_watch_start();
	return stack_now_us() + spin_us;
}

__thread bool stack_batch_open;

void stack_batch_begin(void)
{
	unet_layer_hold_kicks(true);
	stack_batch_open = true;
}

/* Every endpoint's owed kick: the thread may have sent on any. */
void stack_batch_flush(void)
{
	struct run_ep *e;

	stack_enter();
	stack_batch_open = false;
	unet_layer_hold_kicks(false);
	for (int i = 0; (e = stack_ep_at(i)); i++)
		if (e->ep)
			unet_layer_kick(e->ep);
	stack_leave();
}

int stack_wait(struct run_ep *e, int64_t deadline, int64_t spin_until)
{
	struct pollfd p = { .fd = e->wait_fd, .events = POLLIN };
	int64_t now = stack_now_us();
	int ms = WAIT_SLICE_MS;
	int seen = sig_watch();

	stack_batch_end(); /* nothing we owe waits with us */
	/* A handler that ran while we spun, or between two slices, ends
	 * the call as one that interrupted the kernel's sleep would. */
	if (seen && !sig_restarts(seen, deadline >= 0))
		return -EINTR;
	if (deadline >= 0 && now >= deadline)
		return -EAGAIN;
	if (now < spin_until)
		return 0; /* the caller looks again at once */
	if (deadline >= 0 && (deadline - now) / 1000 < ms)
		ms = (int)((deadline - now + 999) / 1000);
	if (p.fd < 0) {
		struct timespec ts = { 0, 100000 };

		nanosleep(&ts, NULL);
		return 0;
	}
	if (poll(&p, 1, ms) < 0 && errno == EINTR &&
	    !sig_restarts(sig_watch(), deadline >= 0))
		return -EINTR;
	return 0;
}
