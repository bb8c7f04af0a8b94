// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_emul_pieces - unetd's gathering and check of an emulated
 * endpoint's frames in pieces (daemon/emul_pieces.c), linked alone: an
 * honest chain comes out whole; pieces outside the segment or their
 * frame, empty ones, a 19th, a frame over the cap are refused and the
 * rest of their frame skipped; the whole frame's lengths must add up and
 * its source MAC be the endpoint's; an IPv4 frame's IP, UDP and TCP
 * lengths must add up to the byte.  Then a seeded fuzz of descriptor
 * streams against a model, the client's segment rewritten between pieces:
 * what comes out is byte for byte what each piece held when it was taken.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "emul_pieces.h"
#include "fuzz.h"
#include "unet_abi.h"
#include "core/pieces.h"

#define FRAME 2048u
#define NFRAMES 64u
#define SEG (FRAME * NFRAMES)
#define CAP (UNET_PAYLOAD_OFF + 8992u)

static uint8_t *segment;
static struct unetd_tx_asm asm_;
static const uint8_t own[6] = { 2, 0, 0, 0, 0, 1 };

static int setup(void **state)
{
	(void)state;
	segment = malloc(SEG);
	/* Exactly cap bytes: ASan sees any write past the cap. */
	asm_ = (struct unetd_tx_asm){ .buf = malloc(CAP), .cap = CAP };
	assert_non_null(segment);
	assert_non_null(asm_.buf);
	for (uint32_t i = 0; i < SEG; i++)
		segment[i] = (uint8_t)(i * 13 + 7);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(segment);
	free(asm_.buf);
	return 0;
}

static enum unetd_piece take(uint64_t addr, uint32_t len, bool more)
{
	struct xdp_desc d = { .addr = addr, .len = len, .options = more ? XDP_PKT_CONTD : 0 };

	return unetd_piece_take(&asm_, segment, SEG, FRAME, &d);
}

static void reset(void)
{
	asm_.active = asm_.discard = asm_.ready = false;
	asm_.len = asm_.pieces = 0;
}

static void test_honest_chain(void **state)
{
	(void)state;
	reset();
	assert_int_equal(take(0 * FRAME + 2, 1790, true), UNETD_PIECE_MORE);
	assert_int_equal(take(5 * FRAME + 2, 1790, true), UNETD_PIECE_MORE);
	assert_int_equal(take(9 * FRAME + 100, 10, false), UNETD_PIECE_FRAME);
	assert_int_equal(asm_.len, 1790 + 1790 + 10);
	assert_memory_equal(asm_.buf, segment + 2, 1790);
	assert_memory_equal(asm_.buf + 1790, segment + 5 * FRAME + 2, 1790);
	assert_memory_equal(asm_.buf + 3580, segment + 9 * FRAME + 100, 10);
	/* The next frame starts afresh. */
	assert_int_equal(take(3 * FRAME, 60, false), UNETD_PIECE_FRAME);
	assert_int_equal(asm_.len, 60);
}

/* A refused piece drops its frame; its later pieces are skipped up to
 * the frame's last, and the frame after that is taken whole. */
static void expect_refused_then_skip(enum unetd_piece why, uint64_t addr, uint32_t len)
{
	assert_int_equal(take(addr, len, true), why);
	assert_int_equal(take(FRAME + 2, 100, true), UNETD_PIECE_SKIP);
	assert_int_equal(take(FRAME + 2, 100, false), UNETD_PIECE_SKIP);
	assert_int_equal(take(2 * FRAME + 2, 200, false), UNETD_PIECE_FRAME);
	assert_int_equal(asm_.len, 200);
}

static void test_bad_pieces(void **state)
{
	(void)state;
	reset();
	/* Second piece outside the segment, past its frame, empty. */
	take(2, 1000, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_DESC, SEG, 10);
	take(2, 1000, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_DESC, SEG - 1, 2);
	take(2, 1000, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_DESC, 4 * FRAME + 2000, 49);
	take(2, 1000, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_DESC, UINT64_MAX - 5, 10);
	take(2, 1000, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_PIECES, 2, 0);
	/* The 19th piece. */
	for (int i = 0; i < UNET_MAX_PIECES; i++)
		assert_int_equal(take((uint64_t)i * FRAME, 10, true), UNETD_PIECE_MORE);
	expect_refused_then_skip(UNETD_PIECE_BAD_PIECES, 2, 10);
	/* Over the cap by one byte; the cap itself is fine. */
	for (int i = 0; i < 4; i++)
		take((uint64_t)i * FRAME, 2048, true);
	expect_refused_then_skip(UNETD_PIECE_BAD_PIECES, 2, CAP - 4 * 2048 + 1);
	for (int i = 0; i < 4; i++)
		take((uint64_t)i * FRAME, 2048, true);
	assert_int_equal(take(0, CAP - 4 * 2048, false), UNETD_PIECE_FRAME);
	assert_int_equal(asm_.len, CAP);
	/* A refused last piece: nothing to skip after it. */
	take(2, 100, true);
	assert_int_equal(take(SEG, 10, false), UNETD_PIECE_BAD_DESC);
	assert_int_equal(take(2, 30, false), UNETD_PIECE_FRAME);
}

static void test_nothing_in_pieces_without_cap(void **state)
{
	struct unetd_tx_asm none = { 0 };
	struct xdp_desc d = { .addr = 2, .len = 100, .options = XDP_PKT_CONTD };

	(void)state;
	assert_int_equal(unetd_piece_take(&none, segment, SEG, FRAME, &d), UNETD_PIECE_BAD_PIECES);
	d.options = 0;
	assert_int_equal(unetd_piece_take(&none, segment, SEG, FRAME, &d), UNETD_PIECE_SKIP);
}

static uint32_t unet_frame(uint8_t *f, uint16_t plen, uint32_t flen)
{
	memset(f, 0, flen);
	memset(f, 0xee, 6);
	memcpy(f + 6, own, 6);
	f[12] = (uint8_t)(UNET_ETH_P >> 8);
	f[13] = (uint8_t)UNET_ETH_P;
	f[14] = UNET_WIRE_VERSION;
	f[16] = 0;
	f[17] = 9;
	f[18] = 0;
	f[19] = 4;
	f[20] = (uint8_t)(plen >> 8);
	f[21] = (uint8_t)plen;
	return flen;
}

static void test_chain_check(void **state)
{
	uint8_t f[CAP + 100];
	uint16_t dt, st, pl;
	uint8_t other[6] = { 2, 0, 0, 0, 0, 2 };

	(void)state;
	unet_frame(f, 5000, UNET_PAYLOAD_OFF + 5000);
	assert_int_equal(unetd_chain_check(f, UNET_PAYLOAD_OFF + 5000, own, 8992, &dt, &st, &pl),
			 UNETD_CHAIN_OK);
	assert_int_equal(dt, 9);
	assert_int_equal(st, 4);
	assert_int_equal(pl, 5000);
	/* Lengths that do not add up, either way. */
	assert_int_equal(unetd_chain_check(f, UNET_PAYLOAD_OFF + 4999, own, 8992, &dt, &st, &pl),
			 UNETD_CHAIN_BAD_FRAME);
	assert_int_equal(unetd_chain_check(f, UNET_PAYLOAD_OFF + 5001, own, 8992, &dt, &st, &pl),
			 UNETD_CHAIN_BAD_FRAME);
	/* Over max_payload, zero, not U-Net, another version, too short. */
	assert_int_equal(unetd_chain_check(f, UNET_PAYLOAD_OFF + 5000, own, 4999, &dt, &st, &pl),
			 UNETD_CHAIN_BAD_FRAME);
	unet_frame(f, 0, 60);
	assert_int_equal(unetd_chain_check(f, 60, own, 8992, &dt, &st, &pl), UNETD_CHAIN_BAD_FRAME);
	unet_frame(f, 10, 60);
	assert_int_equal(unetd_chain_check(f, 60, own, 8992, &dt, &st, &pl), UNETD_CHAIN_OK);
	assert_int_equal(unetd_chain_check(f, 61, own, 8992, &dt, &st, &pl), UNETD_CHAIN_BAD_FRAME);
	f[13] ^= 1;
	assert_int_equal(unetd_chain_check(f, 60, own, 8992, &dt, &st, &pl), UNETD_CHAIN_BAD_FRAME);
	f[13] ^= 1;
	f[14]++;
	assert_int_equal(unetd_chain_check(f, 60, own, 8992, &dt, &st, &pl), UNETD_CHAIN_BAD_FRAME);
	f[14]--;
	assert_int_equal(unetd_chain_check(f, UNET_PAYLOAD_OFF - 1, own, 8992, &dt, &st, &pl),
			 UNETD_CHAIN_BAD_FRAME);
	/* Another source MAC. */
	memcpy(f + 6, other, 6);
	assert_int_equal(unetd_chain_check(f, 60, own, 8992, &dt, &st, &pl),
			 UNETD_CHAIN_FOREIGN_SRC);
}

/* The fuzz: descriptor streams (good pieces, pieces anywhere, every
 * length, flagged or not), the segment rewritten between pieces, against
 * a model of the rules.  A frame that comes out is what its pieces held
 * when each was taken; every refusal is the model's. */
static void test_fuzz(void **state)
{
	uint64_t seed = fuzz_seed(0x6a756d626f5e11ull), n = fuzz_count(200000), s;
	static uint8_t expect[CAP];
	uint32_t exp_len = 0, exp_pieces = 0, frames = 0, refused = 0;
	bool discard = false, active = false;

	(void)state;
	printf("test_emul_pieces fuzz: seed 0x%llx, %llu descriptors\n", (unsigned long long)seed,
	       (unsigned long long)n);
	s = seed;
	reset();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s), addr;
		uint32_t len;
		bool more = (r & 7) < 6; /* mostly long chains: reach 18 and the cap */
		enum unetd_piece want, got;

		switch ((r >> 3) & 7) {
		case 0: /* anywhere at all */
			addr = fuzz_next(&s);
			len = (uint32_t)fuzz_next(&s);
			break;
		case 1: /* near the segment's end */
			addr = SEG - 64 + (fuzz_next(&s) % 128);
			len = (uint32_t)(fuzz_next(&s) % 200);
			break;
		case 2: /* near a frame's end */
			addr = (fuzz_next(&s) % NFRAMES) * FRAME + FRAME - (fuzz_next(&s) % 300);
			len = (uint32_t)(fuzz_next(&s) % 600);
			break;
		default: /* a good piece */
			addr = (fuzz_next(&s) % NFRAMES) * FRAME + 2;
			len = (uint32_t)(fuzz_next(&s) % 2047);
			break;
		}
		/* The model. */
		if (discard) {
			want = UNETD_PIECE_SKIP;
			discard = more;
		} else if (addr >= SEG || len > FRAME - (addr & (FRAME - 1))) {
			want = UNETD_PIECE_BAD_DESC;
			active = false;
			discard = more;
		} else {
			if (!active)
				exp_len = exp_pieces = 0;
			active = true;
			if (!len || exp_pieces >= UNET_MAX_PIECES || exp_len + len > CAP) {
				want = UNETD_PIECE_BAD_PIECES;
				active = false;
				discard = more;
			} else {
				memcpy(expect + exp_len, segment + addr, len);
				exp_len += len;
				exp_pieces++;
				want = more ? UNETD_PIECE_MORE : UNETD_PIECE_FRAME;
				if (!more)
					active = false;
			}
		}
		got = take(addr, len, more);
		if (got != want)
			fail_msg("descriptor %llu (seed 0x%llx): addr %llu len %u more %d: got %d, want %d",
				 (unsigned long long)i, (unsigned long long)seed,
				 (unsigned long long)addr, len, more, got, want);
		assert_true(asm_.len <= asm_.cap);
		if (got == UNETD_PIECE_FRAME) {
			assert_int_equal(asm_.len, exp_len);
			assert_memory_equal(asm_.buf, expect, exp_len);
			frames++;
		} else if (got == UNETD_PIECE_BAD_DESC || got == UNETD_PIECE_BAD_PIECES) {
			refused++;
		}
		/* The client rewrites its segment at any time. */
		if (!(r >> 60))
			for (int k = 0; k < 64; k++)
				segment[fuzz_next(&s) % SEG] = (uint8_t)fuzz_next(&s);
	}
	printf("test_emul_pieces fuzz: %u frames, %u refused\n", frames, refused);
	assert_true(frames > 100 && refused > 100);
}

/* The whole-frame check on frames of random bytes and U-Net frames with
 * a byte or a length changed: it passes only what its rules say. */
static void test_fuzz_chain_check(void **state)
{
	uint64_t seed = fuzz_seed(0x636861696e5f6b31ull), n = fuzz_count(200000), s = seed;
	uint32_t ok = 0;

	(void)state;
	printf("test_emul_pieces chain fuzz: seed 0x%llx, %llu frames\n", (unsigned long long)seed,
	       (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		uint32_t len = (uint32_t)(fuzz_next(&s) % (CAP + 1)), plen;
		uint8_t *f = malloc(len ? len : 1);
		uint16_t dt = 0, st = 0, pl = 0;
		enum unetd_chain got;
		bool want;

		assert_non_null(f);
		/* Random where the check looks (the headers), filler after. */
		for (uint32_t k = 0; k < len && k < 64; k++)
			f[k] = (uint8_t)fuzz_next(&s);
		if (len > 64)
			memset(f + 64, 0x5a, len - 64);
		if ((r & 3) && len >= UNET_PAYLOAD_OFF) {
			/* A U-Net frame, its length right or near. */
			unet_frame(f, 0, UNET_PAYLOAD_OFF);
			plen = len - UNET_PAYLOAD_OFF + (uint32_t)((r >> 8) % 5) - 2;
			f[20] = (uint8_t)(plen >> 8);
			f[21] = (uint8_t)plen;
			if (r & (1u << 16))
				f[(r >> 20) % UNET_PAYLOAD_OFF] ^= (uint8_t)(1u << ((r >> 40) % 8));
		}
		/* Exactly the block's bytes: ASan sees a read past it. */
		got = unetd_chain_check(f, len, own, 8992, &dt, &st, &pl);
		plen = len >= UNET_PAYLOAD_OFF ? (uint32_t)(f[20] << 8 | f[21]) : 0;
		want = len >= UNET_PAYLOAD_OFF && f[12] == 0x88 && f[13] == 0xb5 &&
		       f[14] == UNET_WIRE_VERSION && plen >= 1 && plen <= 8992 &&
		       (UNET_PAYLOAD_OFF + plen == len || (len <= 60 && UNET_PAYLOAD_OFF + plen <= len));
		if (want && memcmp(f + 6, own, 6))
			assert_int_equal(got, UNETD_CHAIN_FOREIGN_SRC);
		else if (want)
			assert_int_equal(got, UNETD_CHAIN_OK);
		else
			assert_int_equal(got, UNETD_CHAIN_BAD_FRAME);
		if (got == UNETD_CHAIN_OK) {
			assert_int_equal(pl, plen);
			assert_int_equal(dt, f[16] << 8 | f[17]);
			assert_int_equal(st, f[18] << 8 | f[19]);
			ok++;
		}
		free(f);
	}
	printf("test_emul_pieces chain fuzz: %u passed the check\n", ok);
	assert_true(ok > 1000);
}

/* An IPv4 frame as the library sends it: proto UDP or TCP, l4 bytes
 * past the IPv4 header (UDP or TCP header and data), DF set. */
static uint32_t ipv4_frame(uint8_t *f, uint8_t proto, uint32_t l4)
{
	uint32_t tot = 20 + l4;

	memset(f, 0x33, 14 + tot);
	memset(f, 0xee, 6);
	memcpy(f + 6, own, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	f[14] = 0x45;
	f[16] = (uint8_t)(tot >> 8);
	f[17] = (uint8_t)tot;
	f[20] = 0x40;
	f[21] = 0;
	f[23] = proto;
	if (proto == 17) {
		f[38] = (uint8_t)(l4 >> 8);
		f[39] = (uint8_t)l4;
	} else {
		f[46] = 5 << 4; /* a 20-byte TCP header */
	}
	return 14 + tot;
}

static void test_chain_ipv4_check(void **state)
{
	uint8_t f[CAP];
	uint32_t len;

	(void)state;
	/* UDP: the lengths add up to the byte. */
	len = ipv4_frame(f, 17, 8 + 8000);
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	/* Bytes past the IPv4 length, or fewer than it says. */
	assert_int_equal(unetd_chain_ipv4_check(f, len + 1), UNETD_CHAIN_BAD_FRAME);
	assert_int_equal(unetd_chain_ipv4_check(f, len - 1), UNETD_CHAIN_BAD_FRAME);
	/* A UDP length that is not the IPv4 payload's, either way. */
	f[39]--;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[39] += 2;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[39]--;
	/* A fragment: more to come, or an offset. */
	f[20] = 0x20;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[20] = 0x40;
	f[21] = 1;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[21] = 0;
	/* IPv4 options, another version, another protocol, not IPv4. */
	f[14] = 0x46;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[14] = 0x65;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[14] = 0x45;
	f[23] = 1;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[23] = 17;
	f[13] = 0x06;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[13] = 0x00;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	/* Shorter than IPv4 and UDP headers. */
	len = ipv4_frame(f, 17, 8);
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	assert_int_equal(unetd_chain_ipv4_check(f, len - 1), UNETD_CHAIN_BAD_FRAME);

	/* TCP: the header inside the segment, at least 20 bytes. */
	len = ipv4_frame(f, 6, 20 + 8000);
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	assert_int_equal(unetd_chain_ipv4_check(f, len + 1), UNETD_CHAIN_BAD_FRAME);
	f[46] = 4 << 4;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	f[46] = 15 << 4;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	len = ipv4_frame(f, 6, 20 + 39);
	f[46] = 15 << 4; /* 60 bytes of header in 59 */
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
	len = ipv4_frame(f, 6, 20);
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_OK);
	/* An IPv4 length too short for a TCP header (the frame agrees). */
	len = ipv4_frame(f, 6, 19);
	f[46] = 0;
	assert_int_equal(unetd_chain_ipv4_check(f, len), UNETD_CHAIN_BAD_FRAME);
}

/* The IPv4 check on frames with random headers and honest ones with a
 * byte or a length changed, against a model of its rules; exactly the
 * frame's bytes are allocated, so ASan sees any read past them. */
static void test_fuzz_chain_ipv4_check(void **state)
{
	uint64_t seed = fuzz_seed(0x697076345f636b31ull), n = fuzz_count(200000), s = seed;
	uint32_t ok = 0;

	(void)state;
	printf("test_emul_pieces IPv4 chain fuzz: seed 0x%llx, %llu frames\n",
	       (unsigned long long)seed, (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = fuzz_next(&s);
		uint32_t len = (uint32_t)(fuzz_next(&s) % (CAP + 1)), tot, ulen, doff;
		uint8_t *f = malloc(len ? len : 1), *h = malloc(CAP);
		bool want;

		assert_non_null(f);
		assert_non_null(h);
		if ((r & 3) && len >= 14 + 20 + 20) {
			/* Honest, then perhaps a header byte or a length off. */
			ipv4_frame(h, (r & 4) ? 17 : 6, len - 34);
			if (r & (1u << 8))
				h[12 + (r >> 16) % 36] ^= (uint8_t)(1u << ((r >> 40) % 8));
			if (r & (1u << 9))
				h[17] = (uint8_t)(h[17] + (uint8_t)((r >> 48) % 5) - 2);
		} else {
			for (uint32_t k = 0; k < 64; k++)
				h[k] = (uint8_t)fuzz_next(&s);
			if (r & 4) { /* an IPv4 header, the rest random */
				h[12] = 0x08;
				h[13] = 0x00;
				h[14] = 0x45;
				h[23] = (r & 8) ? 17 : 6;
			}
		}
		memcpy(f, h, len < 64 ? len : 64);
		if (len > 64)
			memset(f + 64, 0x5a, len - 64);
		want = len >= 42 && f[12] == 0x08 && f[13] == 0 && f[14] == 0x45 &&
		       (f[23] == 17 || f[23] == 6);
		if (want) {
			tot = (uint32_t)(f[16] << 8 | f[17]);
			want = 14 + tot == len && !((f[20] << 8 | f[21]) & 0x3fff);
			if (want && f[23] == 17) {
				ulen = (uint32_t)(f[38] << 8 | f[39]);
				want = ulen == tot - 20;
			} else if (want) {
				doff = (f[46] >> 4) * 4u;
				want = tot >= 40 && doff >= 20 && doff <= tot - 20;
			}
		}
		assert_int_equal(unetd_chain_ipv4_check(f, len),
				 want ? UNETD_CHAIN_OK : UNETD_CHAIN_BAD_FRAME);
		ok += want;
		free(f);
		free(h);
	}
	printf("test_emul_pieces IPv4 chain fuzz: %u passed the check\n", ok);
	assert_true(ok > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest_chain),
		cmocka_unit_test(test_bad_pieces),
		cmocka_unit_test(test_nothing_in_pieces_without_cap),
		cmocka_unit_test(test_chain_check),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_fuzz_chain_check),
		cmocka_unit_test(test_chain_ipv4_check),
		cmocka_unit_test(test_fuzz_chain_ipv4_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
