/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The adaptive wait (lib/core/wait.c): a wait with a spin budget takes a
 * message that comes within it without sleeping (counted by
 * unet_endpoint__wait_stats); with no budget it sleeps at once; an idle
 * wait costs no CPU without a budget and at most the budget with one;
 * the spin never outlasts the caller's timeout; dispatch and UAM's waits
 * spin the same way; the setter, $UNET_SPIN_US and the stats' sz.
 *
 * A second thread plays the peer: it sends on the other endpoint of the
 * pair a few milliseconds after the wait began (each endpoint is used by
 * one thread at a time).
 *
 * Needs root and a veth pair as test_datapath does: UNET_TEST_IFACE_A /
 * UNET_TEST_IFACE_B, UNET_PIN_ROOT, UNET_TEST_XDP_MODE.  Without them
 * every test is skipped, never passed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <unet-xdp/uam.h>
#include <unet-xdp/unet.h>

#define TAG_A 111
#define TAG_B 222
#define PEER_DELAY_US 5000 /* the peer sends this long after the wait began */

#include "veth_pair.h"

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* CPU time (user + system) of the calling thread, us. */
static uint64_t thread_cpu_us(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static struct unet_wait_stats wstats(struct unet_endpoint *ep)
{
	UNET_OPTS_INIT(unet_wait_stats, st);

	assert_int_equal(unet_endpoint__wait_stats(ep, &st), 0);
	assert_int_equal(st.sz, sizeof(st));
	return st;
}

/* ---- the peer thread: one message on a's channel after a delay ---------- */

struct peer {
	struct pair *p;
	pthread_t th;
	int err;
};

static void *peer_main(void *arg)
{
	struct peer *pe = arg;
	uint64_t v = 42;

	usleep(PEER_DELAY_US);
	pe->err = unet_channel__send_copy(pe->p->ab, &v, sizeof(v));
	if (!pe->err)
		pe->err = unet_endpoint__flush(pe->p->a, 1000);
	return NULL;
}

static void peer_start(struct peer *pe, struct pair *p)
{
	pe->p = p;
	pe->err = 0;
	assert_int_equal(pthread_create(&pe->th, NULL, peer_main, pe), 0);
}

static void peer_join(struct peer *pe)
{
	assert_int_equal(pthread_join(pe->th, NULL), 0);
	assert_int_equal(pe->err, 0);
}

static void take_one(struct unet_endpoint *ep)
{
	struct unet_recv_desc d;

	assert_int_equal(unet_endpoint__recv(ep, &d, 1), 1);
	assert_int_equal(d.len, 8);
	assert_int_equal(unet_endpoint__release(ep, &d, 1), 0);
}

/* b waits (budget spin_us) for the message the peer thread sends on a's
 * channel, and gets it; returns b's wait stats (the message is left for
 * take_one). */
static struct unet_wait_stats wait_for_peer(struct pair *p, uint32_t spin_us)
{
	struct peer pe;

	assert_int_equal(unet_endpoint__set_spin_us(p->b, spin_us), 0);
	peer_start(&pe, p);
	assert_int_equal(unet_endpoint__wait(p->b, 5000), 1);
	peer_join(&pe);
	return wstats(p->b);
}

/* ---- tests ---------------------------------------------------------------- */

/* A message that comes within the budget is taken while spinning: the
 * wait never sleeps.  (The budget, 500 ms, is a hundred times the peer's
 * delay: a loaded machine cannot make it miss.) */
static void test_spin_catches_message(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;

	NEED_PAIR(p);
	st = wait_for_peer(p, 500000);
	assert_int_equal(st.spin_us, 500000);
	assert_int_equal(st.waits, 1);
	assert_int_equal(st.spin_hits, 1);
	assert_int_equal(st.sleeps, 0);
	assert_true(st.spin_ns > 0);
	take_one(p->b);
}

/* No budget: the same wait sleeps in poll(2) and still returns the
 * message. */
static void test_no_spin_sleeps(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;

	NEED_PAIR(p);
	st = wait_for_peer(p, 0);
	assert_int_equal(st.waits, 1);
	assert_int_equal(st.spin_hits, 0);
	assert_int_equal(st.sleeps, 1);
	assert_int_equal(st.spin_ns, 0);
	take_one(p->b);
}

/* An idle wait without a budget costs (next to) no CPU: under 10% of the
 * 300 ms it lasts; a spinning one would use nearly all of it. */
static void test_idle_wait_costs_no_cpu(void **state)
{
	struct pair *p = *state;
	uint64_t t0, c0, wall, cpu;

	NEED_PAIR(p);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, 0), 0);
	c0 = thread_cpu_us();
	t0 = now_us();
	assert_int_equal(unet_endpoint__wait(p->b, 300), 0);
	wall = now_us() - t0;
	cpu = thread_cpu_us() - c0;
	print_message("idle wait, no spin: %llu us wall, %llu us CPU\n", (unsigned long long)wall,
		      (unsigned long long)cpu);
	assert_true(wall >= 290000);
	assert_true(cpu < 30000);
	assert_int_equal(wstats(p->b).sleeps, 1);
}

/* With a budget, an idle wait spins the budget and then sleeps: CPU well
 * under the wait's 300 ms, time spun at least the 50 ms budget. */
static void test_spin_is_bounded(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;
	uint64_t t0, c0, wall, cpu;

	NEED_PAIR(p);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, 50000), 0);
	c0 = thread_cpu_us();
	t0 = now_us();
	assert_int_equal(unet_endpoint__wait(p->b, 300), 0);
	wall = now_us() - t0;
	cpu = thread_cpu_us() - c0;
	st = wstats(p->b);
	print_message("idle wait, 50 ms spin: %llu us wall, %llu us CPU, spun %llu us\n",
		      (unsigned long long)wall, (unsigned long long)cpu,
		      (unsigned long long)(st.spin_ns / 1000));
	assert_true(wall >= 290000);
	assert_true(st.spin_ns >= 50000000ull);
	assert_true(st.spin_ns < 200000000ull);
	assert_true(cpu < 200000);
	assert_int_equal(st.spin_hits, 0);
	assert_int_equal(st.sleeps, 1);
}

/* The spin never runs past the caller's timeout, and a zero timeout
 * (a look) neither spins nor counts as a wait. */
static void test_spin_within_timeout(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;
	uint64_t t0, wall;

	NEED_PAIR(p);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, UNET_SPIN_US_MAX), 0);
	t0 = now_us();
	assert_int_equal(unet_endpoint__wait(p->b, 0), 0);
	assert_int_equal(unet_endpoint__wait(p->b, 20), 0);
	wall = now_us() - t0;
	st = wstats(p->b);
	print_message("1 s budget, 20 ms timeout: %llu us\n", (unsigned long long)wall);
	assert_true(wall >= 19000);
	assert_true(wall < 500000);
	assert_int_equal(st.waits, 1);
}

static int handled;

static void on_msg(struct unet_endpoint *ep, const struct unet_recv_desc *d, void *ctx)
{
	(void)ep;
	(void)ctx;
	handled += d->len == 8;
}

/* dispatch waits through the same path. */
static void test_dispatch_spins(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;
	struct peer pe;

	NEED_PAIR(p);
	handled = 0;
	unet_endpoint__set_handler(p->b, on_msg, NULL);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, 500000), 0);
	peer_start(&pe, p);
	assert_int_equal(unet_endpoint__dispatch(p->b, 5000, 16), 1);
	peer_join(&pe);
	assert_int_equal(handled, 1);
	st = wstats(p->b);
	assert_int_equal(st.spin_hits, 1);
	assert_int_equal(st.sleeps, 0);
}

/* ---- UAM: uam_call's wait spins on its endpoint's budget ----------------- */

struct uam_side {
	struct uam_ep *ep;
	struct uam_chan *ch;
};

static volatile int server_stop;

static void on_request(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	uint64_t v = m->args[0] + 1;

	(void)ep;
	(void)ctx;
	uam_reply(m, 0, &v, 1);
}

/* Polls every 0.5 ms (under UAM's 2 ms retransmission timeout): each
 * request is answered a while after it was sent, so the caller is surely
 * waiting by then. */
static void *uam_server(void *arg)
{
	struct uam_side *s = arg;

	while (!__atomic_load_n(&server_stop, __ATOMIC_ACQUIRE)) {
		uam_poll(s->ep);
		usleep(500);
	}
	return NULL;
}

/* Runs calls from b to a's handler with b's spin budget us.  Returns b's
 * wait counters. */
static struct unet_wait_stats uam_calls(struct pair *p, uint32_t us, int ncalls)
{
	struct uam_side sa, sb;
	struct unet_wait_stats st;
	pthread_t th;

	sa.ep = uam_ep__create(p->a, NULL);
	sb.ep = uam_ep__create(p->b, NULL);
	assert_non_null(sa.ep);
	assert_non_null(sb.ep);
	sa.ch = uam_chan__open(sa.ep, p->ab);
	sb.ch = uam_chan__open(sb.ep, p->ba);
	assert_non_null(sa.ch);
	assert_non_null(sb.ch);
	assert_int_equal(uam_ep__set_handler(sa.ep, 1, on_request, NULL), 0);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, us), 0);
	server_stop = 0;
	assert_int_equal(pthread_create(&th, NULL, uam_server, &sa), 0);
	for (int i = 0; i < ncalls; i++) {
		uint64_t v = (uint64_t)i;
		struct uam_msg reply;

		assert_int_equal(uam_call(sb.ch, 1, &v, 1, &reply, 5000), 0);
		assert_int_equal(reply.args[0], (uint64_t)i + 1);
	}
	st = wstats(p->b);
	__atomic_store_n(&server_stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	uam_ep__destroy(sa.ep);
	uam_ep__destroy(sb.ep);
	return st;
}

/* With a budget far above the round trip (the server answers within
 * about 0.5 ms) the caller never sleeps and replies are caught spinning;
 * without one, the calls sleep.  (A request the server's poll happens to
 * catch at once may be answered before the caller waits, and UAM waits
 * 1 ms at a time while its send is not completed, which can end with
 * nothing come: hence the margins.) */
static void test_uam_call_spins(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;

	NEED_PAIR(p);
	st = uam_calls(p, 500000, 20);
	print_message("uam_call, 500 ms spin: %llu waits, %llu spin hits, %llu sleeps\n",
		      (unsigned long long)st.waits, (unsigned long long)st.spin_hits,
		      (unsigned long long)st.sleeps);
	/* UAM waits 1 ms at a time while its sends are not completed yet:
	 * such a wait can end spinning with nothing come (neither a hit nor
	 * a sleep). */
	assert_true(st.spin_hits >= 10);
	assert_int_equal(st.sleeps, 0);
}

static void test_uam_call_no_spin_sleeps(void **state)
{
	struct pair *p = *state;
	struct unet_wait_stats st;

	NEED_PAIR(p);
	st = uam_calls(p, 0, 20);
	print_message("uam_call, no spin: %llu waits, %llu sleeps\n", (unsigned long long)st.waits,
		      (unsigned long long)st.sleeps);
	assert_true(st.sleeps >= 18);
	assert_int_equal(st.spin_hits, 0);
}

/* ---- the knobs ------------------------------------------------------------ */

static void test_setter_env_and_stats_size(void **state)
{
	struct pair *p = *state;
	struct unet_endpoint *ep;
	struct unet_wait_stats st;

	NEED_PAIR(p);
	assert_int_equal(unet_endpoint__set_spin_us(NULL, 1), -EINVAL);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, UNET_SPIN_US_MAX + 1), -EINVAL);
	assert_int_equal(unet_endpoint__set_spin_us(p->b, 77), 0);
	assert_int_equal(unet_endpoint__wait_stats(NULL, &st), -EINVAL);
	assert_int_equal(unet_endpoint__wait_stats(p->b, NULL), -EINVAL);
	st.sz = 0;
	assert_int_equal(unet_endpoint__wait_stats(p->b, &st), -EINVAL);
	/* An older, smaller struct gets only its own fields. */
	memset(&st, 0xee, sizeof(st));
	st.sz = offsetof(struct unet_wait_stats, waits);
	assert_int_equal(unet_endpoint__wait_stats(p->b, &st), 0);
	assert_int_equal(st.sz, offsetof(struct unet_wait_stats, waits));
	assert_int_equal(st.spin_us, 77);
	assert_int_equal(st.spin_hits, 0xeeeeeeeeeeeeeeeeull);
	/* $UNET_SPIN_US: a number is taken, anything else is the default. */
	unet_endpoint__destroy(p->a);
	p->a = NULL;
	setenv("UNET_SPIN_US", "1234", 1);
	ep = ep_new(if_a);
	assert_int_equal(wstats(ep).spin_us, 1234);
	unet_endpoint__destroy(ep);
	setenv("UNET_SPIN_US", "12x", 1);
	ep = ep_new(if_a);
	assert_int_equal(wstats(ep).spin_us, 50);
	unet_endpoint__destroy(ep);
	setenv("UNET_SPIN_US", "0", 1);
	ep = ep_new(if_a);
	assert_int_equal(wstats(ep).spin_us, 0);
	unet_endpoint__destroy(ep);
	unsetenv("UNET_SPIN_US");
	ep = ep_new(if_a);
	assert_int_equal(wstats(ep).spin_us, 50);
	unet_endpoint__destroy(ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_spin_catches_message, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_no_spin_sleeps, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_idle_wait_costs_no_cpu, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_spin_is_bounded, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_spin_within_timeout, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_dispatch_spins, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_uam_call_spins, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_uam_call_no_spin_sleeps, pair_setup, pair_teardown),
		cmocka_unit_test_setup_teardown(test_setter_env_and_stats_size, pair_setup, pair_teardown),
	};
	pair_env();
	unsetenv("UNET_SPIN_US"); /* the tests set budgets themselves */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
