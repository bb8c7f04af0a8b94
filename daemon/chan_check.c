/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * chan_check.c - the check of an emulated endpoint's frame on a routable
 * channel (U-Net inside UDP/IPv4 or UDP/IPv6, docs/wire-format.md): the frame must be
 * exactly the one the library builds for that channel from what the
 * daemon decided (chan_check.h), byte for byte but for the source MAC
 * (ours to write) and the payload.  A pure function: no daemon state, so
 * that it is unit-tested and fuzzed alone (tests/unit/test_chan_check.c).
 */
#include <string.h>

#include "chan_check.h"
#include "core/csum.h"
#include "wire_get.h"

#define HDRS (UNET_ETH_HLEN + UNET_IP_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN)
#define ETH_MIN_FRAME 60
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define HDRS6 (UNET_ETH_HLEN + UNET_IP6_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN)
#define IP6_HOP_LIMIT 64
#define IP_PROTO_UDP 17
#define IP_DF 0x4000
#define IP_TTL 64
#define WIRE_VERSION 1


/* The checksum field is exactly the one the library writes: the
 * complement of the ones' complement sum of the rest of the header (RFC
 * 1071).  Not merely a header that sums to all ones: that would let
 * 0xffff stand for the library's 0x0000, and the frame be other than
 * the library's byte for byte. */
static int ip_csum_ok(const uint8_t *ip)
{
	uint32_t sum = 0;

	for (int i = 0; i < UNET_IP_HLEN; i += 2)
		if (i != 10)
			sum += unetd_get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return unetd_get16(ip + 10) == (uint16_t)~sum;
}

/* The sender's channel that the U-Net header uh's source tag names, in
 * *c, if its largest message holds plen bytes: OK, or the verdict. */
static enum unetd_chan_verdict sender_chan(const uint8_t *uh, uint32_t plen,
					   unetd_chan_lookup lookup, void *ctx,
					   const struct unetd_chan_wire **c)
{
	*c = lookup(ctx, unetd_get16(uh + 4));
	if (!*c)
		return UNETD_CHAN_FOREIGN_TAG;
	if (plen > (*c)->max_payload)
		return UNETD_CHAN_BAD_FRAME;
	return UNETD_CHAN_OK;
}

/* Whether the frame f (its U-Net header uh, to UDP port dport) goes to
 * c's peer but for the address: its MAC, its tag, its port. */
static int to_peer_but_addr(const uint8_t *f, const uint8_t *uh, uint16_t dport,
			    const struct unetd_chan_wire *c)
{
	return !memcmp(f, c->dst_mac, 6) && unetd_get16(uh + 2) == c->peer_tag && dport == c->dport;
}

static enum unetd_chan_verdict check4(const uint8_t *f, uint32_t len, uint16_t dport,
				      unetd_chan_lookup lookup, void *ctx)
{
	const uint8_t *ip = f + UNET_ETH_HLEN, *udp = ip + UNET_IP_HLEN, *uh = udp + UNET_UDP_HLEN;
	const struct unetd_chan_wire *c;
	enum unetd_chan_verdict v;
	uint32_t tot, plen, wire;
	uint32_t saddr, daddr;

	if (len < HDRS || unetd_get16(f + 12) != ETH_P_IPV4)
		return UNETD_CHAN_BAD_FRAME;
	/* IPv4 as the library writes it: no options, TOS 0, ID 0, DF and no
	 * fragment, TTL 64, UDP, the checksum right. */
	if (ip[0] != 0x45 || ip[1] || unetd_get16(ip + 4) || unetd_get16(ip + 6) != IP_DF || ip[8] != IP_TTL ||
	    ip[9] != IP_PROTO_UDP || !ip_csum_ok(ip))
		return UNETD_CHAN_BAD_FRAME;
	/* Lengths that add up: IP's, UDP's and U-Net's the same datagram,
	 * no UDP checksum, the frame exactly the datagram (60 bytes, zero
	 * padded, when shorter). */
	tot = unetd_get16(ip + 2);
	plen = unetd_get16(uh + 6);
	if (unetd_get16(udp + 2) != dport || tot < UNET_IP_HLEN + UNET_UDP_HLEN + UNET_HDR_LEN + 1 ||
	    unetd_get16(udp + 4) != tot - UNET_IP_HLEN || unetd_get16(udp + 6) ||
	    plen != tot - UNET_IP_HLEN - UNET_UDP_HLEN - UNET_HDR_LEN)
		return UNETD_CHAN_BAD_FRAME;
	wire = UNET_ETH_HLEN + tot;
	if (len != (wire < ETH_MIN_FRAME ? ETH_MIN_FRAME : wire))
		return UNETD_CHAN_BAD_FRAME;
	for (uint32_t i = wire; i < len; i++)
		if (f[i])
			return UNETD_CHAN_BAD_FRAME;
	if (uh[0] != WIRE_VERSION || uh[1])
		return UNETD_CHAN_BAD_FRAME;
	v = sender_chan(uh, plen, lookup, ctx, &c);
	if (v != UNETD_CHAN_OK)
		return v;
	memcpy(&saddr, ip + 12, 4);
	memcpy(&daddr, ip + 16, 4);
	/* an IPv6 channel's tag: its addresses are none of these */
	if (c->v6 || saddr != c->saddr || unetd_get16(udp) != c->sport)
		return UNETD_CHAN_FOREIGN_SRC;
	if (daddr != c->daddr || !to_peer_but_addr(f, uh, dport, c))
		return UNETD_CHAN_FOREIGN_PEER;
	return UNETD_CHAN_OK;
}

/* The UDP checksum field is exactly the one the library writes (RFC
 * 8200 8.1: mandatory over IPv6): the complement of the sum of the
 * pseudo-header and the datagram with the field zero, 0 sent as 0xffff.
 * Not merely a datagram that sums to all ones: 0x0000 (no checksum,
 * which IPv6 receivers drop) would pass for 0xffff. */
static int udp6_csum_ok(const uint8_t *ip, const uint8_t *udp, uint32_t ulen)
{
	uint64_t sum = unet_csum_pseudo6(ip + 8, ip + 24, IP_PROTO_UDP, ulen);
	uint16_t c;

	sum = unet_csum_add(sum, udp, 6);
	sum = unet_csum_add(sum, udp + UNET_UDP_HLEN, ulen - UNET_UDP_HLEN);
	c = (uint16_t)~unet_csum_fold(sum);
	return unetd_get16(udp + 6) == (c ? c : 0xffff);
}

/*
 * IPv6 as the library writes it (lib/core/wire_udp.c): version 6, traffic
 * class and flow label 0, next header UDP (an extension header is
 * refused, as the XDP program refuses it on receive), hop limit 64; the
 * payload length the UDP datagram's and the frame exactly the datagram
 * (70 bytes of headers at least: never padded); the UDP checksum the
 * right one, checked on our copy rather than written by us, so that what
 * leaves is byte for byte what the client wrote and was judged.
 */
static enum unetd_chan_verdict check6(const uint8_t *f, uint32_t len, uint16_t dport,
				      unetd_chan_lookup lookup, void *ctx)
{
	const uint8_t *ip = f + UNET_ETH_HLEN, *udp = ip + UNET_IP6_HLEN, *uh = udp + UNET_UDP_HLEN;
	const struct unetd_chan_wire *c;
	enum unetd_chan_verdict v;
	uint32_t ulen, plen;

	if (len < HDRS6 + 1)
		return UNETD_CHAN_BAD_FRAME;
	if (ip[0] != 0x60 || ip[1] || ip[2] || ip[3] || ip[6] != IP_PROTO_UDP ||
	    ip[7] != IP6_HOP_LIMIT)
		return UNETD_CHAN_BAD_FRAME;
	ulen = unetd_get16(ip + 4);
	plen = unetd_get16(uh + 6);
	if (len != UNET_ETH_HLEN + UNET_IP6_HLEN + ulen || unetd_get16(udp + 2) != dport ||
	    unetd_get16(udp + 4) != ulen || plen != ulen - UNET_UDP_HLEN - UNET_HDR_LEN)
		return UNETD_CHAN_BAD_FRAME;
	if (uh[0] != WIRE_VERSION || uh[1] || !udp6_csum_ok(ip, udp, ulen))
		return UNETD_CHAN_BAD_FRAME;
	v = sender_chan(uh, plen, lookup, ctx, &c);
	if (v != UNETD_CHAN_OK)
		return v;
	/* an IPv4 channel's tag: its addresses are none of these */
	if (!c->v6 || memcmp(ip + 8, c->saddr6, 16) || unetd_get16(udp) != c->sport)
		return UNETD_CHAN_FOREIGN_SRC;
	if (memcmp(ip + 24, c->daddr6, 16) || !to_peer_but_addr(f, uh, dport, c))
		return UNETD_CHAN_FOREIGN_PEER;
	return UNETD_CHAN_OK;
}

enum unetd_chan_verdict unetd_chan_check_frame(const uint8_t *f, uint32_t len, uint16_t dport,
					       unetd_chan_lookup lookup, void *ctx)
{
	if (len >= UNET_ETH_HLEN && unetd_get16(f + 12) == ETH_P_IPV6)
		return check6(f, len, dport, lookup, ctx);
	return check4(f, len, dport, lookup, ctx);
}
