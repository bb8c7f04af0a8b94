/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The UDP/IPv4 layer's pure parts (lib/udp/udp_impl.h): the Internet checksum,
 * building and checking Ethernet/IPv4/UDP frames (incomplete, partial and
 * zero checksums, IP options, fragments, truncation), ARP frames, and the
 * ARP cache's expiry with the clock passed in.  No privileges needed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "udp/udp_impl.h"

static const uint8_t MAC_A[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t MAC_B[6] = { 0x02, 0, 0, 0, 0, 0x0b };

static uint32_t ip4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

/* RFC 1071's worked example: the bytes 00 01 f2 03 f4 f5 f6 f7 sum to
 * ddf2 (folded). */
static void test_csum_rfc1071(void **state)
{
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	(void)state;
	assert_int_equal(unet_csum_fold(unet_csum_add(0, b, sizeof(b))), 0xddf2);
	/* odd length: the last byte is padded with a zero */
	assert_int_equal(unet_csum_fold(unet_csum_add(0, b, 1)), 0x0000);
	assert_int_equal(unet_csum_fold(unet_csum_add(0, b + 2, 3)), (0xf203 + 0xf400) % 0xffff);
	/* many carries */
	uint8_t ff[4000];

	memset(ff, 0xff, sizeof(ff));
	assert_int_equal(unet_csum_fold(unet_csum_add(0, ff, sizeof(ff))), 0xffff);
}

static uint32_t build(uint8_t *f, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		f[UNET_UDP_HDRS + i] = (uint8_t)(i * 13 + len);
	return unet_udp_build(f, MAC_B, MAC_A, ip4("10.1.0.1"), ip4("10.1.0.2"), 4000, 5000, len,
			      77);
}

static void test_build_parse_roundtrip(void **state)
{
	static const uint32_t sizes[] = { 1, 17, 18, 100, 1471, 1472 };
	uint8_t f[2048];
	struct unet_udp_frame p;

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k], flen = build(f, len);

		assert_int_equal(flen, len + 42 < 60 ? 60 : len + 42);
		assert_memory_equal(f, MAC_B, 6);
		assert_int_equal(f[12], 0x08);
		assert_int_equal(f[13], 0x00);
		assert_int_equal(unet_udp_parse(f, flen, false, &p), UNET_UDP_OK);
		assert_int_equal(p.saddr, ip4("10.1.0.1"));
		assert_int_equal(p.daddr, ip4("10.1.0.2"));
		assert_int_equal(p.sport, 4000);
		assert_int_equal(p.dport, 5000);
		assert_int_equal(p.len, len);
		assert_int_equal(p.payload_off, 42);
		assert_false(p.partial);
		for (uint32_t i = 0; i < len; i++)
			assert_int_equal(f[42 + i], (uint8_t)(i * 13 + len));
	}
}

/* A checksum computed here, independently, matches the library's. */
static void test_known_checksums(void **state)
{
	uint8_t f[128];
	uint32_t flen;

	(void)state;
	memcpy(f + UNET_UDP_HDRS, "ping", 4);
	flen = unet_udp_build(f, MAC_B, MAC_A, ip4("10.0.0.2"), ip4("10.0.0.1"), 5000, 5000, 4, 1);
	assert_int_equal(flen, 60);
	/* IPv4 header: 45 00 0020 0001 4000 40 11 cksum 0a000002 0a000001 */
	assert_int_equal(f[14 + 2] << 8 | f[14 + 3], 32);
	/* header words 4500+0020+0001+4000+4011+0a00+0002+0a00+0001 = 0xd935,
	 * complemented 0x26ca */
	assert_int_equal(f[24] << 8 | f[25], 0x26ca);
	/* UDP: pseudo 0a00+0002+0a00+0001+0011+000c, header 1388+1388+000c, data 7069+6e67 */
	uint32_t s = 0x0a00 + 0x0002 + 0x0a00 + 0x0001 + 0x0011 + 0x000c + 0x1388 + 0x1388 + 0x000c +
		     0x7069 + 0x6e67;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	assert_int_equal(f[40] << 8 | f[41], (uint16_t)~s);
}

static void test_bad_checksums_and_lengths(void **state)
{
	uint8_t f[2048], g[2048];
	uint32_t flen;
	struct unet_udp_frame p;

	(void)state;
	flen = build(f, 200);
	memcpy(g, f, flen);
	g[42 + 7] ^= 1; /* payload */
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_BAD_UDP_CSUM);
	memcpy(g, f, flen);
	g[14 + 8] ^= 1; /* TTL */
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_BAD_IP_CSUM);
	/* truncated: shorter than tot_len, inside the UDP header, inside IP */
	assert_int_equal(unet_udp_parse(f, flen - 1, true, &p), UNET_UDP_MALFORMED);
	assert_int_equal(unet_udp_parse(f, 14 + 20 + 6, true, &p), UNET_UDP_MALFORMED);
	assert_int_equal(unet_udp_parse(f, 14 + 10, true, &p), UNET_UDP_MALFORMED);
	/* padding after tot_len is fine */
	assert_int_equal(unet_udp_parse(f, flen + 10, true, &p), UNET_UDP_OK);
	/* UDP length beyond the IP payload */
	memcpy(g, f, flen);
	g[38] = 0xff;
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_MALFORMED);
	/* fragments (MF, or an offset): refused, not reassembled */
	memcpy(g, f, flen);
	g[20] = 0x20;
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_MALFORMED);
	/* not UDP, not IPv4 */
	memcpy(g, f, flen);
	g[14 + 9] = 6;
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_NOT_UDP);
	g[12] = 0x88;
	g[13] = 0xb5;
	assert_int_equal(unet_udp_parse(g, flen, true, &p), UNET_UDP_NOT_UDP);
}

static void test_zero_and_partial_checksums(void **state)
{
	uint8_t f[2048];
	uint32_t flen;
	uint16_t pseudo;
	struct unet_udp_frame p;

	(void)state;
	flen = build(f, 300);
	/* 0: no checksum sent, allowed over IPv4 */
	f[40] = f[41] = 0;
	assert_int_equal(unet_udp_parse(f, flen, false, &p), UNET_UDP_OK);
	/* CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum */
	pseudo = unet_csum_fold(unet_csum_pseudo(ip4("10.1.0.1"), ip4("10.1.0.2"), 17, 308));
	f[40] = (uint8_t)(pseudo >> 8);
	f[41] = (uint8_t)pseudo;
	assert_int_equal(unet_udp_parse(f, flen, false, &p), UNET_UDP_PARTIAL_REFUSED);
	assert_int_equal(unet_udp_parse(f, flen, true, &p), UNET_UDP_OK);
	assert_true(p.partial);
	assert_int_equal(p.len, 300);
	/* anything else wrong is wrong, partial accepted or not */
	f[41] ^= 0x10;
	assert_int_equal(unet_udp_parse(f, flen, true, &p), UNET_UDP_BAD_UDP_CSUM);
}

static void test_ip_options(void **state)
{
	uint8_t f[2048], g[2048];
	uint32_t flen;
	struct unet_udp_frame p;
	uint16_t c;

	(void)state;
	flen = build(f, 50);
	/* insert 4 bytes of options (NOPs) after the 20-byte header */
	memcpy(g, f, 34);
	memset(g + 34, 1, 4);
	memcpy(g + 38, f + 34, flen - 34);
	g[14] = 0x46;
	g[17] += 4; /* tot_len */
	g[24] = g[25] = 0;
	c = (uint16_t)~unet_csum_fold(unet_csum_add(0, g + 14, 24));
	g[24] = (uint8_t)(c >> 8);
	g[25] = (uint8_t)c;
	assert_int_equal(unet_udp_parse(g, flen + 4, false, &p), UNET_UDP_OK);
	assert_int_equal(p.payload_off, 14 + 24 + 8);
	assert_int_equal(p.len, 50);
	assert_memory_equal(g + p.payload_off, f + 42, 50);
	/* IHL below 5 */
	g[14] = 0x44;
	assert_int_equal(unet_udp_parse(g, flen + 4, false, &p), UNET_UDP_MALFORMED);
}

static void test_arp_frames(void **state)
{
	struct unet_arp_msg m = { .op = 1 }, r;
	uint8_t f[64];

	(void)state;
	memcpy(m.sha, MAC_A, 6);
	m.spa = ip4("10.1.0.1");
	m.tpa = ip4("10.1.0.2");
	assert_int_equal(unet_arp_build(f, (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
					&m),
			 60);
	assert_int_equal(f[12], 0x08);
	assert_int_equal(f[13], 0x06);
	assert_int_equal(f[20] << 8 | f[21], 1); /* op */
	assert_int_equal(unet_arp_parse(f, 60, &r), 0);
	assert_int_equal(r.op, 1);
	assert_memory_equal(r.sha, MAC_A, 6);
	assert_int_equal(r.spa, m.spa);
	assert_int_equal(r.tpa, m.tpa);
	assert_int_equal(unet_arp_parse(f, 41, &r), -EINVAL);
	f[15] = 6; /* htype 6 (IEEE 802), not Ethernet */
	assert_int_equal(unet_arp_parse(f, 60, &r), -EINVAL);
}

static void test_arp_cache_expiry(void **state)
{
	struct unet_arp_cache c;
	uint8_t mac[6];
	uint32_t a = ip4("10.1.0.9");

	(void)state;
	unet_arp_cache_init(&c, 1000); /* TTL 1000 ns, clock passed in */
	assert_int_equal(unet_arp_cache_lookup(&c, a, 0, mac), -ENOENT);
	unet_arp_cache_update(&c, a, MAC_B, 100);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 500, mac), 0);
	assert_memory_equal(mac, MAC_B, 6);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 1099, mac), 0);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 1100, mac), -ESTALE);
	/* re-resolved: fresh again, with the new MAC */
	unet_arp_cache_update(&c, a, MAC_A, 1200);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 1300, mac), 0);
	assert_memory_equal(mac, MAC_A, 6);
	/* an older answer never replaces a newer one */
	unet_arp_cache_update(&c, a, MAC_B, 1150);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 1300, mac), 0);
	assert_memory_equal(mac, MAC_A, 6);
	/* full: the oldest goes */
	for (uint32_t i = 1; i <= UNET_ARP_CACHE_SLOTS; i++)
		unet_arp_cache_update(&c, htonl(0x0a020000 + i), MAC_B, 2000 + i);
	assert_int_equal(unet_arp_cache_lookup(&c, a, 2100, mac), -ENOENT);
	assert_int_equal(unet_arp_cache_lookup(&c, htonl(0x0a020000 + 1), 2100, mac), 0);
	assert_int_equal(unet_arp_cache_lookup(&c, 0, 2100, mac), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_rfc1071),
		cmocka_unit_test(test_build_parse_roundtrip),
		cmocka_unit_test(test_known_checksums),
		cmocka_unit_test(test_bad_checksums_and_lengths),
		cmocka_unit_test(test_zero_and_partial_checksums),
		cmocka_unit_test(test_ip_options),
		cmocka_unit_test(test_arp_frames),
		cmocka_unit_test(test_arp_cache_expiry),
	};

	return cmocka_run_group_tests_name("udp", tests, NULL, NULL);
}
