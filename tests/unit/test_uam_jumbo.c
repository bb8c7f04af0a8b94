/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_uam_jumbo.c - U-Net Active Messages at a jumbo MTU, over real
 * endpoints: the two ends of a veth pair in one namespace, driven by one
 * process (as test_uam).  The test sets the pair's MTU itself before each
 * case: 9000 on both ends (medium messages and stores/gets of the sizes
 * around every frame and piece boundary, byte for byte, both ways, in
 * frames of max_payload), then 9000 on one end and 1500 on the other (the
 * transfers fall back to 1492-byte frames, a medium message too large
 * for the small side is refused with EMSGSIZE, or, sent before the small
 * side said so, fails its channel with ETIMEDOUT instead of hanging).
 *
 * Needs root and the pair: UNET_TEST_IFACE_A / UNET_TEST_IFACE_B (the
 * integration suite's "uam_jumbo" test makes them), UNET_PIN_ROOT and
 * UNET_TEST_XDP_MODE.  Without them, or on a kernel without AF_XDP
 * multi-buffer, every test is skipped, never passed.
 */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <unet-xdp/uam.h>

#include "uam/uam_impl.h" /* the channel's frame size: struct uam_chan */

#define TAG_A 311
#define TAG_B 412
#define REGION 1
#define REGION_BACK 2
#define REGION_LEN (2u * 1024 * 1024)
#define LIMIT_MS 20000

static const char *if_a, *if_b;
static enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;

struct pair {
	struct unet_endpoint *ua, *ub;
	struct uam_ep *a, *b;
	struct uam_chan *ab, *ba;
};
/* The pair a test has open: a failed test's is closed by teardown, so
 * the next one gets the interfaces. */
static struct pair *open_pair;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void set_mtu(const char *ifname, int mtu)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_mtu = mtu;
	if (ioctl(fd, SIOCSIFMTU, &ifr))
		print_error("MTU %d on %s: %s\n", mtu, ifname, strerror(errno));
	close(fd);
	assert_int_equal(ifr.ifr_mtu, mtu);
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

/* The pair at MTUs mtu_a / mtu_b; NULL (the test skips) if an end that
 * wants more than a chunk got no multi-buffer from the kernel. */
static struct pair *pair_new(int mtu_a, int mtu_b, const struct uam_ep_opts *o)
{
	struct pair *p = calloc(1, sizeof(*p));
	struct unet_endpoint_info ia, ib;
	struct unet_channel *cab, *cba;
	uint8_t ma[6], mb[6];

	assert_non_null(p);
	open_pair = p;
	set_mtu(if_a, mtu_a);
	set_mtu(if_b, mtu_b);
	p->ua = ep_new(if_a);
	p->ub = ep_new(if_b);
	assert_int_equal(unet_endpoint__info(p->ua, &ia), 0);
	assert_int_equal(unet_endpoint__info(p->ub, &ib), 0);
	if ((mtu_a > 1500 && !ia.multi_buffer) || (mtu_b > 1500 && !ib.multi_buffer)) {
		print_message("no AF_XDP multi-buffer on this kernel: skipped\n");
		unet_endpoint__destroy(p->ua);
		unet_endpoint__destroy(p->ub);
		free(p);
		open_pair = NULL;
		return NULL;
	}
	assert_int_equal(ia.max_payload, (uint32_t)mtu_a - 8);
	assert_int_equal(ib.max_payload, (uint32_t)mtu_b - 8);
	assert_int_equal(read_mac(if_a, ma), 0);
	assert_int_equal(read_mac(if_b, mb), 0);
	cab = unet_channel__open(p->ua, TAG_A, mb, TAG_B, NULL);
	cba = unet_channel__open(p->ub, TAG_B, ma, TAG_A, NULL);
	assert_non_null(cab);
	assert_non_null(cba);
	p->a = uam_ep__create(p->ua, o);
	p->b = uam_ep__create(p->ub, o);
	assert_non_null(p->a);
	assert_non_null(p->b);
	p->ab = uam_chan__open(p->a, cab);
	p->ba = uam_chan__open(p->b, cba);
	assert_non_null(p->ab);
	assert_non_null(p->ba);
	return p;
}

static void pair_free(struct pair *p)
{
	if (!p)
		return;
	open_pair = NULL;
	uam_ep__destroy(p->a);
	uam_ep__destroy(p->b);
	unet_endpoint__destroy(p->ua);
	unet_endpoint__destroy(p->ub);
	free(p);
	set_mtu(if_a, 1500);
	set_mtu(if_b, 1500);
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

static int teardown(void **state)
{
	(void)state;
	pair_free(open_pair);
	return 0;
}

#define NEED(x)                 \
	do {                    \
		if (!(x))       \
			skip(); \
	} while (0)

/* One round of progress on both ends. */
static void pump(struct pair *p)
{
	assert_true(uam_poll(p->a) >= 0);
	assert_true(uam_poll(p->b) >= 0);
}

/* The byte at i of a message or transfer of len bytes, seeded. */
static uint8_t pattern(size_t i, size_t len, uint32_t seed)
{
	return (uint8_t)((i * 131 + len * 7 + seed) ^ (i >> 8));
}

static void fill(uint8_t *b, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(i, len, seed);
}

static bool intact(const uint8_t *b, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pattern(i, len, seed))
			return false;
	return true;
}

/* ---- Medium messages ---------------------------------------------------- */

enum { H_ECHO = 1, H_BACK = 2, H_STORED = 3 };

struct echo {
	size_t want; /* length of the reply awaited */
	uint64_t got, bad;
};

/* The request's payload comes back in a medium reply, as it came. */
static void h_echo(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct echo *e = ctx;

	(void)ep;
	if (m->nargs != 1 || m->data_len != m->args[0] || !intact(m->data, m->data_len, 1))
		e->bad++;
	if (uam_reply_medium(m, H_BACK, m->args, 1, m->data, m->data_len))
		e->bad++;
}

static void h_back(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	struct echo *e = ctx;

	(void)ep;
	if (m->nargs != 1 || m->data_len != e->want || !intact(m->data, m->data_len, 1))
		e->bad++;
	e->got++;
}

/* Every size of [lo, hi] from the requester's side (ch on rq) to the
 * other (rs) and back, one at a time, byte for byte. */
static void echo_sizes(struct pair *p, struct uam_ep *rq, struct uam_ep *rs, struct uam_chan *ch,
		       size_t lo, size_t hi)
{
	static uint8_t buf[9216];
	struct echo e = { 0 };

	uam_ep__set_handler(rs, H_ECHO, h_echo, &e);
	uam_ep__set_handler(rq, H_BACK, h_back, &e);
	for (size_t n = lo; n <= hi; n++) {
		uint64_t a[1] = { n }, want = e.got + 1, t0 = now_ms();

		fill(buf, n, 1);
		e.want = n;
		assert_true(uam_request_medium(ch, H_ECHO, a, 1, buf, n) >= 0);
		while (e.got < want && now_ms() - t0 < LIMIT_MS)
			pump(p);
		if (e.got != want)
			print_error("no echo of %zu bytes\n", n);
		assert_int_equal(e.got, want);
	}
	assert_int_equal(e.bad, 0);
}

/* Medium messages at MTU 9000: the largest is max_payload less the
 * 20-byte header and the args; every size around the base frame (1492),
 * a send buffer (1720 with 2048-byte chunks: past it the frame goes as a
 * chain), the second and third piece, and the top, both ways. */
static void test_medium_sizes(void **state)
{
	static const size_t win[][2] = { { 1, 8 },	    { 1400, 1480 }, { 1700, 1800 },
					 { 3560, 3600 }, { 5350, 5390 }, { 8900, 8964 } };
	struct pair *p;

	NEED(*state);
	p = pair_new(9000, 9000, NULL);
	NEED(p);
	assert_int_equal(uam_ep__medium_max_args(p->a, 0), 8992 - UAM_C_HDR_LEN);
	assert_int_equal(uam_ep__medium_max_args(p->a, 1), 8964);
	for (size_t w = 0; w < sizeof(win) / sizeof(win[0]); w++) {
		echo_sizes(p, p->a, p->b, p->ab, win[w][0], win[w][1]);
		echo_sizes(p, p->b, p->a, p->ba, win[w][0], win[w][1]);
	}
	/* one more than a frame holds */
	assert_int_equal(uam_request_medium(p->ab, H_ECHO, (uint64_t[]){ 0 }, 1, "", 8965),
			 -EMSGSIZE);
	pair_free(p);
}

/* ---- Stores and gets ----------------------------------------------------- */

struct ops {
	uint64_t done, bad;
};

static void op_cb(struct uam_ep *ep, int op, int status, void *ctx)
{
	struct ops *o = ctx;

	(void)ep;
	(void)op;
	if (status)
		o->bad++;
	o->done++;
}

static void h_stored(struct uam_ep *ep, const struct uam_msg *m, void *ctx)
{
	(void)ep;
	(void)m;
	(void)ctx;
}

/* A store of n bytes from from's channel ch into the peer's region at
 * off, then a get of them back into from's own region: both byte for
 * byte. */
static void store_get(struct pair *p, struct uam_chan *ch, uint8_t *src, uint8_t *peer_region,
		      uint8_t *back, size_t n, uint32_t seed)
{
	struct ops o = { 0 };
	uint64_t t0 = now_ms();

	fill(src, n, seed);
	memset(peer_region, 0, n + 1);
	memset(back, 0, n + 1);
	assert_true(uam_store(ch, src, n, REGION, 0, H_STORED, NULL, 0, op_cb, &o) > 0);
	while (o.done < 1 && now_ms() - t0 < LIMIT_MS)
		pump(p);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.bad, 0);
	if (!intact(peer_region, n, seed) || peer_region[n])
		fail_msg("store of %zu bytes arrived wrong", n);
	assert_true(uam_get(ch, REGION, 0, n, REGION_BACK, 0, op_cb, &o) > 0);
	while (o.done < 2 && now_ms() - t0 < LIMIT_MS)
		pump(p);
	assert_int_equal(o.done, 2);
	assert_int_equal(o.bad, 0);
	if (!intact(back, n, seed) || back[n])
		fail_msg("get of %zu bytes arrived wrong", n);
}

struct regions {
	uint8_t *src, *ra, *rb, *ba, *bb; /* sources; a's, b's region; their get targets */
};

static void regions_new(struct pair *p, struct regions *r)
{
	r->src = malloc(REGION_LEN);
	r->ra = malloc(REGION_LEN + 1);
	r->rb = malloc(REGION_LEN + 1);
	r->ba = malloc(REGION_LEN + 1);
	r->bb = malloc(REGION_LEN + 1);
	assert_true(r->src && r->ra && r->rb && r->ba && r->bb);
	assert_int_equal(uam_region__register(p->a, REGION, r->ra, REGION_LEN + 1,
					      UAM_REGION_WRITE | UAM_REGION_READ),
			 0);
	assert_int_equal(uam_region__register(p->b, REGION, r->rb, REGION_LEN + 1,
					      UAM_REGION_WRITE | UAM_REGION_READ),
			 0);
	assert_int_equal(uam_region__register(p->a, REGION_BACK, r->ba, REGION_LEN + 1,
					      UAM_REGION_WRITE),
			 0);
	assert_int_equal(uam_region__register(p->b, REGION_BACK, r->bb, REGION_LEN + 1,
					      UAM_REGION_WRITE),
			 0);
	uam_ep__set_handler(p->a, H_STORED, h_stored, NULL);
	uam_ep__set_handler(p->b, H_STORED, h_stored, NULL);
}

static void regions_free(struct regions *r)
{
	free(r->src);
	free(r->ra);
	free(r->rb);
	free(r->ba);
	free(r->bb);
}

/* Sizes around the fragments' edges: a full-header fragment carries
 * frame - 64 bytes, a compact one frame - 24, for the base frame (1492,
 * before the peer said more) and the jumbo one (8992), up to three of
 * them, and larger transfers. */
static const size_t bulk_sizes[] = { 1,	    1427,   1428,   1429,   1467,   1468,
				     1469,   8927,   8928,   8929,   8967,   8968,
				     8969,   17895,  17896,  17897,  26863,  26864,
				     26865,  100003, 1048576 + 7 };

/* Both ways at MTU 9000, byte for byte; then a 1 MiB store goes in frames
 * of 8992 bytes (fewer than 1 MiB / 4000 frames: at 1492 it would take
 * more than 700). */
static void test_bulk_sizes(void **state)
{
	struct regions r;
	struct uam_stats s0, s1;
	struct pair *p;
	struct ops o = { 0 };
	uint64_t t0;

	NEED(*state);
	p = pair_new(9000, 9000, NULL);
	NEED(p);
	regions_new(p, &r);
	for (size_t i = 0; i < sizeof(bulk_sizes) / sizeof(bulk_sizes[0]); i++) {
		store_get(p, p->ab, r.src, r.rb, r.ba, bulk_sizes[i], (uint32_t)i);
		store_get(p, p->ba, r.src, r.ra, r.bb, bulk_sizes[i], (uint32_t)i + 100);
	}
	/* each side heard the other take 8992-byte frames */
	assert_true(p->ab->frame_said && p->ba->frame_said);
	assert_int_equal(p->ab->frame, 8992);
	assert_int_equal(p->ba->frame, 8992);
	assert_int_equal(uam_chan__medium_max_args(p->ab, 0), 8972);
	assert_int_equal(uam_chan__stats(p->ab, &s0), 0);
	fill(r.src, REGION_LEN, 7);
	t0 = now_ms();
	assert_true(uam_store(p->ab, r.src, 1u << 20, REGION, 0, H_STORED, NULL, 0, op_cb, &o) > 0);
	while (o.done < 1 && now_ms() - t0 < LIMIT_MS)
		pump(p);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.bad, 0);
	assert_int_equal(uam_chan__stats(p->ab, &s1), 0);
	print_message("1 MiB store: %llu frames, %llu repeats\n",
		      (unsigned long long)(s1.tx_frames - s0.tx_frames),
		      (unsigned long long)(s1.retransmits - s0.retransmits));
	assert_true(s1.tx_frames - s0.tx_frames - (s1.retransmits - s0.retransmits) <
		    (1u << 20) / 4000);
	assert_memory_equal(r.rb, r.src, 1u << 20);
	regions_free(&r);
	pair_free(p);
}

/* ---- Links of different MTUs -------------------------------------------- */

/* a at MTU 9000, b at 1500: transfers both ways in frames b takes, once
 * b's acknowledgements said so, a's frames to b stay at 1492 bytes; a
 * medium message larger than b takes is refused (EMSGSIZE). */
static void test_mixed_mtu(void **state)
{
	static const size_t sizes[] = { 1, 1428, 1469, 8929, 100003 };
	struct regions r;
	struct pair *p;

	NEED(*state);
	p = pair_new(9000, 1500, NULL);
	NEED(p);
	regions_new(p, &r);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		store_get(p, p->ab, r.src, r.rb, r.ba, sizes[i], (uint32_t)i);
		store_get(p, p->ba, r.src, r.ra, r.bb, sizes[i], (uint32_t)i + 100);
	}
	assert_true(p->ab->frame_said);
	assert_int_equal(p->ab->frame, 1492);
	assert_int_equal(p->ba->frame, 1492);
	assert_int_equal(uam_chan__medium_max_args(p->ab, 0), 1472);
	assert_int_equal(uam_request_medium(p->ab, H_ECHO, NULL, 0, r.src, 1473), -EMSGSIZE);
	/* what b takes still goes */
	echo_sizes(p, p->a, p->b, p->ab, 1460, 1464);
	regions_free(&r);
	pair_free(p);
}

/* The same link, a medium message too large for b sent before b said
 * anything: the link drops it, and the channel fails with ETIMEDOUT
 * within its timeout, nothing hangs. */
static void test_mixed_mtu_first_medium(void **state)
{
	UNET_OPTS_INIT(uam_ep_opts, o);
	static uint8_t buf[5000];
	struct echo e = { 0 };
	struct pair *p;
	uint64_t t0;

	NEED(*state);
	o.timeout_ms = 300;
	p = pair_new(9000, 1500, &o);
	NEED(p);
	uam_ep__set_handler(p->b, H_ECHO, h_echo, &e);
	assert_true(uam_request_medium(p->ab, H_ECHO, (uint64_t[]){ 5000 }, 1, buf, 5000) >= 0);
	t0 = now_ms();
	while (!uam_chan__error(p->ab) && now_ms() - t0 < LIMIT_MS) {
		assert_true(uam_poll(p->a) >= 0);
		assert_true(uam_poll(p->b) >= 0);
	}
	assert_int_equal(uam_chan__error(p->ab), -ETIMEDOUT);
	assert_int_equal(e.got, 0);
	pair_free(p);
}

int main(void)
{
	const char *m = getenv("UNET_TEST_XDP_MODE");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_medium_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bulk_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_mtu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_mtu_first_medium, setup, teardown),
	};

	if_a = getenv("UNET_TEST_IFACE_A");
	if_b = getenv("UNET_TEST_IFACE_B");
	if (m && !strcmp(m, "native"))
		mode = UNET_XDP_MODE_NATIVE;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
