// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tcp_check - unetd's check of the TCP segments an emulated endpoint
 * sends (daemon/tcp_check.c), on crafted frames: what lib/tcp sends
 * passes; a foreign source address, a port not held (or held on another
 * address), every malformed header (version, IP options, protocol,
 * fragment, lengths, the data offset) is refused with its reason; and a
 * seeded fuzz whose accepted frames are checked against those rules.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "unetd.h"

#define FRAME 60 /* 14 + 20 + 20, padded to Ethernet's minimum */

static uint32_t ip(const char *s)
{
	uint32_t a;

	inet_pton(AF_INET, s, &a);
	return a;
}

/* A SYN from saddr:sport with a 20-byte header in f (FRAME bytes). */
static void segment(uint8_t *f, uint32_t saddr, uint16_t sport)
{
	memset(f, 0, FRAME);
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 40; /* IP total length */
	f[20] = 0x40; /* DF: allowed */
	f[22] = 64;
	f[23] = IPPROTO_TCP;
	memcpy(f + 26, &saddr, 4);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = 0x1f; /* to 8080 */
	f[37] = 0x90;
	f[46] = 5 << 4; /* data offset: 5 words */
	f[47] = 0x02;
}

/* Two ports held: 10.0.0.2:7000 and 10.0.0.2:7001. */
static struct unetd_tcp_port held2 = { .lport = 7001, .kfd = -1 };
static struct unetd_tcp_port held = { .lport = 7000, .kfd = -1, .next = &held2 };

static int setup(void **state)
{
	(void)state;
	held.laddr = held2.laddr = ip("10.0.0.2");
	return 0;
}

static void test_own_ports_pass(void **state)
{
	uint8_t f[FRAME + 1500];

	(void)state;
	segment(f, ip("10.0.0.2"), 7000);
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_OK);
	segment(f, ip("10.0.0.2"), 7001);
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_OK);
	/* Options and data inside the lengths. */
	f[17] = 40 + 12 + 100;
	f[46] = 8 << 4;
	assert_int_equal(unetd_tcp_check_frame(f, 14 + 152, &held), UNETD_TCP_OK);
	/* The largest data offset that fits. */
	f[46] = 15 << 4;
	assert_int_equal(unetd_tcp_check_frame(f, 14 + 152, &held), UNETD_TCP_OK);
}

static void test_foreign_source(void **state)
{
	uint8_t f[FRAME];

	(void)state;
	segment(f, ip("10.0.0.3"), 7000); /* another address, a port held elsewhere */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_FOREIGN_ADDR);
	segment(f, ip("10.0.0.2"), 7002); /* a port not held */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_FOREIGN_PORT);
	segment(f, ip("10.0.0.2"), 0);
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_FOREIGN_PORT);
	/* An endpoint with no port holds nothing. */
	segment(f, ip("10.0.0.2"), 7000);
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, NULL), UNETD_TCP_FOREIGN_ADDR);
}

static void test_malformed(void **state)
{
	uint8_t f[FRAME];

	(void)state;
	segment(f, ip("10.0.0.2"), 7000);
	/* Too short to hold the headers, whatever the lengths say. */
	assert_int_equal(unetd_tcp_check_frame(f, 14 + 20 + 19, &held), UNETD_TCP_BAD_FRAME);
	f[12] = 0x86; /* not IPv4 */
	f[13] = 0xdd;
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[14] = 0x46; /* IP options */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[14] = 0x65; /* not version 4 */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[23] = IPPROTO_UDP;
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[20] = 0x20; /* more fragments */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[21] = 1; /* a fragment's offset */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
}

static void test_lengths(void **state)
{
	uint8_t f[FRAME];

	(void)state;
	segment(f, ip("10.0.0.2"), 7000);
	f[17] = 39; /* IP length shorter than the headers */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[17] = FRAME - 14 + 1; /* past the frame */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
	segment(f, ip("10.0.0.2"), 7000);
	f[16] = 0xff; /* far past it */
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
}

static void test_data_offset(void **state)
{
	uint8_t f[FRAME];

	(void)state;
	for (unsigned int words = 0; words < 16; words++) {
		segment(f, ip("10.0.0.2"), 7000);
		f[46] = (uint8_t)(words << 4);
		/* 20 bytes of TCP in the IP length: only 5 words fit, and fewer
		 * than 5 are no header. */
		assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held),
				 words == 5 ? UNETD_TCP_OK : UNETD_TCP_BAD_FRAME);
	}
	/* The frame's padding does not count: the IP length decides. */
	segment(f, ip("10.0.0.2"), 7000);
	f[46] = 6 << 4;
	assert_int_equal(unetd_tcp_check_frame(f, FRAME, &held), UNETD_TCP_BAD_FRAME);
}

/* A fixed-seed generator (xorshift64): the same frames every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Seeded fuzz: 200 000 frames, each in a heap block of exactly its
 * length (so that ASan sees any read past it), of every length 0..1600:
 * lib/tcp-like segments with random bytes flipped, or random bytes.
 * Every frame the check lets go must be, by the test's own reading,
 * IPv4 without options, TCP, not a fragment, its lengths inside the
 * frame, and from a port held on its address.
 */
static void test_fuzz(void **state)
{
	uint64_t seed = 0x7463705f636865ULL;
	unsigned int ok = 0;

	(void)state;
	for (unsigned int i = 0; i < 200000; i++) {
		uint32_t len = (uint32_t)(rnd(&seed) % 1601);
		uint8_t base[FRAME], *f = malloc(len ? len : 1);
		uint32_t saddr;
		uint16_t tot, sport;

		assert_non_null(f);
		if (i % 2) {
			for (uint32_t k = 0; k < len; k++)
				f[k] = (uint8_t)rnd(&seed);
		} else {
			segment(base, ip(rnd(&seed) % 4 ? "10.0.0.2" : "10.0.0.3"),
				(uint16_t)(7000 + rnd(&seed) % 3));
			base[17] = (uint8_t)(len >= 14 ? len - 14 : 0);
			base[16] = (uint8_t)(len >= 14 ? (len - 14) >> 8 : 0);
			for (uint32_t k = 0; k < len; k++)
				f[k] = k < FRAME ? base[k] : (uint8_t)rnd(&seed);
			for (unsigned int n = rnd(&seed) % 4; n && len; n--)
				f[rnd(&seed) % len] = (uint8_t)rnd(&seed);
		}
		if (unetd_tcp_check_frame(f, len, &held) == UNETD_TCP_OK) {
			ok++;
			assert_true(len >= FRAME - 6 && f[12] == 0x08 && f[13] == 0 && f[14] == 0x45);
			assert_int_equal(f[23], IPPROTO_TCP);
			tot = (uint16_t)(f[16] << 8 | f[17]);
			assert_true(tot >= 40 && 14u + tot <= len && !((f[20] << 8 | f[21]) & 0x3fff));
			assert_true((f[46] >> 4) * 4u >= 20 && (f[46] >> 4) * 4u <= tot - 20u);
			memcpy(&saddr, f + 26, 4);
			sport = (uint16_t)(f[34] << 8 | f[35]);
			assert_int_equal(saddr, ip("10.0.0.2"));
			assert_true(sport == 7000 || sport == 7001);
		}
		free(f);
	}
	/* The mutated segments must reach the accepting path too, or the
	 * invariants above were never exercised. */
	assert_true(ok > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_own_ports_pass, setup),
		cmocka_unit_test_setup(test_foreign_source, setup),
		cmocka_unit_test_setup(test_malformed, setup),
		cmocka_unit_test_setup(test_lengths, setup),
		cmocka_unit_test_setup(test_data_offset, setup),
		cmocka_unit_test_setup(test_fuzz, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
