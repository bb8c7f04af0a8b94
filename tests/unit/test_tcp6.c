// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tcp6.c - the checks an IPv6/TCP frame passes before lwIP sees it
 * (lib/tcp/tcp6.c, docs/tcp.md "IPv6"): a segment whose checksum was
 * computed by hand, every refusal (not TCP, another address, sources no
 * host has, lengths, data offset, longer than the link, wrong checksum),
 * partial checksums by policy, our own address as a source, which addresses the layer takes as its
 * own, and a seeded fuzz of the checks (run under ASan by make SAN=1).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tcp/tcp_impl.h"
#include "inet/inet.h"
#include "fuzz.h"

#define MTU 1500
#define HDRS (14 + 40 + 20)

static uint8_t OURS[16], PEER[16];

static void a6(uint8_t a[16], const char *s)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* [2001:db8::2]:40000 -> [2001:db8::1]:8000, seq 0x01020304, ack
 * 0x05060708, PSH|ACK, window 0xffff, "hello": checksum 0x44ec, and
 * 0x5b94 the folded pseudo-header sum (a partial checksum), both
 * computed apart from the library from RFC 8200 8.1's pseudo-header. */
static uint32_t build(uint8_t *f, size_t cap)
{
	static const uint8_t tcp[20] = { 0x9c, 0x40, 0x1f, 0x40, 1, 2, 3, 4, 5, 6,
					 7,    8,    0x50, 0x18, 0xff, 0xff, 0x44, 0xec, 0, 0 };
	uint8_t *ip = f + 14;

	assert_true(cap >= HDRS + 5 + 64);
	memset(f, 0, cap);
	f[0] = 2;
	f[6] = 2;
	f[11] = 1;
	put16(f + 12, 0x86dd);
	ip[0] = 0x60;
	put16(ip + 4, 25);
	ip[6] = 6;
	ip[7] = 64;
	memcpy(ip + 8, PEER, 16);
	memcpy(ip + 24, OURS, 16);
	memcpy(ip + 40, tcp, 20);
	memcpy(ip + 60, "hello", 5);
	return HDRS + 5;
}

static enum unet_tcp6_verdict check(uint8_t *f, uint32_t n, bool partial_ok,
				    struct unet_tcp6_seg *g)
{
	return unet_tcp6_check(f, n, OURS, partial_ok, MTU, g);
}

static int setup(void **state)
{
	(void)state;
	a6(OURS, "2001:db8::1");
	a6(PEER, "2001:db8::2");
	return 0;
}

static void test_good_segment(void **state)
{
	uint8_t f[256];
	struct unet_tcp6_seg g;
	uint32_t n = build(f, sizeof(f));

	(void)state;
	assert_int_equal(check(f, n, false, &g), UNET_TCP6_OK);
	assert_false(g.partial);
	assert_ptr_equal(g.t, f + 54);
	assert_int_equal(g.tl, 25);
	assert_int_equal(g.doff, 20);
	assert_memory_equal(g.saddr, PEER, 16);
	assert_memory_equal(g.daddr, OURS, 16);
	/* Ethernet padding after the segment is no length error */
	assert_int_equal(check(f, n + 7, false, &g), UNET_TCP6_OK);
	assert_int_equal(g.tl, 25);
	/* the checksum covers the TCP header: a data offset changed
	 * after it was computed breaks it */
	n = build(f, sizeof(f));
	f[54 + 12] = 0x60;
	assert_int_equal(check(f, n, false, &g), UNET_TCP6_BAD_CSUM);
}

static void test_not_tcp(void **state)
{
	static const uint8_t next[] = { 17, 58, 0, 43, 44, 60 };
	uint8_t f[256];
	struct unet_tcp6_seg g;
	uint32_t n;

	(void)state;
	/* UDP, ICMPv6, and TCP behind an extension header: not ours here */
	for (size_t i = 0; i < sizeof(next); i++) {
		n = build(f, sizeof(f));
		f[14 + 6] = next[i];
		assert_int_equal(check(f, n, true, &g), UNET_TCP6_NOT_TCP);
	}
	n = build(f, sizeof(f));
	f[14] = 0x40; /* version 4 */
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_NOT_TCP);
	n = build(f, sizeof(f));
	put16(f + 12, 0x0800);
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_NOT_TCP);
	n = build(f, sizeof(f));
	assert_int_equal(check(f, 14 + 39, true, &g), UNET_TCP6_NOT_TCP);
}

static void test_not_ours(void **state)
{
	uint8_t f[256];
	struct unet_tcp6_seg g;
	uint32_t n = build(f, sizeof(f));

	(void)state;
	f[14 + 24 + 15] = 3; /* 2001:db8::3: not lwIP's to forward */
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_NOT_OURS);
}

/* Our own address as the source (lwIP's answer would loop back to it
 * and abort the process). */
static void test_self_source(void **state)
{
	uint8_t f[256];
	struct unet_tcp6_seg g;
	uint32_t n = build(f, sizeof(f));

	(void)state;
	memcpy(f + 14 + 8, OURS, 16);
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
}

/* Sources no host on a link has, and link-local ones (no zone here). */
static void test_bad_sources(void **state)
{
	static const char *const bad[] = { "::", "::1", "ff02::1", "::ffff:10.0.0.1", "fe80::2" };
	uint8_t f[256], s[16];
	struct unet_tcp6_seg g;
	uint32_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = build(f, sizeof(f));
		a6(s, bad[i]);
		memcpy(f + 14 + 8, s, 16);
		assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
	}
}

static void test_lengths(void **state)
{
	uint8_t f[2048];
	struct unet_tcp6_seg g;
	uint32_t n;

	(void)state;
	/* payload length past the frame (truncated), below a TCP header, 0 */
	n = build(f, sizeof(f));
	assert_int_equal(check(f, n - 1, true, &g), UNET_TCP6_MALFORMED);
	put16(f + 14 + 4, 19);
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
	put16(f + 14 + 4, 0);
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
	/* data offset below 5 words, past the payload */
	n = build(f, sizeof(f));
	f[54 + 12] = 0x40;
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
	f[54 + 12] = 0x70; /* 28 > 25 */
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_MALFORMED);
	/* longer than the link: 1461 bytes of TCP is 1501 of IP */
	n = build(f, sizeof(f));
	put16(f + 14 + 4, 1461);
	assert_int_equal(check(f, 14 + 40 + 1461, true, &g), UNET_TCP6_MALFORMED);
}

static void test_checksums(void **state)
{
	uint8_t f[256];
	struct unet_tcp6_seg g;
	uint32_t n;

	(void)state;
	/* one bit of data, of an address, of the header */
	n = build(f, sizeof(f));
	f[n - 1] ^= 1;
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_BAD_CSUM);
	n = build(f, sizeof(f));
	f[54 + 4] ^= 0x80;
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_BAD_CSUM);
	/* 0 is no "no checksum" in TCP */
	n = build(f, sizeof(f));
	f[54 + 16] = 0;
	f[54 + 17] = 0;
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_BAD_CSUM);
	/* partial: the pseudo-header sum alone; refused, or completed */
	n = build(f, sizeof(f));
	f[54 + 16] = 0x5b;
	f[54 + 17] = 0x94;
	assert_int_equal(check(f, n, false, &g), UNET_TCP6_PARTIAL_REFUSED);
	assert_int_equal(check(f, n, true, &g), UNET_TCP6_OK);
	assert_true(g.partial);
	assert_int_equal(f[54 + 16], 0x44);
	assert_int_equal(f[54 + 17], 0xec);
	/* completed once: complete now */
	assert_int_equal(check(f, n, false, &g), UNET_TCP6_OK);
	assert_false(g.partial);
}

static void test_addr_usable(void **state)
{
	static const struct {
		const char *a;
		bool ok;
	} t[] = {
		{ "2001:db8::1", true }, { "fd00:201::1", true },     { "::", false },
		{ "::1", false },	 { "ff02::1:ff00:1", false }, { "::ffff:10.0.0.1", false },
		{ "fe80::1", false },	 { "febf::1", false },	      { "fec0::1", true },
	};
	uint8_t a[16];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		a6(a, t[i].a);
		assert_int_equal(unet_tcp6_addr_usable(a), t[i].ok);
	}
}

/*
 * Seeded fuzz: a good segment with a few random bytes changed (headers
 * mostly) and a random length.  Whatever comes in, the checks read
 * nothing outside the frame (ASan), and what they pass holds together:
 * the TCP header right after the fixed one, its length inside the frame
 * and the MTU, the data offset inside it, our address, the checksum
 * complete (verified here apart from the checks).
 */
static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x7c96d00d5eedull), s = seed, n = fuzz_count(300000), ok = 0;
	uint8_t base[1600], *f;
	uint32_t blen;

	(void)state;
	printf("fuzz seed 0x%llx, %llu inputs\n", (unsigned long long)seed, (unsigned long long)n);
	blen = build(base, sizeof(base));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		uint32_t len = (uint32_t)(r % 200), k = 1 + (uint32_t)(r >> 8) % 6;
		struct unet_tcp6_seg g;

		/* an exact-size heap copy: a read past len is ASan's */
		f = malloc(len ? len : 1);
		assert_non_null(f);
		memcpy(f, base, len < blen ? len : blen);
		if (len > blen)
			memset(f + blen, (int)(r >> 40), len - blen);
		for (uint32_t j = 0; j < k && len; j++) {
			uint64_t q = fuzz_next(&s);
			uint32_t at = (q & 3) ? 14 + (uint32_t)(q >> 8) % 60 : (uint32_t)(q >> 8) % len;

			if (at < len)
				f[at] = (uint8_t)(q >> 32);
		}
		if (r & (1ull << 60) && len >= 20) /* a plausible payload length */
			put16(f + 14 + 4, (uint16_t)(len - 54 + ((r >> 50) & 3) - 1));
		if (check(f, len, (r >> 61) & 1, &g) == UNET_TCP6_OK) {
			uint64_t sum;

			ok++;
			assert_ptr_equal(g.t, f + 54);
			assert_true(g.tl >= 20 && 54 + g.tl <= len && 40 + g.tl <= MTU);
			assert_true(g.doff >= 20 && g.doff <= g.tl);
			assert_memory_equal(f + 14 + 24, OURS, 16);
			assert_int_equal(f[14 + 6], 6);
			sum = unet_csum_pseudo6(f + 14 + 8, f + 14 + 24, 6, g.tl);
			assert_int_equal(unet_csum_fold(unet_csum_add(sum, g.t, g.tl)), 0xffff);
		}
		free(f);
	}
	printf("fuzz: %llu of %llu passed the checks\n", (unsigned long long)ok,
	       (unsigned long long)n);
	/* the generator must reach the far side of the checks too */
	assert_true(ok > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_good_segment, setup),
		cmocka_unit_test_setup(test_not_tcp, setup),
		cmocka_unit_test_setup(test_not_ours, setup),
		cmocka_unit_test_setup(test_bad_sources, setup),
		cmocka_unit_test_setup(test_self_source, setup),
		cmocka_unit_test_setup(test_lengths, setup),
		cmocka_unit_test_setup(test_checksums, setup),
		cmocka_unit_test_setup(test_addr_usable, setup),
		cmocka_unit_test_setup(test_fuzz, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
