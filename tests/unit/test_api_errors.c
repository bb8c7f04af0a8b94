/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The public API's answers to invalid arguments, on a live interface.
 *
 * Needs root and an interface: UNET_TEST_IFACE names it (the integration
 * suite passes its veth, with UNET_PIN_ROOT pointing at a private bpffs and
 * UNET_TEST_PEER_MAC at the other end).  Without UNET_TEST_IFACE every
 * test that needs the interface is skipped, never passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <unet-xdp/unet.h>
#include <unet-xdp/unet_tcp.h>
#include <unet-xdp/unet_udp.h>

#include "core/layer.h" /* unet_layer_attach: to fill the layer table */

static const char *ifname;
static uint8_t peer_mac[6] = { 0x02, 0, 0x5e, 0, 0x53, 0x01 };

/* Skip unless an interface was given. */
#define NEED_IFACE()                                                                     \
	do {                                                                             \
		if (!ifname) {                                                           \
			print_message("UNET_TEST_IFACE not set: skipped\n");            \
			skip();                                                          \
		}                                                                        \
	} while (0)

/* An endpoint on the queues in mask (0: all), or NULL with errno. */
static struct unet_endpoint *ep_try(uint32_t mask)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);

	o.mode = UNET_XDP_MODE_SKB; /* if nobody attached the program yet */
	o.segment_size = 1 << 21;
	o.queue_mask = mask;
	return unet_endpoint__create(ifname, &o);
}

/* An endpoint on every queue. */
static struct unet_endpoint *ep_create(void)
{
	struct unet_endpoint *ep = ep_try(0);

	if (!ep)
		print_error("unet_endpoint__create(%s): %s\n", ifname, strerror(errno));
	assert_non_null(ep);
	return ep;
}

static uint64_t tx_msgs(struct unet_endpoint *ep)
{
	struct unet_endpoint_stats st;

	assert_int_equal(unet_endpoint__stats(ep, &st), 0);
	return st.tx_msgs;
}

/* Let anything queued leave, then read tx_msgs. */
static uint64_t settled_tx_msgs(struct unet_endpoint *ep)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	unet_endpoint__complete(ep);
	nanosleep(&ts, NULL);
	unet_endpoint__complete(ep);
	return tx_msgs(ep);
}

static void test_create_null_ifname(void **state)
{
	(void)state;
	errno = 0;
	assert_null(unet_endpoint__create(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(unet_iface__attach(NULL, UNET_XDP_MODE_AUTO, NULL), -EINVAL);
}

static void test_create_unknown_iface(void **state)
{
	(void)state;
	NEED_IFACE();
	errno = 0;
	assert_null(unet_endpoint__create("unetnosuch0", NULL));
	assert_int_equal(errno, ENODEV);
	errno = 0;
	assert_null(unet_iface__open("unetnosuch0", NULL));
	assert_int_equal(errno, ENODEV);
}

static void test_create_bad_options(void **state)
{
	static const struct {
		uint32_t frame_size, rx_size, tx_size, fill_size, comp_size;
	} bad[] = {
		{ 3000, 0, 0, 0, 0 },	 /* frame size not 2048/4096 */
		{ 1024, 0, 0, 0, 0 },
		{ 0, 1000, 0, 0, 0 },	 /* rings not a power of two */
		{ 0, 0, 1000, 0, 0 },
		{ 0, 0, 0, 3000, 0 },
		{ 0, 0, 0, 0, 100 },
	};
	size_t i;

	(void)state;
	NEED_IFACE();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		UNET_OPTS_INIT(unet_endpoint_opts, o);
		struct unet_endpoint *ep;

		o.mode = UNET_XDP_MODE_SKB;
		o.frame_size = bad[i].frame_size;
		o.rx_size = bad[i].rx_size;
		o.tx_size = bad[i].tx_size;
		o.fill_size = bad[i].fill_size;
		o.comp_size = bad[i].comp_size;
		errno = 0;
		ep = unet_endpoint__create(ifname, &o);
		if (ep)
			print_error("bad option set %zu accepted\n", i);
		unet_endpoint__destroy(ep);
		assert_null(ep);
		assert_int_equal(errno, EINVAL);
	}
}

static void test_channel_bad_args(void **state)
{
	struct unet_endpoint *ep;
	struct unet_channel *ch, *ch2;
	UNET_OPTS_INIT(unet_channel_opts, co);

	(void)state;
	NEED_IFACE();
	/* Queue 0 only, so a second endpoint can take queue 1. */
	ep = ep_try(1);
	if (!ep)
		print_error("unet_endpoint__create(%s, queue 0): %s\n", ifname, strerror(errno));
	assert_non_null(ep);
	errno = 0;
	assert_null(unet_channel__open(ep, 0, peer_mac, 1, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_channel__open(ep, 0, NULL, 1, NULL));
	assert_int_equal(errno, EINVAL);
	/* Tag 0 is reserved on the peer's side too. */
	errno = 0;
	assert_null(unet_channel__open(ep, 7001, peer_mac, 0, NULL));
	assert_int_equal(errno, EINVAL);
	co.tx_queue = 999;
	errno = 0;
	assert_null(unet_channel__open(ep, 7001, peer_mac, 1, &co));
	assert_int_equal(errno, EINVAL);

	ch = unet_channel__open(ep, 7001, peer_mac, 1, NULL);
	assert_non_null(ch);
	/* The same tag again, on this endpoint or on another one. */
	errno = 0;
	assert_null(unet_channel__open(ep, 7001, peer_mac, 2, NULL));
	assert_int_equal(errno, EADDRINUSE);
	{
		/* A second endpoint on the same queue: one UMEM per queue. */
		struct unet_endpoint *ep2 = ep_try(1);

		unet_endpoint__destroy(ep2);
		assert_null(ep2);
		assert_int_equal(errno, EBUSY);

		/* On another queue (when the device has two). */
		ep2 = ep_try(2);
		if (ep2) {
			errno = 0;
			ch2 = unet_channel__open(ep2, 7001, peer_mac, 3, NULL);
			unet_channel__close(ch2);
			assert_null(ch2);
			assert_int_equal(errno, EADDRINUSE);
			unet_endpoint__destroy(ep2);
		} else {
			print_message("one-queue device: tag in use across endpoints not checked\n");
			assert_int_equal(errno, EINVAL);
		}
	}
	errno = 0;
	assert_null(unet_channel__lookup(ep, 7002));
	assert_int_equal(errno, ENOENT);
	assert_ptr_equal(unet_channel__lookup(ep, 7001), ch);
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
}

static void test_send_sizes(void **state)
{
	struct unet_endpoint *ep;
	struct unet_endpoint_info info;
	struct unet_channel *ch;
	uint64_t buf, before;
	uint8_t *big;

	(void)state;
	NEED_IFACE();
	ep = ep_create();
	assert_int_equal(unet_endpoint__info(ep, &info), 0);
	assert_true(info.max_payload > 0);
	ch = unet_channel__open(ep, 7010, peer_mac, 7011, NULL);
	assert_non_null(ch);
	before = settled_tx_msgs(ep);

	buf = unet_endpoint__buf_alloc(ep);
	assert_true(buf != UNET_NO_BUF);
	assert_non_null(unet_endpoint__buf_payload(ep, buf));
	assert_int_equal(unet_channel__send(ch, buf, info.max_payload + 1), -EMSGSIZE);
	assert_int_equal(unet_channel__send(ch, buf, 0), -EMSGSIZE);
	/* The buffer is still ours: giving it back works. */
	assert_int_equal(unet_endpoint__buf_free(ep, buf), 0);

	big = calloc(1, info.max_payload + 1);
	assert_non_null(big);
	assert_int_equal(unet_channel__send_copy(ch, big, info.max_payload + 1), -EMSGSIZE);
	assert_int_equal(unet_channel__send_copy(ch, big, 0), -EMSGSIZE);
	free(big);
	assert_int_equal(settled_tx_msgs(ep), before);

	/* A good one does go out (the counter works). */
	assert_int_equal(unet_channel__send_copy(ch, "x", 1), 0);
	{
		int i;

		for (i = 0; i < 50 && settled_tx_msgs(ep) == before; i++)
			;
	}
	assert_int_equal(settled_tx_msgs(ep), before + 1);
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
}

static void test_batch_one_oversize(void **state)
{
	struct unet_endpoint *ep;
	struct unet_endpoint_info info;
	struct unet_channel *ch;
	struct unet_send_desc d[3];
	uint64_t before;
	int i;

	(void)state;
	NEED_IFACE();
	ep = ep_create();
	assert_int_equal(unet_endpoint__info(ep, &info), 0);
	ch = unet_channel__open(ep, 7020, peer_mac, 7021, NULL);
	assert_non_null(ch);
	before = settled_tx_msgs(ep);
	for (i = 0; i < 3; i++) {
		d[i].channel = ch;
		d[i].buf = unet_endpoint__buf_alloc(ep);
		assert_true(d[i].buf != UNET_NO_BUF);
		memset(unet_endpoint__buf_payload(ep, d[i].buf), 0x5a, 16);
		d[i].len = 16;
	}
	d[1].len = info.max_payload + 1;
	assert_int_equal(unet_endpoint__send_batch(ep, d, 3), -EMSGSIZE);
	d[1].len = 0;
	assert_int_equal(unet_endpoint__send_batch(ep, d, 3), -EMSGSIZE);
	assert_int_equal(settled_tx_msgs(ep), before);
	/* None was queued: all three are still ours. */
	for (i = 0; i < 3; i++)
		assert_int_equal(unet_endpoint__buf_free(ep, d[i].buf), 0);
	unet_channel__close(ch);
	unet_endpoint__destroy(ep);
}

static void test_release_bogus(void **state)
{
	struct unet_endpoint *ep;
	struct unet_recv_desc d;
	size_t seg_size = 0;

	(void)state;
	NEED_IFACE();
	ep = ep_create();
	assert_non_null(unet_endpoint__segment(ep, &seg_size));
	assert_true(seg_size > 0);
	memset(&d, 0, sizeof(d));
	d.buf = UNET_NO_BUF;
	assert_int_equal(unet_endpoint__release(ep, &d, 1), -EINVAL);
	d.buf = (uint64_t)seg_size + 4096;
	assert_int_equal(unet_endpoint__release(ep, &d, 1), -EINVAL);
	assert_int_equal(unet_endpoint__buf_free(ep, UNET_NO_BUF), -EINVAL);
	assert_int_equal(unet_endpoint__buf_free(ep, (uint64_t)seg_size * 2), -EINVAL);
	errno = 0;
	assert_null(unet_endpoint__buf_payload(ep, UNET_NO_BUF));
	assert_int_equal(errno, EINVAL);
	unet_endpoint__destroy(ep);
}

/* Layers that claim no frame, to fill an endpoint's layer table. */
static enum unet_layer_verdict idle_rx(void *st, uint16_t proto, uint8_t *frame, uint32_t len,
				       struct unet_recv_desc *desc)
{
	(void)st;
	(void)proto;
	(void)frame;
	(void)len;
	(void)desc;
	return UNET_LAYER_NOT_MINE;
}

static void idle_destroy(void *st)
{
	(void)st;
}

static const struct unet_layer idle_layers[UNET_MAX_LAYERS] = {
	[0 ... UNET_MAX_LAYERS - 1] = { .name = "idle", .rx = idle_rx, .destroy = idle_destroy },
};

/* With the endpoint's layer table full, TCP and UDP cannot attach their
 * state: NULL with errno ENOSPC, and what they set up before is undone
 * (TCP read its state after freeing it: the sanitizer build caught it). */
static void test_layer_table_full(void **state)
{
	uint32_t addr = htonl(0x0afe0001); /* 10.254.0.1, nobody's */
	struct unet_endpoint *ep;

	(void)state;
	NEED_IFACE();
	ep = ep_create();
	for (int i = 0; i < UNET_MAX_LAYERS; i++)
		assert_int_equal(unet_layer_attach(ep, &idle_layers[i], NULL), 0);
	errno = 0;
	assert_null(unet_tcp__listen(ep, addr, 7, NULL));
	assert_int_equal(errno, ENOSPC);
	errno = 0;
	assert_null(unet_udp__open(ep, addr, 7, NULL));
	assert_int_equal(errno, ENOSPC);
	unet_endpoint__destroy(ep);
}

/* Routable channels' argument errors (IPv4 and IPv6), and the channel
 * port kept from UDP sockets (the XDP program would never give them a
 * datagram). */
static void test_routable_channel_errors(void **state)
{
	uint32_t nobody = htonl(0x0afe0001); /* 10.254.0.1: in no neighbour table */
	struct unet_endpoint *ep;
	int port;

	(void)state;
	NEED_IFACE();
	ep = ep_create();
	errno = 0;
	assert_null(unet_channel__open_ipv4(ep, 5, nobody, 0, 6, NULL));
	assert_int_equal(errno, EHOSTUNREACH);
	errno = 0;
	assert_null(unet_channel__open_ipv4(ep, 0, nobody, 0, 6, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_channel__open_ipv4(ep, 5, nobody, 0, 0, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_channel__open_ipv4(ep, 5, 0, 0, 6, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_channel__open_ipv4(ep, 5, htonl(0xe0000001), 0, 6, NULL)); /* multicast */
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(unet_channel__open_ipv4(NULL, 5, nobody, 0, 6, NULL));
	assert_int_equal(errno, EINVAL);
	/* IPv6: no peer it could not be (before any question to the kernel) */
	{
		static const uint8_t bad[][16] = {
			{ 0 },						    /* :: */
			{ [15] = 1 },					    /* ::1 */
			{ 0xff, 0x02, [15] = 1 },			    /* ff02::1 */
			{ [10] = 0xff, [11] = 0xff, 10, 254, 0, 1 },	    /* ::ffff:10.254.0.1 */
		};
		static const uint8_t good[16] = { 0xfd, 0, [15] = 9 };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			errno = 0;
			assert_null(unet_channel__open_ipv6(ep, 5, bad[i], 0, 6, NULL));
			assert_int_equal(errno, EINVAL);
		}
		errno = 0;
		assert_null(unet_channel__open_ipv6(ep, 0, good, 0, 6, NULL));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(unet_channel__open_ipv6(ep, 5, good, 0, 0, NULL));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(unet_channel__open_ipv6(ep, 5, NULL, 0, 6, NULL));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(unet_channel__open_ipv6(NULL, 5, good, 0, 6, NULL));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(unet_channel__open_ipv6(ep, 5, good, 0, 6, NULL));
		assert_int_not_equal(errno, 0);
	}
	assert_int_equal(unet_channel__max_payload(NULL), 0);
	/* nothing was left in the map */
	assert_null(unet_channel__lookup(ep, 5));

	{
		struct unet_iface *iface = unet_iface__open(ifname, NULL);

		assert_non_null(iface);
		port = unet_iface__chan_port(iface);
		unet_iface__close(iface);
	}
	assert_true(port > 0);
	errno = 0;
	assert_null(unet_udp__open(ep, nobody, (uint16_t)port, NULL));
	assert_int_equal(errno, EADDRINUSE);
	unet_endpoint__destroy(ep);
}

static void test_helpers(void **state)
{
	uint8_t mac[6];
	char buf[18];

	(void)state;
	assert_int_equal(unet_parse_mac("zz:zz:zz:zz:zz:zz", mac), -EINVAL);
	assert_int_equal(unet_parse_mac("02:00:00:00:00", mac), -EINVAL);
	assert_int_equal(unet_parse_mac("02:00:00:00:00:01:02", mac), -EINVAL);
	assert_int_equal(unet_parse_mac("02:00:5e:00:53:0a", mac), 0);
	assert_string_equal(unet_format_mac(mac, buf), "02:00:5e:00:53:0a");
	assert_null(unet_stat_name(-1));
	assert_null(unet_stat_name(UNET_STAT__COUNT));
	/* Destructors accept NULL. */
	unet_endpoint__destroy(NULL);
	unet_channel__close(NULL);
	unet_iface__close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_create_null_ifname),
		cmocka_unit_test(test_create_unknown_iface),
		cmocka_unit_test(test_create_bad_options),
		cmocka_unit_test(test_channel_bad_args),
		cmocka_unit_test(test_send_sizes),
		cmocka_unit_test(test_batch_one_oversize),
		cmocka_unit_test(test_release_bogus),
		cmocka_unit_test(test_layer_table_full),
		cmocka_unit_test(test_routable_channel_errors),
	};
	const char *mac = getenv("UNET_TEST_PEER_MAC");

	ifname = getenv("UNET_TEST_IFACE");
	if (ifname && !*ifname)
		ifname = NULL;
	if (mac && unet_parse_mac(mac, peer_mac) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
