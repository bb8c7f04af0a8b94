/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hostile receive ring (lib/core/datapath.c, unet_take_rx): the
 * descriptors on an endpoint's receive ring come from the kernel or, for
 * an emulated endpoint, from unetd, which writes them into memory the
 * library only reads; either may be wrong.  A seeded stream of
 * descriptors (addresses inside and outside the segment, in frames of
 * every owner, at any offset; any length) over frames that are random
 * bytes or U-Net frames for our channel, a stranger's, or with a lying
 * length.  After each: a frame is taken only from a FILL ring and only
 * with its payload inside it and within max_payload; a refused FILL frame
 * is back in the pool; a frame of any other owner (one being sent, one
 * the application holds, a received one) is left as it was; the pool's
 * count matches its owners.  No socket is needed: the endpoint is built
 * by hand, as far as unet_take_rx reads it.  UNET_FUZZ_SEED and
 * UNET_FUZZ_COUNT as in fuzz.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/objects.h"
#include "fuzz.h"

#define NFRAMES 16
#define FRAME 2048
#define MAX_PAYLOAD 1492
#define TAG 7
#define PEER_TAG 9
#define FUZZ_SEED 0x5eedd35cull
#define FUZZ_INPUTS 200000

struct rig {
	struct unet_endpoint ep;
	struct unet_channel ch;
};

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	r->ep.frame_size = FRAME;
	r->ep.nframes = NFRAMES;
	r->ep.max_payload = MAX_PAYLOAD;
	r->ep.segment = calloc(NFRAMES, FRAME);
	r->ep.by_tag = calloc(UNET_MAX_CHANNELS, sizeof(*r->ep.by_tag));
	assert_non_null(r->ep.segment);
	assert_non_null(r->ep.by_tag);
	assert_int_equal(unet_pool_init(&r->ep.pool, NFRAMES, FRAME), 0);
	r->ch.ep = &r->ep;
	r->ch.tag = TAG;
	r->ch.peer_tag = PEER_TAG;
	r->ep.by_tag[TAG] = &r->ch;
}

static void rig_fini(struct rig *r)
{
	unet_pool_fini(&r->ep.pool);
	free(r->ep.by_tag);
	free(r->ep.segment);
}

static uint32_t count_free(const struct unet_pool *p)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nframes; i++)
		n += p->owner[i] == UNET_FRAME_FREE;
	return n;
}

/* Frames of every owner, as a running endpoint has them: most on the
 * FILL ring, some being sent, some held by the application. */
static void give_owners(struct rig *r)
{
	uint64_t b;

	while ((b = unet_pool_get(&r->ep.pool, UNET_FRAME_FILL)) != UNET_NO_BUF &&
	       r->ep.pool.nfree > 4)
		;
	if ((b = unet_pool_get(&r->ep.pool, UNET_FRAME_APP)) != UNET_NO_BUF)
		assert_int_equal(unet_pool_move(&r->ep.pool, b, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	unet_pool_get(&r->ep.pool, UNET_FRAME_APP);
}

/* What a hostile writer puts at the descriptor's address (when inside
 * the segment): random bytes, or a U-Net frame for our channel, a
 * stranger's, or one whose length field lies. */
static void write_frame(uint8_t *f, uint32_t room, uint64_t *s)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	uint32_t len, kind = fuzz_next(s) % 4;

	for (uint32_t i = 0; i < room; i++)
		f[i] = (uint8_t)fuzz_next(s);
	if (kind == 0 || room < 60) /* unet_wire_build pads to 60 bytes */
		return;
	len = (uint32_t)(fuzz_next(s) % (room - UNET_PAYLOAD_OFF + 1));
	unet_wire_build(f, mac, mac, kind == 2 ? (uint16_t)fuzz_next(s) : TAG,
			kind == 2 ? (uint16_t)fuzz_next(s) : PEER_TAG, len);
	if (kind == 3) /* the U-Net header's length lies (high byte) */
		f[UNET_ETH_HLEN + offsetof(struct unet_hdr, len)] ^= (uint8_t)(1 + fuzz_next(s) % 255);
}

static uint64_t pick_addr(uint64_t *s)
{
	uint64_t frame = fuzz_next(s) % (NFRAMES + 2), off;

	switch (fuzz_next(s) % 6) {
	case 0: /* anywhere at all */
		return fuzz_next(s);
	case 1: /* just past the segment, or at its very end */
		return (uint64_t)NFRAMES * FRAME + fuzz_next(s) % 64 - 32;
	case 2: /* near the top of the address space */
		return UINT64_MAX - fuzz_next(s) % (2 * FRAME);
	default: /* in a frame (maybe one past the end), at some offset */
		off = fuzz_next(s) % 4 ? fuzz_next(s) % 512 : fuzz_next(s) % (FRAME + 64);
		return frame * FRAME + off;
	}
}

static uint32_t pick_len(uint64_t addr, uint64_t *s)
{
	uint32_t room = FRAME - (uint32_t)(addr % FRAME);

	switch (fuzz_next(s) % 4) {
	case 0:
		return (uint32_t)fuzz_next(s); /* any 32-bit length */
	case 1:
		return room + (uint32_t)(fuzz_next(s) % 64); /* just past the frame */
	default:
		return (uint32_t)(fuzz_next(s) % (room + 1));
	}
}

static void test_hostile_rx_ring(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_SEED), s, n = fuzz_count(FUZZ_INPUTS), taken = 0;
	struct rig *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	rig_init(r);
	give_owners(r);
	s = seed;
	print_message("rx descriptor fuzz: seed %#llx, %llu descriptors\n",
		      (unsigned long long)seed, (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		struct xdp_desc xd = { .addr = pick_addr(&s) };
		struct unet_recv_desc d;
		int64_t idx = unet_pool_index(&r->ep.pool, xd.addr & ~(uint64_t)(FRAME - 1));
		uint8_t before = idx >= 0 ? r->ep.pool.owner[idx] : UNET_FRAME_FREE;
		uint64_t base = xd.addr - xd.addr % FRAME;
		/* the frame the address falls in: only inside the segment */
		uint8_t *frame = idx >= 0 ? (uint8_t *)r->ep.segment + base : NULL;

		xd.len = pick_len(xd.addr, &s);
		if (frame)
			write_frame(frame + xd.addr % FRAME, FRAME - (uint32_t)(xd.addr % FRAME), &s);
		if (unet_take_rx(&r->ep, &xd, &d)) {
			uint8_t *lo = (uint8_t *)r->ep.segment + xd.addr;

			taken++;
			assert_true(idx >= 0 && before == UNET_FRAME_FILL);
			assert_int_equal(r->ep.pool.owner[idx], UNET_FRAME_RX);
			assert_int_equal(d.buf, base);
			assert_ptr_equal(d.channel, &r->ch);
			assert_true(d.len <= MAX_PAYLOAD);
			assert_true((uint8_t *)d.data >= lo);
			assert_true((uint8_t *)d.data + d.len <= lo + xd.len);
			assert_true((uint8_t *)d.data + d.len <= frame + FRAME);
			/* released, and back on the FILL ring */
			assert_int_equal(unet_pool_put(&r->ep.pool, base, UNET_FRAME_RX), 0);
			assert_int_not_equal(unet_pool_get(&r->ep.pool, UNET_FRAME_FILL), UNET_NO_BUF);
		} else if (idx >= 0 && before == UNET_FRAME_FILL) {
			assert_int_equal(r->ep.pool.owner[idx], UNET_FRAME_FREE);
			/* the writer gave it back unused: refill */
			assert_int_not_equal(unet_pool_get(&r->ep.pool, UNET_FRAME_FILL), UNET_NO_BUF);
		} else if (idx >= 0) {
			assert_int_equal(r->ep.pool.owner[idx], before);
		}
		assert_int_equal(count_free(&r->ep.pool), r->ep.pool.nfree);
	}
	print_message("rx descriptor fuzz: %llu of %llu taken\n", (unsigned long long)taken,
		      (unsigned long long)n);
	/* the stream reached the accepting path, not only the refusals */
	assert_true(taken > n / 100);
	rig_fini(r);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_rx_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
