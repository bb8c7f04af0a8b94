/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait.c - the spin half of an adaptive wait.
 *
 * unet_endpoint__wait first polls the receive rings for a bounded time
 * (the endpoint's spin budget) and only then sleeps in poll(2).  A reply
 * that comes within the budget is caught without a sleep and a wake-up;
 * on these VMs waking a sleeping vCPU costs about 100 us, which is most
 * of a blocking round trip (docs/performance.md, "Waiting").  An idle
 * process spins at most the budget per wait and then costs nothing.
 *
 * For an emulated endpoint (served by unetd) the rings spun on are the
 * shared region's: while the client spins it has not set
 * client_sleeping, so the daemon skips its notify eventfd write too; and
 * the spin yields the CPU on every pass, since the daemon may need it.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "core/internal.h"
#include "core/objects.h"
#include "core/clock.h"


static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

uint32_t unet_spin_default(void)
{
	const char *s = getenv("UNET_SPIN_US");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return UNET_SPIN_US_DEFAULT;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UNET_SPIN_US_MAX || s[0] == '-') {
		unet_log(UNET_LOG_WARN, "UNET_SPIN_US=%s: not 0..%u, using %u", s, UNET_SPIN_US_MAX,
			 UNET_SPIN_US_DEFAULT);
		return UNET_SPIN_US_DEFAULT;
	}
	return (uint32_t)v;
}

int unet_endpoint__set_spin_us(struct unet_endpoint *ep, uint32_t us)
{
	if (!ep || us > UNET_SPIN_US_MAX)
		return -EINVAL;
	ep->spin_us = us;
	return 0;
}

int unet_endpoint__wait_stats(const struct unet_endpoint *ep, struct unet_wait_stats *st)
{
	struct unet_wait_stats s = { 0 };
	size_t n;

	if (!ep || !st || st->sz < sizeof(st->sz))
		return -EINVAL;
	s.sz = st->sz;
	s.spin_us = ep->spin_us;
	s.waits = ep->wait_waits;
	s.spin_hits = ep->wait_spin_hits;
	s.sleeps = ep->wait_sleeps;
	s.spin_ns = ep->wait_spin_ns;
	/* Fill what the caller's struct has room for (an older, smaller
	 * one gets its fields; the rest of a newer one is zeroed). */
	n = st->sz < sizeof(s) ? st->sz : sizeof(s);
	memset(st, 0, st->sz);
	memcpy(st, &s, n);
	st->sz = n;
	return 0;
}

bool unet_wait_spin(struct unet_endpoint *ep, int timeout_ms,
		    bool (*ready)(struct unet_endpoint *ep))
{
	uint64_t t0, end, now;
	bool hit = false;

	if (!timeout_ms)
		return false; /* a look, not a wait */
	ep->wait_waits++;
	if (!ep->spin_us)
		return false;
	t0 = unet_mono_ns();
	end = t0 + (uint64_t)ep->spin_us * 1000u;
	/* Never spin past the caller's timeout. */
	if (timeout_ms > 0 && (uint64_t)timeout_ms * 1000000u < end - t0)
		end = t0 + (uint64_t)timeout_ms * 1000000u;
	do {
		/* The clock is read once per pass (vDSO, tens of ns): fine
		 * next to the ring peek, and it keeps the bound exact. */
		for (int i = 0; i < 16; i++) {
			if (ready(ep)) {
				hit = true;
				break;
			}
			cpu_relax();
		}
		if (hit)
			break;
		/* Busy-polling sockets: a receive call runs the driver's
		 * NAPI, which is what brings the frame in. */
		/* An emulated endpoint's frames come through unetd, which
		 * needs a CPU to move them: where it waits for ours (fewer
		 * CPUs than busy processes), spinning without a yield would
		 * hold off the very frame we wait for (measured: round trips
		 * of 80-140 us instead of 12-15 us on 2 vCPUs). */
		if (ep->emulated)
			sched_yield();
		if (ep->busy_poll_usec)
			for (uint32_t k = 0; k < ep->nqueues; k++)
				recvfrom(ep->q[k].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		now = unet_mono_ns();
	} while (now < end);
	ep->wait_spin_ns += unet_mono_ns() - t0;
	if (hit)
		ep->wait_spin_hits++;
	return hit;
}
