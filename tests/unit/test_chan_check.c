// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_chan_check - unetd's check of the frames an emulated endpoint
 * sends on a routable channel (daemon/chan_check.c): the library's own
 * frame (lib/core/wire_udp.c builds it) passes at every size; each field
 * changed alone is refused with its reason; and a seeded fuzz of mutated
 * frames (ASan sees any read past the frame) whose verdict must agree
 * with a model: a frame passes if and only if it is, byte for byte but
 * its source MAC and payload, the frame the library builds for one of
 * the sender's channels and the message length its U-Net header gives.
 * The same for the IPv6 form (test_*6), and each family refused on the
 * other's channel.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chan_check.h"
#include "core/internal.h"
#include "fuzz.h"

#define PORT 61955
#define MAX_PAYLOAD 1464
#define NCHANS 3
#define PAYLOAD6 UNET_UDP6_PAYLOAD_OFF

static struct unetd_chan_wire chans[NCHANS];
/* The sender's IPv6 routable channels, tags 8, 9, 10. */
static struct unetd_chan_wire chans6[NCHANS];

static uint32_t ip(const char *s)
{
	uint32_t a;

	inet_pton(AF_INET, s, &a);
	return a;
}

static void setup_chans(void)
{
	static const uint8_t macs[NCHANS][6] = { { 2, 0, 0, 0, 0, 1 },
						 { 2, 0, 0, 0, 0, 2 },
						 { 2, 0, 0, 0, 0, 1 } };
	static const uint16_t tags[NCHANS][2] = { { 2, 1 }, { 3, 7 }, { 4, 1 } };

	for (int i = 0; i < NCHANS; i++) {
		memcpy(chans[i].dst_mac, macs[i], 6);
		chans[i].saddr = ip("10.201.0.2");
		chans[i].daddr = ip(i == 1 ? "10.201.0.3" : "10.201.0.1");
		chans[i].tag = tags[i][0];
		chans[i].peer_tag = tags[i][1];
		chans[i].sport = unet_chan_sport(tags[i][0]);
		chans[i].dport = PORT;
		chans[i].max_payload = MAX_PAYLOAD;
	}
	for (int i = 0; i < NCHANS; i++) {
		memset(&chans6[i], 0, sizeof(chans6[i]));
		memcpy(chans6[i].dst_mac, macs[i], 6);
		chans6[i].v6 = 1;
		inet_pton(AF_INET6, "fd01::2", chans6[i].saddr6);
		inet_pton(AF_INET6, i == 1 ? "fd01::3" : "fd01::1", chans6[i].daddr6);
		chans6[i].tag = (uint16_t)(8 + i);
		chans6[i].peer_tag = tags[i][1];
		chans6[i].sport = unet_chan_sport(chans6[i].tag);
		chans6[i].dport = PORT;
		chans6[i].max_payload = MAX_PAYLOAD;
	}
	/* One link-local: its peer and ours differ from the others' in
	 * every byte that the global ones share. */
	inet_pton(AF_INET6, "fe80::2", chans6[2].saddr6);
	inet_pton(AF_INET6, "fe80::1", chans6[2].daddr6);
}

/* The sender's routable channels (tag 5 is a raw channel of its own). */
static const struct unetd_chan_wire *lookup(void *ctx, uint16_t tag)
{
	(void)ctx;
	for (int i = 0; i < NCHANS; i++) {
		if (chans[i].tag == tag)
			return &chans[i];
		if (chans6[i].tag == tag)
			return &chans6[i];
	}
	return NULL;
}

static void to_wire(const struct unetd_chan_wire *c, struct unet_wire_udp *w)
{
	static const uint8_t ours[6] = { 2, 0, 0, 0, 0, 0x42 };

	memset(w, 0, sizeof(*w));
	memcpy(w->dst_mac, c->dst_mac, 6);
	memcpy(w->src_mac, ours, 6);
	w->saddr = c->saddr;
	w->daddr = c->daddr;
	w->v6 = c->v6;
	memcpy(w->saddr6, c->saddr6, 16);
	memcpy(w->daddr6, c->daddr6, 16);
	w->sport = c->sport;
	w->dport = c->dport;
	w->dst_tag = c->peer_tag;
	w->src_tag = c->tag;
}

/* The library's frame of plen payload bytes on channel c, in f. */
static uint32_t build(uint8_t *f, const struct unetd_chan_wire *c, uint32_t plen)
{
	struct unet_wire_udp w;
	uint32_t len;

	uint32_t off = c->v6 ? PAYLOAD6 : UNET_UDP_PAYLOAD_OFF;

	to_wire(c, &w);
	memset(f, 0, off + plen + 60);
	/* The payload first: over IPv6 the UDP checksum covers it. */
	for (uint32_t i = 0; i < plen; i++)
		f[off + i] = (uint8_t)(i * 7 + 1);
	len = unet_wire_udp_build(f, &w, plen);
	return len;
}

static enum unetd_chan_verdict check(const uint8_t *f, uint32_t len)
{
	/* A copy of exactly len bytes: ASan sees any read past it. */
	uint8_t *copy = malloc(len ? len : 1);
	enum unetd_chan_verdict v;

	assert_non_null(copy);
	memcpy(copy, f, len);
	v = unetd_chan_check_frame(copy, len, PORT, lookup, NULL);
	free(copy);
	return v;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void recsum(uint8_t *f)
{
	uint8_t *h = f + 14;
	uint32_t sum = 0;

	put16(h + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(h + 10, (uint16_t)~sum);
}

/* The UDP checksum of an IPv6 frame f of len bytes made right again
 * after a change, as RFC 8200 8.1 has it (written here, not taken from
 * the library, so that the test does not agree with the check by
 * sharing its code). */
static void recsum6(uint8_t *f, uint32_t len)
{
	uint8_t *ip = f + 14, *udp = ip + 40;
	uint32_t ulen = (uint32_t)(ip[4] << 8 | ip[5]), sum = 0;

	if (len < 62 || ulen < 8 || 54 + ulen > len)
		return;
	put16(udp + 6, 0);
	for (int i = 8; i < 40; i += 2)
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	sum += 17 + ulen;
	for (uint32_t i = 0; i < ulen; i += 2)
		sum += (uint32_t)(udp[i] << 8 | (i + 1 < ulen ? udp[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	put16(udp + 6, (uint16_t)(sum ? sum : 0xffff));
}

static uint8_t frame[UNET_UDP_PAYLOAD_OFF + MAX_PAYLOAD + 128];

static void test_honest(void **state)
{
	(void)state;
	setup_chans();
	for (int c = 0; c < NCHANS; c++)
		for (uint32_t n = 1; n <= MAX_PAYLOAD; n++) {
			assert_int_equal(check(frame, build(frame, &chans[c], n)), UNETD_CHAN_OK);
			assert_int_equal(check(frame, build(frame, &chans6[c], n)), UNETD_CHAN_OK);
		}
}

/* One change to a channel's 16-byte frame, and the verdict it must get:
 * one() on IPv4 channel 0, one6() on IPv6 channel 8. */
static void one_named(const struct unetd_chan_wire *c, void (*change)(uint8_t *f, uint32_t *len),
		      enum unetd_chan_verdict want, const char *name)
{
	uint32_t len = build(frame, c, 16);
	enum unetd_chan_verdict got;

	change(frame, &len);
	got = check(frame, len);
	if (got != want)
		fail_msg("%s: verdict %d, want %d", name, got, want);
}
#define one(change, want) one_named(&chans[0], change, want, #change)
#define one6(change, want) one_named(&chans6[0], change, want, #change)

static void c_saddr(uint8_t *f, uint32_t *l) { (void)l; f[29] ^= 1; recsum(f); }
static void c_sport(uint8_t *f, uint32_t *l) { (void)l; f[35] ^= 1; }
static void c_daddr(uint8_t *f, uint32_t *l) { (void)l; f[33] ^= 1; recsum(f); }
static void c_mac(uint8_t *f, uint32_t *l) { (void)l; f[5] ^= 1; }
static void c_dst_tag(uint8_t *f, uint32_t *l) { (void)l; f[45] ^= 1; }
static void c_src_raw(uint8_t *f, uint32_t *l) { (void)l; put16(f + 46, 5); }
static void c_src_other(uint8_t *f, uint32_t *l) { (void)l; put16(f + 46, 3); }
static void c_src_mac(uint8_t *f, uint32_t *l) { (void)l; f[11] ^= 0xff; }
static void c_frag(uint8_t *f, uint32_t *l) { (void)l; put16(f + 20, 0x2000); recsum(f); }
static void c_frag_off(uint8_t *f, uint32_t *l) { (void)l; put16(f + 20, 0x4001); recsum(f); }
static void c_no_df(uint8_t *f, uint32_t *l) { (void)l; put16(f + 20, 0); recsum(f); }
static void c_options(uint8_t *f, uint32_t *l) { (void)l; f[14] = 0x46; recsum(f); }
static void c_tos(uint8_t *f, uint32_t *l) { (void)l; f[15] = 4; recsum(f); }
static void c_id(uint8_t *f, uint32_t *l) { (void)l; f[19] = 9; recsum(f); }
static void c_ttl(uint8_t *f, uint32_t *l) { (void)l; f[22] = 1; recsum(f); }
static void c_csum(uint8_t *f, uint32_t *l) { (void)l; f[25] ^= 1; }
static void c_proto(uint8_t *f, uint32_t *l) { (void)l; f[23] = 6; recsum(f); }
static void c_dport(uint8_t *f, uint32_t *l) { (void)l; f[37] ^= 1; }
static void c_tot_long(uint8_t *f, uint32_t *l) { put16(f + 16, 62); recsum(f); *l = 76; }
static void c_tot_short(uint8_t *f, uint32_t *l) { (void)l; put16(f + 16, 43); recsum(f); }
static void c_udp_len(uint8_t *f, uint32_t *l) { (void)l; f[39] ^= 1; }
static void c_udp_csum(uint8_t *f, uint32_t *l) { (void)l; f[41] = 1; }
static void c_unet_len(uint8_t *f, uint32_t *l) { (void)l; put16(f + 48, 15); }
static void c_version(uint8_t *f, uint32_t *l) { (void)l; f[42] = 2; }
static void c_flags(uint8_t *f, uint32_t *l) { (void)l; f[43] = 1; }
static void c_trailing(uint8_t *f, uint32_t *l) { (void)f; *l += 4; }
static void c_padding(uint8_t *f, uint32_t *l) { *l = build(f, &chans[0], 2); f[59] = 1; }
static void c_short(uint8_t *f, uint32_t *l) { (void)f; *l = 49; }
static void c_ether(uint8_t *f, uint32_t *l) { (void)l; put16(f + 12, 0x86dd); }

static void test_each_field(void **state)
{
	(void)state;
	setup_chans();
	one(c_src_mac, UNETD_CHAN_OK); /* the daemon writes it */
	one(c_saddr, UNETD_CHAN_FOREIGN_SRC);
	one(c_sport, UNETD_CHAN_FOREIGN_SRC);
	one(c_src_other, UNETD_CHAN_FOREIGN_SRC); /* its tag 3, channel 2's port */
	one(c_src_raw, UNETD_CHAN_FOREIGN_TAG);
	one(c_daddr, UNETD_CHAN_FOREIGN_PEER);
	one(c_mac, UNETD_CHAN_FOREIGN_PEER);
	one(c_dst_tag, UNETD_CHAN_FOREIGN_PEER);
	one(c_frag, UNETD_CHAN_BAD_FRAME);
	one(c_frag_off, UNETD_CHAN_BAD_FRAME);
	one(c_no_df, UNETD_CHAN_BAD_FRAME);
	one(c_options, UNETD_CHAN_BAD_FRAME);
	one(c_tos, UNETD_CHAN_BAD_FRAME);
	one(c_id, UNETD_CHAN_BAD_FRAME);
	one(c_ttl, UNETD_CHAN_BAD_FRAME);
	one(c_csum, UNETD_CHAN_BAD_FRAME);
	one(c_proto, UNETD_CHAN_BAD_FRAME);
	one(c_dport, UNETD_CHAN_BAD_FRAME);
	one(c_tot_long, UNETD_CHAN_BAD_FRAME);
	one(c_tot_short, UNETD_CHAN_BAD_FRAME);
	one(c_udp_len, UNETD_CHAN_BAD_FRAME);
	one(c_udp_csum, UNETD_CHAN_BAD_FRAME);
	one(c_unet_len, UNETD_CHAN_BAD_FRAME);
	one(c_version, UNETD_CHAN_BAD_FRAME);
	one(c_flags, UNETD_CHAN_BAD_FRAME);
	one(c_trailing, UNETD_CHAN_BAD_FRAME);
	one(c_padding, UNETD_CHAN_BAD_FRAME);
	one(c_short, UNETD_CHAN_BAD_FRAME);
	one(c_ether, UNETD_CHAN_BAD_FRAME);
	/* A message longer than the daemon sends for the channel. */
	chans[0].max_payload = 15;
	one(c_src_mac, UNETD_CHAN_BAD_FRAME);
	chans[0].max_payload = MAX_PAYLOAD;
}

/* The model: f[0..len) is, but for bytes 6..11 and the payload, the
 * library's frame on one of the channels for the length its U-Net
 * header gives, within the channel's largest message. */
static bool model_ok(const uint8_t *f, uint32_t len)
{
	static uint8_t want[sizeof(frame)];
	uint32_t plen, wlen;

	if (len < UNET_UDP_PAYLOAD_OFF)
		return false;
	plen = (uint32_t)(f[48] << 8 | f[49]);
	if (!plen || plen > MAX_PAYLOAD)
		return false;
	for (int c = 0; c < NCHANS; c++) {
		if (plen > chans[c].max_payload)
			continue;
		wlen = build(want, &chans[c], plen);
		if (wlen != len || memcmp(want, f, 6) ||
		    memcmp(want + 12, f + 12, UNET_UDP_PAYLOAD_OFF - 12))
			continue;
		/* Padding after the datagram: zeros. */
		if (UNET_UDP_PAYLOAD_OFF + plen < len &&
		    memcmp(want + UNET_UDP_PAYLOAD_OFF + plen, f + UNET_UDP_PAYLOAD_OFF + plen,
			   len - UNET_UDP_PAYLOAD_OFF - plen))
			continue;
		return true;
	}
	return false;
}

/* Where the library's header checksum is 0x0000, 0xffff also makes the
 * header sum to all ones (ones' complement has two zeros): it is not the
 * library's frame, and is refused. */
static void test_csum_alias(void **state)
{
	static uint8_t f[UNET_UDP_PAYLOAD_OFF + MAX_PAYLOAD + 60];
	struct unetd_chan_wire c = chans[0];
	int found = 0;

	(void)state;
	setup_chans();
	c = chans[0];
	/* Some destination and length give checksum 0: look for one. */
	for (uint32_t d = 1; d < 65536 && !found; d++) {
		c.daddr = htonl(0x0ac90000u | d);
		for (uint32_t plen = 1; plen <= 64 && !found; plen++) {
			uint32_t len = build(f, &c, plen);

			if (f[24] || f[25])
				continue;
			found = 1;
			chans[0].daddr = c.daddr;
			assert_int_equal(check(f, len), UNETD_CHAN_OK);
			put16(f + 24, 0xffff);
			assert_int_equal(check(f, len), UNETD_CHAN_BAD_FRAME);
		}
	}
	setup_chans();
	assert_true(found);
}

/* What the fuzz of one family's frames needs to know of it. */
struct fuzz_family {
	const char *name;
	const struct unetd_chan_wire *chans;
	uint32_t header_span;  /* the bytes mutations fall in: headers and some payload */
	uint32_t length_bound; /* a mutated length falls below it */
	uint32_t src_tag_off;  /* where the U-Net header's source tag is */
	uint16_t (*other_tag)(uint64_t x);
	void (*recsum)(uint8_t *f, uint32_t len);
	bool (*model_ok)(const uint8_t *f, uint32_t len);
};

/* n frames of ff's channels, each built honestly then mutated up to three
 * times; check's verdict must be the model's. */
static void fuzz_family(const struct fuzz_family *ff, uint64_t seed, uint64_t n)
{
	uint64_t s = seed, passed = 0;

	printf("test_chan_check %s: seed %#" PRIx64 ", %" PRIu64 " frames\n", ff->name, seed, n);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t r = (uint32_t)fuzz_next(&s), plen, len, muts;
		const struct unetd_chan_wire *c = &ff->chans[r % NCHANS];
		bool want;

		plen = (r >> 8) % 4 ? 1 + (uint32_t)(fuzz_next(&s) % 80)
				    : 1 + (uint32_t)(fuzz_next(&s) % MAX_PAYLOAD);
		len = build(frame, c, plen);
		muts = (uint32_t)(fuzz_next(&s) % 4);
		for (uint32_t m = 0; m < muts; m++) {
			uint64_t x = fuzz_next(&s);
			uint32_t span = ff->header_span;
			uint32_t at = (uint32_t)(x >> 8) % (len < 2 ? 2 : len < span ? len : span);

			switch (x % 6) {
			case 0: /* a bit of a header */
				frame[at] ^= (uint8_t)(1u << ((x >> 24) % 8));
				break;
			case 1: /* a header byte, any value */
				frame[at] = (uint8_t)(x >> 32);
				break;
			case 2: /* a 16-bit field off by one */
				put16(frame + (at & ~1u), (uint16_t)((frame[at & ~1u] << 8 |
								     frame[(at & ~1u) + 1]) +
								    ((x >> 40) & 1 ? 1 : -1)));
				break;
			case 3: /* the frame's length */
				len = (uint32_t)((x >> 16) % ff->length_bound);
				break;
			case 4: /* a byte past the datagram (padding, or a longer frame) */
				if (len + 8 < sizeof(frame)) {
					len += (uint32_t)(x >> 48) % 8;
					frame[len - 1] = (uint8_t)(x >> 32);
				}
				break;
			default: /* another channel's tags */
				put16(frame + ff->src_tag_off, ff->other_tag(x));
				break;
			}
			/* Often the checksum made right again, so that what
			 * it covers is judged on its own. */
			if ((x >> 56) & 1)
				ff->recsum(frame, len);
		}
		want = ff->model_ok(frame, len);
		if ((check(frame, len) == UNETD_CHAN_OK) != want) {
			printf("frame %" PRIu64 " (seed %#" PRIx64 "): check says %d, model %d\n", i,
			       seed, check(frame, len), want);
			fail();
		}
		passed += want;
	}
	printf("test_chan_check %s: %" PRIu64 " frames passed both\n", ff->name, passed);
	/* The fuzz must have reached both sides of the check. */
	assert_true(passed > n / 20 && passed < n - n / 20);
}

static uint16_t other_tag(uint64_t x)
{
	return chans[(x >> 32) % NCHANS].tag;
}

static void recsum_any_len(uint8_t *f, uint32_t len)
{
	(void)len;
	recsum(f);
}

static void test_fuzz(void **state)
{
	static const struct fuzz_family v4 = {
		.name = "fuzz",
		.chans = chans,
		.header_span = 64,
		.length_bound = UNET_UDP_PAYLOAD_OFF + MAX_PAYLOAD + 64,
		.src_tag_off = 46,
		.other_tag = other_tag,
		.recsum = recsum_any_len,
		.model_ok = model_ok,
	};
	uint64_t seed = fuzz_seed(0xc4a7c4ecull), n = fuzz_count(300000);

	(void)state;
	setup_chans();
	chans[2].max_payload = 100; /* a channel of smaller messages */
	fuzz_family(&v4, seed, n);
}

/* ---- IPv6 ---------------------------------------------------------------
 * Channel 8's frame of 16 bytes (86 on the wire): Ethernet 0..13, IPv6
 * 14..53 (payload length 18, next header 20, hop limit 21, source 22..37,
 * destination 38..53), UDP 54..61 (checksum 60), U-Net 62..69. */

static void d_src_mac(uint8_t *f, uint32_t *l) { (void)l; f[11] ^= 0xff; }
static void d_saddr_first(uint8_t *f, uint32_t *l) { f[22] ^= 1; recsum6(f, *l); }
static void d_saddr_mid(uint8_t *f, uint32_t *l) { f[29] ^= 0x80; recsum6(f, *l); }
static void d_saddr_last(uint8_t *f, uint32_t *l) { f[37] ^= 1; recsum6(f, *l); }
static void d_sport(uint8_t *f, uint32_t *l) { f[55] ^= 1; recsum6(f, *l); }
static void d_src_other(uint8_t *f, uint32_t *l) { put16(f + 66, 9); recsum6(f, *l); }
static void d_src_raw(uint8_t *f, uint32_t *l) { put16(f + 66, 5); recsum6(f, *l); }
static void d_daddr_first(uint8_t *f, uint32_t *l) { f[38] ^= 1; recsum6(f, *l); }
static void d_daddr_last(uint8_t *f, uint32_t *l) { f[53] ^= 1; recsum6(f, *l); }
static void d_mac(uint8_t *f, uint32_t *l) { (void)l; f[5] ^= 1; }
static void d_dst_tag(uint8_t *f, uint32_t *l) { f[65] ^= 1; recsum6(f, *l); }
static void d_ip_version(uint8_t *f, uint32_t *l) { (void)l; f[14] = 0x40; }
static void d_tclass_high(uint8_t *f, uint32_t *l) { (void)l; f[14] = 0x61; }
static void d_tclass_low(uint8_t *f, uint32_t *l) { (void)l; f[15] = 0x10; }
static void d_flow(uint8_t *f, uint32_t *l) { (void)l; f[17] = 1; }
static void d_ext_hop_by_hop(uint8_t *f, uint32_t *l) { (void)l; f[20] = 0; }
static void d_ext_fragment(uint8_t *f, uint32_t *l) { (void)l; f[20] = 44; }
static void d_hop_zero(uint8_t *f, uint32_t *l) { (void)l; f[21] = 0; }
static void d_hop_other(uint8_t *f, uint32_t *l) { (void)l; f[21] = 255; }
static void d_plen_long(uint8_t *f, uint32_t *l) { put16(f + 18, 35); recsum6(f, *l); }
static void d_plen_short(uint8_t *f, uint32_t *l) { put16(f + 18, 31); recsum6(f, *l); }
static void d_trailing(uint8_t *f, uint32_t *l) { (void)f; *l += 4; }
static void d_plen_trailing(uint8_t *f, uint32_t *l) { put16(f + 18, 36); *l += 4; recsum6(f, *l); }
static void d_dport(uint8_t *f, uint32_t *l) { f[57] ^= 1; recsum6(f, *l); }
static void d_udp_len(uint8_t *f, uint32_t *l) { f[59] ^= 1; recsum6(f, *l); }
static void d_udp_csum(uint8_t *f, uint32_t *l) { (void)l; f[61] ^= 1; }
static void d_udp_csum_none(uint8_t *f, uint32_t *l) { (void)l; put16(f + 60, 0); }
static void d_payload(uint8_t *f, uint32_t *l) { (void)l; f[75] ^= 1; }
static void d_unet_len(uint8_t *f, uint32_t *l) { put16(f + 68, 15); recsum6(f, *l); }
static void d_unet_version(uint8_t *f, uint32_t *l) { f[62] = 2; recsum6(f, *l); }
static void d_unet_flags(uint8_t *f, uint32_t *l) { f[63] = 1; recsum6(f, *l); }
static void d_empty(uint8_t *f, uint32_t *l) { *l = build(f, &chans6[0], 1) - 1; put16(f + 18, 16); put16(f + 58, 16); put16(f + 68, 0); recsum6(f, *l); }
static void d_short(uint8_t *f, uint32_t *l) { (void)f; *l = 61; }
static void d_ether(uint8_t *f, uint32_t *l) { (void)l; put16(f + 12, 0x0800); }

/* An IPv6 frame from an IPv4 channel's tag, its port and peer tag the
 * channel's, and the addresses that channel has of IPv6 (none: 0). */
static void d_src_v4chan(uint8_t *f, uint32_t *l)
{
	memset(f + 22, 0, 32);
	put16(f + 54, chans[0].sport);
	put16(f + 66, chans[0].tag);
	recsum6(f, *l);
}

/* An IPv4 frame from an IPv6 channel's tag, its port and peer tag the
 * channel's: the addresses are not the channel's (it has none of IPv4). */
static void c_src_v6chan(uint8_t *f, uint32_t *l)
{
	(void)l;
	put16(f + 34, chans6[0].sport);
	put16(f + 46, chans6[0].tag);
	memset(f + 26, 0, 8); /* the IPv4 fields of an IPv6 channel are 0 */
	recsum(f);
}

static void test_each_field6(void **state)
{
	(void)state;
	setup_chans();
	one6(d_src_mac, UNETD_CHAN_OK); /* the daemon writes it */
	one6(d_saddr_first, UNETD_CHAN_FOREIGN_SRC);
	one6(d_saddr_mid, UNETD_CHAN_FOREIGN_SRC);
	one6(d_saddr_last, UNETD_CHAN_FOREIGN_SRC);
	one6(d_sport, UNETD_CHAN_FOREIGN_SRC);
	one6(d_src_other, UNETD_CHAN_FOREIGN_SRC); /* its tag 9, channel 9's port */
	one6(d_src_v4chan, UNETD_CHAN_FOREIGN_SRC);
	one6(d_src_raw, UNETD_CHAN_FOREIGN_TAG);
	one6(d_daddr_first, UNETD_CHAN_FOREIGN_PEER);
	one6(d_daddr_last, UNETD_CHAN_FOREIGN_PEER);
	one6(d_mac, UNETD_CHAN_FOREIGN_PEER);
	one6(d_dst_tag, UNETD_CHAN_FOREIGN_PEER);
	one6(d_ip_version, UNETD_CHAN_BAD_FRAME);
	one6(d_tclass_high, UNETD_CHAN_BAD_FRAME);
	one6(d_tclass_low, UNETD_CHAN_BAD_FRAME);
	one6(d_flow, UNETD_CHAN_BAD_FRAME);
	one6(d_ext_hop_by_hop, UNETD_CHAN_BAD_FRAME);
	one6(d_ext_fragment, UNETD_CHAN_BAD_FRAME);
	one6(d_hop_zero, UNETD_CHAN_BAD_FRAME);
	one6(d_hop_other, UNETD_CHAN_BAD_FRAME);
	one6(d_plen_long, UNETD_CHAN_BAD_FRAME);
	one6(d_plen_short, UNETD_CHAN_BAD_FRAME);
	one6(d_trailing, UNETD_CHAN_BAD_FRAME);
	one6(d_plen_trailing, UNETD_CHAN_BAD_FRAME);
	one6(d_dport, UNETD_CHAN_BAD_FRAME);
	one6(d_udp_len, UNETD_CHAN_BAD_FRAME);
	one6(d_udp_csum, UNETD_CHAN_BAD_FRAME);
	one6(d_udp_csum_none, UNETD_CHAN_BAD_FRAME);
	one6(d_payload, UNETD_CHAN_BAD_FRAME);
	one6(d_unet_len, UNETD_CHAN_BAD_FRAME);
	one6(d_unet_version, UNETD_CHAN_BAD_FRAME);
	one6(d_unet_flags, UNETD_CHAN_BAD_FRAME);
	one6(d_empty, UNETD_CHAN_BAD_FRAME);
	one6(d_short, UNETD_CHAN_BAD_FRAME);
	one6(d_ether, UNETD_CHAN_BAD_FRAME);
	one(c_src_v6chan, UNETD_CHAN_FOREIGN_SRC);
	/* A message longer than the daemon sends for the channel. */
	chans6[0].max_payload = 15;
	one6(d_src_mac, UNETD_CHAN_BAD_FRAME);
	chans6[0].max_payload = MAX_PAYLOAD;
}

/* Where the right UDP checksum is 0, the library sends 0xffff; 0x0000
 * would also make the datagram sum to all ones, but means "no checksum"
 * (which IPv6 forbids): refused. */
static void test_csum_zero6(void **state)
{
	uint32_t len;
	int found = 0;

	(void)state;
	setup_chans();
	len = build(frame, &chans6[0], 16);
	for (uint32_t w = 0; w < 65536 && !found; w++) {
		put16(frame + PAYLOAD6, (uint16_t)w);
		recsum6(frame, len);
		if (frame[60] != 0xff || frame[61] != 0xff)
			continue;
		found = 1;
		assert_int_equal(check(frame, len), UNETD_CHAN_OK);
		put16(frame + 60, 0);
		assert_int_equal(check(frame, len), UNETD_CHAN_BAD_FRAME);
	}
	assert_true(found);
}

/* The model over IPv6: f[0..len) is, but for bytes 6..11, the payload
 * and the UDP checksum, the library's frame on one of the IPv6 channels
 * for the length its U-Net header gives, within the channel's largest
 * message; and its checksum the right one over its own payload. */
static bool model6_ok(const uint8_t *f, uint32_t len)
{
	static uint8_t want[sizeof(frame)], mine[sizeof(frame)];
	uint32_t plen, wlen;

	if (len < PAYLOAD6 || len > sizeof(mine))
		return false;
	plen = (uint32_t)(f[68] << 8 | f[69]);
	if (!plen || plen > MAX_PAYLOAD)
		return false;
	memcpy(mine, f, len);
	recsum6(mine, len);
	if (memcmp(mine + 60, f + 60, 2))
		return false;
	for (int c = 0; c < NCHANS; c++) {
		if (plen > chans6[c].max_payload)
			continue;
		wlen = build(want, &chans6[c], plen);
		if (wlen != len || memcmp(want, f, 6) || memcmp(want + 12, f + 12, 60 - 12) ||
		    memcmp(want + 62, f + 62, PAYLOAD6 - 62))
			continue;
		return true;
	}
	return false;
}

/* Another channel's tag, of either family. */
static uint16_t other_tag6(uint64_t x)
{
	return (x >> 32) & 1 ? chans6[(x >> 33) % NCHANS].tag : chans[(x >> 33) % NCHANS].tag;
}

static void test_fuzz6(void **state)
{
	static const struct fuzz_family v6 = {
		.name = "fuzz6",
		.chans = chans6,
		.header_span = 80,
		.length_bound = PAYLOAD6 + MAX_PAYLOAD + 32,
		.src_tag_off = 66,
		.other_tag = other_tag6,
		.recsum = recsum6,
		.model_ok = model6_ok,
	};
	uint64_t seed = fuzz_seed(0x6c4a7c4eull), n = fuzz_count(200000);

	(void)state;
	setup_chans();
	chans6[2].max_payload = 100; /* a channel of smaller messages */
	fuzz_family(&v6, seed, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_honest),
		cmocka_unit_test(test_each_field),
		cmocka_unit_test(test_csum_alias),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_each_field6),
		cmocka_unit_test(test_csum_zero6),
		cmocka_unit_test(test_fuzz6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
