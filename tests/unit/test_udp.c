/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The UDP/IPv4 layer's pure parts (lib/udp/udp_impl.h): the Internet checksum,
 * building and checking Ethernet/IPv4/UDP frames (incomplete, partial and
 * zero checksums, IP options, fragments, truncation), ARP frames, the
 * ARP cache's expiry, what ARP the endpoint believes (sender validation,
 * poisoning attempts), the rate limiter, the non-blocking resolver and its
 * negative cache -- all with the clock passed in -- and a seeded fuzz run
 * of the parsers.  No privileges needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

static const uint8_t MAC_EVIL[6] = { 0x02, 0xde, 0xad, 0xbe, 0xef, 0x01 };
#define MS 1000000ull

/* A parsed ARP message as it would come off the wire. */
static struct unet_arp_msg arp_msg(uint16_t op, const uint8_t eth_src[6], const uint8_t sha[6],
				   uint32_t spa, uint32_t tpa)
{
	struct unet_arp_msg m = { .op = op, .spa = spa, .tpa = tpa };

	memcpy(m.eth_src, eth_src, 6);
	memcpy(m.sha, sha, 6);
	return m;
}

/* unet_arp_parse fills the Ethernet source; the sender checks mirror
 * bpf/xdp_arp.h's arp_sender_learnable. */
static void test_arp_sender_validation(void **state)
{
	static const uint8_t MCAST[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t ZERO[6] = { 0 };
	const struct {
		const uint8_t *eth, *sha;
		uint32_t spa;
	} bad[] = {
		{ MAC_A, MAC_EVIL, 0x0a010002 }, { MAC_EVIL, MAC_A, 0x0a010002 },
		{ MCAST, MCAST, 0x0a010002 },	  { BCAST, BCAST, 0x0a010002 },
		{ ZERO, ZERO, 0x0a010002 },	  { MAC_A, MAC_A, 0 },
		{ MAC_A, MAC_A, 0xffffffff },	  { MAC_A, MAC_A, 0xe0000001 },
		{ MAC_A, MAC_A, 0xefffffff },
	};
	struct unet_arp_msg m = arp_msg(1, MAC_A, MAC_A, ip4("10.1.0.1"), ip4("10.1.0.2")), r;
	uint8_t f[64];

	(void)state;
	unet_arp_build(f, BCAST, &m);
	memcpy(f + 6, MAC_B, 6); /* another Ethernet source than sha */
	assert_int_equal(unet_arp_parse(f, 60, &r), 0);
	assert_memory_equal(r.eth_src, MAC_B, 6);
	assert_false(unet_arp_sender_valid(&r));
	memcpy(f + 6, MAC_A, 6);
	assert_int_equal(unet_arp_parse(f, 60, &r), 0);
	assert_true(unet_arp_sender_valid(&r));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = arp_msg(1, bad[i].eth, bad[i].sha, htonl(bad[i].spa), ip4("10.1.0.2"));
		if (unet_arp_sender_valid(&m))
			fail_msg("case %zu: sender believed", i);
	}
	assert_true(unet_arp_sender_valid(&(struct unet_arp_msg){ 0 }) == false);
}

/*
 * Poisoning: a peer resolved (fresh entry 10.1.0.9 -> MAC_B), then every
 * kind of lie the link can tell.  The entry keeps MAC_B; only an answer to
 * our own question, or a request to us where nothing fresh says otherwise,
 * is learnt.
 */
static void test_arp_learn_poisoning(void **state)
{
	struct unet_arp_cache c;
	uint32_t peer = ip4("10.1.0.9"), us = ip4("10.1.0.1"), other = ip4("10.1.0.10");
	struct unet_arp_msg m;
	uint8_t mac[6];

	(void)state;
	unet_arp_cache_init(&c, 1000 * MS);
	unet_arp_cache_update(&c, peer, MAC_B, 100 * MS);
	/* sha forged (not the Ethernet source): reply and request */
	m = arp_msg(2, MAC_B, MAC_EVIL, peer, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 200 * MS), UNET_ARP_REJECTED);
	m.op = 1;
	assert_int_equal(unet_arp_learn(&c, &m, true, 200 * MS), UNET_ARP_REJECTED);
	/* consistent, but unsolicited (no request of ours pending) */
	m = arp_msg(2, MAC_EVIL, MAC_EVIL, peer, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 200 * MS), UNET_ARP_IGNORED);
	/* a request to us that would change a fresh entry's MAC */
	m.op = 1;
	assert_int_equal(unet_arp_learn(&c, &m, true, 200 * MS), UNET_ARP_IGNORED);
	/* not to us, and announcements (spa == tpa) */
	m = arp_msg(1, MAC_B, MAC_B, peer, ip4("10.1.0.77"));
	assert_int_equal(unet_arp_learn(&c, &m, false, 200 * MS), UNET_ARP_IGNORED);
	m = arp_msg(2, MAC_EVIL, MAC_EVIL, peer, peer);
	assert_int_equal(unet_arp_learn(&c, &m, true, 200 * MS), UNET_ARP_IGNORED);
	assert_int_equal(unet_arp_cache_lookup(&c, peer, 300 * MS, mac), 0);
	assert_memory_equal(mac, MAC_B, 6);
	/* the peer's own request (same MAC) refreshes it */
	m = arp_msg(1, MAC_B, MAC_B, peer, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 900 * MS), UNET_ARP_LEARNT);
	assert_int_equal(unet_arp_cache_lookup(&c, peer, 1500 * MS, mac), 0);
	/* expired: a request may teach a new MAC (the peer changed NIC) */
	m = arp_msg(1, MAC_A, MAC_A, peer, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 2000 * MS), UNET_ARP_LEARNT);
	assert_int_equal(unet_arp_cache_lookup(&c, peer, 2000 * MS, mac), 0);
	assert_memory_equal(mac, MAC_A, 6);
	/* a reply to a question we asked is learnt */
	assert_int_equal(unet_arp_cache_next(&c, other, 2000 * MS, mac), UNET_ARP_ASK);
	m = arp_msg(2, MAC_B, MAC_B, other, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 2001 * MS), UNET_ARP_LEARNT);
	assert_int_equal(unet_arp_cache_next(&c, other, 2002 * MS, mac), UNET_ARP_USE);
	assert_memory_equal(mac, MAC_B, 6);
	/* and then a second, different reply is not (no longer pending) */
	m = arp_msg(2, MAC_EVIL, MAC_EVIL, other, us);
	assert_int_equal(unet_arp_learn(&c, &m, true, 2003 * MS), UNET_ARP_IGNORED);
	assert_int_equal(unet_arp_cache_lookup(&c, other, 2004 * MS, mac), 0);
	assert_memory_equal(mac, MAC_B, 6);
}

/* Requests from many addresses never evict fresh or pending entries. */
static void test_arp_learn_no_eviction(void **state)
{
	struct unet_arp_cache c;
	struct unet_arp_msg m;
	uint8_t mac[6];

	(void)state;
	unet_arp_cache_init(&c, 1000 * MS);
	for (uint32_t i = 1; i <= UNET_ARP_CACHE_SLOTS; i++)
		unet_arp_cache_update(&c, htonl(0x0a020000 + i), MAC_B, 10 * MS);
	for (uint32_t i = 1; i <= 1000; i++) {
		m = arp_msg(1, MAC_EVIL, MAC_EVIL, htonl(0x0a030000 + i), ip4("10.1.0.1"));
		assert_int_equal(unet_arp_learn(&c, &m, true, 20 * MS), UNET_ARP_IGNORED);
	}
	for (uint32_t i = 1; i <= UNET_ARP_CACHE_SLOTS; i++)
		assert_int_equal(unet_arp_cache_lookup(&c, htonl(0x0a020000 + i), 30 * MS, mac), 0);
	/* once they expire, their slots take new ones */
	m = arp_msg(1, MAC_EVIL, MAC_EVIL, htonl(0x0a030001), ip4("10.1.0.1"));
	assert_int_equal(unet_arp_learn(&c, &m, true, 2000 * MS), UNET_ARP_LEARNT);
}

/* GCRA: a burst, then the rate; never more over any stretch of time. */
static void test_rate_limiter(void **state)
{
	struct unet_rate r = { 0 };
	uint64_t t0 = 5000 * MS, n = 0;

	(void)state;
	for (int i = 0; i < 20; i++)
		assert_true(unet_rate_take(&r, t0, 20, 20));
	assert_false(unet_rate_take(&r, t0, 20, 20));
	assert_false(unet_rate_take(&r, t0 + 49 * MS, 20, 20));
	assert_true(unet_rate_take(&r, t0 + 50 * MS, 20, 20));
	assert_false(unet_rate_take(&r, t0 + 50 * MS, 20, 20));
	/* a storm: 1000 a second for 10 s -> at most 20 a second */
	r = (struct unet_rate){ 0 };
	for (uint64_t t = 0; t < 10000; t++)
		n += unet_rate_take(&r, t0 + t * MS, 20, 20);
	assert_true(n <= 20 + 20 * 10);
	assert_true(n >= 20 * 10);
	/* idle long enough: the whole burst again, not more */
	n = 0;
	for (int i = 0; i < 100; i++)
		n += unet_rate_take(&r, t0 + 60000 * MS, 20, 20);
	assert_int_equal(n, 20);
	assert_false(unet_rate_take(&(struct unet_rate){ 0 }, t0, 0, 20));
}

/*
 * A peer that never answers, sent to every millisecond for 3.5 s: the
 * sends never wait, the first second asks at most every retry (200 ms),
 * then -EHOSTUNREACH without asking for the negative second, then again.
 */
static void test_arp_resolver_negative_cache(void **state)
{
	struct unet_arp_cache c;
	uint32_t peer = ip4("10.1.0.99");
	unsigned int n[5] = { 0 };
	uint8_t mac[6];
	uint64_t t0 = 10000 * MS;

	(void)state;
	unet_arp_cache_init(&c, 60000 * MS);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0, mac), UNET_ARP_ASK);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 1 * MS, mac), UNET_ARP_WAIT);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 200 * MS, mac), UNET_ARP_ASK);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 999 * MS, mac), UNET_ARP_ASK);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 1000 * MS, mac), UNET_ARP_GAVE_UP);
	assert_true(unet_arp_cache_unreachable(&c, peer, t0 + 1000 * MS));
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 1999 * MS, mac), UNET_ARP_UNREACH);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 2000 * MS, mac), UNET_ARP_ASK);
	assert_int_equal(unet_arp_cache_lookup(&c, peer, t0 + 2000 * MS, mac), -ENOENT);

	unet_arp_cache_init(&c, 60000 * MS);
	for (uint64_t t = 0; t < 3500; t++)
		n[unet_arp_cache_next(&c, peer, t0 + t * MS, mac)]++;
	assert_int_equal(n[UNET_ARP_USE], 0);
	assert_true(n[UNET_ARP_ASK] >= 2 && n[UNET_ARP_ASK] <= 2 * 6);
	assert_int_equal(n[UNET_ARP_GAVE_UP], 2);
	assert_true(n[UNET_ARP_UNREACH] >= 1000);
	/* the answer lands (learnt from unet_neigh): sends go */
	unet_arp_cache_update(&c, peer, MAC_B, t0 + 3500 * MS);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 3501 * MS, mac), UNET_ARP_USE);
	assert_memory_equal(mac, MAC_B, 6);
	/* forgetting (unet_udp__resolve on a negative peer) asks again */
	unet_arp_cache_forget(&c, peer);
	assert_int_equal(unet_arp_cache_next(&c, peer, t0 + 3502 * MS, mac), UNET_ARP_ASK);
}

/* Requests over all peers are rate-limited: 200 new peers at once. */
static void test_arp_resolver_ask_rate(void **state)
{
	struct unet_arp_cache c;
	unsigned int asks = 0, waits = 0;
	uint8_t mac[6];

	(void)state;
	unet_arp_cache_init(&c, 60000 * MS);
	for (uint32_t i = 1; i <= 200; i++) {
		enum unet_arp_next r = unet_arp_cache_next(&c, htonl(0x0a040000 + i), 7000 * MS, mac);

		asks += r == UNET_ARP_ASK;
		waits += r == UNET_ARP_WAIT;
	}
	assert_int_equal(asks, UNET_ARP_ASK_RATE);
	assert_int_equal(waits, 200 - UNET_ARP_ASK_RATE);
	assert_int_equal(unet_arp_cache_next(&c, 0, 7000 * MS, mac), UNET_ARP_UNREACH);
}

/* xorshift64*: the fuzz run's generator, seeded. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/*
 * Seeded fuzz of the parsers and the ARP checks: valid UDP and ARP frames
 * (with and without a VLAN tag), mutated (bytes set, bits flipped, length
 * cut or grown), each parsed from a heap copy of exactly its length so
 * ASan sees any read past it.  Whatever the input: no crash, and what the
 * parser accepts lies inside the frame.
 */
static void test_fuzz_parsers(void **state)
{
	const uint64_t seed = 0x756e65745f756470ull; /* "unet_udp" */
	const unsigned int rounds = 1000000;
	uint64_t rng = seed, ok_udp = 0, ok_arp = 0, learnt = 0;
	struct unet_arp_cache c;
	uint8_t base[2048];

	(void)state;
	unet_arp_cache_init(&c, 1000 * MS);
	for (unsigned int i = 0; i < rounds; i++) {
		uint64_t r = rng_next(&rng);
		uint32_t len, plen = (uint32_t)(r % 200);
		struct unet_udp_frame f;
		struct unet_arp_msg m;
		uint8_t *buf;

		if (r & (1ull << 40)) {
			len = unet_udp_build(base, MAC_B, MAC_A, ip4("10.1.0.1"), ip4("10.1.0.2"),
					     (uint16_t)r, (uint16_t)(r >> 16), plen, (uint16_t)i);
		} else {
			struct unet_arp_msg a = arp_msg((uint16_t)(1 + (r >> 8) % 3), MAC_A, MAC_A,
							(uint32_t)(r >> 20), ip4("10.1.0.1"));

			len = unet_arp_build(base, MAC_B, &a);
		}
		if (r & (1ull << 41)) { /* a VLAN tag */
			memmove(base + 16, base + 12, len - 12);
			base[12] = 0x81;
			base[13] = 0x00;
			base[14] = 0;
			base[15] = 5;
			len += 4;
		}
		for (unsigned int k = 0, nm = (unsigned int)(r >> 44) % 6; k < nm; k++) {
			uint64_t x = rng_next(&rng);
			uint32_t at = (uint32_t)(x % len);

			if (x & 0x100000000ull)
				base[at] = (uint8_t)(x >> 40);
			else
				base[at] ^= (uint8_t)(1u << ((x >> 40) & 7));
		}
		switch ((r >> 50) % 4) {
		case 0:
			len = (uint32_t)(rng_next(&rng) % (len + 1)); /* cut anywhere */
			break;
		case 1:
			len += (uint32_t)(rng_next(&rng) % 16); /* trailing bytes */
			break;
		default:
			break;
		}
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memcpy(buf, base, len);
		if (unet_udp_parse(buf, len, (r >> 53) & 1, &f) == UNET_UDP_OK) {
			ok_udp++;
			assert_true(f.payload_off <= len && f.len <= len - f.payload_off);
		}
		if (unet_arp_parse(buf, len, &m) == 0) {
			ok_arp++;
			assert_true(len >= 42);
			if (unet_arp_learn(&c, &m, (r >> 54) & 1, i * MS) == UNET_ARP_LEARNT) {
				learnt++;
				assert_true(unet_arp_sender_valid(&m));
			}
		}
		free(buf);
	}
	print_message("fuzz: seed 0x%llx, %u inputs: %llu parsed as UDP, %llu as ARP, %llu learnt\n",
		      (unsigned long long)seed, rounds, (unsigned long long)ok_udp,
		      (unsigned long long)ok_arp, (unsigned long long)learnt);
	assert_true(ok_udp > 0 && ok_arp > 0 && learnt > 0);
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
		cmocka_unit_test(test_arp_sender_validation),
		cmocka_unit_test(test_arp_learn_poisoning),
		cmocka_unit_test(test_arp_learn_no_eviction),
		cmocka_unit_test(test_rate_limiter),
		cmocka_unit_test(test_arp_resolver_negative_cache),
		cmocka_unit_test(test_arp_resolver_ask_rate),
		cmocka_unit_test(test_fuzz_parsers),
	};

	return cmocka_run_group_tests_name("udp", tests, NULL, NULL);
}
