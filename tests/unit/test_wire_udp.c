/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_wire_udp.c - routable channels' frames in user space
 * (lib/core/wire_udp.c), over IPv4 and IPv6: what the builder writes
 * parses back to the same fields for every payload size (over IPv6 with
 * a UDP checksum computed here independently); each malformation the
 * XDP program drops (bpf/xdp_chan.h, xdp_chan6.h) the parser refuses
 * too, and over IPv6 a wrong checksum; and a seeded fuzz (fuzz.h)
 * of mutated and cut frames, each in a heap block of its exact length
 * so that ASan sees any read past it, where every accepted frame is
 * checked against the rules again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/internal.h"
#include "fuzz.h"

#define PORT 61955

static const struct unet_wire_udp W = {
	.dst_mac = { 2, 0, 0, 0, 0, 2 },
	.src_mac = { 2, 0, 0, 0, 0, 1 },
	.saddr = 0x0100000a, /* 10.0.0.1 in network order on little endian: only compared */
	.daddr = 0x0200000a,
	.sport = 0xc123,
	.dport = PORT,
	.dst_tag = 7,
	.src_tag = 9,
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static struct unet_wire_udp w6(void)
{
	struct unet_wire_udp w = W;
	static const uint8_t sa[16] = { 0xfd, 0, 0, 1, [15] = 1 };
	static const uint8_t da[16] = { 0xfe, 0x80, [8] = 0x12, [15] = 0xff };

	w.v6 = true;
	memcpy(w.saddr6, sa, 16);
	memcpy(w.daddr6, da, 16);
	return w;
}

/* The ones' complement sum of an IPv6 UDP datagram with its pseudo
 * header, folded: 0xffff when its checksum is right.  Written apart from
 * the library's (byte pairs, 32-bit accumulator). */
static uint32_t udp6_sum(const uint8_t *f, uint32_t ulen)
{
	const uint8_t *ip = f + 14, *u = ip + 40;
	uint32_t s = 0;

	for (int i = 8; i < 40; i += 2)
		s += get16(ip + i);
	s += ulen + 17;
	for (uint32_t i = 0; i < ulen; i += 2)
		s += (uint32_t)(u[i] << 8) | (i + 1 < ulen ? u[i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static void test_roundtrip_every_size(void **state)
{
	static uint8_t f[2048];

	(void)state;
	for (uint32_t n = 1; n <= 1472; n++) {
		struct unet_wire_udp got;
		uint32_t flen, off, len;

		memset(f, 0xee, sizeof(f));
		flen = unet_wire_udp_build(f, &W, n);
		assert_int_equal(flen, n + UNET_UDP_PAYLOAD_OFF < 60 ? 60 : n + UNET_UDP_PAYLOAD_OFF);
		assert_int_equal(unet_wire_udp_parse(f, flen, PORT, &got, &off, &len), 0);
		assert_int_equal(off, UNET_UDP_PAYLOAD_OFF);
		assert_int_equal(len, n);
		assert_int_equal(got.saddr, W.saddr);
		assert_int_equal(got.daddr, W.daddr);
		assert_int_equal(got.sport, W.sport);
		assert_int_equal(got.dst_tag, W.dst_tag);
		assert_int_equal(got.src_tag, W.src_tag);
		assert_memory_equal(got.src_mac, W.src_mac, 6);
		assert_int_equal(get16(f + 40), 0);	      /* no UDP checksum */
		assert_int_equal(get16(f + 20) & 0x4000, 0x4000); /* DF */
		/* the IPv4 header checksum sums to 0xffff */
		{
			uint32_t s = 0;

			for (int i = 0; i < 20; i += 2)
				s += get16(f + 14 + i);
			while (s >> 16)
				s = (s & 0xffff) + (s >> 16);
			assert_int_equal(s, 0xffff);
		}
	}
}

/* A copy of the good frame, mutated, refused: in the malformed tests,
 * whose good, f, flen, got, off and len it uses. */
#define REFUSED(mutate)                                                                  \
	do {                                                                             \
		memcpy(f, good, sizeof(f));                                              \
		mutate;                                                                  \
		assert_int_equal(unet_wire_udp_parse(f, flen, PORT, &got, &off, &len), -EINVAL); \
	} while (0)

/* One good frame, then each malformation refused. */
static void test_malformed_refused(void **state)
{
	uint8_t good[128], f[128];
	struct unet_wire_udp got;
	uint32_t flen, off, len;

	(void)state;
	flen = unet_wire_udp_build(good, &W, 40);
	assert_int_equal(unet_wire_udp_parse(good, flen, PORT, &got, &off, &len), 0);
	assert_int_equal(unet_wire_udp_parse(good, flen, PORT + 1, &got, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_udp_parse(good, flen - 1, PORT, &got, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_udp_parse(good, 49, PORT, &got, &off, &len), -EINVAL);
	REFUSED(f[12] = 0x86);		     /* not IPv4 */
	REFUSED(f[14] = 0x46);		     /* IP options */
	REFUSED(f[14] = 0x65);		     /* version 6 */
	REFUSED(f[23] = 6);		     /* TCP */
	REFUSED(f[20] |= 0x20);		     /* MF */
	REFUSED(f[21] = 1);		     /* fragment offset */
	REFUSED(f[17]++);		     /* total length past the frame */
	REFUSED(f[39]++);		     /* UDP length */
	REFUSED(f[41] = 1);		     /* a checksum */
	REFUSED(f[42] = 2);		     /* U-Net version */
	REFUSED(f[49]--);		     /* U-Net len short of the datagram */
	REFUSED((f[48] = 0, f[49] = 0));     /* U-Net len 0 */
}

static void test_roundtrip6_every_size(void **state)
{
	static uint8_t f[2048];
	struct unet_wire_udp w = w6();

	(void)state;
	for (uint32_t n = 1; n <= 1452; n++) {
		struct unet_wire_udp got;
		uint32_t flen, off, len;

		memset(f, 0xee, sizeof(f));
		for (uint32_t i = 0; i < n; i++)
			f[UNET_UDP6_PAYLOAD_OFF + i] = (uint8_t)(i * 7 + n);
		flen = unet_wire_udp_build(f, &w, n);
		assert_int_equal(flen, n + UNET_UDP6_PAYLOAD_OFF);
		assert_int_equal(get16(f + 12), 0x86dd);
		assert_int_equal(f[14] >> 4, 6);
		assert_int_equal(get16(f + 18), n + 16); /* payload length */
		assert_int_equal(f[20], 17);		  /* next header UDP: no extension */
		assert_int_equal(f[21], 64);		  /* hop limit */
		assert_int_not_equal(get16(f + 60), 0);	  /* a checksum, never 0 */
		assert_int_equal(udp6_sum(f, n + 16), 0xffff);
		assert_int_equal(unet_wire_udp_parse(f, flen, PORT, &got, &off, &len), 0);
		assert_true(got.v6);
		assert_int_equal(off, UNET_UDP6_PAYLOAD_OFF);
		assert_int_equal(len, n);
		assert_memory_equal(got.saddr6, w.saddr6, 16);
		assert_memory_equal(got.daddr6, w.daddr6, 16);
		assert_int_equal(got.sport, w.sport);
		assert_int_equal(got.dst_tag, w.dst_tag);
		assert_int_equal(got.src_tag, w.src_tag);
		assert_memory_equal(got.src_mac, w.src_mac, 6);
	}
}

/* One good IPv6 frame, then each malformation refused: those XDP drops,
 * and a wrong checksum, which only the library sees. */
static void test_malformed6_refused(void **state)
{
	struct unet_wire_udp w = w6(), got;
	uint8_t good[160], f[160];
	uint32_t flen, off, len;

	(void)state;
	memset(good, 0x5a, sizeof(good));
	flen = unet_wire_udp_build(good, &w, 40);
	assert_int_equal(unet_wire_udp_parse(good, flen, PORT, &got, &off, &len), 0);
	/* Ethernet padding after the datagram is not payload */
	assert_int_equal(unet_wire_udp_parse(good, flen + 4, PORT, &got, &off, &len), 0);
	assert_int_equal(len, 40);
	assert_int_equal(unet_wire_udp_parse(good, flen, PORT + 1, &got, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_udp_parse(good, flen - 1, PORT, &got, &off, &len), -EINVAL);
	assert_int_equal(unet_wire_udp_parse(good, 69, PORT, &got, &off, &len), -EINVAL);
	REFUSED(f[14] = 0x40);		     /* version 4 in an IPv6 frame */
	REFUSED(f[20] = 0);		     /* hop-by-hop options first */
	REFUSED(f[20] = 44);		     /* a fragment header */
	REFUSED(f[19]++);		     /* payload length past the frame */
	REFUSED(f[19]--);		     /* payload length short of UDP's */
	REFUSED(f[59]++);		     /* UDP length */
	REFUSED((f[60] = 0, f[61] = 0));     /* no checksum */
	REFUSED(f[61] ^= 1);		     /* a wrong checksum */
	REFUSED(f[29] ^= 1);		     /* the source address: the sum changes */
	REFUSED(f[UNET_UDP6_PAYLOAD_OFF + 7] ^= 0x80); /* the payload: likewise */
	REFUSED(f[62] = 2);		     /* U-Net version */
	REFUSED(f[69]--);		     /* U-Net len short of the datagram */
}

/* Whether an accepted frame keeps every rule. */
static void check_accepted(const uint8_t *f, uint32_t flen, uint32_t off, uint32_t len)
{
	uint32_t tot = get16(f + 16);

	assert_int_equal(get16(f + 12), 0x0800);
	assert_int_equal(f[14], 0x45);
	assert_int_equal(f[23], 17);
	assert_int_equal(get16(f + 20) & 0x3fff, 0);
	assert_true(14 + tot <= flen);
	assert_int_equal(get16(f + 36), PORT);
	assert_int_equal(get16(f + 38), tot - 20);
	assert_int_equal(get16(f + 40), 0);
	assert_int_equal(f[42], UNET_WIRE_VERSION);
	assert_int_equal(off, UNET_UDP_PAYLOAD_OFF);
	assert_true(len >= 1 && off + len == 14 + tot && off + len <= flen);
}

/* The same for an accepted IPv6 frame, its checksum included. */
static void check_accepted6(const uint8_t *f, uint32_t flen, uint32_t off, uint32_t len)
{
	uint32_t plen = get16(f + 18);

	assert_int_equal(get16(f + 12), 0x86dd);
	assert_int_equal(f[14] >> 4, 6);
	assert_int_equal(f[20], 17);
	assert_true(14 + 40 + plen <= flen);
	assert_int_equal(get16(f + 56), PORT);
	assert_int_equal(get16(f + 58), plen);
	assert_int_not_equal(get16(f + 60), 0);
	assert_int_equal(udp6_sum(f, plen), 0xffff);
	assert_int_equal(f[62], UNET_WIRE_VERSION);
	assert_int_equal(off, UNET_UDP6_PAYLOAD_OFF);
	assert_true(len >= 1 && off + len == 14 + 40 + plen && off + len <= flen);
}

static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x6368616e5f756470ull), s = seed;
	uint64_t n = fuzz_count(200000), accepted = 0, accepted6 = 0;
	uint8_t good[1600];

	(void)state;
	print_message("wire_udp fuzz: seed %#llx, %llu frames\n", (unsigned long long)seed,
		      (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		uint32_t plen = 1 + (uint32_t)(r % 1500), flen, off, len;
		bool v6 = (r >> 24) & 1;
		struct unet_wire_udp w = v6 ? w6() : W;
		uint32_t hdrs = v6 ? UNET_UDP6_PAYLOAD_OFF : UNET_UDP_PAYLOAD_OFF;
		uint8_t *f;
		struct unet_wire_udp got;

		if (v6 && plen > 1480)
			plen = 1480;
		for (uint32_t b = 0; b < plen; b++)
			good[hdrs + b] = (uint8_t)(b + i);
		flen = unet_wire_udp_build(good, &w, plen);
		/* mutate up to 3 header bytes (a few past them too), then
		 * maybe cut or extend */
		for (int m = (int)((r >> 16) % 4); m > 0; m--) {
			uint64_t x = fuzz_next(&s);

			good[x % (hdrs + 2)] = (uint8_t)(x >> 32);
		}
		switch ((r >> 20) % 4) {
		case 0:
			flen = (uint32_t)(fuzz_next(&s) % (flen + 1));
			break;
		case 1:
			flen += (uint32_t)(fuzz_next(&s) % 32);
			if (flen > sizeof(good))
				flen = sizeof(good);
			break;
		default:
			break;
		}
		f = malloc(flen ? flen : 1);
		assert_non_null(f);
		memcpy(f, good, flen);
		if (unet_wire_udp_parse(f, flen, PORT, &got, &off, &len) == 0) {
			if (got.v6) {
				check_accepted6(f, flen, off, len);
				accepted6++;
			} else {
				check_accepted(f, flen, off, len);
			}
			accepted++;
		}
		free(f);
	}
	print_message("wire_udp fuzz: %llu accepted (%llu IPv6)\n", (unsigned long long)accepted,
		      (unsigned long long)accepted6);
	/* the fuzz must reach both sides of the parser, in both families */
	assert_true(accepted > 0 && accepted < n);
	assert_true(accepted6 > 0 && accepted6 < accepted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_every_size),
		cmocka_unit_test(test_malformed_refused),
		cmocka_unit_test(test_roundtrip6_every_size),
		cmocka_unit_test(test_malformed6_refused),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
