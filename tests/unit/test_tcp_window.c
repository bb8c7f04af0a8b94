// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tcp_window.c - lib/tcp's receive window (docs/tcp.md,
 * "Performance"): widened past lwIP's TCP_WND (64 KiB) to 128 KiB where
 * the peer agreed to window scaling, and received bytes given back to
 * it at once while the connection holds less than the layer's early
 * allowance (192 KiB) unread, as the application reads beyond it.
 *
 * One process, two endpoints on a veth pair: a U-Net TCP client on a, a
 * U-Net TCP server on b that does not read.
 *   - the server's window is 128 KiB once connected;
 *   - 192 KiB, more than the window, reach the server and are
 *     acknowledged while it reads nothing, and its window is fully open
 *     again (the layer returned the bytes as they arrived; returning
 *     them only when read, the window closed after 128 KiB);
 *   - the client keeps sending: the window closes, and the server then
 *     holds no more than the allowance plus one window unread (flow
 *     control still bounds an application that does not read);
 *   - the server reads it all, every byte checked: the window opens
 *     again and the rest of the stream follows, in order;
 *   - the client half-closes, the server reads the end and closes: the
 *     client sees the end of the stream, not a reset.
 * Conditions are waited for (bounded), never timed.
 *
 * Needs root and a veth pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B,
 * UNET_PIN_ROOT, UNET_TEST_XDP_MODE (the integration suite's
 * "tcp_window").  Without them the test is skipped, never passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <lwip/priv/tcp_priv.h> /* tcp_active_pcbs: the server's window */
#include <lwip/tcp.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>

#define TAG_A 341
#define TAG_B 342
#include "veth_pair.h"

#define IP_A 0x0a63000au /* 10.99.0.10, 10.99.0.11: not the kernel's */
#define IP_B 0x0a63000bu
#define PORT 7310

/* lib/tcp/tcp.c's RX_EARLY: unread bytes given back to the window at
 * once; RCV_WND: the window on a connection with scaling (both ends here
 * are lwIP, which offers it). */
#define EARLY (192u << 10)
#define WND (TCP_WND << TCP_RCV_SCALE)
#define TOTAL (1u << 20) /* the whole stream: more than the server may hold */

static uint8_t pat(uint64_t o)
{
	return (uint8_t)(o * 29 + (o >> 9) * 5 + 3);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct conn {
	struct pair *p;
	struct unet_tcp *l, *c, *s;
	uint16_t cport;
	uint64_t sent, got;
};

static void pump(struct conn *k)
{
	unet_endpoint__dispatch(k->p->a, 0, 64);
	unet_endpoint__dispatch(k->p->b, 0, 64);
}

static struct tcp_pcb *server_pcb(const struct conn *k)
{
	for (struct tcp_pcb *q = tcp_active_pcbs; q; q = q->next)
		if (q->local_port == PORT && q->remote_port == k->cport &&
		    ip_2_ip4(&q->local_ip)->addr == htonl(IP_B) && q->state == ESTABLISHED)
			return q;
	return NULL;
}

/* Offer the client up to `upto` bytes of the stream (what its send
 * buffer takes). */
static void offer(struct conn *k, uint64_t upto)
{
	uint8_t buf[8192];

	while (k->sent < upto) {
		size_t m = upto - k->sent < sizeof(buf) ? upto - k->sent : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < m; i++)
			buf[i] = pat(k->sent + i);
		w = unet_tcp__send(k->c, buf, m, 0);
		if (w == -EAGAIN)
			return;
		if (w <= 0)
			fail_msg("send: %s", strerror((int)-w));
		k->sent += (uint64_t)w;
	}
}

/* Read what the server holds, checking every byte; returns the count. */
static uint64_t drain(struct conn *k)
{
	uint8_t buf[4096];
	uint64_t n = 0;

	for (;;) {
		ssize_t r = unet_tcp__recv(k->s, buf, sizeof(buf), 0);

		if (r == -EAGAIN)
			return n;
		if (r <= 0)
			fail_msg("recv: %s", r ? strerror((int)-r) : "end of stream");
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != pat(k->got + (uint64_t)i))
				fail_msg("byte %llu: %#x, expected %#x",
					 (unsigned long long)(k->got + (uint64_t)i), buf[i],
					 pat(k->got + (uint64_t)i));
		k->got += (uint64_t)r;
		n += (uint64_t)r;
	}
}

static void test_tcp_window(void **state)
{
	struct conn k = { .p = *state };
	struct tcp_pcb *sp;
	uint64_t t0, held;

	NEED_PAIR(k.p);
	k.l = unet_tcp__listen(k.p->b, htonl(IP_B), PORT, NULL);
	assert_non_null(k.l);
	k.c = unet_tcp__connect(k.p->a, htonl(IP_A), htonl(IP_B), PORT, NULL, 0);
	assert_non_null(k.c);
	t0 = now_ms();
	while (!k.s || !(unet_tcp__events(k.c) & UNET_TCP_OUT)) {
		pump(&k);
		if (!k.s)
			k.s = unet_tcp__accept(k.l, 0);
		if (now_ms() - t0 > 10000)
			fail_msg("no connection between the two endpoints in 10 s");
	}
	k.cport = unet_tcp__local_port(k.c);
	sp = server_pcb(&k);
	assert_non_null(sp);
	assert_true(sp->flags & TF_WND_SCALE);
	pump(&k);
	assert_int_equal(sp->rcv_wnd, WND);

	/* 1. The allowance, more than the window, the server not reading:
	 * all of it acknowledged, the window open.  Returned only when read,
	 * the window closes at WND and this fails at once. */
	t0 = now_ms();
	while (k.sent < EARLY || unet_tcp__unacked(k.c)) {
		offer(&k, EARLY);
		pump(&k);
		sp = server_pcb(&k);
		assert_non_null(sp);
		if (sp->rcv_wnd < sp->mss) /* the sender cannot go on */
			fail_msg("the window closed with %llu bytes sent, %zu unacknowledged, none read",
				 (unsigned long long)k.sent, unet_tcp__unacked(k.c));
		if (now_ms() - t0 > 20000)
			fail_msg("192 KiB not acknowledged in 20 s (%llu sent, %zu unacknowledged)",
				 (unsigned long long)k.sent, unet_tcp__unacked(k.c));
	}
	pump(&k);
	assert_int_equal(server_pcb(&k)->rcv_wnd, WND);
	print_message("tcp window: %u bytes unread, window %u\n", EARLY,
		      (unsigned int)server_pcb(&k)->rcv_wnd);

	/* 2. More, still not reading: the window closes (less than one
	 * segment left), and what the server holds stays within the
	 * allowance plus one window. */
	t0 = now_ms();
	for (;;) {
		offer(&k, TOTAL);
		pump(&k);
		sp = server_pcb(&k);
		assert_non_null(sp);
		if (sp->rcv_wnd < sp->mss)
			break;
		if (k.sent == TOTAL && !unet_tcp__unacked(k.c))
			fail_msg("the whole %u-byte stream taken unread: the window never closed", TOTAL);
		if (now_ms() - t0 > 20000)
			fail_msg("the window did not close in 20 s (%llu sent, window %u)",
				 (unsigned long long)k.sent, (unsigned int)sp->rcv_wnd);
	}
	/* a few more rounds for segments in flight; the window stays shut */
	for (int i = 0; i < 64; i++) {
		offer(&k, TOTAL);
		pump(&k);
	}
	held = drain(&k);
	print_message("tcp window: closed with %llu bytes unread (allowance %u + window %u)\n",
		      (unsigned long long)held, EARLY, WND);
	assert_true(held <= EARLY + WND);
	assert_true(held + 2u * sp->mss >= EARLY + WND);

	/* 3. Read: the window opens again and the rest of the stream
	 * arrives in order. */
	t0 = now_ms();
	while (k.got < TOTAL) {
		offer(&k, TOTAL);
		pump(&k);
		drain(&k);
		if (now_ms() - t0 > 20000)
			fail_msg("the stream stalled after reading: %llu of %u bytes",
				 (unsigned long long)k.got, TOTAL);
	}
	for (int i = 0; i < 8; i++)
		pump(&k);
	assert_int_equal(server_pcb(&k)->rcv_wnd, WND);

	/* 4. The client half-closes; the server reads the end of the
	 * stream, then closes: an orderly FIN, not the reset lwIP sends when
	 * its window is other than TCP_WND at tcp_close (the wide window
	 * must be narrowed first, the FIN lwIP counts into it included). */
	assert_int_equal(unet_tcp__shutdown(k.c), 0);
	t0 = now_ms();
	for (;;) {
		uint8_t b;
		ssize_t r;

		pump(&k);
		r = unet_tcp__recv(k.s, &b, 1, 0);
		if (r == 0)
			break;
		if (r != -EAGAIN)
			fail_msg("the server got %s, not the end of the stream",
				 r > 0 ? "data" : strerror((int)-r));
		if (now_ms() - t0 > 20000)
			fail_msg("no end of stream at the server in 20 s");
	}
	unet_tcp__close(k.s);
	t0 = now_ms();
	for (;;) {
		uint8_t b;
		ssize_t r;

		pump(&k);
		r = unet_tcp__recv(k.c, &b, 1, 0);
		if (r == 0)
			break;
		if (r != -EAGAIN)
			fail_msg("the client got %s, not the end of the stream",
				 r > 0 ? "data" : strerror((int)-r));
		if (now_ms() - t0 > 20000)
			fail_msg("no end of stream in 20 s");
	}
	unet_tcp__close(k.c);
	unet_tcp__close(k.l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tcp_window, pair_setup, pair_teardown),
	};

	pair_env();
	return cmocka_run_group_tests_name("tcp_window", tests, NULL, NULL);
}
