/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_netlink.c - the parsers of the kernel's route and neighbour answers
 * (lib/core/netlink.c), which routable channels and the IP layers follow:
 * every field of a well-formed answer is read, every malformed one is
 * refused or its bad attribute ignored, a seeded fuzz (fuzz.h) of mutated
 * and cut answers, each in a heap block of its exact length so that ASan
 * sees any read past it; the same for the interface address answers; and
 * questions to the running kernel (a route, lo's addresses).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/netlink.h"
#include "fuzz.h"

/* An answer being built: a netlink header, a family header, attributes. */
struct msg {
	union {
		struct nlmsghdr nh;
		char buf[512];
	};
};

static struct rtattr *attr(struct msg *m, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)(m->buf + NLMSG_ALIGN(m->nh.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (data)
		memcpy(RTA_DATA(a), data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

/* A route answer: oif 7, gateway 10.0.0.254 (or 16 bytes for v6), RTAX_MTU
 * 1200 inside RTA_METRICS. */
static void route_msg(struct msg *m, uint16_t alen)
{
	const uint8_t gw[16] = { 10, 0, 0, 254, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct rtmsg *rt;
	int oif = 7;
	uint32_t mtu = 1200;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	m->nh.nlmsg_type = RTM_NEWROUTE;
	rt = NLMSG_DATA(&m->nh);
	rt->rtm_family = alen == 4 ? AF_INET : AF_INET6;
	rt->rtm_type = RTN_UNICAST;
	attr(m, RTA_OIF, &oif, 4);
	attr(m, RTA_GATEWAY, gw, alen);
	{
		/* RTA_METRICS holds attributes of its own: RTAX_MTU */
		char nested[RTA_SPACE(4)];
		struct rtattr x = { .rta_len = (unsigned short)RTA_LENGTH(4), .rta_type = RTAX_MTU };

		memset(nested, 0, sizeof(nested));
		memcpy(nested, &x, sizeof(x));
		memcpy(nested + RTA_LENGTH(0), &mtu, 4);
		attr(m, RTA_METRICS, nested, (uint16_t)sizeof(nested));
	}
}

static void neigh_msg(struct msg *m, uint16_t state, const uint8_t *mac, uint16_t maclen)
{
	struct ndmsg *nd;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	m->nh.nlmsg_type = RTM_NEWNEIGH;
	nd = NLMSG_DATA(&m->nh);
	nd->ndm_family = AF_INET;
	nd->ndm_state = state;
	{
		uint32_t ip = htonl(0x0a0000fe);

		attr(m, NDA_DST, &ip, 4);
	}
	if (mac)
		attr(m, NDA_LLADDR, mac, maclen);
}

static void test_route_fields(void **state)
{
	struct unet_nl_route rt;
	struct msg m;

	(void)state;
	route_msg(&m, 4);
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 4, &rt), 0);
	assert_int_equal(rt.oif, 7);
	assert_int_equal(rt.type, RTN_UNICAST);
	assert_true(rt.gateway);
	assert_memory_equal(rt.via, ((uint8_t[]){ 10, 0, 0, 254 }), 4);
	assert_int_equal(rt.route_mtu, 1200);

	route_msg(&m, 16);
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 16, &rt), 0);
	assert_true(rt.gateway);
	assert_int_equal(rt.via[15], 16);
	/* a 4-byte gateway is not an IPv6 one: ignored */
	route_msg(&m, 4);
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 16, &rt), 0);
	assert_false(rt.gateway);
	assert_int_equal(rt.oif, 7);
	assert_false(rt.have_src);
	/* The kernel's preferred source (the channel's own, chan_udp.c),
	 * only when whole. */
	{
		const uint8_t src[16] = { 0xfd, 1, [15] = 1 };

		route_msg(&m, 16);
		attr(&m, RTA_PREFSRC, src, 16);
		assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 16, &rt), 0);
		assert_true(rt.have_src);
		assert_memory_equal(rt.src, src, 16);
		route_msg(&m, 16);
		attr(&m, RTA_PREFSRC, src, 4);
		assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 16, &rt), 0);
		assert_false(rt.have_src);
	}
}

static void test_route_refused(void **state)
{
	struct unet_nl_route rt;
	struct msg m;

	(void)state;
	route_msg(&m, 4);
	/* shorter than the message says */
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len - 1, 4, &rt), -EPROTO);
	assert_int_equal(unet_nl_route_parse(m.buf, 0, 4, &rt), -EPROTO);
	assert_int_equal(unet_nl_route_parse(m.buf, -5, 4, &rt), -EPROTO);
	/* not a route */
	m.nh.nlmsg_type = RTM_NEWNEIGH;
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 4, &rt), -EPROTO);
	/* no room for the rtmsg */
	route_msg(&m, 4);
	m.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)) - 1;
	assert_int_equal(unet_nl_route_parse(m.buf, (int)sizeof(m.buf), 4, &rt), -EPROTO);
	/* an address length that is neither IPv4's nor IPv6's */
	route_msg(&m, 4);
	assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 6, &rt), -EPROTO);
	/* an attribute claiming more than the message: the walk stops */
	route_msg(&m, 4);
	{
		struct rtattr *a = RTM_RTA((struct rtmsg *)NLMSG_DATA(&m.nh));

		a->rta_len = 400;
		assert_int_equal(unet_nl_route_parse(m.buf, (int)m.nh.nlmsg_len, 4, &rt), 0);
		assert_int_equal(rt.oif, 0);
		assert_false(rt.gateway);
	}
}

static void test_neigh_states(void **state)
{
	const uint8_t mac[6] = { 2, 1, 2, 3, 4, 5 };
	uint8_t got[6];
	struct msg m;

	(void)state;
	neigh_msg(&m, NUD_REACHABLE, mac, 6);
	memset(got, 0, 6);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), 0);
	assert_memory_equal(got, mac, 6);
	neigh_msg(&m, NUD_STALE, mac, 6);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), 1);
	neigh_msg(&m, NUD_PERMANENT, mac, 6);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), 0);
	neigh_msg(&m, NUD_FAILED, NULL, 0);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), -EHOSTUNREACH);
	neigh_msg(&m, NUD_INCOMPLETE, NULL, 0);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), -EAGAIN);
	/* valid state, no MAC, or one of another length: not usable */
	neigh_msg(&m, NUD_REACHABLE, NULL, 0);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), -EAGAIN);
	neigh_msg(&m, NUD_REACHABLE, mac, 5);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), -EAGAIN);
	/* cut, or not a neighbour */
	neigh_msg(&m, NUD_REACHABLE, mac, 6);
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len - 1, got), -EPROTO);
	m.nh.nlmsg_type = RTM_NEWROUTE;
	assert_int_equal(unet_nl_kneigh_parse(m.buf, (int)m.nh.nlmsg_len, got), -EPROTO);
}

/* Mutated and cut answers of both kinds, each copied into a heap block of
 * its exact length: no read past it (ASan), and what is accepted is what
 * the bytes say. */
static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x6e65746c696e6bull), s = seed;
	uint64_t n = fuzz_count(200000), ok = 0;
	/* a MAC attribute of 0..8 bytes: only 6 is one */
	static const uint8_t fmac[8] = { 2, 'a', 'b', 'c', 'd', 'e', 'f', 'g' };

	(void)state;
	print_message("netlink fuzz: seed %#llx, %llu answers\n", (unsigned long long)seed,
		      (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		struct msg m;
		int len, flips;
		char *blk;

		if (r & 1)
			route_msg(&m, (r & 2) ? 16 : 4);
		else
			neigh_msg(&m, (uint16_t)(1u << ((r >> 2) % 8)), fmac,
				  (uint16_t)((r >> 5) % (sizeof(fmac) + 1)));
		len = (int)m.nh.nlmsg_len;
		flips = (int)((r >> 9) % 6);
		for (int k = 0; k < flips; k++) {
			uint64_t x = fuzz_next(&s);

			m.buf[x % (uint64_t)len] = (char)(x >> 16);
		}
		if ((r >> 12) & 1)
			len = (int)(fuzz_next(&s) % (uint64_t)(len + 1));
		blk = malloc(len ? (size_t)len : 1);
		assert_non_null(blk);
		memcpy(blk, m.buf, (size_t)len);
		if (r & 1) {
			struct unet_nl_route rt;

			if (unet_nl_route_parse(blk, len, (r & 2) ? 16 : 4, &rt) == 0) {
				ok++;
				assert_true((unsigned int)len >=
					    NLMSG_LENGTH(sizeof(struct rtmsg)));
			}
		} else {
			uint8_t mac[6];
			int e = unet_nl_kneigh_parse(blk, len, mac);

			assert_true(e == 0 || e == 1 || e == -EAGAIN || e == -EHOSTUNREACH ||
				    e == -EPROTO);
			if (e >= 0)
				ok++;
		}
		free(blk);
	}
	print_message("netlink fuzz: %llu accepted\n", (unsigned long long)ok);
	assert_true(ok > 0);
}

/* An address answer: family's, on ifindex 3, with IFA_ADDRESS (a peer's
 * on a point-to-point link) and, when local is set, IFA_LOCAL. */
static void addr_msg(struct msg *m, int family, const uint8_t *address, const uint8_t *local)
{
	uint16_t alen = family == AF_INET ? 4 : 16;
	struct ifaddrmsg *ifa;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(*ifa));
	m->nh.nlmsg_type = RTM_NEWADDR;
	ifa = NLMSG_DATA(&m->nh);
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_index = 3;
	attr(m, IFA_ADDRESS, address, alen);
	if (local)
		attr(m, IFA_LOCAL, local, alen);
}

static void test_addr_fields(void **state)
{
	const uint8_t peer4[4] = { 10, 0, 0, 2 }, me4[4] = { 10, 0, 0, 1 };
	uint8_t a6[16] = { 0xfd, 0x77 }, got[16];
	struct msg m;

	(void)state;
	a6[15] = 1;
	/* IPv4: IFA_LOCAL is the address, IFA_ADDRESS the peer's */
	addr_msg(&m, AF_INET, peer4, me4);
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len, AF_INET, got), 0);
	assert_memory_equal(got, me4, 4);
	/* IFA_ADDRESS alone (IPv6's usual answer) */
	addr_msg(&m, AF_INET6, a6, NULL);
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len, AF_INET6, got), 0);
	assert_memory_equal(got, a6, 16);
	/* another family's answer, another message type, a cut one */
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len, AF_INET, got), -EPROTO);
	m.nh.nlmsg_type = RTM_NEWROUTE;
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len, AF_INET6, got), -EPROTO);
	addr_msg(&m, AF_INET6, a6, NULL);
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len - 1, AF_INET6, got), -EPROTO);
	/* an address of the wrong length is no address */
	memset(&m, 0, sizeof(m));
	m.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	m.nh.nlmsg_type = RTM_NEWADDR;
	((struct ifaddrmsg *)NLMSG_DATA(&m.nh))->ifa_family = AF_INET6;
	attr(&m, IFA_ADDRESS, a6, 4);
	assert_int_equal(unet_nl_addr_parse(m.buf, (int)m.nh.nlmsg_len, AF_INET6, got), -EPROTO);
}

/* Mutated and cut address answers, in heap blocks of their exact length:
 * no read past them (ASan); what is accepted is an address of the family. */
static void test_addr_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x6164647273ull), s = seed;
	uint64_t n = fuzz_count(100000), ok = 0;
	const uint8_t a[16] = { 0xfd, 0x77, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	const uint8_t b[16] = { 0xfd, 0x77, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 };

	(void)state;
	print_message("address fuzz: seed %#llx, %llu answers\n", (unsigned long long)seed,
		      (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		int family = (r & 1) ? AF_INET6 : AF_INET, len;
		struct msg m;
		uint8_t got[16];
		char *blk;

		addr_msg(&m, family, a, (r & 2) ? b : NULL);
		len = (int)m.nh.nlmsg_len;
		for (int k = 0; k < (int)((r >> 2) % 6); k++) {
			uint64_t x = fuzz_next(&s);

			m.buf[x % (uint64_t)len] = (char)(x >> 16);
		}
		if ((r >> 5) & 1)
			len = (int)(fuzz_next(&s) % (uint64_t)(len + 1));
		blk = malloc(len ? (size_t)len : 1);
		assert_non_null(blk);
		memcpy(blk, m.buf, (size_t)len);
		if (unet_nl_addr_parse(blk, len, family, got) == 0) {
			ok++;
			assert_true((unsigned int)len >= NLMSG_LENGTH(sizeof(struct ifaddrmsg)));
			assert_int_equal(((const struct ifaddrmsg *)NLMSG_DATA(
						  (const struct nlmsghdr *)(const void *)blk))->ifa_family,
					 family);
		}
		free(blk);
	}
	print_message("address fuzz: %llu accepted\n", (unsigned long long)ok);
	assert_true(ok > 0);
}

/* stop at the address asked for (ctx), counting those seen before */
static int find_addr(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	(void)ifa;
	return memcmp(a, ctx, 4) ? 0 : 7;
}

static int never_stop(const uint8_t *a, const struct ifaddrmsg *ifa, void *ctx)
{
	(void)a;
	(void)ifa;
	++*(int *)ctx;
	return 0;
}

/* The running kernel's addresses of lo: 127.0.0.1 is found (what fn
 * returned comes back), the list ends (0), and a bound of 0 stops at the
 * first address (-E2BIG) without calling fn. */
static void test_kernel_addrs(void **state)
{
	uint32_t lo = htonl(INADDR_LOOPBACK);
	int idx = (int)if_nametoindex("lo"), seen = 0, err;

	(void)state;
	if (idx <= 0)
		skip();
	err = unet_nl_addrs(AF_INET, idx, UNET_NL_ADDRS_MAX, find_addr, &lo);
	if (err == -EPERM || err == -EACCES || err == -EPROTONOSUPPORT)
		skip();
	assert_int_equal(err, 7);
	assert_int_equal(unet_nl_addrs(AF_INET, idx, UNET_NL_ADDRS_MAX, never_stop, &seen), 0);
	assert_true(seen >= 1);
	seen = 0;
	assert_int_equal(unet_nl_addrs(AF_INET, idx, 0, never_stop, &seen), -E2BIG);
	assert_int_equal(seen, 0);
	assert_int_equal(unet_nl_addrs(AF_PACKET, idx, 1, never_stop, &seen), -EINVAL);
}

/* The running kernel's own answer: a loopback address is local, by lo. */
static void test_kernel_local(void **state)
{
	struct unet_nl_route rt;
	uint32_t lo = htonl(INADDR_LOOPBACK);
	int err;

	(void)state;
	err = unet_nl_route_get(AF_INET, &lo, NULL, 4, 0, &rt);
	if (err == -EPERM || err == -EACCES || err == -EAFNOSUPPORT || err == -EPROTONOSUPPORT)
		skip();
	assert_int_equal(err, 0);
	assert_int_equal(rt.type, RTN_LOCAL);
	assert_int_equal(rt.oif, (int)if_nametoindex("lo"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_fields), cmocka_unit_test(test_route_refused),
		cmocka_unit_test(test_neigh_states), cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_kernel_local), cmocka_unit_test(test_addr_fields),
		cmocka_unit_test(test_addr_fuzz), cmocka_unit_test(test_kernel_addrs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
