/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * veth_pair.h - the fixture the unit tests that need real traffic share
 * (test_datapath.c, test_wait.c): one endpoint on each end of a veth
 * pair and a channel each way between them.
 *
 * The pair comes from the environment (the integration suite's
 * "datapath" and "wait" tests make it): UNET_TEST_IFACE_A /
 * UNET_TEST_IFACE_B, UNET_TEST_XDP_MODE (native or skb), UNET_PIN_ROOT.
 * Without them pair_setup leaves *state NULL and NEED_PAIR skips the
 * test, never passes it.
 *
 * The including file defines TAG_A and TAG_B (a's and b's channel tags)
 * and includes <cmocka.h> and <unet-xdp/unet.h> first.  One header
 * included by one test file each: its static functions are that file's.
 */
#ifndef UNET_TEST_VETH_PAIR_H
#define UNET_TEST_VETH_PAIR_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pair {
	struct unet_endpoint *a, *b;
	struct unet_channel *ab, *ba; /* a's channel to b, b's to a */
	struct unet_endpoint_info ia, ib;
};

static const char *if_a, *if_b;
static enum unet_xdp_mode mode = UNET_XDP_MODE_SKB;

/* The interfaces and the XDP mode from the environment; main calls it. */
static void pair_env(void)
{
	const char *m = getenv("UNET_TEST_XDP_MODE");

	if_a = getenv("UNET_TEST_IFACE_A");
	if_b = getenv("UNET_TEST_IFACE_B");
	if (m && !strcmp(m, "native"))
		mode = UNET_XDP_MODE_NATIVE;
}

static struct unet_endpoint *ep_new(const char *ifname)
{
	UNET_OPTS_INIT(unet_endpoint_opts, o);
	struct unet_endpoint *ep;

	o.mode = mode;
	o.segment_size = 1 << 20; /* 512 frames: small, so refill matters */
	ep = unet_endpoint__create(ifname, &o);
	if (!ep)
		print_error("unet_endpoint__create(%s): %s\n", ifname, strerror(errno));
	assert_non_null(ep);
	return ep;
}

static int pair_setup(void **state)
{
	struct pair *p;

	if (!if_a || !if_b) {
		print_message("UNET_TEST_IFACE_A/B not set: skipped\n");
		*state = NULL;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->a = ep_new(if_a);
	p->b = ep_new(if_b);
	assert_int_equal(unet_endpoint__info(p->a, &p->ia), 0);
	assert_int_equal(unet_endpoint__info(p->b, &p->ib), 0);
	p->ab = unet_channel__open(p->a, TAG_A, p->ib.mac, TAG_B, NULL);
	p->ba = unet_channel__open(p->b, TAG_B, p->ia.mac, TAG_A, NULL);
	assert_non_null(p->ab);
	assert_non_null(p->ba);
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;

	if (p) {
		unet_endpoint__destroy(p->a);
		unet_endpoint__destroy(p->b);
		free(p);
	}
	return 0;
}

#define NEED_PAIR(p)            \
	do {                    \
		if (!(p))       \
			skip(); \
	} while (0)

#endif
