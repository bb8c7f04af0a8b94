/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * io.c - sending and waiting for an echo through a transport, bounded by
 * a deadline (and a stop flag): what main.c's tests and logp.c share.
 */
#include "bench.h"

static bool stopped(const volatile sig_atomic_t *stop)
{
	return stop && *stop;
}

long bench_send_all(const struct bench_transport *t, struct bench_conn *c,
		    const struct bench_tx *tx, unsigned int n, uint64_t deadline,
		    const volatile sig_atomic_t *stop)
{
	unsigned int off = 0;

	while (off < n) {
		int k = t->send(c, tx + off, n - off);

		if (k < 0)
			return k;
		off += (unsigned int)k;
		if (!k && (stopped(stop) || bench_now_ns() >= deadline))
			break;
	}
	return off;
}

int bench_recv_seq(const struct bench_transport *t, struct bench_conn *c, uint32_t seq,
		   bool block, uint64_t limit, const volatile sig_atomic_t *stop)
{
	struct bench_rx rx[16];

	while (!stopped(stop) && bench_now_ns() < limit) {
		int n = t->recv(c, rx, 16, block);

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			if (bench_rx_hdr(&rx[i]).seq == seq)
				return 1;
	}
	return 0;
}
