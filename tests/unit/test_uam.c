/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_uam.c - U-Net Active Messages over real endpoints: the two ends of
 * a veth pair in one namespace, driven by one process (as test_datapath),
 * with loss injected by the XDP program (unet_iface__set_fault) and
 * duplication / reordering by UAM's own test hooks.  The peer-killed case
 * forks: the child owns the far endpoint and is SIGKILLed mid-transfer.
 *
 * Needs root and the pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B (the
 * integration suite's "uam" test makes them), UNET_PIN_ROOT, and
 * UNET_TEST_XDP_MODE (native or skb).  Without them every test is
 * skipped, never passed.  UNET_UAM_REQUESTS overrides the 100000 requests.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <unet-xdp/uam.h>

#include "uam/uam_impl.h" /* kept buffers out: struct uam_ep */

#define TAG_A 301
#define TAG_B 402
#define MIB (1024u * 1024u)

static const char *if_a, *if_b;
static enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;
static uint64_t n_requests = 100000;

struct pair {
	struct unet_endpoint *ua, *ub;
	struct unet_channel *cab, *cba;
	struct uam_ep *a, *b;
	struct uam_chan *ab, *ba;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int read_mac(const char *ifname, uint8_t mac[6])
{
	char path[128], buf[32] = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[17] = 0;
	return unet_parse_mac(buf, mac);
}

static struct unet_endpoint *ep_new(const char *ifname)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct unet_endpoint *ep;

	o.mode = mode;
	ep = unet_endpoint__create(ifname, &o);
	if (!ep)
		print_error("unet_endpoint__create(%s): %s\n", ifname, strerror(errno));
	assert_non_null(ep);
	return ep;
}

static void set_loss(const char *ifname, uint32_t ppm)
{
	struct unet_iface *i = unet_iface__open(ifname, NULL);

	assert_non_null(i);
	assert_int_equal(unet_iface__set_fault(i, ppm), 0);
	unet_iface__close(i);
}

static uint64_t injected(const char *ifname)
{
	uint64_t c[UNET_STAT__COUNT];
	struct unet_iface *i = unet_iface__open(ifname, NULL);

	assert_non_null(i);
	assert_int_equal(unet_iface__stats(i, c), 0);
	unet_iface__close(i);
	return c[UNET_STAT_DROP_INJECTED];
}

static struct pair *pair_new(const struct uam_ep_opts *o)
{
	struct pair *p = calloc(1, sizeof(*p));
	uint8_t ma[6], mb[6];

	assert_non_null(p);
	p->ua = ep_new(if_a);
	p->ub = ep_new(if_b);
	assert_int_equal(read_mac(if_a, ma), 0);
	assert_int_equal(read_mac(if_b, mb), 0);
	p->cab = unet_channel__open(p->ua, TAG_A, mb, TAG_B, NULL);
	p->cba = unet_channel__open(p->ub, TAG_B, ma, TAG_A, NULL);
	assert_non_null(p->cab);
	assert_non_null(p->cba);
	p->a = uam_ep__create(p->ua, o);
	p->b = uam_ep__create(p->ub, o);
	assert_non_null(p->a);
	assert_non_null(p->b);
	p->ab = uam_chan__open(p->a, p->cab);
	p->ba = uam_chan__open(p->b, p->cba);
	assert_non_null(p->ab);
	assert_non_null(p->ba);
	return p;
}

static int setup(void **state)
{
	*state = NULL;
	if (!if_a || !if_b) {
		print_message("UNET_TEST_IFACE_A/B not set: skipped\n");
		return 0;
	}
	*state = (void *)1;
	return 0;
}

static void pair_free(struct pair *p)
{
	if (!p)
		return;
	uam_ep__destroy(p->a);
	uam_ep__destroy(p->b);
	unet_endpoint__destroy(p->ua);
	unet_endpoint__destroy(p->ub);
	free(p);
	set_loss(if_a, 0);
	set_loss(if_b, 0);
}

#define NEED_PAIR(s)            \
	do {                    \
		if (!(s))       \
			skip(); \
	} while (0)

/* Every send buffer the endpoint hands out now, into held (at most
 * HELD_MAX); how many. */
#define HELD_MAX (1u << 16)
static uint32_t take_send_buffers(struct unet_endpoint *uep, uint64_t *held)
{
	uint32_t n = 0;

	while (n < HELD_MAX && (held[n] = unet_endpoint__buf_alloc(uep)) != UNET_NO_BUF)
		n++;
	return n;
}

/* Send buffers the endpoint hands out now (each given back): what is in
 * flight completed first, stray frames drained (which tops the FILL rings
 * up to their target), so two counts with no traffic between match
 * unless buffers went missing. */
static uint32_t send_buffers(struct unet_endpoint *uep)
{
	static uint64_t held[HELD_MAX];
	struct unet_recv_desc d[64];
	uint32_t n;
	int r;

	unet_endpoint__flush(uep, 200);
	while ((r = unet_endpoint__recv(uep, d, 64)) > 0)
		assert_int_equal(unet_endpoint__release(uep, d, (unsigned int)r), 0);
	n = take_send_buffers(uep, held);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(unet_endpoint__buf_free(uep, held[i]), 0);
	return n;
}

/* ---- Requests --------------------------------------------------------- */

enum { H_REQ = 1, H_REP = 2, H_STORED = 3 };

struct counts {
	uint64_t next_req, next_rep, reqs, reps, bad, stores;
};

static void h_req(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;
	uint64_t r[2] = { m->args[0], m->args[0] ^ 0x5555 };

	(void)ep;
	if (m->nargs != 2 || m->args[0] != c->next_req || m->args[1] != ~m->args[0])
		c->bad++;
	c->next_req = m->args[0] + 1;
	c->reqs++;
	if (uam_reply(m, H_REP, r, 2))
		c->bad++;
}

static void h_rep(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;

	(void)ep;
	if (m->nargs != 2 || m->args[0] != c->next_rep || m->args[1] != (m->args[0] ^ 0x5555))
		c->bad++;
	c->next_rep = m->args[0] + 1;
	c->reps++;
}

static void h_stored(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct counts *c = ctx;

	(void)ep;
	(void)m;
	c->stores++;
}

static void set_handlers(struct pair *p, struct counts *c)
{
	uam_ep__set_handler(p->a, H_REP, h_rep, c);
	uam_ep__set_handler(p->b, H_REQ, h_req, c);
	uam_ep__set_handler(p->b, H_STORED, h_stored, c);
}

static void print_stats(const char *what, struct uam_ep *ep)
{
	struct uam_stats s;

	uam_ep__stats(ep, &s);
	print_message("%s: tx %llu rx %llu acks %llu rtx %llu timeouts %llu dup %llu ooo %llu "
		      "oow %llu stalls %llu\n",
		      what, (unsigned long long)s.tx_frames, (unsigned long long)s.rx_frames,
		      (unsigned long long)s.tx_acks, (unsigned long long)s.retransmits,
		      (unsigned long long)s.timeouts, (unsigned long long)s.dup_dropped,
		      (unsigned long long)s.out_of_order, (unsigned long long)s.out_of_window,
		      (unsigned long long)s.credit_stalls);
}

/* One round of progress on both ends; neither channel has failed. */
static void pump(struct pair *p)
{
	assert_true(uam_poll(p->b) >= 0);
	assert_true(uam_poll(p->a) >= 0);
	assert_int_equal(uam_chan__error(p->ab), 0);
	assert_int_equal(uam_chan__error(p->ba), 0);
}

/* The end of a run of n requests: each request and each reply was
 * handled once, intact, and nothing more arrives.  The counters are the
 * handlers' (read again after the last waits). */
static void expect_exactly(struct pair *p, uint64_t n, const uint64_t *reqs,
			   const uint64_t *reps, const uint64_t *bad)
{
	print_stats("requester", p->a);
	print_stats("responder", p->b);
	assert_int_equal(*bad, 0);
	assert_int_equal(*reqs, n);
	assert_int_equal(*reps, n);
	for (int i = 0; i < 50; i++) {
		uam_wait(p->b, 1);
		uam_wait(p->a, 1);
	}
	assert_int_equal(*reqs, n);
	assert_int_equal(*reps, n);
}

static void run_requests(struct pair *p, uint64_t n, uint64_t limit_ms)
{
	struct counts c = { 0 };
	uint64_t sent = 0, t0 = now_ms();

	set_handlers(p, &c);
	while (c.reps < n && now_ms() - t0 < limit_ms) {
		while (sent < n) {
			uint64_t a[2] = { sent, ~sent };
			int r = uam_request(p->ab, H_REQ, a, 2);

			if (r == -EAGAIN)
				break;
			assert_true(r >= 0);
			sent++;
		}
		pump(p);
	}
	print_message("%llu requests in %llu ms\n", (unsigned long long)n,
		      (unsigned long long)(now_ms() - t0));
	expect_exactly(p, n, &c.reqs, &c.reps, &c.bad);
}

static void test_requests_loss(void **state)
{
	struct pair *p;
	struct uam_stats s;

	NEED_PAIR(*state);
	p = pair_new(NULL);
	set_loss(if_a, 100000);
	set_loss(if_b, 100000);
	run_requests(p, n_requests, 60000);
	assert_true(injected(if_a) > n_requests / 20);
	assert_true(injected(if_b) > n_requests / 20);
	uam_ep__stats(p->a, &s);
	assert_true(s.retransmits > 0);
	pair_free(p);
}

static void test_requests_loss_dup_reorder(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct pair *p;
	struct uam_stats a, b;

	NEED_PAIR(*state);
	o.inject.dup_ppm = 50000;
	o.inject.reorder_ppm = 50000;
	o.inject.seed = 1234;
	p = pair_new(&o);
	set_loss(if_a, 100000);
	set_loss(if_b, 100000);
	run_requests(p, n_requests, 60000);
	uam_ep__stats(p->a, &a);
	uam_ep__stats(p->b, &b);
	assert_true(a.dup_dropped + b.dup_dropped > n_requests / 100);
	assert_true(a.out_of_order + b.out_of_order > n_requests / 100);
	pair_free(p);
}

/* ---- Medium messages ---------------------------------------------------- */

enum { H_MREQ = 4, H_MREP = 5 };

struct mcounts {
	uint64_t next_req, next_rep, reqs, reps, bad;
	size_t max[2], step; /* the largest payload with 0 and with 1 arg */
};

/* Request k has k % 2 args (its number k, when it has one: with none, it
 * is known from its place in the stream, and its bytes depend on it) and
 * k * step % (max + 1) bytes; its reply the same args and max minus that:
 * together every size 0..max, with and without an arg, both ways. */
static unsigned int mnargs(uint64_t k)
{
	return (unsigned int)(k % 2);
}

static size_t mmax(const struct mcounts *c, uint64_t k)
{
	return c->max[mnargs(k)];
}

static size_t msize(const struct mcounts *c, uint64_t k)
{
	return (size_t)(k * c->step % (mmax(c, k) + 1));
}

static uint8_t mbyte(uint64_t k, size_t n, size_t i)
{
	return (uint8_t)(k * 131 + n * 7 + i * 13 + (i >> 8));
}

static bool mcheck(const struct uam_msg *m, uint64_t k, size_t n)
{
	const uint8_t *d = m->data;

	if (m->data_len != n || (n && !d))
		return false;
	for (size_t i = 0; i < n; i++)
		if (d[i] != mbyte(k, n, i))
			return false;
	return true;
}

/* Message k must come next: its args and content as sent. */
static bool mcheck_k(const struct uam_msg *m, uint64_t k, size_t n)
{
	return m->nargs == mnargs(k) && (!m->nargs || m->args[0] == k) && mcheck(m, k, n);
}

static void h_mreq(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct mcounts *c = ctx;
	uint64_t k = c->next_req, r[1] = { k };
	size_t n = msize(c, k), rn = mmax(c, k) - n;
	uint8_t out[2048];

	(void)ep;
	if (!mcheck_k(m, k, n))
		c->bad++;
	c->next_req = k + 1;
	c->reqs++;
	for (size_t i = 0; i < rn; i++)
		out[i] = mbyte(k, rn, i);
	if (uam_reply_medium(m, H_MREP, r, mnargs(k), out, rn))
		c->bad++;
}

static void h_mrep(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct mcounts *c = ctx;
	uint64_t k = c->next_rep;

	(void)ep;
	if (!mcheck_k(m, k, mmax(c, k) - msize(c, k)))
		c->bad++;
	c->next_rep = k + 1;
	c->reps++;
}

/* Medium requests and replies of every size at 10% loss each way plus 5%
 * duplication and 5% reordering: each once, in order, intact. */
static void test_medium_loss_dup_reorder(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	struct mcounts c = { 0 };
	struct pair *p;
	uint64_t n, sent = 0, t0;
	uint32_t bufs_a, bufs_b, kept_peak = 0;
	uint8_t buf[2048];

	NEED_PAIR(*state);
	o.inject.dup_ppm = 50000;
	o.inject.reorder_ppm = 50000;
	o.inject.seed = 99;
	p = pair_new(&o);
	bufs_a = send_buffers(p->ua);
	bufs_b = send_buffers(p->ub);
	c.max[0] = uam_ep__medium_max_args(p->a, 0);
	c.max[1] = uam_ep__medium_max_args(p->a, 1);
	/* MTU 1500: 1472 bytes with no args, in one frame */
	assert_int_equal(c.max[0], 1472);
	assert_int_equal(c.max[1], 1464);
	/* k = 2j + a: 14j + 7a modulo 1473 = 3 * 491 and 1465 = 5 * 293,
	 * both coprime with 14: every size with each number of args */
	c.step = 7;
	n = n_requests / 4 > 4 * (c.max[0] + 1) ? n_requests / 4 : 4 * (c.max[0] + 1);
	uam_ep__set_handler(p->b, H_MREQ, h_mreq, &c);
	uam_ep__set_handler(p->a, H_MREP, h_mrep, &c);
	set_loss(if_a, 100000);
	set_loss(if_b, 100000);
	t0 = now_ms();
	while (c.reps < n && now_ms() - t0 < 60000) {
		while (sent < n) {
			size_t len = msize(&c, sent);
			uint64_t a[1] = { sent };
			int r;

			for (size_t i = 0; i < len; i++)
				buf[i] = mbyte(sent, len, i);
			r = uam_request_medium(p->ab, H_MREQ, a, mnargs(sent), buf, len);
			if (r == -EAGAIN)
				break;
			assert_true(r >= 0);
			sent++;
		}
		if (p->a->kept > kept_peak)
			kept_peak = p->a->kept;
		pump(p);
	}
	print_message("%llu medium requests (0..%zu bytes with no arg, 0..%zu with one) in %llu ms; "
		      "kept buffers: up to %u of %u\n",
		      (unsigned long long)n, c.max[0], c.max[1], (unsigned long long)(now_ms() - t0),
		      kept_peak, p->a->kept_max);
	expect_exactly(p, n, &c.reqs, &c.reps, &c.bad);
	assert_true(injected(if_a) > n / 50);
	/* payloads went out in kept segment buffers, and every one came
	 * back to the pool once its channel closed */
	assert_true(kept_peak > 0);
	uam_chan__close(p->ab);
	uam_chan__close(p->ba);
	p->ab = p->ba = NULL;
	assert_int_equal(p->a->kept, 0);
	assert_int_equal(p->b->kept, 0);
	assert_int_equal(send_buffers(p->ua), bufs_a);
	assert_int_equal(send_buffers(p->ub), bufs_b);
	pair_free(p);
}

/* ---- Bulk --------------------------------------------------------------- */

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* Wait for op on a while polling b too (one process drives both ends). */
static int op_wait2(struct pair *p, int op, uint64_t limit_ms)
{
	uint64_t t0 = now_ms();
	int r;

	for (;;) {
		uam_poll(p->b);
		r = uam_op__wait(p->a, op, 0);
		if (r != -ETIME)
			return r;
		if (now_ms() - t0 > limit_ms)
			return -ETIME;
	}
}

static void test_bulk_64m_loss(void **state)
{
	size_t n = 64 * MIB;
	uint8_t *src, *dst, *back;
	struct counts c = { 0 };
	uint64_t args[1] = { 42 }, t0;
	struct pair *p;
	int op;

	NEED_PAIR(*state);
	src = malloc(n);
	dst = calloc(1, n);
	back = calloc(1, n);
	assert_non_null(src);
	assert_non_null(dst);
	assert_non_null(back);
	for (size_t i = 0; i < n / 8; i++)
		((uint64_t *)src)[i] = i * 0x9E3779B97F4A7C15ULL;
	p = pair_new(NULL);
	set_handlers(p, &c);
	set_loss(if_a, 50000);
	set_loss(if_b, 50000);
	assert_int_equal(uam_region__register(p->b, 1, dst, n, UAM_REGION_WRITE | UAM_REGION_READ), 0);
	assert_int_equal(uam_region__register(p->a, 2, back, n, UAM_REGION_WRITE), 0);

	t0 = now_ms();
	op = uam_store(p->ab, src, n, 1, 0, H_STORED, args, 1, NULL, NULL);
	assert_true(op > 0);
	assert_int_equal(op_wait2(p, op, 60000), 0);
	print_message("store 64 MiB at 5%% loss: %llu ms\n", (unsigned long long)(now_ms() - t0));
	assert_int_equal(c.stores, 1);
	assert_true(fnv(dst, n) == fnv(src, n));

	t0 = now_ms();
	op = uam_get(p->ab, 1, 0, n, 2, 0, NULL, NULL);
	assert_true(op > 0);
	assert_int_equal(op_wait2(p, op, 60000), 0);
	print_message("get 64 MiB at 5%% loss: %llu ms\n", (unsigned long long)(now_ms() - t0));
	assert_true(fnv(back, n) == fnv(src, n));
	print_stats("a", p->a);
	print_stats("b", p->b);
	assert_true(injected(if_a) + injected(if_b) > 1000);
	pair_free(p);
	free(src);
	free(dst);
	free(back);
}

/* ---- Flow control ------------------------------------------------------- */

static void test_receiver_stalls(void **state)
{
	struct counts c = { 0 };
	struct unet_endpoint_stats us;
	struct uam_stats s;
	uint64_t sent = 0, t0;
	struct pair *p;
	int r;

	NEED_PAIR(*state);
	p = pair_new(NULL);
	set_handlers(p, &c);
	/* b does not poll for a second while a keeps sending */
	t0 = now_ms();
	while (now_ms() - t0 < 1000) {
		uint64_t a[2] = { sent, ~sent };

		r = uam_request(p->ab, H_REQ, a, 2);
		if (r >= 0)
			sent++;
		else
			assert_int_equal(r, -EAGAIN);
		uam_wait(p->a, 1);
	}
	uam_ep__stats(p->a, &s);
	print_message("sent %llu while the receiver slept; stalls %llu, timeouts %llu\n",
		      (unsigned long long)sent, (unsigned long long)s.credit_stalls,
		      (unsigned long long)s.timeouts);
	assert_true(s.credit_stalls >= 1);
	assert_int_equal(c.reqs, 0);
	assert_true(sent >= 64 && sent <= 64 + 1024);
	assert_int_equal(uam_chan__error(p->ab), 0);
	/* b comes back: everything arrives, in order, nothing was lost */
	t0 = now_ms();
	while (c.reps < sent && now_ms() - t0 < 10000) {
		uam_poll(p->b);
		uam_poll(p->a);
	}
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.reqs, sent);
	assert_int_equal(c.reps, sent);
	assert_int_equal(unet_endpoint__stats(p->ub, &us), 0);
	assert_int_equal(us.rx_ring_full, 0);
	assert_int_equal(us.rx_fill_empty, 0);
	pair_free(p);
}

/* ---- A peer killed mid-transfer ----------------------------------------- */

static void child_serve(int ready_fd)
{
	uint8_t ma[6];
	struct unet_endpoint *ub;
	struct unet_channel *cba;
	struct uam_ep *b;
	uint8_t *dst = calloc(1, 8 * MIB);
	uint64_t t0 = now_ms();

	if (!dst || read_mac(if_a, ma))
		_exit(2);
	{
		UNET_OPTS_INIT(unet_endpoint_opts, o);

		o.mode = mode;
		ub = unet_endpoint__create(if_b, &o);
	}
	if (!ub || !(cba = unet_channel__open(ub, TAG_B, ma, TAG_A, NULL)) ||
	    !(b = uam_ep__create(ub, NULL)) || !uam_chan__open(b, cba) ||
	    uam_region__register(b, 1, dst, 8 * MIB, UAM_REGION_WRITE))
		_exit(3);
	if (write(ready_fd, "r", 1) != 1)
		_exit(4);
	while (now_ms() - t0 < 30000) /* bounded: the parent kills us first */
		uam_wait(b, 10);
	_exit(5);
}

static void test_peer_killed(void **state)
{
	struct unet_endpoint *ua;
	struct unet_channel *cab;
	struct uam_ep *a;
	struct uam_chan *ab;
	uint8_t mb[6], *src;
	uint64_t t0, t_kill, elapsed;
	int fds[2], op, r, st, stores = 0;
	struct uam_msg reply;
	pid_t pid;
	char ch;

	NEED_PAIR(*state);
	src = calloc(1, 8 * MIB);
	assert_non_null(src);
	assert_int_equal(read_mac(if_b, mb), 0);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child_serve(fds[1]);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &ch, 1), 1);
	close(fds[0]);
	ua = ep_new(if_a);
	cab = unet_channel__open(ua, TAG_A, mb, TAG_B, NULL);
	assert_non_null(cab);
	a = uam_ep__create(ua, NULL);
	assert_non_null(a);
	ab = uam_chan__open(a, cab);
	assert_non_null(ab);

	/* stores, one after the other; the peer dies after 300 ms */
	t0 = now_ms();
	t_kill = 0;
	for (;;) {
		op = uam_store(ab, src, 8 * MIB, 1, 0, 0, NULL, 0, NULL, NULL);
		if (op < 0) {
			r = op;
			break;
		}
		while ((r = uam_op__wait(a, op, 10)) == -ETIME) {
			if (!t_kill && now_ms() - t0 > 300) {
				kill(pid, SIGKILL);
				t_kill = now_ms();
			}
			assert_true(now_ms() - t0 < 10000);
		}
		if (r < 0)
			break;
		stores++;
	}
	elapsed = now_ms() - t_kill;
	print_message("%d stores done, then %s after %llu ms\n", stores, strerror(-r),
		      (unsigned long long)elapsed);
	assert_true(t_kill != 0);
	assert_true(stores >= 1);
	assert_int_equal(r, -ETIMEDOUT);
	/* documented bound: timeout_ms (2000) after the last progress */
	assert_true(elapsed <= 2000 + 300);
	assert_int_equal(uam_chan__error(ab), -ETIMEDOUT);
	/* and every new call fails at once */
	assert_int_equal(uam_request(ab, 1, NULL, 0), -ETIMEDOUT);
	assert_int_equal(uam_store(ab, src, 1, 1, 0, 0, NULL, 0, NULL, NULL), -ETIMEDOUT);
	assert_int_equal(uam_call(ab, 1, NULL, 0, &reply, 1000), -ETIMEDOUT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	uam_ep__destroy(a);
	unet_endpoint__destroy(ua);
	free(src);
}

/*
 * Sent frames are reaped in bulk (uam.c, uam_poll), not at every poll:
 * once the traffic stops, a few empty polls give every one back (the
 * send queue is empty), and a send that finds the pool dry gets back
 * what has completed (unet_endpoint__buf_alloc reaps) instead of
 * failing: b's 3 requests here (within the credit a peer has before it
 * hears from us), with only 2 send buffers free and no poll between
 * them; a wait reaps before it sleeps.
 */
static void test_reaping(void **state)
{
	static uint64_t held[HELD_MAX];
	struct counts c = { 0 };
	struct uam_stats st, st2;
	struct pair *p;
	uint32_t n;

	NEED_PAIR(*state);
	p = pair_new(NULL);
	set_handlers(p, &c);
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t a[2] = { i, ~i };
		uint64_t t0 = now_ms();

		assert_true(uam_request(p->ab, H_REQ, a, 2) >= 0);
		while (c.reps < i + 1 && now_ms() - t0 < 2000)
			pump(p);
		assert_int_equal(c.reps, i + 1);
	}
	for (int i = 0; i < 4 * 8; i++) /* IDLE_TICK empty polls, four times over */
		pump(p);
	assert_int_equal(unet_endpoint__tx_pending(p->ua), 0);
	assert_int_equal(unet_endpoint__tx_pending(p->ub), 0);

	n = take_send_buffers(p->ub, held);
	assert_true(n > 2);
	assert_int_equal(unet_endpoint__buf_free(p->ub, held[--n]), 0);
	assert_int_equal(unet_endpoint__buf_free(p->ub, held[--n]), 0);
	uam_ep__set_handler(p->a, H_REQ, h_req, &c);
	uam_ep__set_handler(p->b, H_REP, h_rep, &c);
	uam_chan__stats(p->ba, &st);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t a[2] = { 200 + i, ~(200 + i) };

		assert_true(uam_request(p->ba, H_REQ, a, 2) >= 0);
	}
	uam_chan__stats(p->ba, &st2);
	print_message("3 requests with 2 send buffers free: %llu frames sent\n",
		      (unsigned long long)(st2.tx_frames - st.tx_frames));
	assert_int_equal(st2.tx_frames - st.tx_frames, 3);
	while (n)
		assert_int_equal(unet_endpoint__buf_free(p->ub, held[--n]), 0);
	for (int i = 0; i < 200 && c.reps < 203; i++)
		pump(p);
	assert_int_equal(c.reps, 203);
	/* A wait that would sleep reaps first (its sleep is not cut to 1 ms
	 * for frames that have in fact left). */
	assert_true(uam_request(p->ab, H_REQ, (uint64_t[]){ 203, ~203ull }, 2) >= 0);
	assert_int_equal(uam_wait(p->a, 2), 0);
	assert_int_equal(unet_endpoint__tx_pending(p->ua), 0);
	for (int i = 0; i < 200 && c.reps < 204; i++)
		pump(p);
	assert_int_equal(c.reqs, 204);
	assert_int_equal(c.reps, 204);
	assert_int_equal(c.bad, 0);
	pair_free(p);
}

/* Medium requests whose frames the send queue refuses (the endpoint's
 * link went down): their kept buffers stay UAM's (a refused buffer freed
 * at the flush would be freed again, or read for a retransmission after
 * another frame took it), and every one is given back once the channel
 * closes. */
static void test_kept_refused(void **state)
{
	struct mcounts c = { 0 };
	uint8_t buf[1000];
	char cmd[128];
	struct pair *p;
	int r;

	NEED_PAIR(*state);
	p = pair_new(NULL);
	memset(buf, 0x6b, sizeof(buf));
	uam_ep__set_handler(p->b, H_MREQ, h_mreq, &c);
	snprintf(cmd, sizeof(cmd), "ip link set dev %s down", if_a);
	assert_int_equal(system(cmd), 0);
	/* The first kick finds the link down (its frame was queued, and
	 * stays on the ring); the endpoint refuses every send after it. */
	for (int i = 0; i < 4; i++) {
		uam_ep__cork(p->a);
		r = uam_request_medium(p->ab, H_MREQ, NULL, 0, buf, sizeof(buf));
		assert_true(r >= 0);
		uam_ep__uncork(p->a);
	}
	print_message("link down: %llu frames refused, %u kept buffers out\n",
		      (unsigned long long)p->a->tx_lost, p->a->kept);
	assert_true(p->a->tx_lost >= 2);
	assert_int_equal(p->a->kept, 4);
	uam_chan__close(p->ab);
	p->ab = NULL;
	assert_int_equal(p->a->kept, 0);
	snprintf(cmd, sizeof(cmd), "ip link set dev %s up", if_a);
	assert_int_equal(system(cmd), 0);
	pair_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_requests_loss, setup),
		cmocka_unit_test_setup(test_requests_loss_dup_reorder, setup),
		cmocka_unit_test_setup(test_medium_loss_dup_reorder, setup),
		cmocka_unit_test_setup(test_bulk_64m_loss, setup),
		cmocka_unit_test_setup(test_receiver_stalls, setup),
		cmocka_unit_test_setup(test_peer_killed, setup),
		cmocka_unit_test_setup(test_kept_refused, setup),
		cmocka_unit_test_setup(test_reaping, setup),
	};
	const char *m = getenv("UNET_TEST_XDP_MODE"), *n = getenv("UNET_UAM_REQUESTS");

	if_a = getenv("UNET_TEST_IFACE_A");
	if_b = getenv("UNET_TEST_IFACE_B");
	if (m && !strcmp(m, "native"))
		mode = UNET_XDP_MODE_NATIVE;
	if (n && atoll(n) > 0)
		n_requests = (uint64_t)atoll(n);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
