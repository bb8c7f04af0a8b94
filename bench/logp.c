/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * logp.c - the LogP parameters of a transport (Culler, Karp, Patterson et
 * al.; measured as in Culler, Liu, Martin, Yoshikawa, "Assessing fast
 * network interfaces", IEEE Micro 1996):
 *
 *   o_s  send overhead: how long a send call of one message holds the CPU;
 *   o_r  receive overhead: how long a receive call holds the CPU when the
 *        message is already there (we wait, without calling, for well
 *        over a round trip before the call);
 *   L    latency: what the round trip leaves once both ends' overheads
 *        are taken out, rtt = 2 (o_s + L + o_r);
 *   g    gap: the time per message at the sustained rate.  It is not
 *        measured here: scripts/bench.sh takes it from the same run's
 *        rate measurement (1 / msgs_per_s).
 *
 * The peer is an echo, spinning.  Every figure is a median of o->count
 * samples, all taken through the transport's own send and receive calls,
 * so they hold whatever the transport does per call (for U-Net in copy
 * mode on veth, the kick's system call, in which the kernel also runs
 * the receiving side's XDP program: docs/performance.md).
 */
#include <errno.h>
#include <stdlib.h>

#include "bench.h"

#define LOGP_TIMEOUT_NS 1000000000ull /* a message lost after 1 s */
#define LOGP_WARMUP 100

/* Send one message (retrying while the queue is full, to limit).
 * Returns 1, 0 (not sent by limit), -errno. */
static int send_one(const struct bench_transport *t, struct bench_conn *c, uint32_t seq,
		    uint32_t flags, uint32_t len, uint64_t limit)
{
	struct bench_tx tx = { .seq = seq, .flags = flags, .len = len };

	return (int)bench_send_all(t, c, &tx, 1, limit, NULL);
}

/* Receive (spinning) until the echo of seq, to limit.  Returns 1, 0, -errno. */
static int recv_seq(const struct bench_transport *t, struct bench_conn *c, uint32_t seq,
		    uint64_t limit)
{
	return bench_recv_seq(t, c, seq, false, limit, NULL);
}

static double median_us(uint64_t *v, long n)
{
	bench_sort_u64(v, (size_t)n);
	return (double)bench_percentile(v, (size_t)n, 0.5) / 1e3;
}

int bench_logp_measure(const struct bench_opts *o, const struct bench_transport *t,
		       struct bench_conn *c, uint64_t deadline, struct bench_logp *r)
{
	uint64_t *rtt = calloc((size_t)o->count, sizeof(*rtt));
	/* A send is timed on every pass, also those retried (at most
	 * o->count of them) whose receive found nothing yet. */
	uint64_t *os = calloc(2 * (size_t)o->count + 2, sizeof(*os));
	uint64_t *orr = calloc((size_t)o->count, sizeof(*orr));
	uint32_t len = (uint32_t)o->size, seq = 0;
	long n_rtt = 0, n_os = 0, n_or = 0, warm = 0;
	uint64_t pause_ns;
	int err = 0;

	*r = (struct bench_logp){ 0 };
	if (!rtt || !os || !orr) {
		err = -ENOMEM;
		goto out;
	}
	/* Warm-up, which also waits for the echo to come up. */
	for (int i = 0; i < LOGP_WARMUP && bench_now_ns() < deadline; i++) {
		uint64_t lim = bench_now_ns() + LOGP_TIMEOUT_NS / 10;

		err = send_one(t, c, ++seq, BENCH_F_WARMUP, len, lim);
		if (err > 0)
			err = recv_seq(t, c, seq, lim);
		if (err < 0)
			goto out;
		warm += err;
	}
	err = 0;
	if (!warm) {
		err = -ETIMEDOUT;
		goto out;
	}
	/* Round trips, spinning. */
	while (n_rtt < o->count && bench_now_ns() < deadline) {
		uint64_t t0 = bench_now_ns();
		int k = send_one(t, c, ++seq, BENCH_F_WARMUP, len, t0 + LOGP_TIMEOUT_NS);

		if (k > 0)
			k = recv_seq(t, c, seq, t0 + LOGP_TIMEOUT_NS);
		if (k < 0) {
			err = k;
			goto out;
		}
		if (k)
			rtt[n_rtt++] = bench_now_ns() - t0;
	}
	if (!n_rtt) {
		err = -ETIMEDOUT;
		goto out;
	}
	r->rtt_us = median_us(rtt, n_rtt);
	/* Long enough that the echo is back before we look: twice the
	 * round trip and 20 us more. */
	pause_ns = (uint64_t)(2 * r->rtt_us * 1e3) + 20000;
	/* Overheads: time the send call; wait without calling; time the
	 * receive call that finds the echo there. */
	while (n_or < o->count && bench_now_ns() < deadline) {
		struct bench_rx rx[16];
		uint64_t t0, t1, t2, t3;
		int k, found = 0;

		t0 = bench_now_ns();
		k = send_one(t, c, ++seq, BENCH_F_WARMUP, len, t0 + LOGP_TIMEOUT_NS);
		t1 = bench_now_ns();
		if (k < 0) {
			err = k;
			goto out;
		}
		if (!k)
			continue;
		os[n_os++] = t1 - t0;
		while (bench_now_ns() < t1 + pause_ns)
			;
		t2 = bench_now_ns();
		k = t->recv(c, rx, 16, false);
		t3 = bench_now_ns();
		if (k < 0) {
			err = k;
			goto out;
		}
		for (int i = 0; i < k; i++)
			found |= bench_rx_hdr(&rx[i]).seq == seq;
		if (found) {
			orr[n_or++] = t3 - t2;
			continue;
		}
		/* Not there yet (a slow echo, a preemption): not a sample. */
		r->retries++;
		k = recv_seq(t, c, seq, bench_now_ns() + LOGP_TIMEOUT_NS);
		if (k < 0) {
			err = k;
			goto out;
		}
		if (r->retries >= o->count) {
			err = -ETIMEDOUT;
			goto out;
		}
	}
	if (!n_or) {
		err = -ETIMEDOUT;
		goto out;
	}
	r->samples = n_or;
	r->os_us = median_us(os, n_os);
	r->or_us = median_us(orr, n_or);
	r->L_us = r->rtt_us / 2 - r->os_us - r->or_us;
out:
	/* Tell the echo we are done, as pingpong does. */
	for (int i = 0; i < 3 && err != -ENOMEM; i++) {
		uint64_t lim = bench_now_ns() + 50000000ull;

		if (send_one(t, c, ++seq, BENCH_F_WARMUP | BENCH_F_LAST, len, lim) > 0 &&
		    recv_seq(t, c, seq, lim) != 0)
			break;
	}
	free(rtt);
	free(os);
	free(orr);
	return err;
}
