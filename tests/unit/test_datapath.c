/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data path between two endpoints of one process, on the two ends of
 * a veth pair in one namespace: send (copy and in place), batches,
 * receive and release, the free queue under steady load, every kind of
 * notification (blocking wait, the poll fd, upcalls), administrative
 * channels, flush and destroy.
 *
 * Needs root and the pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B (the
 * integration suite's "datapath" test makes them), UNET_PIN_ROOT, and
 * UNET_TEST_XDP_MODE (native or skb).  Without them every test is
 * skipped, never passed.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <unet-xdp/unet.h>

#define TAG_A 101
#define TAG_B 202

#include "veth_pair.h"

/* Receive exactly one message on ep within a second. */
static int recv_one(struct unet_endpoint *ep, struct unet_recv_desc *d)
{
	int n = 0;

	for (int i = 0; i < 100 && !n; i++) {
		if (unet_endpoint__wait(ep, 10) < 0)
			return -1;
		n = unet_endpoint__recv(ep, d, 1);
	}
	return n;
}

/* Everything that arrives within ms, released; returns the count. */
static int drain(struct unet_endpoint *ep, int ms)
{
	struct unet_recv_desc d[64];
	int total = 0, n;

	while (unet_endpoint__wait(ep, ms) > 0 && (n = unet_endpoint__recv(ep, d, 64)) > 0) {
		assert_int_equal(unet_endpoint__release(ep, d, (unsigned int)n), 0);
		total += n;
	}
	return total;
}

static void test_copy_roundtrip(void **state)
{
	struct pair *p = *state;
	struct unet_recv_desc d;

	NEED_PAIR(p);
	assert_int_equal(unet_channel__send_copy(p->ab, "hello, u-net", 12), 0);
	assert_int_equal(recv_one(p->b, &d), 1);
	assert_ptr_equal(d.channel, p->ba);
	assert_int_equal(d.len, 12);
	assert_memory_equal(d.data, "hello, u-net", 12);
	assert_int_equal((uintptr_t)d.data % 8, 0); /* aligned payloads */
	assert_int_equal(unet_endpoint__release(p->b, &d, 1), 0);
	/* A buffer goes back once only. */
	assert_int_equal(unet_endpoint__release(p->b, &d, 1), -EINVAL);
}

static void test_in_place_send_and_ownership(void **state)
{
	struct pair *p = *state;
	struct unet_recv_desc d;
	uint64_t buf;
	uint8_t *pl;

	NEED_PAIR(p);
	buf = unet_endpoint__buf_alloc(p->a);
	assert_int_not_equal(buf, UNET_NO_BUF);
	pl = unet_endpoint__buf_payload(p->a, buf);
	assert_non_null(pl);
	assert_int_equal((uintptr_t)pl % 8, 0);
	for (uint32_t i = 0; i < p->ia.max_payload; i++)
		pl[i] = (uint8_t)(i * 7 + 3);
	assert_int_equal(unet_channel__send(p->ab, buf, p->ia.max_payload), 0);
	/* Sent: the buffer is the library's now. */
	assert_int_equal(unet_endpoint__buf_free(p->a, buf), -EINVAL);
	assert_null(unet_endpoint__buf_payload(p->a, buf));
	assert_int_equal(recv_one(p->b, &d), 1);
	assert_int_equal(d.len, p->ia.max_payload);
	for (uint32_t i = 0; i < d.len; i++)
		assert_int_equal(((uint8_t *)d.data)[i], (uint8_t)(i * 7 + 3));
	assert_int_equal(unet_endpoint__release(p->b, &d, 1), 0);
}

static void test_batch_and_oversize_batch(void **state)
{
	struct pair *p = *state;
	struct unet_send_desc sd[32];
	struct unet_recv_desc rd[64];
	int got = 0, n;

	NEED_PAIR(p);
	for (int i = 0; i < 32; i++) {
		sd[i].channel = p->ab;
		sd[i].buf = unet_endpoint__buf_alloc(p->a);
		assert_int_not_equal(sd[i].buf, UNET_NO_BUF);
		*(uint32_t *)unet_endpoint__buf_payload(p->a, sd[i].buf) = (uint32_t)i;
		sd[i].len = 64;
	}
	/* One oversize message: nothing is queued, every buffer still ours. */
	sd[17].len = p->ia.max_payload + 1;
	assert_int_equal(unet_endpoint__send_batch(p->a, sd, 32), -EMSGSIZE);
	assert_int_equal(drain(p->b, 50), 0);
	sd[17].len = 64;
	assert_int_equal(unet_endpoint__send_batch(p->a, sd, 32), 32);
	for (int i = 0; i < 100 && got < 32; i++) {
		unet_endpoint__wait(p->b, 10);
		n = unet_endpoint__recv(p->b, rd, 64);
		assert_true(n >= 0);
		for (int k = 0; k < n; k++) {
			/* In order, on one queue. */
			assert_int_equal(*(uint32_t *)rd[k].data, (uint32_t)(got + k));
			assert_int_equal(rd[k].len, 64);
		}
		assert_int_equal(unet_endpoint__release(p->b, rd, (unsigned int)n), 0);
		got += n;
	}
	assert_int_equal(got, 32);
}

/* More frames in one send_batch than the kernel sends per kick (copy mode
 * transmits at most 32 descriptors per sendto and answers EAGAIN for the
 * rest): the one call must get all of them out, because a sender that
 * then blocks in a wait kicks nothing more and the rest would sit in the
 * send queue until its next call. */
static void test_batch_beyond_kick_budget(void **state)
{
	enum { N = 200 };
	struct pair *p = *state;
	struct unet_send_desc sd[N];

	NEED_PAIR(p);
	for (int i = 0; i < N; i++) {
		sd[i].channel = p->ab;
		sd[i].buf = unet_endpoint__buf_alloc(p->a);
		assert_int_not_equal(sd[i].buf, UNET_NO_BUF);
		*(uint32_t *)unet_endpoint__buf_payload(p->a, sd[i].buf) = (uint32_t)i;
		sd[i].len = 64;
	}
	assert_int_equal(unet_endpoint__send_batch(p->a, sd, N), N);
	/* Nothing more is called on a: what b gets came from that one call. */
	assert_int_equal(drain(p->b, 100), N);
}

/* Many times the segment's frames, in bursts the receiver keeps up with:
 * the free queue must be refilled and nothing lost. */
static void test_free_queue_steady_load(void **state)
{
	struct pair *p = *state;
	const int burst = 64;
	int total, sent = 0, got = 0;

	NEED_PAIR(p); /* before p is read: without interfaces p is NULL */
	total = (int)p->ib.nframes * 8;
	while (sent < total) {
		for (int i = 0; i < burst; i++, sent++) {
			int err;

			while ((err = unet_channel__send_copy(p->ab, &sent, sizeof(sent))) == -EAGAIN)
				unet_endpoint__complete(p->a);
			assert_int_equal(err, 0);
		}
		assert_int_equal(unet_endpoint__flush(p->a, 1000), 0);
		got += drain(p->b, 20);
	}
	got += drain(p->b, 100);
	assert_int_equal(got, total);
}

static void test_wait_times_out_and_fd_polls(void **state)
{
	struct pair *p = *state;
	struct pollfd pfd = { .fd = unet_endpoint__fd(p ? p->b : NULL), .events = POLLIN };
	struct unet_recv_desc d;

	NEED_PAIR(p);
	assert_true(pfd.fd >= 0);
	assert_int_equal(unet_endpoint__wait(p->b, 30), 0);
	assert_int_equal(poll(&pfd, 1, 30), 0);
	assert_int_equal(unet_channel__send_copy(p->ab, "x", 1), 0);
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_true(pfd.revents & POLLIN);
	assert_int_equal(unet_endpoint__wait(p->b, 0), 1);
	assert_int_equal(recv_one(p->b, &d), 1);
	assert_int_equal(unet_endpoint__release(p->b, &d, 1), 0);
}

struct upcalls {
	int endpoint_calls, channel_calls;
	char last[8];
};

static void on_endpoint(struct unet_endpoint *ep, const struct unet_recv_desc *d, void *ctx)
{
	struct upcalls *u = ctx;

	(void)ep;
	u->endpoint_calls++;
	memcpy(u->last, d->data, d->len < 8 ? d->len : 8);
}

static void on_channel(struct unet_endpoint *ep, const struct unet_recv_desc *d, void *ctx)
{
	struct upcalls *u = ctx;

	/* A handler may reply from inside the upcall. */
	assert_int_equal(unet_channel__send_copy(d->channel, "pong", 4), 0);
	(void)ep;
	u->channel_calls++;
}

static void test_upcalls(void **state)
{
	struct pair *p = *state;
	struct unet_endpoint_stats st;
	struct upcalls u = { 0 };
	struct unet_recv_desc d;

	NEED_PAIR(p);
	/* No handler: released unseen, counted. */
	assert_int_equal(unet_channel__send_copy(p->ab, "lost", 4), 0);
	assert_int_equal(unet_endpoint__dispatch(p->b, 1000, 16), 1);
	assert_int_equal(unet_endpoint__stats(p->b, &st), 0);
	assert_int_equal(st.rx_no_handler, 1);

	unet_endpoint__set_handler(p->b, on_endpoint, &u);
	assert_int_equal(unet_channel__send_copy(p->ab, "ping", 4), 0);
	assert_int_equal(unet_endpoint__dispatch(p->b, 1000, 16), 1);
	assert_int_equal(u.endpoint_calls, 1);
	assert_memory_equal(u.last, "ping", 4);

	/* The channel's handler takes precedence, and can reply. */
	unet_channel__set_handler(p->ba, on_channel, &u);
	assert_int_equal(unet_channel__send_copy(p->ab, "ping", 4), 0);
	assert_int_equal(unet_endpoint__dispatch(p->b, 1000, 16), 1);
	assert_int_equal(u.channel_calls, 1);
	assert_int_equal(u.endpoint_calls, 1);
	assert_int_equal(unet_endpoint__flush(p->b, 1000), 0);
	assert_int_equal(recv_one(p->a, &d), 1);
	assert_memory_equal(d.data, "pong", 4);
	assert_int_equal(unet_endpoint__release(p->a, &d, 1), 0);
	/* Nothing waiting: dispatch with timeout 0 returns at once. */
	assert_int_equal(unet_endpoint__dispatch(p->b, 0, 16), 0);
	unet_channel__set_handler(p->ba, NULL, NULL);
	unet_endpoint__set_handler(p->b, NULL, NULL);
}

struct find_tag {
	uint16_t tag;
	int found;
};

static int count_tag(const struct unet_channel_entry *e, void *ctx)
{
	struct find_tag *f = ctx;

	f->found += e->tag == f->tag;
	return 0;
}

/* The "OS sets up channels" path: unetctl channel add's library call, then
 * the owner finds it. */
static void test_admin_channel(void **state)
{
	struct pair *p = *state;
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface *iface;
	struct unet_channel *ab2, *adopted;
	struct find_tag f = { .tag = 303 };
	struct unet_recv_desc d;

	NEED_PAIR(p);
	iface = unet_iface__open(if_b, &io);
	assert_non_null(iface);
	errno = 0;
	assert_null(unet_channel__lookup(p->b, 303));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(unet_iface__channel_add(iface, p->ib.id, 303, p->ia.mac, 304), 0);
	assert_int_equal(unet_iface__channel_add(iface, p->ib.id, 303, p->ia.mac, 304),
			 -EADDRINUSE);
	assert_int_equal(unet_iface__channel_add(iface, 63, 305, p->ia.mac, 304), -ESRCH);
	adopted = unet_channel__lookup(p->b, 303);
	assert_non_null(adopted);
	assert_int_equal(unet_channel__peer_tag(adopted), 304);

	ab2 = unet_channel__open(p->a, 304, p->ib.mac, 303, NULL);
	assert_non_null(ab2);
	assert_int_equal(unet_channel__send_copy(ab2, "admin", 5), 0);
	assert_int_equal(recv_one(p->b, &d), 1);
	assert_ptr_equal(d.channel, adopted);
	assert_int_equal(unet_endpoint__release(p->b, &d, 1), 0);

	unet_channel__close(adopted);
	unet_channel__close(ab2);
	assert_int_equal(unet_iface__for_each_channel(iface, count_tag, &f), 0);
	assert_int_equal(f.found, 0);
	unet_iface__close(iface);
}

static int count_endpoint(const struct unet_endpoint_entry *e, void *ctx)
{
	uint32_t *n = ctx;

	(void)e;
	(*n)++;
	return 0;
}

/* Destroy removes the endpoint's slot and channels from the interface and
 * sends what was queued. */
static void test_destroy_cleans_up(void **state)
{
	struct pair *p = *state;
	UNET_OPTS_INIT(unet_iface_opts, io);
	struct unet_iface *iface;
	struct unet_endpoint *ep;
	struct find_tag f = { .tag = 77 };
	uint32_t before = 0, after = 0;

	NEED_PAIR(p);
	iface = unet_iface__open(if_a, &io);
	assert_non_null(iface);
	assert_int_equal(unet_iface__for_each_endpoint(iface, count_endpoint, &before), 0);
	/* A second endpoint on if_a cannot share a's queues: destroy a's
	 * and make a new one there. */
	unet_endpoint__destroy(p->a);
	p->a = NULL;
	ep = ep_new(if_a);
	assert_non_null(unet_channel__open(ep, 77, p->ib.mac, TAG_B, NULL));
	for (int i = 0; i < 200; i++)
		assert_int_equal(unet_channel__send_copy(unet_channel__lookup(ep, 77), &i, 4), 0);
	unet_endpoint__destroy(ep);
	assert_int_equal(unet_iface__for_each_endpoint(iface, count_endpoint, &after), 0);
	assert_int_equal(after, before - 1);
	assert_int_equal(unet_iface__for_each_channel(iface, count_tag, &f), 0);
	assert_int_equal(f.found, 0);
	unet_iface__close(iface);
	/* b has no channel with tag 77's peer tag... it has TAG_B, whose
	 * peer tag is TAG_A, so 77's frames were dropped as wrong source:
	 * the 200 sends left (destroy flushed them) and were counted. */
	iface = unet_iface__open(if_b, &io);
	assert_non_null(iface);
	{
		uint64_t c[UNET_STAT__COUNT];

		assert_int_equal(unet_iface__stats(iface, c), 0);
		assert_true(c[UNET_STAT_DROP_WRONG_SRC] >= 200);
	}
	unet_iface__close(iface);
	/* Put a back for the remaining tests. */
	p->a = ep_new(if_a);
	assert_int_equal(unet_endpoint__info(p->a, &p->ia), 0);
	p->ab = unet_channel__open(p->a, TAG_A, p->ib.mac, TAG_B, NULL);
	assert_non_null(p->ab);
}

/* Endpoint options that change how the queues are driven still carry
 * messages: busy polling, need_wakeup off; veth has no zero-copy, so
 * forcing it fails cleanly and AUTO reports copy mode. */
static void test_endpoint_options(void **state)
{
	struct pair *p = *state;
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct unet_endpoint_info info;
	struct unet_recv_desc d;

	NEED_PAIR(p);
	assert_false(p->ia.zerocopy);
	assert_true(p->ia.need_wakeup);

	unet_endpoint__destroy(p->a);
	o.mode = mode;
	o.segment_size = 1 << 20;
	o.copy = UNET_ZEROCOPY_FORCE;
	errno = 0;
	p->a = unet_endpoint__create(if_a, &o);
	assert_null(p->a);
	assert_int_equal(errno, EOPNOTSUPP);

	o.copy = UNET_COPY_FORCE;
	o.busy_poll_usec = 50;
	o.no_need_wakeup = true;
	p->a = unet_endpoint__create(if_a, &o);
	assert_non_null(p->a);
	assert_int_equal(unet_endpoint__info(p->a, &info), 0);
	assert_false(info.zerocopy);
	assert_false(info.need_wakeup);
	p->ab = unet_channel__open(p->a, TAG_A, p->ib.mac, TAG_B, NULL);
	assert_non_null(p->ab);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(unet_channel__send_copy(p->ab, &i, sizeof(i)), 0);
		assert_int_equal(recv_one(p->b, &d), 1);
		assert_int_equal(*(int *)d.data, i);
		assert_int_equal(unet_endpoint__release(p->b, &d, 1), 0);
		assert_int_equal(unet_channel__send_copy(p->ba, &i, sizeof(i)), 0);
		assert_int_equal(recv_one(p->a, &d), 1); /* busy-polling receiver */
		assert_int_equal(*(int *)d.data, i);
		assert_int_equal(unet_endpoint__release(p->a, &d, 1), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_roundtrip),
		cmocka_unit_test(test_in_place_send_and_ownership),
		cmocka_unit_test(test_batch_and_oversize_batch),
		cmocka_unit_test(test_batch_beyond_kick_budget),
		cmocka_unit_test(test_free_queue_steady_load),
		cmocka_unit_test(test_wait_times_out_and_fd_polls),
		cmocka_unit_test(test_upcalls),
		cmocka_unit_test(test_admin_channel),
		cmocka_unit_test(test_destroy_cleans_up),
		cmocka_unit_test(test_endpoint_options),
	};

	pair_env();
	return cmocka_run_group_tests_name("datapath", tests, pair_setup, pair_teardown);
}
