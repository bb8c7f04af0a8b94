// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_udp6.c - UDP/IPv6 frames and neighbour solicitations in the
 * library (lib/udp/udp6.c, lib/inet/csum.c): the IPv6 pseudo-header
 * checksum against a value computed by hand, build/parse round trips,
 * every refusal of the parsers (checksums, mandatory checksum, partial
 * checksums, lengths, extension headers; hop limit, options, duplicate
 * address detection, destination of a solicitation), the advertisement
 * we answer with, and a seeded fuzz of both parsers (docs/udp.md, "IPv6").
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "udp/udp_impl.h"
#include "fuzz.h"

static const uint8_t MAC_A[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t MAC_B[6] = { 0x02, 0, 0, 0, 0, 0x0b };

static void a6(uint8_t a[16], const char *s)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

/* [2001:db8::1]:4000 -> [2001:db8::2]:5000 "ping": checksum 0xa268,
 * computed by hand from RFC 8200 8.1's pseudo-header. */
static void test_csum_known(void **state)
{
	uint8_t f[128], s[16], d[16];
	uint32_t n;

	(void)state;
	a6(s, "2001:db8::1");
	a6(d, "2001:db8::2");
	memcpy(f + UNET_UDP6_HDRS, "ping", 4);
	n = unet_udp6_build(f, MAC_B, MAC_A, s, d, 4000, 5000, 4);
	assert_int_equal(n, 14 + 40 + 8 + 4);
	assert_int_equal(f[14 + 40 + 6], 0xa2);
	assert_int_equal(f[14 + 40 + 7], 0x68);
	/* header fields */
	assert_int_equal(f[12] << 8 | f[13], 0x86dd);
	assert_int_equal(f[14] >> 4, 6);
	assert_int_equal(f[14 + 4] << 8 | f[14 + 5], 12);
	assert_int_equal(f[14 + 6], 17);
	assert_memory_equal(f + 14 + 8, s, 16);
	assert_memory_equal(f + 14 + 24, d, 16);
}

static uint32_t build(uint8_t *f, uint32_t len)
{
	uint8_t s[16], d[16];

	a6(s, "2001:db8::1");
	a6(d, "fe80::2");
	for (uint32_t i = 0; i < len; i++)
		f[UNET_UDP6_HDRS + i] = (uint8_t)(i * 13 + len);
	return unet_udp6_build(f, MAC_B, MAC_A, s, d, 4000, 5000, len);
}

static void test_round_trip(void **state)
{
	static const uint32_t sizes[] = { 1, 2, 3, 7, 64, 1000, 1452 };
	uint8_t f[2048], s[16];
	struct unet_udp6_frame p;

	(void)state;
	a6(s, "2001:db8::1");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = build(f, sizes[i]);

		assert_int_equal(unet_udp6_parse(f, n, false, &p), UNET_UDP_OK);
		assert_int_equal(p.len, sizes[i]);
		assert_int_equal(p.payload_off, UNET_UDP6_HDRS);
		assert_int_equal(p.sport, 4000);
		assert_int_equal(p.dport, 5000);
		assert_memory_equal(p.saddr, s, 16);
		assert_false(p.partial);
		for (uint32_t j = 0; j < sizes[i]; j++)
			assert_int_equal(f[UNET_UDP6_HDRS + j], (uint8_t)(j * 13 + sizes[i]));
		/* Ethernet padding after it is fine */
		assert_int_equal(unet_udp6_parse(f, n + 9, false, &p), UNET_UDP_OK);
	}
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void test_refused(void **state)
{
	uint8_t f[256], g[256];
	struct unet_udp6_frame p;
	uint32_t n = build(f, 32);
	uint8_t *ip = f + 14, *udp = ip + 40;

	(void)state;
	/* a wrong checksum, and none at all (mandatory over IPv6) */
	memcpy(g, f, n);
	g[14 + 40 + 8] ^= 1;
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_BAD_UDP_CSUM);
	memcpy(g, f, n);
	put16(g + 14 + 40 + 6, 0);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_BAD_UDP_CSUM);
	/* 0 where the true checksum is 0 too (sent as 0xffff): the sum
	 * verifies either way, and 0 is still refused */
	{
		uint32_t m = build(g, 2);
		uint8_t *gu = g + 14 + 40;
		uint16_t c = (uint16_t)(gu[6] << 8 | gu[7]), w = (uint16_t)(gu[8] << 8 | gu[9]);
		uint32_t sum = (uint32_t)w + c;

		put16(gu + 8, (uint16_t)((sum & 0xffff) + (sum >> 16)));
		put16(gu + 6, 0);
		assert_int_equal(unet_csum_fold(unet_csum_add(unet_csum_pseudo6(g + 22, g + 38, 17, 10),
							      gu, 10)),
				 0xffff);
		assert_int_equal(unet_udp6_parse(g, m, true, &p), UNET_UDP_BAD_UDP_CSUM);
	}
	/* a partial checksum: the pseudo-header sum alone */
	memcpy(g, f, n);
	put16(g + 14 + 40 + 6, unet_csum_fold(unet_csum_pseudo6(ip + 8, ip + 24, 17, 40)));
	assert_int_equal(unet_udp6_parse(g, n, false, &p), UNET_UDP_PARTIAL_REFUSED);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_OK);
	assert_true(p.partial);
	/* truncated: the frame ends before the payload length says */
	assert_int_equal(unet_udp6_parse(f, n - 1, true, &p), UNET_UDP_MALFORMED);
	assert_int_equal(unet_udp6_parse(f, 14 + 39, true, &p), UNET_UDP_MALFORMED);
	/* payload length below a UDP header; UDP length past it or below 8 */
	memcpy(g, f, n);
	put16(g + 14 + 4, 7);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_MALFORMED);
	memcpy(g, f, n);
	put16(g + 14 + 40 + 4, 41);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_MALFORMED);
	put16(g + 14 + 40 + 4, 7);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_MALFORMED);
	/* an extension header: refused; another protocol: not ours */
	memcpy(g, f, n);
	g[14 + 6] = 44;
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_MALFORMED);
	g[14 + 6] = 6;
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_NOT_UDP);
	/* version 4 in an IPv6 frame; an IPv4 frame */
	memcpy(g, f, n);
	g[14] = 0x45;
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_MALFORMED);
	put16(g + 12, 0x0800);
	assert_int_equal(unet_udp6_parse(g, n, true, &p), UNET_UDP_NOT_UDP);
	(void)udp;
}

/* A solicitation from fe80::b (MAC_B) for 2001:db8::7, to its
 * solicited-node group, with a source link-layer address option; the
 * checksum made right after any change by fix_ns. */
static uint32_t build_ns(uint8_t *f)
{
	uint8_t *ip = f + 14, *icmp = ip + 40;

	memset(f, 0, 14 + 40 + 32);
	memcpy(f, "\x33\x33\xff\x00\x00\x07", 6);
	memcpy(f + 6, MAC_B, 6);
	put16(f + 12, 0x86dd);
	ip[0] = 0x60;
	put16(ip + 4, 32);
	ip[6] = 58;
	ip[7] = 255;
	a6(ip + 8, "fe80::b");
	a6(ip + 24, "ff02::1:ff00:7");
	icmp[0] = 135;
	a6(icmp + 8, "2001:db8::7");
	icmp[24] = 1;
	icmp[25] = 1;
	memcpy(icmp + 26, MAC_B, 6);
	return 14 + 40 + 32;
}

static void fix_ns(uint8_t *f)
{
	uint8_t *ip = f + 14, *icmp = ip + 40;
	uint32_t plen = (uint32_t)(ip[4] << 8 | ip[5]);

	put16(icmp + 2, 0);
	put16(icmp + 2, (uint16_t)~unet_csum_fold(unet_csum_add(
				unet_csum_pseudo6(ip + 8, ip + 24, 58, plen), icmp, plen)));
}

static void test_ns(void **state)
{
	uint8_t f[256], na[128], t[16], s[16];
	struct unet_nd_ns ns;
	uint32_t n = build_ns(f);

	(void)state;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_NS);
	a6(t, "2001:db8::7");
	a6(s, "fe80::b");
	assert_memory_equal(ns.target, t, 16);
	assert_memory_equal(ns.saddr, s, 16);
	assert_memory_equal(ns.reply_mac, MAC_B, 6);

	/* the advertisement: to the solicitor, from the target, checksum
	 * right, S and O, our MAC in the option */
	assert_int_equal(unet_nd_build_na(na, MAC_A, &ns), UNET_ND_NA_FRAME_LEN);
	assert_memory_equal(na, MAC_B, 6);
	assert_memory_equal(na + 6, MAC_A, 6);
	assert_int_equal(na[14 + 7], 255);
	assert_memory_equal(na + 14 + 8, t, 16);
	assert_memory_equal(na + 14 + 24, s, 16);
	assert_int_equal(na[54], 136);
	assert_int_equal(na[54 + 4], 0x60);
	assert_memory_equal(na + 54 + 8, t, 16);
	assert_int_equal(na[54 + 24], 2);
	assert_memory_equal(na + 54 + 26, MAC_A, 6);
	assert_int_equal(unet_csum_fold(unet_csum_add(unet_csum_pseudo6(na + 22, na + 38, 58, 32),
						      na + 54, 32)),
			 0xffff);

	/* to the target itself (a unicast check of reachability): fine */
	a6(f + 14 + 24, "2001:db8::7");
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_NS);
	/* to another group, or another address: not answered */
	a6(f + 14 + 24, "ff02::1:ff00:8");
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_REJECTED);
	/* a wrong checksum */
	n = build_ns(f);
	fix_ns(f);
	f[54 + 10] ^= 1;
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_BAD_CSUM);
	/* hop limit below 255: routed from elsewhere */
	n = build_ns(f);
	f[14 + 7] = 254;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_MALFORMED);
	/* an option of length 0, one past the payload, a 16-byte SLLA */
	n = build_ns(f);
	f[54 + 25] = 0;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_MALFORMED);
	f[54 + 25] = 2;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_MALFORMED);
	/* an option of another type with length 0: refused, not looped on */
	f[54 + 24] = 14;
	f[54 + 25] = 0;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_MALFORMED);
	/* duplicate address detection: from ::, no option -- not answered;
	 * with an option -- malformed */
	n = build_ns(f);
	memset(f + 14 + 8, 0, 16);
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_MALFORMED);
	put16(f + 14 + 4, 24);
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n - 8, &ns), UNET_ND_REJECTED);
	/* an option naming a group MAC to answer to */
	n = build_ns(f);
	f[54 + 26] = 0x33;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_REJECTED);
	/* truncated; payload length past the frame; not a solicitation */
	n = build_ns(f);
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n - 1, &ns), UNET_ND_MALFORMED);
	assert_int_equal(unet_nd_parse_ns(f, 14 + 40 + 20, &ns), UNET_ND_MALFORMED);
	f[54] = 136;
	fix_ns(f);
	assert_int_equal(unet_nd_parse_ns(f, n, &ns), UNET_ND_NOT_NS);
}

/*
 * Seeded fuzz of both parsers: valid datagrams and solicitations, mutated
 * (bytes set, bits flipped, length cut or grown), each parsed from a heap
 * copy of exactly its length so ASan sees any read past it.  Whatever the
 * input: no crash; a datagram accepted lies inside the frame and its
 * checksum verifies (or is the partial kind, when asked to accept it); a
 * solicitation accepted is from the link, for a unicast target, answered
 * to a unicast MAC.
 */
static void test_fuzz(void **state)
{
	const uint64_t seed = fuzz_seed(0x756e65745f756436ull); /* "unet_ud6" */
	const uint64_t rounds = fuzz_count(500000);
	uint64_t rng = seed, ok_udp = 0, ok_ns = 0;
	uint8_t base[2048];

	(void)state;
	for (uint64_t i = 0; i < rounds; i++) {
		uint64_t r = fuzz_next(&rng);
		uint32_t len;
		struct unet_udp6_frame f;
		struct unet_nd_ns ns;
		uint8_t *buf;

		if (r & (1ull << 40)) {
			len = build(base, (uint32_t)(r % 200));
		} else {
			len = build_ns(base);
			fix_ns(base);
		}
		for (unsigned int k = 0, nm = (unsigned int)(r >> 44) % 6; k < nm; k++) {
			uint64_t x = fuzz_next(&rng);
			uint32_t at = (uint32_t)(x % len);

			if (x & 0x100000000ull)
				base[at] = (uint8_t)(x >> 40);
			else
				base[at] ^= (uint8_t)(1u << ((x >> 40) & 7));
		}
		switch ((r >> 50) % 4) {
		case 0:
			len = (uint32_t)(fuzz_next(&rng) % (len + 1));
			break;
		case 1:
			len += (uint32_t)(fuzz_next(&rng) % 16);
			break;
		default:
			break;
		}
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memcpy(buf, base, len);
		if (unet_udp6_parse(buf, len, (r >> 53) & 1, &f) == UNET_UDP_OK) {
			uint32_t ulen = f.len + 8;

			ok_udp++;
			assert_true(f.payload_off <= len && f.len <= len - f.payload_off);
			if (!f.partial)
				assert_int_equal(unet_csum_fold(unet_csum_add(
							 unet_csum_pseudo6(buf + 22, buf + 38, 17, ulen),
							 buf + 54, ulen)),
						 0xffff);
		}
		if (unet_nd_parse_ns(buf, len, &ns) == UNET_ND_NS) {
			ok_ns++;
			assert_true(len >= 14 + 40 + 24);
			assert_int_equal(buf[14 + 7], 255);
			assert_true(ns.target[0] != 0xff && !(ns.reply_mac[0] & 1));
		}
		free(buf);
	}
	print_message("fuzz: seed 0x%llx, %llu inputs: %llu parsed as UDP, %llu as solicitations\n",
		      (unsigned long long)seed, (unsigned long long)rounds,
		      (unsigned long long)ok_udp, (unsigned long long)ok_ns);
	/* the mutations leave many inputs valid: the checks above ran */
	assert_true(ok_udp > rounds / 20 && ok_ns > rounds / 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_known),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_ns),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests_name("udp6", tests, NULL, NULL);
}
