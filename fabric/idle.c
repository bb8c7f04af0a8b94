/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idle.c - a caller that busy-waits on an empty CQ lets the others run.
 *
 * MPI libraries wait by calling fi_cq_read in a loop (Open MPI's
 * opal_progress).  With more ranks than cores, a rank that spins there
 * holds a core that the rank it waits for needs: measured on 2 vCPUs
 * with 4 ranks, two ranks idle in a barrier made a 64 KiB ping-pong
 * between the other two 4 times slower (docs/parallel.md, "Ranks that
 * outnumber the cores").
 *
 * So an empty read that continues a busy wait first spins (the reply
 * to a short message usually comes within microseconds, and a sleep
 * and its wake-up cost far more: about 100 us on these VMs), and once
 * the caller has polled back to back for FI_UNET_SPIN_US with no frame
 * moving in either direction, it looks whether anybody waits for a
 * CPU (more runnable tasks than CPUs we may run on, /proc/loadavg).
 * If not, the spin goes on: the CPU is ours and nobody else wants it,
 * so a rank with a core of its own never pays the wake-up.  If so, the
 * read sleeps on the CQ's wait object (the endpoints' U-Net fds, their
 * setup sockets, and the timer for retransmissions and keepalives:
 * cq.c) until a frame arrives, for at most 1 ms.  This file decides
 * (and adapts the budget: ufi_cq_idle_slept); cq.c sleeps.
 *
 * A busy wait is told from a program that polls between pieces of its
 * own work by the time between reads: a caller away for longer than
 * the spin budget starts a new streak, so it never sleeps in a read.
 * Frames moving (a bulk pull that completes nothing until its last
 * byte, acknowledgements coming back) restart the streak too: a rank
 * that takes part in a transfer keeps spinning.
 *
 * No wake-up is lost: every frame that arrives after the last poll
 * leaves a U-Net fd readable (level-triggered epoll), so the sleep
 * ends at once; what only time can bring (a retransmission, a
 * keepalive) arms the timer first (cq.c: cq_arm); and the sleep is
 * bounded, so a program's other duties in its progress loop still come
 * round.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "ufi.h"

/* Frames moved by the CQ's endpoints, both ways: the sign of a transfer
 * under way that completes nothing yet. */
static uint64_t frames_moved(struct ufi_cq *cq)
{
	uint64_t n = 0;

	for (int i = 0; i < cq->neps; i++) {
		struct uam_stats st;

		if (cq->eps[i]->uam && !uam_ep__stats(cq->eps[i]->uam, &st))
			n += st.tx_frames + st.rx_frames;
	}
	return n;
}

/* The CPUs this process may run on (its affinity mask, which a cpuset
 * or taskset narrows), at least 1. */
static int cpus_allowed(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? n : 1;
}

/* Does a task wait for a CPU?  /proc/loadavg's fourth field is the
 * number of runnable tasks right now, the caller included; more of them
 * than CPUs means one is queued.  When it cannot be read, assume so:
 * sleeping costs a wake-up, spinning on a shared CPU can cost the peer
 * its whole time slice. */
static bool cpu_wanted(struct ufi_cq *cq)
{
	char b[128], *p;
	ssize_t n;
	int sp = 0;

	if (!cq->ncpus)
		cq->ncpus = cpus_allowed();
	if (cq->loadavg_fd < 0)
		cq->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (cq->loadavg_fd < 0 || (n = pread(cq->loadavg_fd, b, sizeof(b) - 1, 0)) <= 0)
		return true;
	b[n] = '\0';
	for (p = b; *p && sp < 3; p++)
		sp += *p == ' ';
	return strtol(p, NULL, 10) > cq->ncpus;
}

/* Reads further apart than the spin budget, or than this when the budget
 * is shorter (FI_UNET_SPIN_US=0: sleep as soon as a busy wait is seen),
 * are not a busy wait. */
#define AWAY_MIN_NS 20000u

/* The most a busy wait spins when its sleeps keep being cut short by
 * frames (ufi_cq_idle_slept): about the sleep's own bound, 1 ms. */
#define SPIN_MAX_NS 1000000u

void ufi_cq_busy(struct ufi_cq *cq)
{
	cq->idle_start_ns = 0;
}

bool ufi_cq_idle_due(struct ufi_cq *cq)
{
	uint64_t now = ufi_now_ns(), budget, away, f;

	if (ufi_params.spin_us < 0 || cq->signaled)
		return false;
	budget = (uint64_t)ufi_params.spin_us * 1000u;
	away = budget > AWAY_MIN_NS ? budget : AWAY_MIN_NS;
	if (cq->idle_spin_ns > budget)
		budget = cq->idle_spin_ns;
	if (!cq->idle_start_ns || now - cq->idle_last_ns > away) {
		/* the first empty read, or the caller did other work since
		 * the last one: a new streak */
		cq->idle_start_ns = now;
		cq->idle_last_ns = now;
		cq->idle_frames = frames_moved(cq);
		return false;
	}
	cq->idle_last_ns = now;
	if (now - cq->idle_start_ns < budget)
		return false;
	/* Only at the end of a budget: the stats sum is a loop over the
	 * channels, too much for every poll. */
	f = frames_moved(cq);
	if (f != cq->idle_frames || !cpu_wanted(cq)) {
		cq->idle_start_ns = now;
		cq->idle_frames = f;
		return false;
	}
	return true;
}

/*
 * The budget adapts.  A sleep that a frame ended before its 1 ms bound
 * was a wait for a peer that answers, only later than the budget: on a
 * loaded machine two ranks that each sleep after 50 us wake each other,
 * and each reply then costs a wake-up (about 100 us on these VMs, where
 * spinning took 4 us).  So such a sleep doubles the spin budget, up to
 * SPIN_MAX_NS, until the replies come while spinning; a sleep that ended
 * with nothing arriving (the bound, or the timer) halves it again, down
 * to FI_UNET_SPIN_US, so a rank idle in a barrier soon sleeps at once.
 */
void ufi_cq_idle_slept(struct ufi_cq *cq, bool by_frame)
{
	uint64_t base = (uint64_t)ufi_params.spin_us * 1000u;
	uint64_t cur = cq->idle_spin_ns > base ? cq->idle_spin_ns : base;

	cq->idle_sleeps++;
	cq->idle_last_ns = ufi_now_ns();
	if (by_frame) {
		cq->idle_spin_ns = cur * 2 > SPIN_MAX_NS ? SPIN_MAX_NS : cur * 2;
		if (cq->idle_spin_ns < AWAY_MIN_NS)
			cq->idle_spin_ns = AWAY_MIN_NS;
		/* What woke us may be the first frame of a transfer, which
		 * deserves the spin again: a new streak. */
		cq->idle_start_ns = cq->idle_last_ns;
		cq->idle_frames = frames_moved(cq);
		return;
	}
	cq->idle_spin_ns = cur / 2 > base ? cur / 2 : base;
	/* Nothing came: the streak goes on, and the next empty read sleeps
	 * at once (or after the rest of a budget that is still long). */
}
