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
 *
 * The same for frames in pieces (lib/core/pieces.c, unet_take_rx_desc):
 * true frames cut into 2..6 pieces in chunks on the FILL ring, among
 * hostile descriptors with and without XDP_PKT_CONTD and frames whose
 * pieces lie (no end, more than 18 pieces, longer than a slot, a piece
 * outside its chunk or in a chunk not on the FILL ring).  After each: a
 * message handed out is whole (a true frame arriving on an idle queue
 * comes out byte for byte), inside its slot and within max_payload; a
 * lying frame is never handed out and is counted in rx_bad_pieces; no
 * chunk stays with the library (every piece's chunk is back in the
 * pool) and every slot not handed out is free.
 *
 * Half the true frames are IPv4 (UDP, TCP at a jumbo MTU) for a layer
 * above the core: the layer is handed the whole frame, byte for byte,
 * inside its slot, and nothing of a lying frame; what it delivers comes
 * out, a delivery that points past the frame is refused, a frame it
 * consumes leaves its slot free at once.
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

#include "core/layer.h"
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

/* ---- Frames in pieces ---------------------------------------------------- */

#define P_NFRAMES 64
#define P_SLOT (5 * FRAME) /* 10240: a 9216-byte MTU's frame and more */
#define P_NSLOTS 4
#define P_MAX_PAYLOAD 9208
#define P_ROOM 1790 /* bytes a piece carries, as the kernel fills a chunk */

/* What the layer above the core does with the next IPv4 frame. */
enum rec_verdict { REC_DELIVER, REC_DELIVER_PAST_END, REC_CONSUME, REC__N };

/* A layer that records what the core hands it (rec_rx). */
struct rec {
	struct unet_endpoint *ep;
	enum rec_verdict verdict;
	uint8_t *seen; /* the last frame, copied */
	uint32_t seen_len, calls;
};

struct prig {
	struct unet_endpoint ep;
	struct unet_channel ch;
	struct unet_rx_asm a;
	struct rec rec;
};

static enum unet_layer_verdict rec_rx(void *state, uint16_t proto, uint8_t *frame, uint32_t len,
				      struct unet_recv_desc *desc)
{
	struct rec *r = state;
	uint8_t *slots = (uint8_t *)r->ep->segment + r->ep->jumbo.base;
	uint64_t at;

	(void)proto; /* a hostile descriptor's random bytes may claim anything */
	if (frame >= slots) {
		/* reassembled: whole, inside one slot */
		assert_true(frame + len <= slots + (uint64_t)P_NSLOTS * P_SLOT);
		at = (uint64_t)(frame - slots);
		assert_true(at % P_SLOT + len <= P_SLOT);
	} else {
		/* one piece: inside its chunk */
		at = (uint64_t)(frame - (uint8_t *)r->ep->segment);
		assert_true(at % FRAME + len <= FRAME);
	}
	if (len < UNET_PAYLOAD_OFF)
		return UNET_LAYER_CONSUMED;
	memcpy(r->seen, frame, len);
	r->seen_len = len;
	r->calls++;
	switch (r->verdict) {
	case REC_DELIVER:
		desc->data = frame + UNET_PAYLOAD_OFF;
		desc->len = len - UNET_PAYLOAD_OFF;
		return UNET_LAYER_DELIVER;
	case REC_DELIVER_PAST_END:
		desc->data = frame + UNET_PAYLOAD_OFF;
		desc->len = len; /* UNET_PAYLOAD_OFF bytes past the frame */
		return UNET_LAYER_DELIVER;
	default:
		return UNET_LAYER_CONSUMED;
	}
}

static void rec_destroy(void *state)
{
	(void)state;
}

static const struct unet_layer rec_layer = {
	.name = "rec",
	.rx = rec_rx,
	.destroy = rec_destroy,
};

static void prig_init(struct prig *r)
{
	memset(r, 0, sizeof(*r));
	r->ep.frame_size = FRAME;
	r->ep.nframes = P_NFRAMES;
	r->ep.max_payload = P_MAX_PAYLOAD;
	r->ep.segment = calloc(1, (size_t)P_NFRAMES * FRAME + (size_t)P_SLOT * P_NSLOTS);
	r->ep.by_tag = calloc(UNET_MAX_CHANNELS, sizeof(*r->ep.by_tag));
	assert_non_null(r->ep.segment);
	assert_non_null(r->ep.by_tag);
	assert_int_equal(unet_pool_init(&r->ep.pool, P_NFRAMES, FRAME), 0);
	assert_int_equal(unet_jumbo_init(&r->ep.jumbo, (uint64_t)P_NFRAMES * FRAME, P_SLOT,
					 P_NSLOTS), 0);
	r->ep.jumbo.sg = true;
	r->ch.ep = &r->ep;
	r->ch.tag = TAG;
	r->ch.peer_tag = PEER_TAG;
	r->ep.by_tag[TAG] = &r->ch;
	r->rec.ep = &r->ep;
	r->rec.seen = malloc(P_SLOT);
	assert_non_null(r->rec.seen);
	r->ep.layers[0].layer = &rec_layer;
	r->ep.layers[0].state = &r->rec;
	r->ep.nlayers = 1;
}

static void prig_fini(struct prig *r)
{
	free(r->rec.seen);
	unet_jumbo_fini(&r->ep.jumbo);
	unet_pool_fini(&r->ep.pool);
	free(r->ep.by_tag);
	free(r->ep.segment);
}

/* Keep the FILL ring full, as the library does after each batch, less a
 * few frames that stay free, one being sent and one the application
 * holds (chunks of other owners for the hostile descriptors to name). */
static void prig_refill(struct prig *r)
{
	while (r->ep.pool.nfree > 2)
		unet_pool_get(&r->ep.pool, UNET_FRAME_FILL);
}

/* A chunk on the FILL ring, picked at random; UNET_NO_BUF if none. */
static uint64_t fill_chunk(struct prig *r, uint64_t *s)
{
	uint32_t start = (uint32_t)(fuzz_next(s) % P_NFRAMES);

	for (uint32_t k = 0; k < P_NFRAMES; k++) {
		uint32_t i = (start + k) % P_NFRAMES;

		if (r->ep.pool.owner[i] == UNET_FRAME_FILL)
			return (uint64_t)i * FRAME;
	}
	return UNET_NO_BUF;
}

/* What a lying frame does wrong. */
enum lie { LIE_NONE, LIE_NO_END, LIE_TOO_MANY, LIE_TOO_LONG, LIE_OUTSIDE, LIE_NOT_FILL, LIE__N };

/* One descriptor into the rig; a delivered message is checked and
 * released.  Returns 1 if a message came out (*got: its bytes). */
static int feed(struct prig *r, const struct xdp_desc *xd, uint8_t *got, uint32_t *got_len)
{
	struct unet_recv_desc d;
	uint8_t *seg = r->ep.segment;

	if (!unet_take_rx_desc(&r->ep, &r->a, xd, &d))
		return 0;
	/* a U-Net message within max_payload; a layer's within its frame */
	if (d.layer) {
		assert_ptr_equal(d.layer, &rec_layer);
	} else {
		assert_ptr_equal(d.channel, &r->ch);
		assert_true(d.len <= P_MAX_PAYLOAD);
	}
	if (unet_jumbo_holds(&r->ep.jumbo, d.buf)) {
		assert_true((uint8_t *)d.data >= seg + d.buf);
		assert_true((uint8_t *)d.data + d.len <= seg + d.buf + P_SLOT);
	} else {
		assert_int_equal(r->ep.pool.owner[d.buf / FRAME], UNET_FRAME_RX);
		assert_true((uint8_t *)d.data + d.len <= seg + d.buf + FRAME);
	}
	if (got) {
		memcpy(got, d.data, d.len);
		*got_len = d.len;
	}
	assert_int_equal(unet_endpoint__release(&r->ep, &d, 1), 0);
	return 1;
}

/* A true U-Net frame of payload len (or, ipv4, the same bytes as an
 * IPv4 frame for the layer) cut into pieces on FILL chunks, with one lie
 * (or none).  Returns messages handed out; *sent the frame as sent. */
static int feed_frame(struct prig *r, uint32_t len, enum lie lie, bool ipv4,
		      const uint8_t *payload, uint8_t *got, uint32_t *got_len, uint8_t *sent,
		      uint32_t *sent_len, uint64_t *s)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	uint8_t *frame = malloc(UNET_PAYLOAD_OFF + len + 64);
	uint32_t flen, off = 0, npieces = 0, room = P_ROOM - (uint32_t)(fuzz_next(s) % 600);
	int out = 0;

	assert_non_null(frame);
	flen = unet_wire_build(frame, mac, mac, TAG, PEER_TAG, len);
	memcpy(frame + UNET_PAYLOAD_OFF, payload, len);
	if (ipv4) {
		frame[12] = 0x08;
		frame[13] = 0x00;
	}
	memcpy(sent, frame, flen);
	*sent_len = flen;
	if (lie == LIE_TOO_MANY)
		room = 64; /* pieces of 64 bytes: well over 18 */
	while (off < flen || (lie == LIE_TOO_MANY && npieces <= UNET_MAX_PIECES)) {
		uint64_t chunk = fill_chunk(r, s);
		uint32_t take = flen - off < room ? flen - off : room;
		struct xdp_desc xd;

		if (chunk == UNET_NO_BUF) {
			prig_refill(r);
			chunk = fill_chunk(r, s);
			assert_int_not_equal(chunk, UNET_NO_BUF);
		}
		xd.addr = chunk + XDP_PACKET_HEADROOM + UNET_ALIGN_PAD;
		xd.len = take;
		memcpy((uint8_t *)r->ep.segment + xd.addr, frame + off, take);
		off += take;
		npieces++;
		xd.options = off < flen ? XDP_PKT_CONTD : 0;
		if (lie == LIE_TOO_MANY && off >= flen && npieces <= UNET_MAX_PIECES) {
			off = 0; /* go round again: the chain goes on */
			xd.options = XDP_PKT_CONTD;
		}
		if (lie == LIE_NO_END && !xd.options)
			xd.options = XDP_PKT_CONTD; /* the last piece says more comes */
		if (lie == LIE_OUTSIDE && npieces == 2)
			xd.len = FRAME; /* past its chunk's end */
		if (lie == LIE_NOT_FILL && npieces == 2) {
			/* a chunk being sent */
			for (uint32_t i = 0; i < P_NFRAMES; i++)
				if (r->ep.pool.owner[i] == UNET_FRAME_TX) {
					xd.addr = (uint64_t)i * FRAME + 300;
					break;
				}
		}
		out += feed(r, &xd, got, got_len);
		if (npieces % 8 == 0)
			prig_refill(r);
	}
	free(frame);
	return out;
}

/* Frames in pieces, true and lying, among hostile descriptors. */
static void test_hostile_pieces(void **state)
{
	uint64_t seed = fuzz_seed(FUZZ_SEED ^ 0x9ece5), s, n = fuzz_count(FUZZ_INPUTS / 10);
	uint64_t whole = 0, lies = 0;
	struct prig *r = malloc(sizeof(*r));
	uint8_t *payload = malloc(P_SLOT), *got = malloc(P_SLOT), *sent = malloc(P_SLOT + 64);
	uint64_t layer_whole = 0;
	uint64_t tx;

	(void)state;
	assert_non_null(r);
	assert_non_null(payload);
	assert_non_null(got);
	assert_non_null(sent);
	prig_init(r);
	/* one chunk being sent, one the application holds */
	tx = unet_pool_get(&r->ep.pool, UNET_FRAME_APP);
	assert_int_equal(unet_pool_move(&r->ep.pool, tx, UNET_FRAME_APP, UNET_FRAME_TX), 0);
	unet_pool_get(&r->ep.pool, UNET_FRAME_APP);
	prig_refill(r);
	s = seed;
	print_message("rx pieces fuzz: seed %#llx, %llu rounds\n", (unsigned long long)seed,
		      (unsigned long long)n);
	for (uint64_t i = 0; i < n; i++) {
		bool idle = !r->a.active && !r->a.discard;
		uint64_t bad = r->ep.rx_bad_pieces;
		uint32_t kind = (uint32_t)(fuzz_next(&s) % 4), got_len = 0;

		if (kind == 0) {
			/* a hostile descriptor: anywhere, any length, flagged or not */
			struct xdp_desc xd = { .addr = pick_addr(&s) };
			int64_t idx = unet_pool_index(&r->ep.pool, xd.addr);

			xd.len = pick_len(xd.addr, &s);
			xd.options = fuzz_next(&s) % 2 ? XDP_PKT_CONTD : 0;
			if (idx >= 0)
				write_frame((uint8_t *)r->ep.segment + xd.addr,
					    FRAME - (uint32_t)(xd.addr % FRAME), &s);
			feed(r, &xd, NULL, NULL);
		} else {
			/* a true frame (kind 1, 2) or a lying one (kind 3) */
			enum lie lie = kind == 3 ? (enum lie)(1 + fuzz_next(&s) % (LIE__N - 1)) : LIE_NONE;
			uint32_t len = 1 + (uint32_t)(fuzz_next(&s) % P_MAX_PAYLOAD);

			if (lie == LIE_TOO_LONG)
				len = P_SLOT - UNET_PAYLOAD_OFF;
			if ((lie == LIE_OUTSIDE || lie == LIE_NOT_FILL) && len < 2 * P_ROOM)
				len += 2 * P_ROOM; /* it lies in its second piece */
			bool ipv4 = fuzz_next(&s) % 2;
			uint32_t calls = r->rec.calls, sent_len;
			int out;

			r->rec.verdict = (enum rec_verdict)(fuzz_next(&s) % REC__N);
			for (uint32_t k = 0; k < len; k++)
				payload[k] = (uint8_t)fuzz_next(&s);
			out = feed_frame(r, len, lie, ipv4, payload, got, &got_len, sent, &sent_len,
					 &s);
			if (lie == LIE_NONE && idle && ipv4) {
				/* the layer saw the whole frame, once */
				assert_int_equal(r->rec.calls, calls + 1);
				assert_int_equal(r->rec.seen_len, sent_len);
				assert_memory_equal(r->rec.seen, sent, sent_len);
				assert_int_equal(out, r->rec.verdict == REC_DELIVER);
				if (out) {
					assert_int_equal(got_len, sent_len - UNET_PAYLOAD_OFF);
					assert_memory_equal(got, sent + UNET_PAYLOAD_OFF, got_len);
				}
				layer_whole++;
			} else if (lie == LIE_NONE && idle) {
				assert_int_equal(out, 1);
				assert_int_equal(got_len, len);
				assert_memory_equal(got, payload, len);
				whole++;
			} else if (lie != LIE_NONE && idle) {
				/* nothing of a lying frame reaches the layer */
				assert_int_equal(r->rec.calls, calls);
				assert_int_equal(out, 0);
				if (lie != LIE_NO_END) {
					assert_int_equal(r->ep.rx_bad_pieces, bad + 1);
					lies++;
				}
			}
		}
		/* No chunk stays with the library, no slot leaks. */
		for (uint32_t f = 0; f < P_NFRAMES; f++)
			assert_int_not_equal(r->ep.pool.owner[f], UNET_FRAME_RX);
		assert_int_equal(count_free(&r->ep.pool), r->ep.pool.nfree);
		assert_int_equal(r->ep.jumbo.nfree, P_NSLOTS - (r->a.active ? 1 : 0));
		prig_refill(r);
	}
	print_message("rx pieces fuzz: %llu whole frames, %llu to the layer, %llu lying ones "
		      "refused\n",
		      (unsigned long long)whole, (unsigned long long)layer_whole,
		      (unsigned long long)lies);
	assert_true(whole > n / 20);
	assert_true(layer_whole > n / 20);
	assert_true(lies > n / 40);
	prig_fini(r);
	free(r);
	free(payload);
	free(got);
	free(sent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_rx_ring),
		cmocka_unit_test(test_hostile_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
