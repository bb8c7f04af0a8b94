/* SPDX-License-Identifier: BSD-2-Clause */
/* stack.c - the process's U-Net endpoints (stack.h). */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "stack.h"

#define MAX_EPS 8

pthread_mutex_t stack_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

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
	pthread_mutex_unlock(&stack_lock);
}

void stack_atfork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}
