/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stack.h - the process's U-Net endpoints, one per interface, created on
 * the first accelerated socket that needs it and shared by all threads.
 *
 * One mutex (stack_lock) serialises everything the preload library does
 * on U-Net: endpoint creation, sends, receive-queue draining, socket
 * open and close.  The library's endpoints are not thread-safe, and one
 * lock keeps the order of sends and of handing datagrams to sockets
 * simple; blocking waits happen outside it.
 */
#ifndef UNET_RUN_STACK_H
#define UNET_RUN_STACK_H

#include <net/if.h>
#include <pthread.h>
#include <stdint.h>

#include "unet-xdp/unet.h"

struct run_udp;

struct run_ep {
	char ifname[IF_NAMESIZE];
	struct unet_endpoint *ep; /* NULL: could not be had (see why) */
	char why[160];
	uint32_t addr;		  /* the interface's first IPv4 address */
	int wait_fd;		  /* readable when frames wait (or -1) */
	struct run_udp *udp;	  /* its UDP sockets (linked by next) */
};

extern pthread_mutex_t stack_lock;

/* The endpoint on ifname, created now if this is the first call for it;
 * NULL when it cannot be had, with the reason in *why (kept: the next
 * socket on ifname gets the same answer without a second try).  Under
 * stack_lock.  spin_us: the wait's spin budget. */
struct run_ep *stack_ep(const char *ifname, const char *pin_root, uint32_t spin_us,
			const char **why);

/* Register the fork handlers: fork waits for stack_lock (no child
 * inherits it held), and the child forgets the endpoints without closing
 * them: their rings and ports stay the parent's, and calls on the U-Net
 * sockets it inherited fail with EOPNOTSUPP (a new socket of the child's
 * gets no endpoint on that interface either: the kernel serves it). */
void stack_atfork(void);

#endif /* UNET_RUN_STACK_H */
