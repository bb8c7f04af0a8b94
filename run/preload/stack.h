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
#include <stdbool.h>
#include <stdint.h>

#include "unet-xdp/unet.h"

#include "signals.h"

struct run_udp;

struct run_ep {
	char ifname[IF_NAMESIZE];
	struct unet_endpoint *ep; /* NULL: could not be had (see why) */
	char why[160];
	uint32_t addr;		  /* the interface's first IPv4 address */
	int wait_fd;		  /* readable when frames wait (or -1) */
	struct run_udp *udp;	  /* its UDP sockets (linked by next) */
	unsigned int frames_held; /* its sockets' datagrams waiting in frames
				   * (udp.h: RUN_EP_FRAMES_HELD) */
};

extern pthread_mutex_t stack_lock;
/* How deep this thread is in stack_lock: while > 0 the U-Net library
 * runs on this thread, and the sockets it makes for itself (AF_XDP, the
 * TCP layer's port holders) are not the program's to track or log. */
extern __thread int stack_depth;

/* The process's i-th endpoint (i from 0), NULL past the last; under
 * stack_lock. */
struct run_ep *stack_ep_at(int i);

/* Signal handlers that arrive inside wait for stack_leave (signals.h). */
static inline void stack_enter(void)
{
	run_lock(&stack_lock);
	stack_depth++;
}

static inline void stack_leave(void)
{
	stack_depth--;
	run_unlock(&stack_lock);
}

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

/* Monotonic microseconds; the deadline timeo_ms from now (-1: none for
 * timeo_ms <= 0). */
int64_t stack_now_us(void);
int64_t stack_deadline(int timeo_ms);
/* A blocking call starts: the spin deadline for spin_us, and the
 * signal watch (signals.h) restarted, so stack_wait sees only the
 * handlers that ran during this call. */
int64_t stack_wait_start(uint32_t spin_us);
/* Wait for e to have frames, at most until deadline (monotonic us, -1:
 * none): spin until spin_until (return at once, the caller looks
 * again), then sleep on e's wait descriptor, one slice.  Called without
 * stack_lock.  Returns 0 (look again), -EAGAIN (deadline), -EINTR (a
 * signal handler ran during the call, and the kernel's call would not
 * restart: the handler's action lacks SA_RESTART, or the call has a
 * deadline). */
int stack_wait(struct run_ep *e, int64_t deadline, int64_t spin_until);

/*
 * Batched sends (--batch-sends, docs/unet-run.md): a thread whose
 * readiness wait returned several U-Net sockets holds its kicks (the
 * library's unet_layer_hold_kicks) while it handles them, so the
 * segments it sends meanwhile leave in one system call.  The batch ends,
 * and the frames leave, when the thread calls any readiness wait, waits
 * in a blocking call, or passes a data call to the kernel (which may
 * block); stack_batch_end is cheap when no batch is open.
 */
extern __thread bool stack_batch_open;
void stack_batch_begin(void);
void stack_batch_flush(void);
static inline void stack_batch_end(void)
{
	if (stack_batch_open)
		stack_batch_flush();
}

/* A blocking call's deadline and spin budget, read from the clock at its
 * first wait: a call that finds its data (or room) at once, the common
 * case under load, never reads the clock.  The signal watch starts there
 * too: a handler that ran before the call first waited did not
 * interrupt a sleep, as with the kernel's. */
struct stack_timer {
	int64_t deadline, spin_until;
	bool started;
};

/* stack_wait with t's deadline (timeo_ms from the first wait, <= 0:
 * none) and spin budget (spin_us from the first wait). */
static inline int stack_wait_timed(struct run_ep *e, struct stack_timer *t, int timeo_ms,
				   uint32_t spin_us)
{
	if (!t->started) {
		t->deadline = stack_deadline(timeo_ms);
		t->spin_until = stack_wait_start(spin_us);
		t->started = true;
	}
	return stack_wait(e, t->deadline, t->spin_until);
}

#endif /* UNET_RUN_STACK_H */
